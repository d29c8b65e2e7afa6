"""Per-rollout storage: the ``RolloutStore`` interface and the bounded in-memory default.

The tool server talks to the store only through ``RolloutStore``; everything
it stores is JSON-shaped (``state_json`` is a JSON text, records serialise with
``ToolCallRecord.to_dict``), so a SQLite or Redis store can implement the same
five methods without any change to tool or grader code. A store shared by
several worker processes must also make ``lock`` exclusive across processes
and set ``multiprocess_safe = True`` (``SQLiteStore`` does both);
``MemoryStore`` is per-process, so run one worker per store instance
(``rft serve --workers N`` refuses N > 1 with it).

Shared by every store here: JSON (de)serialisation of ``StoredRollout`` and
``GradeRecord`` (``to_json``/``from_json``), argument validation
(``check_bounds``), the per-key in-process locks (``KeyedLocks``) and the
names of the ``stats()`` counters (``STATS_KEYS``).
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import heapq
import json
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

import anyio

from ._rollout import ToolCallRecord

__all__ = ["GradeRecord", "KeyedLocks", "MemoryStore", "RolloutStore", "STATS_KEYS", "StoredRollout",
           "check_bounds"]

#: Keys of ``stats()`` for the stores in this package: live rollouts, and
#: rollouts dropped by capacity (``evicted``), TTL (``expired``) and after
#: grading (``released``).
STATS_KEYS = ("rollouts", "evicted", "expired", "released")


def _from_json_object(cls_name: str, text: str | bytes) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"stored {cls_name} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"stored {cls_name} must be a JSON object, got {type(data).__name__}")
    return data


@dataclasses.dataclass
class StoredRollout:
    """Everything the server keeps for one rollout.

    Attributes:
        trace_id: the rollout's ``trace_id``.
        item: the dataset line from the first call (JSON object).
        state_json: the rollout state as JSON text (``"{}"`` initially).
        trajectory: recorded calls, oldest first.
        responses: ``call_id -> [status, body_text]`` of completed calls, for
            idempotent replay of retried requests.
        created_at: unix seconds of the first call.
    """

    trace_id: str
    item: dict[str, Any] = dataclasses.field(default_factory=dict)
    state_json: str = "{}"
    trajectory: list[ToolCallRecord] = dataclasses.field(default_factory=list)
    responses: dict[str, list[Any]] = dataclasses.field(default_factory=dict)
    created_at: float = dataclasses.field(default_factory=time.time)

    def to_json(self) -> str:
        """JSON text ``{"trace_id", "item", "state_json", "trajectory": [record...],
        "responses", "created_at"}`` (records as ``ToolCallRecord.to_dict``)."""
        return json.dumps({
            "trace_id": self.trace_id, "item": self.item, "state_json": self.state_json,
            "trajectory": [r.to_dict() for r in self.trajectory], "responses": self.responses,
            "created_at": self.created_at,
        }, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> StoredRollout:
        """Inverse of :meth:`to_json`.

        Raises:
            ValueError: ``text`` is not a serialised ``StoredRollout``.
        """
        data = _from_json_object("StoredRollout", text)
        try:
            return cls(trace_id=data["trace_id"], item=data["item"], state_json=data["state_json"],
                       trajectory=[ToolCallRecord.from_dict(r) for r in data["trajectory"]],
                       responses=data["responses"], created_at=float(data["created_at"]))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"stored StoredRollout lacks or mistypes a field: {exc!r}") from exc


@dataclasses.dataclass(frozen=True)
class GradeRecord:
    """The result of one successful grade, kept after the rollout is released
    so that a retried identical grade request gets the same answer.

    Attributes:
        trace_id: graded rollout.
        grader: grader name.
        fingerprint: SHA-256 hex of the canonical JSON grading request.
        score: the score answered.
        details: ``{"subscores": {...}, "reasons": [...]}``.
    """

    trace_id: str
    grader: str
    fingerprint: str
    score: float
    details: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable ``{"trace_id", "grader", "fingerprint", "score", "details"}``."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GradeRecord:
        """Inverse of :meth:`to_dict`.

        Raises:
            ValueError: a field is missing.
        """
        try:
            return cls(**{f.name: data[f.name] for f in dataclasses.fields(cls)})
        except (KeyError, TypeError) as exc:
            raise ValueError(f"stored GradeRecord lacks field {exc}") from exc

    def to_json(self) -> str:
        """JSON text of :meth:`to_dict`."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> GradeRecord:
        """Inverse of :meth:`to_json`.

        Raises:
            ValueError: ``text`` is not a serialised ``GradeRecord``.
        """
        return cls.from_dict(_from_json_object("GradeRecord", text))


