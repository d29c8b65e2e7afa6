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

import json
import logging
import re
from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from .exceptions import StoreError

__all__ = ["EndpointError", "clean_text", "clean_value", "encode_json", "error_body", "error_response", "find_surrogate",
           "json_response"]

logger = logging.getLogger("rft_sdk")
_SURROGATE = re.compile("[\ud800-\udfff]")
_MAY_HOLD_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")  # a JSON escape of one (or a false alarm)


class EndpointError(Exception):
    """An answer other than 2xx, raised anywhere on a request's path.

    Args:
        status: HTTP status (meanings: :data:`rft_sdk.protocol.STATUS_MEANINGS`).
        code: stable machine-readable code, e.g. ``"invalid_request"``.
        message: human (and model) readable text.
        details: ``[{"field", "problem"}]`` naming each wrong field.
        counter: metrics counter to increment when answered (``None``: none).
        headers: extra response headers (e.g. ``WWW-Authenticate``).
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


def clean_text(text: str) -> str:
    """``text`` with every lone UTF-16 surrogate replaced by U+FFFD (unchanged when it has none)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def clean_value(value: Any) -> Any:
    """``value`` (JSON-shaped) with lone surrogates in every string and key replaced by U+FFFD."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(str(k)): clean_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_value(v) for v in value]
    return value


def encode_json(value: Any) -> bytes:
    """Compact UTF-8 JSON of ``value``; lone surrogates become U+FFFD (never raises for them).

    Raises:
        TypeError / ValueError: ``value`` is not JSON-serialisable (a bug of the caller).
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(clean_value(value), ensure_ascii=False, separators=(",", ":"),
                          allow_nan=False).encode("utf-8")


def find_surrogate(raw: bytes, value: Any) -> str | None:
    """Dotted path of the first string (or key) of decoded ``value`` holding a lone surrogate.

    ``raw`` is the JSON text ``value`` was decoded from: a surrogate can only
    come from a ``\\uD800``-``\\uDFFF`` escape, so a body without one is
    answered at once (a regex scan), and only a suspicious body is walked.
    """
    if not _MAY_HOLD_SURROGATE.search(raw):
        return None
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, str):
            if clean_text(node) is not node:
                return path or "body"
        elif isinstance(node, dict):
            for key, child in node.items():
                where = f"{path}.{key}" if path else str(key)
                if clean_text(key) is not key:
                    return path or "body"
                stack.append((where, child))
        elif isinstance(node, list):
            stack.extend((f"{path}[{i}]", child) for i, child in enumerate(node))
    return None


def json_response(content: bytes, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    """A ``Response`` carrying already-encoded JSON ``content`` (encoded once, by :func:`encode_json`)."""
    return Response(content, status_code=status, headers=headers, media_type="application/json")


async def error_response(request: Request, exc: Exception) -> Response:
    """The one exception handler of a ``ToolServer``: every error answers encodable JSON.

    ``EndpointError`` answers its status; ``StoreError`` (lock timeout, database
    error, before anything was committed) answers 503 ``store_unavailable`` so
    the hosted side retries (a completed call_id is replayed, not run again);
    anything else is a bug: 500 ``internal_error`` (Starlette still logs it).
    """
    metrics = getattr(request.app.state, "metrics", None)
    if isinstance(exc, StoreError):
        logger.warning("rollout store unavailable on %s: %s", request.url.path, exc)
        exc = EndpointError(503, "store_unavailable", str(exc), counter="store_errors")
    elif not isinstance(exc, EndpointError):
        exc = EndpointError(500, "internal_error", f"internal error: {type(exc).__name__}",
                            counter="internal_errors")
    if exc.counter and metrics is not None:
        metrics.incr(exc.counter)
    echo = getattr(request.state, "echo", None)
    return json_response(encode_json(exc.body(echo)), exc.status, exc.headers)
