"""Integrations with other training and serving stacks (each behind its own extra).

- ``rft_sdk.integrations.trl``: a TRL ``GRPOTrainer`` environment backed by a
  tool server's hosted endpoints (``pip install "rft-sdk[trl]"``), see ``docs/trl.md``.

- ``rft_sdk.integrations.verifiers``: a verifiers environment (``load_environment``) backed by
  a tool server's hosted endpoints (``pip install "rft-sdk[verifiers]"``), see ``docs/verifiers.md``.

The MCP and OpenEnv surfaces live in ``rft_sdk.surfaces`` (``rft_sdk.mcp``) (``pip install "rft-sdk[mcp]"``).
Nothing is imported here, so importing this package needs no extra.
"""

__all__: list[str] = []
