"""Serve a ``ToolServer``'s tools over the Model Context Protocol (streamable HTTP).

Built on the official ``mcp`` SDK (``mcp.server.lowlevel.Server`` and
``StreamableHTTPSessionManager``). Every MCP request is answered by sending the
hosted wire request to the ``ToolServer`` in process (``httpx.ASGITransport``),
so the hosted pipeline — auth, validation, per-rollout store, recording,
metrics — serves both surfaces unchanged:

- ``tools/list`` is ``GET /tools`` (the hosted export, ``server.dataset_tools()``):
  each MCP tool's ``inputSchema`` is the strict JSON schema of the hosted dataset.
- ``tools/call`` is ``POST /tools/{name}`` with ``{"type": "function_call", "id",
  "call_id", "name", "arguments": <JSON string>, "trace_id"}``. A 2xx ``output``
  is the text content; any other answer is an MCP tool error (``isError: true``)
  whose text is the hosted error body, as the model would see it in training.
- One MCP session is one rollout: ``trace_id = "trace_" + <Mcp-Session-Id>``
  (:func:`trace_id_for_session`). It is sent back in the ``x-rft-trace-id``
  response header of every ``/mcp`` response that belongs to a session, and in
  each tool result's ``_meta["rft/trace_id"]``. Grade the session with
  ``POST /grade`` and that ``trace_id``, exactly like a hosted rollout.
- Auth: every ``/mcp`` HTTP request must pass the ``ToolServer``'s bearer check
  (``GET /tools`` in process with the request's ``Authorization`` header); a
  failure answers HTTP 401 with ``WWW-Authenticate: Bearer`` before the MCP layer.

Sessions live in the memory of one process: serve the MCP surface with one
worker (or sticky sessions); the rollout state itself is in the server's store.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import httpx
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings

    from ._server import ToolServer

__all__ = ["SESSION_HEADER", "TRACE_HEADER", "TRACE_META_KEY", "mcp_app", "trace_id_for_session", "with_mcp"]

SESSION_HEADER = "mcp-session-id"
TRACE_HEADER = "x-rft-trace-id"
TRACE_META_KEY = "rft/trace_id"
_LOCAL_BASE = "http://rft-sdk.local"


def trace_id_for_session(session_id: str) -> str:
    """The rollout ``trace_id`` of an MCP session: ``"trace_" + session_id``.

    Raises:
        ValueError: ``session_id`` is empty.
    """
    if not session_id:
        raise ValueError("an MCP session id is required to name its rollout")
    return f"trace_{session_id}"


def _local_client(app: ASGIApp) -> httpx.AsyncClient:
    """An httpx client whose requests reach ``app`` (the hosted routes) in process (no socket)."""
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=_LOCAL_BASE, timeout=None)


def _forwarded(headers: Headers | None) -> dict[str, str]:
    """The auth header of an MCP HTTP request, to forward to the hosted routes."""
    value = headers.get("authorization") if headers is not None else None
    return {"authorization": value} if value else {}


class _Handlers:
    """The MCP request handlers of one app: each one a hosted request to the ``ToolServer``."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def list_tools(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        headers = getattr(ctx.request, "headers", None)
        response = await self.client.get("/tools", headers=_forwarded(headers))
        if response.status_code != 200:
            raise RuntimeError(f"GET /tools answered {response.status_code}: {response.text[:200]}")
        tools = [types.Tool(name=t["function"]["name"], description=t["function"].get("description"),
                            input_schema=t["function"]["parameters"]) for t in response.json()["tools"]]
        return types.ListToolsResult(tools=tools)

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        headers = getattr(ctx.request, "headers", None)
        session_id = headers.get(SESSION_HEADER) if headers is not None else None
        if not session_id:
            return _tool_error({"error": {"code": "no_session", "message": (
                "MCP tool calls need a session (the session is the rollout); connect with the "
                "streamable-HTTP initialize handshake, not stateless requests")}}, None)
        trace_id = trace_id_for_session(session_id)
        call = uuid.uuid4().hex
        body = {"type": "function_call", "id": f"fc_{call}", "call_id": f"call_{call}", "name": params.name,
                "arguments": json.dumps(params.arguments or {}), "trace_id": trace_id}
        response = await self.client.post(f"/tools/{params.name}", json=body, headers=_forwarded(headers))
        try:
            payload: Any = response.json()
        except ValueError:
            payload = {"error": {"code": "invalid_response", "message": response.text[:1000]}}
        if response.is_success and isinstance(payload, dict) and isinstance(payload.get("output"), str):
            return types.CallToolResult(content=[types.TextContent(type="text", text=payload["output"])],
                                        is_error=False, _meta={TRACE_META_KEY: trace_id})
        return _tool_error(payload, trace_id)


