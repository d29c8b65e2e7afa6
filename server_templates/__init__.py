"""Copy-and-edit deployment templates for rft-sdk tool servers (see tool_server/README.md)."""
