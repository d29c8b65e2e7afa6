"""``SQLiteStore``: a ``RolloutStore`` in one SQLite file, shared by the processes of one host.

Layout (append-only): a rollout is one row of ``rft_rollouts`` (state, item,
sizes, deadlines), one row per recorded call in ``rft_calls`` and one per
idempotency entry in ``rft_responses``; a call inserts its rows and updates
the small rollout row, whatever the rollout's size. See ``_sqlite_db`` for
connections and why writes never fail with ``database is locked``.

TTL, capacity and byte budgets follow ``MemoryStore``. Due rows are deleted by
the next write; reads already treat them as gone.

``lock(trace_id)`` is exclusive across processes: a row in ``rft_locks``
(owner ``host|pid|token`` and lease deadline) taken inside ``BEGIN
IMMEDIATE``, polled with jittered exponential backoff (tenacity, 2 ms to
50 ms) up to ``lock_timeout_s``. Tasks of one process first queue on an
in-process lock. A lock whose owner process on this host has died is taken
over at once; any other after its lease (``lease_s``) ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from .._wire._json import json_object
from ..exceptions import StoreError
from ._base import RolloutStore
from ._bounds import DEFAULT_MAX_ROLLOUT_BYTES, DEFAULT_MAX_TOTAL_BYTES, STATS_KEYS, Bounds
from ._cache import DEFAULT_CACHE_BYTES, CallCache, hold_item
from ._clock import Clock, system_clock
from ._errors import RolloutEvictedError, RolloutTooLargeError
from ._records import Delta, GradeRecord, StoredRollout, decode_record, decode_response
from ._sqlite_db import Database, immediate
from ._sqlite_lock import SQLiteLocks

__all__ = ["SQLiteStore"]

_T = TypeVar("_T")
_LIVE = "expires_at > :now AND (release_at IS NULL OR release_at > :now)"


class SQLiteStore(RolloutStore):
    """Rollout store in a SQLite file, safe to share between processes of one host.

    Use it to run several workers (``rft serve app:server --workers 4``, or
    ``RFT_STORE_URL=sqlite:///var/lib/rft/rollouts.db``). Not for network file
    systems (SQLite's WAL needs shared memory on one host); across hosts use
    ``RedisStore``.

    Args:
        path: database file (created with its tables on first use; its
            directory must exist). ``":memory:"`` is refused (use ``MemoryStore``).
        ttl_s, max_rollouts, max_rollout_bytes, max_total_bytes: as for ``MemoryStore``.
        lock_timeout_s: seconds ``lock`` waits for a rollout held by another
            task or worker before raising ``StoreLockTimeoutError`` (default
            600, the hosted service's answer deadline).
        lease_s: seconds a held lock stays valid; a live holder must finish
            within it (default 660, above the 600 s hosted deadline). Locks of
            dead processes on this host are taken over at once.
        busy_timeout_s: seconds one write waits for SQLite's write lock.
        clock: time source in seconds for TTLs, leases and tombstones (default ``time.time``).
        cache_bytes: bound of this process's cache of decoded calls (default
            64 MiB), so a load reads only the calls appended since; 0 disables it.

    ``release(trace_id, after_s > 0)`` of a rollout not stored yet is a no-op.

    Counters (``stats()``: shared by all processes, as of this process's last
    write; ``astats()`` reads them afresh and adds ``bytes``).

    Raises:
        ValueError: invalid bounds, ``":memory:"``, or a missing directory.
        StoreError: (from the methods) the database cannot be opened or
            written, holds a newer schema, or a record is corrupt; a lock's
            lease ended while held (raised when the lock is released).
        StoreLockTimeoutError: ``lock`` waited longer than ``lock_timeout_s``.
        RolloutTooLargeError: (from ``save``) over ``max_rollout_bytes``.
    """

    multiprocess_safe = True

    def __init__(self, path: str | os.PathLike[str], ttl_s: float = 3600.0, max_rollouts: int = 10_000, *,
                 max_rollout_bytes: int = DEFAULT_MAX_ROLLOUT_BYTES, max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
                 lock_timeout_s: float = 600.0, lease_s: float = 660.0, busy_timeout_s: float = 10.0,
                 clock: Clock = system_clock, cache_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.bounds = Bounds(ttl_s, max_rollouts, max_rollout_bytes, max_total_bytes)
        self.ttl_s, self.max_rollouts = self.bounds.ttl_s, self.bounds.max_rollouts
        self._cache = CallCache(cache_bytes)
        if str(path) == ":memory:" or str(path).startswith("file::memory:"):
            raise ValueError("SQLiteStore needs a file shared by the processes; for one process use MemoryStore")
        self.path = Path(path)
        if not self.path.parent.is_dir():
            raise ValueError(f"SQLiteStore: directory {str(self.path.parent)!r} does not exist")
        for name, value in (("lock_timeout_s", lock_timeout_s), ("lease_s", lease_s),
                            ("busy_timeout_s", busy_timeout_s)):
            if not value > 0:
                raise ValueError(f"{name} must be > 0 seconds, got {value!r}")
        self.lock_timeout_s, self.lease_s = float(lock_timeout_s), float(lease_s)
        self.clock = clock
        self._db = Database(self.path, float(busy_timeout_s))
        self._locks = SQLiteLocks(self._db, self.clock, self.lease_s, self.lock_timeout_s)
        self._counters = dict.fromkeys(STATS_KEYS, 0)

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r}, ttl_s={self.ttl_s}, max_rollouts={self.max_rollouts})"

    def close(self) -> None:
        """Close this process's connections (the store reopens on next use)."""
        self._db.close()

    async def aclose(self) -> None:
        self.close()

    # -- maintenance (inside a write transaction) ------------------------------------
    @staticmethod
    def _bump(conn: sqlite3.Connection, name: str, n: int) -> None:
        if n:
            conn.execute("INSERT INTO rft_counters (name, value) VALUES (?, ?) "
                         "ON CONFLICT (name) DO UPDATE SET value = value + excluded.value", (name, n))

    def _delete(self, conn: sqlite3.Connection, trace_id: str, cause: str) -> None:
        row = conn.execute("DELETE FROM rft_rollouts WHERE trace_id = ? RETURNING nbytes", (trace_id,)).fetchone()
        if row is None:
            return
        if cause == "evicted":  # lost in progress: its next load raises RolloutEvictedError for ttl_s (unless graded)
            conn.execute("INSERT OR REPLACE INTO rft_evicted (trace_id, expires_at) SELECT ?, ? WHERE NOT EXISTS "
                         "(SELECT 1 FROM rft_tombstones WHERE trace_id = ? AND expires_at > ?)",
                         (trace_id, self.clock() + self.ttl_s, trace_id, self.clock()))
        conn.execute("DELETE FROM rft_calls WHERE trace_id = ?", (trace_id,))
        conn.execute("DELETE FROM rft_responses WHERE trace_id = ?", (trace_id,))
        self._bump(conn, cause, 1)
        self._bump(conn, "rollouts", -1)
        self._bump(conn, "bytes", -row[0])

    def _sweep(self, conn: sqlite3.Connection, now: float) -> None:
        due = conn.execute("SELECT trace_id, release_at IS NOT NULL AND release_at <= :now AND release_at < "
                           "expires_at FROM rft_rollouts WHERE expires_at <= :now OR release_at <= :now",
                           {"now": now}).fetchall()
        for trace_id, released in due:
            self._delete(conn, trace_id, "released" if released else "expired")
        conn.execute("DELETE FROM rft_grades WHERE expires_at <= ?", (now,))
        conn.execute("DELETE FROM rft_tombstones WHERE expires_at <= ?", (now,))
        conn.execute("DELETE FROM rft_evicted WHERE expires_at <= ?", (now,))

    def _read_counters(self, conn: sqlite3.Connection) -> dict[str, int]:
        counts = dict(conn.execute("SELECT name, value FROM rft_counters").fetchall())
        self._counters = {key: int(counts.get(key, 0)) for key in STATS_KEYS}
        return {**self._counters, "bytes": int(counts.get("bytes", 0))}

    # -- locks -------------------------------------------------------------------------
    def lock(self, trace_id: str) -> contextlib.AbstractAsyncContextManager[None]:
        return self._locks.hold(trace_id)

    # -- rollouts ----------------------------------------------------------------------
    async def load(self, trace_id: str) -> StoredRollout | None:
        cached = self._cache.get(trace_id)

        def read(conn: sqlite3.Connection) -> StoredRollout | None:
            conn.execute("BEGIN")  # one snapshot for the three reads
            try:
                row = conn.execute("SELECT generation, item, state, created_at, calls_bytes, calls FROM rft_rollouts "
                                   f"WHERE trace_id = :trace_id AND {_LIVE}",
                                   {"trace_id": trace_id, "now": self.clock()}).fetchone()
                if row is None:
                    lost = conn.execute("SELECT 1 FROM rft_evicted WHERE trace_id = :trace_id AND expires_at > :now "
                                        "AND NOT EXISTS (SELECT 1 FROM rft_tombstones WHERE trace_id = :trace_id "
                                        "AND expires_at > :now)", {"trace_id": trace_id, "now": self.clock()})
                    if lost.fetchone() is not None:
                        raise RolloutEvictedError(trace_id, "SQLiteStore")
                    return None
                old = cached if cached is not None and cached.generation == row[0] and \
                    len(cached.records) <= row[5] else None
                first_call, first_response = (len(old.records), len(old.responses)) if old else (0, 0)
                records = conn.execute("SELECT record FROM rft_calls WHERE trace_id = ? AND n >= ? ORDER BY n",
                                       (trace_id, first_call)).fetchall()
                responses = conn.execute("SELECT response FROM rft_responses WHERE trace_id = ? AND n >= ? "
                                         "ORDER BY n", (trace_id, first_response)).fetchall()
            finally:
                conn.execute("COMMIT")
            generation, item_text, state, created_at, calls_bytes, _ = row
            rollout = self._decode(lambda: StoredRollout(
                trace_id=trace_id, state_json=state,
                trajectory=[*(old.records if old else ()), *(decode_record(r[0]) for r in records)],
                responses={**(old.responses if old else {}), **dict(decode_response(r[0]) for r in responses)},
                created_at=created_at), trace_id)
            hold_item(rollout, item_text, cached, self._decode)
            Delta.loaded(rollout, generation, calls_bytes, rollout.item_json)
            return rollout

        rollout = await self._db.aread(read)
        if rollout is None:
            self._cache.drop(trace_id)
        else:
            self._cache.put(trace_id, str(rollout.generation), rollout.trajectory, rollout.responses,
                            rollout._persisted.calls_bytes if rollout._persisted else 0, rollout.held_item_json)
        return rollout

    async def save(self, rollout: StoredRollout) -> None:
        def write(conn: sqlite3.Connection) -> Delta:
            now, delta = self.clock(), Delta.of(rollout)
            with immediate(conn):
                self._sweep(conn, now)
                row = conn.execute("SELECT generation, nbytes FROM rft_rollouts WHERE trace_id = ?",
                                   (rollout.trace_id,)).fetchone()
                if not delta.rewrite and (row is None or row[0] != delta.generation):
                    delta = Delta.of(rollout, full=True)  # the persisted copy is gone: write it all
                if delta.nbytes > self.bounds.max_rollout_bytes:
                    raise RolloutTooLargeError(rollout.trace_id, delta.nbytes, self.bounds.max_rollout_bytes)
                self._write(conn, rollout, delta, row, now)
                if row is None:  # written afresh on purpose (not by the tool path, which got the error): not lost
                    conn.execute("DELETE FROM rft_evicted WHERE trace_id = ?", (rollout.trace_id,))
                self._evict(conn, rollout.trace_id)
                self._read_counters(conn)
            delta.committed(rollout)
            return delta

        delta = await self._db.awrite(write)
        self._cache.put(rollout.trace_id, delta.generation, rollout.trajectory, rollout.responses, delta.calls_bytes,
                        delta.item_json)

    def _write(self, conn: sqlite3.Connection, rollout: StoredRollout, delta: Delta, row: Any, now: float) -> None:
        trace_id, first = rollout.trace_id, len(rollout.trajectory) - len(delta.records)
        first_response = len(rollout.responses) - len(delta.responses)
        if delta.rewrite:
            conn.execute("DELETE FROM rft_calls WHERE trace_id = ?", (trace_id,))
            conn.execute("DELETE FROM rft_responses WHERE trace_id = ?", (trace_id,))
        conn.executemany("INSERT INTO rft_calls (trace_id, n, record) VALUES (?, ?, ?)",
                         [(trace_id, first + i, text) for i, text in enumerate(delta.records)])
        conn.executemany("INSERT INTO rft_responses (trace_id, n, response) VALUES (?, ?, ?)",
                         [(trace_id, first_response + i, text) for i, (_, text) in enumerate(delta.responses)])
        seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM rft_rollouts").fetchone()[0]
        conn.execute(
            "INSERT INTO rft_rollouts (trace_id, generation, item, state, created_at, calls, calls_bytes, nbytes, "
            "expires_at, seq) VALUES (:t, :g, :item, :state, :created, :calls, :cb, :nb, :exp, :seq) "
            "ON CONFLICT (trace_id) DO UPDATE SET generation = :g, item = :item, state = :state, calls = :calls, "
            "calls_bytes = :cb, nbytes = :nb, expires_at = :exp, seq = :seq",
            {"t": trace_id, "g": delta.generation, "item": delta.item_json.decode("utf-8"), "state": rollout.state_json,
             "created": rollout.created_at, "calls": len(rollout.trajectory), "cb": delta.calls_bytes,
             "nb": delta.nbytes, "exp": now + self.ttl_s, "seq": seq})
        if row is None:
            self._bump(conn, "rollouts", 1)
        self._bump(conn, "bytes", delta.nbytes - (row[1] if row is not None else 0))

    def _evict(self, conn: sqlite3.Connection, keep: str) -> None:
        while True:
            counts = dict(conn.execute("SELECT name, value FROM rft_counters WHERE name IN ('rollouts', 'bytes')"))
            if counts.get("rollouts", 0) <= self.max_rollouts and counts.get("bytes", 0) <= self.bounds.max_total_bytes:
                return
            row = conn.execute("SELECT trace_id FROM rft_rollouts WHERE trace_id != ? ORDER BY seq LIMIT 1",
                               (keep,)).fetchone()
            if row is None:
                return
            self._delete(conn, row[0], "evicted")

    async def release(self, trace_id: str, after_s: float = 0.0) -> None:
        def write(conn: sqlite3.Connection) -> None:
            now = self.clock()
            with immediate(conn):
                self._sweep(conn, now)
                if after_s <= 0:
                    self._delete(conn, trace_id, "released")
                else:
                    conn.execute("UPDATE rft_rollouts SET release_at = ? WHERE trace_id = ?",
                                 (now + after_s, trace_id))
                self._read_counters(conn)

        await self._db.awrite(write)

    # -- grades and tombstones ---------------------------------------------------------
    async def save_grade(self, record: GradeRecord) -> None:
        def write(conn: sqlite3.Connection) -> None:
            now = self.clock()
            with immediate(conn):
                self._sweep(conn, now)
                row = conn.execute("SELECT data FROM rft_grades WHERE trace_id = ?", (record.trace_id,)).fetchone()
                records = self._decode(lambda: _grades_from_json(row[0]), record.trace_id) if row else {}
                records[record.grader] = record
                data = json.dumps({name: r.to_dict() for name, r in records.items()}, separators=(",", ":"))
                seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM rft_grades").fetchone()[0]
                conn.execute("INSERT OR REPLACE INTO rft_grades (trace_id, data, expires_at, seq) VALUES (?, ?, ?, ?)",
                             (record.trace_id, data, now + self.ttl_s, seq))
                conn.execute("DELETE FROM rft_grades WHERE trace_id IN (SELECT trace_id FROM rft_grades "
                             "ORDER BY seq DESC LIMIT -1 OFFSET ?)", (self.max_rollouts,))

        await self._db.awrite(write)

    async def load_grades(self, trace_id: str) -> dict[str, GradeRecord]:
        def read(conn: sqlite3.Connection) -> str | None:
            row = conn.execute("SELECT data FROM rft_grades WHERE trace_id = ? AND expires_at > ?",
                               (trace_id, self.clock())).fetchone()
            return None if row is None else str(row[0])

        data = await self._db.aread(read)
        return {} if data is None else self._decode(lambda: _grades_from_json(data), trace_id)

    async def mark_graded(self, trace_id: str, digest: str, retention_s: float) -> None:
        def write(conn: sqlite3.Connection) -> None:
            with immediate(conn):
                conn.execute("INSERT OR REPLACE INTO rft_tombstones (trace_id, digest, expires_at) VALUES (?, ?, ?)",
                             (trace_id, digest, self.clock() + retention_s))

        await self._db.awrite(write)

    async def graded_digest(self, trace_id: str) -> str | None:
        def read(conn: sqlite3.Connection) -> str | None:
            row = conn.execute("SELECT digest FROM rft_tombstones WHERE trace_id = ? AND expires_at > ?",
                               (trace_id, self.clock())).fetchone()
            return None if row is None else str(row[0])

        return await self._db.aread(read)

    # -- counters ----------------------------------------------------------------------
    def stats(self) -> dict[str, int]:
        """Counters over all processes sharing the file, as of this process's last write (no I/O)."""
        return dict(self._counters)

    async def astats(self) -> dict[str, int]:
        """Counters read afresh (due rollouts swept first), plus ``bytes`` held by live rollouts."""
        def read(conn: sqlite3.Connection) -> dict[str, int]:
            with immediate(conn):
                self._sweep(conn, self.clock())
                return self._read_counters(conn)

        return await self._db.awrite(read)

    def _decode(self, build: Callable[[], _T], trace_id: str) -> _T:
        try:
            return build()
        except (ValueError, TypeError, KeyError) as exc:
            raise StoreError(f"SQLiteStore {str(self.path)!r}: corrupt record for {trace_id!r}: {exc}") from exc


def _grades_from_json(text: str) -> dict[str, GradeRecord]:
    """Parse a ``rft_grades.data`` value: JSON object ``grader -> GradeRecord.to_dict()``.

    Raises:
        ValueError: not that shape.
    """
    data = json_object("rft_grades record", text)
    if not all(isinstance(v, dict) for v in data.values()):
        raise ValueError("grade records must be a JSON object of objects")
    return {name: GradeRecord.from_dict(record) for name, record in data.items()}
