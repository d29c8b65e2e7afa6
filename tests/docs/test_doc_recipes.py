"""Recipes the docs state about the SDK's own objects (docs/graders.md, docs/gold-items.md, docs/database.md):
the expected end state of a ``rollout.state`` task played with ``TestClient.call`` and read with ``state``; one
``SQLiteDatabase`` passed to two ``ToolServer`` s one after another; which lines ``answer_line`` and the doctor
take as the marked answer line; ``ctx.db.gold`` of a list the grader builds, replayed with ``ctx.item``; the
worked row "one of ``k`` writes left out" of graders.md's partial-credit table; what ``GET /tools`` says of an
undeclared tool without ``rollout`` (docs/tools.md); what ``RowChange.columns`` lists (docs/database.md)."""

from __future__ import annotations

import copy

from rft_sdk import GradingContext, Rollout, SQLiteDatabase, ToolServer, answer_line
from rft_sdk.doctor._answers import ANSWER_LINE
from rft_sdk.doctor._severity import Outcome, judge_probe
from rft_sdk.doctor._suite import DroppedCommit
from rft_sdk.doctor._write_members import DroppedWrite
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


def test_gold_replays_any_list_of_the_servers_actions_with_the_graders_item(tmp_path) -> None:  # type: ignore[no-untyped-def]
    server = ToolServer(db=SQLiteDatabase(
        setup=lambda conn: conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, item TEXT)"), dir=str(tmp_path)))

    @server.tool(writes=True)
    def discard(v: str, *, rollout: Rollout) -> str:
        """Record one discard, with the id of the item it was played for."""
        rollout.db.execute("INSERT INTO t (v, item) VALUES (?, ?)", (v, rollout.item.get("id")))
        return "ok"

    replayed: list[list[tuple[str, str]]] = []

    @server.grader
    async def built(ctx: GradingContext) -> float:
        extra = [*ctx.item["actions"], {"name": "discard", "arguments": {"v": "extra"}}]  # not the item's list
        replayed.append(sorted((c.after["v"], c.after["item"]) for c in await ctx.db.gold(extra)))
        return 1.0

    item = {"id": "A-1", "actions": [{"name": "discard", "arguments": {"v": "x"}}]}
    with TestClient(server) as client:
        trace = client.new_trace_id()
        assert client.call("discard", trace_id=trace, item=item, v="x").ok
        assert client.grade(trace, "Done.", item=item).score == 1.0
    assert replayed == [[("extra", "A-1"), ("x", "A-1")]]  # every action played, rollout.item == ctx.item


def test_one_of_five_writes_left_out_under_set_f1_is_not_reward_on_dropped_write() -> None:
    assert DroppedWrite.must_lower and not getattr(DroppedCommit, "must_lower", False)
    f1 = 2 * 4 / (2 * 5 - 1)  # 4 of 5 writes, nothing extra: 2(k - 1)/(2k - 1)
    assert round(f1, 2) == 0.89
    dropped = judge_probe("hack", [Outcome(item=0, score=f1, calls=4, must_lower=True)], [1.0], pass_threshold=1.0)
    assert dropped.verdict == "pass" and dropped.rewarded == ()  # must lower: below the gold's 1.0 is enough
    plain = judge_probe("hack", [Outcome(item=0, score=f1, calls=4)], [1.0], pass_threshold=1.0)
    assert plain.verdict == "fail"  # the same score on the plain half line (dropped_commit's) is reward


def test_an_undeclared_tool_without_rollout_is_unknown_until_its_first_call() -> None:
    server = ToolServer()

    @server.tool
    def get_price(sku: str) -> dict:
        """A pure lookup: no rollout, no declaration."""
        return {"sku": sku, "price": 3}

    @server.tool(writes=False)
    def get_zone(city: str) -> str:
        """The same, declared a read."""
        return "UTC"

    with TestClient(server) as client:
        assert client.http.get("/tools").json()["writes"] == {"get_price": None, "get_zone": False}
        assert client.call("get_price", trace_id=client.new_trace_id(), sku="a").ok
        assert client.http.get("/tools").json()["writes"] == {"get_price": False, "get_zone": False}


def test_row_change_columns_is_a_list_of_the_changed_non_key_columns(tmp_path) -> None:  # type: ignore[no-untyped-def]
    def setup(conn) -> None:  # type: ignore[no-untyped-def]
        conn.execute("CREATE TABLE vans (plate TEXT PRIMARY KEY, depot TEXT, driver TEXT, miles INTEGER)")
        conn.execute("INSERT INTO vans VALUES ('FH21 NKB', 'Leeds', 'ada', 100)")
        conn.execute("CREATE TABLE log (note TEXT)")  # no primary key
        conn.execute("INSERT INTO log VALUES ('open')")

    server = ToolServer(db=SQLiteDatabase(setup=setup, dir=str(tmp_path)))

    @server.tool(writes=True)
    def move(plate: str, depot: str, driver: str, *, rollout: Rollout) -> str:
        """Move a van; the driver is set to the one it already has."""
        rollout.db.execute("UPDATE vans SET depot = ?, driver = ? WHERE plate = ?", (depot, driver, plate))
        rollout.db.execute("INSERT INTO vans VALUES ('AB12 CDE', 'York', 'bo', 5)")
        rollout.db.execute("INSERT INTO log VALUES ('open')")
        return "ok"

    seen: dict[str, list[str]] = {}
    depot_rows: list[str] = []

    def rows_of(diff, table: str, column: str, value) -> list:  # type: ignore[no-untyped-def]
        """database.md's recipe: the RowChanges of `table` whose `column` (a foreign key) is `value`."""
        return [c for c in diff if c.table == table and (c.after or c.before or {}).get(column) == value]

    @server.grader
    async def columns(ctx: GradingContext) -> float:
        for c in await ctx.db.diff():
            assert isinstance(c.columns, list)
            seen[f"{c.label()} {c.kind}"] = c.columns
        depot_rows.extend(f"{c.label()} {c.kind}" for c in rows_of(await ctx.db.diff(), "vans", "depot", "York"))
        return 1.0

    with TestClient(server) as client:
        trace = client.new_trace_id()
        assert client.call("move", trace_id=trace, plate="FH21 NKB", depot="York", driver="ada").ok
        assert client.grade(trace, "Done.").score == 1.0
    assert seen == {"log/open update": ["_count"],  # a table without a key: its copies went from 1 to 2
                    "vans/AB12 CDE insert": ["plate", "depot", "driver", "miles"],  # every column, key included
                    "vans/FH21 NKB update": ["depot"]}  # only the values that differ: no key, not `driver`
    assert depot_rows == ["vans/AB12 CDE insert", "vans/FH21 NKB update"]  # rows_of: both vans now at York
