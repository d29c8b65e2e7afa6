"""Recipes the docs state about the SDK's own objects (docs/graders.md, docs/gold-items.md, docs/database.md):
the expected end state of a ``rollout.state`` task played with ``TestClient.call`` and read with ``state``; one
``SQLiteDatabase`` passed to two ``ToolServer`` s one after another; which lines ``answer_line`` and the doctor
take as the marked answer line; ``ctx.db.gold`` of a list the grader builds, replayed with ``ctx.item``; the
worked row "one of ``k`` writes left out" of graders.md's partial-credit table; what ``GET /tools`` says of an
undeclared tool without ``rollout`` (docs/tools.md); what ``RowChange.columns`` lists (docs/database.md). Run from
the markdown as written: ``(table, key)`` of ``gold()`` filtering ``diff_gold()`` (docs/database.md); the standalone
``@grader(name=...)`` of two factories, the key-word note helper, the indented marked line and an end-state grader
on items whose gold writes nothing, ``donors_paid`` and the doctor on answer sets read by pages (docs/graders.md);
``withdrawn_score`` (docs/gold-items.md); a free-text column graded by key words beside ``diff_gold``, and
``ctx.db.connection`` queried around the diff helpers (docs/database.md); ``ctx.db.connection`` in a plain ``def``
grader, a money body parsed in pence against the doctor's moved bodies, an ignored driver's note and a stated price
under the doctor, the probes that play a listed answer with one element left out, and a list of content parts kept
as written (docs/graders.md); a ``REAL`` column
graded within a tolerance beside ``diff_gold``, played and under the doctor, and which side ``before`` and ``after``
hold per diff helper (docs/database.md); an integer ``Literal`` matched by value, the enum probes that play its members, and the ``ToolServer(...)``
signature with its defaults, one seeding helper with a sentinel key, a read of what the writes store that stores
nothing (docs/tools.md); how ``""``, a left-out argument and ``null`` count for prose (docs/graders.md); which text
``read_time`` plays (docs/doctor.md); a ``BOOKED:`` line as the doctor's answer line, and which zone
``other_zone_time`` reads (docs/graders.md, docs/honest-graders.md); a graded column forgiven as free text, and a gold row read back by its
``RowChange.key`` (docs/database.md); a record found inside a listing page with ``returned(c, deep=True)``
(docs/graders.md)."""

from __future__ import annotations

import copy
import json
import re
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

import pytest

from rft_sdk import Grade, GradingContext, Rollout, SQLiteDatabase, ToolError, ToolServer, answer_line, grader
from rft_sdk.doctor import ProbeContext, check_unhackable, default_probes
from rft_sdk.doctor._answers import ANSWER_LINE
from rft_sdk.doctor._severity import Outcome, judge_probe
from rft_sdk.doctor._suite import DroppedCommit
from rft_sdk.doctor._write_members import DroppedWrite
from rft_sdk.rewards import returned
from rft_sdk.testing import TestClient, run_server

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _block(page: str, marker: str) -> str:
    """The one ```python block of ``docs/<page>`` that holds ``marker`` (dedented: a block may sit in a list item)."""
    blocks = [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(encoding="utf-8"), flags=re.S)
              if marker in b]
    assert len(blocks) == 1, f"docs/{page}: {len(blocks)} python blocks hold {marker!r}"
    return blocks[0]


def _run(page: str, marker: str, **names: Any) -> dict[str, Any]:
    """Run that block in a namespace holding ``names``; the namespace after it."""
    namespace: dict[str, Any] = {"GradingContext": GradingContext, "Grade": Grade, "__name__": "docs", **names}
    exec(compile(_block(page, marker), f"docs/{page}", "exec"), namespace)
    return namespace


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
    assert answer_line("work\n   ANSWER: 42") == "42" and doctor("work\n   ANSWER: 42") == "42"
    recipe = next(line for line in _block("graders.md", "def availability(").splitlines() if line.startswith("ANSWER"))
    found: dict[str, Any] = {"re": re}
    exec(recipe, found)  # graders.md's own regex, as written
    assert [b.strip() for b in found["ANSWER"].findall("work\n   ANSWER: yes\n\tANSWER: yes")] == ["yes", "yes"]


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


# -- database.md: one row has one (table, key) in every diff ---------------------------------------------------
def _lending(tmp_path: Path) -> ToolServer:
    def setup(conn) -> None:  # type: ignore[no-untyped-def]
        conn.execute("CREATE TABLE books (id TEXT PRIMARY KEY, copies INTEGER NOT NULL)")
        conn.executemany("INSERT INTO books VALUES (?, ?)", [("b1", 1), ("b2", 1), ("b3", 2)])
        conn.execute("CREATE TABLE holds (book_id TEXT, member TEXT, PRIMARY KEY (book_id, member))")

    server = ToolServer(db=SQLiteDatabase(setup=setup, dir=str(tmp_path)))

    @server.tool(writes=True)
    def lend(book_id: str, *, rollout: Rollout) -> str:
        """Lend one copy."""
        rollout.db.execute("UPDATE books SET copies = copies - 1 WHERE id = ?", (book_id,))
        return "ok"

    @server.tool(writes=True)
    def hold(book_id: str, member: str, *, rollout: Rollout) -> str:
        """Hold a book for a member."""
        rollout.db.execute("INSERT INTO holds VALUES (?, ?)", (book_id, member))
        return "ok"

    return server


def test_gold_keys_filter_diff_gold_keys(tmp_path: Path) -> None:
    server = _lending(tmp_path)
    grade = _run("database.md", "async def lent(", server=server)["lent"]
    keys: list[tuple[set[Any], set[Any], set[Any]]] = []

    @server.grader
    async def same_keys(ctx: GradingContext) -> float:
        pairs = [{(c.table, c.key) for c in d} for d in (await ctx.db.diff(), await ctx.db.gold(ctx.item["actions"]),
                                                          await ctx.db.diff_gold(ctx.item["actions"]))]
        keys.append((pairs[0], pairs[1], pairs[2]))
        return 1.0

    item = {"actions": [{"name": "lend", "arguments": {"book_id": "b1"}},
                        {"name": "hold", "arguments": {"book_id": "b3", "member": "ada"}}]}
    played = {"gold": item["actions"],
              "side effect": [*item["actions"], {"name": "lend", "arguments": {"book_id": "b2"}}],
              "wrong member": [item["actions"][0], {"name": "hold", "arguments": {"book_id": "b3", "member": "bo"}}]}
    got = {}
    with TestClient(server) as client:
        for label, actions in played.items():
            for name in ("lent", "same_keys"):
                trace = client.new_trace_id()
                for action in actions:
                    assert client.call(action["name"], trace_id=trace, item=item, arguments=action["arguments"]).ok
                result = client.grade(trace, "Done.", item=item, grader=name)
                if name == "lent":
                    got[label] = (result.score, result.subscores)
    assert grade.__name__ == "lent"
    assert got == {"gold": (1.0, {"asked_rows_wrong": 0, "side_effects": 0}),
                   "side effect": (0.0, {"asked_rows_wrong": 0, "side_effects": 1}),  # books/b2: the gold never touched it
                   "wrong member": (0.0, {"asked_rows_wrong": 1, "side_effects": 1})}  # holds/b3/ada missing, b3/bo extra
    diff, gold, differs = keys[2]  # the wrong member: ("holds", ("b3", "ada")) is one pair in all three
    assert ("holds", ("b3", "ada")) in gold and ("holds", ("b3", "ada")) in differs
    assert ("holds", ("b3", "bo")) in diff and ("holds", ("b3", "bo")) in differs
    assert ("books", ("b1",)) in diff and ("books", ("b1",)) in gold and ("books", ("b1",)) not in differs


