"""Decode a hosted tool-call or grade body without decoding its ``item`` again.

The hosted side sends the rollout's dataset line as ``item`` with every call
(``{"type", "call_id", "trace_id", "name", "arguments", "item": {...}}``; a
grade: ``{"sample", "item", "trace_id"}``). :func:`decode_request` gives what
:func:`rft_sdk._wire._body.decode_object` gives, by the same rule and with the same
errors, plus the item's JSON bytes, and does the item's part of the work once
per rollout and process:

* **the rollout's item again** (its bytes are in the ``ItemCache`` under the
  body's ``trace_id``): the top level of the body is walked with a few C-speed
  regular-expression matches, the value of ``"item"`` is compared with the
  known bytes (``bytes.startswith``: a ``memcmp``), and only the rest of the body
  (the item replaced by ``null``, a few hundred bytes) is decoded by
  ``loads_strict``. The known bytes passed the rule when first seen, and a JSON
  object is prefix-free, so the body is accepted exactly when the rule accepts
  it, and decodes to the same value;
* **first sight** (``"item"`` is the last member, as the hosted tool-call body
  sends it): the item's bytes are cut out the same way, checked once by
  ``loads_strict`` on their own, and returned to be remembered;
* **anything else** (a body under 2 KB, no ``trace_id``, an escaped key, a nested value the walk
  will not follow, an error of any kind): ``decode_object`` on the whole body,
  which decides and words every refusal.

The item itself is not decoded on these paths: the caller holds its bytes and
decodes them when something reads the item (``Rollout.item``, a grader).
"""

from __future__ import annotations

import re
from typing import Any

from ..protocol import MAX_JSON_DEPTH
from ._body import decode_object
from ._item_cache import ItemCache
from ._json import accepts, loads_strict

__all__ = ["decode_call", "decode_request", "is_bare_arguments", "trace_id_hint"]

_HOSTED_KEYS = ("call_id", "trace_id", "arguments")

_WS = rb"[ \t\n\r]*"
_OPEN = re.compile(_WS + rb"\{")
_KEY = re.compile(_WS + rb'"([^"\\\x00-\x1f]*)"' + _WS + rb":" + _WS)  # a key without escapes, and its colon
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_SCALAR = re.compile(rb"[-+.0-9A-Za-z]+")  # a number, true, false or null (the rule checks which)
_NEXT = re.compile(_WS + rb"([,}])")
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')  # a string or a bracket, inside a nested value
_TRACE_ID = re.compile(_WS + rb":" + _WS + rb'"([^"\\\x00-\x1f]{1,1000})"')
_MAX_TOKENS = 64  # a nested value other than the item longer than this: not walked (decoded whole)
_SMALL = 2048  # bytes: a body this small is decoded whole (as cheap as the walk)


def trace_id_hint(raw: bytes) -> str | None:
    """The text of the first ``"trace_id": "..."`` member in ``raw`` (unescaped ones only), or ``None``.

    Only a hint for finding the rollout's known item: the member may be nested,
    and nothing is decided by it."""
    at = raw.find(b'"trace_id"')
    if at < 0:
        return None
    match = _TRACE_ID.match(raw, at + 10)
    if match is None:
        return None
    try:
        return match.group(1).decode("utf-8")
    except UnicodeDecodeError:
        return None


def _nested_end(raw: bytes, pos: int) -> int | None:
    """End of the array/object starting at ``pos`` (strings skipped), or ``None`` past ``_MAX_TOKENS``."""
    depth = 0
    for count, token in enumerate(_TOKEN.finditer(raw, pos)):
        if count > _MAX_TOKENS:
            return None
        first = raw[token.start()]
        if first in b"[{":
            depth += 1
        elif first in b"]}":
            depth -= 1
            if depth == 0:
                return token.end()
    return None


