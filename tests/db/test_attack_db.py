"""Issue 39 #9 and #10: the rollout database under attack, on SQLite and a real PostgreSQL, over real HTTP.

Before: a call answered 413 ``rollout_too_large`` was still committed (the grader saw writes the model was
told were refused, and the database grew without bound: 99.9 MB against a 16 MiB rollout budget); a grade
whose release met a stopped PostgreSQL answered 500, and each call waited about 30 s for its 503.
"""

from __future__ import annotations

import contextlib
import time

import pytest
from db_helpers import Client, make_db, placeholder

from rft_sdk import GradingContext, MemoryStore, Rollout, ToolServer
from rft_sdk._db import postgres_server
from rft_sdk._db._pgserver import find_pg_bindir
from rft_sdk.exceptions import RFTError
from rft_sdk.testing import run_server


def note(text: str, *, rollout: Rollout) -> str:
    """Insert one row into log and answer ``text`` (a long text makes the store refuse the call).

    Args:
        text: the answer.
    """
    rollout.db.execute("INSERT INTO log VALUES (1)")
    return text


def grow(rows: int, *, rollout: Rollout) -> str:
    """Insert ``rows`` rows into log (fills the database: about 30 bytes a row, no index).

    Args:
        rows: how many.
    """
    q = placeholder(rollout.db)
    rollout.db.execute(f"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {q}) "
                       "INSERT INTO log SELECT 1 FROM c", (rows,))
    return "grown"


def rows(*, rollout: Rollout) -> str:
    """``log`` and ``kv`` row counts as ``"log,kv"``."""
    (log,) = rollout.db.execute("SELECT count(*) FROM log").fetchone()
    (kv,) = rollout.db.execute("SELECT count(*) FROM kv").fetchone()
    return f"{log},{kv}"


def constant(ctx: GradingContext) -> float:
    """1.0 without reading the database (the grade's release still drops it)."""
    return 1.0


def _serve(db, **options):
    return run_server(ToolServer(tools=[note, grow, rows], graders=[constant], db=db, **options))


@pytest.mark.parametrize("refusal", ["store", "response"])
async def test_a_call_answered_413_is_not_committed(make, refusal):
    db = make()
    options = ({"store": MemoryStore(max_rollout_bytes=20_000)} if refusal == "store" else {"response_limit": 20_000})
    with _serve(db, **options) as url:
        client = Client(url)
        assert (await client.call("r", "note", {"text": "short"})).status_code == 200
        refused = await client.call("r", "note", {"text": "x" * 30_000})
        counted = await client.call("r", "rows", {})
        await client.aclose()
    assert refused.status_code == 413 and refused.json()["error"]["code"] in ("rollout_too_large", "output_too_large")
    assert counted.json()["output"] == "1,2"  # only the accepted call's row: the refused one was rolled back


async def test_the_rollout_database_has_a_byte_budget_of_its_own(make):
    db = make()
    with _serve(db) as url:
        client = Client(url)
        assert (await client.call("r", "grow", {"rows": 10})).status_code == 200
        empty_database = db.backend == "postgres" and db.isolation == "database"  # an empty PG db is ~7.5 MB
        db.max_db_bytes = 2 * 2**20 + (9 * 2**20 if empty_database else 0)  # a schema counts its tables only
        first = await client.call("r", "grow", {"rows": 600_000})  # SQLite ~4 MB, PostgreSQL ~20 MB
        counted = await client.call("r", "rows", {})
        small = await client.call("r", "grow", {"rows": 10})
        await client.aclose()
    assert first.status_code == 413 and first.json()["error"]["code"] == "database_too_large", first.text
    assert counted.status_code == 200, counted.text
    assert counted.json()["output"] == "10,2"  # the first call's 10 rows: the refused call left nothing
    assert small.status_code == 200


async def test_a_grade_whose_release_meets_a_stopped_postgres_answers_503_within_seconds():
    try:
        find_pg_bindir()
    except RFTError as exc:
        pytest.skip(str(exc))
    server = contextlib.ExitStack()  # its own PostgreSQL: this test stops it
    db = make_db("postgres", pg_url=server.enter_context(postgres_server()), admission_timeout_s=0,
                 unavailable_timeout_s=3)
    try:
        with _serve(db) as url:
            client = Client(url)
            assert (await client.call("t1", "note", {"text": "a"})).status_code == 200
            server.close()
            t0 = time.monotonic()
            grade = await client.grade("t1")
            grade_s = time.monotonic() - t0
            t0 = time.monotonic()
            call = await client.call("t2", "note", {"text": "b"})
            call_s = time.monotonic() - t0
            await client.aclose()
    finally:
        server.close()
        db.close()
    for answer in (grade, call):
        assert answer.status_code == 503, answer.text
        assert answer.json()["error"]["code"] == "database_unavailable"
    assert grade_s < 15 and call_s < 15, (grade_s, call_s)