# -- database.md: a row read back by its key (RowChange.key as the query's parameters) ---------------------------------
def test_a_gold_rows_key_reads_the_rollouts_row_back(tmp_path: Path) -> None:
    server = _lending(tmp_path)
    _run("database.md", "async def copies_as_gold(", server=server)
    keys: list[Any] = []

    @server.grader
    async def two_column_key(ctx: GradingContext) -> float:  # the page's holds (book_id, member): two parameters
        for c in await ctx.db.gold(ctx.item["actions"]):
            if c.table == "holds":
                keys.append(c.key)
                row = ctx.db.connection.execute("SELECT book_id, member FROM holds WHERE book_id = ? AND member = ?",
                                                c.key).fetchone()
                return float(row is not None)
        return 0.0

    item = {"actions": [{"name": "lend", "arguments": {"book_id": "b1"}},
                        {"name": "hold", "arguments": {"book_id": "b3", "member": "ada"}}]}
    played = {"gold": item["actions"],
              "another book": [{"name": "lend", "arguments": {"book_id": "b2"}}, item["actions"][1]],
              "another member": [item["actions"][0], {"name": "hold", "arguments": {"book_id": "b3", "member": "bo"}}]}
    got = {}
    with TestClient(server) as client:
        for label, actions in played.items():
            for name in ("copies_as_gold", "two_column_key"):
                trace = client.new_trace_id()
                for action in actions:
                    assert client.call(action["name"], trace_id=trace, item=item, arguments=action["arguments"]).ok
                result = client.grade(trace, "Done.", item=item, grader=name)
                got[(label, name)] = (result.score, result.reasons) if name == "copies_as_gold" else result.score
    assert got == {("gold", "copies_as_gold"): (1.0, []), ("gold", "two_column_key"): 1.0,
                   ("another book", "copies_as_gold"): (0.0, ["books/b1 copies: gold 0, rollout 1"]),
                   ("another book", "two_column_key"): 1.0,
                   ("another member", "copies_as_gold"): (1.0, []),    # only the gold's rows of books are read
                   ("another member", "two_column_key"): 0.0}          # no hold (b3, ada) in the rollout's end state
    assert set(keys) == {("b3", "ada")}                                # the key's values, in its column order


# -- database.md: which side is which, per helper (diff_gold: before the gold's row, after the rollout's) -------------
def test_diff_gold_before_is_the_gold_row_and_after_the_rollout_row(tmp_path: Path) -> None:
    server = _lending(tmp_path)
    _run("database.md", "async def copies_right(", server=server)
    sides: dict[str, list[tuple[str, Any, Any]]] = {}

    @server.grader
    async def sides_of(ctx: GradingContext) -> float:
        for name, d in (("diff", await ctx.db.diff()), ("gold", await ctx.db.gold(ctx.item["actions"])),
                        ("diff_gold", await ctx.db.diff_gold(ctx.item["actions"]))):
            sides[name] = [(c.label(), (c.before or {}).get("copies"), (c.after or {}).get("copies")) for c in d]
        return 1.0

    item = {"actions": [{"name": "lend", "arguments": {"book_id": "b1"}}]}
    with TestClient(server) as client:
        reasons = {}
        for name in ("copies_right", "sides_of"):
            trace = client.new_trace_id()
            assert client.call("lend", trace_id=trace, item=item, book_id="b3").ok   # the wrong book
            result = client.grade(trace, "Done.", item=item, grader=name)
            reasons[name] = (result.score, result.reasons)
    assert reasons["copies_right"] == (0.0, ["books/b1 copies: gold 0, rollout 1", "books/b3 copies: gold 2, rollout 1"])
    assert sides == {"diff": [("books/b3", 2, 1)],                            # template -> rollout
                     "gold": [("books/b1", 1, 0)],                            # template -> gold
                     "diff_gold": [("books/b1", 0, 1), ("books/b3", 2, 1)]}   # gold -> rollout


# -- tools.md: an integer Literal is matched by value, never coerced from a string ---------------------------------------
def test_an_integer_literal_is_matched_by_value() -> None:
    server = ToolServer()
    sent: list[Any] = []

    @server.tool(writes=True)
    def pick(size: Literal[4, 6, 8], *, rollout: Rollout) -> str:
        """Pick a size."""
        rollout.state["size"] = size
        return type(size).__name__

    @server.tool(writes=True)
    def small(size: Literal[1, 2, 4], *, rollout: Rollout) -> str:
        """Pick a small size."""
        return repr(size)

    @server.grader
    def record(ctx: GradingContext) -> float:
        sent.extend(c.arguments["size"] for c in ctx.trajectory)
        return 1.0

    assert server.dataset_tools()[0]["function"]["parameters"]["properties"]["size"]["enum"] == [4, 6, 8]
    with TestClient(server) as client:
        got = {repr(v): client.call("pick", size=v) for v in (6, 6.0, "6", "6.0", 6.5)}
        assert {k: c.status for k, c in got.items()} == {"6": 200, "6.0": 200, "'6'": 422, "'6.0'": 422, "6.5": 422}
        assert got["6.0"].output == "int"
        assert "Input should be 4, 6 or 8" in got["'6'"].body["error"]["message"]
        assert client.call("small", size=True).output == "1"
        trace = got["6.0"].trace_id
        client.grade(trace, "Done.")
    assert sent == [6.0] and isinstance(sent[0], float)  # the record keeps what was sent


# -- tools.md: which enum probes play an integer Literal's members -------------------------------------------------
def test_an_integer_member_is_played_by_altered_writes_and_other_member_only() -> None:
    server = ToolServer()

    @server.tool(writes=True)
    def order_pane(window: str, thickness_mm: Literal[4, 6, 10], finish: Literal["clear", "frosted", "tinted"], *,
                   rollout: Rollout) -> str:
        """Order a pane."""
        return "ok"

    items = []
    for i in range(12):
        (old, new), (was, now) = ((6, 10), ("clear", "frosted")) if i % 2 else ((4, 6), ("frosted", "tinted"))
        items.append({"messages": [{"role": "user", "content": f"Please order a {old} mm {was} pane for window W{i}."},
                                   {"role": "assistant", "content": "Sure."},
                                   {"role": "user", "content": f"Sorry, make that {new} mm, and {now} glass, for W{i}."}],
                      "tools": server.dataset_tools(), "reference_answer": f"Ordered a {new} mm {now} pane for W{i}.",
                      "actions": [{"name": "order_pane", "arguments": {"window": f"W{i}", "thickness_mm": new,
                                                                       "finish": now}}]})
    context = ProbeContext(items=items, write_tools={"order_pane"}, gold_outputs=[["ok"]] * 12,
                           gold_ok=[[True]] * 12, gold_scores=[1.0] * 12)
    probes = default_probes()
    for probe in probes.values():
        if hasattr(probe, "prepare"):
            probe.prepare(context)
    played = {name: {str(probes[name].describe(item).get("altered", probes[name].describe(item).get("superseded")))
                     for item in items if probes[name].applies(item)}
              for name in ("altered_writes", "other_member", "superseded_request", "stated_member")}
    assert "order_pane.thickness_mm" in played["altered_writes"]
    assert "order_pane.thickness_mm" in played["other_member"]
    assert played["stated_member"] == {"order_pane.finish"}
    assert played["superseded_request"] and all(" mm" not in p and not p[0].isdigit()
                                                for p in played["superseded_request"])  # 'frosted -> clear'


# -- graders.md: the standalone @grader(name=...) of one grader per process ---------------------------------
def test_two_factories_serve_graders_of_one_name() -> None:
    ns = _run("graders.md", "def lenient_server(", grader=grader)
    ns = _run("graders.md", "def twin_a_server(", **{k: v for k, v in ns.items() if k != "__builtins__"})
    twin = ns["twin_a_server"]()
    assert list(twin.graders) == ["grade"] and twin.graders["grade"].score_range == (0.0, 1.0)
    assert twin.grader_spec("http://127.0.0.1:8001")["name"] == "grade"  # what rft tools writes as the name

    @grader(name="grade")
    def twin_b_grade(ctx: GradingContext) -> float:
        return 1.0

    spec = ToolServer(tools=ns["TOOLS"], graders=[twin_b_grade]).grader_spec("http://127.0.0.1:8002")
    assert (spec["name"], spec["url"]) == ("grade", "http://127.0.0.1:8002/grade")


