"""The MCP surface: a ``ToolServer``'s tools over the Model Context Protocol (streamable HTTP).

Built on the official ``mcp`` SDK (``mcp.server.lowlevel.Server`` and
``StreamableHTTPSessionManager``). Through the surface seam (``_seam``):

- session → rollout: one MCP session is one rollout, ``trace_id = "trace_" +
  <Mcp-Session-Id>`` (:func:`trace_id_for_session`), sent back in the
  ``x-rft-trace-id`` header of every ``/mcp`` response of the session and in
  each tool result's ``_meta["rft/trace_id"]``;
- calls → pipeline: ``tools/list`` is ``GET /tools`` (each ``inputSchema`` is the
  strict JSON schema of ``server.dataset_tools()``); ``tools/call`` is the hosted
  ``POST /tools/{name}`` of that ``trace_id`` (:class:`~._hosted.HostedClient`,
  in process). A 2xx ``output`` is the text content; any other answer is an MCP
  tool error (``isError: true``) whose text is the hosted error body, as the model
  would see it in training; a 5xx still failing after 3 attempts is a tool error
  ``rollout_discarded``;
- end of episode → grader: ``POST /grade`` with the session's ``trace_id``, like a
  hosted rollout (MCP has no end-of-episode message of its own).

Auth: ``/mcp`` sits behind the server's ``AuthMiddleware`` (the same tokens and
headers as every other route: ``Authorization: Bearer``, ``X-Functions-Key``,
``api-key``); a refusal is HTTP 401 with ``WWW-Authenticate: Bearer``.

Sessions live in the memory of one process: serve the MCP surface with one
worker (or sticky sessions); the rollout state itself is in the server's store.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Protocol

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.datastructures import Headers, MutableHeaders
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._door import BodyDoor
from ._hosted import HostedClient, RolloutDiscardedError
from ._seam import SurfaceContext, SurfaceMount

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings

__all__ = ["SESSION_HEADER", "TRACE_HEADER", "TRACE_META_KEY", "MCPSurface", "mcp_app", "trace_id_for_session",
           "with_mcp"]

SESSION_HEADER = "mcp-session-id"
TRACE_HEADER = "x-rft-trace-id"
TRACE_META_KEY = "rft/trace_id"


class _HasSurfaceContext(Protocol):
    def surface_context(self) -> SurfaceContext: ...


def trace_id_for_session(session_id: str) -> str:
    """The rollout ``trace_id`` of an MCP session: ``"trace_" + session_id``.

    Raises:
        ValueError: ``session_id`` is empty.
    """
    if not session_id:
        raise ValueError("an MCP session id is required to name its rollout")
    return f"trace_{session_id}"


class _Handlers:
    """The MCP request handlers: each one a hosted request, in process."""

    def __init__(self, client: HostedClient) -> None:
        self.client = client

    async def list_tools(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        tools = [types.Tool(name=t["function"]["name"], description=t["function"].get("description"),
                            input_schema=t["function"]["parameters"]) for t in await self.client.list_tools()]
        return types.ListToolsResult(tools=tools)

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        headers = getattr(ctx.request, "headers", None)
        session_id = headers.get(SESSION_HEADER) if headers is not None else None
        if not session_id:
            return _tool_error({"error": {"code": "no_session", "message": (
                "MCP tool calls need a session (the session is the rollout); connect with the "
                "streamable-HTTP initialize handshake, not stateless requests")}}, None)
        trace_id = trace_id_for_session(session_id)
        try:
            answer = await self.client.call_tool(trace_id, params.name, params.arguments or {})
        except RolloutDiscardedError as exc:
            return _tool_error({"error": {"code": "rollout_discarded", "message": str(exc)}}, trace_id)
        if answer.ok:
            return types.CallToolResult(content=[types.TextContent(type="text", text=answer.model_text)],
                                        is_error=False, _meta={TRACE_META_KEY: trace_id})
        return _tool_error(answer.body, trace_id)


def _tool_error(payload: Any, trace_id: str | None) -> types.CallToolResult:
    """An MCP tool error whose text is the hosted error body (what a hosted model is shown)."""
    meta = {TRACE_META_KEY: trace_id} if trace_id else None
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(payload))],
                                is_error=True, _meta=meta)


class _Trace:
    """ASGI wrapper of the ``/mcp`` endpoint: the ``x-rft-trace-id`` header on responses of a session."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_session = Headers(scope=scope).get(SESSION_HEADER)

        async def send_with_trace(message: Message) -> None:
            if message["type"] == "http.response.start":
                response_headers = MutableHeaders(scope=message)
                session_id = response_headers.get(SESSION_HEADER) or request_session
                if session_id:
                    response_headers[TRACE_HEADER] = trace_id_for_session(session_id)
            await send(message)

        await self.app(scope, receive, send_with_trace)


