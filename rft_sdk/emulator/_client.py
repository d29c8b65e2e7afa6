"""HTTP calls to the customer's tool and grader endpoints, as the hosted service makes them.

Source: ``docs/hosted-protocol.md`` section 3. Per call:

* request body exactly ``{"type": "function_call", "id", "call_id", "name",
  "arguments": <JSON string>, "trace_id", "item"}`` (tools) or ``{"sample",
  "item", "trace_id"}`` (grader), with the job's headers forwarded verbatim
  and ``Content-Type: application/json``;
* 5xx, transport errors and timeouts (and a grader's 429): retried ``retries``
  (3) times after the first try with exponential backoff (tenacity), or after
  the answer's ``Retry-After`` seconds when it sent one, each wait with random
  jitter, then :class:`EndpointFailure`;
* tool 4xx without ``output``: the serialized error body becomes the output
  the model sees (the rollout continues);
* a response over ``max_response_bytes`` (``rft_sdk.protocol.MAX_BODY_BYTES``, 1 MB = 1,000,000 bytes) is read by
  streaming only up to the limit and reaches the model as a 413 error;
* ``timeout_s`` (600 s) bounds each attempt end to end.
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import time
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt, wait_exponential
from tenacity.wait import wait_base

from .._wire._redact import get_logger
from ..protocol import (
    END_STATE_HEADER,
    GRADE_DETAILS_HEADER,
    MAX_BODY_BYTES,
    QUEUE_WAIT_HEADER,
    RETRIES,
    STATE_CHANGED_HEADER,
    TOOL_TIMEOUT_S,
    is_retried,
)
from ._job import TARGETS, EndpointGrader, JobTool
from ._ratelimit import RateLimiter
from ._types import ToolCall

__all__ = ["ClientSettings", "EndpointClient", "EndpointFailure", "GradeResult", "ToolCallResult"]

log = get_logger("rft_sdk.emulator")

@dataclass(frozen=True)
class ClientSettings:
    """Limits and retry behaviour for endpoint calls.

    Attributes:
        retries: retries after the first try on 5xx/transport/timeout (hosted: 3).
        backoff_initial_s: first backoff wait in seconds; doubles each retry.
        backoff_max_s: cap on one backoff wait, seconds.
        timeout_s: per-attempt limit in seconds (hosted: 600).
        max_response_bytes: larger responses become a 413 error (hosted: 1 MB).
        max_request_bytes: larger request bodies are not sent (hosted: 1 MB).
        retry_after_max_s: a retried answer's ``Retry-After`` (seconds) is waited, up to this
            many seconds, instead of the backoff (a server queueing a burst says when to come back).
        jitter: each retry waits its backoff (or ``Retry-After``) plus a uniformly random share of
            up to ``jitter`` times it (0: none), so a refused burst's retries spread out.
        target: the hosted service played, ``"openai"`` or ``"azure"``. Both POST each
            tool call to the job tool's ``server_url`` with its headers (an Azure job
            names one shared ``.../tools`` URL, routed by the body's ``name``); Azure's
            endpoint grader sends **no headers** (its samples' "Limitations"), so a
            grader needing a token answers 401 there: serve it behind a grader secret.
    """

    retries: int = RETRIES
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 8.0
    timeout_s: float = TOOL_TIMEOUT_S
    max_response_bytes: int = MAX_BODY_BYTES
    max_request_bytes: int = MAX_BODY_BYTES
    target: str = "openai"
    retry_after_max_s: float = 120.0
    jitter: float = 0.5

    def __post_init__(self) -> None:
        if not self.retry_after_max_s >= 0 or not self.jitter >= 0:
            raise ValueError(f"retry_after_max_s and jitter must be >= 0, got {self.retry_after_max_s}, {self.jitter}")
        if self.target not in TARGETS:
            raise ValueError(f"target must be one of {list(TARGETS)}, got {self.target!r}")


@dataclass
class ToolCallResult:
    """One dispatched tool call and what the model saw.

    Attributes:
        status: final HTTP status (413 for an oversized body), ``None`` when no
            response came (timeout/transport failure) or the tool is unknown.
        output: the text placed in the model's context (``""`` if discarded).
        error: ``None`` on a 2xx with ``output``; otherwise a short reason.
        latency_s: seconds from first attempt to final answer, retries included.
        attempts: HTTP attempts made (1 = no retry).
        started_at: unix seconds when the call was first sent.
        queued_s: seconds the answer says it waited in the server's admission queue
            (``x-rft-queue-wait-s``, ``rft_sdk.protocol.QUEUE_WAIT_HEADER``; 0.0 when absent).
        changed: whether the server says the call changed the rollout's state or database
            (``x-rft-state-changed``, ``rft_sdk.protocol.STATE_CHANGED_HEADER``); ``None`` when absent.
    """

    id: str
    call_id: str
    name: str
    arguments: str
    status: int | None = None
    output: str = ""
    error: str | None = None
    latency_s: float = 0.0
    attempts: int = 0
    started_at: float = 0.0
    queued_s: float = 0.0
    changed: bool | None = None

    @property
    def ok(self) -> bool:
        """True for a 2xx answer carrying ``output``."""
        return self.error is None and self.status is not None and 200 <= self.status < 300


@dataclass
class GradeResult:
    """A grader answer: ``score``, parsed ``x-rft-grade-details`` (or ``None``), timing, and the server's
    digest of the rollout's end state (``x-rft-end-state``, ``rft_sdk.protocol.END_STATE_HEADER``; ``None``
    when the server sent none). ``latency_s``: seconds from the first send to the final answer, retries
    included; the emulator's wait for a ``rate_limit`` slot before the first send is not counted (it measured
    the emulator's own pacing: 0.64 s p95 for any grader at 50/s, a doctor's outside tester noticed)."""

    score: float
    details: dict[str, Any] | None
    status: int
    latency_s: float
    attempts: int
    end_state: str | None = None


class EndpointFailure(Exception):
    """An endpoint call failed for good; the rollout is discarded.

    Attributes:
        reason: ``server_error`` (5xx), ``timeout``, ``transport_error`` (after
            retries), ``rate_limited`` (grader 429 after retries),
            ``client_error`` (other grader 4xx), ``invalid_response``,
            ``response_too_large`` or ``request_too_large`` (grader).
        status: last HTTP status, if any.
        attempts: HTTP attempts made.
        result: the tool call record, for tool calls.
    """

    def __init__(self, reason: str, detail: str, *, status: int | None = None, attempts: int = 0,
                 result: ToolCallResult | None = None) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail, self.status, self.attempts, self.result = reason, detail, status, attempts, result


class _Retryable(Exception):
    def __init__(self, reason: str, detail: str, status: int | None = None,
                 retry_after_s: float | None = None) -> None:
        super().__init__(detail)
        self.reason, self.detail, self.status, self.retry_after_s = reason, detail, status, retry_after_s


def retry_after_s(value: str | None) -> float | None:
    """Seconds of a ``Retry-After`` header given as a number of seconds (RFC 9110 section 10.2.3), or
    ``None`` (absent, an HTTP date, or not a number >= 0)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _log_retry(state: RetryCallState) -> None:
    """tenacity ``before_sleep``: one DEBUG line per retry, its reason in the record's ``retry_reason``
    (``server_error``, ``transport_error``, ``timeout``, ``rate_limited``; ``bench_emulator.py --batch``
    counts them)."""
    exc = state.outcome.exception() if state.outcome is not None else None
    reason = getattr(exc, "reason", type(exc).__name__)
    log.debug("retrying after attempt %d: %s: %s", state.attempt_number, reason, getattr(exc, "detail", exc),
              extra={"retry_reason": reason})


