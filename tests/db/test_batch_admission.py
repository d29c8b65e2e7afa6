"""A whole batch of rollouts at once: SQLite admission without listing the folder (counts kept in
``.lock``, exact at the bound), PostgreSQL tool connections bounded by ``max_connections`` (the 1,024-in-flight
run opened one per call and ran the server out of them), a release that no longer waits forever on a
straggler's locks (``DROP SCHEMA``), and the refill held back while new rollouts arrive. Real SQLite files and
a real PostgreSQL on 127.0.0.1; nothing sleeps on a timer."""

from __future__ import annotations

import asyncio
import os
import uuid

import psycopg
import pytest
from db_helpers import make_db

from rft_sdk._db import SQLiteDatabase
from rft_sdk._wire._endpoint import EndpointError

pytestmark = pytest.mark.slow  # a long file: the scheduler starts it first (tests/conftest.py)


async def _call(db, trace: str, hold: asyncio.Event | None = None) -> None:
    scope = await db.open_call(trace, f"call_{uuid.uuid4().hex}", is_async=False)
    try:
        await asyncio.to_thread(scope.connection.execute, "SELECT count(*) FROM kv")
        if hold is not None:
            await hold.wait()
        await scope.stage(f"call_{uuid.uuid4().hex}", "ok", {})
        await scope.commit()
    finally:
        await scope.close()


# -- SQLite: the counts in .lock ---------------------------------------------------------------
def _lock_counts(db: SQLiteDatabase) -> tuple[int, int]:
    live, pool = (db.dir / ".lock").read_bytes().split()[:2]
    return int(live), int(pool)


async def test_sqlite_counts_follow_admissions_claims_and_releases(tmp_path):
    db = make_db("sqlite", tmp_path=tmp_path, pool_size=3, max_pool=3, pool_window_s=3600)
    # the background refill stays paused (it clones once new rollouts pause for REFILL_QUIET_S, and the
    # clones it reserves would show in the counts read below); refill_once from this thread still fills
    db.REFILL_QUIET_S = 3600
    try:
        await db.astart()
        await asyncio.to_thread(db.refill_once)
        assert _lock_counts(db) == (0, 3)
        await asyncio.gather(*(_call(db, f"r{i}") for i in range(5)))  # 3 claimed, 2 cold
        assert db.metrics.events["created_pool"] == 3 and db.metrics.events["created_cold"] == 2
        assert _lock_counts(db) == (5, 0) == ((await db.counts())["live"], (await db.counts())["pool"])
        await db.release("r0")
        await db.release("r1")
        assert _lock_counts(db)[0] == 3
        assert not [n for n in os.listdir(db.dir) if n.startswith(".tmp-")]  # no reservation left behind
    finally:
        db.close()
        db.drop_all()


async def test_sqlite_bound_stays_exact_when_the_counts_are_wrong_or_files_vanish(tmp_path):
    db = make_db("sqlite", tmp_path=tmp_path, max_live=3, admission_timeout_s=0.1)
    try:
        await db.astart()
        for i in range(3):
            await _call(db, f"r{i}")
        assert _lock_counts(db) == (3, 0)
        with pytest.raises(EndpointError) as refused:  # at the bound: listed, still 3, refused
            await _call(db, "r3")
        assert refused.value.status == 503 and refused.value.code == "database_limit"
        db._path(db.db_id_for("r0")).unlink()  # removed by hand: the count is high, the listing at the bound
        await _call(db, "r3")  # finds the free slot
        assert _lock_counts(db)[0] == 3
        (db.dir / ".lock").write_bytes(b"garbage")  # unreadable counts: listed again, never trusted
        with pytest.raises(EndpointError):
            await _call(db, "r4")
        assert _lock_counts(db) == (3, 0)
    finally:
        db.close()
        db.drop_all()


