"""Connections of ``SQLiteStore``: schema, one writer connection per process,
pooled readers, and the store's own thread limiter.

Why no ``database is locked``: every write is a ``BEGIN IMMEDIATE``
transaction (it takes SQLite's write lock up front, waiting up to
``busy_timeout`` for it, so a write never fails on a stale read snapshot, the
``SQLITE_BUSY_SNAPSHOT`` case that no busy timeout retries); each process
writes through one connection (its tasks queue on a thread lock instead of on
SQLite's busy handler); schema set-up and the switch to WAL happen once per
file under an OS file lock, never racing another process.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from ..exceptions import StoreError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: schema races are left to busy_timeout
    fcntl = None  # type: ignore[assignment]

__all__ = ["SCHEMA_VERSION", "Database", "immediate"]

_T = TypeVar("_T")
SCHEMA_VERSION = 2
_SCHEMA = """
CREATE TABLE IF NOT EXISTS rft_rollouts (
    trace_id TEXT PRIMARY KEY, generation TEXT NOT NULL, item TEXT NOT NULL, state TEXT NOT NULL,
    created_at REAL NOT NULL, calls INTEGER NOT NULL, calls_bytes INTEGER NOT NULL, nbytes INTEGER NOT NULL,
    expires_at REAL NOT NULL, release_at REAL, seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS rft_rollouts_seq ON rft_rollouts (seq);
CREATE INDEX IF NOT EXISTS rft_rollouts_expires ON rft_rollouts (expires_at);
CREATE INDEX IF NOT EXISTS rft_rollouts_release ON rft_rollouts (release_at);
CREATE TABLE IF NOT EXISTS rft_calls (trace_id TEXT NOT NULL, n INTEGER NOT NULL, record TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS rft_calls_key ON rft_calls (trace_id, n);
CREATE TABLE IF NOT EXISTS rft_responses (trace_id TEXT NOT NULL, n INTEGER NOT NULL, response TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS rft_responses_key ON rft_responses (trace_id, n);
CREATE TABLE IF NOT EXISTS rft_grades (
    trace_id TEXT PRIMARY KEY, data TEXT NOT NULL, expires_at REAL NOT NULL, seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS rft_grades_seq ON rft_grades (seq);
CREATE INDEX IF NOT EXISTS rft_grades_expires ON rft_grades (expires_at);
CREATE TABLE IF NOT EXISTS rft_tombstones (trace_id TEXT PRIMARY KEY, digest TEXT NOT NULL, expires_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS rft_tombstones_expires ON rft_tombstones (expires_at);
CREATE TABLE IF NOT EXISTS rft_evicted (trace_id TEXT PRIMARY KEY, expires_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS rft_locks (trace_id TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS rft_counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


@contextlib.contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """A ``BEGIN IMMEDIATE`` write transaction: committed on success, rolled back on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class Database:
    """The connections of one ``SQLiteStore`` in one process (re-created after a fork).

    Args:
        path: the database file.
        busy_timeout_s: seconds a write waits for another process's write lock.
        threads: worker threads the store may use at once (its own
            ``anyio.CapacityLimiter``, not anyio's default pool shared with sync tools).
    """

    def __init__(self, path: Path, busy_timeout_s: float, threads: int = 8) -> None:
        self.path, self.busy_timeout_s = path, busy_timeout_s
        self.limiter = anyio.CapacityLimiter(threads)
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._readers: list[sqlite3.Connection] = []
        self._writer: sqlite3.Connection | None = None
        self._pid = os.getpid()
        self._ready = False

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None,
                               check_same_thread=False)
        conn.execute("PRAGMA synchronous=NORMAL")
        if not self._ready:
            self._set_up(conn)
            self._ready = True
        return conn

    def _set_up(self, conn: sqlite3.Connection) -> None:
        """Switch to WAL and create or migrate the schema, once per file, under an OS lock."""
        with open(f"{self.path}.lock", "a+b") as guard:
            if fcntl is not None:
                fcntl.flock(guard.fileno(), fcntl.LOCK_EX)
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal" and \
                    conn.execute("PRAGMA journal_mode=WAL").fetchone()[0].lower() != "wal":
                raise StoreError(f"SQLiteStore {str(self.path)!r}: cannot switch the database to WAL mode")
            with immediate(conn):
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                if version > SCHEMA_VERSION:
                    raise StoreError(f"SQLiteStore {str(self.path)!r} has schema version {version}; "
                                     f"this rft-sdk reads version {SCHEMA_VERSION}")
                if version == 1:  # whole-rollout rows of rft-sdk 0.2: rollouts are transient, start afresh
                    conn.execute("DROP TABLE IF EXISTS rft_rollouts")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def _check_fork(self) -> None:
        if os.getpid() != self._pid:  # forked: never reuse the parent's connections
            self._readers, self._writer, self._pid, self._ready = [], None, os.getpid(), False
            self._write_lock = threading.Lock()

    def _error(self, exc: sqlite3.Error) -> StoreError:
        return StoreError(f"SQLiteStore {str(self.path)!r}: {type(exc).__name__}: {exc}")

    def read(self, fn: Callable[..., _T], *args: Any) -> _T:
        """Run ``fn(conn, *args)`` on a pooled reader connection (any thread)."""
        with self._lock:
            self._check_fork()
            conn = self._readers.pop() if self._readers else None
        try:
            if conn is None:
                conn = self._connect()
            result = fn(conn, *args)
        except sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            raise self._error(exc) from exc
        except BaseException:
            if conn is not None:
                conn.close()
            raise
        with self._lock:
            self._readers.append(conn)
        return result

    def write(self, fn: Callable[..., _T], *args: Any) -> _T:
        """Run ``fn(conn, *args)`` on this process's writer connection, one call at a time."""
        with self._lock:
            self._check_fork()
            write_lock = self._write_lock
        with write_lock:
            try:
                if self._writer is None:
                    self._writer = self._connect()
                return fn(self._writer, *args)
            except sqlite3.Error as exc:
                if self._writer is not None:
                    self._writer.close()
                    self._writer = None
                raise self._error(exc) from exc

    async def aread(self, fn: Callable[..., _T], *args: Any) -> _T:
        """:meth:`read` in one of the store's own threads."""
        return await anyio.to_thread.run_sync(self.read, fn, *args, limiter=self.limiter)

    async def awrite(self, fn: Callable[..., _T], *args: Any) -> _T:
        """:meth:`write` in one of the store's own threads."""
        return await anyio.to_thread.run_sync(self.write, fn, *args, limiter=self.limiter)

    def close(self) -> None:
        """Close this process's connections (reopened on next use)."""
        with self._lock:
            readers, self._readers = self._readers, []
        for conn in readers:
            conn.close()
        with self._write_lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
