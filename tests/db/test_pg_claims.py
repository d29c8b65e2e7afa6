"""PostgreSQL admissions of new rollouts arriving together are claimed in batches: one transaction under the
admission lock for every rollout waiting (``Combiner``), not one each (the 1,024-rollout batch's first answers
queued on that lock, 6 round trips per rollout). Each rollout still gets a database of its own, ``max_live``
holds inside a batch, a rollout asked for twice in one batch gets one database, and a release or the sweep
drops what a batch claimed. Plus the schema backend's size query (through ``pg_depend``) counts exactly what
the ``pg_class`` scan counted, tables a tool made included. A real PostgreSQL on 127.0.0.1; no timers: the
first batch is held until the others have queued."""

from __future__ import annotations

import asyncio
import threading
import uuid

import psycopg
import pytest
from db_helpers import make_db

from rft_sdk._db._combine import Combiner
from rft_sdk._wire._endpoint import EndpointError

pytestmark = pytest.mark.slow  # a long file: the scheduler starts it first (tests/conftest.py)


async def _write_and_read(db, trace: str, own: int) -> list[tuple]:
    """A rollout's first call: writes its own rows, returns what it then sees in kv."""
    scope = await db.open_call(trace, f"call_{uuid.uuid4().hex}", is_async=False)
    try:
        def work() -> list[tuple]:
            scope.connection.execute("INSERT INTO kv VALUES (%s, %s)", (f"{trace}:{own}", own))
            scope.connection.execute("UPDATE kv SET v = %s WHERE k = 'a'", (own,))
            return scope.connection.execute("SELECT k, v FROM kv ORDER BY k").fetchall()

        rows = await asyncio.to_thread(work)
        await scope.stage(f"call_{uuid.uuid4().hex}", "ok", {})
        await scope.commit()
        return rows
    finally:
        await scope.close()


def _hold_first_batch(db, total: int) -> None:
    """Hold the first batch of claims until all ``total`` admissions reached the combiner (served in it or
    waiting behind it), so that the rest form one second batch."""
    serve, first = db._claims.serve, [True]

    def held(trace_ids):
        if first[0]:
            first[0] = False
            arrived = threading.Event()
            for _ in range(6000):  # the others are on their way to the combiner (at most 60 s)
                if len(trace_ids) + len(db._claims._pending) >= total:
                    break
                arrived.wait(0.01)
        return serve(trace_ids)

    db._claims.serve = held


def _registry(pg_url: str, prefix: str) -> dict[str, int]:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        return dict(conn.execute("SELECT kind, count(*) FROM rft_rollout_databases WHERE prefix = %s GROUP BY kind",
                                 (prefix,)).fetchall())


@pytest.mark.parametrize("backend", ["postgres", "postgres-schema"])
async def test_rollouts_arriving_together_are_claimed_in_one_transaction_each_in_its_own_database(backend, pg_url):
    """13 new rollouts at once, 8 clones ready: the first batch is held until all 13 arrived, the rest are
    claimed in one second batch (8 from the pool, 5 created cold, in two transactions); every rollout sees
    only its own rows, and releases drop them all."""
    db = make_db(backend, pg_url=pg_url, pool_size=8, max_pool=8)
    try:
        await db.astart()
        await asyncio.to_thread(db.refill_once)
        db.max_pool = 0  # no refill during the batch: 8 ready, 5 cold
        _hold_first_batch(db, 13)
        traces = [f"t{i}" for i in range(13)]
        seen = await asyncio.gather(*(_write_and_read(db, t, i + 100) for i, t in enumerate(traces)))
        assert len(db._claims.batches) == 2 and sum(db._claims.batches) == 13  # two transactions, not 13
        for i, (trace, rows) in enumerate(zip(traces, seen, strict=True)):
            assert rows == [("a", i + 100), ("b", 2), (f"{trace}:{i + 100}", i + 100)]  # its own rows only
        assert db.metrics.events["created_pool"] == 8 and db.metrics.events["created_cold"] == 5
        assert _registry(pg_url, db.name) == {"rollout": 13}
        for i, trace in enumerate(traces):  # after every commit, each database still holds only its own rows
            with db.connect(db.db_id_for(trace), read_only=True) as conn:
                assert conn.execute("SELECT k, v FROM kv ORDER BY k").fetchall() == \
                    [("a", i + 100), ("b", 2), (f"{trace}:{i + 100}", i + 100)]
        for trace in traces:
            await db.release(trace)
        assert _registry(pg_url, db.name) == {}
    finally:
        db.close()
        db.drop_all()
        db.close()


async def test_max_live_holds_inside_one_batch(pg_url):
    """max_live=5 and 8 new rollouts in one batch: 5 admitted, 3 answered the retryable 503, none left
    'creating'."""
    db = make_db("postgres-schema", pg_url=pg_url, pool_size=2, max_pool=2, max_live=5, admission_timeout_s=0.01)
    try:
        await db.astart()
        await asyncio.to_thread(db.refill_once)
        db.max_pool = 0
        _hold_first_batch(db, 8)
        results = await asyncio.gather(*(_write_and_read(db, f"m{i}", i) for i in range(8)), return_exceptions=True)
        refused = [r for r in results if isinstance(r, EndpointError)]
        assert [r.code for r in refused] == ["database_limit"] * 3, results
        assert sum(db._claims.batches[:2]) == 8
        assert _registry(pg_url, db.name) == {"rollout": 5}
    finally:
        db.close()
        db.drop_all()
        db.close()


