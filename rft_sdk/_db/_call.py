"""One tool call inside its rollout's database, in one visit: :func:`run_call`.

The request path (``rft_sdk._server._calls``) enters this package once per tool call, handing over the
call's own steps as a :class:`CallWork`; everything the database does for the call happens inside that
one visit, in this order:

1. **admission and open**: the rollout's database (created on its first call: a warm-pool claim or a
   clone, bounded by ``max_live``), a connection in a transaction, the replay check (a ``call_id``
   committed before a crash lost the store's copy);
2. **the tool** (``CallWork.run_sync`` or ``CallWork.run``) on that connection, then the call **staged**
   in the same transaction (its ``_rft_calls`` row, the byte budget);
3. **the answer recorded** (``CallWork.finish``: encoded and saved in the rollout store);
4. **commit** (only once the store holds the answer; a commit that fails takes the answer back out,
   ``CallWork.withdraw``) or **rollback**, and the connection **handed back**.

Thread hops (measured, issue 40: at 1,024 rollouts starting together the hand-offs between the event
loop and worker threads were most of a first answer's CPU): a sync tool of a backend without connection
slots (SQLite) runs in the worker thread that admitted and opened its database, staged there too: steps
1-2 in **one hop**, step 4 on the event loop where the commit cannot wait (``RolloutDatabase.commit_nowait``:
SQLite with ``busy_timeout=0``), else in a second hop. The first hop runs on the database's ``admission_threads`` (SQLite: 4)
while the call holds a slot of the tool's own limiter (``CallWork.in_worker``: its ``max_concurrency``
and ``queue_timeout_s`` hold as before): measured at 1,024 first calls on 2 cores, the same hop on the
tool's 40 threads cost 20-40 % more CPU per first answer and twice the p99 (the threads queue for the
GIL). A tool that holds that hop longer than :data:`SHARED_HOP_S` (a tool waiting on I/O) takes the
general path from its next call on, with its own threads. On the PostgreSQL backends (connection slots) a
sync tool's call is three hops: the admission (batched with other new rollouts' claims), then, once a
connection slot is free, the open, the tool and the stage in **one hop** on the tool's own threads
(:meth:`RolloutDatabase.open_and_run`), then the commit and hand-back: measured at 1,024 first calls on
2 cores, 1.27-1.62 ms of client CPU per first answer against 1.49-2.08 ms for a hop each, side by side
(docs/database.md, "measured a fifth time").
Async tools, ``blocking=False`` tools and tools with a ``timeout_s`` take the general path: admission and
open, the tool where it always runs, the stage, the commit: each its own hop where the driver is sync.

Errors: the retryable 503s of :meth:`RolloutDatabase.open_call` (``database_limit``,
``database_unavailable``) are raised before the tool runs; a stage refused (413 ``database_too_large``,
400 ``tool_error`` for a statement the database refused) is rolled back and handed to ``finish`` as the
call's answer; anything ``finish`` raises rolls the transaction back; a failed commit raises its 400/503
after ``withdraw``.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar

import anyio

from .._wire._endpoint import EndpointError
from ._base import CallScope, RolloutDatabase

__all__ = ["SHARED_HOP_S", "CallWork", "Replay", "Staged", "run_call"]

T = TypeVar("T")
#: Seconds a sync tool may run in the database's shared admission threads (the one-hop path) before its
#: later calls take the general path (the tool on threads of its own): those few threads are for
#: millisecond work, a tool waiting on I/O there would hold every new rollout's admission behind it.
SHARED_HOP_S = 0.05
#: ``(output, record fields)`` of a call committed in the database before (answered, not run again).
Replay = tuple[str, dict[str, Any]]
#: ``(output, record fields)`` a tool call stages in its transaction (``CallScope.stage``).
Staged = tuple[str, Mapping[str, Any]]


class CallWork(Protocol):
    """The steps of one tool call that are not the database's, as the request path hands them over."""

    @property
    def in_thread(self) -> bool:
        """``run_sync`` may run in the worker thread that opens the database (a sync tool that runs in a
        worker thread anyway and has no ``timeout_s``)."""
        ...

    def in_worker(self, fn: Callable[[], T], limiter: anyio.CapacityLimiter | None) -> Awaitable[T]:
        """Run ``fn`` in a worker thread of ``limiter`` (``None``: anyio's default) while holding a slot of the
        tool's own limiter (its ``max_concurrency``; raises the tool's 503 ``tool_busy`` when no slot frees
        within ``queue_timeout_s``)."""
        ...

    def run_sync(self, connection: Any, replay: Replay | None) -> Staged | None:
        """In the worker thread: run the tool on ``connection`` (or answer ``replay``); return what to stage,
        or ``None`` when nothing is to be committed (a replay, or an error answer the call keeps for
        ``finish``). Raises only what must not be answered (a retryable 503): rolled back, re-raised.
        A tool that ran longer than :data:`SHARED_HOP_S` here should stop asking for :attr:`in_thread`."""
        ...

    async def run(self, connection: Any, replay: Replay | None) -> Staged | None:
        """:meth:`run_sync` on the event loop (async tools, tools with a timeout, ``blocking=False``)."""
        ...

    async def finish(self, error: EndpointError | None) -> bool:
        """Encode the answer and record it in the store (``error``: the stage's refusal, answered instead);
        return whether to commit. Raises: rolled back, re-raised."""
        ...

    async def withdraw(self) -> None:
        """The commit failed after ``finish`` recorded the answer: take it back out of the store."""
        ...