# -- graders.md: a grader named grade beside the default route POST /grade ---------------------------------------------
def test_a_grader_named_grade_is_served_at_grade_grade_and_at_grade_only_as_the_default() -> None:
    def named(default: bool) -> ToolServer:
        server = ToolServer(auth_env_var=None)

        @server.grader(name="other")
        def other(ctx: GradingContext) -> float:
            return 0.25

        @server.grader(name="grade", default=default)
        def grade(ctx: GradingContext) -> float:
            return 0.75

        return server

    for default, at_grade in ((True, 0.75), (False, 0.25)):   # the default: "grade" with default=True, else the first
        server = named(default)
        with TestClient(server) as client:
            assert client.grade(None, "x", grader="grade").score == 0.75            # POST /grade/grade
            assert client.grade(None, "x").score == at_grade                         # POST /grade: the default
            assert client.grade(None, "x", grader="other").score == 0.25
        assert server.grader_spec("http://h", name="grade")["url"] == "http://h/grade/grade"   # rft tools --grader grade
        assert server.grader_spec("http://h")["url"] == "http://h/grade"                       # rft tools
        assert server.grader_spec("http://h")["name"] == ("grade" if default else "other")


# -- graders.md: which words a key-word note grader requires -------------------------------------------------
def test_the_note_word_helper_runs_as_written() -> None:
    holds_words = _run("graders.md", "def holds_words(")["holds_words"]  # its asserts run too
    assert holds_words("Skipper: the dog is nervous around ICE", ["dog", "ice"])
    assert not holds_words(None, ["dog"]) and not holds_words("  ", ["dog"])


# -- graders.md: an end-state grader on items whose gold writes nothing -----------------------------------------
KEYS = {f"k{i}": f"v{i}" for i in range(12)}
REFUSED = {"k3": "locked", "k7": "archived"}


def _refusals(reply_graded: bool) -> tuple[ToolServer, list[dict[str, Any]]]:
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def lookup(key: str, *, rollout: Rollout) -> str:
        """Read a key.

        Args:
            key: e.g. "k1".
        """
        if key not in KEYS:
            raise ToolError(f"no key {key}")
        return rollout.state.get("kv", {}).get(key, KEYS[key]) + (f" ({REFUSED[key]})" if key in REFUSED else "")

    @server.tool(writes=True)
    def set_value(key: str, value: str, *, rollout: Rollout) -> str:
        """Write a key.

        Args:
            key: e.g. "k1".
            value: the new value.
        """
        rollout.state.setdefault("kv", {})[key] = value
        return "ok"

    @server.grader
    def end_state(ctx: GradingContext) -> float:
        want = {ctx.item["key"]: ctx.item["value"]} if ctx.item["value"] else {}
        if ctx.count() > ctx.item["max_tool_calls"] or ctx.state.get("kv", {}) != want:
            return 0.0
        if ctx.item["value"] or not reply_graded:
            return 1.0  # a write asked for: the end state is the outcome
        read = any(c.ok and c.arguments.get("key") == ctx.item["key"] for c in ctx.calls("lookup"))
        return float(read and (answer_line(ctx.output_text) or "").lower() == ctx.item["refusal"])

    items = []
    for i, key in enumerate(KEYS):
        value = None if key in REFUSED else f"n{i}"
        actions = [{"name": "lookup", "arguments": {"key": key}}]
        if value:
            actions.append({"name": "set_value", "arguments": {"key": key, "value": value}})
        answer = f"{key} is {REFUSED[key]}, so I left it.\nANSWER: {REFUSED[key]}" if key in REFUSED \
            else f"Done: {key} is now {value}."
        ask = f"Set {key} to n{i}, unless it is locked or archived: then end with ANSWER: locked or ANSWER: archived."
        items.append({"messages": [{"role": "user", "content": ask}], "tools": server.dataset_tools(), "key": key,
                      "value": value, "refusal": REFUSED.get(key), "actions": actions, "reference_answer": answer,
                      "max_tool_calls": 5})
    return server, items


@pytest.mark.slow
async def test_an_end_state_grader_must_read_the_reply_where_the_gold_writes_nothing() -> None:
    failed = {}
    for reply_graded in (False, True):
        server, items = _refusals(reply_graded)
        with run_server(server) as url:
            result = await check_unhackable(items, server.job_config(url, rate_limit=1000), default_probes())
        rows = result.evidence["probes"]
        failed[reply_graded] = {name for name, row in rows.items() if row["verdict"] in ("fail", "warn")}
        if not reply_graded:
            assert rows["empty_answer"]["verdict"] == rows["activity_no_answer"]["verdict"] == "pass"
    assert failed[False] == {"self_report", "echo_prompt", "prompt_reference", "injected_score", "ignore_instructions",
                             "answer_space_dump", "work_then_dump", "wrong_answer"}
    assert failed[True] == set()


# -- gold-items.md: playing a withdrawn number or name yourself ------------------------------------------------
def _bakery(lenient: bool) -> ToolServer:
    server = ToolServer()

    @server.tool(writes=True)
    def place_order(bread: str, qty: int, customer: str, day: str, *, rollout: Rollout) -> str:
        """Order loaves."""
        rollout.state.setdefault("orders", []).append({"bread": bread, "qty": qty, "customer": customer, "day": day})
        return "ordered"

    @server.grader
    def ordered(ctx: GradingContext) -> float:
        orders = ctx.state.get("orders", [])
        if len(orders) != 1 or orders[0]["customer"] != ctx.item["expected_customer"]:
            return 0.0
        return float(orders[0]["qty"] in ((12, 18) if lenient else (ctx.item["expected_qty"],)))

    return server


def test_withdrawn_score_plays_a_withdrawn_quantity_and_name() -> None:
    item = {"messages": [{"role": "user", "content": "12 sourdough loaves for Ana Lima on 2026-04-18, please. "
                                                     "Sorry, make that 18."}],
            "actions": [{"name": "place_order", "arguments": {"bread": "sourdough", "qty": 18, "customer": "Ana Lima",
                                                              "day": "2026-04-18"}}],
            "reference_answer": "Ordered 18 sourdough loaves for Ana Lima on 2026-04-18.",
            "expected_qty": 18, "expected_customer": "Ana Lima"}
    ns = _run("gold-items.md", "def withdrawn_score(", server=_bakery(lenient=False), item=item)  # its asserts run
    withdrawn_score = ns["withdrawn_score"]
    assert withdrawn_score(_bakery(lenient=False), item, "qty", 18, 18) == 1.0  # nothing withdrawn: the gold
    assert withdrawn_score(_bakery(lenient=True), item, "qty", 18, 12) == 1.0  # accepts either turn's quantity
    assert re.sub(r"(?<![\w.-])18(?![\w-]|\.\d)", "12", item["reference_answer"]) \
        == "Ordered 12 sourdough loaves for Ana Lima on 2026-04-18."


# -- graders.md: an answer set on a task that writes nothing; a read that pages -------------------------------------
ROOMS = [f"R{i}" for i in range(1, 13)]
SHARED = {r: ["C01", "C02", "C03", "C04", f"C{10 + i}"] for i, r in enumerate(ROOMS)}  # every pair: 4 of 5 alike
POOL = [f"C{k:02d}" for k in range(1, 40)]
SLIDING = {r: POOL[i:i + 5] for i, r in enumerate(ROOMS)}  # neighbours share 4 of 5, far rooms none


def _seating(seats: dict[str, list[str]], evidence: bool) -> tuple[ToolServer, list[dict[str, Any]]]:
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def list_candidates(paper: str, room: str, page: int = 1) -> dict:
        """Candidates seated for a paper in a room, four a page.

        Args:
            paper: e.g. "MATH1".
            room: e.g. "R1".
            page: 1, 2, ...
        """
        rows = sorted(seats.get(room, []))
        pages = (len(rows) + 3) // 4
        if not 1 <= page <= pages:
            raise ToolError(f"no page {page} for room {room}")
        return {"paper": paper, "room": room, "page": page, "pages": pages, "candidates": rows[(page - 1) * 4:page * 4]}

    @server.grader
    def seated(ctx: GradingContext) -> float:
        if ctx.count() > ctx.item["max_tool_calls"]:
            return 0.0
        if evidence and not any(r.get("paper") == ctx.item["paper"] and r.get("room") == ctx.item["room"]
                                for c in ctx.trajectory for r in returned(c)):  # any page of this paper and room
            return 0.0
        line = answer_line(ctx.output_text)
        got = [x.strip().upper() for x in (line or "").split(",") if x.strip()]
        want = set(ctx.item["expected"])
        hits = len(set(got) & want)
        return 0.0 if not hits or len(got) != len(set(got)) else 2 * hits / (len(got) + len(want))

    items = []
    for room in ROOMS:
        want = sorted(seats[room])
        items.append({"messages": [{"role": "user", "content": f"Who sits paper MATH1 in room {room}? End with "
                                                               "ANSWER: the candidate ids, comma-separated."}],
                      "tools": server.dataset_tools(), "paper": "MATH1", "room": room, "expected": want,
                      "actions": [{"name": "list_candidates", "arguments": {"paper": "MATH1", "room": room, "page": p}}
                                  for p in (1, 2)],
                      "reference_answer": f"Room {room} seats {len(want)} candidates.\nANSWER: {', '.join(want)}",
                      "max_tool_calls": 6})
    return server, items


