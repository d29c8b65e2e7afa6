"""``rft_sdk.testing.TestClient``: tools and graders in process, trajectories and database diffs to assert on."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette

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


def make_state_server(**options: Any) -> ToolServer:
    server = ToolServer(auth_env_var=None, **options)

    @server.tool
    def stock(sku: str, n: int, *, rollout: Rollout) -> str:
        """Set ``sku``'s count in this rollout's state, seeded on first touch from the item's ``stock``."""
        if n < 0:
            raise ToolError("n must be at least 0")
        counts = rollout.state.setdefault("stock", dict(rollout.item.get("stock", {})))
        counts[sku] = n
        return "ok"

    @server.tool
    def ping() -> str:
        """Store nothing."""
        return "pong"

    @server.grader
    def stocked(ctx: GradingContext) -> float:
        return float(ctx.state.get("stock", {}).get("a") == 4)

    return server


def test_state_reads_the_rollouts_state_without_grading_it() -> None:
    item = {"messages": [{"role": "user", "content": "set a to 4"}], "stock": {"a": 1, "b": 2}}
    with TestClient(make_state_server()) as client:
        trace = client.new_trace_id()
        assert client.call("stock", trace_id=trace, item=item, sku="a", n="4").ok   # "4": the model's string
        assert client.trajectory(trace)[0].arguments == {"sku": "a", "n": "4"}     # kept as sent
        assert client.state(trace) == {"stock": {"a": 4, "b": 2}}                  # the item's seed, 4 coerced
        refused = client.call("stock", trace_id=trace, sku="b", n=-1)
        assert refused.error_code == "tool_error" and client.state(trace) == {"stock": {"a": 4, "b": 2}}
        copy = client.state(trace)
        copy["stock"]["a"] = 99                                                     # a fresh copy each time
        assert client.state(trace)["stock"]["a"] == 4
        assert client.call("stock", trace_id=trace, sku="b", n=0).ok                # the rollout goes on
        assert client.state(trace) == {"stock": {"a": 4, "b": 0}}
        assert client.grade(trace, "done", item=item).score == 1.0


def test_state_of_a_rollout_that_stored_nothing_is_empty() -> None:
    with TestClient(make_state_server()) as client:
        reads = client.new_trace_id()
        assert client.call("ping", trace_id=reads).ok
        assert client.state(reads) == {}
        refused = client.new_trace_id()
        assert client.call("stock", trace_id=refused, sku="a", n=-1).status == 400
        assert client.state(refused) == {}


def test_state_of_an_unknown_or_released_rollout_raises_naming_it() -> None:
    with TestClient(make_state_server()) as client:
        with pytest.raises(RFTError, match=r"no rollout 'trace_unknown' .*no call has been made in it yet"):
            client.state("trace_unknown")
        unknown_tool = client.new_trace_id()
        assert client.call("nope", trace_id=unknown_tool).status == 404
        with pytest.raises(RFTError, match=rf"no rollout '{unknown_tool}' .*none of the 1 call\(s\)"):
            client.state(unknown_tool)
        graded = client.new_trace_id()
        client.call("stock", trace_id=graded, sku="a", n=4)
        client.grade(graded, "done")
        with pytest.raises(RFTError, match=rf"rollout '{graded}' was graded and its state released"):
            client.state(graded)
    with TestClient(make_state_server(grade_retention_s=60)) as keeping:
        kept = keeping.new_trace_id()
        keeping.call("stock", trace_id=kept, sku="a", n=3)
        assert keeping.grade(kept, "done").score == 0.0
        assert keeping.state(kept) == {"stock": {"a": 3}}                           # kept for 60 s after the grade


def test_state_without_a_with_block_and_of_a_server_without_a_store() -> None:
    client = TestClient(make_state_server())
    trace = client.new_trace_id()
    assert client.call("stock", trace_id=trace, sku="a", n=2).ok
    assert client.state(trace) == {"stock": {"a": 2}}
    with pytest.raises(RFTError, match="'trace_x'.*Starlette has no rollout store"):
        TestClient(Starlette()).state("trace_x")
