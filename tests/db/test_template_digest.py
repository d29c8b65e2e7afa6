"""An edited seed rebuilds the template at the next start (an outside tester's report: a ``setup=`` whose module
constant went from 35.0 to 29.0 kept serving 35.0 from the stale template until the folder was deleted or
``rebuild=True`` passed). Real SQLite files, real processes, the suite's real PostgreSQL."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import sqlite3
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from types import ModuleType

import psycopg
import pytest
from db_helpers import ROOT

from rft_sdk._db import PostgresDatabase, PostgresSchemaDatabase, SQLiteDatabase
from rft_sdk._db._source import file_digest, setup_digest, stale_reason
from rft_sdk.exceptions import RFTError

#: The seed module a user edits: one constant (SQL literal: the same text works on SQLite and PostgreSQL).
SEED_MODULE = '''
from pathlib import Path

VOLUME = {volume!r}


def setup(conn):
    with open(Path(__file__).with_suffix(".builds"), "a") as log:  # the test counts the builds
        log.write("built\\n")
    conn.execute("CREATE TABLE tanks (id TEXT PRIMARY KEY, volume REAL NOT NULL)")
    conn.execute(f"INSERT INTO tanks VALUES ('t1', {{VOLUME}})")


def other_setup(conn):
    conn.execute("CREATE TABLE pumps (id TEXT PRIMARY KEY)")
'''

REBUILT = "rebuilding the"


@pytest.fixture(autouse=True)
def _no_bytecode(monkeypatch):
    """No ``__pycache__``: a rewrite of the same size within the same second would otherwise load the old code."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)


def _write_seed(folder: Path, volume: float) -> Path:
    path = folder / "moving_seed.py"
    path.write_text(SEED_MODULE.format(volume=volume))
    return path


def _builds(seed: Path) -> int:
    """How many times ``setup`` of the seed module ``seed`` ran."""
    log = seed.with_suffix(".builds")
    return len(log.read_text().splitlines()) if log.exists() else 0


def _load(path: Path) -> ModuleType:
    """Import ``path`` afresh (what a new process does)."""
    spec = importlib.util.spec_from_file_location(f"moving_seed_{uuid.uuid4().hex[:8]}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _volume(db, trace_id: str) -> float:
    db._ensure(trace_id)
    conn = db.connect(db.db_id_for(trace_id))
    try:
        return float(conn.execute("SELECT volume FROM tanks WHERE id = 't1'").fetchone()[0])
    finally:
        conn.close()


def _sqlite(module: ModuleType, folder: Path, **options) -> SQLiteDatabase:
    return SQLiteDatabase(setup=module.setup, name="moving", dir=folder / "db", ttl_s=600, **options)


def _started_volume(db, trace_id: str) -> float:
    db.start()
    try:
        return _volume(db, trace_id)
    finally:
        db.close()


def test_sqlite_an_edited_seed_constant_rebuilds_the_template_and_drops_the_old_pool(tmp_path, caplog):
    seed = _write_seed(tmp_path, 35.0)
    first = _sqlite(_load(seed), tmp_path, pool_size=2)
    first.start()
    try:
        assert _volume(first, "a") == 35.0
        first.refill_once()
    finally:
        first.close()
    old_pool = sorted(first.dir.glob("pool-*.db"))
    assert old_pool
    _write_seed(tmp_path, 29.0)  # the user edits the constant
    again = _sqlite(_load(seed), tmp_path, pool_size=2)
    with caplog.at_level(logging.WARNING, logger="rft_sdk"):
        again.start()
    try:
        assert _volume(again, "b") == 29.0
        assert not any(p.exists() for p in old_pool)  # warm clones of the old template never handed out
        assert _volume(again, "a") == 35.0  # a rollout already alive keeps its own database
    finally:
        again.close()
    rebuilt = [r.getMessage() for r in caplog.records if REBUILT in r.getMessage()]
    assert len(rebuilt) == 1 and f"setup:{seed.resolve()}:setup changed since the template was built" in rebuilt[0]
    assert again.digest_path.read_text().strip() == setup_digest(_load(seed).setup)


def test_sqlite_an_unchanged_module_reuses_the_template(tmp_path, caplog):
    seed = _write_seed(tmp_path, 35.0)
    assert _started_volume(_sqlite(_load(seed), tmp_path), "a") == 35.0
    template = tmp_path / "db" / "moving" / "template.db"
    before = template.stat()
    with caplog.at_level(logging.WARNING, logger="rft_sdk"):
        assert _started_volume(_sqlite(_load(seed), tmp_path), "b") == 35.0  # a fresh import of the same file
    after = template.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns) and _builds(seed) == 1
    assert REBUILT not in caplog.text


