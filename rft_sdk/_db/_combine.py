"""``Combiner``: blocking requests of many threads served in batches by one of them.

Threads call :meth:`Combiner.claim` at the same moment (the admissions of a
batch of new rollouts, one worker thread each). The first becomes the leader:
it takes every request waiting (at most ``max_batch``), serves them with one
call of ``serve`` (one database transaction for the batch instead of one
each), hands each its outcome, and goes on until its own request is served;
then the oldest waiting request's thread leads. Nobody sleeps or polls: a
waiting thread blocks on its own event until it has an outcome or must lead.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Combiner"]

K = TypeVar("K")
V = TypeVar("V")


class _Request(Generic[K, V]):
    __slots__ = ("event", "key", "lead", "outcome", "served")

    def __init__(self, key: K) -> None:
        self.key = key
        self.event = threading.Event()
        self.lead = False
        self.served = False
        self.outcome: V | BaseException | None = None


class Combiner(Generic[K, V]):
    """Batches concurrent blocking requests (see the module docstring).

    Args:
        serve: ``serve(keys) -> outcomes``, one outcome (a value or an exception to hand back) per key, in
            order; an exception it raises becomes the outcome of every request of that batch.
        max_batch: the most requests one ``serve`` call gets (>= 1).

    Raises:
        ValueError: ``max_batch < 1``.
    """

    def __init__(self, serve: Callable[[list[K]], list[V | BaseException]], max_batch: int) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch!r}")
        self.serve, self.max_batch = serve, int(max_batch)
        self._lock = threading.Lock()
        self._pending: list[_Request[K, V]] = []
        self._leading = False
        #: Sizes of the batches served (the last 1,024), for tests and benchmarks.
        self.batches: list[int] = []

    def claim(self, key: K) -> V | BaseException:
        """``key``'s outcome (blocking): a value, or the exception ``serve`` gave (or raised) for it."""
        request: _Request[K, V] = _Request(key)
        with self._lock:
            self._pending.append(request)
            if not self._leading:
                self._leading = request.lead = True
        while True:
            if request.lead:
                self._lead(request)
                break
            request.event.wait()
            request.event.clear()
            if request.served:
                break
        return request.outcome  # type: ignore[return-value]  # served: a value or an exception

    def _lead(self, own: _Request[K, V]) -> None:
        """Serve batches until ``own`` is served, then hand the lead to the oldest waiting request."""
        try:
            while not own.served:
                with self._lock:
                    batch, self._pending = self._pending[:self.max_batch], self._pending[self.max_batch:]
                try:
                    outcomes = self.serve([r.key for r in batch])
                    if len(outcomes) != len(batch):
                        raise RuntimeError(f"a batch of {len(batch)} requests got {len(outcomes)} outcomes")
                except Exception as exc:  # handed to every request of the batch, raised by each caller
                    outcomes = [exc] * len(batch)
                self.batches = [*self.batches[-1023:], len(batch)]
                for request, outcome in zip(batch, outcomes, strict=True):
                    request.outcome, request.served = outcome, True
                    if request is not own:
                        request.event.set()
        finally:
            with self._lock:
                successor = self._pending[0] if self._pending else None
                if successor is None:
                    self._leading = False
                else:
                    successor.lead = True
            if successor is not None:
                successor.event.set()
