"""Read a request body and parse it, once, into a protocol model.

Hosted protocol §3: request and response bodies are limited to
``protocol.MAX_BODY_BYTES``. The body is read chunk by chunk and reading stops
as soon as the limit is passed (or at once when ``Content-Length`` already
says so), so an oversized body never sits in memory whole.

The decoded JSON must be strict RFC 8259 JSON (``NaN``/``Infinity`` literals
are refused), nest at most ``protocol.MAX_JSON_DEPTH`` arrays/objects deep (a
hostile body cannot exhaust the interpreter's recursion limit here or later
when the rollout is serialised) and hold no lone UTF-16 surrogate (it could
not be stored or echoed as UTF-8). Every failure is an :class:`EndpointError`
raised before anything runs.
"""

from __future__ import annotations

import logging
from typing import Any, TypeVar

import anyio
import pydantic
from starlette.requests import ClientDisconnect, Request

from ..protocol import BODY_TIMEOUT_S, MAX_BODY_BYTES
from ._endpoint import EndpointError
from ._json import SurrogateError, loads_strict

__all__ = ["decode_object", "parse_model", "problems", "read_body"]

logger = logging.getLogger("rft_sdk")
#: An answer sent before the whole body was read ends the connection (RFC 9110 §15.5.9: a 408 closes it).
_CLOSE = {"Connection": "close"}
#: Bytes past the limit read and discarded before a 413 (a multiple of the limit). An HTTP/1.1 client
#: reads no answer before it has sent its whole body, so a server that closes while the client still
#: sends makes the client's kernel see a reset, and the client never reads the 413 (nginx's "lingering
#: close" for the same reason). Within this bound, and the body timeout, the body is drained and the 413
#: keeps the connection; past it the 413 closes the connection (a client sending more is not reading).
DRAIN_FACTOR = 4
M = TypeVar("M", bound=pydantic.BaseModel)


async def read_body(request: Request, limit: int = MAX_BODY_BYTES,
                    timeout_s: float | None = BODY_TIMEOUT_S) -> bytes:
    """The raw request body, at most ``limit`` bytes, received within ``timeout_s`` seconds.

    uvicorn has no body-read timeout of its own, so a client that declares
    more bytes than it sends would otherwise hold the connection forever.
    The 408 answer says ``Connection: close``: the rest of the body is never
    read, so the connection cannot carry another request. A body over ``limit``
    is read on and discarded up to ``DRAIN_FACTOR`` × ``limit`` more bytes (the
    client can then read the 413 on a connection that stays usable); a longer
    one (declared or streamed) gets a 413 with ``Connection: close``.

    Raises:
        EndpointError: 413 ``body_too_large`` over ``limit`` bytes (declared or
            streamed); 408 ``body_timeout`` not received within ``timeout_s``
            (``None``: no limit); 400 ``client_disconnected`` when the client
            went away mid-body (logged at INFO, nobody reads the answer).
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit * (1 + DRAIN_FACTOR):
        raise EndpointError(413, "body_too_large", f"request body exceeds {limit} bytes", counter="body_too_large",
                            headers=_CLOSE)  # past the drain bound: not read at all
    chunks: list[bytes] = []
    try:
        if timeout_s is None:  # no timeout: no cancel scope to open and close per request
            await _receive(request, limit, chunks)
        else:
            with anyio.move_on_after(timeout_s) as scope:
                await _receive(request, limit, chunks)
            if scope.cancelled_caught:
                raise EndpointError(408, "body_timeout", f"request body not received within {timeout_s:g} s",
                                    counter="body_timeouts", headers=_CLOSE)
    except ClientDisconnect:
        size = sum(len(chunk) for chunk in chunks)
        logger.info("client disconnected after %d body bytes on %s", size, request.url.path)
        raise EndpointError(400, "client_disconnected", "client disconnected before sending the whole body",
                            counter="client_disconnects") from None
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def _receive(request: Request, limit: int, chunks: list[bytes]) -> None:
    """Append the body's chunks to ``chunks``; past ``limit`` bytes, drain (discard) the rest up to
    ``DRAIN_FACTOR`` × ``limit`` more bytes, then 413 (``Connection: close`` when it did not end)."""
    size = 0
    stream = request.stream()
    async for chunk in stream:
        size += len(chunk)
        if size > limit:
            chunks.clear()  # never kept: the body is refused
            async for chunk in stream:
                size += len(chunk)
                if size > limit * (1 + DRAIN_FACTOR):
                    raise EndpointError(413, "body_too_large", f"request body exceeds {limit} bytes",
                                        counter="body_too_large", headers=_CLOSE)
            raise EndpointError(413, "body_too_large", f"request body exceeds {limit} bytes",
                                counter="body_too_large")
        chunks.append(chunk)


def decode_object(raw: bytes) -> dict[str, Any]:
    """Decode a request body by :func:`loads_strict` (the one rule) as one JSON object.

    Raises:
        EndpointError: 400 ``malformed_json`` (not strict JSON, invalid bytes,
            too deep, or a lone UTF-16 surrogate, whose field ``details`` names);
            400 ``invalid_request`` (JSON, but not an object).
    """
    try:
        data = loads_strict(raw)
    except SurrogateError as exc:
        message = f"request body holds a {exc}"
        raise EndpointError(400, "malformed_json", message, details=[{"field": exc.where, "problem": message}],
                            counter="bad_requests") from None
    except ValueError as exc:
        raise EndpointError(400, "malformed_json", f"request body is not valid JSON: {exc}",
                            counter="bad_requests") from None
    if not isinstance(data, dict):
        raise EndpointError(400, "invalid_request", "request body must be a JSON object", counter="bad_requests")
    return data


def parse_model(model: type[M], data: dict[str, Any], message: str) -> M:
    """Validate decoded ``data`` against a protocol ``model`` (pydantic, strict types).

    Raises:
        EndpointError: 422 ``invalid_request`` with ``details`` naming each
            wrong field (``{"field": "sample.output_text", "problem": ...}``).
    """
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        details = problems(exc)
        raise EndpointError(422, "invalid_request", message, details=details, counter="bad_requests") from None


def problems(exc: pydantic.ValidationError) -> list[dict[str, str]]:
    """``[{"field", "problem"}]`` of a validation error, one entry per pydantic error, in order;
    ``field`` is the dotted location (``"sample.output_text"``), ``"arguments"`` for the whole value."""
    return [{"field": ".".join(str(p) for p in error["loc"]) or "arguments", "problem": error["msg"]}
            for error in exc.errors(include_url=False)]
