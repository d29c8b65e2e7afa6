"""``CallCache``: decoded trajectories kept per process, so loading a rollout
from SQLite or Redis reads and decodes only the calls appended since this
process last saw it (a load costs O(new calls), not O(the rollout)).

Entries are keyed by ``trace_id`` and valid for one stored generation; the
cache is bounded by bytes (least recently used dropped first). Records are
immutable (``ToolCallRecord`` is frozen), so entries share them with callers.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from .._definitions._rollout import ToolCallRecord
from .._wire._json import json_object
from ._records import StoredRollout

__all__ = ["DEFAULT_CACHE_BYTES", "CachedCalls", "CallCache", "hold_item"]

#: Default bound of one store object's cache: 64 MiB of record and response JSON.
DEFAULT_CACHE_BYTES = 64 * 1024 * 1024


@dataclasses.dataclass
class CachedCalls:
    """Calls of one stored generation of a rollout, oldest first."""

    generation: str
    records: list[ToolCallRecord]
    responses: dict[str, list[Any]]
    nbytes: int
    item_json: bytes | None = None  # the rollout's item as last read or written (checked when read)
    item_version: str = ""  # RedisStore: the stored item's version token ("" = unknown)
    # RedisStore's one-round-trip calls: the rollout's state, start and expiry as stored, and the stored copy's
    # stamp ``generation|version|calls`` ("" = unknown: the call takes the lock first)
    state_json: str | None = None
    created_at: float = 0.0
    expires_at: float = 0.0
    stamp: str = ""
    # lengths of ``records`` and ``responses`` when put: a list shared with a rollout (``CallCache.put(...,
    # share=True)``) that was changed after without being put again no longer matches them (``intact``)
    n_records: int = -1
    n_responses: int = -1

    def intact(self) -> bool:
        """Whether ``records`` and ``responses`` still have the lengths they had when put: false once a
        rollout sharing them appended or removed a call and did not save it (records are immutable, and the
        tool path only appends, or removes its own last call: ``_server._calls``)."""
        return len(self.records) == self.n_records and len(self.responses) == self.n_responses

    def snapshot(self) -> CachedCalls:
        """A copy whose list and dict are its own (for a read that awaits while a call may append)."""
        return dataclasses.replace(self, records=list(self.records), responses=dict(self.responses))


class CallCache:
    """LRU of ``CachedCalls`` by ``trace_id``, at most ``max_bytes`` in total.

    Args:
        max_bytes: bound in bytes of JSON (0 disables the cache).
    """

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.max_bytes = max(0, int(max_bytes))
        self._entries: OrderedDict[str, CachedCalls] = OrderedDict()
        self.bytes = 0

    def get(self, trace_id: str) -> CachedCalls | None:
        """The cached calls of ``trace_id`` (marked most recently used), or ``None``."""
        entry = self._entries.get(trace_id)
        if entry is not None:
            self._entries.move_to_end(trace_id)
        return entry

    def put(self, trace_id: str, generation: str, records: list[ToolCallRecord],
            responses: dict[str, list[Any]], nbytes: int, item_json: bytes | None = None,
            item_version: str = "", *, share: bool = False, **stored: Any) -> None:
        """Remember the calls of ``trace_id`` (copies of the list and dict, or with ``share`` the objects
        themselves: O(1), for a caller that hands them over, see ``CachedCalls.intact``) and the item's bytes
        (counted as part of ``nbytes``), evicting beyond the bound; ``stored``: ``CachedCalls``'
        ``state_json``, ``created_at``, ``expires_at`` and ``stamp`` (RedisStore)."""
        self.drop(trace_id)
        if nbytes > self.max_bytes:
            return
        if not share:
            records, responses = list(records), dict(responses)
        self._entries[trace_id] = CachedCalls(generation, records, responses, nbytes, item_json, item_version,
                                              **stored, n_records=len(records), n_responses=len(responses))
        self.bytes += nbytes
        while self.bytes > self.max_bytes:
            _, entry = self._entries.popitem(last=False)
            self.bytes -= entry.nbytes

    def drop(self, trace_id: str) -> None:
        """Forget ``trace_id``."""
        entry = self._entries.pop(trace_id, None)
        if entry is not None:
            self.bytes -= entry.nbytes

    def __len__(self) -> int:
        return len(self._entries)


def hold_item(rollout: StoredRollout, text: str | bytes | None, cached: CachedCalls | None,
              check: Callable[[Callable[[], dict[str, Any]], str], dict[str, Any]]) -> None:
    """Hold a loaded rollout's item bytes (``text``, as read from the backing storage) on ``rollout``.

    Equal to the bytes cached for it: the cached object is held (it was checked
    when first read), nothing is decoded. Else the bytes are decoded now, by
    ``check(build, trace_id)`` (a store's ``_decode``: a corrupt item is its
    ``StoreError``), and held with their value."""
    raw = (text or "{}").encode("utf-8") if isinstance(text, str) else bytes(text or b"{}")
    if cached is not None and cached.item_json is not None and cached.item_json == raw:
        rollout.set_item_json(cached.item_json)
        return
    rollout.set_item_json(raw, check(lambda: json_object("item", raw), rollout.trace_id))
