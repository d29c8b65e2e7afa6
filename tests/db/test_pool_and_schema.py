"""The warm pool sized from the start rate and refilled in the background, and PostgreSQL's schema per
rollout (``PostgresSchemaDatabase``): isolation under concurrent starts, cleanup, what a schema copy
refuses. Real SQLite files and a real PostgreSQL on 127.0.0.1; the refill is awaited, never slept on."""

from __future__ import annotations

import asyncio
import uuid

import psycopg
import pytest
from db_helpers import setup_postgres

from rft_sdk._db import PoolSizer, PostgresSchemaDatabase
from rft_sdk.exceptions import RFTError


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# -- the sizing rule (pure) -----------------------------------------------------------------
def test_a_batch_sizes_the_pool_to_itself_then_the_peak_decays_to_the_floor():
    clock = Clock()
    sizer = PoolSizer(2, 1024, window_s=1.0, half_life_s=300.0, clock=clock)
    assert sizer.target() == 2  # nothing started: the floor
    sizer.started(600, at=clock.now)
    sizer.started(424, at=clock.now + 0.5)  # one batch: 1,024 within one window
    clock.now += 30  # training between two steps: the batch is remembered
    assert sizer.target() == 1024
    clock.now += 270  # one half-life after the batch (it left the 60 s horizon: it decays)
    assert 512 <= sizer.target() <= 514
    clock.now += 300 * 20
    assert sizer.target() == 2


def test_a_batch_served_slowly_still_counts_by_when_it_arrived():
    clock = Clock()
    sizer = PoolSizer(0, 4096, clock=clock)
    arrived = clock.now
    clock.now += 12  # the server needed 12 s to give 256 rollouts their databases
    sizer.started(256, at=arrived)
    assert sizer.target() == 256


def test_a_steady_stream_asks_for_rate_times_the_longer_of_window_and_clone_time():
    clock = Clock()
    sizer = PoolSizer(0, 64, window_s=1.0, clock=clock)
    for i in range(100):  # 10 starts per second
        sizer.started(at=clock.now + i / 10)
    clock.now += 10
    assert sizer.target() == 10
    sizer.prepared(3.0)  # a clone takes 3 s: the pool covers 3 s of starts
    assert sizer.target() == 30
    sizer.prepared(3.0)
    sizer.started(1000, at=clock.now)
    assert sizer.target() == 64  # the ceiling


@pytest.mark.parametrize("floor, ceiling, window, half", [(-1, 4, 1, 1), (5, 4, 1, 1), (0, 4, 0, 1), (0, 4, 1, 0)])
def test_bad_pool_bounds_are_refused(floor, ceiling, window, half):
    with pytest.raises(ValueError):
        PoolSizer(floor, ceiling, window_s=window, half_life_s=half)


# -- the background refill, on every backend -------------------------------------------------
async def _call(db, trace: str) -> None:
    scope = await db.open_call(trace, f"call_{uuid.uuid4().hex}", is_async=False)
    try:
        scope.connection.execute("SELECT 1")
        await scope.stage(f"call_{uuid.uuid4().hex}", "ok", {})
        await scope.commit()
    finally:
        await scope.close()


async def _until_refilled(db) -> dict[str, int]:
    """Wake the maintenance thread and await its pass (an event), until the pool holds its target."""
    for _ in range(50):
        db.pool_filled.clear()
        db._wake.set()
        assert await asyncio.to_thread(db.pool_filled.wait, 60), "the maintenance thread did not finish a pass"
        counts = await db.counts()
        if counts["pool"] >= db.pool_target():
            return counts
    raise AssertionError(f"the pool never reached its target {db.pool_target()}: {await db.counts()}")


async def test_a_batch_of_starts_refills_the_pool_in_the_background_to_its_size(make):
    clock = Clock()
    db = make(pool_size=0, max_pool=6, sweep_interval_s=3600)
    db.sizer = PoolSizer(0, 6, clock=clock)
    await db.astart()
    assert (await _until_refilled(db))["pool"] == 0  # nothing started yet: no clone made ahead
    await asyncio.gather(*(_call(db, f"step1-{i}") for i in range(5)))  # 5 arrive at once (fake clock)
    events = db.metrics.events
    assert events["created_cold"] + events["created_pool"] == 5 and db.pool_target() == 5
    counts = await _until_refilled(db)  # refilled by the maintenance thread, no call asked for it
    assert counts == {"live": 5, "pool": 5}
    clock.now += 30  # training; then the next step's 5 rollouts find their clones ready
    claimed = events["created_pool"]
    await asyncio.gather(*(_call(db, f"step2-{i}") for i in range(5)))
    assert events["created_pool"] - claimed == 5


