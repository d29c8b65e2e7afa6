"""The one error type of the endpoints, its one handler, and JSON that always encodes.

Every non-2xx answer of a ``ToolServer`` is an :class:`EndpointError` turned
into the :class:`rft_sdk.protocol.ErrorBody` shape by :func:`error_response`
(registered once, for ``EndpointError``, ``StoreError`` and any unexpected
exception). ``call_id``/``id`` of the request being answered are echoed from
``request.state.echo`` (set by the pipeline once the request is parsed), so no
code passes them along by hand.

Encoding: JSON text is UTF-8, and a lone UTF-16 surrogate (``"\\ud800"``,
valid in a JSON string and kept by Python's decoder) cannot be encoded in
UTF-8. :func:`encode_json` replaces each one with U+FFFD (RFC 8259 §8.2 leaves
their meaning unpredictable), so an answer always encodes and a retried request
gets the same bytes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from ..exceptions import StoreError
from ._json import encode_json
from ._redact import install_log_filter

__all__ = ["EndpointError", "error_body", "error_response", "exception_handlers", "json_response"]

logger = logging.getLogger("rft_sdk")
install_log_filter()  # every value the package logs stays on its line (rft_sdk._wire._redact)


class EndpointError(Exception):
    """An answer other than 2xx, raised anywhere on a request's path.

    Args:
        status: HTTP status (meanings: :data:`rft_sdk.protocol.STATUS_MEANINGS`).
        code: stable machine-readable code, e.g. ``"invalid_request"``.
        message: human (and model) readable text.
        details: ``[{"field", "problem"}]`` naming each wrong field.
        counter: metrics counter to increment when answered (``None``: none).
        headers: extra response headers (e.g. ``WWW-Authenticate``).

    The counters are added to once, by the edge's :func:`error_response`, when the error is answered:
    ``counter`` and any named on the way by :meth:`also_count`.
    """

    def __init__(self, status: int, code: str, message: str, *, details: list[dict[str, str]] | None = None,
                 counter: str | None = None, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.counter = counter
        self.headers = dict(headers or {})
        self.counters: tuple[str, ...] = (counter,) if counter else ()

    def also_count(self, name: str) -> None:
        """Count ``name`` too when this error is answered (e.g. ``tool_retryable_errors`` for a tool's 503)."""
        if name not in self.counters:
            self.counters = (*self.counters, name)

    def body(self, echo: Mapping[str, str | None] | None = None) -> dict[str, Any]:
        """The ``ErrorBody`` JSON shape, with ``call_id``/``id`` from ``echo`` when not ``None``."""
        return error_body(self.code, self.message, details=self.details, echo=echo)


def error_body(code: str, message: str, *, details: list[dict[str, str]] | None = None,
               echo: Mapping[str, str | None] | None = None) -> dict[str, Any]:
    """``{"type": "error", "error": {"code", "message", "details"?}, "call_id"?, "id"?}`` (no ``output``)."""
    body: dict[str, Any] = {"type": "error", "error": {"code": code, "message": message}}
    if details:
        body["error"]["details"] = details
    for key, value in (echo or {}).items():
        if value is not None:
            body[key] = value
    return body


def json_response(content: bytes, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    """A ``Response`` carrying already-encoded JSON ``content`` (encoded once, by :func:`encode_json`)."""
    return Response(content, status_code=status, headers=headers, media_type="application/json")


async def error_response(request: Request, exc: Exception) -> Response:
    """The one exception handler of a ``ToolServer``: every error answers encodable JSON.

    ``EndpointError`` answers its status; ``StoreError`` (lock timeout, database
    error, before anything was committed) answers 503 ``store_unavailable`` so
    the hosted side retries (a completed call_id is replayed, not run again), or
    its own ``status``/``code`` when it has them (e.g. 503 ``rollout_evicted``);
    Starlette's ``HTTPException`` (an unmatched route: 404 ``not_found``, a
    wrong method: 405 ``method_not_allowed`` with ``Allow``) answers its
    status; anything else is a bug: 500 ``internal_error`` with ``Connection:
    close`` (Starlette's ``ServerErrorMiddleware`` re-raises it after the
    answer, uvicorn logs the traceback and drops the connection: the header
    tells the client to open a new one instead of reading EOF on the next
    request).
    """
    metrics = getattr(request.app.state, "metrics", None)
    if isinstance(exc, StoreError):
        status, code = getattr(exc, "status", 503), getattr(exc, "code", "store_unavailable")
        throttle = getattr(request.app.state, "store_warnings", None)
        if throttle is None:  # one per app (a server's outage is its own)
            throttle = request.app.state.store_warnings = _Throttled()
        throttle.warn("rollout store error on %s: %s", request.url.path, exc)
        exc = EndpointError(status, code, str(exc), counter=getattr(exc, "counter", "store_errors"))
    elif isinstance(exc, HTTPException):
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        message = f"{request.method} {request.url.path}: {exc.detail}"
        if exc.status_code == 405 and exc.headers and "Allow" in exc.headers:
            message += f" (allowed: {exc.headers['Allow']})"
        exc = EndpointError(exc.status_code, code, message, headers=exc.headers, counter=code)
    elif not isinstance(exc, EndpointError):  # a bug: Starlette re-raises it after this answer, uvicorn logs
        exc = EndpointError(500, "internal_error", f"internal error: {type(exc).__name__}",  # it and drops the
                            counter="internal_errors", headers=_CLOSE)  # connection: say so (Connection: close)
    if metrics is not None:
        for counter in exc.counters:
            metrics.incr(counter)
    echo = getattr(request.state, "echo", None)
    return json_response(encode_json(exc.body(echo)), exc.status, exc.headers)


class _Throttled:
    """A warning logged at most once per ``every_s`` seconds, saying how many were left out meanwhile
    (a store outage at 300 requests/s must not write 300 lines a second)."""

    def __init__(self, every_s: float = 1.0) -> None:
        self.every_s, self.next_at, self.skipped = every_s, 0.0, 0

    def warn(self, message: str, *args: Any) -> None:
        now = time.monotonic()
        if now < self.next_at:
            self.skipped += 1
            return
        if self.skipped:
            message += f" (and {self.skipped} more like it in the last {self.every_s:g} s)"
        self.next_at, self.skipped = now + self.every_s, 0
        logger.warning(message, *args)


_HTTP_CODES = {404: "not_found", 405: "method_not_allowed"}
_CLOSE = {"Connection": "close"}


def exception_handlers() -> dict[Any, Any]:
    """Starlette ``exception_handlers`` of a ``ToolServer``: ``EndpointError``, ``StoreError``,
    ``HTTPException`` (unmatched routes and methods) and ``Exception`` (anything else), all answered
    by :func:`error_response`, so every non-2xx answer is the JSON ``ErrorBody``."""
    return {EndpointError: error_response, StoreError: error_response, HTTPException: error_response,
            Exception: error_response}