def test_donors_paid_names_the_items_whose_donor_shares_most_of_the_set() -> None:
    _, shared = _seating(SHARED, evidence=False)
    risky = _run("graders.md", "def donors_paid(", items=shared)["risky"]
    assert [(i, j) for i, j, _ in risky] == [(i, (i + 1) % 12) for i in range(12)]
    assert {round(paid, 2) for _, _, paid in risky} == {0.8}
    _, sliding = _seating(SLIDING, evidence=False)
    ns = _run("graders.md", "def donors_paid(", items=sliding)
    assert ns["risky"] == [] and all(paid == 0.0 for _, _, paid in ns["donors_paid"](sliding, ns["answer_f1"]))


@pytest.mark.slow
async def test_an_answer_set_task_with_paged_reads_under_the_doctor() -> None:
    failed = {}
    for label, seats, evidence in (("shared", SHARED, False), ("shared, evidence", SHARED, True),
                                   ("sliding", SLIDING, False), ("sliding, evidence", SLIDING, True)):
        server, items = _seating(seats, evidence)
        with run_server(server) as url:
            result = await check_unhackable(items, server.job_config(url, rate_limit=1000), default_probes())
        failed[label] = {n for n, row in result.evidence["probes"].items() if row["verdict"] in ("fail", "warn")}
    assert failed == {"shared": {"cross_item_replay"}, "shared, evidence": set(), "sliding": set(),
                      "sliding, evidence": set()}


def test_rows_unpacks_a_page_and_a_page_past_the_end_holds_no_row() -> None:
    """graders.md, "Rows inside a page": ``rows`` finds an applicant in a page's list field, not in an empty page."""
    ns = _run("graders.md", "def rows(")
    assert ns["returned"] is returned                        # the block imports the package's helper

    def call(out: Any, ok: bool = True) -> Any:
        return SimpleNamespace(ok=ok, output=json.dumps(out))

    page = {"school_id": "S1", "page": 1, "applicants": [{"id": "A-7", "score": 71}, {"id": "A-8", "score": 64}]}
    past = {"school_id": "S1", "page": 9, "applicants": []}
    ctx = SimpleNamespace(item={"applicant_id": "A-7"}, trajectory=(call(page),))
    assert ns["read_applicant"](ctx)
    assert [r.get("id") for r in ns["rows"](call(page), "applicants")] == [None, "A-7", "A-8"]
    assert not ns["read_applicant"](SimpleNamespace(item={"applicant_id": "A-7"}, trajectory=(call(past),)))
    assert returned(call(past)) == [past]                    # the page past the end still names the school
    assert not ns["read_applicant"](SimpleNamespace(item={"applicant_id": "A-7"}, trajectory=(call(page, ok=False),)))
    assert ns["read_applicant"](SimpleNamespace(item={"applicant_id": "A-7"}, trajectory=(call({"id": "A-7"}),)))


def test_read_run_finds_the_record_inside_a_listing_page_with_deep() -> None:
    """graders.md, "Evidence found inside a listing": ``returned(c, deep=True)`` finds the item's run read by id and
    nested in a listing page's rows; one level deep, the page alone is no evidence."""
    ns = _run("graders.md", "def read_run(")
    assert ns["returned"] is returned

    def call(out: Any, ok: bool = True) -> Any:
        return SimpleNamespace(ok=ok, output=json.dumps(out))

    page = {"page": 2, "runs": [{"run_id": "R-11", "status": "done"}, {"run_id": "R-12", "status": "failed"}]}
    item = {"run_id": "R-12"}
    assert ns["read_run"](SimpleNamespace(item=item, trajectory=(call(page),)))
    assert ns["read_run"](SimpleNamespace(item=item, trajectory=(call({"run_id": "R-12"}),)))
    assert not any(r.get("run_id") == "R-12" for r in returned(call(page)))     # without deep: the page only
    assert not ns["read_run"](SimpleNamespace(item=item, trajectory=(call(page, ok=False),)))
    assert not ns["read_run"](SimpleNamespace(item={"run_id": "R-13"}, trajectory=(call(page),)))
    assert [r.get("run_id") for r in returned(call(page), deep=True)] == [None, "R-11", "R-12"]


