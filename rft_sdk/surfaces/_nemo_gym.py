"""The NeMo Gym surface: a ``ToolServer`` as an NVIDIA NeMo Gym resources server (``docs/nemo_gym.md``).

Speaks the resources-server contract of ``nemo-gym`` 0.7.0 (``SimpleResourcesServer`` in
``nemo_gym/base_resources_server.py``), at the server's root, because NeMo Gym's
``ServerClient`` addresses a server as ``http://{host}:{port}`` and its agents call
``POST /{tool_name}`` there:

* ``POST /seed_session``: starts a rollout (a fresh ``trace_id``) and sets the session
  cookie ``rft_nemo_gym_session`` (NeMo Gym's agents and Environment Servers carry a
  server's cookies through the rollout); both seed bodies are accepted (an Agent's
  legacy row, an Environment Server's ``ResourcesSeedSessionRequest``).
* ``POST /{tool_name}``: the JSON arguments object as the body; one hosted
  ``POST /tools/{name}`` of the session's ``trace_id`` and item, the body's text sent
  verbatim (so it is validated, recorded and limited exactly like a hosted call). The
  answer's body is what the model sees: the hosted ``output``, or the hosted error body
  with the hosted status (NeMo Gym's agents show a resources server's error answers to
  the model).
* ``POST /verify``: the grader's score of the session's whole trajectory
  (:func:`~._nemo_gym_session.verify_answer`); ``POST /close_session``,
  ``POST /aggregate_metrics``, ``GET /reverify_mode`` (``"unsupported"``: the score
  depends on the session's state). The same routes answer under NeMo Gym's
  ``/ng-rollout/{rollout_id}`` prefix (its observability mode).

Why not NeMo Gym's own server class: ``nemo-gym`` needs Python >= 3.13.14, Ray, MLflow and
``mcp<2``; this surface needs no extra and runs beside every other surface. Its contract is
tested with NeMo Gym's own agent, rollout collection and session-conformance check
(``tests/surfaces/test_nemo_gym.py``).

Credentials: NeMo Gym's servers call each other without any (its ``ServerClient`` sends
cookies only), so a server with ``RFT_AUTH_TOKENS`` refuses them; serve this surface on a
network only NeMo Gym reaches, or let ``rft nemo-gym config --app`` have NeMo Gym start it.
Sessions live in one process: serve this surface with one worker (or sticky sessions).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Mount, Route
from starlette.types import Scope

from .._wire._endpoint import EndpointError, error_body, json_response
from .._wire._json import encode_json, loads_strict
from .._wire._read import read_body
from ..protocol import BODY_TIMEOUT_S, MAX_BODY_BYTES
from ._hosted import HostedClient, RolloutDiscardedError
from ._nemo_gym_session import SeedError, Sessions, aggregate_metrics, verify_answer
from ._seam import SurfaceContext, SurfaceMount

__all__ = ["COOKIE", "RESERVED", "NeMoGymSurface"]

_ENV = "RFT_NEMO_GYM_"
#: The session cookie (its value: an unguessable token naming one rollout).
COOKIE = "rft_nemo_gym_session"
#: Single-segment paths that are not tools: NeMo Gym's routes and the hosted ones.
RESERVED = frozenset({"seed_session", "close_session", "verify", "aggregate_metrics", "reverify_mode", "ng-rollout",
                      "grade", "tools", "healthz", "readyz", "metrics", "mcp", "openenv"})


class _ToolRoute(Route):
    """``POST /{name}`` for any name but :data:`RESERVED` (those fall through to the other routes)."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, child = super().matches(scope)
        if match is not Match.NONE and child.get("path_params", {}).get("name") in RESERVED:
            return Match.NONE, {}
        return match, child


class _TooLarge(Exception):
    pass


async def _read(request: Request, limit: int) -> bytes:
    """The body by the front door's reader (``read_body``: a body timeout, 408; drained 413s), as ``_TooLarge``
    over ``limit``."""
    try:
        return await read_body(request, limit, BODY_TIMEOUT_S)
    except EndpointError as exc:
        if exc.status == 413:
            raise _TooLarge from None
        raise


