"""Admission of tool calls and grades: a burst queues instead of being refused.

An open trainer (verl, prime-rl, NeMo RL, TRL) starts a whole batch at once:
thousands of rollouts whose first calls arrive within the same second. The
server admits up to ``max_active`` requests into the request path (store lock,
tool, answer) and queues the rest, instead of refusing them:

* **In-flight rollouts first.** A request of a rollout this process has seen
  (its ``trace_id`` has an item in the server's ``ItemCache``: a later call or
  its grade) waits in the *in-flight* class; the first call of a rollout waits
  in the *new* class. A free slot goes to the in-flight class before the new
  one, so a burst completes rollouts instead of starting all of them.
* **Clients take turns.** Within a class, waiting requests are kept per client
  (the ``Authorization`` header, else the peer address) and a free slot goes to
  the clients in turn (round robin), so one trainer's 4,000 queued requests do
  not starve another's ten. A client may have at most ``max_queued_per_client``
  requests waiting (its quota); past it, 503.
* **A documented bound on the wait.** A request that would wait longer than
  ``max_wait_s`` seconds (estimated at arrival: the requests ahead of it in its
  class and before it, divided by the rate at which requests finished over the
  last seconds) is answered at once with 503 ``server_busy`` and a
  ``Retry-After`` header (seconds until its wait would be within the bound, at
  least 1): the hosted side and the emulator retry 5xx answers, and the
  emulator waits ``Retry-After`` (with jitter) before it does. A request
  already queued is never refused later; the hosted per-call timeout is 600 s.

The common path, a free slot and nobody waiting, is one comparison and two
integer updates per request; the queue's bookkeeping runs only in a burst.
Per server process: ``rft serve --workers N`` has N independent queues.
"""

from __future__ import annotations

import asyncio
import collections
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from starlette.requests import Request

from .._wire._endpoint import EndpointError

__all__ = ["DEFAULT_MAX_ACTIVE", "DEFAULT_MAX_QUEUED_PER_CLIENT", "DEFAULT_MAX_WAIT_S", "DEFAULT_RATE_WINDOW_S", "Admission", "client_key"]

#: Requests one server process runs at once by default (beyond it they queue); uvicorn's former
#: connection limit (``rft_sdk.protocol.CONNECTION_LIMIT``), so a load that was served before is
#: served the same way, and tools that await slow I/O keep that much concurrency.
DEFAULT_MAX_ACTIVE = 1000
#: Seconds a request may be expected to wait in the queue before it is answered 503 with Retry-After
#: instead (a tenth of the hosted per-call timeout of 600 s, ``rft_sdk.protocol.TOOL_TIMEOUT_S``).
DEFAULT_MAX_WAIT_S = 60.0
#: Requests one client may have waiting at once (its quota); more are answered 503 with Retry-After.
DEFAULT_MAX_QUEUED_PER_CLIENT = 16384

_IN_FLIGHT, _NEW = 0, 1
#: Seconds over which the finish rate (requests per second, for the wait estimate) is measured.
DEFAULT_RATE_WINDOW_S = 2.0


def client_key(request: Request) -> str:
    """Who sent ``request``, for the turns and quotas: its ``Authorization`` header, else the peer host."""
    auth = request.headers.get("authorization")
    if auth:
        return auth
    client = request.client
    return client.host if client is not None else ""