def check_bounds(ttl_s: float, max_rollouts: int) -> tuple[float, int]:
    """Validate a store's TTL (seconds) and capacity (rollouts); return them as ``(float, int)``.

    Raises:
        ValueError: ``ttl_s <= 0`` (or NaN) or ``max_rollouts < 1``.
    """
    if not ttl_s > 0:
        raise ValueError(f"ttl_s must be > 0 seconds, got {ttl_s!r}")
    if int(max_rollouts) < 1:
        raise ValueError(f"max_rollouts must be >= 1, got {max_rollouts!r}")
    return float(ttl_s), int(max_rollouts)


class KeyedLocks:
    """In-process async locks keyed by string (e.g. ``trace_id``), created on
    first use and dropped when no task holds or waits for them, so memory stays
    proportional to the keys in use."""

    def __init__(self) -> None:
        self._locks: dict[str, list[Any]] = {}  # key -> [anyio.Lock, holders + waiters]

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        """Hold the lock for ``key`` (FIFO among waiters of this process)."""
        entry = self._locks.get(key)
        if entry is None:
            entry = self._locks[key] = [anyio.Lock(), 0]
        entry[1] += 1
        try:
            async with entry[0]:
                yield
        finally:
            entry[1] -= 1
            if entry[1] == 0:
                del self._locks[key]

    def __len__(self) -> int:
        return len(self._locks)


class RolloutStore(abc.ABC):
    """Async storage interface for rollouts and grade records.

    All methods are called from the server's event loop. ``lock`` gives
    mutual exclusion per ``trace_id``: the server holds it for a whole tool
    call or grade, so calls of one rollout are serialised while different
    rollouts proceed concurrently.

    Attributes:
        multiprocess_safe: ``True`` when several processes (e.g. uvicorn
            workers) may each build an instance over the same backing storage
            and see one consistent state, with ``lock`` exclusive across them.
            ``rft serve --workers N`` (N > 1) refuses stores where it is False.
    """

    multiprocess_safe: bool = False

    @abc.abstractmethod
    def lock(self, trace_id: str) -> contextlib.AbstractAsyncContextManager[None]:
        """Async context manager holding the per-rollout lock for ``trace_id``."""

    @abc.abstractmethod
    async def load(self, trace_id: str) -> StoredRollout | None:
        """The stored rollout, or ``None`` when unknown, expired or released."""

    @abc.abstractmethod
    async def save(self, rollout: StoredRollout) -> None:
        """Create or replace the rollout (refreshes its TTL)."""

    @abc.abstractmethod
    async def release(self, trace_id: str, after_s: float = 0.0) -> None:
        """Drop the rollout now (``after_s <= 0``) or ``after_s`` seconds from now."""

    @abc.abstractmethod
    async def save_grade(self, record: GradeRecord) -> None:
        """Keep a grade result (bounded and expiring like rollouts)."""

    @abc.abstractmethod
    async def load_grades(self, trace_id: str) -> dict[str, GradeRecord]:
        """Grade records of ``trace_id`` by grader name (empty when none)."""

    def stats(self) -> dict[str, int]:
        """Counters for ``/metrics`` (e.g. live rollouts, evictions); may be empty."""
        return {}