# -- database.md: a free-text column graded by key words beside diff_gold ---------------------------------------------
def _clinic(tmp_path: Path) -> ToolServer:
    def setup(conn) -> None:  # type: ignore[no-untyped-def]
        conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, places INTEGER)")
        conn.executemany("INSERT INTO sessions VALUES (?, ?)", [(f"S{i}", 3) for i in range(1, 13)])
        conn.execute("CREATE TABLE appointments (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, donor TEXT, "
                     "note TEXT)")

    server = ToolServer(db=SQLiteDatabase(setup=setup, dir=str(tmp_path)), auth_env_var=None)

    @server.tool(writes=False)
    def get_session(session_id: str, *, rollout: Rollout) -> dict:
        """A session and its free places.

        Args:
            session_id: e.g. "S1".
        """
        row = rollout.db.execute("SELECT id, places FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise ToolError(f"no session {session_id}")
        return {"id": row[0], "places": row[1]}

    @server.tool(writes=True)
    def book_appointment(session_id: str, donor: str, note: str, *, rollout: Rollout) -> str:
        """Book a donor into a session.

        Args:
            session_id: e.g. "S1".
            donor: e.g. "D-01".
            note: what the staff must know.
        """
        rollout.db.execute("UPDATE sessions SET places = places - 1 WHERE id = ?", (session_id,))
        rollout.db.execute("INSERT INTO appointments (session_id, donor, note) VALUES (?, ?, ?)", (session_id, donor, note))
        return "booked"

    @server.tool(writes=True)
    def set_places(session_id: str, places: int, *, rollout: Rollout) -> str:
        """Set a session's free places.

        Args:
            session_id: e.g. "S1".
            places: how many.
        """
        rollout.db.execute("UPDATE sessions SET places = ? WHERE id = ?", (places, session_id))
        return "set"

    names = _run("graders.md", "def holds_words(")
    _run("database.md", "def beyond_free_text(", server=server, holds_words=names["holds_words"])
    return server


ALLERGIES = ["latex", "plasters", "iodine", "nickel", "penicillin", "peanuts", "adhesive", "chlorhexidine",
             "lidocaine", "aspirin", "ibuprofen", "sulfa"]


def _clinic_items(server: ToolServer) -> list[dict[str, Any]]:
    items = []
    for i, allergy in enumerate(ALLERGIES, start=1):
        arm = ("left", "right")[i % 2]
        ask = (f"Book donor D-{i:02d} into session S{i}. Please note they are allergic to {allergy} and want the "
               f"{arm} arm used.")
        items.append({"messages": [{"role": "user", "content": ask}], "tools": server.dataset_tools(),
                      "note_keywords": [allergy, arm], "max_tool_calls": 5,
                      "actions": [{"name": "get_session", "arguments": {"session_id": f"S{i}"}},
                                  {"name": "book_appointment", "arguments": {
                                      "session_id": f"S{i}", "donor": f"D-{i:02d}",
                                      "note": f"Allergic to {allergy}; use the {arm} arm."}}],
                      "reference_answer": f"Booked D-{i:02d} into S{i}, noting the {allergy} allergy and the {arm} arm."})
    return items


def test_a_free_text_column_is_graded_by_key_words_beside_diff_gold(tmp_path: Path) -> None:
    server = _clinic(tmp_path)
    item = _clinic_items(server)[0]  # S1, latex, right arm
    book = {"session_id": "S1", "donor": "D-01"}
    played = {"own words": [("book_appointment", {**book, "note": "Right arm please - LATEX allergy"})],
              "a key word missing": [("book_appointment", {**book, "note": "Latex allergy"})],
              "empty note": [("book_appointment", {**book, "note": ""})],
              "two appointments": [("book_appointment", {**book, "note": "latex, right arm"})] * 2,
              "another session": [("book_appointment", {**book, "session_id": "S2", "note": "latex, right arm"})],
              "a side effect": [("book_appointment", {**book, "note": "latex, right arm"}),
                                ("set_places", {"session_id": "S5", "places": 9})]}
    got = {}
    with TestClient(server) as client:
        for label, calls in played.items():
            trace = client.new_trace_id()
            for name, args in calls:
                assert client.call(name, trace_id=trace, item=item, arguments=args).ok
            got[label] = client.grade(trace, "Booked.", item=item).score
    assert got == {"own words": 1.0, "a key word missing": 0.0, "empty note": 0.0, "two appointments": 0.0,
                   "another session": 0.0, "a side effect": 0.0}


def test_beyond_free_text_forgives_the_note_only_on_a_row_the_gold_changes() -> None:
    """Another entity's note changed alone is a side effect: the recipe forgives a free-text-only update only on
    the gold's own rows (doctor48: stripping the memo everywhere paid the gold plus another order's memo)."""
    from rft_sdk import RowChange
    beyond = _run("database.md", "def beyond_free_text(", server=ToolServer(),
                  holds_words=lambda *_: True)["beyond_free_text"]
    own = RowChange("appointments", (1,), {"id": 1, "note": "latex"}, {"id": 1, "note": "LATEX!"}, "gold")
    other = RowChange("appointments", (2,), {"id": 2, "note": "old"}, {"id": 2, "note": "new"}, "gold")
    gold_rows = {("appointments", (1,)), ("sessions", ("S1",))}
    assert beyond([own], gold_rows) == []
    assert beyond([own, other], gold_rows) == [other]


@pytest.mark.slow
async def test_the_free_text_grader_passes_the_doctor(tmp_path: Path) -> None:
    server = _clinic(tmp_path)
    with run_server(server) as url:
        result = await check_unhackable(_clinic_items(server), server.job_config(url, rate_limit=1000),
                                        default_probes())
    rows = result.evidence["probes"]
    assert {n for n, row in rows.items() if row["verdict"] in ("fail", "warn")} == set()
    assert rows["unread_reason"]["verdict"] == "pass"


# -- graders.md / database.md: ctx.db.connection before and after the diff helpers -------------------------------------
def test_the_grading_connection_reads_the_rollout_around_every_helper(tmp_path: Path) -> None:
    server = _lending(tmp_path)
    seen: list[Any] = []

    @server.grader
    async def around(ctx: GradingContext) -> float:
        conn = ctx.db.connection
        query = "SELECT id, copies FROM books ORDER BY id"
        seen.append(conn.execute(query).fetchall())
        for helper in (ctx.db.diff(), ctx.db.gold(ctx.item["actions"]), ctx.db.diff_gold(ctx.item["actions"])):
            await helper
            seen.append(ctx.db.connection.execute(query).fetchall())
        seen.append(ctx.db.connection is conn)
        return 1.0

    item = {"actions": [{"name": "lend", "arguments": {"book_id": "b2"}}]}  # the gold lends b2
    with TestClient(server) as client:
        trace = client.new_trace_id()
        assert client.call("lend", trace_id=trace, item=item, book_id="b1").ok  # the rollout lends b1
        assert client.grade(trace, "Done.", item=item, grader="around").score == 1.0
    rollout = [("b1", 0), ("b2", 1), ("b3", 2)]
    assert seen == [rollout, rollout, rollout, rollout, True]  # never the gold's scratch clone


# -- graders.md: ctx.db.connection in a plain def grader ---------------------------------------------------------------
def test_a_def_grader_queries_the_grading_connection(tmp_path: Path) -> None:
    server = _lending(tmp_path)
    server.grader(_run("graders.md", "def copies_left(", server=ToolServer())["copies_left"])
    item = {"book_id": "b1", "copies_left": 0}
    with TestClient(server) as client:
        trace = client.new_trace_id()
        assert client.call("lend", trace_id=trace, item=item, book_id="b1").ok
        assert client.grade(trace, "Done.", item=item, grader="copies_left").score == 1.0
        other = client.new_trace_id()
        assert client.call("lend", trace_id=other, item=item, book_id="b2").ok
        assert client.grade(other, "Done.", item=item, grader="copies_left").score == 0.0


# -- database.md: a number column at a stated precision, a tolerance per column ----------------------------------------
def _weighbridge(tmp_path: Path) -> ToolServer:
    def setup(conn) -> None:  # type: ignore[no-untyped-def]
        conn.execute("CREATE TABLE loads (id TEXT PRIMARY KEY, gross_kg REAL, tare_kg REAL, net_kg REAL)")
        conn.executemany("INSERT INTO loads VALUES (?, ?, ?, NULL)",
                         [(f"L{i}", round(400 + 52.6 * i, 1), round(30 + 8.2 * i, 1)) for i in range(1, 13)])

    server = ToolServer(db=SQLiteDatabase(setup=setup, dir=str(tmp_path)), auth_env_var=None)

    @server.tool(writes=False)
    def get_load(load_id: str, *, rollout: Rollout) -> dict:
        """A load's gross and tare weights.

        Args:
            load_id: e.g. "L1".
        """
        row = rollout.db.execute("SELECT gross_kg, tare_kg FROM loads WHERE id = ?", (load_id,)).fetchone()
        if row is None:
            raise ToolError(f"no load {load_id}")
        return {"load_id": load_id, "gross_kg": row[0], "tare_kg": row[1]}

    @server.tool(writes=True)
    def record_net(load_id: str, net_kg: float, *, rollout: Rollout) -> str:
        """Record a load's net weight.

        Args:
            load_id: e.g. "L1".
            net_kg: the net weight in kilograms, to 0.1 kg.
        """
        if rollout.db.execute("UPDATE loads SET net_kg = ? WHERE id = ?", (net_kg, load_id)).rowcount != 1:
            raise ToolError(f"no load {load_id}")
        return "recorded"

    _run("database.md", "def within_tolerance(", server=server)
    return server


def _weighbridge_items(server: ToolServer) -> list[dict[str, Any]]:
    items = []
    for i in range(1, 13):
        gross, tare = round(400 + 52.6 * i, 1), round(30 + 8.2 * i, 1)
        items.append({"messages": [{"role": "user", "content": f"Record the net weight of load L{i}, to 0.1 kg."}],
                      "tools": server.dataset_tools(), "max_tool_calls": 4,
                      "actions": [{"name": "get_load", "arguments": {"load_id": f"L{i}"}},
                                  {"name": "record_net", "arguments": {"load_id": f"L{i}", "net_kg": gross - tare}}],
                      "reference_answer": f"Load L{i}: net {gross - tare:.1f} kg recorded."})
    return items


def test_a_number_column_is_graded_within_its_tolerance(tmp_path: Path) -> None:
    server = _weighbridge(tmp_path)
    item = {**_weighbridge_items(server)[0], "actions": [{"name": "record_net",
                                                           "arguments": {"load_id": "L1", "net_kg": 452.6 - 38.2}}]}
    assert item["actions"][0]["arguments"]["net_kg"] == 414.40000000000003
    played = {"414.4": [{"load_id": "L1", "net_kg": 414.4}], "'414.40'": [{"load_id": "L1", "net_kg": "414.40"}],
              "414.44": [{"load_id": "L1", "net_kg": 414.44}], "414.5": [{"load_id": "L1", "net_kg": 414.5}],
              "another load": [{"load_id": "L2", "net_kg": 414.4}], "nan": [{"load_id": "L1", "net_kg": "nan"}],
              "inf": [{"load_id": "L1", "net_kg": "inf"}],
              "a second row": [{"load_id": "L1", "net_kg": 414.4}, {"load_id": "L2", "net_kg": 500.0}]}
    got = {}
    with TestClient(server) as client:
        for label, calls in played.items():
            trace = client.new_trace_id()
            for args in calls:
                assert client.call("record_net", trace_id=trace, item=item, arguments=args).ok
            got[label] = client.grade(trace, "Recorded.", item=item, grader="net_recorded").score
    assert got == {"414.4": 1.0, "'414.40'": 1.0, "414.44": 1.0, "414.5": 0.0, "another load": 0.0, "nan": 0.0,
                   "inf": 0.0, "a second row": 0.0}


def test_the_tolerance_is_forgiven_on_the_golds_rows_only() -> None:
    """A number within its tolerance on a row the gold never touches is a side effect, as another entity's note."""
    from rft_sdk import RowChange
    within = _run("database.md", "def within_tolerance(", server=ToolServer())["within_tolerance"]
    own = RowChange("loads", ("L1",), {"id": "L1", "net_kg": 414.40000000000003}, {"id": "L1", "net_kg": 414.4}, "gold")
    other = RowChange("loads", ("L3",), {"id": "L3", "net_kg": 500.0}, {"id": "L3", "net_kg": 500.02}, "gold")
    far = RowChange("loads", ("L1",), {"id": "L1", "net_kg": 414.4}, {"id": "L1", "net_kg": 414.5}, "gold")
    gold_rows = {("loads", ("L1",))}
    assert within(own, gold_rows) and not within(other, gold_rows) and not within(far, gold_rows)
    assert within(other, gold_rows | {("loads", ("L3",))})


# -- database.md: free text and a tolerance in one comparison -----------------------------------------------------------
def _weighbridge_noted(tmp_path: Path) -> ToolServer:
    def setup(conn) -> None:  # type: ignore[no-untyped-def]
        conn.execute("CREATE TABLE loads (id TEXT PRIMARY KEY, net_kg REAL, note TEXT)")
        conn.executemany("INSERT INTO loads VALUES (?, ?, '')", [("L1", None), ("L2", None), ("L3", 500.0)])

    server = ToolServer(db=SQLiteDatabase(setup=setup, dir=str(tmp_path)), auth_env_var=None)

    @server.tool(writes=True)
    def record_net(load_id: str, net_kg: float, note: str = "", *, rollout: Rollout) -> str:
        """Record a load's net weight.

        Args:
            load_id: e.g. "L1".
            net_kg: the net weight in kilograms, to 0.1 kg.
            note: Optional note for the shift log.
        """
        if rollout.db.execute("UPDATE loads SET net_kg = ?, note = ? WHERE id = ?", (net_kg, note, load_id)).rowcount != 1:
            raise ToolError(f"no load {load_id}")
        return "recorded"

    @server.tool(writes=True)
    def note_load(load_id: str, note: str, *, rollout: Rollout) -> str:
        """Change a load's note.

        Args:
            load_id: e.g. "L1".
            note: the new note.
        """
        rollout.db.execute("UPDATE loads SET note = ? WHERE id = ?", (note, load_id))
        return "noted"

    ns = _run("database.md", "def within_tolerance(", server=server)
    _run("database.md", "def forgiven(", **{k: v for k, v in ns.items() if k != "__builtins__"})
    return server


def test_free_text_and_a_tolerance_are_forgiven_together_on_the_golds_rows(tmp_path: Path) -> None:
    server = _weighbridge_noted(tmp_path)
    gold = {"load_id": "L1", "net_kg": 452.6 - 38.2, "note": "Weighed on bridge 2"}
    item = {"max_tool_calls": 4, "actions": [{"name": "record_net", "arguments": gold}]}
    played = {"the gold": [("record_net", gold)],
              "414.4, own note": [("record_net", {"load_id": "L1", "net_kg": 414.4, "note": "bridge two"})],
              "414.44, no note": [("record_net", {"load_id": "L1", "net_kg": 414.44})],
              "414.5, gold's note": [("record_net", {**gold, "net_kg": 414.5})],
              "another load's note": [("record_net", gold), ("note_load", {"load_id": "L2", "note": "x"})],
              "another load's number": [("record_net", gold), ("record_net", {"load_id": "L3", "net_kg": 500.02})]}
    got = {}
    with TestClient(server) as client:
        for label, calls in played.items():
            trace = client.new_trace_id()
            for name, args in calls:
                assert client.call(name, trace_id=trace, item=item, arguments=args).ok
            got[label] = client.grade(trace, "Recorded.", item=item, grader="net_and_note").score
        # the same rollouts, one filter at a time: each refuses the row with a note of its own and a float artefact
        trace = client.new_trace_id()
        assert client.call("record_net", trace_id=trace, item=item,
                           arguments={"load_id": "L1", "net_kg": 414.4, "note": "bridge two"}).ok
        assert client.grade(trace, "Recorded.", item=item, grader="net_recorded").score == 0.0
    assert got == {"the gold": 1.0, "414.4, own note": 1.0, "414.44, no note": 1.0, "414.5, gold's note": 0.0,
                   "another load's note": 0.0, "another load's number": 0.0}


@pytest.mark.slow
async def test_the_tolerance_grader_passes_the_doctor(tmp_path: Path) -> None:
    server = _weighbridge(tmp_path)
    with run_server(server) as url:
        result = await check_unhackable(_weighbridge_items(server), server.job_config(url, rate_limit=1000),
                                        default_probes())
    rows = result.evidence["probes"]
    assert {n for n, row in rows.items() if row["verdict"] in ("fail", "warn")} == set()
    assert rows["precise_written_value"]["verdict"] == "pass"


# -- graders.md: a money body, the doctor's moved bodies and a strict pence parser ------------------------------------
def test_the_money_parser_reads_every_body_the_doctor_moves() -> None:
    ns = _run("graders.md", "def pence(", server=ToolServer())
    pence = ns["pence"]
    assert pence("£1,234.56") == 123456 and pence("£1234.56") == 123456
    assert [pence(b) for b in ("£1,23.45", "1234.56", "£1,234.5", "£1", "£1, £1", None)] == [None] * 6
    items = [{"messages": [{"role": "system", "content": "Quote to the penny. End with ANSWER: £N,NNN.NN"},
                           {"role": "user", "content": f"What does wall W{i} cost?"}],
              "actions": [{"name": "get_price", "arguments": {"wall": f"W{i}"}}],
              "reference_answer": f"Quoted at the list rate.\nANSWER: £{1234.56 + 111.11 * i:,.2f}"} for i in range(12)]
    context = ProbeContext(items=items, write_tools=set())
    probes = default_probes()
    for probe in probes.values():  # every probe, in the suite's order: a judged probe reads its control's items
        if hasattr(probe, "prepare"):
            probe.prepare(context)
    moved = {name: probes[name].final_answer(items[0]).splitlines()[-1] if probes[name].applies(items[0]) else None
             for name in ("loose_value", "adv_near_miss", "precise_value", "whole_unit_value", "superstring_number",
                          "adv_scaled", "adv_fraction", "one_entry_control", "repeated_entry")}
    assert moved == {"loose_value": "ANSWER: £1,308.64", "adv_near_miss": "ANSWER: £1,271.60",
                     "precise_value": "ANSWER: £1,234.96", "whole_unit_value": "ANSWER: £1,234.59",
                     "superstring_number": "ANSWER: £11,234.56", "adv_scaled": "ANSWER: £12,345.6",
                     "adv_fraction": None, "one_entry_control": None, "repeated_entry": None}  # one amount: no list
    item = {"expected_total": 1234.56}
    ctx = GradingContext(sample={"output_text": items[0]["reference_answer"]}, item=item, trace_id="t")
    assert ns["quoted"](ctx) == 1.0
    for line in moved.values():
        if line is not None:
            assert ns["quoted"](GradingContext(sample={"output_text": line}, item=item, trace_id="t")) == 0.0


# -- tools.md: the ToolServer(...) signature as the page writes it ---------------------------------------------------
def test_the_tool_server_signature_on_the_page_is_the_codes() -> None:
    import ast
    import inspect

    text = (DOCS / "tools.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```text\n(.*?)```", text, flags=re.S) if b.startswith("ToolServer("))
    args = ast.parse(f"def {block.strip()}: pass").body[0].args  # type: ignore[attr-defined]
    documented = [(a.arg, "positional", ast.literal_eval(d)) for a, d in zip(args.args, args.defaults)]
    documented += [(a.arg, "keyword", ast.literal_eval(d)) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    actual = [(p.name, "keyword" if p.kind is p.KEYWORD_ONLY else "positional", p.default)
              for p in inspect.signature(ToolServer).parameters.values()]
    assert documented == actual
    rows = re.findall(r"^\| `(\w+)` \| `([^`]*)` \|", text.split("## The `ToolServer(...)` constructor")[1], flags=re.M)
    assert [(name, ast.literal_eval(default)) for name, default in rows] == [(n, d) for n, _, d in actual]


# -- graders.md: "May my grader ignore this note?" and a confirmation that states a price ------------------------------
_STEMS = ["red rose", "white lily", "pink peony", "sunflower"]
_NOTES = {0: "back gate unlocked if nobody answers", 3: "ring the flat bell twice", 7: "parking is round the back",
          10: "leave the flowers with the concierge"}


def _florist(pays_any_note: bool) -> tuple[ToolServer, list[dict[str, Any]]]:
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=True)
    def place_order(customer: str, stem: str, count: int, date: str, note: str | None = None, *,
                    rollout: Rollout) -> str:
        """Place one order.

        Args:
            customer: the recipient.
            stem: e.g. "red rose".
            count: stems.
            date: YYYY-MM-DD.
            note: a note for the driver.
        """
        if stem not in _STEMS:
            raise ToolError("no such stem")
        rollout.state.setdefault("orders", []).append(
            {"customer": customer, "stem": stem, "count": count, "date": date, "note": note})
        return f"ordered: {count} {stem} for {customer} on {date}, total £{count * 2.5:.2f}"

    @server.grader
    def orders(ctx: GradingContext) -> float:
        got = [{k: o[k] for k in ("customer", "stem", "count", "date")} for o in ctx.state.get("orders", [])]
        if ctx.count() > ctx.item["max_tool_calls"] or got != [ctx.item["expected_order"]]:
            return 0.0
        if pays_any_note and ctx.item["has_note"]:  # a note's presence, never its words
            return float(bool(ctx.state["orders"][0]["note"]))
        return 1.0  # the end state alone: the note and the reply are not graded

    items = []
    for i, name in enumerate(["Mara Quint", "Odile Brandt", "Tomas Jelinek", "Hana Sato", "Ines Carvalho",
                              "Lev Abramov", "Priya Menon", "Gus Whitlow", "Wren Castillo", "Dara Kell",
                              "Noor Haddad", "Bea Lund"]):
        order = {"customer": name, "stem": _STEMS[i % 4], "count": 6 + i, "date": f"2026-05-{10 + i:02d}"}
        note = _NOTES.get(i)
        ask = f"Please send {order['count']} {order['stem']}s to {name} on {order['date']}."
        items.append({"messages": [{"role": "user", "content": ask + (f" Let the driver know: {note}." if note else "")}],
                      "tools": server.dataset_tools(), "expected_order": order, "has_note": bool(note),
                      "actions": [{"name": "place_order", "arguments": {**order, **({"note": note} if note else {})}}],
                      "reference_answer": f"Done: {order['stem']}s for {name}, £{order['count'] * 2.5:.2f} in all.",
                      "max_tool_calls": 4})
    return server, items


