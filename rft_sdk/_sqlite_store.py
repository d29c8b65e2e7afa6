"""``SQLiteStore``: a ``RolloutStore`` in one SQLite file, shared by several
processes on one host (e.g. the workers of ``rft serve --workers N``).

Design:

* Standard-library ``sqlite3`` in WAL mode (readers never block the writer),
  every database call run in a worker thread (``anyio.to_thread``) so the event
  loop never waits on disk or on another process's write lock. Writes are short
  ``BEGIN IMMEDIATE`` transactions; ``busy_timeout_s`` bounds the wait for the
  database write lock.
* Records are the JSON of ``StoredRollout.to_json`` / ``GradeRecord.to_json``.
* TTL and capacity follow ``MemoryStore``: a save refreshes the rollout's
  expiry; beyond ``max_rollouts`` the least recently saved rollout is evicted.
  Due rows are deleted by the next write (``save``, ``release``,
  ``save_grade``); reads already treat them as gone, and ``stats()`` counts them
  by their cause (whichever deadline came first: release or TTL).
* ``lock(trace_id)`` is exclusive across processes: a row in ``rft_locks``
  (owner ``host|pid|token`` and lease expiry) taken atomically inside
  ``BEGIN IMMEDIATE``, polled with jittered exponential backoff (tenacity,
  2 ms to 50 ms) up to ``lock_timeout_s``. Tasks of one process first queue on
  an in-process lock, so only one of them polls the database. A lock whose
  owner process on this host has died is taken over at once; any other lock is
  taken over after its lease (``lease_s``) ends. Different ``trace_id``s never
  wait for each other (beyond the microseconds of a write transaction).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
import tenacity

from ._store import STATS_KEYS, GradeRecord, KeyedLocks, RolloutStore, StoredRollout, _from_json_object, check_bounds
from .exceptions import StoreError, StoreLockTimeoutError

__all__ = ["SQLiteStore"]

_T = TypeVar("_T")
_SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS rft_rollouts (
    trace_id TEXT PRIMARY KEY, data TEXT NOT NULL, expires_at REAL NOT NULL, release_at REAL,
    seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS rft_rollouts_seq ON rft_rollouts (seq);
CREATE INDEX IF NOT EXISTS rft_rollouts_expires ON rft_rollouts (expires_at);
CREATE INDEX IF NOT EXISTS rft_rollouts_release ON rft_rollouts (release_at);
CREATE TABLE IF NOT EXISTS rft_grades (
    trace_id TEXT PRIMARY KEY, data TEXT NOT NULL, expires_at REAL NOT NULL, seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS rft_grades_seq ON rft_grades (seq);
CREATE INDEX IF NOT EXISTS rft_grades_expires ON rft_grades (expires_at);
CREATE TABLE IF NOT EXISTS rft_locks (trace_id TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS rft_counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""
# A rollout is gone by release when its release deadline passed before its TTL did; otherwise by TTL.
_RELEASED = "release_at IS NOT NULL AND release_at <= :now AND release_at < expires_at"
_LIVE = "expires_at > :now AND (release_at IS NULL OR release_at > :now)"
_HOST = socket.gethostname()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True


def _owner_dead(owner: str) -> bool:
    """True when ``owner`` (``host|pid|token``) is a process of this host that no longer runs."""
    host, _, rest = owner.partition("|")
    pid_text = rest.partition("|")[0]
    if host != _HOST or not pid_text.isdigit() or int(pid_text) == os.getpid():
        return False
    return not _pid_alive(int(pid_text))


@contextlib.contextmanager
def _immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """A ``BEGIN IMMEDIATE`` write transaction: committed on success, rolled back on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class _Lease:
    """One acquisition of a rollout lock; ``held`` is set inside the database thread."""

    __slots__ = ("held", "owner")

    def __init__(self) -> None:
        self.owner = f"{_HOST}|{os.getpid()}|{uuid.uuid4().hex}"
        self.held = False


