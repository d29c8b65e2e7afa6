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

import json
import logging
import math
import re
from typing import Any, TypeVar

import anyio
import pydantic
from starlette.requests import ClientDisconnect, Request

from ..protocol import BODY_TIMEOUT_S, FIRST_BYTE_TIMEOUT_S, MAX_BODY_BYTES, MAX_JSON_DEPTH, TOOL_TIMEOUT_S
from ._endpoint import EndpointError

orjson: Any
try:  # optional accelerator (rft-sdk[fast]); every refusal is still decided by the stdlib decoder below
    import orjson
except ImportError:  # pragma: no cover - exercised where orjson is absent
    orjson = None

__all__ = ["SurrogateError", "accepts", "decode_object", "depth_within", "loads_strict", "loads_trusted", "orjson",
           "parse_model", "problems", "read_body", "surrogate_path"]

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


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (RFC 8259)")


def _finite_float(text: str) -> float:
    """A JSON number as a float, refusing one beyond the double range (``1e999``: it would decode to
    ``inf``, which no JSON encoder may write back; orjson refuses it the same way)."""
    value = float(text)
    if value in (math.inf, -math.inf):
        raise ValueError(f"number {text[:40]} is out of the range of a double")
    return value


#: JSON text reduced to its structure: ``{``/``}`` read as ``[``/``]`` (a container's kind does not change its
#: depth), every byte but a quote or a bracket deleted (``bytes.translate``: one C pass over the text).
_SQUARE = bytes.maketrans(b"{}", b"[]")
_NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b'"[]{}')))
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 19  # 19 digits in a row: may be an integer beyond 64 bits (orjson makes those floats)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # a JSON escape of a surrogate (or a false alarm)
_SURROGATE_CHAR = re.compile("[\ud800-\udfff]")