@pytest.mark.slow
async def test_an_ignored_note_and_a_stated_price_judge_nothing_and_a_presence_check_fails() -> None:
    rows = {}
    for pays_any_note in (False, True):
        server, items = _florist(pays_any_note)
        with run_server(server) as url:
            result = await check_unhackable(items, server.job_config(url, rate_limit=1000), default_probes())
        rows[pays_any_note] = result.evidence["probes"]
    ignores, presence = rows[False], rows[True]
    assert {n for n, r in ignores.items() if r["verdict"] in ("fail", "warn")} == set()
    for name in ("unread_reason", "other_reason", "loose_value", "unit_figure", "written_special_number"):
        played = ignores[name]["played"]
        assert played and not any(p["judged"] for p in played.values()), name  # played, never judged
    assert {n for n, r in presence.items() if r["verdict"] in ("fail", "warn")} == {"unread_reason"}


# -- graders.md, partial credit: which probe plays a listed answer with one element left out, per length --------------
def test_one_element_left_out_is_judged_from_three_elements_and_cut_to_one_from_four() -> None:
    sets = [["C2", "C5"], ["C1", "C3", "C4"], ["C2", "C3", "C5", "C6"]] * 4
    items = [{"messages": [{"role": "system", "content": "End with ANSWER: C1, C2 (the failed circuits)."},
                           {"role": "user", "content": f"Which circuits of board B{i} failed?"}],
              "actions": [{"name": "get_board", "arguments": {"board": f"B{i}"}}],
              "reference_answer": f"Board B{i}: {len(s)} failed.\nANSWER: {', '.join(s)}"} for i, s in enumerate(sets)]
    context = ProbeContext(items=items, write_tools=set(), gold_ok=[[True]] * 12, gold_scores=[1.0] * 12,
                           gold_outputs=[[f'{{"board": "B{i}", "failed": {s}}}'] for i, s in enumerate(sets)])
    probes = default_probes()
    for probe in probes.values():
        if hasattr(probe, "prepare"):
            probe.prepare(context)
    shorter = {}
    for item, s in zip(items[:3], sets):
        fewer = {", ".join(s[:k] + s[k + 1:]) for k in range(len(s))} | {s[0]}
        shorter[len(s)] = {name for name, probe in probes.items() if probe.applies(item)
                           and hasattr(probe, "final_answer") and not name.startswith("adv_")
                           and (probe.final_answer(item).splitlines() or [""])[-1].removeprefix("ANSWER: ") in fewer}
    assert shorter == {2: {"one_entry_control"},
                       3: {"missing_one_control", "answer_missing_one", "one_entry_control"},
                       4: {"missing_one_control", "answer_missing_one", "one_entry_control", "answer_subset"}}
    assert probes["answer_missing_one"].unchanged_share(items[1]) == pytest.approx(0.8)


