"""Two SQLite databases of different ``name`` in one ``dir`` each keep their own template and pool (an outside
user's report: the second server's tools failed with ``no such table: prescriptions``, its schema never built
because the first one's ``template.db`` already stood in the shared folder), through real HTTP (uvicorn)."""

from __future__ import annotations

import json
import logging
import sqlite3

import pytest
from db_helpers import Client

from rft_sdk import Rollout, ToolServer
from rft_sdk._db import SQLiteDatabase
from rft_sdk.exceptions import RFTError
from rft_sdk.testing import run_server


def setup_pharmacy(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE prescriptions (id TEXT PRIMARY KEY, drug TEXT NOT NULL)")
    conn.executemany("INSERT INTO prescriptions VALUES (?, ?)", [("p1", "aspirin"), ("p2", "ibuprofen")])


def setup_shop(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE orders (id TEXT PRIMARY KEY, status TEXT NOT NULL)")
    conn.execute("INSERT INTO orders VALUES ('o1', 'pending')")


def drugs(*, rollout: Rollout) -> str:
    """Every prescription's drug, as JSON."""
    return json.dumps([r[0] for r in rollout.db.execute("SELECT drug FROM prescriptions ORDER BY id")])


def orders(*, rollout: Rollout) -> str:
    """Every order's status, as JSON."""
    return json.dumps([r[0] for r in rollout.db.execute("SELECT status FROM orders ORDER BY id")])


def pharmacy_db(folder, **options) -> SQLiteDatabase:
    return SQLiteDatabase(setup=setup_pharmacy, dir=folder, name="pharmacy", ttl_s=600, **options)


def shop_db(folder, **options) -> SQLiteDatabase:
    return SQLiteDatabase(setup=setup_shop, dir=folder, name="shop", ttl_s=600, **options)


async def _each_sees_its_own(pharmacy_url: str, shop_url: str) -> None:
    a, b = Client(pharmacy_url), Client(shop_url)
    try:
        got = await a.call("t-1", "drugs", {})
        assert got.status_code == 200, got.text
        assert json.loads(got.json()["output"]) == ["aspirin", "ibuprofen"]
        got = await b.call("t-1", "orders", {})  # the same trace_id on the other server: its own database
        assert got.status_code == 200, got.text
        assert json.loads(got.json()["output"]) == ["pending"]
    finally:
        await a.aclose()
        await b.aclose()


@pytest.mark.parametrize("pool_size", [0, 2])
async def test_two_servers_of_different_names_in_one_dir_served_at_once_each_see_their_own_schema(
        tmp_path, pool_size):
    pharmacy, shop = pharmacy_db(tmp_path, pool_size=pool_size), shop_db(tmp_path, pool_size=pool_size)
    with run_server(ToolServer(tools=[drugs], db=pharmacy)) as a_url, \
            run_server(ToolServer(tools=[orders], db=shop)) as b_url:
        if pool_size:
            pharmacy.refill_once()
            shop.refill_once()
        await _each_sees_its_own(a_url, b_url)
    assert pharmacy.dir == tmp_path / "pharmacy" and shop.dir == tmp_path / "shop"
    assert (tmp_path / "pharmacy" / "template.db").is_file() and (tmp_path / "shop" / "template.db").is_file()
    assert not (tmp_path / "template.db").exists()
    for db, table in ((pharmacy, "prescriptions"), (shop, "orders")):  # each pool holds clones of its own template
        for pooled in db.dir.glob("pool-*.db"):
            conn = sqlite3.connect(pooled)
            try:
                assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] > 0
            finally:
                conn.close()


async def test_two_servers_of_different_names_in_one_dir_one_after_the_other(tmp_path):
    with run_server(ToolServer(tools=[orders], db=shop_db(tmp_path))) as b_url:
        b = Client(b_url)
        assert json.loads((await b.call("t-1", "orders", {})).json()["output"]) == ["pending"]
        await b.aclose()
    # the shop's files (template, its rollout t-1) stay; the pharmacy then starts in the same dir
    with run_server(ToolServer(tools=[drugs], db=pharmacy_db(tmp_path))) as a_url, \
            run_server(ToolServer(tools=[orders], db=shop_db(tmp_path))) as b_url:
        await _each_sees_its_own(a_url, b_url)


def test_two_objects_of_the_same_database_share_the_folder_like_two_workers(tmp_path):
    first, second = pharmacy_db(tmp_path, pool_size=1), pharmacy_db(tmp_path, pool_size=1)
    first.start()
    second.start()
    try:
        assert first.dir == second.dir
        first.refill_once()
        assert second._ensure("t")[1] == "pool"  # the clone the other "worker" made
        assert first._ensure("t")[1] is None  # and the rollout it made is found by the first
    finally:
        first.close()
        second.close()


def test_two_different_setups_of_one_name_and_dir_are_refused_at_start(tmp_path):
    pharmacy_db(tmp_path).start()
    impostor = SQLiteDatabase(setup=setup_shop, dir=tmp_path, name="pharmacy")
    with pytest.raises(RFTError, match="was built from setup:.*setup_pharmacy, not from setup:.*setup_shop"):
        impostor.start()
    impostor.close()
    assert not list((tmp_path / "pharmacy").glob("r-*.db"))
    rebuilt = SQLiteDatabase(setup=setup_shop, dir=tmp_path, name="pharmacy", rebuild=True)  # asked for: replaced
    rebuilt.start()
    try:
        rebuilt._ensure("t")
        conn = rebuilt.connect(rebuilt.db_id_for("t"))
        assert conn.execute("SELECT status FROM orders").fetchone()[0] == "pending"
        conn.close()
    finally:
        rebuilt.close()


def test_a_template_of_an_older_sdk_is_adopted_and_its_moved_source_too(tmp_path):
    db = pharmacy_db(tmp_path)
    db.start()
    db.close()
    db.source_path.unlink()  # built by an SDK without template.source: adopted, not refused
    again = pharmacy_db(tmp_path)
    again.start()
    again.close()
    assert again.source_path.read_text().strip() == again.source_id
    gone = tmp_path / "old-checkout" / "app.py"  # the project was moved: the recorded file no longer exists
    again.source_path.write_text(f"setup:{gone}:setup_pharmacy\n")
    moved = pharmacy_db(tmp_path)
    moved.start()
    moved.close()
    assert moved.source_path.read_text().strip() == moved.source_id


def test_the_files_of_the_old_layout_are_named_once(tmp_path, caplog):
    (tmp_path / "template.db").write_bytes(b"")
    (tmp_path / ".lock").write_bytes(b"")
    db = pharmacy_db(tmp_path)
    with caplog.at_level(logging.WARNING, logger="rft_sdk"):
        db.start()
    db.close()
    assert f"{tmp_path} holds SQLite rollout files of an older rft-sdk" in caplog.text


def setup_pg_pharmacy(conn) -> None:
    conn.execute("CREATE TABLE prescriptions (id TEXT PRIMARY KEY, drug TEXT NOT NULL)")
    conn.execute("INSERT INTO prescriptions VALUES ('p1', 'aspirin')")


def setup_pg_shop(conn) -> None:
    conn.execute("CREATE TABLE orders (id TEXT PRIMARY KEY, status TEXT NOT NULL)")
    conn.execute("INSERT INTO orders VALUES ('o1', 'pending')")


@pytest.mark.parametrize("kind", ["postgres", "postgres-schema"])
def test_postgres_two_setups_of_one_name_are_refused_and_two_names_kept_apart(pg_url, kind):
    """PostgreSQL names every object ``{name}_...`` (two names never share a template); one name with two
    different setups on one server is refused at start, the same setup (another replica) is not."""
    import uuid

    from rft_sdk._db import PostgresDatabase, PostgresSchemaDatabase
    cls = PostgresSchemaDatabase if kind == "postgres-schema" else PostgresDatabase
    name = f"n{uuid.uuid4().hex[:8]}"
    made = [cls(pg_url, setup=setup_pg_pharmacy, name=name, ttl_s=600),
            cls(pg_url, setup=setup_pg_shop, name=f"{name}_b", ttl_s=600)]
    try:
        for db in made:
            db.start()
        for db, table in zip(made, ("prescriptions", "orders"), strict=True):
            db._ensure("t")
            conn = db.connect(db.db_id_for("t"))
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 1
            conn.close()
        replica = cls(pg_url, setup=setup_pg_pharmacy, name=name, ttl_s=600)
        made.append(replica)
        replica.start()  # the same setup: another replica of the same database
        impostor = cls(pg_url, setup=setup_pg_shop, name=name, ttl_s=600)
        with pytest.raises(RFTError, match="was built from setup:.*setup_pg_pharmacy, not from .*setup_pg_shop"):
            impostor.start()
        impostor.close()
    finally:
        for db in made:
            db.close()
            db.drop_all()
            db.close()


class _CallableSetup:
    def __call__(self, conn) -> None:
        setup_shop(conn)


def test_a_source_is_named_by_its_function_file_and_name_whatever_wraps_it():
    import functools

    from rft_sdk._db._source import same_source, template_source
    this = __file__.removesuffix("c")  # the .py file
    assert template_source(None, setup_shop) == f"setup:{this}:setup_shop"
    assert template_source(None, functools.partial(setup_shop)) == f"setup:{this}:setup_shop"
    assert template_source(None, _CallableSetup()) == f"setup:{this}:_CallableSetup"
    assert template_source("shop_seed", None) == "template:shop_seed"
    # detection and false alarms side by side
    assert not same_source(f"setup:{this}:setup_pharmacy", f"setup:{this}:setup_shop")  # another function
    assert not same_source(f"setup:{this}:setup_shop", "setup:/elsewhere/app.py:setup_shop")  # the recorded file still exists
    assert not same_source("template:shop_seed", "template:pharmacy_seed")  # PostgreSQL: other source databases
    assert same_source("setup:/gone/app.py:setup_shop", f"setup:{this}:setup_shop")  # the project was moved
    assert same_source("template:/gone/seed.db", "template:/here/seed.db")  # the seed file was moved
    assert not same_source("template:/gone/seed.db", f"setup:{this}:seed")  # template= then setup=


@pytest.mark.parametrize(("bad", "suggested"), [("auction-3f9a", "auction_3f9a"), ("Doctor7-DNS", "doctor7_dns"),
                                                ("3rd_task", "db_3rd_task"), ("a" * 25, "a" * 13 + "_2f521e"),
                                                ("", "db_")])
def test_a_bad_name_is_refused_at_construction_with_one_that_follows_the_rule(tmp_path, bad, suggested):
    with pytest.raises(ValueError) as refused:
        SQLiteDatabase(setup=lambda conn: None, name=bad, dir=tmp_path)
    assert str(refused.value) == (f"database name {bad!r} must be 1-20 lower-case letters, digits or '_', starting "
                                  f"with a letter: e.g. name={suggested!r}")
    SQLiteDatabase(setup=lambda conn: None, name=suggested, dir=tmp_path)  # the suggestion is accepted
    assert not any(tmp_path.iterdir())  # constructing writes nothing


def test_two_long_names_that_share_a_start_get_two_suggestions():
    from rft_sdk._db._base import name_like

    a, c = name_like("window_cleaning_twin_a"), name_like("window_cleaning_twin_c")
    assert a != c and len(a) == len(c) == 20 and a.startswith("window_cleani_")
