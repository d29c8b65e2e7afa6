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
import json
import os
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from ._openenv_episode import Episode, EpisodeConfig, ProtocolError, openenv_tools
from ._seam import SurfaceContext, SurfaceMount

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
    """The sessions of one surface: id -> :class:`Episode`, bounded by ``max_sessions``."""

    def __init__(self, config: EpisodeConfig, max_sessions: int, timeout_s: float | None) -> None:
        self.config, self.max_sessions, self.timeout_s = config, max_sessions, timeout_s
        self.episodes: dict[str, Episode] = {}
        self.last_used: dict[str, float] = {}
        self.attached: set[str] = set()

    def create(self) -> tuple[str, Episode]:
        if len(self.episodes) >= self.max_sessions:
            raise _CapacityError(len(self.episodes), self.max_sessions)
        session_id = str(uuid.uuid4())
        self.episodes[session_id] = Episode(self.config)
        self.last_used[session_id] = time.monotonic()
        return session_id, self.episodes[session_id]

    def get(self, session_id: str) -> Episode | None:
        episode = self.episodes.get(session_id)
        if episode is not None:
            self.last_used[session_id] = time.monotonic()
        return episode

    def close(self, session_id: str) -> bool:
        self.last_used.pop(session_id, None)
        self.attached.discard(session_id)
        return self.episodes.pop(session_id, None) is not None

    async def reap(self) -> None:
        """Close HTTP-created sessions idle for ``timeout_s`` (checked every quarter of it, at least 5 s)."""
        if self.timeout_s is None:
            return
        while True:
            await asyncio.sleep(max(self.timeout_s / 4, 5.0))
            now = time.monotonic()
            for sid in [s for s, t in self.last_used.items() if s not in self.attached and now - t > self.timeout_s]:
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
        await ws.accept()
        requested = ws.query_params.get("session_id")
        owned = requested is None
        try:
            if requested is not None:
                episode = self.sessions.get(requested)
                if episode is None or requested in self.sessions.attached:
                    why = "Unknown session_id" if episode is None else "already has an attached WebSocket; session"
                    await ws.send_json({"type": "error", "data": {"message": f"{why}: {requested}",
                                                                   "code": "SESSION_ERROR"}})
                    await ws.close()
                    return
                session_id = requested
                self.sessions.attached.add(session_id)
            else:
                try:
                    session_id, episode = self.sessions.create()
                except _CapacityError as exc:
                    await ws.send_json({"type": "error", "data": {
                        "message": str(exc), "code": "CAPACITY_REACHED", "active_sessions": exc.active,
                        "max_sessions": exc.maximum}})
                    await ws.close()
                    return
        except WebSocketDisconnect:
            return
        try:
            while True:
                raw = await ws.receive_text()
                reply = await self._frame(raw, episode, session_id)
                if reply is None:
                    break
                await ws.send_text(json.dumps(reply))
        except WebSocketDisconnect:
            pass
        finally:
            if owned:
                self.sessions.close(session_id)
            else:
                self.sessions.attached.discard(session_id)
        with contextlib.suppress(RuntimeError, WebSocketDisconnect):
            await ws.close()

    async def _frame(self, raw: str, episode: Episode, session_id: str) -> dict[str, Any] | None:
        try:
            message = json.loads(raw)
        except json.JSONDecodeError as exc:
            return {"type": "error", "data": {"message": f"Invalid JSON: {exc}", "code": "INVALID_JSON"}}
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
                return {"type": "mcp", "data": await self._rpc_call(data, episode, session_id)}
            return {"type": "error", "data": {"message": f"Unknown message type: {kind}", "code": "UNKNOWN_TYPE"}}
        except ProtocolError as exc:
            return {"type": "error", "data": {"message": str(exc), "code": exc.code}}

    # -- JSON-RPC over HTTP (MCPToolClient, production mode) -------------------------
    async def mcp(self, request: Request) -> JSONResponse:
        try:
            body = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError):
            return JSONResponse(_rpc(error=(-32700, "Parse error")))
        if not isinstance(body, dict) or body.get("jsonrpc") != "2.0" or not isinstance(body.get("method"), str):
            return JSONResponse(_rpc(error=(-32600, "Invalid Request"), request_id=(body or {}).get("id")
                                     if isinstance(body, dict) else None))
        return JSONResponse(await self._rpc_call(body, None, None))

    async def _rpc_call(self, body: Any, episode: Episode | None, session_id: str | None) -> dict[str, Any]:
        if not isinstance(body, dict):
            return _rpc(error=(-32600, "Invalid request: params must be an object"))
        method, rid, params = body.get("method"), body.get("id"), body.get("params") or {}
        if not isinstance(params, dict):
            return _rpc(error=(-32602, "Params must be an object"), request_id=rid)
        if method == "openenv/session/create":
            if session_id is not None:
                return _rpc({"session_id": session_id}, request_id=rid)
            try:
                new_id, _ = self.sessions.create()
            except _CapacityError as exc:
                return _rpc(error=(-32000, str(exc)), request_id=rid,
                            data={"active_sessions": exc.active, "max_sessions": exc.maximum})
            return _rpc({"session_id": new_id}, request_id=rid)
        if method == "openenv/session/close":
            target = params.get("session_id")
            if not target:
                return _rpc(error=(-32602, "Invalid params - 'session_id' is required"), request_id=rid)
            if target == session_id:
                return _rpc(error=(-32600, "Cannot close active WebSocket-managed session via MCP method"),
                            request_id=rid)
            if not self.sessions.close(target):
                return _rpc(error=(-32602, f"Unknown session_id: {target}"), request_id=rid)
            return _rpc({"session_id": target, "closed": True}, request_id=rid)
        if method not in ("tools/list", "tools/call"):
            return _rpc(error=(-32601, f"Method not found: {method}"), request_id=rid)
        if episode is None and params.get("session_id"):
            episode = self.sessions.get(str(params["session_id"]))
            if episode is None:
                return _rpc(error=(-32602, f"Unknown session_id: {params['session_id']}"), request_id=rid)
        if method == "tools/list":
            return _rpc({"tools": openenv_tools(self.config)}, request_id=rid)
        name = params.get("name")
        if not name:
            return _rpc(error=(-32602, "Missing 'name' in params"), request_id=rid)
        if episode is None:
            return _rpc(error=(-32603, "tools/call needs a session (openenv/session/create): the session is the "
                                       "rollout"), request_id=rid)
        try:
            observation = await episode.step({"type": "call_tool", "tool_name": name,
                                              "arguments": params.get("arguments") or {}})
        except ProtocolError as exc:
            return _rpc(error=(-32603, str(exc)), request_id=rid)
        # OpenEnv answers with the CallToolObservation's model_dump (fields + done/reward/metadata)
        return _rpc({**observation["observation"], "done": observation["done"], "reward": observation["reward"]},
                    request_id=rid)

    # -- stateless HTTP endpoints ----------------------------------------------------
    async def reset(self, request: Request) -> JSONResponse:
        data = await _json_body(request)
        try:
            return JSONResponse(await Episode(self.config).reset(data if isinstance(data, dict) else {}))
        except ProtocolError as exc:
            return JSONResponse({"detail": str(exc)}, status_code=422)

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


async def _json_body(request: Request) -> Any:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}


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
