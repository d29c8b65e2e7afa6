"""The same tools over the Model Context Protocol: ``pip install "rft-sdk[mcp]"``.

``with_mcp(server)`` serves the hosted routes and ``/mcp`` (streamable HTTP) from
one app; ``mcp_app(server)`` serves ``/mcp`` alone. One MCP session is one
rollout (``trace_id = "trace_" + Mcp-Session-Id``, sent back in the
``x-rft-trace-id`` header and each tool result's ``_meta["rft/trace_id"]``),
recorded and gradeable with ``POST /grade`` like a hosted rollout.
``ToolServer(surfaces=["hosted", "mcp"])`` (``rft serve --surfaces hosted,mcp``)
serves the same through the surface seam. On the stateless revision 2026-07-28
(``mcp.Client(url)``'s default) a rollout is a handle: ``start_rollout`` returns
``rollout_id``, which every other tool call passes (:data:`HANDLE_ARGUMENT`).
See ``docs/mcp.md``.
"""

from __future__ import annotations

try:
    from .surfaces._mcp import (
        HANDLE_ARGUMENT,
        HANDLE_META_KEY,
        SESSION_HEADER,
        START_TOOL,
        TRACE_HEADER,
        TRACE_META_KEY,
        MCPSurface,
        mcp_app,
        trace_id_for_session,
        with_mcp,
    )
except ModuleNotFoundError as exc:  # pragma: no cover - depends on the installed extras
    if exc.name is None or not exc.name.startswith(("mcp", "mcp_types")):
        raise
    raise ImportError('rft_sdk.mcp needs the official MCP SDK: pip install "rft-sdk[mcp]"') from exc

__all__ = ["HANDLE_ARGUMENT", "HANDLE_META_KEY", "SESSION_HEADER", "START_TOOL", "TRACE_HEADER", "TRACE_META_KEY",
           "MCPSurface", "mcp_app", "trace_id_for_session", "with_mcp"]
