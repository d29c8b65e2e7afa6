"""Recipes the docs state about the SDK's own objects (docs/graders.md, docs/gold-items.md, docs/database.md):
the expected end state of a ``rollout.state`` task played with ``TestClient.call`` and read with ``state``; one
``SQLiteDatabase`` passed to two ``ToolServer`` s one after another; which lines ``answer_line`` and the doctor
take as the marked answer line."""

from __future__ import annotations

import copy

from rft_sdk import Rollout, SQLiteDatabase, ToolServer, answer_line
from rft_sdk.doctor._answers import ANSWER_LINE
from rft_sdk.testing import TestClient

TURBINES = {"T1": {"status": "running"}, "T2": {"status": "running"}}


def build() -> ToolServer:
    server = ToolServer()

    @server.tool(writes=True)
    def stop_turbine(turbine_id: str, *, rollout: Rollout) -> str:
        """Stop one turbine."""
        turbines = rollout.state.setdefault("turbines", copy.deepcopy(TURBINES))
        turbines[turbine_id]["status"] = "stopped"
        return "stopped"

    @server.grader
    def end_state(ctx) -> float:  # type: ignore[no-untyped-def]
        return float(ctx.state == ctx.item["expected_state"])

    return server


def test_expected_state_from_the_gold_played_with_call() -> None:
    item = {"messages": [{"role": "user", "content": "Stop T2."}],
            "actions": [{"name": "stop_turbine", "arguments": {"turbine_id": "T2"}}],
            "reference_answer": "Done: T2 is stopped."}
    with TestClient(build()) as client:
        trace = client.new_trace_id()
        for action in item["actions"]:
            assert client.call(action["name"], trace_id=trace, item=item, arguments=action["arguments"]).ok
        expected = client.state(trace)  # read before any grade: neither grades nor releases the rollout
        assert expected == {"turbines": {"T1": {"status": "running"}, "T2": {"status": "stopped"}}}
        line = {**item, "expected_state": expected}
        assert client.replay(line).grade.score == 1.0


def test_one_sqlite_database_in_two_servers_one_after_another(tmp_path) -> None:  # type: ignore[no-untyped-def]
    db = SQLiteDatabase(setup=lambda conn: conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"),
                        dir=str(tmp_path))
    for _ in range(2):
        server = ToolServer(db=db)

        @server.tool(writes=True)
        def put(v: str, *, rollout: Rollout) -> str:
            """Insert one row."""
            rollout.db.execute("INSERT INTO t (v) VALUES (?)", (v,))
            return "ok"

        with TestClient(server) as client:
            trace = client.new_trace_id()
            assert client.call("put", trace_id=trace, v="x").ok
            assert client.query(trace, "SELECT v FROM t") == [("x",)]
        assert not db._started  # the first server's lifespan closed it; the next one started it again


def test_the_two_answer_line_readings() -> None:
    def doctor(text: str) -> str | None:
        lines = list(ANSWER_LINE.finditer(text))
        return lines[-1]["body"] if lines else None

    assert answer_line("work\nANSWER: 42") == "42" and doctor("work\nANSWER: 42") == "42"
    assert answer_line("ANSWER: Yes.") == "Yes" and doctor("ANSWER: Yes.") == "Yes."
    assert answer_line("**ANSWER:** 42") == "42" and doctor("**ANSWER:** 42") is None
    assert answer_line("Final answer: 42") is None and doctor("Final answer: 42") == "42"
    assert answer_line("Final answer: 42", marker="Final answer") == "42"
    assert answer_line("answer = 42") is None and doctor("answer = 42") == "42"
    assert answer_line("ANSWER: 1\nANSWER: 2") is None and doctor("ANSWER: 1\nANSWER: 2") == "2"