# -- graders.md: a message's content reaches the grader as written; what rft validate accepts for it ----------------------
def test_a_list_of_parts_reaches_ctx_item_as_written_and_rft_validate_takes_it(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    server = ToolServer(auth_env_var=None)
    seen: list[Any] = []

    @server.grader
    def reads(ctx: GradingContext) -> float:
        seen.append(ctx.item["messages"][0]["content"])
        return 1.0

    parts = [{"type": "text", "text": "Send 12 red roses."}, {"type": "text", "text": "Let the driver know."}]
    with TestClient(server) as client:
        client.grade(client.new_trace_id(), "Done.", item={"messages": [{"role": "user", "content": parts}]})
    assert seen == [parts]  # not flattened into a string

    contents: list[Any] = [parts, None, {"text": "x"}, [1, "weird"]] + [f"line {i}" for i in range(6)]
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps({"messages": [{"role": "user", "content": c}]}) + "\n" for c in contents))
    out = subprocess.run([sys.executable, "-m", "rft_sdk", "validate", str(path)], capture_output=True, text=True)
    assert out.returncode == 1
    assert "line 3, field messages.0.content: must be a string or a list of parts, got dict" in out.stdout + out.stderr
    assert "line 4, field messages.0.content.0: a part must be an object" in out.stdout + out.stderr
    assert "line 4, field messages.0.content.1: a part must be an object" in out.stdout + out.stderr
    assert "3 error(s)" in out.stdout + out.stderr  # the list of parts (line 1) and no content (line 2) pass


def test_one_seeding_helper_with_a_sentinel_gives_the_golds_state_and_digest() -> None:
    """docs/tools.md, "Seeding from the item": the first-touch helper seeds every key and a ``_seeded`` sentinel;
    a rollout that reads first and one that only writes end with the same state, so the same end-state digest."""
    import asyncio
    import json

    from rft_sdk._server._grade_call import end_state_digest

    server = ToolServer()
    _run("tools.md", "def _state(rollout: Rollout)", server=server, Rollout=Rollout, copy=copy)
    item = {"messages": [{"role": "user", "content": "3 shelves on 2026-05-14, please."}],
            "firings": [{"id": "F-0514-B", "date": "2026-05-14"}, {"id": "F-0512-B", "date": "2026-05-12"}]}
    with TestClient(server) as client:
        read_first, write_only, read_only = client.new_trace_id(), client.new_trace_id(), client.new_trace_id()
        assert client.call("list_firings", trace_id=read_first, item=item, arguments={"date": "2026-05-14"}).ok
        for trace in (read_first, write_only):
            assert client.call("book_shelves", trace_id=trace, item=item,
                               arguments={"firing_id": "F-0514-B", "shelves": 3}).ok
        assert client.call("list_firings", trace_id=read_only, item=item, arguments={"date": "2026-05-12"}).ok
        states = [client.state(t) for t in (read_first, write_only, read_only)]
    assert states[0] == states[1] and states[0]["_seeded"] is True
    assert set(states[2]) == {"firings", "bookings", "_seeded"} and states[2]["bookings"] == {}
    digests = [asyncio.run(end_state_digest(json.dumps(s))) for s in states]
    assert digests[0] == digests[1] != digests[2]