class _RetryWait(wait_base):
    """tenacity wait: the server's ``Retry-After`` when it sent one (capped by ``retry_after_max_s``),
    else exponential backoff; plus a random jitter of up to ``jitter`` times that wait, so the
    retries of a burst do not arrive together again."""

    def __init__(self, settings: ClientSettings) -> None:
        self.backoff = wait_exponential(multiplier=settings.backoff_initial_s, max=settings.backoff_max_s)
        self.cap, self.jitter = settings.retry_after_max_s, settings.jitter

    def __call__(self, retry_state: RetryCallState) -> float:
        exc = retry_state.outcome.exception() if retry_state.outcome is not None else None
        after = getattr(exc, "retry_after_s", None)
        base = min(after, self.cap) if after is not None else self.backoff(retry_state)
        return base + random.uniform(0, self.jitter * base)


@dataclass
class _Response:
    status: int
    body: bytes | None  # None when over the size limit
    headers: httpx.Headers


def _encode(payload: Any) -> bytes:
    """The request body's JSON of ``payload`` (compact, UTF-8, non-ASCII kept)."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def _encode_with_item(payload: dict[str, Any], item_json: bytes | None) -> bytes:
    """``_encode(payload)``, its ``"item"`` value taken as ``item_json`` when given (``_encode(payload["item"])``,
    made once per rollout by the emulator: a 16 KB retail item took 0.27 ms a call): the same bytes, since a
    compact JSON object is its members' encodings joined in order."""
    if item_json is None:
        return _encode(payload)
    return b"{" + b",".join(_encode(k) + b":" + (item_json if k == "item" else _encode(v))
                            for k, v in payload.items()) + b"}"


