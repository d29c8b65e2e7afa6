"""The dataset item on the request path: as a request sent it, compared with the rollout's, decoded
only when something reads it.

Every tool call of a rollout carries the same ``item`` (hosted protocol §3).
The request path holds it as the JSON bytes the body carried
(``rft_sdk._wire._hosted_body``), compares those bytes with the bytes the store
holds for the rollout (identical bytes: a ``memcmp``, or the same object);
the tool gets a ``CallRollout`` (``rft_sdk._server._calls``) whose ``item`` is
decoded on first read, so a call whose tool never reads ``rollout.item`` never decodes it.

A request whose item differs from the one the rollout started with (by value:
other formatting of the same JSON is the same item) is refused: 409
``item_conflict`` (:func:`check_item`), nothing run or recorded. A rollout whose
first call carried no item takes the first item a later call carries.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from .._wire._endpoint import EndpointError
from .._wire._json import json_object, orjson

__all__ = ["SentItem", "canonical_item", "check_item", "item_fingerprint"]

_WS_AND_BRACES = b" \t\n\r{}"


class SentItem:
    """The non-empty ``item`` of one request: its JSON bytes (``raw``, as the body carried them) and/or
    its decoded value (``value``, when the body was decoded whole)."""

    __slots__ = ("raw", "value")

    def __init__(self, raw: bytes | None, value: dict[str, Any] | None) -> None:
        self.raw, self.value = raw, value

    @classmethod
    def of(cls, item: dict[str, Any] | None, item_json: bytes | None) -> SentItem | None:
        """The item of a request whose decoded ``item`` is ``item`` or whose item bytes are ``item_json``;
        ``None`` when it sent none, ``null`` or ``{}`` (no item: the rollout's own is used)."""
        if item_json is not None:
            return None if not item_json.strip(_WS_AND_BRACES) else cls(item_json, None)
        return cls(None, item) if item else None

    def json(self) -> bytes:
        """The item's JSON bytes: as sent, else encoded once (orjson when installed, else the stdlib)."""
        if self.raw is None:
            value = self.value or {}
            encoded = None
            if orjson is not None:
                try:  # a value the one rule accepted holds no NaN and no lone surrogate: orjson's bytes decode back
                    encoded = bytes(orjson.dumps(value))
                except TypeError:  # an integer beyond 64 bits
                    encoded = None
            self.raw = encoded or json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        return self.raw

    def decode(self) -> dict[str, Any]:
        """The item as a dict: the request's own decoded value, else a fresh decode of its bytes."""
        return self.value if self.value is not None else json_object("item", self.raw or b"{}")


def check_item(trace_id: str, held: bytes | None, held_value: dict[str, Any] | None, item: dict[str, Any] | None,
               item_json: bytes | None) -> tuple[SentItem | None, bytes | None]:
    """Compare a request's item with its rollout's; return ``(sent, adopt)``: the request's item
    (:class:`SentItem`, ``None`` when it sent none) and the JSON bytes the rollout takes as its item when it
    had none yet (else ``None``; the caller stores them with the call's answer).

    ``held``: the item's JSON bytes as the store holds them (``StoredRollout.held_item_json``); ``held_value``:
    the rollout's item when held as a dict instead (``held`` is then ``None``). ``item`` / ``item_json``: the
    request's decoded item, or its JSON bytes (:meth:`SentItem.of`). Nothing here calls the store: the
    handler reads what the store holds while the rollout is loaded, and records what changes with the answer.

    The cheap case first: the bytes the store holds are the bytes sent (the same
    object, or equal bytes; for an item decoded with its body, its orjson encoding,
    which is how such an item was stored). Otherwise both are decoded and compared
    by value.

    Raises:
        EndpointError: 409 ``item_conflict`` (counted ``item_conflicts``).
    """
    sent = SentItem.of(item, item_json)
    if sent is None:
        return None, None
    if held is not None:
        if sent.raw is not None and (held is sent.raw or held == sent.raw):
            return sent, None
        if sent.raw is None and orjson is not None and sent.json() == held:  # held as this path encoded it
            return sent, None
    if (held is not None and not held.strip(_WS_AND_BRACES)) or (held is None and not held_value):
        return sent, sent.json()  # the first call carried no item; this one does
    if sent.decode() == (held_value if held is None else json_object("item", held)):
        return sent, None
    message = (f"trace_id {trace_id!r} names a rollout started with another item; a trace_id names one "
               "rollout, and the hosted side sends its one dataset item with every call (not run, not recorded)")
    raise EndpointError(409, "item_conflict", message, counter="item_conflicts",
                        details=[{"field": "item", "problem": message}])


class _CanonicalCache:
    """LRU ``item bytes -> canonical JSON text`` (the stdlib's ``sort_keys`` compact text the grade
    fingerprint hashes), bounded by bytes: the rollouts of one group share their item."""

    def __init__(self, max_bytes: int = 16 * 1024 * 1024) -> None:
        self.max_bytes, self.bytes = max_bytes, 0
        self._entries: OrderedDict[bytes, str] = OrderedDict()

    def get(self, raw: bytes, decode: Callable[[], Any]) -> str:
        text = self._entries.get(raw)
        if text is not None:
            self._entries.move_to_end(raw)
            return text
        text = json.dumps(decode(), sort_keys=True, separators=(",", ":"))
        size = len(raw) + len(text)
        if size <= self.max_bytes:
            self._entries[raw] = text
            self.bytes += size
            while self.bytes > self.max_bytes:
                old_raw, old_text = self._entries.popitem(last=False)
                self.bytes -= len(old_raw) + len(old_text)
        return text


_CANONICAL = _CanonicalCache()


def canonical_item(raw: bytes, decode: Callable[[], Any]) -> str:
    """``json.dumps(item, sort_keys=True, separators=(",", ":"))`` of the item whose JSON bytes are ``raw``
    (``decode()`` gives the item, called only when this text is not cached), once per distinct item bytes."""
    return _CANONICAL.get(raw, decode)


def sha256_hex(*parts: str) -> str:
    """SHA-256 hex of the UTF-8 concatenation of ``parts`` (streamed: nothing joined)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8"))
    return digest.hexdigest()


def item_fingerprint(item_json: bytes, rest: str) -> str:
    """SHA-256 hex of ``'{"item":' + canonical item text + ',' + rest[1:]``: the grade fingerprint of a request
    whose item is the JSON bytes ``item_json`` and whose other members' canonical JSON object text is ``rest``
    (``'{"sample":...,"trace_id":...}'``; ``"item"`` sorts before both). The item's canonical text is
    computed once per distinct item bytes (:func:`canonical_item`) and streamed into the hash."""
    return sha256_hex('{"item":', canonical_item(item_json, lambda: json_object("item", item_json)), ",", rest[1:])
