"""``ToolServer``: the ASGI app serving tools and graders over the hosted protocol.

Routes (docs/ARCHITECTURE.md): ``POST /tools/{name}``, ``GET /tools``,
``GET /healthz`` (never authenticated), ``POST /grade``, ``POST /grade/{name}``,
``GET /metrics`` (Prometheus text; JSON with ``?format=json``, docs/observability.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ._auth import AUTH_ENV_VAR, BearerAuth
from ._body import DEFAULT_BODY_LIMIT, DEFAULT_BODY_TIMEOUT_S, BodyError, read_json_body
from ._calls import error_body, execute_tool_call
from ._export import ExportMixin
from ._grade_call import DETAILS_HEADER, encode_details, execute_grade
from ._grading import GraderDefinition, build_grader, get_grader_definition
from ._metrics import Metrics
from ._store import MemoryStore, RolloutStore
from ._tool import ToolDefinition, build_definition, get_tool_definition
from .exceptions import GraderDefinitionError, StoreError, ToolDefinitionError

__all__ = ["ToolServer"]

logger = logging.getLogger("rft_sdk")


class ToolServer(ExportMixin):
    """An ASGI app serving tool and grader endpoints with per-rollout state.

    Args:
        tools: functions (plain or ``@tool``-decorated) to serve.
        graders: functions (plain or ``@grader``-decorated) to serve.
        auth_tokens: accepted bearer tokens (also read from ``$RFT_AUTH_TOKENS``,
            comma-separated); none at all disables auth.
        store: rollout store; default ``MemoryStore(ttl_s=3600, max_rollouts=10_000)``.
        body_limit: maximum request body, bytes (protocol: 1 MB).
        body_timeout_s: seconds a client has to send a whole request body (408 after).
        grade_retention_s: seconds a rollout's state is kept after a
            successful grade (0 releases it at once; a retried identical grade
            request still gets the recorded score).
        auth_env_var: environment variable with extra tokens (``None``: ignore env).

    Raises:
        ToolDefinitionError / GraderDefinitionError: invalid or duplicate names.

    Usage: ``uvicorn app:server`` or ``Starlette(routes=[Mount("/rft", server)])``.
    """

    def __init__(
        self,
        tools: Iterable[Callable[..., Any]] = (),
        graders: Iterable[Callable[..., Any]] = (),
        *,
        auth_tokens: Iterable[str] | None = None,
        store: RolloutStore | None = None,
        body_limit: int = DEFAULT_BODY_LIMIT,
        body_timeout_s: float | None = DEFAULT_BODY_TIMEOUT_S,
        grade_retention_s: float = 0.0,
        auth_env_var: str | None = AUTH_ENV_VAR,
    ) -> None:
        self.store: RolloutStore = store if store is not None else MemoryStore()
        self.body_limit = int(body_limit)
        self.body_timeout_s = body_timeout_s
        self.grade_retention_s = float(grade_retention_s)
        self.metrics_state = Metrics()
        self._auth = BearerAuth(auth_tokens, env_var=auth_env_var)
        self._tools: dict[str, ToolDefinition] = {}
        self._graders: dict[str, GraderDefinition] = {}
        self._default_grader: str | None = None
        for fn in tools:
            self.add_tool(fn)
        for fn in graders:
            self.add_grader(fn)
        self._app = Starlette(routes=[
            Route("/healthz", self._healthz, methods=["GET"]),
            Route("/tools", self._list_tools, methods=["GET"]),
            Route("/tools/{name}", self._call_tool, methods=["POST"]),
            Route("/grade", self._grade, methods=["POST"]),
            Route("/grade/{name}", self._grade, methods=["POST"]),
            Route("/metrics", self._metrics, methods=["GET"]),
        ], exception_handlers={StoreError: self._store_unavailable})

    # -- registration ---------------------------------------------------------------
    def tool(self, fn: Callable[..., Any] | None = None, /, *, name: str | None = None,
             description: str | None = None) -> Any:
        """Decorator registering a tool (same options as :func:`rft_sdk.tool`); returns ``fn``."""
        def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
            if name is None and description is None:
                self.add_tool(func)
            else:
                self._register_tool(build_definition(func, name=name, description=description))
            return func
        return decorate(fn) if fn is not None else decorate

    def add_tool(self, fn: Callable[..., Any]) -> None:
        """Register a function as a tool. Raises ``ToolDefinitionError`` on a duplicate name."""
        self._register_tool(get_tool_definition(fn))

    def _register_tool(self, definition: ToolDefinition) -> None:
        if definition.name in self._tools:
            raise ToolDefinitionError(f"duplicate tool name {definition.name!r}")
        self._tools[definition.name] = definition

    def grader(self, fn: Callable[..., Any] | None = None, /, *, name: str | None = None,
               score_range: tuple[float, float] | None = None, default: bool = False) -> Any:
        """Decorator registering a grader (same options as :func:`rft_sdk.grader`); returns ``fn``."""
        def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
            if name is None and score_range is None and not default:
                self.add_grader(func)
            else:
                self._register_grader(build_grader(func, name=name, score_range=score_range, default=default))
            return func
        return decorate(fn) if fn is not None else decorate

    def add_grader(self, fn: Callable[..., Any]) -> None:
        """Register a grader. Raises ``GraderDefinitionError`` on a duplicate name or two defaults."""
        self._register_grader(get_grader_definition(fn))

    def _register_grader(self, definition: GraderDefinition) -> None:
        if definition.name in self._graders:
            raise GraderDefinitionError(f"duplicate grader name {definition.name!r}")
        if definition.default and self._default_grader and self._graders[self._default_grader].default:
            raise GraderDefinitionError(
                f"graders {self._default_grader!r} and {definition.name!r} are both default=True")
        self._graders[definition.name] = definition
        if self._default_grader is None or definition.default:
            self._default_grader = definition.name

    @property
    def tools(self) -> dict[str, ToolDefinition]:
        """Registered tools by name (a copy)."""
        return dict(self._tools)

    @property
    def graders(self) -> dict[str, GraderDefinition]:
        """Registered graders by name (a copy)."""
        return dict(self._graders)

    @property
    def default_grader(self) -> str | None:
        """Name of the grader serving ``POST /grade`` (``None`` when there is none)."""
        return self._default_grader

    @property
    def metrics(self) -> dict[str, Any]:
        """Snapshot of counters, see :class:`rft_sdk._metrics.Metrics` (JSON shape)."""
        return self.metrics_state.snapshot(self.store.stats())

    # -- ASGI -----------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)

    def _denied(self, request: Request) -> Response | None:
        if self._auth.check(request.headers.get("authorization")):
            return None
        self.metrics_state.incr("auth_failures")
        return JSONResponse(error_body("unauthorized", "unauthorized"), status_code=401,
                            headers={"WWW-Authenticate": "Bearer"})

    async def _read(self, request: Request) -> dict[str, Any] | Response:
        try:
            return await read_json_body(request, self.body_limit, self.body_timeout_s)
        except BodyError as exc:
            self.metrics_state.incr({413: "body_too_large", 408: "body_timeouts"}.get(exc.status, "bad_requests"))
            return JSONResponse(error_body(exc.code, exc.message), status_code=exc.status)

    async def _store_unavailable(self, request: Request, exc: Exception) -> Response:
        # The store failed (lock timeout, database error) before anything was
        # committed: answer 503 so the hosted side retries the call; a call_id
        # that did complete is replayed, not run again, on the retry.
        self.metrics_state.incr("store_errors")
        logger.warning("rollout store unavailable on %s: %s", request.url.path, exc)
        return JSONResponse(error_body("store_unavailable", str(exc)), status_code=503)

    async def _healthz(self, request: Request) -> Response:
        return JSONResponse({"status": "ok", "tools": len(self._tools), "graders": len(self._graders)})

    async def _list_tools(self, request: Request) -> Response:
        if (denied := self._denied(request)) is not None:
            return denied
        return JSONResponse({"tools": self.dataset_tools("chat_completions"),
                             "graders": sorted(self._graders), "default_grader": self._default_grader})

    async def _metrics(self, request: Request) -> Response:
        if (denied := self._denied(request)) is not None:
            return denied
        # observe (#15): Prometheus text by default; JSON with ?format=json or Accept: application/json
        body, media_type = self.metrics_state.exposition(request.headers.get("accept"),
                                                         request.query_params.get("format"), self.store.stats())
        return Response(body, media_type=media_type)

    async def _call_tool(self, request: Request) -> Response:
        if (denied := self._denied(request)) is not None:
            return denied
        name = request.path_params["name"]
        definition = self._tools.get(name)
        if definition is None:
            self.metrics_state.incr("unknown_tool")
            return JSONResponse(error_body("unknown_tool", f"no tool named {name!r}; available: "
                                           f"{sorted(self._tools)}"), status_code=404)
        body = await self._read(request)
        if isinstance(body, Response):
            return body
        with self.metrics_state.observe_call(name, body) as observed:  # observe (#15): span + metrics
            status, payload = await execute_tool_call(definition, body, self.store, self.metrics_state)
            observed.result(status, payload)  # observe (#15)
        return JSONResponse(payload, status_code=status)

    async def _grade(self, request: Request) -> Response:
        if (denied := self._denied(request)) is not None:
            return denied
        name = request.path_params.get("name", self._default_grader)
        definition = self._graders.get(name) if name else None
        if definition is None:
            self.metrics_state.incr("unknown_grader")
            return JSONResponse(error_body("unknown_grader", f"no grader named {name!r}; available: "
                                           f"{sorted(self._graders)}"), status_code=404)
        body = await self._read(request)
        if isinstance(body, Response):
            return body
        with self.metrics_state.observe_grade(definition.name, body) as observed:  # observe (#15): span + metrics
            status, payload, details = await execute_grade(definition, body, self.store, self.metrics_state,
                                                           self.grade_retention_s)
            observed.result(status, payload, details)  # observe (#15)
        headers = {DETAILS_HEADER: encode_details(details)} if details is not None else None
        return JSONResponse(payload, status_code=status, headers=headers)
