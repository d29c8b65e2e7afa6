"""``MemoryStore``: the bounded in-process store (the default)."""

from __future__ import annotations

import contextlib
import dataclasses
import heapq
from collections import OrderedDict

from ._base import RolloutStore
from ._bounds import DEFAULT_MAX_ROLLOUT_BYTES, DEFAULT_MAX_TOTAL_BYTES, Bounds
from ._clock import Clock, system_clock
from ._errors import RolloutTooLargeError
from ._locks import KeyedLocks
from ._records import Delta, GradeRecord, StoredRollout

__all__ = ["MemoryStore"]


@dataclasses.dataclass
class _Entry:
    rollout: StoredRollout  # the store's own copy (lists not shared with callers)
    expires_at: float
    nbytes: int


def _copy(rollout: StoredRollout) -> StoredRollout:
    """A copy whose trajectory list and responses dict can be changed without touching ``rollout``'s."""
    copy = dataclasses.replace(rollout, trajectory=list(rollout.trajectory), responses=dict(rollout.responses))
    copy._persisted = rollout._persisted
    return copy


class MemoryStore(RolloutStore):
    """Bounded in-process store (the default).

    Args:
        ttl_s: seconds after its last save at which a rollout expires
            (rollouts that are never graded are dropped this way).
        max_rollouts: capacity; saving beyond it evicts the least recently
            saved rollout. Grade records and tombstones use the same TTL and capacity.
        max_rollout_bytes: budget of one rollout (JSON bytes of its records,
            responses, state and item; default 16 MiB); ``save`` beyond it
            raises ``RolloutTooLargeError`` and keeps the previous content.
        max_total_bytes: budget of all rollouts (default 512 MiB); beyond it
            the least recently saved rollouts are evicted.
        clock: time source in seconds (default ``time.time``; tests pass a ``FakeClock``).

    Counters (``stats()``): ``rollouts``, ``evicted`` (capacity or bytes),
    ``expired`` (TTL), ``released`` (after grading); ``astats()`` adds ``bytes``.

    Per-process: run one worker per instance (``multiprocess_safe`` is False).

    Raises:
        ValueError: a bound is not positive, or the per-rollout budget exceeds the total.
    """

    def __init__(self, ttl_s: float = 3600.0, max_rollouts: int = 10_000, *,
                 max_rollout_bytes: int = DEFAULT_MAX_ROLLOUT_BYTES, max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
                 clock: Clock = system_clock) -> None:
        self.bounds = Bounds(ttl_s, max_rollouts, max_rollout_bytes, max_total_bytes)
        self.ttl_s, self.max_rollouts = self.bounds.ttl_s, self.bounds.max_rollouts
        self.clock = clock
        # order = least recently saved first
        self._rollouts: OrderedDict[str, _Entry] = OrderedDict()
        self._grades: OrderedDict[str, tuple[dict[str, GradeRecord], float]] = OrderedDict()
        self._tombstones: OrderedDict[str, tuple[str, float]] = OrderedDict()
        self._release_heap: list[tuple[float, str]] = []
        self._release_at: dict[str, float] = {}
        self._locks = KeyedLocks()
        self.bytes = 0
        self.evicted = 0
        self.expired = 0
        self.released = 0

    def __repr__(self) -> str:
        return f"MemoryStore(ttl_s={self.ttl_s}, max_rollouts={self.max_rollouts})"

    def lock(self, trace_id: str) -> contextlib.AbstractAsyncContextManager[None]:
        return self._locks.hold(trace_id)

    def _drop(self, trace_id: str) -> bool:
        entry = self._rollouts.pop(trace_id, None)
        self._release_at.pop(trace_id, None)
        if entry is None:
            return False
        self.bytes -= entry.nbytes
        return True

    def _sweep(self, now: float) -> None:
        while self._rollouts:
            trace_id, entry = next(iter(self._rollouts.items()))
            if entry.expires_at > now:
                break
            self._drop(trace_id)
            self.expired += 1
        while self._release_heap and self._release_heap[0][0] <= now:
            due, trace_id = heapq.heappop(self._release_heap)
            if self._release_at.get(trace_id) == due and self._drop(trace_id):
                self.released += 1
        for table in (self._grades, self._tombstones):
            while table and next(iter(table.values()))[1] <= now:
                table.popitem(last=False)

    async def load(self, trace_id: str) -> StoredRollout | None:
        self._sweep(self.clock())
        entry = self._rollouts.get(trace_id)
        return None if entry is None else _copy(entry.rollout)

    async def save(self, rollout: StoredRollout) -> None:
        now = self.clock()
        self._sweep(now)
        delta = Delta.of(rollout)
        entry = self._rollouts.get(rollout.trace_id)
        if entry is not None and (delta.rewrite or entry.rollout.generation != delta.generation):
            delta = dataclasses.replace(delta, rewrite=True)
        if delta.nbytes > self.bounds.max_rollout_bytes:
            raise RolloutTooLargeError(rollout.trace_id, delta.nbytes, self.bounds.max_rollout_bytes)
        delta.committed(rollout)
        old = self._rollouts.pop(rollout.trace_id, None)
        self.bytes += delta.nbytes - (old.nbytes if old else 0)
        self._rollouts[rollout.trace_id] = _Entry(_copy(rollout), now + self.ttl_s, delta.nbytes)
        while len(self._rollouts) > self.max_rollouts or self.bytes > self.bounds.max_total_bytes:
            trace_id = next(iter(self._rollouts))
            self._drop(trace_id)
            self.evicted += 1

    async def release(self, trace_id: str, after_s: float = 0.0) -> None:
        if after_s <= 0:
            if self._drop(trace_id):
                self.released += 1
            return
        due = self.clock() + after_s
        self._release_at[trace_id] = due
        heapq.heappush(self._release_heap, (due, trace_id))

    async def save_grade(self, record: GradeRecord) -> None:
        now = self.clock()
        self._sweep(now)
        entry = self._grades.pop(record.trace_id, None)
        records = entry[0] if entry else {}
        records[record.grader] = record
        self._grades[record.trace_id] = (records, now + self.ttl_s)
        while len(self._grades) > self.max_rollouts:
            self._grades.popitem(last=False)

    async def load_grades(self, trace_id: str) -> dict[str, GradeRecord]:
        self._sweep(self.clock())
        entry = self._grades.get(trace_id)
        return dict(entry[0]) if entry else {}

    async def mark_graded(self, trace_id: str, digest: str, retention_s: float) -> None:
        now = self.clock()
        self._sweep(now)
        self._tombstones.pop(trace_id, None)
        if retention_s > 0:
            self._tombstones[trace_id] = (digest, now + retention_s)
        while len(self._tombstones) > self.max_rollouts:
            self._tombstones.popitem(last=False)

    async def graded_digest(self, trace_id: str) -> str | None:
        entry = self._tombstones.get(trace_id)
        return entry[0] if entry is not None and entry[1] > self.clock() else None

    def stats(self) -> dict[str, int]:
        return {
            "rollouts": len(self._rollouts),
            "evicted": self.evicted,
            "expired": self.expired,
            "released": self.released,
        }

    async def astats(self) -> dict[str, int]:
        self._sweep(self.clock())
        return {**self.stats(), "bytes": self.bytes}
