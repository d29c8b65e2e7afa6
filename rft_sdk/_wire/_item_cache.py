"""``ItemCache``: the JSON bytes of each live rollout's dataset item, kept per server process.

The hosted side sends the whole dataset line as ``item`` with every tool call
and grade of a rollout (about 14 KB for the retail example), the same bytes
each time. The request path keeps, per ``trace_id``, the item's bytes as a
body it accepted carried them (so they already passed the one decoding rule,
``rft_sdk._wire._json.loads_strict``); a later body of that rollout whose ``item``
is those bytes is decoded without decoding, checking or encoding the item
again (``rft_sdk._wire._hosted_body``).

Bounded by entries and by bytes (least recently used dropped first; a dropped
entry only makes the next call of its rollout decode the item again). Rollouts
of one group share a dataset line: equal items are kept once (interned), and
the interned object is what the request path hands to the store.
"""

from __future__ import annotations

from collections import OrderedDict

__all__ = ["DEFAULT_ITEM_CACHE_BYTES", "DEFAULT_ITEM_CACHE_ENTRIES", "ItemCache"]

#: Default bound of the distinct items' bytes one server process keeps (64 MiB).
DEFAULT_ITEM_CACHE_BYTES = 64 * 1024 * 1024
#: Default bound of the rollouts (``trace_id``\ s) it remembers an item for.
DEFAULT_ITEM_CACHE_ENTRIES = 20_000


class ItemCache:
    """LRU ``trace_id -> item JSON bytes`` with equal items stored once.

    Args:
        max_bytes: bound of the distinct items' bytes (0 disables the cache).
        max_entries: bound of the ``trace_id``\\ s remembered.

    Only bytes that the one decoding rule accepted as a request's ``item`` may
    be put here (the reuse skips every check on them).
    """

    def __init__(self, max_bytes: int = DEFAULT_ITEM_CACHE_BYTES,
                 max_entries: int = DEFAULT_ITEM_CACHE_ENTRIES) -> None:
        self.max_bytes, self.max_entries = max(0, int(max_bytes)), max(0, int(max_entries))
        self._by_trace: OrderedDict[str, bytes] = OrderedDict()
        self._interned: dict[bytes, bytes] = {}  # item bytes -> the one object kept for them
        self._users: dict[bytes, int] = {}  # the kept object -> trace_ids using it
        self.bytes = 0

    def get(self, trace_id: str) -> bytes | None:
        """The item bytes remembered for ``trace_id`` (marked most recently used), or ``None``."""
        raw = self._by_trace.get(trace_id)
        if raw is not None:
            self._by_trace.move_to_end(trace_id)
        return raw

    def put(self, trace_id: str, raw: bytes) -> bytes:
        """Remember ``raw`` as ``trace_id``'s item; return the interned equal object (``raw`` itself
        when no equal item is kept, or when ``raw`` alone exceeds the bound and is not kept)."""
        if self._by_trace.get(trace_id) is raw:
            self._by_trace.move_to_end(trace_id)
            return raw
        self.drop(trace_id)
        if len(raw) > self.max_bytes or not self.max_entries:
            return raw
        kept = self._interned.setdefault(raw, raw)
        users = self._users.get(kept, 0)
        if not users:
            self.bytes += len(kept)
        self._users[kept] = users + 1
        self._by_trace[trace_id] = kept
        while self._by_trace and (self.bytes > self.max_bytes or len(self._by_trace) > self.max_entries):
            self.drop(next(iter(self._by_trace)))
        return kept

    def drop(self, trace_id: str) -> None:
        """Forget ``trace_id``'s item (its bytes go when no other rollout uses them)."""
        raw = self._by_trace.pop(trace_id, None)
        if raw is None:
            return
        users = self._users[raw] - 1
        if users:
            self._users[raw] = users
        else:
            del self._users[raw], self._interned[raw]
            self.bytes -= len(raw)

    def __len__(self) -> int:
        return len(self._by_trace)