def _error(status: int, code: str, message: str) -> Response:
    return json_response(encode_json(error_body(code, message)), status)


class NeMoGymSurface:
    """The ``"nemo_gym"`` surface (see the module docstring).

    Args:
        grader: grader name for ``/verify`` (default ``$RFT_NEMO_GYM_GRADER``, else the server's default).
        max_sessions: open sessions at most (default ``$RFT_NEMO_GYM_MAX_SESSIONS`` or 4096); one
            more seed is answered 503 ``capacity_reached``.
        session_timeout_s: seconds a session may stay idle before it expires (default
            ``$RFT_NEMO_GYM_SESSION_TIMEOUT_S`` or 3600); a later ``/verify`` of it is masked
            (``failure_kind="session_expired"``).
        max_body_bytes: largest ``/verify`` body read (default 16 MB: it carries the whole rollout);
            ``/seed_session`` and tool bodies are held to the hosted limit (``MAX_BODY_BYTES``, 1 MB: the
            item rides on every hosted call). Larger bodies are answered 413.
        max_session_bytes: the memory budget of all open sessions, bytes (default
            ``$RFT_NEMO_GYM_MAX_SESSION_BYTES`` or 256 MiB): each session is charged its item's compact JSON
            (which is what it keeps) plus 4 KiB; a seed past the budget is answered 503 ``capacity_reached``.

    Raises:
        ValueError: ``max_sessions`` or ``session_timeout_s`` not positive, or (at mount) a
            tool named like one of :data:`RESERVED`.
    """

    name = "nemo_gym"

    def __init__(self, *, grader: str | None = None, max_sessions: int | None = None,
                 session_timeout_s: float | None = None, max_body_bytes: int = 16_000_000,
                 max_session_bytes: int | None = None) -> None:
        self.grader = grader or os.environ.get(_ENV + "GRADER") or None
        self.max_sessions = int(max_sessions if max_sessions is not None
                                else os.environ.get(_ENV + "MAX_SESSIONS") or 4096)
        self.session_timeout_s = float(session_timeout_s if session_timeout_s is not None
                                       else os.environ.get(_ENV + "SESSION_TIMEOUT_S") or 3600.0)
        if self.max_sessions < 1 or self.session_timeout_s <= 0:
            raise ValueError(f"max_sessions and session_timeout_s must be positive, got {self.max_sessions}, "
                             f"{self.session_timeout_s}")
        self.max_body_bytes = int(max_body_bytes)
        self.max_session_bytes = int(max_session_bytes if max_session_bytes is not None
                                     else os.environ.get(_ENV + "MAX_SESSION_BYTES") or 256 * 2**20)
        if self.max_session_bytes < 1:
            raise ValueError(f"max_session_bytes must be positive, got {self.max_session_bytes}")

    def mount(self, context: SurfaceContext) -> SurfaceMount:
        """Routes at the root (and under ``/ng-rollout/{rollout_id}``), and a lifespan reaping idle sessions."""
        clash = {t["function"]["name"] for t in context.tools()} & RESERVED
        if clash:
            raise ValueError(f"tools {sorted(clash)} clash with NeMo Gym's resources-server routes or the hosted "
                             "routes; rename them to serve the nemo_gym surface")
        client = context.hosted_client()
        sessions = Sessions(self.max_sessions, self.session_timeout_s, max_bytes=self.max_session_bytes)
        handlers = _Handlers(client, sessions, self.grader, self.max_body_bytes)
        routes = handlers.routes()

        @contextlib.asynccontextmanager
        async def lifespan() -> AsyncIterator[None]:
            async def reap() -> None:
                while True:
                    await asyncio.sleep(min(max(self.session_timeout_s / 4, 1.0), 60.0))
                    sessions.reap()

            reaper = asyncio.create_task(reap())
            try:
                yield
            finally:
                reaper.cancel()
                await client.aclose()

        return SurfaceMount([*routes, Mount("/ng-rollout/{rollout_id}", routes=routes)], lifespan)


