"""Read a JSON request body with a hard size limit, streaming.

Hosted protocol §3: request and response bodies are limited to 1 MB. The body
is read chunk by chunk and reading stops as soon as the limit is passed (or
at once when ``Content-Length`` already says so), so an oversized body never
sits in memory whole.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

__all__ = ["DEFAULT_BODY_LIMIT", "BodyError", "read_json_body"]

DEFAULT_BODY_LIMIT = 1_048_576  # bytes (1 MiB)


class BodyError(Exception):
    """The body cannot be used. ``status`` is 400 (malformed) or 413 (too large)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


async def read_json_body(request: Request, limit: int = DEFAULT_BODY_LIMIT) -> dict[str, Any]:
    """Return the body decoded as a JSON object.

    Args:
        request: the Starlette request.
        limit: maximum body size in bytes.

    Raises:
        BodyError: 413 ``body_too_large`` when over ``limit`` bytes; 400
            ``malformed_json`` when not UTF-8 JSON; 400 ``invalid_request``
            when the JSON is not an object.
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyError(413, "body_too_large", f"request body exceeds {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyError(413, "body_too_large", f"request body exceeds {limit} bytes")
        chunks.append(chunk)
    try:
        data = json.loads(b"".join(chunks))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BodyError(400, "malformed_json", f"request body is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BodyError(400, "invalid_request", "request body must be a JSON object")
    return data
