"""A tool server as Fireworks RFT's remote rollout server (Eval Protocol's ``RemoteRolloutProcessor`` contract).

::

    python -m rft_sdk.integrations.eval_protocol --url http://127.0.0.1:8000 --dataset train.jsonl --port 3000

EP 0.3.33's contract (``eval_protocol/types/remote_rollout_processor.py``, Fireworks' "Remote
Environment Setup"): ``POST /init`` takes an ``InitRequest`` (``completion_params`` with
``model``, ``messages``, ``tools``, ``model_base_url``, ``metadata`` = ``RolloutMetadata``
``{invocation_id, experiment_id, rollout_id, run_id, row_id}``, ``api_key``) and answers at once;
the rollout runs in the background: the model through ``model_base_url`` (Fireworks' tracing
gateway records each call as the trace), every tool call over the hosted wire to the tool server
(:func:`~._eval_protocol.run_rollout`, a fresh ``trace_id``), the item = the dataset line whose
:func:`~._eval_protocol.row_id_of` is ``metadata.row_id``. Completion is logged with EP's
``FireworksTracingHttpHandler`` (a record carrying ``rollout_id``): ``Status.rollout_finished()`` (or
``rollout_error``) with ``extras={"trace_id"}``, which EP merges into the row's
``execution_metadata.extra``, where :func:`~._eval_protocol.evaluate_row` finds it.
``GET /status?rollout_id=`` answers EP's ``StatusResponse`` (``terminated``, ``status``,
``info`` with the ``trace_id``) for clients that poll the server itself.

Security (docs/eval_protocol.md): the server is authenticated like the tool server (the same token
forms: ``Authorization: Bearer``, ``X-Functions-Key``, ``api-key``; tokens from ``auth_tokens`` and
``$RFT_INIT_AUTH_TOKENS``; without any it refuses to start unless told ``allow_unauthenticated``,
which ``main`` allows on a loopback address only). ``/init`` calls only model URLs on the operator's
allow-list (``model_base_urls``, ``$RFT_INIT_MODEL_URLS``, default Fireworks' tracing gateway and
inference API): another ``model_base_url`` is refused with 422 before anything runs, so the server's own
key (``$FIREWORKS_API_KEY``) never goes to a URL a caller chose. Bodies pass the tool server's front
door: at most ``max_body_bytes`` (413), the body timeout (408), the one decoding rule (400), and a 422
names the fields and problems without echoing the input. Its logs go through the control-character
filter (``rft_sdk._wire._redact.get_logger``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
from eval_protocol import FireworksTracingHttpHandler, InitRequest
from eval_protocol.models import Status
from eval_protocol.types.remote_rollout_processor import StatusResponse
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from .._cli_commands import env_secret
from .._server._auth import AuthMiddleware, BearerAuth, is_loopback
from .._server._metrics import Metrics
from .._wire._body import decode_object
from .._wire._endpoint import exception_handlers
from .._wire._read import read_body
from .._wire._redact import get_logger
from ..protocol import BODY_TIMEOUT_S, MAX_BODY_BYTES
from ..surfaces import HostedClient, RolloutDiscardedError
from ._eval_protocol import _assistant, row_id_of, run_rollout

__all__ = ["DEFAULT_MODEL_URLS", "INIT_AUTH_ENV_VAR", "MODEL_URLS_ENV_VAR", "main", "remote_rollout_app"]

logger = get_logger("rft_sdk.eval_protocol")
_RESERVED_PARAMS = frozenset({"model", "base_url", "api_base", "api_key", "model_kwargs"})


#: Environment variable with the tokens ``/init`` and ``/status`` accept (comma-separated).
INIT_AUTH_ENV_VAR = "RFT_INIT_AUTH_TOKENS"
#: Environment variable with the model base URLs ``/init`` may call (comma-separated prefixes).
MODEL_URLS_ENV_VAR = "RFT_INIT_MODEL_URLS"
#: The default allow-list: Fireworks' tracing gateway (what EP's RemoteRolloutProcessor sends) and inference API.
DEFAULT_MODEL_URLS = ("https://tracing.fireworks.ai/", "https://api.fireworks.ai/inference/v1")


def _url_allowed(url: str, allowed: Sequence[str]) -> bool:
    """Whether ``url`` is under one of the ``allowed`` prefixes: same scheme, host and port, and a path
    that is the prefix's path or below it (``/v1`` allows ``/v1/chat``, never ``/v1x``); no user info."""
    try:
        target = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return False
    if target.scheme not in ("http", "https") or target.userinfo or not target.host:
        return False
    for prefix in allowed:
        base = httpx.URL(prefix)
        root = base.path.rstrip("/")
        if ((target.scheme, target.host, target.port) == (base.scheme, base.host, base.port)
                and (target.path.rstrip("/") == root or target.path.startswith(root + "/"))):
            return True
    return False