async def test_sqlite_two_processes_worth_of_pool_names_never_claim_one_clone_twice(tmp_path):
    """Two backends on one folder (two workers): each keeps pool names in memory; a name the other claimed
    is skipped, and every rollout gets a database of its own."""
    name = f"t{uuid.uuid4().hex[:10]}"
    a = make_db("sqlite", tmp_path=tmp_path, name=name, pool_size=6, max_pool=6)
    b = make_db("sqlite", tmp_path=tmp_path, name=name, pool_size=6, max_pool=6)
    try:
        await a.astart()
        await b.astart()
        await asyncio.to_thread(a.refill_once)
        await asyncio.to_thread(b.refill_once)  # b lists the same names
        a.max_pool = b.max_pool = 0
        pooled = (await a.counts())["pool"]  # 6, or 7-8: two fillers at once may each add one past the target
        assert 6 <= pooled <= 8
        await asyncio.gather(*(_call(db, f"{tag}{i}") for i in range(5) for tag, db in (("a", a), ("b", b))))
        claimed = a.metrics.events["created_pool"] + b.metrics.events["created_pool"]
        cold = a.metrics.events["created_cold"] + b.metrics.events["created_cold"]
        assert (claimed, cold) == (pooled, 10 - pooled)  # every clone claimed once, by one of the two
        assert len([n for n in os.listdir(a.dir) if n.startswith("r-") and n.endswith(".db")]) == 10
        assert _lock_counts(a) == (10, 0)
    finally:
        a.close()
        b.close()
        a.drop_all()


def test_the_refill_waits_for_new_rollouts_to_pause_or_for_the_window(tmp_path):
    db = make_db("sqlite", tmp_path=tmp_path, pool_window_s=2.0)
    now = 100.0  # time.monotonic() seconds, as the maintenance thread passes them
    db._last_start, db._refill_asked = now, now - 0.5
    assert not db.refill_may_run(now + db.REFILL_QUIET_S / 2)  # a batch is arriving: its answers first
    assert db.refill_may_run(now + 2 * db.REFILL_QUIET_S)  # paused
    db._last_start = now + 1.4  # a steady stream never pauses: the window bounds the wait
    assert not db.refill_may_run(now + 1.45)
    assert db.refill_may_run(now + 1.5)


# -- PostgreSQL: connections bounded, releases bounded -----------------------------------------
def _connections(pg_url: str) -> int:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        (n,) = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                            "AND pid <> pg_backend_pid()").fetchone()
    return int(n)


@pytest.mark.parametrize("backend", ["postgres", "postgres-schema"])
async def test_a_batch_larger_than_max_connections_queues_for_connections(backend, pg_url):
    """12 rollouts hold their call open at once with max_connections=4: 4 run, 8 wait for a connection (the
    old path opened 12), and all 12 finish once the first are let go."""
    db = make_db(backend, pg_url=pg_url, max_connections=4)
    try:
        await db.astart()
        before = _connections(pg_url)
        hold = asyncio.Event()
        calls = [asyncio.create_task(_call(db, f"q{i}", hold)) for i in range(12)]

        async def queued() -> None:  # 4 hold a connection inside the call, 8 wait for one
            while not (db.slots_held == 4 and db._slots_var.get().statistics().tasks_waiting == 8):
                await asyncio.sleep(0.01)

        await asyncio.wait_for(queued(), 60)
        assert _connections(pg_url) - before <= 4 + 8  # tool connections within max_connections (+ admin pool)
        hold.set()
        await asyncio.gather(*calls)
        assert db.slots_held == 0
        assert db.metrics.events["created_cold"] == 12
    finally:
        db.close()
        db.drop_all()
        db.close()


async def test_a_release_does_not_wait_forever_on_a_schema_another_connection_holds(pg_url):
    """A rollout's schema locked by a transaction left open (a straggling call of another replica): the
    release gives up after unavailable_timeout_s and lets it expire; the next sweep drops it."""
    db = make_db("postgres-schema", pg_url=pg_url, unavailable_timeout_s=1.0)
    try:
        await db.astart()
        await _call(db, "held")
        schema = db.db_id_for("held")
        with psycopg.connect(pg_url) as straggler:
            straggler.execute(f'SELECT count(*) FROM "{schema}".kv')  # AccessShareLock until its transaction ends
            await asyncio.wait_for(db.release("held"), 60)  # the old path waited here for good
            with psycopg.connect(pg_url, autocommit=True) as probe:
                assert probe.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
        assert await db.sweep() == 1  # the straggler is gone: dropped now
        with psycopg.connect(pg_url, autocommit=True) as probe:
            assert probe.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone() is None
    finally:
        db.close()
        db.drop_all()
        db.close()
