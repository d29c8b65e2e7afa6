"""Read a request body: the first step of the request path (bytes, before anything is decoded).

Hosted protocol §3: request and response bodies are limited to
``protocol.MAX_BODY_BYTES``. The body is read chunk by chunk and reading stops
as soon as the limit is passed (or at once when ``Content-Length`` already
says so), so an oversized body never sits in memory whole. Decoding the bytes
is the next step's (``rft_sdk._wire._hosted_body``, ``rft_sdk._wire._body``).
"""

from __future__ import annotations

import logging

import anyio
from starlette.requests import ClientDisconnect, Request

from ..protocol import BODY_TIMEOUT_S, FIRST_BYTE_TIMEOUT_S, MAX_BODY_BYTES, TOOL_TIMEOUT_S
from ._endpoint import EndpointError

__all__ = ["DRAIN_FACTOR", "read_body"]

logger = logging.getLogger("rft_sdk")
#: An answer sent before the whole body was read ends the connection (RFC 9110 §15.5.9: a 408 closes it).
_CLOSE = {"Connection": "close"}
#: Bytes past the limit read and discarded before a 413 (a multiple of the limit). An HTTP/1.1 client
#: reads no answer before it has sent its whole body, so a server that closes while the client still
#: sends makes the client's kernel see a reset, and the client never reads the 413 (nginx's "lingering
#: close" for the same reason). Within this bound, and the body timeout, the body is drained and the 413
#: keeps the connection; past it the 413 closes the connection (a client sending more is not reading).
DRAIN_FACTOR = 4


async def read_body(request: Request, limit: int = MAX_BODY_BYTES,
                    timeout_s: float | None = BODY_TIMEOUT_S,
                    start_timeout_s: float = FIRST_BYTE_TIMEOUT_S) -> bytes:
    """The raw request body, at most ``limit`` bytes, whose bytes keep arriving.

    uvicorn has no body-read timeout of its own, so a client that declares
    more bytes than it sends would otherwise hold the connection forever.
    The deadline measures progress, not the upload's wall time (nginx's
    ``client_body_timeout`` rule: "set only for a period between two
    successive read operations, not for the transmission of the whole
    request body"): 408 when ``timeout_s`` seconds pass without a byte of
    the body, and before its first byte, when ``max(timeout_s,
    start_timeout_s)`` seconds pass from the start of the read; a body that
    trickles is cut at ``TOOL_TIMEOUT_S`` (600 s, or ``timeout_s`` when longer)
    from the start of the read, when the hosted side has given up on the answer anyway. The longer
    first wait is the first-byte deadline of a silent new connection
    (``rft_sdk.protocol.FIRST_BYTE_TIMEOUT_S``, 120 s; ``rft serve
    --first-byte-timeout-s``), for the same reason (issue #40): a client
    starting thousands of rollouts at once on a busy machine writes a
    request's headers, and its body one round of its event loop later,
    which took more than 30 s for 86 grades of a 4,096-rollout burst. A
    request waiting for its body holds a connection and a task, not an
    admission slot (the body is read before admission). The 408 answer
    says ``Connection: close``: the rest of the body is never
    read, so the connection cannot carry another request. A body over ``limit``
    is read on and discarded up to ``DRAIN_FACTOR`` × ``limit`` more bytes (the
    client can then read the 413 on a connection that stays usable); a longer
    one (declared or streamed) gets a 413 with ``Connection: close``.

    Raises:
        EndpointError: 413 ``body_too_large`` over ``limit`` bytes (declared or
            streamed); 408 ``body_timeout`` when ``timeout_s`` seconds pass without a body
            byte (before the first byte: ``start_timeout_s`` when longer; in all: ``TOOL_TIMEOUT_S``;
            ``timeout_s`` ``None``: no limit); 400 ``client_disconnected`` when the client
            went away mid-body (logged at INFO, nobody reads the answer).
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit * (1 + DRAIN_FACTOR):
        raise EndpointError(413, "body_too_large", f"request body exceeds {limit} bytes", counter="body_too_large",
                            headers=_CLOSE)  # past the drain bound: not read at all
    chunks: list[bytes] = []
    try:
        if timeout_s is None:  # no timeout: no cancel scope to open and close per request
            await _receive(request, limit, chunks, None, 0.0, 0.0)
        else:
            total_s = max(TOOL_TIMEOUT_S, timeout_s)
            first_wait_s = min(max(timeout_s, start_timeout_s), total_s)
            with anyio.move_on_after(first_wait_s) as scope:
                first_deadline = scope.deadline
                await _receive(request, limit, chunks, scope, timeout_s, first_deadline - first_wait_s + total_s)
            if scope.cancelled_caught:
                waited = (f"no byte of the request body within {first_wait_s:g} s" if scope.deadline == first_deadline
                          else f"the request body stalled (no byte for {timeout_s:g} s) or took {total_s:g} s")
                raise EndpointError(408, "body_timeout", waited, counter="body_timeouts", headers=_CLOSE)
    except ClientDisconnect:
        size = sum(len(chunk) for chunk in chunks)
        logger.info("client disconnected after %d body bytes on %s", size, request.url.path)
        raise EndpointError(400, "client_disconnected", "client disconnected before sending the whole body",
                            counter="client_disconnects") from None
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def _receive(request: Request, limit: int, chunks: list[bytes], scope: anyio.CancelScope | None,
                   stall_s: float, end: float) -> None:
    """Append the body's chunks to ``chunks``; past ``limit`` bytes, drain (discard) the rest up to
    ``DRAIN_FACTOR`` × ``limit`` more bytes, then 413 (``Connection: close`` when it did not end).
    Each chunk moves ``scope``'s deadline to ``stall_s`` seconds from now (the body made progress), never
    past ``end`` (anyio's clock)."""
    size = 0
    stream = request.stream()
    async for chunk in stream:
        if scope is not None:
            scope.deadline = min(anyio.current_time() + stall_s, end)
        size += len(chunk)
        if size > limit:
            chunks.clear()  # never kept: the body is refused
            async for chunk in stream:
                if scope is not None:
                    scope.deadline = min(anyio.current_time() + stall_s, end)
                size += len(chunk)
                if size > limit * (1 + DRAIN_FACTOR):
                    raise EndpointError(413, "body_too_large", f"request body exceeds {limit} bytes",
                                        counter="body_too_large", headers=_CLOSE)
            raise EndpointError(413, "body_too_large", f"request body exceeds {limit} bytes",
                                counter="body_too_large")
        chunks.append(chunk)
