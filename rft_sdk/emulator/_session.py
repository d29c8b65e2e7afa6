"""A long-lived emulator session: one set of HTTP clients for many rounds of rollouts.

The trainer samples a batch of rollouts every step. Opening a session once and
calling :meth:`EmulatorSession.run` per step keeps one event loop, one set of
``httpx.AsyncClient`` s (their keep-alive connections and SSL context) and one
grader rate limiter for the whole run. :func:`run_rollouts` is the one-shot
form: a session opened and closed around a single call.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

import anyio
import httpx

from .._wire._tls import ssl_context
from ._client import ClientSettings, EndpointClient
from ._contract import Policy
from ._job import ReinforcementJob, load_job
from ._job import samples_per_item as _samples_for
from ._ratelimit import RateLimiter
from ._rollout import RolloutResult, _Runner

if sys.version_info < (3, 11):  # pragma: no cover - anyio depends on the backport there
    from exceptiongroup import BaseExceptionGroup

__all__ = ["ROLLOUTS_PER_CLIENT", "EmulatorSession", "run_rollouts"]

#: rollouts in flight per owned ``httpx.AsyncClient``. httpcore's pool scans all
#: its connections for every queued request (cost ~ connections x requests), so
#: one client with 200+ connections is several times slower than clients of ~16
#: (measured by benchmarks/bench_emulator.py); the emulator shards instead. Each
#: shard may open four connections per rollout (parallel tool calls within a
#: step) but keeps only one per rollout alive between requests: the idle ones
#: were most of that scan (``make doctor`` on retail: 68.4-68.6 s against 80.5-85.6 s
#: with four kept per rollout, run one after the other on 2 cores).
ROLLOUTS_PER_CLIENT = 16


def _shard_sizes(concurrency: int) -> tuple[int, int, int]:
    """``(shards, rollouts per shard, connections per shard)`` for ``concurrency`` rollouts in flight."""
    shards = -(-concurrency // ROLLOUTS_PER_CLIENT)
    per_shard = -(-concurrency // shards)
    return shards, per_shard, 4 * per_shard  # room for parallel tool calls within a step


def _default_clients(settings: ClientSettings, concurrency: int,
                     transport: httpx.AsyncBaseTransport | None) -> list[httpx.AsyncClient]:
    shards, per_shard, conns = _shard_sizes(concurrency)
    return [httpx.AsyncClient(
        transport=transport,
        verify=ssl_context(),
        timeout=httpx.Timeout(settings.timeout_s, pool=None),
        limits=httpx.Limits(max_connections=conns, max_keepalive_connections=per_shard),
    ) for _ in range(shards)]


def _check_items(items: Sequence[dict[str, Any]]) -> None:
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("messages"), list):
            raise ValueError(f"items[{i}] must be a dict with a 'messages' list")


class EmulatorSession:
    """The hosted side of a job, kept open across many rounds of rollouts.

    Use as an async context manager (or call :meth:`aclose`)::

        async with EmulatorSession(job, max_concurrency=256) as session:
            for step in range(n):
                results = await session.run(items, policy, samples_per_item=8)

    Args:
        job: a :class:`ReinforcementJob`, or anything :func:`load_job` accepts.
        max_concurrency: rollouts in flight at once within one :meth:`run`.
        settings: retries, backoff, timeouts and size limits.
        client: an ``httpx.AsyncClient`` to use (never closed by the session);
            otherwise ``ceil(max_concurrency / 16)`` clients are created on
            first use (over ``transport`` when given), rollouts spread over
            them, and closed by :meth:`aclose`.
        transport: the transport of the created clients.

    One grader rate limiter is shared by every shard and every :meth:`run`
    of the session.

    Raises:
        JobConfigError: an invalid job. ValueError: ``max_concurrency < 1``.
    """

    def __init__(self, job: ReinforcementJob | dict[str, Any] | str, *, max_concurrency: int = 64,
                 settings: ClientSettings | None = None, client: httpx.AsyncClient | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency ({max_concurrency}) must be >= 1")
        self.job = load_job(job)
        self.settings = settings or ClientSettings()
        self.max_concurrency = max_concurrency
        self._own = client is None
        self._transport = transport
        self._https: list[httpx.AsyncClient] = [] if client is None else [client]
        self._limiters: dict[str, RateLimiter] = {}
        self._endpoints: list[EndpointClient] = []
        self._closed = False

    @property
    def http_clients(self) -> tuple[httpx.AsyncClient, ...]:
        """The ``httpx.AsyncClient`` s in use (empty before the first :meth:`run` when the session owns them)."""
        return tuple(self._https)

    def _clients(self) -> list[EndpointClient]:
        if self._closed:
            raise RuntimeError("EmulatorSession is closed")
        if not self._endpoints:
            if not self._https:
                self._https = _default_clients(self.settings, self.max_concurrency, self._transport)
            # requests past the pool's max_connections wait in the EndpointClient instead of httpcore's pool
            # (a custom transport has no such pool: its requests are not limited, as before)
            in_flight = _shard_sizes(self.max_concurrency)[2] if self._own and self._transport is None else None
            self._endpoints = [EndpointClient(h, self.settings, self._limiters, in_flight) for h in self._https]
        return self._endpoints

    async def run(self, items: Sequence[dict[str, Any]], policy: Policy, *, samples_per_item: int | None = None,
                  max_episode_steps: int | None = None,
                  on_result: Callable[[RolloutResult], Any] | None = None) -> list[RolloutResult]:
        """Run ``samples_per_item`` rollouts of every item, at most ``max_concurrency`` at once.

        Args:
            items: dataset lines (dicts with a ``messages`` list; ``tools`` optional).
            policy: anything with ``async act(messages, tools, *, item, trace_id) -> PolicyStep``.
            samples_per_item: rollouts per item (the group size G); default from
                ``compute_multiplier`` via :func:`samples_per_item`.
            max_episode_steps: overrides the job's value.
            on_result: called with each finished rollout (e.g. a progress bar).

        Returns:
            ``len(items) * samples_per_item`` results ordered by (item_index, sample_index).

        Raises:
            ValueError: an item without a ``messages`` list, or non-positive counts.
            RuntimeError: the session is closed. Exceptions other than
                :class:`PolicyError` raised by the policy propagate (after the
                other rollouts are cancelled).
        """
        job = self.job
        n = samples_per_item if samples_per_item is not None else _samples_for(job.hyperparameters.compute_multiplier)
        steps = max_episode_steps if max_episode_steps is not None else job.max_episode_steps
        if n < 1 or steps < 1:
            raise ValueError(f"samples_per_item ({n}) and max_episode_steps ({steps}) must be >= 1")
        _check_items(items)
        runner = _Runner(job, policy, self._clients(), steps)
        limiter = anyio.CapacityLimiter(self.max_concurrency)
        results: list[RolloutResult | None] = [None] * (len(items) * n)

        async def one(k: int) -> None:
            async with limiter:
                r = await runner.rollout(k // n, k % n, items[k // n])
            results[k] = r
            if on_result is not None:
                on_result(r)

        try:
            async with anyio.create_task_group() as tg:
                for k in range(len(results)):
                    tg.start_soon(one, k)
        except BaseExceptionGroup as group:
            # surface the first failure itself (not a group); say how many others there were
            first, *others = group.exceptions
            if others and hasattr(first, "add_note"):  # add_note: Python >= 3.11
                first.add_note(f"({len(others)} other rollout(s) failed too: "
                               f"{', '.join(sorted({type(e).__name__ for e in others}))})")
            raise first from None
        return [r for r in results if r is not None]

    async def aclose(self) -> None:
        """Close the HTTP clients the session created (idempotent); later :meth:`run` calls raise."""
        self._closed = True
        if self._own:
            for h in self._https:
                await h.aclose()

    async def __aenter__(self) -> EmulatorSession:
        """Return the session itself."""
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        """Close the session (see :meth:`aclose`)."""
        await self.aclose()


async def run_rollouts(
    items: Sequence[dict[str, Any]],
    policy: Policy,
    job: ReinforcementJob | dict[str, Any] | str,
    *,
    samples_per_item: int | None = None,
    max_concurrency: int = 64,
    max_episode_steps: int | None = None,
    settings: ClientSettings | None = None,
    client: httpx.AsyncClient | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    on_result: Callable[[RolloutResult], Any] | None = None,
) -> list[RolloutResult]:
    """One-shot :meth:`EmulatorSession.run`: open a session, run, close it.

    Args: as :class:`EmulatorSession` and :meth:`EmulatorSession.run`
    (``client``: used and not closed; otherwise the session's own clients
    are created and closed here).

    Returns:
        ``len(items) * samples_per_item`` results ordered by (item_index, sample_index).

    Raises:
        ValueError: an item without a ``messages`` list, or non-positive counts.
        JobConfigError: an invalid job. Exceptions other than
            :class:`PolicyError` raised by the policy propagate (after the
            other rollouts are cancelled).
    """
    job = load_job(job)
    n = samples_per_item if samples_per_item is not None else _samples_for(job.hyperparameters.compute_multiplier)
    steps = max_episode_steps if max_episode_steps is not None else job.max_episode_steps
    if n < 1 or max_concurrency < 1 or steps < 1:
        raise ValueError(f"samples_per_item ({n}), max_concurrency ({max_concurrency}) and "
                         f"max_episode_steps ({steps}) must be >= 1")
    _check_items(items)
    async with EmulatorSession(job, max_concurrency=max_concurrency, settings=settings, client=client,
                               transport=transport) as session:
        return await session.run(items, policy, samples_per_item=n, max_episode_steps=steps, on_result=on_result)