def test_sqlite_another_source_under_one_name_is_still_refused_and_changes_nothing(tmp_path):
    seed = _write_seed(tmp_path, 35.0)
    module = _load(seed)
    assert _started_volume(_sqlite(module, tmp_path), "a") == 35.0
    template = tmp_path / "db" / "moving" / "template.db"
    before = template.stat()
    _write_seed(tmp_path, 29.0)  # the file changed too: the refusal comes first, nothing is rebuilt
    impostor = SQLiteDatabase(setup=_load(seed).other_setup, name="moving", dir=tmp_path / "db")
    with pytest.raises(RFTError, match="was built from setup:.*:setup, not from setup:.*:other_setup"):
        impostor.start()
    impostor.close()
    assert template.stat().st_ino == before.st_ino


def test_sqlite_a_template_without_a_digest_is_rebuilt_once_then_reused(tmp_path, caplog):
    seed = _write_seed(tmp_path, 35.0)
    db = _sqlite(_load(seed), tmp_path)
    assert _started_volume(db, "a") == 35.0
    db.digest_path.unlink()  # built by an rft-sdk that recorded no digest
    _write_seed(tmp_path, 29.0)  # and edited before the upgrade
    with caplog.at_level(logging.WARNING, logger="rft_sdk"):
        assert _started_volume(_sqlite(_load(seed), tmp_path), "b") == 29.0
        assert "has no digest recorded (built by an older rft-sdk)" in caplog.text
        caplog.clear()
        assert _started_volume(_sqlite(_load(seed), tmp_path), "c") == 29.0
    assert REBUILT not in caplog.text


def test_sqlite_a_rewritten_template_file_rebuilds_and_an_untouched_one_does_not(tmp_path, caplog):
    seed_db = tmp_path / "seed.sqlite"

    def write(volume: float) -> None:
        conn = sqlite3.connect(seed_db, isolation_level=None)
        conn.execute("CREATE TABLE IF NOT EXISTS tanks (id TEXT PRIMARY KEY, volume REAL NOT NULL)")
        conn.execute("INSERT OR REPLACE INTO tanks VALUES ('t1', ?)", (volume,))
        conn.close()

    def started(trace_id: str) -> float:
        return _started_volume(SQLiteDatabase(seed_db, name="moving", dir=tmp_path / "db", ttl_s=600), trace_id)

    write(35.0)
    assert started("a") == 35.0
    template = tmp_path / "db" / "moving" / "template.db"
    ino = template.stat().st_ino
    with caplog.at_level(logging.WARNING, logger="rft_sdk"):
        assert started("b") == 35.0
    assert REBUILT not in caplog.text and template.stat().st_ino == ino
    write(29.0)
    with caplog.at_level(logging.WARNING, logger="rft_sdk"):
        assert started("c") == 29.0
    assert f"template:{seed_db.resolve()} changed since the template was built" in caplog.text


_WORKER = """
import importlib.util, logging, sys
sys.dont_write_bytecode = True
logging.basicConfig(level=logging.WARNING, format="%(message)s")
spec = importlib.util.spec_from_file_location("moving_seed", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
from rft_sdk._db import SQLiteDatabase
db = SQLiteDatabase(setup=module.setup, name="moving", dir=sys.argv[2], ttl_s=600, pool_size=0)
db.start()
db._ensure(sys.argv[3])
conn = db.connect(db.db_id_for(sys.argv[3]))
print(conn.execute("SELECT volume FROM tanks").fetchone()[0])
conn.close()
db.close()
"""