def _item_span(raw: bytes, known: bytes | None) -> tuple[int, int] | None:
    """Where the value of the body's one top-level ``"item"`` member is, by walking the top level.

    With ``known``: that value must start with exactly these bytes (then it *is*
    them: an object is prefix-free). Without: ``"item"`` must be the last member,
    whose value then runs to the body's closing brace. ``None``: not found so."""
    opened = _OPEN.match(raw)
    if opened is None:
        return None
    pos, span = opened.end(), None
    while True:
        key = _KEY.match(raw, pos)
        if key is None:
            return None
        pos = key.end()
        if key.group(1) == b"item":
            if span is not None:  # a second "item": the last one counts, left to the whole decode
                return None
            if known is not None:
                if not raw.startswith(known, pos):
                    return None
                span = (pos, pos + len(known))
                pos += len(known)
            else:
                closing = len(raw.rstrip(b" \t\n\r")) - 1  # the body's closing brace (checked by the rule)
                if raw[pos:pos + 1] != b"{":
                    return None
                return pos, len(raw[:closing].rstrip(b" \t\n\r"))
        else:
            first = raw[pos:pos + 1]
            if first == b'"':
                value = _STRING.match(raw, pos)
                if value is None:
                    return None
                pos = value.end()
            elif first in (b"{", b"["):
                end_at = _nested_end(raw, pos)
                if end_at is None:
                    return None
                pos = end_at
            else:
                value = _SCALAR.match(raw, pos)
                if value is None:
                    return None
                pos = value.end()
        after = _NEXT.match(raw, pos)
        if after is None:
            return None
        pos = after.end()
        if after.group(1) == b"}":
            return span


def _decode_around(raw: bytes, start: int, end: int) -> dict[str, Any] | None:
    """``raw`` decoded by the one rule with ``raw[start:end]`` (the item) replaced by ``null``; the
    returned object has no ``"item"`` key. ``None`` when the rule refuses it (the caller decodes the
    whole body to word the refusal)."""
    try:
        data = loads_strict(raw[:start] + b"null" + raw[end:])
    except ValueError:
        return None
    if not isinstance(data, dict) or data.pop("item", 0) is not None:
        return None
    return data


def decode_request(raw: bytes, items: ItemCache | None) -> tuple[dict[str, Any], bytes | None]:
    """Decode a hosted request body; return ``(data, item_json)``.

    ``item_json`` is the body's ``item`` as the JSON bytes it carried (``data``
    then has no ``"item"`` key; the bytes satisfy the one decoding rule and are
    remembered in ``items`` under the body's ``trace_id``), or ``None`` (``data``
    is then exactly ``decode_object(raw)``, ``"item"`` included when sent).

    Raises:
        EndpointError: what ``decode_object`` raises (400 ``malformed_json`` or
            ``invalid_request``), for exactly the bodies it refuses.
    """
    if (len(raw) >= _SMALL and items is not None and items.max_entries
            and (hint := trace_id_hint(raw)) is not None):
        known = items.get(hint)
        span = _item_span(raw, known) if known is not None else None
        if span is not None and (data := _decode_around(raw, *span)) is not None:
            return data, known
        span = _item_span(raw, None)  # first sight: the item as the last member
        if span is not None and (data := _decode_around(raw, *span)) is not None:
            item = raw[span[0]:span[1]]
            # once: exactly one JSON value (so the cut was right: it starts with "{", so an object), nested at
            # most as deep as the body's rule allows an item, one level below the top
            trace_id = data.get("trace_id")
            if isinstance(trace_id, str) and accepts(item, MAX_JSON_DEPTH - 1):
                return data, items.put(trace_id, item)
    return decode_object(raw), None


def is_bare_arguments(data: dict[str, Any]) -> bool:
    """Whether a decoded ``/tools/{name}`` body is the bare arguments rather than a hosted tool call (the
    dialect of Azure's tool tests: none of ``call_id``, ``trace_id``, ``arguments``, and no
    ``"type": "function_call"``)."""
    return data.get("type") != "function_call" and not any(key in data for key in _HOSTED_KEYS)


def decode_call(raw: bytes, items: ItemCache | None) -> tuple[dict[str, Any], bytes | None, bool]:
    """A tool-call body decoded (:func:`decode_request`), and whether it is the bare arguments
    (:func:`is_bare_arguments`): ``(data, item_json, bare)``.

    Raises:
        EndpointError: what :func:`decode_request` raises.
    """
    data, item_json = decode_request(raw, items)
    return data, item_json, is_bare_arguments(data)