class Admission:
    """The admission gate of one server process (see the module docstring).

    Args:
        max_active: requests run at once (>= 1).
        max_wait_s: bound of the estimated wait in the queue, seconds (> 0).
        max_queued_per_client: requests one client may have waiting (>= 1).
        rate_window_s: seconds over which the finish rate is measured while requests wait (> 0).

    Raises:
        ValueError: a bound out of range.
    """

    def __init__(self, max_active: int = DEFAULT_MAX_ACTIVE, max_wait_s: float = DEFAULT_MAX_WAIT_S,
                 max_queued_per_client: int = DEFAULT_MAX_QUEUED_PER_CLIENT, *,
                 rate_window_s: float = DEFAULT_RATE_WINDOW_S) -> None:
        if max_active < 1 or not max_wait_s > 0 or max_queued_per_client < 1 or not rate_window_s > 0:
            raise ValueError(f"admission bounds must be max_active >= 1, max_wait_s > 0, max_queued_per_client "
                             f">= 1, rate_window_s > 0; got {max_active}, {max_wait_s}, {max_queued_per_client}, "
                             f"{rate_window_s}")
        self.rate_window_s = float(rate_window_s)
        self.max_active, self.max_wait_s = int(max_active), float(max_wait_s)
        self.max_queued_per_client = int(max_queued_per_client)
        self.active = 0  # requests admitted and not finished
        self.waiting = 0  # requests queued
        self.refused = 0  # requests answered 503 server_busy
        self.queued_total = 0  # requests that ever waited
        # per class: client -> its waiting futures (FIFO); the dict's order is the clients' turn order
        self._queues: tuple[dict[str, collections.deque[asyncio.Future[None]]], ...] = ({}, {})
        self._class_waiting = [0, 0]
        self._per_client: dict[str, int] = {}
        self._finished = 0  # finished requests in the current rate window
        self._window_start = time.monotonic()
        self._rate = 0.0  # requests finished per second, last complete window (0: not measured yet)

    @asynccontextmanager
    async def slot(self, who: Callable[[], tuple[str, bool]]) -> AsyncIterator[float]:
        """Hold one of the ``max_active`` slots for the block; wait for it in turn when none is free.

        ``who()`` gives ``(client, in_flight)`` (its key for turns and quotas, and whether the request
        belongs to a rollout already in flight); it is called only when the request has to wait.
        Yields the seconds the request waited for its slot (0.0 when it did not wait).

        Raises:
            EndpointError: 503 ``server_busy`` (with ``Retry-After``) when the wait would exceed
                ``max_wait_s`` or the client's quota of waiting requests is used up.
        """
        waited = 0.0
        if self.active < self.max_active and not self.waiting:
            self.active += 1  # the common path: a free slot, nobody ahead
        else:
            client, in_flight = who()
            t0 = time.monotonic()
            await self._wait(client, _IN_FLIGHT if in_flight else _NEW)
            waited = time.monotonic() - t0
        try:
            yield waited
        finally:
            self._finish()

    def _finish(self) -> None:
        if self.waiting:  # the finish rate is measured only while requests wait (a burst)
            self._finished += 1
            self._count_rate()
            self._hand_over()  # the slot passes to the next waiter: active stays
        else:
            self.active -= 1

    def _count_rate(self) -> None:
        now = time.monotonic()
        elapsed = now - self._window_start
        if elapsed >= self.rate_window_s:
            self._rate = self._finished / elapsed
            self._finished, self._window_start = 0, now

    def _hand_over(self) -> None:
        for cls in (_IN_FLIGHT, _NEW):
            queues = self._queues[cls]
            while queues:
                client = next(iter(queues))
                waiters = queues.pop(client)
                future = waiters.popleft()
                if waiters:
                    queues[client] = waiters  # back at the end of the turn order
                self._dequeued(cls, client)
                if not future.done():  # a waiter cancelled meanwhile (client gone): skip it
                    future.set_result(None)
                    return
        self.active -= 1

    def _dequeued(self, cls: int, client: str) -> None:
        self.waiting -= 1
        self._class_waiting[cls] -= 1
        left = self._per_client[client] - 1
        if left:
            self._per_client[client] = left
        else:
            del self._per_client[client]

    def estimated_wait_s(self, in_flight: bool) -> float:
        """Seconds a request arriving now would wait (0 when the finish rate is not measured yet)."""
        ahead = self._class_waiting[_IN_FLIGHT] + (0 if in_flight else self._class_waiting[_NEW]) + 1
        return ahead / self._rate if self._rate > 0 else 0.0

    def _busy(self, wait_s: float, why: str) -> EndpointError:
        self.refused += 1
        retry_after = max(1, math.ceil(wait_s - self.max_wait_s)) if math.isfinite(wait_s) else 1
        return EndpointError(503, "server_busy", f"{why}; retry after {retry_after} s",
                             headers={"Retry-After": str(retry_after)}, counter="server_busy")

    async def _wait(self, client: str, cls: int) -> None:
        if self._per_client.get(client, 0) >= self.max_queued_per_client:
            raise self._busy(self.estimated_wait_s(cls == _IN_FLIGHT),
                             f"this client already has {self.max_queued_per_client} requests waiting (its quota)")
        wait_s = self.estimated_wait_s(cls == _IN_FLIGHT)
        if wait_s > self.max_wait_s:
            raise self._busy(wait_s, f"the server is busy: about {wait_s:.0f} s of requests are queued ahead "
                                     f"(bound {self.max_wait_s:g} s)")
        if not self.waiting:  # a queue forms: measure the finish rate of this burst from now
            self._finished, self._window_start = 0, time.monotonic()
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queues = self._queues[cls]
        queue = queues.get(client)
        if queue is None:
            queue = queues[client] = collections.deque()
        queue.append(future)
        self.waiting += 1
        self.queued_total += 1
        self._class_waiting[cls] += 1
        self._per_client[client] = self._per_client.get(client, 0) + 1
        try:
            await future
        except BaseException:
            if future.done() and not future.cancelled():  # the slot was handed to us: pass it on
                self._finish()
            else:  # still queued: leave the queue
                future.cancel()
                self._remove(cls, client, future)
            raise

    def _remove(self, cls: int, client: str, future: asyncio.Future[None]) -> None:
        queue = self._queues[cls].get(client)
        if queue is None or future not in queue:
            return
        queue.remove(future)
        if not queue:
            del self._queues[cls][client]
        self._dequeued(cls, client)

    def stats(self) -> dict[str, float]:
        """``{"active", "waiting", "queued_total", "refused", "finish_rate_per_s"}`` of this process."""
        return {"active": self.active, "waiting": self.waiting, "queued_total": self.queued_total,
                "refused": self.refused, "finish_rate_per_s": round(self._rate, 1)}
