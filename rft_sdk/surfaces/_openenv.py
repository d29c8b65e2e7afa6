"""The OpenEnv surface: a ``ToolServer`` as an OpenEnv environment server (``docs/openenv.md``).

Speaks the contract of ``openenv`` 0.10.0's ``HTTPEnvServer``
(``openenv/core/env_server/http_server.py``), under ``path`` (default
``/openenv``; OpenEnv's clients take it as their ``base_url``):

* ``WS {path}/ws``: one connection is one session (one environment). Frames
  ``{"type": "reset"|"step"|"state"|"close"|"mcp", "data"}`` are answered with
  ``{"type": "observation"|"state"|"error"|"mcp", "data"}``; ``?session_id=`` attaches
  to a session created over HTTP MCP (what ``MCPToolClient`` does).
* ``POST {path}/mcp``: JSON-RPC 2.0 ``openenv/session/create``, ``openenv/session/close``,
  ``tools/list``, ``tools/call`` (``params.session_id`` names the session; tool calls are
  ``step`` s of that session's episode, as OpenEnv routes them for tool-action environments).
* ``POST {path}/reset``, ``POST {path}/step``, ``GET {path}/state``: OpenEnv's stateless
  HTTP endpoints (a fresh environment per request; an episode needs ``/ws``).
* ``GET {path}/health``, ``{path}/metadata``, ``{path}/schema``.
* ``GET {path}/openapi.json``: the HTTP routes above as an OpenAPI 3.1 document whose
  ``info.version`` is ``"1.0.0"``, the OpenEnv HTTP API version ``HTTPEnvServer``'s app
  declares; ``openenv validate --url`` reads the mode (simulation: ``/reset``, ``/step``,
  ``/state``) and the API profile from it.

WebSockets: ``/ws`` needs a WebSocket library in the ASGI server. uvicorn (what
``rft serve`` runs) uses ``websockets`` (a dependency of ``rft-sdk``) or ``wsproto``;
with neither it only logs "No supported WebSocket library detected" and answers ``/ws``
with 404, so :meth:`OpenEnvSurface.mount` refuses to mount then (``ModuleNotFoundError``
naming ``pip install "websockets>=13.0"``), and ``rft serve`` exits with that message.

Why not OpenEnv's own server class: ``openenv`` pins ``fastmcp`` 3, hence ``mcp<2``,
which cannot be installed beside ``rft-sdk[mcp]`` (``mcp>=2.3``); this surface needs no
extra and runs beside the MCP surface. Its contract is tested with OpenEnv's own
clients (``MCPToolClient``, ``GenericEnvClient``) from the index
(``tests/surfaces/test_openenv.py``).

Sessions: at most ``max_sessions`` at once (default 128, ``$RFT_OPENENV_MAX_SESSIONS``);
one more is refused with OpenEnv's ``CAPACITY_REACHED`` error, as ``HTTPEnvServer``
does at ``max_concurrent_envs``. Each session is its own rollouts (its own
``trace_id`` per ``reset``), so ``num_generations`` parallel rollouts of one prompt
never share state. HTTP-created sessions idle for ``session_timeout_s`` are closed.
Sessions live in one process: serve this surface with one worker (or sticky sessions).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import os
import secrets
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from .._wire._body import decode_object
from .._wire._endpoint import error_body, json_response
from .._wire._json import encode_json, loads_strict
from .._wire._principal import request_principal
from .._wire._read import read_body
from .._wire._redact import get_logger
from ..protocol import BODY_TIMEOUT_S, MAX_BODY_BYTES
from ._openenv_episode import Episode, EpisodeConfig, ProtocolError, openenv_tools
from ._seam import SurfaceContext, SurfaceMount
from ._wsdoor import INTERNAL_ERROR, WsClosed, WsDecodeError, WsLimits, close

logger = get_logger("rft_sdk.openenv")
#: RFC 6455 close codes of a refused session: policy violation (unknown or foreign id), try again later.
POLICY_VIOLATION, TRY_AGAIN_LATER = 1008, 1013

__all__ = ["OPENENV_API_VERSION", "OpenEnvSurface", "websocket_library_missing"]

_ENV = "RFT_OPENENV_"
#: The OpenEnv HTTP API version this surface speaks (``openenv`` 0.10.0's ``create_app``: ``FastAPI(version="1.0.0")``).
OPENENV_API_VERSION = "1.0.0"
#: What installs the WebSocket library uvicorn needs for ``/ws`` (uvicorn[standard]'s own requirement).
WEBSOCKETS_INSTALL = 'pip install "websockets>=13.0"'


def websocket_library_missing() -> bool:
    """Whether uvicorn would serve no WebSockets: neither ``websockets`` nor ``wsproto`` imports (uvicorn's
    own rule, ``uvicorn.protocols.websockets.auto``: with ``ws="auto"`` it then answers every WebSocket 404)."""
    from uvicorn.protocols.websockets.auto import AutoWebSocketsProtocol

    return AutoWebSocketsProtocol is None


def _load_dataset(dataset: str | os.PathLike[str] | Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    if dataset is None:
        return []
    if isinstance(dataset, (str, os.PathLike)):
        lines = Path(dataset).read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]
    return [dict(line) for line in dataset]


def _rpc(result: Any = None, *, request_id: Any = None, error: tuple[int, str] | None = None,
         data: Any = None) -> dict[str, Any]:
    """A JSON-RPC 2.0 response (``JsonRpcResponse.model_dump``: ``result`` or ``error``, never both)."""
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
    if error is not None:
        out["error"] = {"code": error[0], "message": error[1], "data": data}
    else:
        out["result"] = result
    return out


class _Sessions:
    """The sessions of one surface: id -> :class:`Episode`, bounded by ``max_sessions`` across every way
    of opening one (a WebSocket, ``openenv/session/create``, and a stateless ``POST /reset`` while it runs).

    A session id is ``secrets.token_urlsafe(32)`` (256 random bits), bound to the credential that opened
    it (:func:`rft_sdk._wire._principal.request_principal`, the token auth accepted): another credential naming it is refused as an unknown id.
    A session opened by a WebSocket belongs to that connection: it cannot be attached to or closed by id.
    """

    def __init__(self, config: EpisodeConfig, max_sessions: int, timeout_s: float | None) -> None:
        self.config, self.max_sessions, self.timeout_s = config, max_sessions, timeout_s
        self.episodes: dict[str, Episode] = {}
        self.owners: dict[str, str] = {}
        self.last_used: dict[str, float] = {}
        self.attached: set[str] = set()
        self.websocket_owned: set[str] = set()
        self.transient = 0  # stateless /reset requests in progress: each holds a slot while it runs

    def _check_capacity(self) -> None:
        active = len(self.episodes) + self.transient
        if active >= self.max_sessions:
            raise _CapacityError(active, self.max_sessions)

    def create(self, credential: str, *, websocket: bool = False) -> tuple[str, Episode]:
        self._check_capacity()
        session_id = secrets.token_urlsafe(32)
        self.episodes[session_id] = Episode(self.config)
        self.owners[session_id] = credential
        self.last_used[session_id] = time.monotonic()
        if websocket:
            self.websocket_owned.add(session_id)
        return session_id, self.episodes[session_id]

    @contextlib.contextmanager
    def transient_slot(self) -> Iterator[None]:
        """Hold one slot for a stateless request (raises :class:`_CapacityError` when none is free)."""
        self._check_capacity()
        self.transient += 1
        try:
            yield
        finally:
            self.transient -= 1

    def get(self, session_id: str, credential: str) -> Episode | None:
        """The session ``session_id`` opened over HTTP by ``credential``, else ``None`` (unknown, another
        credential's, or a WebSocket's own: all look the same to the caller)."""
        episode = self.episodes.get(session_id)
        if (episode is None or session_id in self.websocket_owned
                or not hmac.compare_digest(self.owners.get(session_id, ""), credential)):
            return None
        self.last_used[session_id] = time.monotonic()
        return episode

    def close(self, session_id: str) -> bool:
        self.last_used.pop(session_id, None)
        self.attached.discard(session_id)
        self.websocket_owned.discard(session_id)
        self.owners.pop(session_id, None)
        return self.episodes.pop(session_id, None) is not None

    async def reap(self) -> None:
        """Close HTTP-created sessions idle for ``timeout_s`` (checked every quarter of it, at least 5 s)."""
        if self.timeout_s is None:
            return
        while True:
            await asyncio.sleep(max(self.timeout_s / 4, 5.0))
            now = time.monotonic()
            for sid in [s for s, t in self.last_used.items()
                        if s not in self.attached and s not in self.websocket_owned and now - t > self.timeout_s]:
                self.close(sid)


class _CapacityError(Exception):
    def __init__(self, active: int, maximum: int) -> None:
        super().__init__(f"Server at capacity: {active}/{maximum} sessions active. Cannot accept new connections.")
        self.active, self.maximum = active, maximum


class OpenEnvSurface:
    """The ``"openenv"`` surface (see the module docstring).

    Args:
        dataset: hosted dataset lines (a JSONL path or a list of dicts) that ``reset``
            draws items from (default ``$RFT_OPENENV_DATASET``); without one, the client
            passes ``reset(item=...)``.
        grader: grader name (default ``$RFT_OPENENV_GRADER``, else the server's default grader).
        max_sessions: concurrent sessions (default ``$RFT_OPENENV_MAX_SESSIONS`` or 128).
        max_steps: tool calls per episode before it is cut and graded (default
            ``$RFT_OPENENV_MAX_STEPS`` or 50).
        answer_tool: the end-of-episode tool's name (default ``"submit_answer"``).
        session_timeout_s: seconds an HTTP-created session may stay idle (default 600).
        path: where the environment is served (default ``$RFT_OPENENV_PATH`` or ``"/openenv"``;
            ``"/"``: at the root, as a stand-alone OpenEnv environment serves, e.g. ``rft export openenv``).

    Raises:
        ValueError: ``max_sessions``/``max_steps`` < 1, a bad ``path``, or (at mount) a
            server tool named like ``answer_tool`` or one of OpenEnv's reserved names.
        ModuleNotFoundError: (at mount) no WebSocket library for uvicorn (module docstring).
    """

    name = "openenv"

    def __init__(self, dataset: str | os.PathLike[str] | Sequence[Mapping[str, Any]] | None = None, *,
                 grader: str | None = None, max_sessions: int | None = None, max_steps: int | None = None,
                 answer_tool: str = "submit_answer", session_timeout_s: float | None = 600.0,
                 path: str | None = None) -> None:
        self.dataset = _load_dataset(dataset if dataset is not None else os.environ.get(_ENV + "DATASET") or None)
        self.grader = grader or os.environ.get(_ENV + "GRADER") or None
        self.max_sessions = int(max_sessions if max_sessions is not None else os.environ.get(_ENV + "MAX_SESSIONS")
                                or 128)
        self.max_steps = int(max_steps if max_steps is not None else os.environ.get(_ENV + "MAX_STEPS") or 50)
        if self.max_sessions < 1 or self.max_steps < 1:
            raise ValueError(f"max_sessions and max_steps must be >= 1, got {self.max_sessions}, {self.max_steps}")
        path = path if path is not None else os.environ.get(_ENV + "PATH") or "/openenv"
        if not path.startswith("/") or (path != "/" and path.endswith("/")):
            raise ValueError(f"path must look like '/openenv' (a prefix) or be '/' (the root), got {path!r}")
        self.answer_tool, self.session_timeout_s, self.path = answer_tool, session_timeout_s, path

    def mount(self, context: SurfaceContext) -> SurfaceMount:
        """Routes under :attr:`path` and a lifespan closing the in-process client."""
        if websocket_library_missing():
            raise ModuleNotFoundError(
                "the openenv surface serves its episodes over WebSocket (/ws, what OpenEnv's clients use) and "
                "uvicorn finds no WebSocket library (neither 'websockets' nor 'wsproto'; it would answer /ws with "
                f"404): {WEBSOCKETS_INSTALL}  (a dependency of rft-sdk: was it installed with --no-deps?)",
                name="websockets")
        names = {t["function"]["name"] for t in context.tools()}
        clash = names & {self.answer_tool, "reset", "step", "state", "close"}
        if clash:
            raise ValueError(f"tools {sorted(clash)} clash with OpenEnv's reserved names or the answer tool "
                             f"{self.answer_tool!r}; pass OpenEnvSurface(answer_tool=...) or rename the tool")
        client = context.hosted_client()
        config = EpisodeConfig(client, context.tools, self.dataset, self.grader, self.max_steps, self.answer_tool)
        sessions = _Sessions(config, self.max_sessions, self.session_timeout_s)
        routes = _Routes(self, config, sessions)

        @contextlib.asynccontextmanager
        async def lifespan() -> AsyncIterator[None]:
            reaper = asyncio.create_task(sessions.reap())
            try:
                yield
            finally:
                reaper.cancel()
                await client.aclose()

        return SurfaceMount(routes.routes(self.path), lifespan)


class _Routes:
    """The HTTP and WebSocket endpoints of one mounted surface."""

    def __init__(self, surface: OpenEnvSurface, config: EpisodeConfig, sessions: _Sessions) -> None:
        self.surface, self.config, self.sessions = surface, config, sessions

    def routes(self, path: str) -> list[BaseRoute]:
        p = "" if path == "/" else path
        return [WebSocketRoute(p + "/ws", self.websocket),
                Route(p + "/mcp", self.mcp, methods=["POST"]),
                Route(p + "/reset", self.reset, methods=["POST"]),
                Route(p + "/step", self.step, methods=["POST"]),
                Route(p + "/state", self.state, methods=["GET"]),
                Route(p + "/health", self.health, methods=["GET"]),
                Route(p + "/metadata", self.metadata, methods=["GET"]),
                Route(p + "/schema", self.schema, methods=["GET"]),
                Route(p + "/openapi.json", self.openapi, methods=["GET"])]

    # -- WebSocket sessions (EnvClient) --------------------------------------------
    async def websocket(self, ws: WebSocket) -> None:
        """One session per connection, behind the WebSocket front door (``_wsdoor``): every way it ends
        sends a close frame with a code."""
        limits = WsLimits()
        await ws.accept()
        try:
            await self._session(ws, limits)
        except WebSocketDisconnect:
            return
        except WsClosed as exc:
            await close(ws, exc.code, exc.reason)
            return
        except Exception:  # never a dropped connection without a close frame
            logger.exception("OpenEnv WebSocket session failed")
            await close(ws, INTERNAL_ERROR, "internal error")
            return
        await close(ws, 1000, "")

    async def _session(self, ws: WebSocket, limits: WsLimits) -> None:
        requested = ws.query_params.get("session_id")
        credential = request_principal(ws.scope) or ""
        if requested is not None:
            episode = self.sessions.get(requested, credential)
            if episode is None or requested in self.sessions.attached:
                why = "Unknown session_id" if episode is None else "already has an attached WebSocket; session"
                await ws.send_json({"type": "error", "data": {"message": f"{why}: {requested[:64]}",
                                                               "code": "SESSION_ERROR"}})
                raise WsClosed(POLICY_VIOLATION, "unknown session")
            session_id, owned = requested, False
            self.sessions.attached.add(session_id)
        else:
            try:
                session_id, episode = self.sessions.create(credential, websocket=True)
            except _CapacityError as exc:
                await ws.send_json({"type": "error", "data": {
                    "message": str(exc), "code": "CAPACITY_REACHED", "active_sessions": exc.active,
                    "max_sessions": exc.maximum}})
                raise WsClosed(TRY_AGAIN_LATER, "capacity reached") from None
            owned = True
        try:
            while True:
                try:
                    message = await limits.receive_json(ws)
                except WsDecodeError as exc:
                    reply: dict[str, Any] | None = {"type": "error", "data": {"message": f"Invalid JSON: {exc}",
                                                                            "code": "INVALID_JSON"}}
                else:
                    reply = await self._frame(message, episode, session_id, credential)
                if reply is None:
                    break
                await ws.send_text(json.dumps(reply))
        finally:
            if owned:
                self.sessions.close(session_id)
            else:
                self.sessions.attached.discard(session_id)

    async def _frame(self, message: Any, episode: Episode, session_id: str,
                     credential: str) -> dict[str, Any] | None:
        kind = message.get("type", "") if isinstance(message, dict) else ""
        data = message.get("data", {}) if isinstance(message, dict) else {}
        try:
            if kind == "reset":
                return {"type": "observation", "data": await episode.reset(data if isinstance(data, dict) else {})}
            if kind == "step":
                return {"type": "observation", "data": await episode.step(data)}
            if kind == "state":
                return {"type": "state", "data": episode.state()}
            if kind == "close":
                return None
            if kind == "mcp":
                return {"type": "mcp", "data": await self._rpc_call(data, episode, session_id, credential)}
            return {"type": "error", "data": {"message": f"Unknown message type: {str(kind)[:64]}",
                                              "code": "UNKNOWN_TYPE"}}
        except ProtocolError as exc:
            return {"type": "error", "data": {"message": str(exc), "code": exc.code}}

    # -- JSON-RPC over HTTP (MCPToolClient, production mode) -------------------------
    async def mcp(self, request: Request) -> Response:
        raw = await read_body(request, MAX_BODY_BYTES, BODY_TIMEOUT_S)  # 413/408 as JSON (the front door)
        try:
            body = loads_strict(raw)
        except ValueError:
            return _json(_rpc(error=(-32700, "Parse error")))
        if not isinstance(body, dict) or body.get("jsonrpc") != "2.0" or not isinstance(body.get("method"), str):
            rid = body.get("id") if isinstance(body, dict) else None
            return _json(_rpc(error=(-32600, "Invalid Request"), request_id=rid if _plain_id(rid) else None))
        return _json(await self._rpc_call(body, None, None, request_principal(request.scope) or ""))

    async def _rpc_call(self, body: Any, episode: Episode | None, session_id: str | None,
                        credential: str) -> dict[str, Any]:
        if not isinstance(body, dict):
            return _rpc(error=(-32600, "Invalid request: params must be an object"))
        method, rid, params = body.get("method"), body.get("id"), body.get("params") or {}
        rid = rid if _plain_id(rid) else None
        if not isinstance(params, dict):
            return _rpc(error=(-32602, "Params must be an object"), request_id=rid)
        if method == "openenv/session/create":
            if session_id is not None:
                return _rpc({"session_id": session_id}, request_id=rid)
            try:
                new_id, _ = self.sessions.create(credential)
            except _CapacityError as exc:
                return _rpc(error=(-32000, str(exc)), request_id=rid,
                            data={"active_sessions": exc.active, "max_sessions": exc.maximum})
            return _rpc({"session_id": new_id}, request_id=rid)
        if method == "openenv/session/close":
            target = params.get("session_id")
            if not target or not isinstance(target, str):
                return _rpc(error=(-32602, "Invalid params - 'session_id' is required"), request_id=rid)
            if target == session_id:
                return _rpc(error=(-32600, "Cannot close active WebSocket-managed session via MCP method"),
                            request_id=rid)
            if self.sessions.get(target, credential) is None or not self.sessions.close(target):
                return _rpc(error=(-32602, f"Unknown session_id: {target[:64]}"), request_id=rid)
            return _rpc({"session_id": target, "closed": True}, request_id=rid)
        if method not in ("tools/list", "tools/call"):
            return _rpc(error=(-32601, f"Method not found: {method}"), request_id=rid)
        if episode is None and params.get("session_id"):
            episode = self.sessions.get(str(params["session_id"]), credential)
            if episode is None:
                return _rpc(error=(-32602, f"Unknown session_id: {str(params['session_id'])[:64]}"), request_id=rid)
        if method == "tools/list":
            return _rpc({"tools": openenv_tools(self.config)}, request_id=rid)
        name = params.get("name")
        if not name or not isinstance(name, str):
            return _rpc(error=(-32602, "Missing 'name' in params"), request_id=rid)
        if episode is None:
            return _rpc(error=(-32603, "tools/call needs a session (openenv/session/create): the session is the "
                                       "rollout"), request_id=rid)
        try:
            arguments = params.get("arguments") or {}
            if not isinstance(arguments, dict):
                return _rpc(error=(-32602, "Invalid params - 'arguments' must be an object"), request_id=rid)
            observation = await episode.step({"type": "call_tool", "tool_name": name, "arguments": arguments})
        except ProtocolError as exc:
            return _rpc(error=(-32603, str(exc)), request_id=rid)
        # OpenEnv answers with the CallToolObservation's model_dump (fields + done/reward/metadata)
        return _rpc({**observation["observation"], "done": observation["done"], "reward": observation["reward"]},
                    request_id=rid)

    # -- stateless HTTP endpoints ----------------------------------------------------
    async def reset(self, request: Request) -> Response:
        raw = await read_body(request, MAX_BODY_BYTES, BODY_TIMEOUT_S)  # 413/408 as JSON (the front door)
        data = decode_object(raw) if raw.strip() else {}  # 400 malformed_json by the one decoding rule
        try:
            with self.sessions.transient_slot():
                return _json(await Episode(self.config).reset(data))
        except _CapacityError as exc:  # the ErrorBody of every non-2xx, retryable
            return json_response(encode_json(error_body("capacity_reached", str(exc))), 503, {"Retry-After": "1"})
        except ProtocolError as exc:
            return _json({"detail": str(exc)}, 422)

    async def step(self, request: Request) -> JSONResponse:
        return JSONResponse({"detail": "this environment keeps per-episode state: a stateless POST /step has no "
                                       "episode; open a session (WebSocket /ws, OpenEnv's EnvClient)"},
                            status_code=409)

    async def state(self, request: Request) -> JSONResponse:
        return JSONResponse(Episode(self.config).state())

    async def health(self, request: Request) -> JSONResponse:
        return JSONResponse({"status": "healthy"})

    async def metadata(self, request: Request) -> JSONResponse:
        return JSONResponse({"name": "rft-sdk ToolServer", "description": (
            "The tools and grader of an rft-sdk ToolServer: each episode is one rollout (trace_id), each step one "
            f"tool call, {self.config.answer_tool}(answer) ends it with the grader's score as reward."),
            "readme_content": None, "version": None, "author": None, "documentation_url": None})

    async def schema(self, request: Request) -> JSONResponse:
        return JSONResponse(_SCHEMA)

    async def openapi(self, request: Request) -> JSONResponse:
        root = request.scope.get("root_path", "")
        return JSONResponse(openapi_document((root + ("" if self.surface.path == "/" else self.surface.path)) or "/"))


def _operation(summary: str, tag: str, body: bool = False) -> dict[str, Any]:
    op: dict[str, Any] = {"summary": summary, "tags": [tag], "responses": {
        "200": {"description": "OK", "content": {"application/json": {"schema": {"type": "object"}}}}}}
    if body:
        op["requestBody"] = {"content": {"application/json": {"schema": {"type": "object"}}}}
    return op


def openapi_document(server_url: str) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the surface's HTTP routes, paths relative to ``server_url`` (where it is
    mounted), ``info.version`` = :data:`OPENENV_API_VERSION`. WebSocket ``/ws`` has no OpenAPI form (as in
    OpenEnv's own app)."""
    return {
        "openapi": "3.1.0",
        "info": {"title": "OpenEnv Environment HTTP API (rft-sdk ToolServer)", "version": OPENENV_API_VERSION,
                 "description": "An rft-sdk ToolServer as an OpenEnv environment: each episode (WebSocket /ws "
                                "session) is one rollout, each step one tool call, submit_answer ends it with the "
                                "grader's score as reward."},
        "servers": [{"url": server_url}],
        "paths": {
            "/reset": {"post": _operation("Reset: a new episode, its tools and prompt", "Environment Control",
                                          body=True)},
            "/step": {"post": _operation("Step (409: an episode needs a /ws session)", "Environment Control",
                                         body=True)},
            "/state": {"get": _operation("State of a fresh environment", "State Management")},
            "/mcp": {"post": _operation("MCP JSON-RPC: openenv/session/create|close, tools/list, tools/call",
                                        "Environment Control", body=True)},
            "/health": {"get": _operation("Health", "Health")},
            "/metadata": {"get": _operation("Environment metadata", "Environment Info")},
            "/schema": {"get": _operation("Action, observation and state JSON schemas", "Schema")},
        },
    }


def _plain_id(rid: Any) -> bool:
    """Whether a JSON-RPC ``id`` may be echoed: a string of at most 128 characters, an int, or null."""
    return rid is None or (isinstance(rid, str) and len(rid) <= 128) or (isinstance(rid, int) and abs(rid) < 2**53)


def _json(content: Any, status: int = 200) -> Response:
    return json_response(encode_json(content), status)


_TOOL = {"type": "object", "properties": {"name": {"type": "string"}, "description": {"type": "string"},
                                          "input_schema": {"type": "object"}},
         "required": ["name", "description", "input_schema"]}
_BASE = {"done": {"type": "boolean", "default": False},
         "reward": {"anyOf": [{"type": "boolean"}, {"type": "integer"}, {"type": "number"}, {"type": "null"}]},
         "metadata": {"type": "object"}}
_SCHEMA = {
    "action": {"title": "CallToolAction", "type": "object", "properties": {
        "metadata": {"type": "object"}, "type": {"const": "call_tool", "default": "call_tool"},
        "tool_name": {"type": "string"}, "arguments": {"type": "object"}}, "required": ["tool_name"]},
    "observation": {"title": "CallToolObservation", "type": "object", "properties": {
        **_BASE, "tool_name": {"type": "string"}, "result": {}, "error": {"anyOf": [{"type": "object", "properties": {
            "error_type": {"enum": ["execution_error", "invalid_args", "transport_error", "tool_not_found",
                                    "timeout"]}, "message": {"type": "string"}}}, {"type": "null"}]}},
        "required": ["tool_name"]},
    "reset_observation": {"title": "ListToolsObservation", "type": "object",
                          "properties": {**_BASE, "tools": {"type": "array", "items": _TOOL}}, "required": ["tools"]},
    "state": {"title": "State", "type": "object", "properties": {
        "episode_id": {"anyOf": [{"type": "string"}, {"type": "null"}]}, "step_count": {"type": "integer"},
        "trace_id": {"anyOf": [{"type": "string"}, {"type": "null"}]}}},
}