class SQLiteStore(RolloutStore):
    """Rollout store in a SQLite file, safe to share between processes of one host.

    Use it to run several workers (``rft serve app:server --workers 4``): build
    ``ToolServer(store=SQLiteStore("/var/lib/rft/rollouts.db"))`` in the app
    module, so every worker opens the same file. Not for network file systems
    (SQLite's WAL needs shared memory on one host).

    Args:
        path: database file (created with its tables on first use; its
            directory must exist). ``":memory:"`` is refused (use ``MemoryStore``).
        ttl_s: seconds after its last save at which a rollout expires; grade
            records use the same TTL.
        max_rollouts: capacity; saving beyond it evicts the least recently
            saved rollout (grade records are bounded the same way).
        lock_timeout_s: seconds ``lock`` waits for a rollout held by another
            task or worker before raising ``StoreLockTimeoutError`` (default
            600, the hosted service's answer deadline).
        lease_s: seconds a held lock stays valid; a live holder must finish
            within it (default 660, above the 600 s hosted deadline). Locks of
            dead processes on this host are taken over at once.
        busy_timeout_s: seconds one statement waits for SQLite's write lock.

    Differs from ``MemoryStore`` only in that ``release(trace_id, after_s > 0)``
    of a rollout not stored yet is a no-op (MemoryStore remembers it).

    Counters (``stats()``, shared by all processes): ``rollouts`` (live),
    ``evicted`` (capacity), ``expired`` (TTL), ``released`` (after grading).

    Raises:
        ValueError: invalid bounds, ``":memory:"``, or a missing directory.
        StoreError: (from the methods) the database cannot be opened or
            written, holds a newer schema, or a record is corrupt; a lock's
            lease ended while held (raised when the lock is released).
        StoreLockTimeoutError: ``lock`` waited longer than ``lock_timeout_s``.
    """

    multiprocess_safe = True

    def __init__(self, path: str | os.PathLike[str], ttl_s: float = 3600.0, max_rollouts: int = 10_000, *,
                 lock_timeout_s: float = 600.0, lease_s: float = 660.0, busy_timeout_s: float = 10.0) -> None:
        self.ttl_s, self.max_rollouts = check_bounds(ttl_s, max_rollouts)
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
        self.busy_timeout_s = float(busy_timeout_s)
        self._local = KeyedLocks()
        self._pool: list[sqlite3.Connection] = []
        self._pool_lock = threading.Lock()
        self._pid = os.getpid()
        self._ready = False

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r}, ttl_s={self.ttl_s}, max_rollouts={self.max_rollouts})"

    # -- connections ---------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None,
                               check_same_thread=False)
        conn.execute("PRAGMA synchronous=NORMAL")
        if not self._ready:
            if conn.execute("PRAGMA journal_mode=WAL").fetchone()[0].lower() != "wal":
                raise StoreError(f"SQLiteStore {str(self.path)!r}: cannot switch the database to WAL mode")
            with _immediate(conn):
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                if version > _SCHEMA_VERSION:
                    raise StoreError(f"SQLiteStore {str(self.path)!r} has schema version {version}; "
                                     f"this rft-sdk reads version {_SCHEMA_VERSION}")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
            self._ready = True
        return conn

    def _call(self, fn: Callable[..., _T], *args: Any) -> _T:
        """Run ``fn(conn, *args)`` on a pooled connection (any thread); sqlite errors become StoreError."""
        with self._pool_lock:
            if os.getpid() != self._pid:  # forked: never reuse the parent's connections
                self._pool, self._pid, self._ready = [], os.getpid(), False
            conn = self._pool.pop() if self._pool else None
        try:
            if conn is None:
                conn = self._connect()
            result = fn(conn, *args)
        except sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            raise StoreError(f"SQLiteStore {str(self.path)!r}: {type(exc).__name__}: {exc}") from exc
        except BaseException:
            if conn is not None:
                conn.close()
            raise
        with self._pool_lock:
            self._pool.append(conn)
        return result

    async def _run(self, fn: Callable[..., _T], *args: Any) -> _T:
        return await anyio.to_thread.run_sync(self._call, fn, *args)

    def close(self) -> None:
        """Close the pooled connections of this process (the store reopens on next use)."""
        with self._pool_lock:
            pool, self._pool = self._pool, []
        for conn in pool:
            conn.close()

    # -- maintenance (inside a write transaction) ------------------------------------
    @staticmethod
    def _bump(conn: sqlite3.Connection, name: str, n: int) -> None:
        if n:
            conn.execute("INSERT INTO rft_counters (name, value) VALUES (?, ?) "
                         "ON CONFLICT (name) DO UPDATE SET value = value + excluded.value", (name, n))

    def _sweep(self, conn: sqlite3.Connection, now: float) -> None:
        self._bump(conn, "released", conn.execute(f"DELETE FROM rft_rollouts WHERE {_RELEASED}",
                                                  {"now": now}).rowcount)
        self._bump(conn, "expired", conn.execute("DELETE FROM rft_rollouts WHERE expires_at <= ?",
                                                 (now,)).rowcount)
        conn.execute("DELETE FROM rft_grades WHERE expires_at <= ?", (now,))

    def _upsert(self, conn: sqlite3.Connection, table: str, trace_id: str, data: str, now: float) -> int:
        """Insert or replace ``trace_id``'s row as the most recently saved; return rows evicted."""
        conn.execute(f"INSERT INTO {table} (trace_id, data, expires_at, seq) VALUES "
                     f"(?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM {table})) ON CONFLICT (trace_id) "
                     "DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at, seq = excluded.seq",
                     (trace_id, data, now + self.ttl_s))
        excess = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] - self.max_rollouts
        if excess <= 0:
            return 0
        return conn.execute(f"DELETE FROM {table} WHERE trace_id IN "
                            f"(SELECT trace_id FROM {table} ORDER BY seq LIMIT ?)", (excess,)).rowcount

    # -- RolloutStore ------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def lock(self, trace_id: str) -> AsyncIterator[None]:
        async with self._local.hold(trace_id):
            lease = _Lease()
            try:
                await self._acquire(trace_id, lease)
                yield
            except BaseException:
                if lease.held:
                    with anyio.CancelScope(shield=True):
                        await self._run(self._unlock, trace_id, lease)
                raise
            with anyio.CancelScope(shield=True):
                kept = await self._run(self._unlock, trace_id, lease)
            if not kept:
                raise StoreError(f"SQLiteStore: the lock of rollout {trace_id!r} was taken over after its "
                                 f"lease of {self.lease_s:g} s ended while this call still held it; another "
                                 "worker may have run a call of this rollout concurrently (raise lease_s)")

    async def _acquire(self, trace_id: str, lease: _Lease) -> None:
        def timed_out(state: tenacity.RetryCallState) -> None:
            raise StoreLockTimeoutError(
                f"SQLiteStore: rollout {trace_id!r} stayed locked by another worker for "
                f"{self.lock_timeout_s:g} s (lock_timeout_s); a tool call may be stuck")

        retrying = tenacity.AsyncRetrying(
            retry=tenacity.retry_if_result(lambda acquired: not acquired),
            wait=tenacity.wait_random_exponential(multiplier=0.002, max=0.05),
            stop=tenacity.stop_after_delay(self.lock_timeout_s),
            sleep=anyio.sleep, retry_error_callback=timed_out)
        await retrying(self._run, self._try_lock, trace_id, lease)

    def _try_lock(self, conn: sqlite3.Connection, trace_id: str, lease: _Lease) -> bool:
        now = time.time()
        with _immediate(conn):
            row = conn.execute("SELECT owner, expires_at FROM rft_locks WHERE trace_id = ?", (trace_id,)).fetchone()
            if row is not None and row[1] > now and not _owner_dead(row[0]):
                return False
            conn.execute("INSERT OR REPLACE INTO rft_locks (trace_id, owner, expires_at) VALUES (?, ?, ?)",
                         (trace_id, lease.owner, now + self.lease_s))
        lease.held = True  # committed: set here so a cancelled waiter still releases it
        return True

    @staticmethod
    def _unlock(conn: sqlite3.Connection, trace_id: str, lease: _Lease) -> bool:
        lease.held = False
        return conn.execute("DELETE FROM rft_locks WHERE trace_id = ? AND owner = ?",
                            (trace_id, lease.owner)).rowcount == 1

    async def load(self, trace_id: str) -> StoredRollout | None:
        def read(conn: sqlite3.Connection) -> str | None:
            row = conn.execute(f"SELECT data FROM rft_rollouts WHERE trace_id = :trace_id AND {_LIVE}",
                               {"trace_id": trace_id, "now": time.time()}).fetchone()
            return None if row is None else row[0]

        data = await self._run(read)
        return None if data is None else self._decode(StoredRollout.from_json, data, trace_id)

    async def save(self, rollout: StoredRollout) -> None:
        def write(conn: sqlite3.Connection, data: str) -> None:
            now = time.time()
            with _immediate(conn):
                self._sweep(conn, now)
                self._bump(conn, "evicted", self._upsert(conn, "rft_rollouts", rollout.trace_id, data, now))

        await self._run(write, rollout.to_json())

    async def release(self, trace_id: str, after_s: float = 0.0) -> None:
        def write(conn: sqlite3.Connection) -> None:
            now = time.time()
            with _immediate(conn):
                self._sweep(conn, now)
                if after_s <= 0:
                    deleted = conn.execute("DELETE FROM rft_rollouts WHERE trace_id = ?", (trace_id,)).rowcount
                    self._bump(conn, "released", deleted)
                else:
                    conn.execute("UPDATE rft_rollouts SET release_at = ? WHERE trace_id = ?",
                                 (now + after_s, trace_id))

        await self._run(write)

    async def save_grade(self, record: GradeRecord) -> None:
        def write(conn: sqlite3.Connection) -> None:
            now = time.time()
            with _immediate(conn):
                self._sweep(conn, now)
                row = conn.execute("SELECT data FROM rft_grades WHERE trace_id = ?", (record.trace_id,)).fetchone()
                records = self._decode(_grades_from_json, row[0], record.trace_id) if row else {}
                records[record.grader] = record
                data = json.dumps({name: r.to_dict() for name, r in records.items()}, separators=(",", ":"))
                self._upsert(conn, "rft_grades", record.trace_id, data, now)

        await self._run(write)

    async def load_grades(self, trace_id: str) -> dict[str, GradeRecord]:
        def read(conn: sqlite3.Connection) -> str | None:
            row = conn.execute("SELECT data FROM rft_grades WHERE trace_id = ? AND expires_at > ?",
                               (trace_id, time.time())).fetchone()
            return None if row is None else row[0]

        data = await self._run(read)
        if data is None:
            return {}
        return self._decode(_grades_from_json, data, trace_id)

    def stats(self) -> dict[str, int]:
        """Counters over all processes sharing the file (a short read on the calling thread)."""
        def read(conn: sqlite3.Connection) -> dict[str, int]:
            now = {"now": time.time()}
            counts = dict(conn.execute("SELECT name, value FROM rft_counters").fetchall())
            live = conn.execute(f"SELECT COUNT(*) FROM rft_rollouts WHERE {_LIVE}", now).fetchone()[0]
            released = conn.execute(f"SELECT COUNT(*) FROM rft_rollouts WHERE {_RELEASED}", now).fetchone()[0]
            gone = conn.execute("SELECT COUNT(*) FROM rft_rollouts WHERE expires_at <= :now OR "
                                "(release_at IS NOT NULL AND release_at <= :now)", now).fetchone()[0]
            pending = {"rollouts": live, "released": released, "expired": gone - released}
            return {key: int(counts.get(key, 0)) + pending.get(key, 0) for key in STATS_KEYS}

        return self._call(read)

    def _decode(self, parse: Callable[[str], _T], data: str, trace_id: str) -> _T:
        try:
            return parse(data)
        except ValueError as exc:
            raise StoreError(f"SQLiteStore {str(self.path)!r}: corrupt record for {trace_id!r}: {exc}") from exc


def _grades_from_json(text: str) -> dict[str, GradeRecord]:
    """Parse a ``rft_grades.data`` value: JSON object ``grader -> GradeRecord.to_dict()``.

    Raises:
        ValueError: not that shape.
    """
    data = _from_json_object("rft_grades record", text)
    if not all(isinstance(v, dict) for v in data.values()):
        raise ValueError("grade records must be a JSON object of objects")
    return {name: GradeRecord.from_dict(record) for name, record in data.items()}