def _decode(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return body.decode("utf-8", errors="replace")


def _headers(job_headers: dict[str, str]) -> httpx.Headers:
    """``Content-Type: application/json`` plus the job's headers, merged case-insensitively.

    A job header of any spelling (``Content-Type``, ``content-type``) replaces
    the default instead of being sent as a second header.
    """
    headers = httpx.Headers({"content-type": "application/json"})
    headers.update(job_headers)
    return headers


def _error_output(status: int, body: Any) -> str:
    """The serialized error shown to the model: ``{"error": <body>, "status_code": N}``."""
    return json.dumps({"error": body, "status_code": status}, separators=(",", ":"), ensure_ascii=False)


class EndpointClient:
    """Makes tool and grader calls over a caller-owned ``httpx.AsyncClient``.

    Args:
        http: the client (any transport: real sockets, ``httpx.ASGITransport``, respx).
        settings: limits and retries (:class:`ClientSettings`).
        limiters: grader rate limiters shared with other ``EndpointClient`` s
            (the emulator shards rollouts over several HTTP clients).
        max_in_flight: requests sent over ``http`` at once, its pool's ``max_connections``
            (``None``: no limit of this client's own). Further requests wait here, first come first
            served as in httpcore's pool, whose queue is rescanned against every connection each time
            a request starts or ends: a burst of parallel tool calls past the pool's size (``tool_spam``
            in ``make doctor``) spent about twice the CPU there. The wait is part of the attempt's
            ``timeout_s``, as the pool's is.
    """

    def __init__(self, http: httpx.AsyncClient, settings: ClientSettings | None = None,
                 limiters: dict[str, RateLimiter] | None = None, max_in_flight: int | None = None) -> None:
        if max_in_flight is not None and max_in_flight < 1:
            raise ValueError(f"max_in_flight must be >= 1 or None, got {max_in_flight}")
        self.http = http
        self.settings = settings or ClientSettings()
        #: grader URL -> limiter; pass one dict to several clients so they share the rate limit
        self._limiters: dict[str, RateLimiter] = limiters if limiters is not None else {}
        self._in_flight: anyio.Semaphore | contextlib.nullcontext[None] = (
            contextlib.nullcontext() if max_in_flight is None else anyio.Semaphore(max_in_flight))

    async def _post_once(self, url: str, headers: httpx.Headers, body: bytes) -> _Response:
        limit = self.settings.max_response_bytes
        try:
            with anyio.fail_after(self.settings.timeout_s):
                async with self._in_flight, self.http.stream("POST", url, content=body, headers=headers) as resp:
                    length = resp.headers.get("content-length")
                    if length is not None and length.isdigit() and int(length) > limit:
                        return _Response(resp.status_code, None, resp.headers)
                    buf = bytearray()
                    async for chunk in resp.aiter_bytes():
                        buf += chunk
                        if len(buf) > limit:
                            return _Response(resp.status_code, None, resp.headers)
                    return _Response(resp.status_code, bytes(buf), resp.headers)
        except (TimeoutError, httpx.TimeoutException) as exc:
            raise _Retryable("timeout", f"no response within {self.settings.timeout_s}s ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise _Retryable("transport_error", f"{type(exc).__name__}: {exc}") from exc

    async def _post(self, url: str, headers: httpx.Headers, body: bytes, limiter: RateLimiter | None = None,
                    retry_429: bool = False) -> tuple[_Response, int, float]:
        """POST with the client's retries: ``(response, attempts, first_sent)``, ``first_sent`` the
        ``time.perf_counter()`` of the first attempt's send, after ``limiter``'s spacing (the emulator's own
        pacing of a ``rate_limit`` is no latency of the endpoint's)."""
        s = self.settings
        attempts = 0
        first_sent: float | None = None
        retrying = AsyncRetrying(
            stop=stop_after_attempt(s.retries + 1),
            wait=_RetryWait(s),
            retry=retry_if_exception_type(_Retryable),
            before_sleep=_log_retry,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    attempts += 1
                    if limiter is not None:
                        await limiter.acquire()
                    if first_sent is None:
                        first_sent = time.perf_counter()
                    resp = await self._post_once(url, headers, body)
                    if is_retried(resp.status) or (retry_429 and resp.status == 429):
                        text = "" if resp.body is None else resp.body[:200].decode("utf-8", "replace")
                        reason = "rate_limited" if resp.status == 429 else "server_error"
                        raise _Retryable(reason, f"HTTP {resp.status} {text}".strip(), resp.status,
                                         retry_after_s(resp.headers.get("retry-after")))
        except _Retryable as exc:
            raise EndpointFailure(exc.reason, f"{exc.detail} (after {attempts} attempts)",
                                  status=exc.status, attempts=attempts) from exc
        return resp, attempts, first_sent if first_sent is not None else time.perf_counter()

    async def call_tool(self, tool: JobTool, call: ToolCall, *, trace_id: str,
                        item: dict[str, Any], item_json: bytes | None = None) -> ToolCallResult:
        """POST one tool call to ``tool.server_url``.

        Args:
            tool: the job tool (URL + headers).
            call: the :class:`ToolCall` (``arguments`` a JSON string, sent verbatim).
            item_json: ``item`` already encoded as the body encodes it (the rollout's, encoded once);
                ``None``: encoded here.

        Returns:
            The record; its ``output`` is what the model sees (2xx ``output``,
            serialized 4xx error, or a 413 error).

        Raises:
            EndpointFailure: 5xx/timeout/transport error after all retries
                (``.result`` holds the record).
        """
        result = ToolCallResult(id=call.id, call_id=call.call_id, name=call.name,
                                arguments=call.arguments, started_at=time.time())
        body = _encode_with_item({"type": "function_call", "id": call.id, "call_id": call.call_id,
                                  "name": call.name, "arguments": call.arguments, "trace_id": trace_id,
                                  "item": item}, item_json)
        t0 = time.perf_counter()
        if len(body) > self.settings.max_request_bytes:
            result.status, result.error = 413, "request too large"
            result.output = _error_output(413, f"request body of {len(body)} bytes exceeds "
                                               f"{self.settings.max_request_bytes} bytes")
            return result
        try:
            resp, result.attempts, _ = await self._post(tool.server_url, _headers(tool.headers), body)
        except EndpointFailure as exc:
            result.status, result.error, result.attempts = exc.status, exc.reason, exc.attempts
            result.latency_s = time.perf_counter() - t0
            exc.result = result
            raise
        result.latency_s = time.perf_counter() - t0
        result.status = resp.status
        result.queued_s = retry_after_s(resp.headers.get(QUEUE_WAIT_HEADER)) or 0.0
        changed = resp.headers.get(STATE_CHANGED_HEADER)
        result.changed = None if changed not in ("true", "false") else changed == "true"
        if resp.body is None:
            result.status, result.error = 413, "response too large"
            result.output = _error_output(413, f"tool response exceeds {self.settings.max_response_bytes} bytes")
            return result
        data = _decode(resp.body)
        output = data.get("output") if isinstance(data, dict) else None
        if output is not None:
            result.output = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
            if not 200 <= resp.status < 300:
                result.error = f"HTTP {resp.status}"
        else:
            result.output = _error_output(resp.status, data)
            result.error = f"HTTP {resp.status}" if not 200 <= resp.status < 300 else "no output field"
        return result

    async def grade(self, grader: EndpointGrader, sample: dict[str, Any], *, item: dict[str, Any],
                    trace_id: str, item_json: bytes | None = None) -> GradeResult:
        """POST ``{"sample", "item", "trace_id"}`` to the grader; honour its ``rate_limit``.
        ``item_json``: as for :meth:`call_tool`.

        The job's grader headers are sent, except when ``settings.target == "azure"``
        (Azure's endpoint grader cannot send headers).

        Retried like tool calls (5xx, timeouts, transport errors) and also on
        429 Too Many Requests (the spec retries grader failures; a rate-limited
        grader is transient). Other 4xx answers discard at once.

        Returns:
            :class:`GradeResult` with the finite float ``score`` and the parsed
            ``x-rft-grade-details`` header (``{"subscores": {...}, "reasons": [...]}``;
            ``{"unparsed": <raw>}`` if the header is not JSON; ``None`` if absent).

        Raises:
            EndpointFailure: retries exhausted, 4xx, oversize, or a body
                without a numeric ``score``.
        """
        limiter = self._limiters.get(grader.url)
        if limiter is None:
            limiter = self._limiters[grader.url] = RateLimiter(grader.rate_limit)
        body = _encode_with_item({"sample": sample, "item": item, "trace_id": trace_id}, item_json)
        if len(body) > self.settings.max_request_bytes:
            raise EndpointFailure("request_too_large", f"grading request of {len(body)} bytes exceeds "
                                                       f"{self.settings.max_request_bytes} bytes")
        # Azure's endpoint grader sends no headers; otherwise ask for the end-state digest too
        sent = {} if self.settings.target == "azure" else {END_STATE_HEADER: "1", **grader.headers}
        resp, attempts, t0 = await self._post(grader.url, _headers(sent), body, limiter, retry_429=True)
        latency = time.perf_counter() - t0  # from the first send: the wait for a rate_limit slot is not the grader's
        if resp.body is None:
            raise EndpointFailure("response_too_large", f"grader response exceeds "
                                  f"{self.settings.max_response_bytes} bytes", status=resp.status, attempts=attempts)
        data = _decode(resp.body)
        if not 200 <= resp.status < 300:
            raise EndpointFailure("client_error", f"HTTP {resp.status}: {str(data)[:200]}",
                                  status=resp.status, attempts=attempts)
        score = data.get("score") if isinstance(data, dict) else None
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise EndpointFailure("invalid_response", f"expected {{'score': <finite number>}}, got {str(data)[:200]}",
                                  status=resp.status, attempts=attempts)
        raw = resp.headers.get(GRADE_DETAILS_HEADER)
        details: dict[str, Any] | None = None
        if raw is not None:
            parsed = _decode(raw.encode())
            details = parsed if isinstance(parsed, dict) else {"unparsed": raw}
        end_state = resp.headers.get(END_STATE_HEADER)
        return GradeResult(score=float(score), details=details, status=resp.status,
                           latency_s=latency, attempts=attempts, end_state=end_state or None)