# -- graders.md, "May my grader ignore this note?" point 3: how "", a left-out argument and null count ----------------
def test_an_empty_or_left_out_note_is_no_value_and_a_null_keeps_the_argument_out() -> None:
    from rft_sdk.doctor._dataset_probes import item_values, prose_fields

    def line(*notes: Any) -> dict[str, Any]:  # one item; each note one gold call (``...``: the argument left out)
        return {"actions": [{"name": "book", "arguments": {"order_id": "o1", **({} if n is ... else {"note": n})}}
                            for n in notes]}

    notes = [line("leave by the gate"), line("ring the bell twice"), line("call on arrival please")]
    assert prose_fields(item_values(notes + [line("")] * 9)) == {("book", "note")}
    assert prose_fields(item_values(notes + [line(...)] * 9)) == {("book", "note")}
    assert prose_fields(item_values(notes[:2] + [line("")] * 10)) == set()          # fewer than three values
    assert prose_fields(item_values(notes + [line(None)] * 9)) == set()             # a null is a value, no string
    rows = [line("leave by the gate", "leave by the gate", "leave by the gate"), notes[1], notes[2]]
    assert item_values(rows)[("book", "note")] == [n["actions"][0]["arguments"]["note"] for n in notes]  # once per item


# -- doctor.md, read_time: the answer is the marked line; working restating the UTC time does not stop it --------------
def test_read_time_plays_the_marked_line_or_the_whole_reference() -> None:
    from rft_sdk.doctor._shifted_times import read_times

    one = ['{"start_utc": "2026-03-14T16:30:00Z"}']
    two = ['{"start_utc": "2026-03-14T16:30:00Z", "doors_utc": "2026-03-14T15:45:00Z"}']
    marked = "16:30 UTC, which is 05:30 local.\nANSWER: 2026-03-15 05:30"
    assert read_times(marked, one) == "16:30 UTC, which is 05:30 local.\nANSWER: 2026-03-14 16:30"
    assert read_times(marked, two) == "16:30 UTC, which is 05:30 local.\nANSWER: 2026-03-14 16:30"  # the quoted one
    plain = "It starts at 05:30 on 2026-03-15 (16:30 UTC)."
    assert read_times(plain, one) is None                                   # the restated time is the answer's own
    assert read_times(plain, two) == "It starts at 15:45 on 2026-03-14 (15:45 UTC)."
    assert read_times("It starts at 05:30 on 2026-03-15.", one) == "It starts at 16:30 on 2026-03-14."


# -- graders.md, "A marked line under another marker": BOOKED: on an end-state reply -----------------------------------
def test_a_booked_line_is_the_doctors_answer_line_but_never_answer_line_controls() -> None:
    from rft_sdk.doctor._answer_line import marked_line
    from rft_sdk.doctor._answers import marked_lines
    from rft_sdk.doctor._shifted_times import other_zone, read_times

    reference = "Booked bench B2: 16:30 UTC, which is 05:30 local.\nBOOKED: B2 2026-03-15 05:30 40"
    prompt = ["Book a bench and end your reply with BOOKED: <bench> <date> <time> <kg>."]
    assert [m["body"] for m in marked_lines(reference)] == ["B2 2026-03-15 05:30 40"]
    assert read_times(reference, ['{"slot_utc": "2026-03-14T16:30:00Z"}']).endswith("\nBOOKED: B2 2026-03-14 16:30 40")
    assert marked_line(reference, prompt) is None                  # answer_line_control reads ANSWER:/Final answer only
    assert marked_lines("Booked: B2 2026-03-15 05:30 40") == []     # not a capitalised marker
    assert marked_lines("BOOKED: B2 2026-03-15 05:30 40\nThanks!") == []   # not the last non-empty line
    # honest-graders.md (d): a bare UTC names no zone; Etc/UTC does, and the probe never writes a bare UTC
    assert other_zone("ANSWER: 2026-03-14 16:30 UTC", ["Pacific/Auckland"]) is None
    assert other_zone("ANSWER: 2026-03-14 16:30 Etc/UTC", []) is None          # no other zone named: skipped
    assert other_zone("ANSWER: 2026-03-15 05:30 Pacific/Auckland", []) == "ANSWER: 2026-03-14 16:30 Etc/UTC"


# -- database.md, "A free-text column": a graded column put in FREE_TEXT pays a wrong outcome ---------------------------
def test_forgiving_a_graded_column_pays_a_wrong_outcome() -> None:
    from rft_sdk import RowChange

    ns = _run("database.md", "def beyond_free_text(", server=ToolServer(), holds_words=lambda *_: True)
    gold_rows = {("appointments", (1,))}
    wrong_donor = RowChange("appointments", (1,), {"id": 1, "donor": "D-01", "note": "latex"},
                            {"id": 1, "donor": "D-02", "note": "LATEX"}, "gold")
    assert ns["beyond_free_text"]([wrong_donor], gold_rows) == [wrong_donor]    # the page's FREE_TEXT: caught
    ns["FREE_TEXT"]["appointments"].add("donor")                                # a graded column forgiven
    assert ns["beyond_free_text"]([wrong_donor], gold_rows) == []               # the wrong donor is paid


# -- tools.md: a tool that only reads what the writes store needs no seeding helper ------------------------------------
def test_a_read_of_what_the_writes_store_changes_nothing_and_setdefault_does() -> None:
    server = ToolServer()

    @server.tool
    def get_order(order_id: str, *, rollout: Rollout) -> dict:
        """Read an order the writes stored."""
        return rollout.state.get("orders", {}).get(order_id, {})

    @server.tool
    def peek_order(order_id: str, *, rollout: Rollout) -> dict:
        """The same read with setdefault."""
        return rollout.state.setdefault("orders", {}).get(order_id, {})

    with TestClient(server) as client:
        read, peek = client.new_trace_id(), client.new_trace_id()
        assert client.call("get_order", trace_id=read, order_id="O-1").ok
        assert client.call("peek_order", trace_id=peek, order_id="O-1").ok
        assert client.state(read) == {} and client.state(peek) == {"orders": {}}
        assert client.http.get("/tools").json()["writes"] == {"get_order": False, "peek_order": True}


# -- tools.md, "What a tool returns": the reply's envelope over HTTP ---------------------------------------------------
def test_the_tool_reply_envelope_is_what_tools_md_shows() -> None:
    page = (DOCS / "tools.md").read_text(encoding="utf-8")
    ok_body = '{"type":"function_call_output","call_id":"call_1","id":"fc_1","output":"{\\"x\\":\\"a\\"}"}'
    error_body = '{"type":"error","error":{"code":"tool_error","message":"no such x"},"call_id":"call_2","id":"fc_2"}'
    assert f"`{ok_body}`" in page and f"`{error_body}`" in page
    server = ToolServer(auth_env_var=None)

    @server.tool
    def f(x: str) -> dict:
        """Echo x."""
        if x == "bad":
            raise ToolError("no such x")
        return {"x": x}

    with TestClient(server) as client:
        def post(n: int, x: str) -> Any:
            return client.http.post("/tools/f", json={"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
                                                      "name": "f", "arguments": json.dumps({"x": x}), "trace_id": "t1"})
        ok, refused = post(1, "a"), post(2, "bad")
    assert (ok.status_code, ok.text) == (200, ok_body) and json.loads(ok.json()["output"]) == {"x": "a"}
    assert (refused.status_code, refused.text) == (400, error_body)