def _utf8(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")


def depth_within(text: str | bytes, limit: int) -> bool:
    """Whether valid JSON ``text`` nests at most ``limit`` arrays/objects deep, decided by C-speed
    ``bytes`` operations (no Python loop over the text or the decoded value; ``text`` must be JSON a
    decoder accepted: its escapes are well formed and its strings closed).

    Method: drop escaped backslashes and escaped quotes (left to right, as a decoder pairs them), keep
    only quotes and brackets, drop the quoted parts (brackets inside strings), then remove every
    innermost ``[]`` pair once per pass: the passes needed to empty the text are its depth.
    """
    raw = _utf8(text)
    if raw.count(b"[") + raw.count(b"{") <= limit:  # too few brackets to nest deeper
        return True
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    shape = raw.translate(_SQUARE, _NOT_STRUCTURE).replace(b'""', b"")  # most strings hold no bracket
    if b'"' in shape:
        shape = b"".join(shape.split(b'"')[::2])
    if len(shape) <= 2 * limit:
        return True
    for _ in range(limit):
        shape = shape.replace(b"[]", b"")
        if not shape:
            return True
    return False


def _may_hold_big_int(text: str | bytes) -> bool:
    """Whether ``text`` has 19+ digits in a row (an integer beyond 64 bits, or a false alarm in a string)."""
    return _LONG_RUN in _utf8(text).translate(_DIGITS_AS_ZERO)


class SurrogateError(ValueError):
    """Decoded JSON holds a lone UTF-16 surrogate (escaped ``\\ud800`` or raw-encoded ``\\xed\\xa0\\x80``).

    Attributes:
        where: dotted path of the first string (or key's object) holding one, e.g. ``"item.a"``.
    """

    def __init__(self, where: str) -> None:
        super().__init__(f"lone UTF-16 surrogate in {where!r}; text must be valid Unicode")
        self.where = where


def _orjson_safe(text: str | bytes) -> bool:
    """Whether orjson may decode ``text`` to what the stdlib would: installed, and no 19+ digit run."""
    return orjson is not None and not _may_hold_big_int(text)


def loads_trusted(text: str | bytes) -> Any:
    """Decode JSON this package wrote itself (stored records, rollout state, items): orjson when
    :func:`_orjson_safe`, else (and for anything orjson refuses, e.g. the ``NaN`` the stdlib encoder
    writes) ``json.loads``; the result is the stdlib's either way.

    Raises:
        json.JSONDecodeError: not valid JSON (a ``ValueError``).
    """
    if _orjson_safe(text):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


def surrogate_path(value: Any) -> str | None:
    """Dotted path of the first string of decoded JSON ``value`` holding a lone surrogate, else ``None``
    (a key holding one names its object; ``"body"`` at the top). Iterative, no recursion."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, str):
            if _SURROGATE_CHAR.search(node):
                return path or "body"
        elif isinstance(node, dict):
            for key, child in node.items():
                if _SURROGATE_CHAR.search(str(key)):
                    return path or "body"
                stack.append((f"{path}.{key}" if path else str(key), child))
        elif isinstance(node, list):
            stack.extend((f"{path}[{i}]", child) for i, child in enumerate(node))
    return None


def _text_of(raw: bytes | bytearray) -> str:
    """``raw`` decoded strictly in the encoding RFC 8259 §8.1 detection names (UTF-8 unless a UTF-16/32
    pattern says otherwise): no byte sequence is let through with ``surrogatepass`` (the stdlib's
    ``json.loads(bytes)`` would keep a raw-encoded surrogate such as ``\\xed\\xa0\\x80``).

    Raises:
        SurrogateError: the only problem is raw-encoded surrogates (the field is named).
        ValueError: any other invalid byte sequence.
    """
    encoding = json.detect_encoding(raw)
    try:
        return bytes(raw).decode(encoding)
    except UnicodeDecodeError as exc:
        reason = f"not valid {encoding.upper()}: {exc.reason} at byte {exc.start}"
        try:  # locate the field of a raw-encoded surrogate, the one case worth naming
            loose = json.loads(bytes(raw).decode(encoding, "surrogatepass"), parse_constant=_refuse_constant)
        except (ValueError, RecursionError):
            raise ValueError(reason) from None
        raise SurrogateError(surrogate_path(loose) or "body") from None


def loads_strict(text: str | bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """The one decoding rule of request JSON (a body, or an ``arguments`` text).

    Accepted: strict RFC 8259 JSON (no ``NaN``/``Infinity``, no number beyond a double such as
    ``1e999``, no integer over Python's 4,300 digits), at most ``max_depth``
    nested arrays/objects, every string and key valid Unicode: no lone UTF-16
    surrogate, neither escaped (``"\\ud800"``) nor raw-encoded in the bytes
    (``\\xed\\xa0\\x80``), so whatever is accepted can be stored, echoed and
    encoded as UTF-8 later. Bytes are decoded strictly (UTF-8, or UTF-16/32 when
    RFC 8259 §8.1 detection says so).

    With ``orjson`` installed (``rft-sdk[fast]``) a document is decoded by it
    first: orjson accepts a strict subset of the rule (it refuses invalid UTF-8,
    every lone surrogate, NaN, UTF-16), so its result needs only the depth
    check. Anything it refuses, or that may hold an integer beyond 64 bits (19+
    digits in a row: orjson makes it a float), goes to the stdlib path, which
    decides and words the error: accepted documents and error messages are the
    same with or without orjson (``tests/reliability/test_decoding_rule.py``).

    Raises:
        SurrogateError: a lone surrogate (``.where`` names the field).
        ValueError: not valid strict JSON (``json.JSONDecodeError`` is a
            subclass), invalid bytes for its encoding, or nested too deep;
            the message says which.
    """
    if _orjson_safe(text):
        try:
            data = orjson.loads(text)
        except (orjson.JSONDecodeError, TypeError):
            pass  # the stdlib decides, and words the error
        else:
            if depth_within(text, max_depth):
                return data
            raise ValueError(f"JSON nests deeper than {max_depth} levels")
    raw_chars = isinstance(text, str)  # a str may hold surrogate characters itself
    if not isinstance(text, str):
        text = _text_of(text)
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise ValueError(f"JSON nests deeper than {max_depth} levels") from None
    if not depth_within(text, max_depth):
        raise ValueError(f"JSON nests deeper than {max_depth} levels")
    if _SURROGATE_ESCAPE.search(text) or (raw_chars and _SURROGATE_CHAR.search(text)):
        where = surrogate_path(data)
        if where is not None:
            raise SurrogateError(where)
    return data


def accepts(text: bytes, max_depth: int = MAX_JSON_DEPTH) -> bool:
    """Whether :func:`loads_strict` accepts ``text`` (without needing its value).

    With orjson a document it decodes is accepted once its depth is checked (its
    refusals are a subset of the rule's; an integer beyond 64 bits, which it would
    make a float, is accepted by both), so the search for long digit runs is skipped.
    """
    if orjson is not None:
        try:
            orjson.loads(text)
        except orjson.JSONDecodeError:
            pass  # the rule decides (the stdlib may accept what orjson refuses, e.g. 1e400)
        else:
            return depth_within(text, max_depth)
    try:
        loads_strict(text, max_depth)
    except ValueError:
        return False
    return True


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
