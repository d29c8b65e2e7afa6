"""The grader examples of ``docs/graders.md`` and ``docs/database.md`` run as written, against real servers, and
do what the pages say: the lookup grader that requires a read passes ``rft doctor`` without the warning its
read-less variant gets (and a gold-path variant fails *gradeable*), and its evidence helper reads a tool that
returns a list; the ``answer_line`` grader pays one committed
answer in the asked format; half credit for the right end state and an empty reply fails the no-outcome probes only
where no gold writes; the coercing grader pays ``qty="4"``; after a void and a re-issue ``diff_gold`` differs while
``by_value`` agrees; docs/doctor.md lists every option of ``rft doctor`` in its synopsis and its table; the
building-blocks table gives each ``rft_sdk.rewards`` function's signature as declared."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from rft_sdk import GradingContext, Rollout, SQLiteDatabase, ToolError, ToolServer
from rft_sdk.doctor import check_unhackable, cli, default_probes
from rft_sdk.testing import TestClient, run_server

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _block(page: str, marker: str) -> str:
    """The one ```python block of ``docs/<page>`` that holds ``marker``."""
    blocks = [b for b in re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(encoding="utf-8"), flags=re.S)
              if marker in b]
    assert len(blocks) == 1, f"docs/{page}: {len(blocks)} python blocks hold {marker!r}"
    return blocks[0]


def _run_block(page: str, marker: str, server: ToolServer) -> dict[str, Any]:
    namespace: dict[str, Any] = {"server": server, "GradingContext": GradingContext, "__name__": "docs"}
    exec(compile(_block(page, marker), f"docs/{page}", "exec"), namespace)
    return namespace


# -- graders.md, checklist 10: a lookup shows its read -------------------------------------------------------
BOOKS = {f"b{i}": {"id": f"b{i}", "title": f"Title {chr(64 + i)}", "available": i % 3 != 0} for i in range(1, 13)}


def _lookup_server() -> tuple[ToolServer, dict[str, Any]]:
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def get_book(book_id: str) -> dict[str, Any]:
        """A book by id.

        Args:
            book_id: e.g. "b1".
        """
        if book_id not in BOOKS:
            raise ToolError(f"no book {book_id}")
        return BOOKS[book_id]

    @server.tool(writes=False)
    def find_book(title: str) -> dict[str, Any]:
        """A book by its title.

        Args:
            title: the title, any case.
        """
        for book in BOOKS.values():
            if book["title"].lower() == title.strip().lower():
                return book
        raise ToolError(f"no book titled {title!r}")

    ns = _run_block("graders.md", "def availability(", server)
    availability, answer = ns["availability"], ns["ANSWER"]

    @server.grader
    def no_read(ctx: GradingContext) -> float:  # the page's grader without read_it
        lines = answer.findall(ctx.output_text)
        if len(lines) != 1 or ctx.count() > ctx.item["max_tool_calls"]:
            return 0.0
        return float(lines[0].strip().lower() == ctx.item["expected"])

    @server.grader
    def gold_path(ctx: GradingContext) -> float:  # the page's grader, and the gold's exact calls
        same = [(c.name, c.arguments) for c in ctx.trajectory] == [(a["name"], a["arguments"])
                                                                    for a in ctx.item["actions"]]
        return float(same) * availability(ctx)

    return server, ns


def _lookup_items(server: ToolServer) -> list[dict[str, Any]]:
    items = []
    for book_id, book in BOOKS.items():
        expected = "yes" if book["available"] else "no"
        items.append({"messages": [{"role": "system", "content": "End with ANSWER: yes or ANSWER: no."},
                                   {"role": "user", "content": f"Is {book['title']} (book {book_id}) available?"}],
                      "tools": server.dataset_tools(), "book_id": book_id, "expected": expected,
                      "actions": [{"name": "get_book", "arguments": {"book_id": book_id}}],
                      "reference_answer": f"ANSWER: {expected}", "max_tool_calls": 4,
                      "alternatives": [{"name": "by_title",
                                        "actions": [{"name": "find_book", "arguments": {"title": book["title"]}}]}]})
    return items


@pytest.fixture(scope="module")
def lookup_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, dict[str, Any]]]:
    server, _ = _lookup_server()
    folder = tmp_path_factory.mktemp("lookup")
    dataset = folder / "train.jsonl"
    dataset.write_text("".join(json.dumps(i) + "\n" for i in _lookup_items(server)), encoding="utf-8")
    out = {}
    with run_server(server) as url:
        for grader in ("availability", "no_read", "gold_path"):
            config = folder / f"{grader}.json"
            config.write_text(json.dumps(server.job_config(url, grader=grader, rate_limit=1000,
                                                           max_episode_steps=4)), encoding="utf-8")
            code = cli.main(["--dataset", str(dataset), "--config", str(config), "--out", str(folder / grader),
                             "--principles", "gradeable,unhackable", "--replays", "1", "--regrades", "1"])
            out[grader] = (code, json.loads((folder / grader / "doctor.json").read_text(encoding="utf-8")))
    return out


def test_the_lookup_grader_scores_a_read_by_any_path_and_no_answer_without_one() -> None:
    server, _ = _lookup_server()
    item = _lookup_items(server)[1]  # b2, available
    with TestClient(server) as client:
        assert client.replay(item, grader="availability").grade.score == 1.0
        assert client.replay(item, grader="availability", alternative="by_title").grade.score == 1.0
        guessed = client.new_trace_id()
        assert client.grade(guessed, "ANSWER: yes", item=item, grader="availability").score == 0.0
        other = client.new_trace_id()
        assert client.call("get_book", trace_id=other, item=item, book_id="b4").ok  # another book read
        assert client.grade(other, "ANSWER: yes", item=item, grader="availability").score == 0.0
        both = client.new_trace_id()
        assert client.call("get_book", trace_id=both, item=item, book_id="b2").ok
        assert client.grade(both, "ANSWER: yes\nANSWER: no", item=item, grader="availability").score == 0.0


def test_the_evidence_helper_reads_an_object_and_each_object_of_a_list() -> None:
    """doctor36's gap: a ``find_tickets`` returning a list was never evidence under the old helper."""
    from rft_sdk.rewards import returned as packaged

    server, ns = _lookup_server()
    returned = ns["returned"]
    assert returned is packaged  # the page's grader imports the package's helper, no copy of its own

    @server.tool(writes=False)
    def find_books(available: bool) -> list[dict[str, Any]]:
        """Every book, available or not.

        Args:
            available: which ones.
        """
        return [b for b in BOOKS.values() if b["available"] == available]

    item = _lookup_items(server)[1]  # b2, available
    with TestClient(server) as client:
        listed = client.new_trace_id()
        call = client.call("find_books", trace_id=listed, item=item, available=True)
        assert call.ok and json.loads(call.model_text)[0]["id"] == "b1"
        assert client.grade(listed, "ANSWER: yes", item=item, grader="availability").score == 1.0
        other = client.new_trace_id()
        assert client.call("find_books", trace_id=other, item=item, available=False).ok  # b2 not listed
        assert client.grade(other, "ANSWER: yes", item=item, grader="availability").score == 0.0
        records = client.trajectory(listed)
    assert [r["id"] for r in returned(records[0])][:2] == ["b1", "b2"]
    refused = type("Call", (), {"ok": False, "output": json.dumps([{"id": "b2"}])})()
    values = type("Call", (), {"ok": True, "output": json.dumps(["b2"])})()
    assert returned(refused) == [] and returned(values) == []


@pytest.mark.slow
def test_rft_doctor_passes_the_lookup_grader_and_warns_without_its_read(lookup_reports) -> None:
    code, report = lookup_reports["availability"]
    unhackable = report["principles"]["unhackable"]
    assert code == 0 and report["principles"]["gradeable"]["passed"] is True
    assert (unhackable["failed_probes"], unhackable["warned_probes"]) == ([], [])
    code, report = lookup_reports["no_read"]
    unhackable = report["principles"]["unhackable"]
    assert unhackable["failed_probes"] == [] and unhackable["warned_probes"] == ["answer_without_work"]
    code, report = lookup_reports["gold_path"]
    assert code == 1 and report["principles"]["gradeable"]["passed"] is False  # the by_title path refused


# -- graders.md: arguments as the model sent them ------------------------------------------------------------
def test_the_coercing_grader_pays_a_quantity_sent_as_a_string() -> None:
    server = ToolServer(auth_env_var=None)

    @server.tool
    def place_order(sku: str, qty: int, *, rollout: Rollout) -> str:
        """Order ``qty`` units of ``sku``."""
        rollout.state.setdefault("orders", []).append([sku, qty])
        return f"ordered {qty} x {sku}"

    _run_block("graders.md", "def ordered(", server)
    item = {"messages": [{"role": "user", "content": "Order 4 of A-1."}], "sku": "A-1", "qty": 4}
    with TestClient(server) as client:
        sent_as_text = client.new_trace_id()
        assert client.call("place_order", trace_id=sent_as_text, item=item, sku="A-1", qty="4").ok
        assert client.trajectory(sent_as_text)[0].arguments["qty"] == "4"  # the record keeps the model's "4"
        assert client.state(sent_as_text) == {"orders": [["A-1", 4]]}     # the tool received 4
        assert client.grade(sent_as_text, "done", item=item, grader="ordered").score == 1.0
        wrong = client.new_trace_id()
        assert client.call("place_order", trace_id=wrong, item=item, sku="A-1", qty="5").ok
        assert client.grade(wrong, "done", item=item, grader="ordered").score == 0.0
        refused = client.new_trace_id()
        assert client.call("place_order", trace_id=refused, item=item, sku="A-1", qty="4.5").status == 422
        assert client.grade(refused, "done", item=item, grader="ordered").score == 0.0


# -- graders.md: the marked answer line (answer_line) ---------------------------------------------------------
def test_the_answer_line_grader_pays_one_committed_answer_in_the_asked_format() -> None:
    server = ToolServer(auth_env_var=None)
    _run_block("graders.md", "def high_tide(", server)
    item = {"messages": [{"role": "user", "content": "When is the next high tide? End with ANSWER: HH:MM, X.X m"}],
            "high_time": "06:01", "height_m": 5.9}
    replies = {
        "The tide peaks at 06:01.\nANSWER: 06:01, 5.9 m": 1.0,
        "**ANSWER:** 06:01, 5.9 m.": 1.0,                             # bold marker, a trailing period
        "ANSWER: 06:01, 5.9 m\nchecked again\nANSWER: 06:01, 5.9 m": 1.0,  # marked lines that agree
        "ANSWER: 06:01, 5.95 m": 0.0,                                  # not the X.X m asked for: does not parse
        "ANSWER: 06:01, 6.0 m": 0.0,                                   # a tenth off
        "ANSWER: 06:02, 5.9 m": 0.0,
        "ANSWER: 05:44, 5.1 m\nANSWER: 06:01, 5.9 m": 0.0,             # two answers: none committed
        "High tide is at 06:01, 5.9 m.": 0.0,                          # no marked line
        "ANSWER:": 0.0,
    }
    with TestClient(server) as client:
        scores = {reply: client.grade(None, reply, item=item, grader="high_tide").score for reply in replies}
    assert scores == replies


# -- graders.md: half credit for the right end state, against the no-outcome probes ----------------------------
KEYS = {f"k{i}": f"v{i}" for i in range(12)}


def _half_credit_server() -> ToolServer:
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def lookup(key: str, *, rollout: Rollout) -> str:
        """Read a key.

        Args:
            key: e.g. "k1".
        """
        return rollout.state.get("kv", {}).get(key, KEYS.get(key, "missing"))

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
    def half_for_the_end_state(ctx: GradingContext) -> float:
        """0.5 for the right end state, 0.5 more for the right answer (an empty reply gets the first half)."""
        want = {ctx.item["key"]: ctx.item["value"]} if ctx.item["value"] else {}
        if ctx.state.get("kv", {}) != want:
            return 0.0
        return 0.5 + 0.5 * (ctx.item["old"] in ctx.output_text)

    return server


def _half_credit_items(server: ToolServer, *, writes: bool) -> list[dict[str, Any]]:
    items = []
    for i, (key, old) in enumerate(KEYS.items()):
        value = f"n{i}" if writes and i % 2 == 0 else None  # with writes: every other item writes, the rest read
        actions = [{"name": "lookup", "arguments": {"key": key}}]
        if value:
            actions.append({"name": "set_value", "arguments": {"key": key, "value": value}})
        ask = f"What is {key}?" + (f" Then set it to {value}." if value else "")
        items.append({"messages": [{"role": "user", "content": ask}], "tools": server.dataset_tools(),
                      "key": key, "value": value, "old": old, "actions": actions,
                      "reference_answer": f"{key} was {old}."})
    return items


async def test_half_credit_for_the_right_end_state_and_an_empty_reply_fails_only_where_no_gold_writes() -> None:
    server = _half_credit_server()
    verdicts = {}
    with run_server(server) as url:
        job = server.job_config(url, rate_limit=1000)
        for writes in (True, False):
            probes = {name: default_probes()[name] for name in ("empty_answer", "activity_no_answer")}
            result = await check_unhackable(_half_credit_items(server, writes=writes), job, probes)
            rows = result.evidence["probes"]
            verdicts[writes] = {name: (row["verdict"], row["mean_score"]) for name, row in rows.items()}
    # other golds write: the read-only items' 0.5 is under the line g (u = 1), the writing items' score is 0
    assert verdicts[True] == {"empty_answer": ("pass", 0.25), "activity_no_answer": ("pass", 0.25)}
    # no gold writes (u = 0): the line is 0.05 x g, and the 0.5 for an untouched end state is reward everywhere
    assert verdicts[False] == {"empty_answer": ("fail", 0.5), "activity_no_answer": ("fail", 0.5)}


# -- database.md: an undo (void, then re-issue) on an AUTOINCREMENT table ------------------------------------
def _setup(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE books (id TEXT PRIMARY KEY, copies INTEGER NOT NULL)")
    conn.execute("CREATE TABLE loans (id INTEGER PRIMARY KEY AUTOINCREMENT, book_id TEXT NOT NULL, "
                 "member TEXT NOT NULL)")
    conn.execute("INSERT INTO books VALUES ('b1', 1)")


def test_after_a_void_and_a_reissue_diff_gold_differs_and_by_value_agrees(tmp_path: Path) -> None:
    server = ToolServer(auth_env_var=None, db=SQLiteDatabase(setup=_setup, name="undo", dir=tmp_path / "db"))

    @server.tool
    def lend_book(book_id: str, member: str, *, rollout: Rollout) -> str:
        """Lend a copy of ``book_id`` to ``member``."""
        if rollout.db.execute("SELECT copies FROM books WHERE id = ?", (book_id,)).fetchone()[0] < 1:
            raise ToolError(f"no copy of {book_id} left")
        cursor = rollout.db.execute("INSERT INTO loans (book_id, member) VALUES (?, ?)", (book_id, member))
        rollout.db.execute("UPDATE books SET copies = copies - 1 WHERE id = ?", (book_id,))
        return f"loan {cursor.lastrowid}"

    @server.tool
    def void_loan(loan_id: int, *, rollout: Rollout) -> str:
        """Void a loan: the copy goes back."""
        row = rollout.db.execute("SELECT book_id FROM loans WHERE id = ?", (loan_id,)).fetchone()
        if row is None:
            raise ToolError(f"no loan {loan_id}")
        rollout.db.execute("DELETE FROM loans WHERE id = ?", (loan_id,))
        rollout.db.execute("UPDATE books SET copies = copies + 1 WHERE id = ?", (row[0],))
        return f"loan {loan_id} voided"

    ns = _run_block("database.md", "def by_value(", server)  # assigned_keys, by_value and the end_state grader
    two_lines = [line.split("#")[0].strip() for line in _block("database.md", "loans/1 missing").splitlines()]
    source = "async def two_lines(ctx, assigned, by_value, out):\n" + "".join(
        f"    out.append({line})\n" for line in two_lines if line)
    exec(compile(source, "docs/database.md", "exec"), ns)
    seen: list[Any] = []

    @server.grader
    async def both(ctx: GradingContext) -> float:
        await ns["two_lines"](ctx, ns["assigned_keys"](ctx.db.connection), ns["by_value"], seen)
        return 1.0

    item = {"messages": [{"role": "user", "content": "Lend b1 to ada."}],
            "actions": [{"name": "lend_book", "arguments": {"book_id": "b1", "member": "ada"}}]}
    with TestClient(server) as client:
        def undone() -> str:
            trace = client.new_trace_id()
            for name, args in [("lend_book", {"book_id": "b1", "member": "ada"}), ("void_loan", {"loan_id": 1}),
                               ("lend_book", {"book_id": "b1", "member": "ada"})]:
                assert client.call(name, trace_id=trace, item=item, arguments=args).ok
            return trace

        trace = undone()
        assert client.query(trace, "SELECT seq FROM sqlite_sequence WHERE name = 'loans'") == [(2,)]
        assert client.query(trace, "SELECT id, member FROM loans") == [(2, "ada")]
        assert client.grade(trace, "Lent.", item=item, grader="end_state").score == 1.0
        client.grade(undone(), "Lent.", item=item, grader="both")
        diff, same = seen
        assert [(c.label(), c.kind) for c in diff] == [("loans/1", "missing"), ("loans/2", "extra")]
        assert same is True
        wrong = client.new_trace_id()
        assert client.call("lend_book", trace_id=wrong, item=item, book_id="b1", member="bob").ok
        assert client.grade(wrong, "Lent.", item=item, grader="end_state").score == 0.0


# -- grader-contract.md: every probe it names is a probe of the doctor ----------------------------------------
def test_every_probe_the_contract_names_exists() -> None:
    from rft_sdk.doctor import default_probes

    rows = [line.split("|") for line in (DOCS / "grader-contract.md").read_text(encoding="utf-8").splitlines()
            if re.match(r"\| \d+ \|", line)]
    assert [int(r[1]) for r in rows] == list(range(1, len(rows) + 1)), "the rules are numbered 1..n in order"
    named = {n for r in rows for n in re.findall(r"`([a-z_]+)`", r[3])}
    assert len(named) >= 40, sorted(named)
    assert named - set(default_probes()) == set(), "probes the contract names that the doctor does not have"


# -- doctor.md, "Every option": the table lists every option of rft doctor --help, and no other -----------------------
def test_the_doctor_page_lists_every_option_of_the_command() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    flags = {o for a in parser._actions for o in a.option_strings if o.startswith("--") and o != "--help"}
    text = (DOCS / "doctor.md").read_text(encoding="utf-8")
    table = text.split("{ #every-option }")[1].split("\n\n")[1].splitlines()[2:]
    listed = {f for row in table for f in re.findall(r"`(--[a-z-]+)`", row.split("|")[1])}
    assert listed == flags
    synopsis = text[:text.index("{ #every-option }")].rsplit("```bash", 1)[1].split("```")[0]
    assert set(re.findall(r"(--[a-z-]+)", synopsis)) == flags


# -- graders.md, "Set F1 hides repeated writes": the multiset F1 counts a repeat, the set F1 does not -------------
def test_the_multiset_f1_lowers_a_repeated_write_that_the_set_f1_keeps_at_the_gold() -> None:
    from rft_sdk import rewards

    namespace: dict[str, Any] = {"__name__": "docs"}
    exec(compile(_block("graders.md", "def multiset_f1"), "docs/graders.md", "exec"), namespace)  # its asserts run
    multiset_f1, gold, queued = namespace["multiset_f1"], namespace["gold"], namespace["queued"]
    assert rewards.precision_recall_f1(queued, gold).f1 == 1.0  # the set F1: the repeat is invisible
    for n in range(1, 6):  # the gold plus one repeated write of n: 2n / (2n + 1), below the gold's 1.0
        writes = [("c", k) for k in range(n)]
        assert multiset_f1([*writes, writes[0]], writes) == pytest.approx(2 * n / (2 * n + 1))
    assert multiset_f1([], []) == 1.0 and multiset_f1([("x",)], [("y",)]) == 0.0


def test_precision_recall_f1_edge_cases_as_the_table_says() -> None:
    """graders.md, building blocks: nothing predicted against a non-empty set is F1 0 (an answer ``none``)."""
    from rft_sdk.rewards import precision_recall_f1
    none = precision_recall_f1([], ["LP-1", "LP-2"])
    assert (none.precision, none.recall, none.f1) == (1.0, 0.0, 0.0)
    extra = precision_recall_f1(["LP-1"], [])
    assert (extra.precision, extra.recall, extra.f1) == (0.0, 1.0, 0.0)
    assert precision_recall_f1([], []).f1 == 1.0


def test_every_signature_of_the_building_blocks_table_is_the_codes() -> None:
    """graders.md, building blocks: the first column of each row is the function's signature as declared (names,
    order, keyword-only after ``*``, defaults), so the table cannot drift from ``rft_sdk.rewards``."""
    import ast
    import inspect

    from rft_sdk import rewards

    text = (DOCS / "graders.md").read_text(encoding="utf-8").split("## Building blocks")[1].split("\n\n```")[0]
    rows = re.findall(r"^\| `(?:await )?(\w+)\((.*?)\)(?: -> [^`]+)?` \|", text, flags=re.M)
    assert {name for name, _ in rows} == {"weighted_sum", "gate", "budget_penalty", "apply_penalty",
                                          "precision_recall_f1", "numeric_match", "over_budget", "returned", "same",
                                          "LLMJudge", "gated_judge"}
    for name, params in rows:
        args = ast.parse(f"def f({params}): pass").body[0].args  # type: ignore[attr-defined]
        positional = [(a.arg, "positional") for a in args.args]
        defaults = [None] * (len(args.args) - len(args.defaults)) + [ast.literal_eval(d) for d in args.defaults]
        documented = [(n, k, d) for (n, k), d in zip(positional, defaults)]
        documented += [(a.arg, "keyword", None if d is None else ast.literal_eval(d))
                       for a, d in zip(args.kwonlyargs, args.kw_defaults)]
        target = getattr(rewards, name)
        actual = [(p.name, "keyword" if p.kind is p.KEYWORD_ONLY else "positional",
                   None if p.default is inspect.Parameter.empty else p.default)
                  for p in inspect.signature(target).parameters.values()]
        assert documented == actual, name


def test_the_decorator_signatures_the_pages_write_are_the_codes() -> None:
    """index.md's decorator options and graders.md's at-a-glance row for ``grader`` are the signatures as declared
    (names, positional-only ``fn``, keyword-only after ``*``, defaults), for the standalone and the server's
    decorators alike."""
    import inspect

    import rft_sdk

    def plain(fn) -> str:  # type: ignore[no-untyped-def]
        params = [p.replace(annotation=inspect.Parameter.empty) for p in inspect.signature(fn).parameters.values()
                  if p.name != "self"]
        return f"{fn.__name__}{inspect.Signature(params)}"

    index = " ".join((DOCS / "index.md").read_text(encoding="utf-8").split())
    graders = (DOCS / "graders.md").read_text(encoding="utf-8")
    for fn in (rft_sdk.tool, rft_sdk.grader, rft_sdk.ToolServer.tool, rft_sdk.ToolServer.grader):
        assert f"`{plain(fn)}`" in index, plain(fn)
    assert f"| `{plain(rft_sdk.grader)}` |" in graders