async def test_one_rollout_asked_for_twice_in_one_batch_gets_one_database(pg_url):
    """Two first calls of one rollout (and of a second one) in the same batch: one database each, shared by
    both calls; the pool gives one clone per rollout, not per call."""
    db = make_db("postgres-schema", pg_url=pg_url, pool_size=4, max_pool=4)
    try:
        await db.astart()
        await asyncio.to_thread(db.refill_once)
        db.max_pool = 0
        _hold_first_batch(db, 5)
        await asyncio.gather(_write_and_read(db, "first", 1),
                             *(_write_and_read(db, t, v) for t, v in (("dup", 7), ("dup", 8), ("two", 9), ("two", 10))))
        assert sum(db._claims.batches) == 5
        assert _registry(pg_url, db.name) == {"rollout": 3, "pool": 1}  # first, dup, two; one clone left
        for trace, keys in (("dup", ["dup:7", "dup:8"]), ("two", ["two:10", "two:9"])):
            with db.connect(db.db_id_for(trace), read_only=True) as conn:  # both calls, one database
                assert [r[0] for r in conn.execute("SELECT k FROM kv WHERE k LIKE %s ORDER BY k",
                                                   (trace + ":%",)).fetchall()] == keys
    finally:
        db.close()
        db.drop_all()
        db.close()


async def test_the_schema_size_counts_what_a_scan_of_pg_class_counted_tool_made_tables_included(pg_url):
    db = make_db("postgres-schema", pg_url=pg_url)
    try:
        await db.astart()
        scope = await db.open_call("sized", "c1", is_async=False)
        try:
            conn = scope.connection
            await asyncio.to_thread(conn.execute, "CREATE TABLE made_by_tool (x text)")
            await asyncio.to_thread(conn.execute, "INSERT INTO made_by_tool SELECT repeat('x', 1000) "
                                                  "FROM generate_series(1, 2000)")
            (size,) = conn.execute(db.size_sql).fetchone()
            (scanned,) = conn.execute(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'").fetchone()
            (tool_table,) = conn.execute("SELECT pg_total_relation_size('made_by_tool')").fetchone()
            assert size == scanned and tool_table > 2_000_000 and size > tool_table
            await scope.stage("c1", "ok", {})
            await scope.commit()
        finally:
            await scope.close()
    finally:
        db.close()
        db.drop_all()
        db.close()


# -- the Combiner alone -------------------------------------------------------------------------
def test_combiner_serves_every_request_its_own_outcome_in_bounded_batches():
    calls: list[list[int]] = []
    gate = threading.Event()

    def serve(keys: list[int]) -> list[int | BaseException]:
        if not calls:
            gate.wait(30)  # the first batch waits until every other request queued
        calls.append(keys)
        return [ValueError(k) if k == 13 else k * 2 for k in keys]

    combiner: Combiner[int, int] = Combiner(serve, max_batch=16)
    results: dict[int, object] = {}
    threads = [threading.Thread(target=lambda k=k: results.__setitem__(k, combiner.claim(k))) for k in range(40)]
    threads[0].start()
    while not combiner._leading:
        gate.wait(0.001)
    for t in threads[1:]:
        t.start()
    while len(combiner._pending) < 39:
        gate.wait(0.001)
    gate.set()
    for t in threads:
        t.join(30)
    assert sorted(k for batch in calls for k in batch) == list(range(40))  # each served once
    assert [len(b) for b in calls] == [1, 16, 16, 7] == combiner.batches
    assert {k: v for k, v in results.items() if k != 13} == {k: k * 2 for k in range(40) if k != 13}
    assert isinstance(results[13], ValueError)
    assert not combiner._leading and not combiner._pending


def test_combiner_hands_what_serve_raised_to_every_request_of_the_batch_and_goes_on():
    def serve(keys: list[str]) -> list[str | BaseException]:
        if "boom" in keys:
            raise RuntimeError("server gone")
        return [k.upper() for k in keys]

    combiner: Combiner[str, str] = Combiner(serve, max_batch=4)
    failed = combiner.claim("boom")
    assert isinstance(failed, RuntimeError) and str(failed) == "server gone"
    assert combiner.claim("ok") == "OK"  # the lead was handed back: the next request is served
    with pytest.raises(ValueError, match="max_batch"):
        Combiner(serve, max_batch=0)


async def test_a_batch_past_max_connections_reuses_its_connections_instead_of_opening_new_ones(pg_url):
    """Issue 40: 48 first calls queued on 4 connections run on those 4 server connections. Before, a handed-back
    connection was closed whenever every call slot was held (a slot is still held while its call hands the
    connection back), so a batch opened a new server connection (a backend process) for most of its calls."""
    db = make_db("postgres-schema", pg_url=pg_url, max_connections=4, pool_size=48, max_pool=48)
    try:
        await db.astart()
        await asyncio.to_thread(db.refill_once)
        pids: list[int] = []

        async def call(i: int) -> None:
            scope = await db.open_call(f"reuse-{i}", "c1", is_async=False)
            try:
                def work() -> None:
                    pids.append(scope.connection.execute("SELECT pg_backend_pid()").fetchone()[0])
                    scope.connection.execute("INSERT INTO kv VALUES (%s, %s)", (f"k{i}", i))
                await asyncio.to_thread(work)
                await scope.stage("c1", "ok", {})
                await scope.commit()
            finally:
                await scope.close()

        await asyncio.gather(*(call(i) for i in range(48)))
        assert len(pids) == 48 and len(set(pids)) <= 4, f"{len(set(pids))} server connections for 48 calls"
    finally:
        db.close()
        db.drop_all()
        db.close()
