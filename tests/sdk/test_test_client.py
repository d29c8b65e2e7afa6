"""``rft_sdk.testing.TestClient``: tools and graders in process, trajectories and database diffs to assert on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from rft_sdk import Grade, GradingContext, Rollout, SQLiteDatabase, ToolError, ToolServer
from rft_sdk.exceptions import RFTError
from rft_sdk.testing import TestClient


def setup(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE stock (sku TEXT PRIMARY KEY, qty INTEGER NOT NULL)")
    conn.executemany("INSERT INTO stock VALUES (?, ?)", [("a", 2), ("b", 0)])


def make_server(tmp_path: Path) -> ToolServer:
    server = ToolServer(db=SQLiteDatabase(setup=setup, name="testclient", dir=tmp_path / "db"))

    @server.tool
    def take(sku: str, n: int, *, rollout: Rollout) -> str:
        """Take ``n`` units of ``sku`` out of stock."""
        row = rollout.db.execute("SELECT qty FROM stock WHERE sku = ?", (sku,)).fetchone()
        if row is None or row[0] < n:
            raise ToolError(f"not enough {sku}")
        rollout.db.execute("UPDATE stock SET qty = qty - ? WHERE sku = ?", (n, sku))
        return "ok"

    @server.tool
    def look(sku: str, *, rollout: Rollout) -> dict[str, int]:
        """How many units of ``sku`` are left."""
        row = rollout.db.execute("SELECT qty FROM stock WHERE sku = ?", (sku,)).fetchone()
        return {"qty": row[0]}

    @server.grader
    async def emptied(ctx: GradingContext) -> Grade:
        left = ctx.db.connection.execute("SELECT qty FROM stock WHERE sku = 'a'").fetchone()[0]
        return Grade(1.0 if left == 0 else 0.0, subscores={"left": float(left)}, reasons=[f"{left} left"])

    return server


@pytest.fixture
def client(tmp_path: Path):
    with TestClient(make_server(tmp_path)) as client:
        yield client


def test_calls_are_recorded_and_the_database_diff_shows_the_writes(client: TestClient) -> None:
    trace = client.new_trace_id()
    first = client.call("take", trace_id=trace, sku="a", n=1)
    assert first.ok and first.output == "ok" and first.status == 200 and first.latency_s > 0
    assert client.call("look", trace_id=trace, sku="a").json() == {"qty": 1}
    refused = client.call("take", trace_id=trace, sku="b", n=1)
    assert (refused.ok, refused.status, refused.error_code) == (False, 400, "tool_error")
    assert "not enough b" in refused.model_text
    assert [(c.name, c.ok) for c in client.trajectory(trace)] == [("take", True), ("look", True), ("take", False)]
    diff = client.db_diff(trace)
    assert diff.labels() == ["stock/a"] and [c.kind for c in diff] == ["update"]
    assert client.query(trace, "SELECT qty FROM stock ORDER BY sku") == [(1,), (0,)]
    other = client.new_trace_id()  # another rollout sees its own fresh copy
    assert not client.db_diff(other) and client.query(other, "SELECT qty FROM stock WHERE sku='a'") == [(2,)]
    assert client.trajectory(other) == []


def test_grade_returns_the_score_subscores_and_reasons(client: TestClient) -> None:
    trace = client.new_trace_id()
    client.call("take", trace_id=trace, sku="a", n=2)
    grade = client.grade(trace, "done")
    assert (grade.score, grade.subscores, grade.reasons) == (1.0, {"left": 0.0}, ["0 left"])
    late = client.call("take", trace_id=trace, sku="a", n=1)  # graded: the rollout is over
    assert late.status == 409
    untouched = client.new_trace_id()
    client.call("look", trace_id=untouched, sku="a")
    assert client.grade(untouched, "done").score == 0.0


def test_bad_arguments_are_answered_not_raised(client: TestClient) -> None:
    wrong = client.call("take", sku="a", count=1)  # unknown argument name
    assert wrong.status == 422 and wrong.error_code == "invalid_arguments"
    malformed = client.call("take", arguments='{"sku": "a", "n":')  # JSON text sent verbatim
    assert malformed.status == 400 and malformed.error_code == "malformed_arguments"
    with pytest.raises(ValueError, match="not both"):
        client.call("take", arguments={"sku": "a"}, n=1)
    with pytest.raises(RFTError, match="422"):
        wrong.json()


def test_replay_plays_an_items_gold(client: TestClient) -> None:
    item = {"messages": [{"role": "user", "content": "empty a"}], "reference_answer": "emptied",
            "actions": [{"name": "take", "arguments": {"sku": "a", "n": 1}},
                        {"name": "take", "arguments": {"sku": "a", "n": 1}}]}
    run = client.replay(item)
    assert run.grade.score == 1.0 and [c.ok for c in run.calls] == [True, True]
    assert client.trajectory(run.trace_id) == run.calls
    with pytest.raises(RFTError, match="no gold"):
        client.replay({"messages": item["messages"]})


def test_replay_plays_an_alternative_by_index_or_name(client: TestClient) -> None:
    item = {"messages": [{"role": "user", "content": "empty a"}], "reference_answer": "emptied",
            "actions": [{"name": "take", "arguments": {"sku": "a", "n": 2}}],
            "alternatives": [{"name": "one by one", "actions": [{"name": "take", "arguments": {"sku": "a", "n": 1}},
                                                                 {"name": "take", "arguments": {"sku": "a", "n": 1}}]},
                             {"actions": [{"name": "take", "arguments": {"sku": "a", "n": 1}}]}]}
    by_name = client.replay(item, alternative="one by one")
    assert by_name.grade.score == 1.0 and [c.arguments for c in by_name.calls] == [{"sku": "a", "n": 1}] * 2
    # the second alternative leaves one unit: it plays, and the grader scores it as it is
    half = client.replay(item, alternative=1)
    assert len(half.calls) == 1 and half.grade.score == 0.0
    with pytest.raises(RFTError, match=r"no alternative 'other': it has 2 \('one by one', 1\)"):
        client.replay(item, alternative="other")


def test_without_with_block_calls_and_diffs_still_work(tmp_path: Path) -> None:
    client = TestClient(make_server(tmp_path))
    trace = client.new_trace_id()
    assert client.call("take", trace_id=trace, sku="a", n=1).ok
    assert client.db_diff(trace).labels() == ["stock/a"]


def test_a_server_without_a_database_says_so(tmp_path: Path) -> None:
    server = ToolServer()

    @server.tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    with TestClient(server) as client:
        assert client.call("echo", text="hi").output == "hi"
        with pytest.raises(RFTError, match="no rollout database"):
            client.db_diff("t")


def test_a_server_with_tokens_needs_the_token(tmp_path: Path) -> None:
    server = ToolServer(auth_tokens=["s3cret"])

    @server.tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    with TestClient(server) as anonymous:
        assert anonymous.call("echo", text="hi").status == 401
    with TestClient(server, token="s3cret") as client:
        assert client.call("echo", text="hi").ok