def test_sqlite_worker_processes_starting_together_after_an_edit_rebuild_once(tmp_path):
    """Four processes of one server (same name, same dir) start at once after the edit: one rebuilds, the
    others find the new template (the folder's ``flock``), and every one serves the new value."""
    seed = _write_seed(tmp_path, 35.0)
    assert _started_volume(_sqlite(_load(seed), tmp_path), "a") == 35.0
    _write_seed(tmp_path, 29.0)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    workers = [subprocess.Popen([sys.executable, "-B", "-c", _WORKER, str(seed), str(tmp_path / "db"), f"w{i}"],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for i in range(4)]
    outs = [w.communicate(timeout=120) for w in workers]
    assert all(w.returncode == 0 for w in workers), outs
    assert [float(out.strip()) for out, _ in outs] == [29.0] * 4
    assert sum(err.count(REBUILT) for _, err in outs) == 1, [err for _, err in outs]
    assert _builds(seed) == 2


def test_which_digests_tell_a_change_and_which_stay_quiet(tmp_path):
    """Detection and false alarms side by side."""
    seed = _write_seed(tmp_path, 35.0)
    same = setup_digest(_load(seed).setup)
    assert setup_digest(_load(seed).setup) == same  # re-imported, unchanged
    assert setup_digest(_load(seed).other_setup) == same  # one file: one digest
    _write_seed(tmp_path, 29.0)
    assert setup_digest(_load(seed).setup) != same  # a constant edited
    typed: dict = {}
    exec(compile("def setup(conn):\n    pass\n", "<stdin>", "exec"), typed)  # typed at a prompt: no file
    assert setup_digest(typed["setup"]) == ""  # unknown: never rebuilt for it
    assert stale_reason(same, same, "setup:x") is None
    assert stale_reason("sha256:0", "", "setup:x") is None  # unknown now: reused
    assert "changed since" in (stale_reason("sha256:0", same, "setup:x") or "")
    assert "no digest recorded" in (stale_reason(None, same, "setup:x") or "")
    db_file = tmp_path / "seed.sqlite"
    assert file_digest(db_file) == ""
    conn = sqlite3.connect(db_file, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE t (v INTEGER)")
    quiet = file_digest(db_file)
    assert file_digest(db_file) == quiet
    before_commit = file_digest(db_file)
    conn.execute("INSERT INTO t VALUES (1)")  # WAL mode: written to seed.sqlite-wal, the main file untouched
    assert " wal:" in file_digest(db_file) and file_digest(db_file) != before_commit
    conn.close()


def _template_oid(pg_url: str, cls: type, name: str) -> int:
    with psycopg.connect(pg_url) as conn:
        if cls is PostgresSchemaDatabase:
            row = conn.execute("SELECT oid FROM pg_namespace WHERE nspname = %s", (f"{name}_tpl",)).fetchone()
        else:
            row = conn.execute("SELECT oid FROM pg_database WHERE datname = %s", (f"{name}_template",)).fetchone()
    return int(row[0])


@pytest.mark.parametrize("cls", [PostgresDatabase, PostgresSchemaDatabase], ids=["postgres", "postgres-schema"])
def test_postgres_an_edited_seed_rebuilds_once_among_replicas_and_an_unchanged_one_is_reused(
        pg_url, cls, tmp_path, caplog):
    name = f"m{uuid.uuid4().hex[:8]}"
    seed = _write_seed(tmp_path, 35.0)
    made = []

    def replica():
        db = cls(pg_url, setup=_load(seed).setup, name=name, ttl_s=600)
        made.append(db)
        return db

    try:
        first = replica()
        first.start()
        assert _volume(first, "a") == 35.0
        oid = _template_oid(pg_url, cls, name)
        with caplog.at_level(logging.WARNING, logger="rft_sdk"):
            same = replica()
            same.start()  # unchanged: reused
            assert _volume(same, "b") == 35.0
        assert REBUILT not in caplog.text and _template_oid(pg_url, cls, name) == oid and _builds(seed) == 1
        _write_seed(tmp_path, 29.0)
        replicas = [replica() for _ in range(3)]
        errors: list[BaseException] = []
        # every replica has found the template stale before any builds (the widest race): one must rebuild
        decided = threading.Barrier(len(replicas), timeout=60)
        for db in replicas:
            def build_after_all_decided(build=db._build_template) -> None:
                decided.wait()
                build()
            db._build_template = build_after_all_decided

        def start(db) -> None:
            try:
                db.start()
            except BaseException as exc:  # handed to the test thread
                errors.append(exc)

        with caplog.at_level(logging.WARNING, logger="rft_sdk"):
            threads = [threading.Thread(target=start, args=(db,)) for db in replicas]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        assert not errors, errors
        assert [_volume(db, f"r{i}") for i, db in enumerate(replicas)] == [29.0] * 3
        rebuilt = [r.getMessage() for r in caplog.records if REBUILT in r.getMessage()]
        assert len(rebuilt) == 1 and "changed since the template was built" in rebuilt[0], rebuilt
        assert _builds(seed) == 2  # the first build and one rebuild
        impostor = cls(pg_url, setup=_load(seed).other_setup, name=name, ttl_s=600)
        made.append(impostor)
        with pytest.raises(RFTError, match="was built from setup:.*:setup, not from setup:.*:other_setup"):
            impostor.start()
    finally:
        for db in made:
            db.close()
        made[0].drop_all()
        made[0].close()


# -- seed_files: a fixture setup() reads joins the digest (doctor36's gap: a digest of fixture.json put in name=) ----
FIXTURE_MODULE = '''
import json
from pathlib import Path

FIXTURE = Path(__file__).with_name("fixture.json")


def setup(conn):
    with open(Path(__file__).with_suffix(".builds"), "a") as log:
        log.write("built\\n")
    conn.execute("CREATE TABLE tanks (id TEXT PRIMARY KEY, volume REAL NOT NULL)")
    for tank, volume in json.loads(FIXTURE.read_text()).items():
        conn.execute(f"INSERT INTO tanks VALUES ('{tank}', {volume})")
'''


def _fixture_task(folder: Path, volume: float) -> Path:
    seed = folder / "fixture_seed.py"
    if not seed.exists():
        seed.write_text(FIXTURE_MODULE)
    (folder / "fixture.json").write_text(json.dumps({"t1": volume}))
    return seed


def test_sqlite_an_edited_seed_file_rebuilds_the_template_only_when_listed(tmp_path, caplog):
    seed = _fixture_task(tmp_path, 35.0)
    fixture = tmp_path / "fixture.json"

    def started(trace_id: str, **options) -> float:
        return _started_volume(_sqlite(_load(seed), tmp_path, **options), trace_id)

    assert started("a", seed_files=[fixture]) == 35.0
    assert started("b", seed_files=[fixture]) == 35.0 and _builds(seed) == 1  # unchanged: reused
    _fixture_task(tmp_path, 29.0)  # the fixture edited, the module not
    with caplog.at_level(logging.WARNING, logger="rft_sdk"):
        assert started("c", seed_files=[str(fixture)]) == 29.0  # a str path works as a Path does
    rebuilt = [r.getMessage() for r in caplog.records if REBUILT in r.getMessage()]
    assert len(rebuilt) == 1 and "+ seed_files fixture.json changed since the template was built" in rebuilt[0]
    assert _builds(seed) == 2
    # without seed_files the digest is setup's file alone (as before the option): the edit goes unseen, and
    # the switch itself is one rebuild (another digest)
    assert started("d") == 29.0 and _builds(seed) == 3
    _fixture_task(tmp_path, 12.0)
    assert started("e") == 29.0 and _builds(seed) == 3  # stale: the documented reason for seed_files


def test_seed_files_digest_and_refusals(tmp_path):
    seed = _fixture_task(tmp_path, 35.0)
    fixture = tmp_path / "fixture.json"
    setup = _load(seed).setup
    alone = setup_digest(setup)
    assert setup_digest(setup, ()) == alone  # no seed files: the digest every existing template recorded
    listed = setup_digest(setup, (fixture,))
    assert listed != alone and listed.startswith("sha256:") and setup_digest(setup, (fixture,)) == listed
    _fixture_task(tmp_path, 29.0)
    assert setup_digest(setup, (fixture,)) != listed
    with pytest.raises(TypeError, match=r"takes a list of paths, got the single path .*: pass seed_files=\["):
        SQLiteDatabase(setup=setup, name="moving", dir=tmp_path / "db", seed_files=str(fixture))
    with pytest.raises(ValueError, match=r"'missing.json' is not a file \(resolved to .*Path\(__file__\)\.parent"):
        SQLiteDatabase(setup=setup, name="moving", dir=tmp_path / "db", seed_files=["missing.json"])
    with pytest.raises(TypeError, match=r"3 \(int\) is not a path: pass str or pathlib.Path entries"):
        SQLiteDatabase(setup=setup, name="moving", dir=tmp_path / "db", seed_files=[3])
    seed_db = tmp_path / "seed.sqlite"
    sqlite3.connect(seed_db).close()
    with pytest.raises(ValueError, match="seed_files=...\\) goes with setup="):
        SQLiteDatabase(seed_db, name="moving", dir=tmp_path / "db", seed_files=[fixture])
    assert not (tmp_path / "db").exists()  # constructing writes nothing, refused or not


@pytest.mark.parametrize("cls", [PostgresDatabase, PostgresSchemaDatabase], ids=["postgres", "postgres-schema"])
def test_postgres_an_edited_seed_file_rebuilds_the_template(pg_url, cls, tmp_path, caplog):
    name = f"f{uuid.uuid4().hex[:8]}"
    seed = _fixture_task(tmp_path, 35.0)
    made = []

    def started(trace_id: str) -> float:
        db = cls(pg_url, setup=_load(seed).setup, name=name, ttl_s=600, seed_files=[tmp_path / "fixture.json"])
        made.append(db)
        db.start()
        return _volume(db, trace_id)

    try:
        assert started("a") == 35.0 and started("b") == 35.0 and _builds(seed) == 1
        _fixture_task(tmp_path, 29.0)
        with caplog.at_level(logging.WARNING, logger="rft_sdk"):
            assert started("c") == 29.0
        assert "+ seed_files fixture.json changed since the template was built" in caplog.text and _builds(seed) == 2
    finally:
        for db in made:
            db.close()
        made[0].drop_all()
        made[0].close()
