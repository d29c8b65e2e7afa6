"""A sync tool's call in one worker-thread hop on every backend (``rft_sdk._db._call``, issue 40).

On PostgreSQL the open, the tool and the stage used to be three hops (measured at 1,024 rollouts starting
together: 2.05-2.08 ms of client CPU per first answer, 1.49-1.62 ms in one hop). These tests drive
:func:`run_call` with a :class:`CallWork` of their own over real databases: the path taken, what is kept,
what is rolled back, and that every connection slot is handed back whichever way the call ends.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import Any

import anyio.to_thread
import pytest

from rft_sdk._db._call import run_call
from rft_sdk._wire._endpoint import EndpointError


class Work:
    """One call of a sync tool writing ``n`` into ``log`` (``fail``: the tool's error answer instead;
    ``busy``: the tool's thread slot never frees, 503 ``tool_busy`` before anything runs)."""

    in_thread = True

    def __init__(self, n: int, *, fail: bool = False, busy: bool = False) -> None:
        self.n, self.fail, self.busy = n, fail, busy
        self.ran_in: int | None = None
        self.in_transaction = False
        self.finished: list[EndpointError | None] = []

    def in_worker(self, fn: Callable[[], Any], limiter: Any) -> Awaitable[Any]:
        if self.busy:
            raise EndpointError(503, "tool_busy", "no thread slot of the tool freed in time")
        return anyio.to_thread.run_sync(fn, limiter=limiter)

    def run_sync(self, connection: Any, replay: Any) -> tuple[str, dict[str, Any]] | None:
        self.ran_in = threading.get_ident()
        self.in_transaction = connection.info.transaction_status != 0 if hasattr(connection, "info") \
            else connection.in_transaction
        if replay is not None:
            return None
        connection.execute(f"INSERT INTO log VALUES ({self.n})")
        return None if self.fail else (str(self.n), {})

    async def run(self, connection: Any, replay: Any) -> Any:
        raise AssertionError("a sync tool took the general path (a hop for the open, the tool and the stage each)")

    async def finish(self, error: EndpointError | None) -> bool:
        self.finished.append(error)
        return error is None and not self.fail

    async def withdraw(self) -> None:
        raise AssertionError("nothing failed to commit")


async def logged(db: Any, trace_id: str) -> list[int]:
    scope = await db.open_call(trace_id, "call_read", is_async=False)
    try:
        rows = await anyio.to_thread.run_sync(
            lambda: scope.connection.execute("SELECT n FROM log ORDER BY n").fetchall())
    finally:
        await scope.close()
    return [r[0] for r in rows]


async def test_a_sync_tool_runs_in_the_hop_that_opens_its_database_and_commits(make, backend):
    db = make(max_connections=1) if backend != "sqlite" else make()
    work = Work(1)
    await run_call(db, "t1", "call_1", work, is_async=False)
    assert work.ran_in is not None and work.in_transaction and work.finished == [None]
    again = Work(1)
    await run_call(db, "t1", "call_1", again, is_async=False)  # the same call_id: answered from the database
    assert again.finished == [None]
    await run_call(db, "t1", "call_2", Work(2), is_async=False)
    assert await logged(db, "t1") == [1, 2]
    assert db.slots_held == 0


async def test_a_tool_error_and_a_busy_tool_keep_nothing_and_hand_the_slot_back(make, backend):
    db = make(max_connections=1) if backend != "sqlite" else make()
    failed = Work(5, fail=True)
    await run_call(db, "t1", "call_1", failed, is_async=False)
    assert failed.finished == [None]  # answered by finish (the tool's error), rolled back in the hop
    with pytest.raises(EndpointError) as busy:
        await run_call(db, "t1", "call_2", Work(6, busy=True), is_async=False)
    assert (busy.value.status, busy.value.code) == (503, "tool_busy")
    assert db.slots_held == 0  # one slot (max_connections=1): the next call gets it
    await run_call(db, "t1", "call_3", Work(7), is_async=False)
    assert await logged(db, "t1") == [7]
    assert db.slots_held == 0
