"""The JSON codec of the package: pure functions from text to values and back, calling no other module
of the package (a leaf: the request path, the stores and the surfaces all use it, as they would use
``json``).

* :func:`loads_strict`: the one decoding rule of request JSON (a body, an ``arguments`` text, a sample's
  ``output_text``), with orjson as an accelerator that never changes a verdict;
* :func:`loads_trusted` / :func:`json_object`: JSON this package wrote itself (stored records, rollout
  state, an item whose bytes passed the rule);
* :func:`encode_json`, :func:`clean_text`, :func:`clean_value`: JSON that always encodes as UTF-8 (a lone
  UTF-16 surrogate becomes U+FFFD, RFC 8259 §8.2).

Errors are ``ValueError`` (``json.JSONDecodeError``, :class:`SurrogateError`): a codec knows nothing of
HTTP; the stage that decodes a request turns them into the ``EndpointError`` it answers
(``rft_sdk._wire._body``, ``rft_sdk._server._calls``).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ..protocol import MAX_JSON_DEPTH

orjson: Any
try:  # optional accelerator (rft-sdk[fast]); every refusal is still decided by the stdlib decoder below
    import orjson
except ImportError:  # pragma: no cover - exercised where orjson is absent
    orjson = None

__all__ = ["SurrogateError", "accepts", "clean_text", "clean_value", "depth_within", "encode_json", "json_object",
           "loads_strict", "loads_trusted", "orjson", "surrogate_path"]

_SURROGATE = re.compile("[\ud800-\udfff]")


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


def json_object(what: str, text: str | bytes) -> dict[str, Any]:
    """Parse ``text`` as a JSON object.

    Raises:
        ValueError: not JSON, or not an object (message names ``what``).
    """
    try:
        data = loads_trusted(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"stored {what} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"stored {what} must be a JSON object, got {type(data).__name__}")
    return data
