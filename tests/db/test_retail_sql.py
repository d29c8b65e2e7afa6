"""The retail example on SQL against the in-memory one: same records, same tool outputs, same verdicts
on the gold and perturbed action sequences, on SQLite and on a real PostgreSQL (through HTTP)."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import uuid
from pathlib import Path

import pytest
from db_helpers import Client

from examples.retail import RetailError, call_tool, grade_retail, load_base_db
from examples.retail._perturb import make_perturb
from examples.retail.sql import _schema
from rft_sdk import PostgresDatabase, SQLiteDatabase, ToolServer
from rft_sdk.testing import run_server

ROOT = Path(__file__).resolve().parents[2]
ITEMS = [json.loads(line) for line in (ROOT / "examples/retail/data/retail_test.jsonl").read_text().splitlines()]


def test_every_record_reads_back_as_the_same_json():
    base = load_base_db()
    conn = sqlite3.connect(":memory:")
    _schema.load(conn, base.tables)
    db = _schema.Sql(conn)
    for table, read in (("users", _schema.user_record), ("orders", _schema.order_record),
                        ("products", _schema.product_record)):
        for key, record in base.tables[table].items():
            assert json.dumps(read(db, key)) == json.dumps(record), (table, key)


def sequences() -> list[tuple[dict, str, list[dict]]]:
    """``(item, label, actions)``: every test item's gold actions and two perturbations of them."""
    perturb, rng = make_perturb(), random.Random(7)
    out = []
    for item in ITEMS:
        out.append((item, "gold", item["actions"]))
        for _ in range(2):
            actions, description = perturb(json.loads(json.dumps(item["actions"])), rng)
            out.append((item, description, actions))
    return out


def memory_run(item: dict, actions: list[dict]) -> tuple[list[tuple[int, str]], float]:
    """Outputs (200, text) / errors (400, message) and the in-memory grader's score."""
    view, outputs = load_base_db().view(), []
    for action in actions:
        try:
            outputs.append((200, call_tool(view, action["name"], action["arguments"])))
        except RetailError as exc:
            outputs.append((400, str(exc)))
    calls = [type("Call", (), {"name": a["name"]})() for a in actions]
    grade = grade_retail(item, view.overlay, item["reference_answer"], calls=calls)
    return outputs, grade.score


@pytest.fixture(params=["sqlite", "postgres"])
def retail_db(request, tmp_path):
    name = f"r{uuid.uuid4().hex[:8]}"
    if request.param == "sqlite":
        db = SQLiteDatabase(setup=_schema.setup, dir=tmp_path / name, name=name)
    else:
        db = PostgresDatabase(request.getfixturevalue("pg_url"), setup=_schema.setup, name=name, pool_size=8)
    yield db
    db.close()
    db.drop_all()
    db.close()


async def test_sql_tools_and_grader_agree_with_the_in_memory_example(retail_db):
    from examples.retail.sql.app import TOOLS, order_status, retail

    cases = sequences()
    expected = [memory_run(item, actions) for item, _, actions in cases]
    assert {score for _, score in expected} == {0.0, 1.0}  # the comparison covers both verdicts
    with run_server(ToolServer(tools=TOOLS, graders=[retail, order_status], db=retail_db)) as url:
        client = Client(url)
        limit = asyncio.Semaphore(8)

        async def run(i: int, item: dict, actions: list[dict]) -> tuple[list[tuple[int, str]], float]:
            async with limit:
                trace, outputs = f"trace-{i}", []
                for action in actions:
                    answer = await client.call(trace, action["name"], action["arguments"], item=item)
                    body = answer.json()
                    outputs.append((answer.status_code, body["output"] if answer.status_code == 200
                                    else body["error"]["message"]))
                graded = await client.http.post("/grade", json={"sample": {"output_text": item["reference_answer"]},
                                                                "item": item, "trace_id": trace})
                assert graded.status_code == 200, graded.text
                return outputs, graded.json()["score"]

        got = await asyncio.gather(*(run(i, item, actions) for i, (item, _, actions) in enumerate(cases)))
        await client.aclose()
    for (item, label, _), (want_outputs, want_score), (outputs, score) in zip(cases, expected, got):
        assert outputs == want_outputs, (item["task_id"], label)
        assert score == want_score, (item["task_id"], label)
    assert (await retail_db.counts())["live"] == 0  # every graded rollout released its database


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_main_job_on_sql_prints_the_in_memory_runs_checks(backend, tmp_path, request):
    import subprocess
    import sys

    if backend == "postgres":
        request.getfixturevalue("pg_url")  # skips locally / fails in CI without the server binaries
    proc = subprocess.run([sys.executable, "-m", "examples.retail.main_job", "--backend", backend, "--limit", "6",
                           "--samples", "2", "--runs-dir", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert f"backend: {backend}" in proc.stdout
    assert proc.stdout.count("PASS") == 4 and "FAIL" not in proc.stdout