class MemoryStore(RolloutStore):
    """Bounded in-process store (the default).

    Args:
        ttl_s: seconds after its last save at which a rollout expires
            (rollouts that are never graded are dropped this way).
        max_rollouts: capacity; saving beyond it evicts the least recently
            saved rollout. Grade records use the same TTL and capacity.

    Counters (``stats()``): ``rollouts``, ``evicted`` (capacity), ``expired``
    (TTL), ``released`` (after grading).

    Raises:
        ValueError: ``ttl_s <= 0`` or ``max_rollouts < 1``.
    """

    def __init__(self, ttl_s: float = 3600.0, max_rollouts: int = 10_000) -> None:
        self.ttl_s, self.max_rollouts = check_bounds(ttl_s, max_rollouts)
        # trace_id -> (rollout, expires_at monotonic); order = least recently saved first
        self._rollouts: OrderedDict[str, tuple[StoredRollout, float]] = OrderedDict()
        self._grades: OrderedDict[str, tuple[dict[str, GradeRecord], float]] = OrderedDict()
        self._release_heap: list[tuple[float, str]] = []
        self._release_at: dict[str, float] = {}
        self._locks = KeyedLocks()
        self.evicted = 0
        self.expired = 0
        self.released = 0

    def lock(self, trace_id: str) -> contextlib.AbstractAsyncContextManager[None]:
        return self._locks.hold(trace_id)

    def _sweep(self, now: float) -> None:
        while self._rollouts:
            trace_id, (_, expires_at) = next(iter(self._rollouts.items()))
            if expires_at > now:
                break
            del self._rollouts[trace_id]
            self._release_at.pop(trace_id, None)
            self.expired += 1
        while self._release_heap and self._release_heap[0][0] <= now:
            due, trace_id = heapq.heappop(self._release_heap)
            if self._release_at.get(trace_id) == due:
                del self._release_at[trace_id]
                if self._rollouts.pop(trace_id, None) is not None:
                    self.released += 1
        while self._grades:
            trace_id, (_, expires_at) = next(iter(self._grades.items()))
            if expires_at > now:
                break
            del self._grades[trace_id]

    async def load(self, trace_id: str) -> StoredRollout | None:
        self._sweep(time.monotonic())
        entry = self._rollouts.get(trace_id)
        return None if entry is None else entry[0]

    async def save(self, rollout: StoredRollout) -> None:
        now = time.monotonic()
        self._sweep(now)
        self._rollouts[rollout.trace_id] = (rollout, now + self.ttl_s)
        self._rollouts.move_to_end(rollout.trace_id)
        while len(self._rollouts) > self.max_rollouts:
            trace_id, _ = self._rollouts.popitem(last=False)
            self._release_at.pop(trace_id, None)
            self.evicted += 1

    async def release(self, trace_id: str, after_s: float = 0.0) -> None:
        if after_s <= 0:
            self._release_at.pop(trace_id, None)
            if self._rollouts.pop(trace_id, None) is not None:
                self.released += 1
            return
        due = time.monotonic() + after_s
        self._release_at[trace_id] = due
        heapq.heappush(self._release_heap, (due, trace_id))

    async def save_grade(self, record: GradeRecord) -> None:
        now = time.monotonic()
        self._sweep(now)
        entry = self._grades.pop(record.trace_id, None)
        records = entry[0] if entry else {}
        records[record.grader] = record
        self._grades[record.trace_id] = (records, now + self.ttl_s)
        while len(self._grades) > self.max_rollouts:
            self._grades.popitem(last=False)

    async def load_grades(self, trace_id: str) -> dict[str, GradeRecord]:
        self._sweep(time.monotonic())
        entry = self._grades.get(trace_id)
        return dict(entry[0]) if entry else {}

    def stats(self) -> dict[str, int]:
        return {
            "rollouts": len(self._rollouts),
            "evicted": self.evicted,
            "expired": self.expired,
            "released": self.released,
        }
