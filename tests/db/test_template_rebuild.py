"""``rebuild=True`` after ``setup()`` changed: every rollout starts from the new template, never from a warm
clone of the old one (an outside tester's report: the first ``rft validate --app`` run after a seed change
scored 1-10 of 10 golds 0, ``('missing', 'members/m99', ...)``; the next run passed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import db_rebuild_app as app
import psycopg
import pytest
from db_helpers import ROOT

from rft_sdk._db import PostgresDatabase, PostgresSchemaDatabase

HERE = Path(__file__).resolve().parent


def _validate(data: Path, seed: int, db_dir: Path) -> subprocess.CompletedProcess[str]:
    """``rft validate data --app db_rebuild_app:server``, a process of its own, with the template's seed."""
    env = {**os.environ, "RFT_TEST_SEED": str(seed), "RFT_TEST_DB_DIR": str(db_dir),
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)])}
    return subprocess.run([sys.executable, "-m", "rft_sdk", "validate", str(data), "--app", "db_rebuild_app:server"],
                          env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)


def _members(path: Path) -> list[str]:
    import sqlite3
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return sorted(r[0] for r in conn.execute("SELECT id FROM members"))
    finally:
        conn.close()


def test_after_a_rebuild_rft_validate_starts_every_rollout_from_the_new_template(tmp_path, monkeypatch):
    db_dir = tmp_path / "db"
    monkeypatch.setenv("RFT_TEST_DB_DIR", str(db_dir))
    data = {}
    for seed in (0, 1):
        data[seed] = tmp_path / f"data{seed}.jsonl"
        data[seed].write_text("".join(json.dumps(line) + "\n" for line in app.dataset_lines(seed)))
    first = _validate(data[0], 0, db_dir)
    assert first.returncode == 0, first.stdout + first.stderr
    monkeypatch.setenv("RFT_TEST_SEED", "0")  # the pool full of clones of seed 0's template
    db = app.make_database()
    db.start()
    try:
        db.refill_once()
        assert db._counts()["pool"] == app.POOL_SIZE
    finally:
        db.close()
    old_pool = sorted(db.dir.glob("pool-*.db"))
    assert len(old_pool) == app.POOL_SIZE and _members(old_pool[0]) == [f"m{i}" for i in range(10)]

    second = _validate(data[1], 1, db_dir)  # setup() changed, rebuild=True: the first run must pass
    assert second.returncode == 0, second.stdout + second.stderr
    assert "10 gold trajectories replayed: 0 error(s)" in second.stdout
    assert not any(p.exists() for p in old_pool)  # the old clones were removed, not only skipped
    for pooled in db.dir.glob("pool-*.db"):  # what the new run's refill left is the new template's
        assert _members(pooled) == [f"m{90 + i}" for i in range(10)]


def test_a_refill_clone_of_the_old_template_published_after_the_rebuild_is_discarded(tmp_path, monkeypatch):
    """Two processes on one folder (two objects, one ``.lock``): A's refill clones the old template, B rebuilds
    before A publishes the clone; A must delete it, and every clone B then claims is of the new template."""
    monkeypatch.setenv("RFT_TEST_DB_DIR", str(tmp_path / "db"))
    monkeypatch.setenv("RFT_TEST_SEED", "0")
    a = app.make_database()
    a.pool_size = 1
    a.start()
    a.refill_once()
    b = app.make_database()
    b.pool_size = 0  # B's own maintenance thread (started by its rebuild) must not refill the pool to the app's
    # size in the background: the count below is A's refill's (a CI run under load saw 10)
    clone = a._clone_to
    rebuilt = []

    def clone_then_rebuild(path, tmp=None, *, replace=True):
        method = clone(path, tmp, replace=replace)  # a clone of seed 0's template, not yet in the pool
        if not rebuilt:
            monkeypatch.setenv("RFT_TEST_SEED", "1")
            b.start()  # B's rebuild, while A holds its clone outside the lock
            rebuilt.append(True)
        return method

    monkeypatch.setattr(a, "_clone_to", clone_then_rebuild)
    try:
        a.pool_size = 3
        a.refill_once()  # its first clone is of the old template: discarded; the next ones of the new one
        assert rebuilt and b._counts()["pool"] == 3
        for pooled in b.dir.glob("pool-*.db"):
            assert _members(pooled) == [f"m{90 + i}" for i in range(10)]
        for i in range(3):
            db_id, source = b._ensure(f"trace-{i}")
            assert source == "pool" and _members(b._path(db_id)) == [f"m{90 + i}" for i in range(10)]
    finally:
        a.close()
        b.close()
        b.drop_all()


