"""The MCP surface: a ``ToolServer``'s tools over the Model Context Protocol (streamable HTTP).

Built on the official ``mcp`` SDK (``mcp.server.lowlevel.Server`` and
``StreamableHTTPSessionManager``), which serves both protocol eras on one URL:
the handshake revisions (up to 2025-11-25: ``initialize``, ``Mcp-Session-Id``)
and the stateless revision 2026-07-28 (no handshake, no session; what
``mcp.Client(url)`` negotiates in its default ``mode="auto"``). Through the
surface seam (``_seam``):

- rollout: on a handshake revision one MCP session is one rollout, ``trace_id =
  "trace_" + <Mcp-Session-Id>`` (:func:`trace_id_for_session`), sent back in the
  ``x-rft-trace-id`` header of every ``/mcp`` response of the session. On
  2026-07-28 the rollout is a server-minted handle (SEP-2567, state handles
  passed as ordinary tool arguments): the tool ``start_rollout`` returns
  ``{"rollout_id", "trace_id"}``, and every other tool declares a required
  ``rollout_id`` argument (also accepted in the call's ``_meta["rft/rollout_id"]``,
  for a harness that keeps it out of the model's arguments). The handle is
  unguessable and opens only for the credential that started it
  (:mod:`._mcp_handles`). Each tool result carries ``_meta["rft/trace_id"]``;
- calls → pipeline: ``tools/list`` is ``GET /tools`` (each ``inputSchema`` is the
  strict JSON schema of ``server.dataset_tools()``, plus ``rollout_id`` on
  2026-07-28); ``tools/call`` is the hosted ``POST /tools/{name}`` of that
  ``trace_id`` with the tool's own arguments (``rollout_id`` removed), in
  process (:class:`~._hosted.HostedClient`). A 2xx ``output`` is the text
  content; any other answer is an MCP tool error (``isError: true``) whose text
  is the hosted error body, as the model would see it in training; a 5xx still
  failing after 3 attempts is a tool error ``rollout_discarded``;
- end of episode → grader: ``POST /grade`` with the rollout's ``trace_id``, like a
  hosted rollout (MCP has no end-of-episode message of its own).

Auth: ``/mcp`` sits behind the server's ``AuthMiddleware`` (the same tokens and
headers as every other route: ``Authorization: Bearer``, ``X-Functions-Key``,
``api-key``); a refusal is HTTP 401 with ``WWW-Authenticate: Bearer``.

Handshake-era sessions live in the memory of one process: serve them with one
worker (or sticky sessions). Stateless (2026-07-28) requests can reach any
worker or replica sharing the store and ``RFT_MCP_HANDLE_KEY``.
"""

from __future__ import annotations

import contextlib
import hmac
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Protocol

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.datastructures import Headers, MutableHeaders
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .._version import __version__
from .._wire._principal import request_principal
from ._door import BodyDoor
from ._hosted import HostedClient, RolloutDiscardedError
from ._mcp_handles import InvalidHandle, RolloutHandles
from ._seam import SurfaceContext, SurfaceMount

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings

__all__ = ["HANDLE_ARGUMENT", "HANDLE_META_KEY", "SESSION_HEADER", "START_TOOL", "TRACE_HEADER", "TRACE_META_KEY",
           "MCPSurface", "mcp_app", "trace_id_for_session", "with_mcp"]

SESSION_HEADER = "mcp-session-id"
TRACE_HEADER = "x-rft-trace-id"
TRACE_META_KEY = "rft/trace_id"
#: The tool that starts a rollout on the stateless revision (2026-07-28) and returns its handle.
START_TOOL = "start_rollout"
#: The argument every other tool declares on 2026-07-28: the handle ``start_rollout`` returned.
HANDLE_ARGUMENT = "rollout_id"
#: Where a harness may send the handle instead (the request's ``_meta``), keeping it out of the model's arguments.
HANDLE_META_KEY = "rft/rollout_id"
_INTERNAL_ERROR = -32603
_START_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
_START_OUTPUT: dict[str, Any] = {
    "type": "object", "required": [HANDLE_ARGUMENT, "trace_id"], "additionalProperties": False,
    "properties": {HANDLE_ARGUMENT: {"type": "string"}, "trace_id": {"type": "string"}}}
_START_DESCRIPTION = (f"Start a new episode (one rollout) and return its {HANDLE_ARGUMENT}. Pass that {HANDLE_ARGUMENT} "
                      "unchanged to every other tool call of the episode; each episode has its own state.")


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


