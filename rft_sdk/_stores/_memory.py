"""``MemoryStore``: the bounded in-process store (the default)."""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
from collections import OrderedDict
from typing import Any, NamedTuple

from ._base import RolloutStore
from ._bounds import DEFAULT_MAX_ROLLOUT_BYTES, DEFAULT_MAX_TOTAL_BYTES, Bounds
from ._clock import Clock, system_clock
from ._errors import RolloutEvictedError, RolloutTooLargeError
from ._lazy import LazyTrajectory, ResponsesView, encode_answer, packed_append, packed_len
from ._locks import KeyedLocks
from ._records import GradeRecord, StoredRollout, _Persisted, encode_record_bytes, new_generation

__all__ = ["DEFAULT_MAX_MARK_BYTES", "MemoryStore"]

logger = logging.getLogger("rft_sdk")
#: Default budget of the marks a ``MemoryStore`` keeps (grade tombstones, evicted-rollout marks): 64 MiB,
#: about 250,000 marks; each is kept its whole documented time unless this budget is exceeded.
DEFAULT_MAX_MARK_BYTES = 64 * 1024 * 1024
_MARK_OVERHEAD = 200  # bytes of one mark besides its strings: dict slot, tuple, float (CPython 3.11, measured ~190)


class _Entry(NamedTuple):
    """One rollout as the store keeps it, stored as a plain ``tuple`` of atoms and bytearrays: none of
    them is ever tracked by the cyclic collector, and the tuple itself is untracked by its first
    collection, so a rollout at rest costs a full collection nothing (docs/performance.md). (Its
    answers' index, a dict, lives in ``MemoryStore._answers``: a tuple holding any dict stays tracked.)"""

    blob: bytearray  # the recorded calls' UTF-8 JSON (encode_record_bytes), one after another, append-only
    ends: bytearray  # their end offsets in blob, 8 bytes each (packed_append), append-only
    answers_blob: bytearray  # answers' JSON [status, body_text] (encode_answer), packed like the calls
    answers_ends: bytearray
    state_json: str
    item_json: bytes  # as the first call carried it (its bytes, or an encoding of the decoded item)
    created_at: float
    expires_at: float
    calls_bytes: int  # bytes of encoded records and answers
    nbytes: int  # calls_bytes + state and item JSON
    generation: str


_EXPIRES_AT = _Entry._fields.index("expires_at")
_ITEM_JSON = _Entry._fields.index("item_json")


def _mark_size(trace_id: str, digest: str) -> int:
    """Bytes one mark is counted for: its strings plus ``_MARK_OVERHEAD``."""
    return len(trace_id) + len(digest) + _MARK_OVERHEAD


