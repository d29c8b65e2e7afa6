"""Read a JSON request body with a hard size limit, streaming.

Hosted protocol §3: request and response bodies are limited to 1 MB. The body
is read chunk by chunk and reading stops as soon as the limit is passed (or
at once when ``Content-Length`` already says so), so an oversized body never
sits in memory whole.

The decoded JSON must be strict RFC 8259 JSON (``NaN``/``Infinity`` literals
are refused) and nest at most ``MAX_JSON_DEPTH`` arrays/objects deep, so a
hostile body cannot exhaust the interpreter's recursion limit here or later
when the rollout is serialised.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from starlette.requests import Request

__all__ = ["DEFAULT_BODY_LIMIT", "DEFAULT_BODY_TIMEOUT_S", "MAX_JSON_DEPTH", "BodyError", "loads_strict", "read_json_body"]

DEFAULT_BODY_LIMIT = 1_048_576  # bytes (1 MiB)
DEFAULT_BODY_TIMEOUT_S = 60.0  # seconds to receive a whole body (a stalled client must not hold a slot forever)
MAX_JSON_DEPTH = 64  # nested arrays/objects; far above any tool call, far below Python's recursion limit


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (RFC 8259)")


def _depth_ok(value: Any, limit: int) -> bool:
    """Whether ``value`` nests at most ``limit`` containers deep (iterative, no recursion)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return False
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return True


def loads_strict(text: str | bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` that refuses ``NaN``/``Infinity`` and nesting deeper than ``max_depth``.

    Raises:
        ValueError: not valid strict JSON (``json.JSONDecodeError`` and
            ``UnicodeDecodeError`` are subclasses), or nested too deep; the
            message says which.
    """
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise ValueError(f"JSON nests deeper than {max_depth} levels") from None
    if not _depth_ok(data, max_depth):
        raise ValueError(f"JSON nests deeper than {max_depth} levels")
    return data


class BodyError(Exception):
    """The body cannot be used. ``status`` is 400 (malformed), 408 (too slow) or 413 (too large)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


async def read_json_body(request: Request, limit: int = DEFAULT_BODY_LIMIT,
                         timeout_s: float | None = DEFAULT_BODY_TIMEOUT_S) -> dict[str, Any]:
    """Return the body decoded as a JSON object.

    Args:
        request: the Starlette request.
        limit: maximum body size in bytes.
        timeout_s: seconds allowed to receive the whole body (``None``: no limit).
            uvicorn has no body-read timeout of its own, so a client that
            declares more bytes than it sends would otherwise wait forever.

    Raises:
        BodyError: 413 ``body_too_large`` when over ``limit`` bytes; 408
            ``body_timeout`` when the body did not arrive within ``timeout_s``; 400
            ``malformed_json`` when not strict JSON (see :func:`loads_strict`);
            400 ``invalid_request`` when the JSON is not an object.
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyError(413, "body_too_large", f"request body exceeds {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    with anyio.move_on_after(timeout_s) as scope:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise BodyError(413, "body_too_large", f"request body exceeds {limit} bytes")
            chunks.append(chunk)
    if scope.cancelled_caught:
        raise BodyError(408, "body_timeout", f"request body not received within {timeout_s} s")
    try:
        data = loads_strict(b"".join(chunks))
    except ValueError as exc:
        raise BodyError(400, "malformed_json", f"request body is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BodyError(400, "invalid_request", "request body must be a JSON object")
    return data