class MCPSurface:
    """The ``"mcp"`` surface: streamable HTTP at ``path``.

    Args:
        path: the MCP endpoint path (default ``/mcp``).
        name: the MCP server name announced at initialize (default ``"rft-sdk"``).
        json_response: answer POSTs with JSON instead of SSE streams.
        transport_security: ``mcp`` DNS-rebinding settings (``None``: no Host/Origin check).
    """

    name = "mcp"

    def __init__(self, path: str = "/mcp", *, name: str | None = None, json_response: bool = False,
                 transport_security: TransportSecuritySettings | None = None) -> None:
        self.path = path
        self.server_name = name or "rft-sdk"
        self.json_response = json_response
        self.transport_security = transport_security

    def endpoint(self, context: SurfaceContext) -> tuple[ASGIApp, SurfaceMount]:
        """The ``/mcp`` ASGI endpoint (unauthenticated) and the mount serving it."""
        client = context.hosted_client()
        handlers = _Handlers(client)
        mcp_server: Server[Any] = Server(self.server_name, on_list_tools=handlers.list_tools,
                                         on_call_tool=handlers.call_tool)
        manager = StreamableHTTPSessionManager(app=mcp_server, json_response=self.json_response,
                                               security_settings=self.transport_security)
        endpoint = _Trace(BodyDoor(StreamableHTTPASGIApp(manager)))  # the front door's body rules (issue 39)

        @contextlib.asynccontextmanager
        async def lifespan() -> AsyncIterator[None]:
            async with manager.run():
                yield

        return endpoint, SurfaceMount([Route(self.path, endpoint=endpoint)], lifespan)

    def mount(self, context: SurfaceContext) -> SurfaceMount:
        """Serve ``/mcp`` inside the ``ToolServer`` (behind its ``AuthMiddleware``)."""
        return self.endpoint(context)[1]


def _standalone(server: _HasSurfaceContext, surface: MCPSurface, hosted: ASGIApp | None) -> Starlette:
    context = server.surface_context()
    endpoint, mount = surface.endpoint(context)
    routes: list[Any] = [Route(surface.path, endpoint=context.protect(endpoint))]
    if hosted is not None:
        routes.append(Mount("/", app=hosted))
    assert mount.lifespan is not None  # set by endpoint()
    run = mount.lifespan

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with run():
            yield

    return Starlette(routes=routes, lifespan=lifespan)


def mcp_app(server: _HasSurfaceContext, *, path: str = "/mcp", name: str | None = None, json_response: bool = False,
            transport_security: TransportSecuritySettings | None = None) -> Starlette:
    """A Starlette app serving ``server``'s tools over MCP streamable HTTP at ``path`` (and nothing else).

    Args:
        server: the ``ToolServer`` whose tools (and store, auth, metrics) are served.
        path, name, json_response, transport_security: see :class:`MCPSurface`.

    The app's lifespan runs the MCP session manager: serve it with a server
    that runs ASGI lifespan (uvicorn does) or mount it with ``lifespan=`` forwarded.
    ``ToolServer(surfaces=["mcp"])`` is the same with ``/healthz`` added.
    """
    return _standalone(server, MCPSurface(path, name=name, json_response=json_response,
                                          transport_security=transport_security), None)


def with_mcp(server: _HasSurfaceContext, *, path: str = "/mcp", name: str | None = None, json_response: bool = False,
             transport_security: TransportSecuritySettings | None = None) -> Starlette:
    """One ASGI app with both surfaces: the hosted routes of ``server`` and MCP at ``path``.

    Same arguments as :func:`mcp_app`. ``rft serve mymodule:app`` with
    ``app = with_mcp(server)`` serves ``/tools/{name}``, ``/grade``, ``/healthz``,
    ``/metrics`` and ``/mcp`` from one process and one store (as
    ``ToolServer(surfaces=["hosted", "mcp"])`` does).
    """
    return _standalone(server, MCPSurface(path, name=name, json_response=json_response,
                                          transport_security=transport_security), server)  # type: ignore[arg-type]