def _tool_error(payload: Any, trace_id: str | None) -> types.CallToolResult:
    """An MCP tool error whose text is the hosted error body (what a hosted model is shown)."""
    meta = {TRACE_META_KEY: trace_id} if trace_id else None
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(payload))],
                                is_error=True, _meta=meta)


class _AuthAndTrace:
    """ASGI wrapper of the ``/mcp`` endpoint: the server's bearer check, then the
    ``x-rft-trace-id`` header on responses that belong to a session."""

    def __init__(self, app: ASGIApp, client: httpx.AsyncClient) -> None:
        self.app = app
        self.client = client

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        check = await self.client.get("/tools", headers=_forwarded(headers))
        if check.status_code == 401:
            denied = JSONResponse(check.json(), status_code=401, headers={"WWW-Authenticate": "Bearer"})
            await denied(scope, receive, send)
            return
        request_session = headers.get(SESSION_HEADER)

        async def send_with_trace(message: Message) -> None:
            if message["type"] == "http.response.start":
                response_headers = MutableHeaders(scope=message)
                session_id = response_headers.get(SESSION_HEADER) or request_session
                if session_id:
                    response_headers[TRACE_HEADER] = trace_id_for_session(session_id)
            await send(message)

        await self.app(scope, receive, send_with_trace)


def _build(server: ToolServer, hosted: ASGIApp | None, name: str | None, json_response: bool,
           transport_security: TransportSecuritySettings | None) -> tuple[ASGIApp, StreamableHTTPSessionManager]:
    client = _local_client(hosted if hosted is not None else server)
    handlers = _Handlers(client)
    mcp_server: Server[Any] = Server(name or "rft-sdk", on_list_tools=handlers.list_tools,
                                     on_call_tool=handlers.call_tool)
    manager = StreamableHTTPSessionManager(app=mcp_server, json_response=json_response,
                                           security_settings=transport_security)
    return _AuthAndTrace(StreamableHTTPASGIApp(manager), client), manager


def mcp_app(server: ToolServer, *, path: str = "/mcp", hosted: ASGIApp | None = None, name: str | None = None,
            json_response: bool = False,
            transport_security: TransportSecuritySettings | None = None) -> Starlette:
    """A Starlette app serving ``server``'s tools over MCP streamable HTTP at ``path``.

    Args:
        server: the ``ToolServer`` whose tools (and store, auth, metrics) are served.
        path: the MCP endpoint path.
        hosted: the ASGI app answering the hosted routes (default: ``server``); a
            ``ToolServer`` wiring MCP into itself passes its inner hosted app here.
        name: the MCP server name announced at initialize (default ``"rft-sdk"``).
        json_response: answer POSTs with JSON instead of SSE streams.
        transport_security: ``mcp`` DNS-rebinding settings (``None``: no Host/Origin check).

    The app's lifespan runs the MCP session manager: serve it with a server
    that runs ASGI lifespan (uvicorn does) or mount it with ``lifespan=`` forwarded.
    """
    endpoint, manager = _build(server, hosted, name, json_response, transport_security)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    return Starlette(routes=[Route(path, endpoint=endpoint)], lifespan=lifespan)


def with_mcp(server: ToolServer, *, path: str = "/mcp", hosted: ASGIApp | None = None, name: str | None = None,
            json_response: bool = False,
            transport_security: TransportSecuritySettings | None = None) -> Starlette:
    """One ASGI app with both surfaces: the hosted routes of ``server`` and MCP at ``path``.

    Same arguments as :func:`mcp_app`. ``rft serve mymodule:app`` with
    ``app = with_mcp(server)`` serves ``/tools/{name}``, ``/grade``, ``/healthz``,
    ``/metrics`` and ``/mcp`` from one process and one store.
    """
    endpoint, manager = _build(server, hosted, name, json_response, transport_security)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    inner = hosted if hosted is not None else server
    return Starlette(routes=[Route(path, endpoint=endpoint), Mount("/", app=inner)], lifespan=lifespan)
