"""``ToolServer``: the ASGI app serving tools and graders over the hosted protocol.

Routes (docs/ARCHITECTURE.md): ``POST /tools/{name}``, ``POST /tools`` (one URL for
every tool, dispatched on the body's ``name``: Azure AI Foundry's samples),
``GET /tools``, ``GET /healthz`` (liveness, never authenticated), ``GET /readyz``
(readiness: the store, the rollout database and the user's checks, never authenticated), ``POST /grade``,
``POST /grade/{name}``, ``POST /grade/s/<secret>[/{name}]`` (grader for a
service that cannot send headers), ``GET /metrics`` (Prometheus text; JSON with
``?format=json``, docs/observability.md), ``GET /openapi.json`` (the routes above with every
tool's and grader's schemas, OpenAPI 3.1).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator, Callable, Collection, Iterable
from typing import Any, TypeVar, overload

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from .._db import RolloutDatabase
from .._definitions._grading import GraderDefinition, build_grader, get_grader_definition, marked_grader
from .._definitions._rollout import Rollout
from .._definitions._tool import ToolDefinition, build_definition, get_tool_definition
from .._stores import RolloutStore, default_store
from .._wire._body import parse_model
from .._wire._endpoint import EndpointError, exception_handlers, json_response
from .._wire._hosted_body import decode_call, decode_request, trace_id_hint
from .._wire._item_cache import ItemCache
from .._wire._json import encode_json
from .._wire._read import read_body
from ..exceptions import GraderDefinitionError, StoreError, ToolDefinitionError
from ..protocol import (
    BODY_TIMEOUT_S,
    END_STATE_HEADER,
    GRADE_DETAILS_HEADER,
    MAX_BODY_BYTES,
    QUEUE_TIMEOUT_S,
    QUEUE_WAIT_HEADER,
    STATE_CHANGED_HEADER,
    GradeRequest,
    ToolCallRequest,
)
from ..surfaces import HOSTED, SURFACES_ENV_VAR, Surface, SurfaceContext, available_surfaces, compose, load_surface
from ._admission import Admission, client_key
from ._auth import AUTH_ENV_VAR, GRADER_SECRET_ENV_VAR, AuthMiddleware, BearerAuth, check_grader_secret, is_loopback
from ._calls import CallOutcome, execute_stateless_call, execute_tool_call, run_tool
from ._deadlines import first_byte_timeout_s
from ._export import ExportMixin
from ._grade_call import GradeOutcome, execute_grade
from ._metrics import Metrics
from ._ready import ExposureWatch, Readiness, ReadinessCheck

__all__ = ["SURFACES_ENV_VAR", "ToolServer"]

logger = logging.getLogger("rft_sdk")

#: A decorated function's own type: ``@server.tool`` and ``@server.grader`` return it unchanged.
F = TypeVar("F", bound=Callable[..., Any])


class ToolServer(ExportMixin):
    """An ASGI app serving tool and grader endpoints with per-rollout state.

    Args:
        tools: functions (plain or ``@tool``-decorated) to serve.
        graders: functions (plain or ``@grader``-decorated) to serve.
        auth_tokens: accepted bearer tokens (also read from ``$RFT_AUTH_TOKENS``,
            comma-separated); none at all disables auth.
        store: rollout store; default ``store_from_url($RFT_STORE_URL)`` (``memory://``,
            ``sqlite:///path``, ``redis://host:port/db``, ``rediss://``), else ``MemoryStore()``.
        body_limit: maximum request body, bytes (default ``protocol.MAX_BODY_BYTES``, the hosted 1 MB).
        body_timeout_s: seconds a request body may go without a byte (408 after; before its first
            byte the first-byte deadline of ``rft serve``, 120 s, when longer; 600 s in all; ``None``:
            no limit). See ``rft_sdk._wire._read.read_body``.
        grade_retention_s: seconds a rollout's state is kept after a
            successful grade (0 releases it at once; a retried identical grade
            request still gets the recorded score).
        auth_env_var: environment variable with extra tokens (``None``: ignore the
            environment, also for ``grader_secret``).
        grader_secret: serve the graders also at ``POST /grade/s/<grader_secret>[/{name}]``
            without any header (at least 16 URL-safe characters; default
            ``$RFT_GRADER_SECRET``). For a grader that cannot send auth headers
            (Azure's endpoint grader); exported by ``job_config``.
        response_limit: largest tool answer, bytes (default ``protocol.MAX_BODY_BYTES``).
            A larger output reaches the model as a 413 error, and is recorded as such.
        graded_tombstone_s: seconds a graded ``trace_id`` stays refused for new tool
            calls (409 ``already_graded``), so a late or retried call never starts a
            fresh, never-graded rollout (default one hour).
        surfaces: which surfaces this deployment exposes (``docs/surfaces.md``): names —
            ``"hosted"`` (the hosted RFT routes), ``"mcp"`` (MCP streamable HTTP at ``/mcp``,
            needs ``rft-sdk[mcp]``), ``"openenv"`` (an OpenEnv environment at ``/openenv``),
            or any surface a package declares — and/or surface objects (e.g.
            ``OpenEnvSurface(dataset=...)``); default ``$RFT_SURFACES`` (comma-separated) or
            ``("hosted",)``. The hosted routes always answer in process (every surface's
            calls go through them); they are exposed over HTTP only with ``"hosted"``.
        db: a database per rollout cloned from a template (``SQLiteDatabase``,
            ``PostgresDatabase``): tools get it as ``rollout.db``, graders as
            ``ctx.db``; started by the app's lifespan (or the first call),
            dropped per rollout at its grade or after its TTL (docs/database.md).
        admission: how tool calls and grades are admitted in a burst (``rft_sdk.Admission``:
            requests run at once, the bound on a request's wait before 503 with
            ``Retry-After``, per-client quota; docs/performance.md, "A whole batch at once");
            default ``Admission()``: 1,000 at once, 60 s, 16,384 waiting per client.

    Raises:
        ToolDefinitionError / GraderDefinitionError: invalid or duplicate names.
        ValueError: unknown or no ``surfaces``.
        RFTError: a surface asked for without its extra installed (names the ``pip install``).

    Usage: ``uvicorn app:server`` or ``Starlette(routes=[Mount("/rft", server)])``.

    Attributes:
        check_store_at_startup: when True, ASGI lifespan startup fails (the server
            exits) if the store does not answer; ``rft serve`` sets it.
    """

    check_store_at_startup: bool = False

    def __init__(
        self,
        tools: Iterable[Callable[..., Any]] = (),
        graders: Iterable[Callable[..., Any]] = (),
        *,
        auth_tokens: Iterable[str] | None = None,
        store: RolloutStore | None = None,
        body_limit: int = MAX_BODY_BYTES,
        body_timeout_s: float | None = BODY_TIMEOUT_S,
        grade_retention_s: float = 0.0,
        auth_env_var: str | None = AUTH_ENV_VAR,
        grader_secret: str | None = None,
        response_limit: int = MAX_BODY_BYTES,
        surfaces: Collection[str | Surface] | None = None,
        graded_tombstone_s: float = 3600.0,
        db: RolloutDatabase | None = None,
        admission: Admission | None = None,
    ) -> None:
        self.store: RolloutStore = store if store is not None else default_store()
        self.admission = admission if admission is not None else Admission()
        self.db = db
        self.body_limit = int(body_limit)
        self.body_timeout_s = body_timeout_s
        # the wait for a body's first byte: the first-byte deadline in force (rft serve --first-byte-timeout-s)
        self._body_start_s = first_byte_timeout_s()
        self.grade_retention_s = float(grade_retention_s)
        self.graded_tombstone_s = float(graded_tombstone_s)
        self.response_limit = int(response_limit)
        if grader_secret is None and auth_env_var is not None:
            grader_secret = os.environ.get(GRADER_SECRET_ENV_VAR)
        self._grader_secret = check_grader_secret(grader_secret)
        self.metrics_state = Metrics()
        self.items = ItemCache()  # the item bytes of live rollouts, so later calls skip decoding them
        self.readiness = Readiness(self.store)
        if db is not None:  # GET /readyz reads the rollout database too (issue 36)
            self.readiness.builtin["database"] = db.aping
        self._exposure = ExposureWatch(self.exposure_warning)
        self._startup_refusal: str | None = None  # why the rollout database did not start (_core_lifespan)
        self._auth = BearerAuth(auth_tokens, env_var=auth_env_var)
        self._tools: dict[str, ToolDefinition] = {}
        self._graders: dict[str, GraderDefinition] = {}
        self._default_grader: str | None = None
        for fn in tools:
            self.add_tool(fn)
        for fn in graders:
            self.add_grader(fn)
        self._app: ASGIApp = Starlette(  # the hosted routes: the one pipeline every surface calls
            routes=[
                Route("/tools/{name}", self._call_tool, methods=["POST"]),  # first: the hot path (one match)
                Route("/healthz", self._healthz, methods=["GET"]),
                Route("/readyz", self._readyz, methods=["GET"]),
                Route("/tools", self._list_tools, methods=["GET"]),
                Route("/tools", self._call_tool, methods=["POST"]),
                Route("/grade", self._grade, methods=["POST"]),
                Route("/grade/{name}", self._grade, methods=["POST"]),
                Route("/grade/s/{secret}", self._grade, methods=["POST"]),  # secret checked by AuthMiddleware
                Route("/grade/s/{secret}/{name}", self._grade, methods=["POST"]),
                Route("/metrics", self._metrics, methods=["GET"]),
                Route("/openapi.json", self._openapi, methods=["GET"]),
            ],
            exception_handlers=exception_handlers(),  # every non-2xx is JSON, routes' 404/405 included
            lifespan=lambda app: self._core_lifespan(),
        )
        if db is not None:
            db.attach(self._replay_tool, lambda name: self._tools[name].is_async if name in self._tools else False,
                      self.metrics_state.registry)
        self._app.state.metrics = self.metrics_state
        # Surfaces (rft_sdk/surfaces, docs/surfaces.md): the hosted app above answers in process; each
        # surface adds routes in front of it; one AuthMiddleware guards all of them (websockets too).
        self._pipeline = self._app
        names, objects = _check_surfaces(surfaces if surfaces is not None
                                         else os.environ.get(SURFACES_ENV_VAR, HOSTED).split(","))
        self.surfaces = names
        mounts = [surface.mount(self.surface_context()) for surface in objects]
        self._app = self.protect(compose(self._pipeline, mounts, expose_hosted=HOSTED in names,
                                         fallback=[Route("/healthz", self._healthz, methods=["GET"]),
                                                   Route("/readyz", self._readyz, methods=["GET"])],
                                         exception_handlers=exception_handlers(), lifespan=self._core_lifespan))

    def protect(self, app: ASGIApp) -> ASGIApp:
        """``app`` behind this server's ``AuthMiddleware`` (its tokens, headers and grader secret)."""
        return AuthMiddleware(app, auth=self._auth, metrics=self.metrics_state, grader_secret=self._grader_secret)

    def surface_context(self) -> SurfaceContext:
        """What a surface gets from this server (``rft_sdk.surfaces.SurfaceContext``): the hosted
        routes in process, ``protect``, the tools (read when called) and graders."""
        return SurfaceContext(pipeline=self._pipeline, protect=self.protect,
                              tools=lambda: self.dataset_tools("chat_completions"), graders=sorted(self._graders),
                              default_grader=self._default_grader)

    # -- registration ---------------------------------------------------------------
    @overload
    def tool(self, fn: F, /) -> F:
        """Bare ``@server.tool``: returns ``fn`` itself, so its signature stays typed."""
    @overload
    def tool(self, fn: None = None, /, *, name: str | None = None, description: str | None = None,
             blocking: bool = True, timeout_s: float | None = None, max_concurrency: int | None = None,
             queue_timeout_s: float | None = QUEUE_TIMEOUT_S) -> Callable[[F], F]:
        """``@server.tool(name=..., ...)``: returns a decorator that returns ``fn`` itself."""

    def tool(self, fn: Callable[..., Any] | None = None, /, *, name: str | None = None,
             description: str | None = None, blocking: bool = True, timeout_s: float | None = None,
             max_concurrency: int | None = None, queue_timeout_s: float | None = QUEUE_TIMEOUT_S,
             writes: bool | None = None) -> Any:
        """Decorator registering a tool (same options as :func:`rft_sdk.tool`); returns ``fn``
        unchanged, typed as itself (a type checker and an IDE keep its signature)."""
        def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
            if (name is None and description is None and blocking and timeout_s is None and max_concurrency is None
                    and queue_timeout_s == QUEUE_TIMEOUT_S and writes is None):
                self.add_tool(func)
            else:
                self._register_tool(build_definition(func, name=name, description=description, blocking=blocking,
                                                     timeout_s=timeout_s, max_concurrency=max_concurrency,
                                                     queue_timeout_s=queue_timeout_s, writes=writes))
            return func
        return decorate(fn) if fn is not None else decorate

    def add_tool(self, fn: Callable[..., Any]) -> None:
        """Register a function as a tool. Raises ``ToolDefinitionError`` on a duplicate name."""
        self._register_tool(get_tool_definition(fn))

    def _register_tool(self, definition: ToolDefinition) -> None:
        if definition.name in self._tools:
            raise ToolDefinitionError(f"duplicate tool name {definition.name!r}")
        self._tools[definition.name] = definition

    @overload
    def grader(self, fn: F, /) -> F:
        """Bare ``@server.grader``: returns ``fn`` itself, so its signature stays typed."""
    @overload
    def grader(self, fn: None = None, /, *, name: str | None = None,
               score_range: tuple[float, float] | None = None, default: bool = False) -> Callable[[F], F]:
        """``@server.grader(name=..., ...)``: returns a decorator that returns ``fn`` itself."""

    def grader(self, fn: Callable[..., Any] | None = None, /, *, name: str | None = None,
               score_range: tuple[float, float] | None = None, default: bool = False) -> Any:
        """Decorator registering a grader (same options as :func:`rft_sdk.grader`); returns ``fn``
        unchanged, typed as itself."""
        def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
            if name is None and score_range is None and not default:
                self.add_grader(func)
            else:  # over an inner @grader(...): its keywords stand where these give none
                inner = marked_grader(func)
                self._register_grader(build_grader(
                    func, name=name if name is not None or inner is None else inner.name,
                    score_range=score_range if score_range is not None or inner is None else inner.score_range,
                    default=default or (inner is not None and inner.default)))
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

    def readiness_check(self, fn: ReadinessCheck | None = None, /, *, name: str | None = None) -> Any:
        """Decorator registering a readiness check of ``GET /readyz`` (beside the store's); returns ``fn``.

        The check is a sync or async function without arguments; the server is ready
        while every check returns anything but ``False`` without raising, within
        5 seconds. E.g. ``@server.readiness_check`` over ``def db() -> bool: ...``.

        Raises:
            ValueError: ``name`` (default: the function's name) is ``"store"`` or taken.
        """
        def decorate(func: ReadinessCheck) -> ReadinessCheck:
            self.readiness.add(name or str(getattr(func, "__name__", "check")), func)
            return func
        return decorate(fn) if fn is not None else decorate

    async def startup_problem(self) -> str | None:
        """Why this server should not start (its store does not answer), or ``None``."""
        problem = await self.readiness.store_problem()
        if problem is None:
            return None
        return (f"the rollout store {type(self.store).__name__} does not answer ({problem}); check RFT_STORE_URL "
                "(or ToolServer(store=...)) and that the store is running")

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

    def exposure_warning(self, host: str) -> str | None:
        """A loud warning when serving on ``host`` leaves routes unprotected, else ``None``.

        Unprotected: no token configured while ``host`` is reachable from other
        machines (not loopback). The server logs it (WARNING) at startup, from the
        address it binds (ASGI lifespan; see ``rft_sdk._server._ready``).
        """
        if self._auth.enabled or is_loopback(host):
            return None
        graders = " (graders too; or serve them behind grader_secret)" if self._graders else ""
        return (f"WARNING: serving {len(self._tools)} tool(s){graders} on {host} WITHOUT authentication: anyone "
                f"who can reach it can call them. Set {AUTH_ENV_VAR} (or ToolServer(auth_tokens=...)).")

    @property
    def metrics(self) -> dict[str, Any]:
        """Snapshot of counters, see :class:`rft_sdk._server._metrics.Metrics` (JSON shape)."""
        return self.metrics_state.snapshot(self.store.stats())

    # -- ASGI: the request path, top to bottom, each step in one place (docs/ARCHITECTURE.md) ----------
    # AuthMiddleware (401) -> route -> read_body (_read: 413/408) -> admission (_admission: 503) ->
    # decode (_hosted_body: 400) -> parse_model (_body: 422) -> execute_* (_calls / _grade_call: the
    # rollout loaded under its lock, the tool or grader, the answer encoded and recorded) -> the metrics
    # recorded once (_metrics) -> the response. Any EndpointError / StoreError on the way is answered,
    # encoded and counted once, by error_response (_endpoint).
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._serve_lifespan(scope, receive, send)
            return
        if not self._exposure.decided:  # no bind address known from the lifespan: judge by the request
            self._exposure.on_request(scope)
        await self._app(scope, receive, send)

    async def _serve_lifespan(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app's lifespan (which runs :meth:`_core_lifespan`), plus: the exposure warning
        from the bind address; a startup that fails, in one line naming the reason and the fix,
        when the store does not answer (with ``check_store_at_startup``) or refuses its backing
        storage (``RolloutStore.startup``: e.g. ``RedisStore`` and a Redis without persistence), or
        when the rollout database cannot start (e.g. ``RFT_DB_DIR`` not writable)."""
        self._exposure.on_lifespan(receive)
        self._startup_refusal = None
        refused = False

        async def checked_send(message: Any) -> None:
            nonlocal refused
            if refused:  # the app's own report of the unwinding below: already said, in one line
                return
            if message["type"] == "lifespan.startup.failed" and self._startup_refusal is not None:
                refused = True  # the rollout database refused (_core_lifespan): its line, not a traceback
                await send({"type": "lifespan.startup.failed", "message": f"rft_sdk: {self._startup_refusal}"})
                return
            if message["type"] == "lifespan.startup.complete":
                problem = await self.startup_problem() if self.check_store_at_startup else None
                if problem is None:
                    try:
                        await self.store.startup()
                    except StoreError as exc:
                        problem = str(exc)
                if problem is not None:
                    refused = True
                    self._startup_refusal = problem  # what a TestClient raises (rft_sdk.testing)
                    await send({"type": "lifespan.startup.failed", "message": f"rft_sdk: {problem}"})
                    raise _StartupRefused(problem)
            await send(message)

        try:
            await self._app(scope, receive, checked_send)
        except _StartupRefused:
            return  # the lifespan ends here: the server exits without a traceback

    async def _read_raw(self, request: Request) -> bytes:
        """The body's bytes (408/413 raised as ``EndpointError``)."""
        return await read_body(request, self.body_limit, self.body_timeout_s, self._body_start_s)

    def _who(self, request: Request, raw: bytes) -> Callable[[], tuple[str, bool]]:
        """For :meth:`Admission.slot`: the request's client, and whether its rollout is in flight here
        (its ``trace_id`` has an item in :attr:`items`); computed only when the request has to wait."""
        def who() -> tuple[str, bool]:
            hint = trace_id_hint(raw)
            return client_key(request), hint is not None and self.items.get(hint) is not None
        return who

    @staticmethod
    def _echo(request: Request, data: dict[str, Any]) -> None:
        """Keep the request's ``call_id``/``id`` in ``request.state.echo`` for every answer."""
        request.state.echo = {key: value for key in ("call_id", "id") if isinstance(value := data.get(key), str)}

    @contextlib.asynccontextmanager
    async def _core_lifespan(self) -> AsyncIterator[None]:
        """The server's own lifespan, run by the outermost app (surfaces or not): the rollout
        database starts (template, pool, sweep) before serving and stops after. (The store's
        own start-up check runs in :meth:`_serve_lifespan`, where a refusal is one clean line.)"""
        if self.db is not None:
            try:
                await self.db.astart()
            except Exception as exc:  # one line with the fix instead of a 40-line traceback (issue 36)
                problem = (f"the rollout database {type(self.db).__name__}(name={self.db.name!r}) did not start: "
                           f"{type(exc).__name__}: {exc}; {self.db.startup_hint()}")
                logger.debug("rollout database start failed", exc_info=True)
                self._startup_refusal = problem
                raise _StartupRefused(problem) from exc
        try:
            yield
        finally:
            if self.db is not None:
                await self.db.aclose()

    async def _replay_tool(self, name: str, arguments: dict[str, Any], conn: Any, item: dict[str, Any],
                           state: dict[str, Any]) -> str:
        """Run tool ``name`` on database connection ``conn`` (a gold replay of ``ctx.db``)."""
        return await run_tool(self._tool_named(name), arguments, Rollout("", item, state, (), None, conn))

    async def _healthz(self, request: Request) -> Response:
        return json_response(encode_json({"status": "ok", "tools": len(self._tools), "graders": len(self._graders)}))

    async def _readyz(self, request: Request) -> Response:
        ok, checks = await self.readiness.run()
        return json_response(encode_json({"status": "ready" if ok else "unavailable", "checks": checks}),
                             200 if ok else 503)

    def openapi(self) -> dict[str, Any]:
        """The OpenAPI 3.1 document of the hosted routes, built from the registered tools and graders
        (``GET /openapi.json``; ``rft_sdk.surfaces._openapi``)."""
        from .._version import __version__
        from ..surfaces._openapi import openapi_document

        return openapi_document(self._tools, sorted(self._graders), self._default_grader, version=__version__,
                                authenticated=self._auth.enabled)

    async def _openapi(self, request: Request) -> Response:
        return json_response(encode_json(self.openapi()))

    async def _list_tools(self, request: Request) -> Response:
        # "writes": per tool, declared (@tool(writes=...)) or learnt from what its calls changed; null: unknown.
        # "declared": the declaration alone (null: undeclared), for a client that learns from its own calls
        return json_response(encode_json({"tools": self.dataset_tools("chat_completions"),
                                          "graders": sorted(self._graders), "default_grader": self._default_grader,
                                          "writes": {n: t.learned_writes for n, t in self._tools.items()},
                                          "declared": {n: t.writes for n, t in self._tools.items()}}))

    async def _metrics(self, request: Request) -> Response:
        # Prometheus text by default; JSON with ?format=json or Accept: application/json
        body, media_type = self.metrics_state.exposition(request.headers.get("accept"),
                                                         request.query_params.get("format"), self.store.stats())
        return Response(body, media_type=media_type)

    async def _call_tool(self, request: Request) -> Response:
        name = request.path_params.get("name")
        # POST /tools/{name}: unknown names are refused before the body is read
        named_tool = self._tool_named(name) if name is not None else None
        raw = await self._read_raw(request)
        async with self.admission.slot(self._who(request, raw)) as waited:  # queued in a burst (_admission)
            return _queued(await self._run_call(named_tool, request, raw), waited)

    async def _run_call(self, named_tool: ToolDefinition | None, request: Request, raw: bytes) -> Response:
        # decoded once (400), the item's bytes reused (rft_sdk._wire._hosted_body), the dialect told apart
        data, item_json, bare = decode_call(raw, self.items)
        self._echo(request, data)
        outcome = CallOutcome()
        started = time.perf_counter()
        if named_tool is None:  # POST /tools: one URL for every tool, dispatched on the body's "name"
            named = data.get("name")
            if not isinstance(named, str):
                raise EndpointError(422, "invalid_request", "invalid tool call request", counter="bad_requests",
                                    details=[{"field": "name", "problem": "required on POST /tools (the tool name)"}])
            definition = self._tool_named(named)
        else:
            definition = named_tool
            if bare:  # the body is the arguments themselves: one stateless call
                await execute_stateless_call(definition, data, outcome, self.response_limit)
                self.metrics_state.record_events(outcome.events)
                return json_response(outcome.body, outcome.status)
        call = parse_model(ToolCallRequest, data, "invalid tool call request")
        try:
            await execute_tool_call(definition, call, self.store, outcome, self.response_limit, self.db, item_json)
        except BaseException as exc:  # answered by error_response; the call's span records why
            self.metrics_state.record_call(definition.name, data, started, outcome, failure=exc)
            raise
        self.metrics_state.record_call(definition.name, data, started, outcome)
        # what the call changed, decided here rather than by the tool (protocol.STATE_CHANGED_HEADER)
        return json_response(outcome.body, outcome.status, None if outcome.changed is None else
                             {STATE_CHANGED_HEADER: "true" if outcome.changed else "false"})

    def _tool_named(self, name: str) -> ToolDefinition:
        definition = self._tools.get(name)
        if definition is None:
            raise EndpointError(404, "unknown_tool", f"no tool named {name!r}; available: {sorted(self._tools)}",
                                counter="unknown_tool")
        return definition

    async def _grade(self, request: Request) -> Response:
        name = request.path_params.get("name", self._default_grader)
        definition = self._graders.get(name) if name else None
        if definition is None:
            raise EndpointError(404, "unknown_grader", f"no grader named {name!r}; available: "
                                f"{sorted(self._graders)}", counter="unknown_grader")
        raw = await self._read_raw(request)
        async with self.admission.slot(self._who(request, raw)) as waited:  # queued in a burst (_admission)
            return _queued(await self._run_grade(definition, request, raw), waited)

    async def _run_grade(self, definition: GraderDefinition, request: Request, raw: bytes) -> Response:
        data, item_json = decode_request(raw, self.items)
        self._echo(request, data)
        grade_request = parse_model(GradeRequest, data, "invalid grading request")
        outcome = GradeOutcome()
        started = time.perf_counter()
        try:
            await execute_grade(definition, grade_request, data, self.store, outcome, self.grade_retention_s,
                                self.graded_tombstone_s, self.db, item_json,
                                end_state=END_STATE_HEADER in request.headers)
        except BaseException as exc:  # answered by error_response; the grade's span records why
            self.metrics_state.record_grade(definition.name, data, started, None, failure=exc)
            raise
        self.metrics_state.record_grade(definition.name, data, started, outcome)
        if grade_request.trace_id is not None:
            self.items.drop(grade_request.trace_id)  # graded: its item need not be kept for later calls
        headers = {GRADE_DETAILS_HEADER: outcome.header}
        if outcome.end_state is not None:  # asked for by the client (protocol.END_STATE_HEADER)
            headers[END_STATE_HEADER] = outcome.end_state
        return json_response(encode_json({"score": outcome.score}), 200, headers)


def _queued(response: Response, waited_s: float) -> Response:
    """``response``, with :data:`QUEUE_WAIT_HEADER` when the request waited for admission."""
    if waited_s:
        response.headers[QUEUE_WAIT_HEADER] = f"{waited_s:.3f}"
    return response


class _StartupRefused(Exception):
    """Unwinds the app's lifespan after ``lifespan.startup.failed`` was sent."""


def _check_surfaces(surfaces: Iterable[str | Surface]) -> tuple[frozenset[str], list[Surface]]:
    """The names of the chosen surfaces and the surface objects to mount (names loaded lazily).

    Raises:
        ValueError: none chosen, or an unknown name (the message lists the choices).
        RFTError: a surface's extra is not installed.
    """
    objects: list[Surface] = []
    names: set[str] = set()
    for entry in surfaces:
        if isinstance(entry, str):
            name = entry.strip()
            if not name:
                continue
            if name not in available_surfaces():
                raise ValueError(f"surfaces must be a non-empty subset of {sorted(available_surfaces())}, "
                                 f"got unknown {name!r}")
            if name != HOSTED and name not in names:
                objects.append(load_surface(name))
            names.add(name)
        elif isinstance(entry, Surface):
            if entry.name in names:
                raise ValueError(f"surface {entry.name!r} given twice")
            names.add(entry.name)
            objects.append(entry)
        else:
            raise ValueError(f"a surface is a name or a Surface object, got {entry!r}")
    if not names:
        raise ValueError(f"surfaces must be a non-empty subset of {sorted(available_surfaces())}, got none")
    return frozenset(names), objects
