"""In-process per-key async locks (``KeyedLocks``)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio

__all__ = ["KeyedLocks"]


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