def _is_stateless(ctx: Any) -> bool:
    """Whether the request speaks a stateless revision (2026-07-28+), where rollouts are handles."""
    return getattr(ctx, "protocol_version", None) not in HANDSHAKE_PROTOCOL_VERSIONS


def _with_handle(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with the required ``rollout_id`` argument added (the 2026-07-28 listing)."""
    properties = dict(schema.get("properties") or {})
    if HANDLE_ARGUMENT in properties:
        raise MCPError(_INTERNAL_ERROR, f"tool {name!r} declares its own {HANDLE_ARGUMENT!r} argument, which the "
                       "stateless MCP revision needs for the rollout handle: rename that parameter")
    properties[HANDLE_ARGUMENT] = {"type": "string", "description": f"the {HANDLE_ARGUMENT} {START_TOOL} returned"}
    return {**schema, "properties": properties, "required": [*(schema.get("required") or []), HANDLE_ARGUMENT]}


class _Handlers:
    """The MCP request handlers: each one a hosted request, in process."""

    def __init__(self, client: HostedClient, handles: RolloutHandles) -> None:
        self.client = client
        self.handles = handles

    async def list_tools(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        stateless = _is_stateless(ctx)
        tools = []
        for t in await self.client.list_tools():
            name, schema = t["function"]["name"], t["function"]["parameters"]
            if stateless and name == START_TOOL:
                raise MCPError(_INTERNAL_ERROR, f"a tool is named {START_TOOL!r}, which the stateless MCP revision "
                               "needs for starting rollouts: rename that tool")
            tools.append(types.Tool(name=name, description=t["function"].get("description"),
                                    input_schema=_with_handle(name, schema) if stateless else schema))
        if stateless:
            tools.insert(0, types.Tool(name=START_TOOL, description=_START_DESCRIPTION, input_schema=_START_SCHEMA,
                                       output_schema=_START_OUTPUT))
        return types.ListToolsResult(tools=tools)

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        request = getattr(ctx, "request", None)
        headers = getattr(request, "headers", None)
        session_id = headers.get(SESSION_HEADER) if headers is not None else None
        arguments = dict(params.arguments or {})
        if session_id:
            trace_id = trace_id_for_session(session_id)
        elif not _is_stateless(ctx):
            return _tool_error({"error": {"code": "no_session", "message": (
                "MCP tool calls of a handshake-era revision need a session (the session is the rollout); "
                "connect with the initialize handshake, or speak the 2026-07-28 revision and call "
                f"{START_TOOL}")}}, None)
        else:
            principal = request_principal(request.scope) if request is not None else None
            if principal is None:  # served outside the server's AuthMiddleware: nothing to bind a handle to
                return _tool_error({"error": {"code": "unauthorized", "message": (
                    "stateless MCP rollouts need the server's authentication in front of /mcp "
                    "(serve the surface through ToolServer, mcp_app or with_mcp)")}}, None)
            if params.name == START_TOOL:
                minted, trace_id = self.handles.mint(principal)
                started = {HANDLE_ARGUMENT: minted, "trace_id": trace_id}
                return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(started))],
                                            structured_content=started, is_error=False,
                                            _meta={TRACE_META_KEY: trace_id})
            handle: object = arguments.pop(HANDLE_ARGUMENT, None)
            meta_handle: object = (params.meta or {}).get(HANDLE_META_KEY)
            if handle is None:
                handle = meta_handle
            elif meta_handle is not None and meta_handle != handle:
                return _tool_error({"error": {"code": "invalid_rollout", "message": (
                    f"the {HANDLE_ARGUMENT} argument and _meta[{HANDLE_META_KEY!r}] name different rollouts")}}, None)
            if handle is None:
                return _tool_error({"error": {"code": "no_rollout", "message": (
                    f"call {START_TOOL} first and pass the {HANDLE_ARGUMENT} it returns to every tool call "
                    "of the episode")}}, None)
            try:
                trace_id = self.handles.open(handle, principal)
            except InvalidHandle as exc:
                return _tool_error({"error": {"code": "invalid_rollout", "message": str(exc)}}, None)
        try:
            answer = await self.client.call_tool(trace_id, params.name, arguments)
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
    """ASGI wrapper of the ``/mcp`` endpoint: the ``x-rft-trace-id`` header on responses of a session, and a
    session of the session-based revisions bound to the credential that opened it (issue 39: a session is a
    capability of its credential). A request naming a session another principal opened gets the answer an
    unknown session gets (404 ``Session not found``), so it learns nothing; the owner map entry goes when
    the owner's ``DELETE`` ends the session."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.owners: dict[str, str] = {}  # session id -> principal digest ("" on a server without tokens)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_session = Headers(scope=scope).get(SESSION_HEADER)
        principal = request_principal(scope) or ""
        if request_session is not None:
            owner = self.owners.get(request_session)
            if owner is not None and not hmac.compare_digest(owner, principal):
                body = json.dumps({"jsonrpc": "2.0", "id": "server-error",
                                   "error": {"code": -32600, "message": "Session not found"}}).encode()
                await send({"type": "http.response.start", "status": 404,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        status = 0

        async def send_with_trace(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                response_headers = MutableHeaders(scope=message)
                session_id = response_headers.get(SESSION_HEADER) or request_session
                if session_id:
                    response_headers[TRACE_HEADER] = trace_id_for_session(session_id)
                    if request_session is None and status < 400:  # a session opened now: its owner
                        self.owners.setdefault(session_id, principal)
            await send(message)

        await self.app(scope, receive, send_with_trace)
        if request_session is not None and scope.get("method") == "DELETE" and status < 400:
            self.owners.pop(request_session, None)


class MCPSurface:
    """The ``"mcp"`` surface: streamable HTTP at ``path``.

    Args:
        path: the MCP endpoint path (default ``/mcp``).
        name: the MCP server name announced at initialize and ``server/discover`` (default ``"rft-sdk"``).
        json_response: answer POSTs with JSON instead of SSE streams.
        transport_security: ``mcp`` DNS-rebinding settings (``None``: no Host/Origin check).
        handle_key: the secret stateless rollout handles are signed with (``None``: the
            ``RFT_MCP_HANDLE_KEY`` environment variable, else random per process; see ``_mcp_handles``).
    """

    name = "mcp"

    def __init__(self, path: str = "/mcp", *, name: str | None = None, json_response: bool = False,
                 transport_security: TransportSecuritySettings | None = None,
                 handle_key: str | bytes | None = None) -> None:
        self.path = path
        self.server_name = name or "rft-sdk"
        self.json_response = json_response
        self.transport_security = transport_security
        self.handles = RolloutHandles(handle_key)

    def endpoint(self, context: SurfaceContext) -> tuple[ASGIApp, SurfaceMount]:
        """The ``/mcp`` ASGI endpoint (unauthenticated) and the mount serving it."""
        client = context.hosted_client()
        handlers = _Handlers(client, self.handles)

        def input_schema(name: str) -> dict[str, Any] | None:
            """The 2026-07-28 ``inputSchema`` of ``name`` (the SDK checks ``Mcp-Param`` headers against it),
            read from the server's tools instead of a ``tools/list`` per call."""
            if name == START_TOOL:
                return _START_SCHEMA
            for t in context.tools():
                if t["function"]["name"] == name:
                    return _with_handle(name, t["function"]["parameters"])
            return None

        mcp_server: Server[Any] = Server(self.server_name, version=__version__, on_list_tools=handlers.list_tools,
                                         on_call_tool=handlers.call_tool, get_tool_input_schema=input_schema)
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
            transport_security: TransportSecuritySettings | None = None,
            handle_key: str | bytes | None = None) -> Starlette:
    """A Starlette app serving ``server``'s tools over MCP streamable HTTP at ``path`` (and nothing else).

    Args:
        server: the ``ToolServer`` whose tools (and store, auth, metrics) are served.
        path, name, json_response, transport_security, handle_key: see :class:`MCPSurface`.

    The app's lifespan runs the MCP session manager: serve it with a server
    that runs ASGI lifespan (uvicorn does) or mount it with ``lifespan=`` forwarded.
    ``ToolServer(surfaces=["mcp"])`` is the same with ``/healthz`` added.
    """
    return _standalone(server, MCPSurface(path, name=name, json_response=json_response,
                                          transport_security=transport_security, handle_key=handle_key), None)


def with_mcp(server: _HasSurfaceContext, *, path: str = "/mcp", name: str | None = None, json_response: bool = False,
             transport_security: TransportSecuritySettings | None = None,
             handle_key: str | bytes | None = None) -> Starlette:
    """One ASGI app with both surfaces: the hosted routes of ``server`` and MCP at ``path``.

    Same arguments as :func:`mcp_app`. ``rft serve mymodule:app`` with
    ``app = with_mcp(server)`` serves ``/tools/{name}``, ``/grade``, ``/healthz``,
    ``/metrics`` and ``/mcp`` from one process and one store (as
    ``ToolServer(surfaces=["hosted", "mcp"])`` does).
    """
    return _standalone(server, MCPSurface(path, name=name, json_response=json_response,
                                          transport_security=transport_security, handle_key=handle_key),
                       server)  # type: ignore[arg-type]