async def run_call(db: RolloutDatabase, trace_id: str, call_id: str, work: CallWork, *, is_async: bool) -> None:
    """Run one tool call of ``trace_id`` in its database (the module docstring's steps, one visit).

    Args:
        db: the server's rollout database.
        is_async: the tool is a coroutine function (an async driver connection where the backend has one).

    Raises:
        EndpointError: 503 ``database_limit`` / ``database_unavailable`` (nothing ran, nothing recorded);
            what ``work`` raises; the commit's 400 ``tool_error`` / 503 ``database_unavailable`` (withdrawn).
    """
    use_async = is_async and db.supports_async
    if work.in_thread and not use_async:
        scope, error = await _one_hop(db, trace_id, call_id, work)
    else:
        scope = await db.open_call(trace_id, call_id, is_async=is_async)
        error = None
        try:
            staged = await work.run(scope.connection, scope.replay)
            if staged is None:
                await scope.rollback()
            else:
                error = await _stage(scope, call_id, staged)
        except BaseException:
            await scope.close()
            raise
    try:
        commit = await work.finish(error)
        if commit and scope.open:
            try:
                await scope.commit()
            except EndpointError:
                await work.withdraw()
                raise
    finally:
        await scope.close()


async def _stage(scope: CallScope, call_id: str, staged: Staged) -> EndpointError | None:
    try:
        await scope.stage(call_id, staged[0], staged[1])
    except EndpointError as exc:  # rolled back by stage: the call's answer
        return exc
    return None


async def _one_hop(db: RolloutDatabase, trace_id: str, call_id: str, work: CallWork
                   ) -> tuple[CallScope, EndpointError | None]:
    """The open, the tool and the stage in one worker-thread hop (a sync tool): ``(the open scope, the stage's
    refusal or None)``; a call with nothing to commit is rolled back and its connection handed back in the same
    hop. Without connection slots (SQLite) the admission runs in that hop too, on the database's admission
    threads; with them (PostgreSQL) the admission is a hop of its own and the hop runs on the tool's threads."""
    t0 = time.perf_counter()

    def then(db_id: str, connection: Any, row: Any, slot: Any = None) -> tuple[CallScope, EndpointError | None]:
        db.metrics.open_latency.observe(time.perf_counter() - t0)
        replay = (row[0], json.loads(row[1])) if row is not None else None
        if replay is not None:
            db.metrics.event("replayed_from_database")
        scope = CallScope(db, db_id, connection, False, replay, slot)
        try:
            staged = work.run_sync(connection, replay)
            error = scope.stage_sync(call_id, staged[0], staged[1]) if staged is not None else None
            if staged is None or error is not None:
                scope.close_sync()  # nothing to commit: rolled back and handed back in this hop
        except BaseException:
            scope.close_sync()
            raise
        return scope, error

    try:
        if db.connection_slots is None:
            return await db.admit_and_run(trace_id, call_id, then,
                                          functools.partial(work.in_worker, limiter=db._admission_limiter()))
        return await db.open_and_run(trace_id, call_id, then, functools.partial(work.in_worker, limiter=None))
    except db.unavailable_errors as exc:
        raise db.unavailable(exc) from exc
