"""In-process per-key async locks (``KeyedLocks``).

An uncontended key is taken without awaiting anything (no event-loop turn,
no lock object: the key's presence in a dict is the lock); only a task that
finds the key held waits, on an ``anyio.Event`` of its own, so it works under
every anyio backend (asyncio, trio). Ownership is handed to the first waiter
on release (FIFO, no barging), which keeps per-key order and exactly-once.
"""

from __future__ import annotations

import collections
from types import TracebackType

import anyio

__all__ = ["KeyedLocks"]


class _Hold:
    """``async with`` one key of a :class:`KeyedLocks` (a plain object: cheaper than a generator context)."""

    __slots__ = ("_key", "_locks")

    def __init__(self, locks: dict[str, collections.deque[anyio.Event]], key: str) -> None:
        self._locks, self._key = locks, key

    async def __aenter__(self) -> None:
        waiters = self._locks.get(self._key)
        if waiters is None:  # free: take it with no await at all
            self._locks[self._key] = collections.deque()
            return
        event = anyio.Event()
        waiters.append(event)
        try:
            await event.wait()
        except BaseException:  # cancelled while waiting
            if event.is_set():  # ownership was already handed to us: pass it on
                self._release()
            else:
                waiters.remove(event)
            raise

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self._release()

    def _release(self) -> None:
        waiters = self._locks[self._key]
        if waiters:
            waiters.popleft().set()  # the first waiter now holds the key
        else:
            del self._locks[self._key]


class KeyedLocks:
    """In-process async locks keyed by string (e.g. ``trace_id``), created on
    first use and dropped when no task holds or waits for them, so memory stays
    proportional to the keys in use. FIFO among the waiters of one key; not
    reentrant (a task holding a key that asks for it again waits forever)."""

    def __init__(self) -> None:
        self._locks: dict[str, collections.deque[anyio.Event]] = {}  # key held -> its waiters, oldest first

    def hold(self, key: str) -> _Hold:
        """Async context manager holding the lock for ``key`` (FIFO among waiters of this process)."""
        return _Hold(self._locks, key)

    def __len__(self) -> int:
        return len(self._locks)
