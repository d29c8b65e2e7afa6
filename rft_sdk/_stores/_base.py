"""The ``RolloutStore`` interface every store implements.

The tool server talks to the store only through this class; everything it
stores is JSON-shaped (``state_json`` is JSON text, records serialise with
``ToolCallRecord.to_dict``). A store shared by several processes makes
``lock`` exclusive across them and sets ``multiprocess_safe = True``.
"""

from __future__ import annotations

import abc
import contextlib

from ._records import GradeRecord, StoredRollout

__all__ = ["RolloutStore"]


class RolloutStore(abc.ABC):
    """Async storage interface for rollouts, grade records and grade tombstones.

    All methods are called from the server's event loop. ``lock`` gives
    mutual exclusion per ``trace_id``: the server holds it for a whole tool
    call or grade, so calls of one rollout are serialised while different
    rollouts proceed concurrently.

    Attributes:
        multiprocess_safe: ``True`` when several processes (e.g. uvicorn
            workers, or replicas on several hosts) may each build an instance
            over the same backing storage and see one consistent state, with
            ``lock`` exclusive across them. ``rft serve --workers N`` (N > 1)
            refuses stores where it is False.
    """

    multiprocess_safe: bool = False

    @abc.abstractmethod
    def lock(self, trace_id: str) -> contextlib.AbstractAsyncContextManager[None]:
        """Async context manager holding the per-rollout lock for ``trace_id``."""

    def lock_for_call(self, trace_id: str) -> contextlib.AbstractAsyncContextManager[None]:
        """:meth:`lock` for one tool call: a block that reads with :meth:`load_for_call` first and writes
        only with :meth:`save` (the server's tool path). Default: :meth:`lock`.

        A store may take no lock across processes for it and check instead, at each ``save``, that the
        stored rollout is still the copy it read (``RedisStore``: one round trip per call).

        Raises:
            StoreError: (from ``save`` in the block) the stored rollout changed since it was read: nothing
                was written (the server answers 503; the retry runs under :meth:`lock`).
        """
        return self.lock(trace_id)

    @abc.abstractmethod
    async def load(self, trace_id: str) -> StoredRollout | None:
        """The stored rollout, or ``None`` when unknown, expired or released."""

    async def load_for_call(self, trace_id: str) -> tuple[StoredRollout | None, bool]:
        """``(load(trace_id), whether graded_digest(trace_id) is set)``: the two reads a tool call makes,
        in one await where a store can (the default makes both).

        Raises:
            NotImplementedError: the store keeps no tombstones.
        """
        return await self.load(trace_id), await self.graded_digest(trace_id) is not None

    @abc.abstractmethod
    async def save(self, rollout: StoredRollout) -> None:
        """Create or update the rollout (refreshes its TTL).

        Raises:
            RolloutTooLargeError: the rollout would exceed the store's
                per-rollout byte budget (nothing is written).
        """

    @abc.abstractmethod
    async def release(self, trace_id: str, after_s: float = 0.0) -> None:
        """Drop the rollout now (``after_s <= 0``) or ``after_s`` seconds from now."""

    @abc.abstractmethod
    async def save_grade(self, record: GradeRecord) -> None:
        """Keep a grade result (bounded and expiring like rollouts)."""

    @abc.abstractmethod
    async def load_grades(self, trace_id: str) -> dict[str, GradeRecord]:
        """Grade records of ``trace_id`` by grader name (empty when none)."""

    async def mark_graded(self, trace_id: str, digest: str, retention_s: float) -> None:
        """Leave a tombstone: ``trace_id`` was graded (request digest ``digest``)
        and stays refused for new tool calls for ``retention_s`` seconds.

        Raises:
            NotImplementedError: the store keeps no tombstones (stores of this package all do).
        """
        raise NotImplementedError(f"{type(self).__name__} does not keep grade tombstones")

    async def graded_digest(self, trace_id: str) -> str | None:
        """The digest given to :meth:`mark_graded` for ``trace_id`` while its
        retention lasts, else ``None``.

        Raises:
            NotImplementedError: the store keeps no tombstones.
        """
        raise NotImplementedError(f"{type(self).__name__} does not keep grade tombstones")

    def stats(self) -> dict[str, int]:
        """Counters for ``/metrics`` (e.g. live rollouts, evictions); may be empty.

        Never blocks on I/O: stores backed by a database answer from counters
        kept in memory (as of this process's last store operation); use
        :meth:`astats` for a fresh read.
        """
        return {}

    async def astats(self) -> dict[str, int]:
        """Fresh counters read from the backing storage (default: :meth:`stats`)."""
        return self.stats()

    async def startup(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Check the backing storage once when the server starts (ASGI lifespan); default: nothing.

        Raises:
            StoreError: the store refuses to serve (e.g. ``RedisStore`` on a
                Redis without persistence): the server does not start.
        """

    async def aclose(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release connections and threads (default: nothing to release)."""