def remote_rollout_app(base_url: str, dataset: Sequence[Mapping[str, Any]], *, token: str | None = None,
                       max_turns: int = 30, max_concurrent: int = 256, status_ttl_s: float = 3600.0,
                       tracing_handler: logging.Handler | None = None, auth_tokens: Sequence[str] | None = None,
                       auth_env_var: str | None = INIT_AUTH_ENV_VAR, allow_unauthenticated: bool = False,
                       model_base_urls: Sequence[str] | None = None,
                       max_body_bytes: int = MAX_BODY_BYTES) -> ASGIApp:
    """The ``/init`` + ``/status`` app (see the module docstring), behind ``AuthMiddleware``.

    Args:
        base_url: the tool server (its hosted routes).
        dataset: the hosted dataset lines the rows come from (matched by ``row_id``).
        token: bearer token for the tool server.
        max_turns: model turns per rollout.
        max_concurrent: rollouts running at once (more wait their turn).
        status_ttl_s: seconds a finished rollout's status is kept for ``/status``.
        tracing_handler: where status logs go (default EP's ``FireworksTracingHttpHandler``,
            ``$FW_TRACING_GATEWAY_BASE_URL`` or https://tracing.fireworks.ai).
        auth_tokens: tokens ``/init`` and ``/status`` accept (plus ``$RFT_INIT_AUTH_TOKENS``; ``auth_env_var``
            ``None``: ignore the environment).
        allow_unauthenticated: serve without any token (only for a loopback address or a test).
        model_base_urls: the allow-list of model base URLs (prefixes; default ``$RFT_INIT_MODEL_URLS``,
            else :data:`DEFAULT_MODEL_URLS`); an ``/init`` naming another is answered 422
            ``model_url_not_allowed``; one naming none uses the first.
        max_body_bytes: largest ``/init`` body (default ``protocol.MAX_BODY_BYTES``), 413 past it.

    Raises:
        ValueError: no token configured and not ``allow_unauthenticated``; an empty allow-list.
    """
    auth = BearerAuth(auth_tokens, env_var=auth_env_var)
    if not auth.enabled and not allow_unauthenticated:
        raise ValueError(f"the /init server needs a token: set {INIT_AUTH_ENV_VAR} (or auth_tokens=...), and send "
                         "it as Authorization: Bearer <token>; allow_unauthenticated=True serves it without one")
    allowed = list(model_base_urls if model_base_urls is not None
                   else [u.strip() for u in os.environ.get(MODEL_URLS_ENV_VAR, "").split(",") if u.strip()]
                   or DEFAULT_MODEL_URLS)
    if not allowed:
        raise ValueError(f"the model URL allow-list is empty; set {MODEL_URLS_ENV_VAR}")
    items = {row_id_of(item): dict(item) for item in dataset}
    statuses: dict[str, tuple[float, StatusResponse]] = {}
    tasks: set[asyncio.Task[None]] = set()
    gate = asyncio.Semaphore(max_concurrent)
    # A logger of this app's own (not in logging's registry: nothing accumulates per rollout) whose one handler
    # posts to the tracing gateway; its emit is blocking HTTP (requests), so it runs in a worker thread.
    tracing = logging.Logger("rft_sdk.eval_protocol.tracing")
    tracing.addHandler(tracing_handler or FireworksTracingHttpHandler())
    client = HostedClient.over_http(base_url, token=token)

    async def report(rid: str, status: Status, message: str, extras: dict[str, Any]) -> None:
        record = {"rollout_id": rid, "status": status, "extras": extras}
        level = logging.ERROR if status.code != Status.rollout_finished().code else logging.INFO
        logger.log(level, "rollout %s: %s", rid, message)
        await asyncio.to_thread(tracing.log, level, message, extra=record)

    async def rollout(request: InitRequest, item: dict[str, Any]) -> None:
        rid = request.metadata.rollout_id
        params = dict(request.completion_params)
        model = params["model"]
        extra = {k: v for k, v in params.items() if k not in _RESERVED_PARAMS}
        extra.update(params.get("model_kwargs") or {})
        import openai

        # checked against the allow-list by init() before this task started: the server's own key goes only there
        llm = openai.AsyncOpenAI(base_url=_model_url(request),
                                 api_key=request.api_key or os.environ.get("FIREWORKS_API_KEY") or "none")

        async def complete(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
            kwargs = {"tools": tools} if tools else {}
            response = await llm.chat.completions.create(model=model, messages=messages, **kwargs, **extra)
            return _assistant(response.choices[0].message)

        messages = [m.dump_mdoel_for_chat_completion_request() for m in request.messages or []]
        async with gate:
            try:
                trace_id, _ = await run_rollout(client, messages, request.tools, item, complete, max_turns)
            except (RolloutDiscardedError, openai.OpenAIError) as exc:
                status = Status.rollout_error(str(exc))
                statuses[rid] = (time.monotonic(), StatusResponse(terminated=True, status=status, info={}))
                await report(rid, status, f"rollout failed: {exc}", {})
                return
            finally:
                await llm.close()
        status = Status.rollout_finished()
        await report(rid, status, "rollout finished", {"trace_id": trace_id})
        statuses[rid] = (time.monotonic(), StatusResponse(terminated=True, status=status, info={"trace_id": trace_id}))

    def _model_url(request: InitRequest) -> str:
        given = request.model_base_url or request.completion_params.get("base_url")
        return given if isinstance(given, str) and given else allowed[0]

    async def init(request: Request) -> JSONResponse:
        data = decode_object(await read_body(request, max_body_bytes, BODY_TIMEOUT_S))  # 413/408/400 as JSON
        try:
            body = InitRequest.model_validate(data)
        except ValidationError as exc:  # fields and problems, never the input itself
            return JSONResponse({"detail": [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]}
                                            for e in exc.errors(include_url=False, include_input=False,
                                                                include_context=False)][:20]}, status_code=422)
        if not body.completion_params.get("model"):
            return JSONResponse({"detail": "completion_params.model is required"}, status_code=422)
        if not _url_allowed(_model_url(body), allowed):
            return JSONResponse({"detail": "model_base_url is not on this server's allow-list of model URLs "
                                           f"({MODEL_URLS_ENV_VAR})", "code": "model_url_not_allowed"},
                                status_code=422)
        item = items.get(body.metadata.row_id)
        if item is None:
            return JSONResponse({"detail": f"row_id {body.metadata.row_id[:64]!r} is not in this server's dataset "
                                           f"({len(items)} items; row ids are rft_sdk row_id_of(item))"},
                                status_code=422)
        now = time.monotonic()
        for key in [k for k, (t, _) in statuses.items() if now - t > status_ttl_s]:
            del statuses[key]
        statuses[body.metadata.rollout_id] = (now, StatusResponse(terminated=False, status=Status.rollout_running()))
        task = asyncio.create_task(rollout(body, item))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        return JSONResponse({"status": "started", "rollout_id": body.metadata.rollout_id})

    async def status(request: Request) -> JSONResponse:
        rid = request.query_params.get("rollout_id", "")
        found = statuses.get(rid)
        if found is None:
            return JSONResponse({"detail": f"unknown rollout_id {rid[:64]!r}"}, status_code=404)
        return JSONResponse(found[1].model_dump(mode="json"))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        for task in list(tasks):
            task.cancel()
        await client.aclose()

    app = Starlette(routes=[Route("/init", init, methods=["POST"]), Route("/status", status, methods=["GET"])],
                    lifespan=lifespan, exception_handlers=exception_handlers())
    return AuthMiddleware(app, auth=auth, metrics=Metrics())


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m rft_sdk.integrations.eval_protocol``: serve :func:`remote_rollout_app` with uvicorn."""
    parser = argparse.ArgumentParser(prog="python -m rft_sdk.integrations.eval_protocol",
                                     description="Fireworks RFT remote rollout server for a tool server")
    parser.add_argument("--url", required=True, help="the tool server's base URL")
    parser.add_argument("--dataset", required=True, help="hosted JSONL the RFT dataset was made from")
    parser.add_argument("--token-env", default=None, metavar="VAR", help="tool server bearer token from $VAR")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3000)
    parser.add_argument("--max-turns", type=int, default=30)
    parser.add_argument("--model-url", action="append", default=None, metavar="URL",
                        help=f"a model base URL /init may call (repeatable; default ${MODEL_URLS_ENV_VAR} or "
                             f"{', '.join(DEFAULT_MODEL_URLS)})")
    parser.add_argument("--no-auth", action="store_true",
                        help=f"serve without a token (loopback only); else ${INIT_AUTH_ENV_VAR} must hold one")
    args = parser.parse_args(argv)
    if args.no_auth and not is_loopback(args.host):
        parser.error(f"--no-auth serves /init to anyone who can reach {args.host}; allowed on a loopback address "
                     "only")
    try:
        token = env_secret(args.token_env)
    except ValueError as exc:
        parser.error(str(exc))
    import uvicorn

    lines = [json.loads(line) for line in Path(args.dataset).read_text(encoding="utf-8").splitlines() if line.strip()]
    try:
        app = remote_rollout_app(args.url, lines, token=token, max_turns=args.max_turns, model_base_urls=args.model_url,
                                 allow_unauthenticated=args.no_auth)
    except ValueError as exc:
        parser.error(str(exc))
    uvicorn.run(app, host=args.host, port=args.port)
    return 0