def test_a_rebuild_cut_short_or_an_older_lock_file_is_repaired_at_the_next_start(tmp_path, monkeypatch):
    """A ``.lock`` without a generation (a rebuild killed between blanking it and writing the new one, or an
    older SDK's file, whose clones are named ``pool-<uuid>.db``): the next start computes the template's
    generation, removes every clone not of it and keeps the ones that are."""
    from rft_sdk._db._sqlite import _COUNTS_BYTES, SQLiteDatabase, template_generation

    monkeypatch.setenv("RFT_TEST_SEED", "0")
    first = SQLiteDatabase(setup=app.setup, dir=tmp_path / "db", name="repair", pool_size=2, ttl_s=600)
    folder = first.dir  # <dir>/<name>
    first.start()
    first.refill_once()
    first.close()
    kept = sorted(folder.glob("pool-*.db"))
    assert len(kept) == 2
    legacy = folder / "pool-0123456789abcdef0123456789abcdef.db"  # an older SDK's name: no generation
    legacy.write_bytes(kept[0].read_bytes())
    with open(folder / ".lock", "r+b") as f:
        f.seek(_COUNTS_BYTES)
        f.write(b" " * 16)  # the generation blanked, as a rebuild does before it replaces the template
    second = SQLiteDatabase(setup=app.setup, dir=tmp_path / "db", name="repair", pool_size=2, ttl_s=600)
    second.start()
    try:
        assert second._gen == template_generation(folder / "template.db")
        assert not legacy.exists() and sorted(folder.glob("pool-*.db")) == kept
        assert second._ensure("t")[1] == "pool"
    finally:
        second.close()


# -- PostgreSQL: a database (or a schema) per rollout -----------------------------------------------------------
def _pg_setup(seed: dict[str, int]):
    def setup(conn) -> None:
        conn.execute("CREATE TABLE members (id TEXT PRIMARY KEY, note TEXT NOT NULL)")
        for i in range(10):
            conn.execute("INSERT INTO members VALUES (%s, '')", (f"m{seed['v'] * 90 + i}",))
    return setup


def _pg_members(db, db_id: str) -> list[str]:
    conn = db.connect(db_id, read_only=True)
    try:
        return sorted(r[0] for r in conn.execute("SELECT id FROM members").fetchall())
    finally:
        conn.close()


def _waiting_advisory_locks(pg_url: str) -> int:
    with psycopg.connect(pg_url) as conn:
        return int(conn.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                                ).fetchone()[0])


@pytest.mark.parametrize("cls", [PostgresDatabase, PostgresSchemaDatabase])
def test_a_replicas_refill_racing_a_rebuild_never_leaves_an_old_clone_in_the_pool(pg_url, cls, monkeypatch):
    """Replica A clones for the pool while replica B rebuilds the template (the seed changed): A's clone
    must not enter the pool after B dropped the old pool; every clone B then claims is of the new template."""
    import threading
    import time
    import uuid

    seed = {"v": 0}
    name = f"rb{uuid.uuid4().hex[:10]}"
    a = cls(pg_url, setup=_pg_setup(seed), name=name, pool_size=1, ttl_s=600, sweep_interval_s=3600)
    b = cls(pg_url, setup=_pg_setup(seed), name=name, pool_size=0, ttl_s=600, sweep_interval_s=3600, rebuild=True)
    a.start()
    a.refill_once()  # one clone of seed 0's template, before the rebuild (B drops it)
    create = a._create
    rebuild: list[threading.Thread] = []
    failed: list[BaseException] = []

    def b_start() -> None:
        try:
            b.start()
        except BaseException as exc:  # reported by the assertion below
            failed.append(exc)

    def create_then_rebuild(conn, clone, template):
        create(conn, clone, template)  # a clone of seed 0's template, not yet entered into the pool
        if not rebuild:
            seed["v"] = 1
            rebuild.append(threading.Thread(target=b_start))
            rebuild[0].start()
            deadline = time.monotonic() + 60  # B's rebuild runs, or waits for this clone's lock
            while rebuild[0].is_alive() and not _waiting_advisory_locks(pg_url):
                assert time.monotonic() < deadline, "replica B neither rebuilt nor waited"
                time.sleep(0.02)

    monkeypatch.setattr(a, "_create", create_then_rebuild)
    try:
        a.pool_size = 2
        a.refill_once()
        rebuild[0].join(120)
        assert not rebuild[0].is_alive() and not failed, failed
        b.pool_size = 2
        b.refill_once()
        pool = b._counts()["pool"]
        assert pool >= 2
        for i in range(pool):
            db_id, source = b._ensure(f"trace-{i}")
            assert source == "pool"
            assert _pg_members(b, db_id) == [f"m{90 + k}" for k in range(10)], f"claim {i} of {pool}"
    finally:
        a.close()
        b.close()
        b.drop_all()
        b.close()
