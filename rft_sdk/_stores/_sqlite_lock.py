"""Per-rollout locks of ``SQLiteStore``, exclusive across the processes of one host.

A lock is a row of ``rft_locks`` (owner ``host|pid|token`` and lease deadline)
taken inside ``BEGIN IMMEDIATE`` and polled with jittered backoff up to
``lock_timeout_s``. Tasks of one process first queue on an in-process lock, so
only one of them polls the database. A lock whose owner process on this host
has died is taken over at once; any other after its lease ends.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator

import anyio

from ..exceptions import StoreError
from ._clock import Clock
from ._leases import new_owner, owner_dead, wait_for_lock
from ._locks import KeyedLocks
from ._sqlite_db import Database, immediate

__all__ = ["SQLiteLocks"]


class _Lease:
    """One acquisition of a rollout lock; ``held`` is set inside the database thread."""

    __slots__ = ("held", "owner")

    def __init__(self) -> None:
        self.owner = new_owner()
        self.held = False


class SQLiteLocks:
    """The ``lock`` of one ``SQLiteStore`` object.

    Args:
        db: the store's connections.
        clock: time source (seconds) of lease deadlines.
        lease_s: seconds a held lock stays valid.
        lock_timeout_s: seconds ``hold`` waits before ``StoreLockTimeoutError``.
    """

    def __init__(self, db: Database, clock: Clock, lease_s: float, lock_timeout_s: float) -> None:
        self._db, self.clock, self.lease_s, self.lock_timeout_s = db, clock, lease_s, lock_timeout_s
        self._local = KeyedLocks()

    @contextlib.asynccontextmanager
    async def hold(self, trace_id: str) -> AsyncIterator[None]:
        """Hold ``trace_id``'s lock across processes.

        Raises:
            StoreLockTimeoutError: not acquired within ``lock_timeout_s``.
            StoreError: (on exit) the lease ended while held and another worker took the lock over.
        """
        async with self._local.hold(trace_id):
            lease = _Lease()
            try:
                await wait_for_lock(lambda: self._db.awrite(self._try_lock, trace_id, lease), self.lock_timeout_s,
                                    f"SQLiteStore: rollout {trace_id!r}")
                yield
            except BaseException:
                if lease.held:
                    with anyio.CancelScope(shield=True):
                        await self._db.awrite(self._unlock, trace_id, lease)
                raise
            with anyio.CancelScope(shield=True):
                kept = await self._db.awrite(self._unlock, trace_id, lease)
            if not kept:
                raise StoreError(f"SQLiteStore: the lock of rollout {trace_id!r} was taken over after its "
                                 f"lease of {self.lease_s:g} s ended while this call still held it; another "
                                 "worker may have run a call of this rollout concurrently (raise lease_s)")

    def _try_lock(self, conn: sqlite3.Connection, trace_id: str, lease: _Lease) -> bool:
        now = self.clock()
        with immediate(conn):
            row = conn.execute("SELECT owner, expires_at FROM rft_locks WHERE trace_id = ?", (trace_id,)).fetchone()
            if row is not None and row[1] > now and not owner_dead(row[0]):
                return False
            conn.execute("INSERT OR REPLACE INTO rft_locks (trace_id, owner, expires_at) VALUES (?, ?, ?)",
                         (trace_id, lease.owner, now + self.lease_s))
        lease.held = True  # committed: set here so a cancelled waiter still releases it
        return True

    @staticmethod
    def _unlock(conn: sqlite3.Connection, trace_id: str, lease: _Lease) -> bool:
        lease.held = False
        with immediate(conn):
            return bool(conn.execute("DELETE FROM rft_locks WHERE trace_id = ? AND owner = ?",
                                     (trace_id, lease.owner)).rowcount == 1)