# -- PostgreSQL, a schema per rollout ---------------------------------------------------------
@pytest.fixture
def schema_db(pg_url):
    made = []

    def factory(setup=setup_postgres, **options):
        options.setdefault("pool_size", 0)
        options.setdefault("ttl_s", 600)
        db = PostgresSchemaDatabase(pg_url, setup=setup, name=f"s{uuid.uuid4().hex[:10]}", **options)
        made.append(db)
        return db

    yield factory
    for db in made:
        db.close()
        db.drop_all()
        db.close()


def _schemas(pg_url: str, prefix: str) -> list[str]:
    with psycopg.connect(pg_url) as conn:
        return sorted(r[0] for r in conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE %s",
                                                 (prefix + "\\_%",)).fetchall())


async def test_schemas_started_together_never_see_each_others_rows(schema_db, pg_url):
    db = schema_db(pool_size=4, max_pool=4)
    await db.astart()
    await asyncio.to_thread(db.refill_once)  # half from the pool, half cold

    async def rollout(i: int) -> tuple[int, list[tuple]]:
        scope = await db.open_call(f"r{i}", "c1", is_async=False)
        try:
            conn = scope.connection
            conn.execute("INSERT INTO kv VALUES (%s, %s)", (f"own-{i}", i))
            conn.execute("UPDATE kv SET v = %s WHERE k = 'a'", (100 + i,))
            await asyncio.sleep(0)  # let the others write meanwhile
            rows = conn.execute("SELECT k, v FROM kv ORDER BY k").fetchall()
            await scope.stage("c1", "ok", {})
            await scope.commit()
            return i, rows
        finally:
            await scope.close()

    results = await asyncio.gather(*(rollout(i) for i in range(8)))
    for i, rows in results:
        assert rows == [("a", 100 + i), ("b", 2), (f"own-{i}", i)]
    for i in range(8):  # and after every commit, each schema still holds only its own rows
        with db.connect(db.db_id_for(f"r{i}"), read_only=True) as conn:
            assert conn.execute("SELECT k, v FROM kv ORDER BY k").fetchall() == [("a", 100 + i), ("b", 2),
                                                                                  (f"own-{i}", i)]
    events = db.metrics.events  # 4 ready, the rest cold or refilled in the background meanwhile
    assert events["created_pool"] >= 4 and events["created_pool"] + events["created_cold"] == 8
    with db.connect(db.template_name, read_only=True) as conn:  # the template is untouched
        assert conn.execute("SELECT k, v FROM kv ORDER BY k").fetchall() == [("a", 1), ("b", 2)]


async def test_releasing_and_sweeping_drop_the_schema_and_its_registry_row(schema_db, pg_url):
    db = schema_db(pool_size=1, max_pool=1, ttl_s=600)
    await db.astart()
    await _call(db, "kept")
    await _call(db, "graded")
    await db.release("graded")
    names = _schemas(pg_url, db.name)
    assert db.db_id_for("graded") not in names and db.db_id_for("kept") in names
    db._expire_later(db.db_id_for("kept"), -1)
    assert await db.sweep() == 1
    with psycopg.connect(pg_url) as conn:
        kinds = [r[0] for r in conn.execute("SELECT kind FROM rft_rollout_databases WHERE prefix = %s",
                                            (db.name,)).fetchall()]
    assert kinds == ["pool"]  # only the warm clone is left
    db.close()
    db.drop_all()
    assert _schemas(pg_url, db.name) == []


def _serial_setup(conn) -> None:
    conn.execute("CREATE TABLE parent (k text PRIMARY KEY)")
    conn.execute("CREATE TABLE child (id serial PRIMARY KEY, k text NOT NULL REFERENCES parent (k), "
                 "n int GENERATED ALWAYS AS IDENTITY, twice int GENERATED ALWAYS AS (id * 2) STORED)")
    conn.execute("INSERT INTO parent VALUES ('x')")
    conn.execute("INSERT INTO child (k) VALUES ('x'), ('x')")


async def test_a_schema_copy_keeps_sequences_identity_generated_columns_and_foreign_keys(schema_db):
    db = schema_db(setup=_serial_setup)
    await db.astart()
    got = []
    for trace in ("one", "two"):
        scope = await db.open_call(trace, "c", is_async=False)
        conn = scope.connection
        got.append(conn.execute("INSERT INTO child (k) VALUES ('x') RETURNING id, n, twice").fetchone())
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            conn.execute("INSERT INTO child (k) VALUES ('missing')")
        await scope.close()  # rolled back: nothing kept
    assert got == [(3, 3, 6), (3, 3, 6)]  # each copy goes on from the template's values, on its own


async def test_a_template_a_schema_cannot_copy_is_refused_with_what_is_missing(schema_db):
    def with_view(conn) -> None:
        setup_postgres(conn)
        conn.execute("CREATE VIEW big AS SELECT * FROM kv WHERE v > 1")

    db = schema_db(setup=with_view)
    with pytest.raises(RFTError, match="view big.*PostgresDatabase"):
        await db.astart()