class _Handlers:
    """The endpoints of one mounted surface."""

    def __init__(self, client: HostedClient, sessions: Sessions, grader: str | None, limit: int) -> None:
        self.client, self.sessions, self.grader, self.limit = client, sessions, grader, limit

    def routes(self) -> list[BaseRoute]:
        return [Route("/seed_session", self.seed, methods=["POST"]),
                Route("/close_session", self.close, methods=["POST"]),
                Route("/verify", self.verify, methods=["POST"]),
                Route("/aggregate_metrics", self.aggregate, methods=["POST"]),
                Route("/reverify_mode", self.reverify_mode, methods=["GET"]),
                _ToolRoute("/{name}", self.tool, methods=["POST"])]

    async def _object(self, request: Request, limit: int = MAX_BODY_BYTES) -> dict[str, Any] | Response:
        try:
            raw = await _read(request, limit)
            body = loads_strict(raw) if raw.strip() else {}  # the pipeline's one decoding rule
        except _TooLarge:
            return _error(413, "body_too_large", f"request body over {limit} bytes")
        except ValueError as exc:  # not strict JSON, invalid bytes, a lone surrogate, too deep
            return _error(400, "invalid_json", f"the body is not JSON: {exc}")
        if not isinstance(body, dict):
            return _error(422, "invalid_request", "the body must be a JSON object")
        return body

    async def seed(self, request: Request) -> Response:
        body = await self._object(request)
        if isinstance(body, Response):
            return body
        try:
            cookie, _, answer = self.sessions.seed(body)
        except SeedError as exc:
            return _error(exc.status, exc.code, str(exc))
        response = json_response(encode_json(answer))
        response.set_cookie(COOKIE, cookie, httponly=True, samesite="lax")
        return response

    async def close(self, request: Request) -> Response:
        body = await self._object(request)
        if isinstance(body, Response):
            return body
        try:
            return json_response(encode_json(self.sessions.close(body)))
        except SeedError as exc:
            return _error(exc.status, exc.code, str(exc))

    async def verify(self, request: Request) -> Response:
        body = await self._object(request, self.limit)
        if isinstance(body, Response):
            return body
        cookie = request.cookies.get(COOKIE)
        answer = await verify_answer(self.client, self.sessions.get(cookie), body, self.grader,
                                     expired=self.sessions.was_expired(cookie))
        return json_response(encode_json(answer))

    async def aggregate(self, request: Request) -> Response:
        body = await self._object(request, self.limit)
        if isinstance(body, Response):
            return body
        responses = body.get("verify_responses")
        if not isinstance(responses, list):
            return _error(422, "invalid_request", "an AggregateMetricsRequest is {verify_responses: [...]}")
        return json_response(encode_json(aggregate_metrics(responses)))

    async def reverify_mode(self, request: Request) -> Response:
        return json_response(encode_json("unsupported"))

    async def tool(self, request: Request) -> Response:
        name = request.path_params["name"]
        cookie = request.cookies.get(COOKIE)
        session = self.sessions.get(cookie)
        if session is None:
            code = "session_expired" if self.sessions.was_expired(cookie) else "no_session"
            return _error(400, code, f"no live NeMo Gym session for tool {name!r}: POST /seed_session first and send "
                                     f"its {COOKIE} cookie")
        try:
            # verbatim: invalid bytes are kept (as lone surrogates) for the pipeline's decoding rule to refuse
            raw = (await _read(request, MAX_BODY_BYTES)).decode("utf-8", errors="surrogateescape")
        except _TooLarge:
            return _error(413, "body_too_large", f"tool arguments over {MAX_BODY_BYTES} bytes")
        try:
            answer = await self.client.call_tool(session.trace_id, name, raw if raw.strip() else "{}", session.item)
        except RolloutDiscardedError as exc:
            session.discarded = exc
            return _error(502, "rollout_discarded", str(exc))
        if answer.ok:
            text = answer.model_text
            try:
                json.loads(text)
                media = "application/json"
            except ValueError:
                media = "text/plain; charset=utf-8"
            return Response(text.encode("utf-8", errors="replace"), 200, media_type=media)
        return json_response(answer.model_text.encode("utf-8", errors="replace"), answer.status)
