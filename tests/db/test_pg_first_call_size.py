"""``PostgresSchemaDatabase``'s byte budget on a rollout's first call (issue 40): measuring the schema opened
every relation of a schema the connection had not seen (2.7 ms of the server's 4.4 ms of CPU per first answer
at 1,024 rollouts starting together), so a first call whose tool wrote nothing returns a bound instead: the
clone's size measured when it was made, plus what autovacuum may add, plus what one ``_rft_calls`` row can
add. These tests hold the bound to the real size and show every other case is measured: a tool that wrote
(also in a savepoint it rolled back, also after its own ``COMMIT`` in SQL text), a second call, a budget the
bound does not fit in, and a refusal past the budget. A real PostgreSQL on 127.0.0.1."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from rft_sdk._wire._endpoint import EndpointError


@pytest.fixture
def backend():
    """Only the schema backend (conftest's ``make`` builds it and drops it after the test)."""
    return "postgres-schema"


async def _first_call(db, source: str, tool: Callable[[Any], None]) -> tuple[int, int]:
    """A new rollout's first call (its clone from the pool, or cold), ``tool`` run on its connection:
    ``(what stage_and_measure returned, the schema's size measured after it)``; rolled back."""
    if source == "pool":
        db.pool_size = 1
        await asyncio.to_thread(db.refill_once)
    trace = f"r-{uuid.uuid4().hex}"
    scope = await db.open_call(trace, "call_0", is_async=False)
    try:
        conn = scope.connection

        def work() -> tuple[int, int]:
            tool(conn)
            got = db.stage_and_measure(conn, ("call_0", "x" * 5000, "{}"))
            (real,) = conn.execute(db.size_sql).fetchone()
            return got, int(real)

        return await asyncio.to_thread(work)
    finally:
        await scope.close()
        await db.release(trace)


def _read(conn) -> None:
    conn.execute("SELECT * FROM kv").fetchall()


@pytest.mark.parametrize("source", ["pool", "cold"])
async def test_a_first_call_that_only_read_gets_a_bound_at_or_above_the_real_size(make, source):
    db = make()
    await db.astart()
    got, real = await _first_call(db, source, _read)
    # not measured (a measurement would be the real size itself), and never below it
    assert got > real
    assert got - real < 2 * 5000 + 64 * 8192 + 64 * 8192  # the row's bound and the clone's slack, no more


def _writes(conn) -> None:
    conn.execute("INSERT INTO log SELECT generate_series(1, 20000)")


def _writes_in_a_rolled_back_savepoint(conn) -> None:
    conn.execute("INSERT INTO log SELECT generate_series(1, 20000)")
    conn.rollback()  # the SDK's connection: back to the call's savepoint; the pages stay written


def _commits_in_sql_text(conn) -> None:
    conn.execute("INSERT INTO log SELECT generate_series(1, 20000)")
    conn.execute("COMMIT")  # not intercepted: the call's transaction (and its mark) ends here


@pytest.mark.parametrize("tool", [_writes, _writes_in_a_rolled_back_savepoint, _commits_in_sql_text])
async def test_a_first_call_whose_tool_wrote_is_measured(make, tool):
    db = make()
    await db.astart()
    got, real = await _first_call(db, "pool", tool)
    assert got == real


async def test_a_budget_the_bound_does_not_fit_in_is_decided_by_a_measurement(make):
    db = make()
    await db.astart()
    got, real = await _first_call(db, "pool", _read)
    db.max_db_bytes = real + (got - real) // 2  # the real size fits, the bound does not
    again, real_again = await _first_call(db, "pool", _read)
    assert again == real_again <= db.max_db_bytes  # measured, and not refused


async def test_only_the_first_call_is_bounded_the_second_is_measured(make):
    db = make(pool_size=1)
    await db.astart()
    await asyncio.to_thread(db.refill_once)
    trace = f"r-{uuid.uuid4().hex}"
    results = []
    for call_id in ("call_0", "call_1"):
        scope = await db.open_call(trace, call_id, is_async=False)
        try:
            def work(conn=scope.connection, call_id=call_id) -> tuple[int, int]:
                _read(conn)
                got = db.stage_and_measure(conn, (call_id, "ok", "{}"))
                return got, int(conn.execute(db.size_sql).fetchone()[0])
            results.append(await asyncio.to_thread(work))
            await scope.commit()
        finally:
            await scope.close()
    await db.release(trace)
    (first, first_real), (second, second_real) = results
    assert first > first_real and second == second_real


async def test_a_first_call_past_the_budget_is_refused_and_rolled_back(make):
    db = make(pool_size=1)
    await db.astart()
    await asyncio.to_thread(db.refill_once)
    db.max_db_bytes = 2 * 2**20 + 512 * 1024  # well above a fresh clone, below the clone plus the tool's rows
    scope = await db.open_call("big", "call_0", is_async=False)
    try:
        await asyncio.to_thread(scope.connection.execute,
                                "INSERT INTO log SELECT generate_series(1, 200000)")  # about 7 MB
        with pytest.raises(EndpointError) as err:
            await scope.stage("call_0", "ok", {})
        assert err.value.status == 413
    finally:
        await scope.close()
    scope = await db.open_call("big", "call_1", is_async=False)
    try:
        (rows,) = await asyncio.to_thread(lambda: scope.connection.execute("SELECT count(*) FROM log").fetchone())
        assert rows == 0
    finally:
        await scope.close()
        await db.release("big")