class MemoryStore(RolloutStore):
    """Bounded in-process store (the default).

    Args:
        ttl_s: seconds after its last save at which a rollout expires
            (rollouts that are never graded are dropped this way).
        max_rollouts: capacity; saving beyond it evicts the least recently
            saved rollout. Grade records use the same TTL and capacity.
        max_rollout_bytes: budget of one rollout (JSON bytes of its records,
            responses, state and item; default 16 MiB); ``save`` beyond it
            raises ``RolloutTooLargeError`` and keeps the previous content.
        max_total_bytes: budget of all rollouts (default 512 MiB); beyond it
            the least recently saved rollouts are evicted.
        max_mark_bytes: budget of the marks (default 64 MiB, ~250,000): grade
            tombstones (kept for the ``retention_s`` given to ``mark_graded``,
            the server's ``graded_tombstone_s``) and marks of rollouts evicted
            while in progress (kept ``ttl_s``: their next load raises
            ``RolloutEvictedError``). A mark leaves early only when this budget
            is exceeded: counted as ``marks_dropped`` and logged (WARNING), never silent.
        clock: time source in seconds (default ``time.time``; tests pass a ``FakeClock``).

    Counters (``stats()``): ``rollouts``, ``evicted`` (capacity or bytes),
    ``expired`` (TTL), ``released`` (after grading), ``marks_dropped``;
    ``astats()`` adds ``bytes`` and ``mark_bytes``.

    Per-process: run one worker per instance (``multiprocess_safe`` is False).

    Layout (GC-friendly, docs/performance.md): a rollout's recorded calls,
    answers and item are kept as JSON in bytearrays, which the cyclic
    collector never walks; ``load``
    returns a ``StoredRollout`` whose ``trajectory`` is a
    :class:`~rft_sdk._stores._lazy.LazyTrajectory` (decoded on read) and whose
    ``responses`` is a :class:`~rft_sdk._stores._lazy.ResponsesView`, both
    O(1) to load; ``save`` of such a rollout encodes only the appended calls.

    Raises:
        ValueError: a bound is not positive, or the per-rollout budget exceeds the total.
    """

    def __init__(self, ttl_s: float = 3600.0, max_rollouts: int = 10_000, *,
                 max_rollout_bytes: int = DEFAULT_MAX_ROLLOUT_BYTES, max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
                 max_mark_bytes: int = DEFAULT_MAX_MARK_BYTES, clock: Clock = system_clock) -> None:
        self.bounds = Bounds(ttl_s, max_rollouts, max_rollout_bytes, max_total_bytes)
        self.ttl_s, self.max_rollouts = self.bounds.ttl_s, self.bounds.max_rollouts
        self.clock = clock
        # order = least recently saved first
        self._rollouts: OrderedDict[str, tuple[Any, ...]] = OrderedDict()  # _Entry fields, as a plain tuple
        self._answers: dict[str, dict[str, int]] = {}  # trace_id -> call_id -> position in answers_blob
        self._grades: OrderedDict[str, tuple[dict[str, GradeRecord], float]] = OrderedDict()
        self._tombstones: OrderedDict[str, tuple[str, float]] = OrderedDict()  # trace_id -> (digest, deadline)
        self._evicted: OrderedDict[str, float] = OrderedDict()  # trace_id -> deadline (ttl_s after the eviction)
        if int(max_mark_bytes) < 1:
            raise ValueError(f"max_mark_bytes must be >= 1 byte, got {max_mark_bytes!r}")
        self.max_mark_bytes, self.mark_bytes, self.marks_dropped = int(max_mark_bytes), 0, 0
        self._tombstones_sorted, self._next_tombstone_sweep = True, 0.0  # deadlines in insertion order?
        self._release_heap: list[tuple[float, str]] = []
        self._release_at: dict[str, float] = {}
        self._locks = KeyedLocks()
        self._id, self._generations = new_generation(), itertools.count()
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
        self._answers.pop(trace_id, None)
        self._release_at.pop(trace_id, None)
        if entry is None:
            return False
        self.bytes -= _Entry(*entry).nbytes
        return True

    def _sweep(self, now: float) -> None:
        while self._rollouts:
            trace_id, entry = next(iter(self._rollouts.items()))
            if entry[_EXPIRES_AT] > now:
                break
            self._drop(trace_id)
            self.expired += 1
        while self._release_heap and self._release_heap[0][0] <= now:
            due, trace_id = heapq.heappop(self._release_heap)
            if self._release_at.get(trace_id) == due and self._drop(trace_id):
                self.released += 1
        while self._grades and next(iter(self._grades.values()))[1] <= now:
            self._grades.popitem(last=False)
        while self._evicted and next(iter(self._evicted.values())) <= now:
            trace_id, _ = self._evicted.popitem(last=False)
            self.mark_bytes -= _mark_size(trace_id, "")
        if self._tombstones and self._tombstones_sorted:
            while self._tombstones and next(iter(self._tombstones.values()))[1] <= now:
                trace_id, (digest, _) = self._tombstones.popitem(last=False)
                self.mark_bytes -= _mark_size(trace_id, digest)
        elif self._tombstones and now >= self._next_tombstone_sweep:  # retentions differ: scan, at most once a second
            for trace_id, (digest, due) in list(self._tombstones.items()):
                if due <= now:
                    del self._tombstones[trace_id]
                    self.mark_bytes -= _mark_size(trace_id, digest)
            self._next_tombstone_sweep = now + 1.0

    def _trim_marks(self) -> None:
        """Drop the oldest marks while over ``max_mark_bytes``: counted and logged, never silent."""
        while self.mark_bytes > self.max_mark_bytes and (self._tombstones or self._evicted):
            if self._evicted:
                trace_id, _ = self._evicted.popitem(last=False)
                self.mark_bytes -= _mark_size(trace_id, "")
            else:
                trace_id, (digest, _) = self._tombstones.popitem(last=False)
                self.mark_bytes -= _mark_size(trace_id, digest)
            self.marks_dropped += 1
            if self.marks_dropped == 1 or self.marks_dropped % 10_000 == 0:
                logger.warning("MemoryStore: %d grade tombstone(s) / eviction mark(s) dropped before their time: "
                               "over max_mark_bytes=%d; a late call of such a rollout is no longer refused. "
                               "Raise MemoryStore(max_mark_bytes=...)", self.marks_dropped, self.max_mark_bytes)

    def _check_evicted(self, trace_id: str) -> None:
        """Raise ``RolloutEvictedError`` for a rollout evicted in progress (and not graded since)."""
        due = self._evicted.get(trace_id)
        if due is not None and due > self.clock() and self._graded(trace_id) is None:
            raise RolloutEvictedError(trace_id, "MemoryStore")

    async def load(self, trace_id: str) -> StoredRollout | None:
        self._sweep(self.clock())
        found = self._rollouts.get(trace_id)
        if found is None:
            if self._evicted:
                self._check_evicted(trace_id)
            return None
        entry, answers = _Entry(*found), self._answers[trace_id]
        rollout = StoredRollout(trace_id, None, entry.state_json,
                                LazyTrajectory(entry.blob, entry.ends, packed_len(entry.ends)),  # type: ignore[arg-type]
                                ResponsesView(answers, entry.answers_blob, entry.answers_ends),  # type: ignore[arg-type]
                                entry.created_at)
        rollout.set_item_json(entry.item_json)  # decoded only if read (a tool call rarely reads it)
        rollout._persisted = _Persisted(entry.generation, packed_len(entry.ends), None, len(answers), None,
                                        entry.calls_bytes, entry.item_json, entry.item_json)
        return rollout

    def known_item(self, trace_id: str) -> bytes | None:
        found = self._rollouts.get(trace_id)
        return None if found is None else found[_ITEM_JSON]

    async def load_for_call(self, trace_id: str) -> tuple[StoredRollout | None, bool]:
        return await self.load(trace_id), self._graded(trace_id) is not None

    async def save(self, rollout: StoredRollout) -> None:
        now = self.clock()
        self._sweep(now)
        found = self._rollouts.get(rollout.trace_id)
        old = None if found is None else _Entry(*found)
        old_answers = self._answers.get(rollout.trace_id, {})
        trajectory, responses, mark = rollout.trajectory, rollout.responses, rollout._persisted
        if (old is not None and isinstance(trajectory, LazyTrajectory) and trajectory.blob is old.blob
                and trajectory.n == packed_len(old.ends) and isinstance(responses, ResponsesView)
                and responses.index is old_answers):  # append-only: encode what was added since the load
            new_records = [encode_record_bytes(r) for r in trajectory.added]
            new_answers = [(k, encode_answer(v)) for k, v in responses.added.items() if k not in old_answers]
            calls_bytes, generation, base = old.calls_bytes, old.generation, old
        else:  # a new rollout, a stale copy, or a replaced prefix: written in full under a new generation
            if isinstance(trajectory, LazyTrajectory):
                new_records = [*map(trajectory.encoded, range(trajectory.n)),
                               *map(encode_record_bytes, trajectory.added)]
            else:
                new_records = [encode_record_bytes(r) for r in trajectory]
            new_answers = [(k, encode_answer(v)) for k, v in responses.items()]
            calls_bytes, generation, base = 0, f"{self._id}-{next(self._generations)}", None  # cheaper than uuid4
        calls_bytes += sum(map(len, new_records)) + sum(len(k.encode()) + len(v) for k, v in new_answers)
        same_item = old is not None and mark is not None and mark.generation == old.generation
        item_json = old.item_json if same_item and rollout.item_token() is mark.item else rollout.item_json  # type: ignore[union-attr]
        nbytes = calls_bytes + len(rollout.state_json.encode()) + len(item_json)
        if nbytes > self.bounds.max_rollout_bytes:
            raise RolloutTooLargeError(rollout.trace_id, nbytes, self.bounds.max_rollout_bytes)
        if base is not None:
            blob, ends, answers, answers_blob, answers_ends = (base.blob, base.ends, old_answers, base.answers_blob,
                                                               base.answers_ends)
        else:
            blob, ends, answers, answers_blob, answers_ends = bytearray(), bytearray(), {}, bytearray(), bytearray()
        for text in new_records:
            packed_append(blob, ends, text)
        for call_id, text in new_answers:
            answers[call_id] = len(answers)
            packed_append(answers_blob, answers_ends, text)
        if old is not None:
            del self._rollouts[rollout.trace_id]
            self.bytes -= old.nbytes
        elif rollout.trace_id in self._evicted:  # written afresh on purpose (not by the tool path): no longer lost
            self.mark_bytes -= _mark_size(rollout.trace_id, "")
            del self._evicted[rollout.trace_id]
        self.bytes += nbytes
        self._rollouts[rollout.trace_id] = tuple(_Entry(
            blob, ends, answers_blob, answers_ends, rollout.state_json, item_json, rollout.created_at,
            now + self.ttl_s, calls_bytes, nbytes, generation))
        self._answers[rollout.trace_id] = answers
        # the caller's object now views the stored copy (a second save of it appends again)
        rollout.trajectory = LazyTrajectory(blob, ends, packed_len(ends))  # type: ignore[assignment]
        rollout.responses = ResponsesView(answers, answers_blob, answers_ends)  # type: ignore[assignment]
        rollout._persisted = _Persisted(generation, packed_len(ends), None, len(answers), None, calls_bytes,
                                        rollout.item_token(), item_json)
        while len(self._rollouts) > self.max_rollouts or self.bytes > self.bounds.max_total_bytes:
            trace_id = next(iter(self._rollouts))
            graded = self._graded(trace_id) is not None  # graded, waiting for its release: nothing is lost
            self._drop(trace_id)
            self.evicted += 1
            if not graded:
                self._evicted[trace_id] = now + self.ttl_s
                self.mark_bytes += _mark_size(trace_id, "")
        self._trim_marks()

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
        old = self._tombstones.pop(trace_id, None)
        if old is not None:
            self.mark_bytes -= _mark_size(trace_id, old[0])
        if retention_s > 0:
            due = now + retention_s
            if self._tombstones and due < next(reversed(self._tombstones.values()))[1]:
                self._tombstones_sorted = False  # a shorter retention than before: sweep by scanning
            self._tombstones[trace_id] = (digest, due)
            self.mark_bytes += _mark_size(trace_id, digest)
        self._trim_marks()

    async def graded_digest(self, trace_id: str) -> str | None:
        return self._graded(trace_id)

    def _graded(self, trace_id: str) -> str | None:
        entry = self._tombstones.get(trace_id)
        return entry[0] if entry is not None and entry[1] > self.clock() else None

    def stats(self) -> dict[str, int]:
        return {
            "rollouts": len(self._rollouts),
            "evicted": self.evicted,
            "expired": self.expired,
            "released": self.released,
            "marks_dropped": self.marks_dropped,
        }

    async def astats(self) -> dict[str, int]:
        self._sweep(self.clock())
        return {**self.stats(), "bytes": self.bytes, "mark_bytes": self.mark_bytes}
