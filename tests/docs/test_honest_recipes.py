"""Every block of ``docs/honest-graders.md`` runs as written, against a real server through ``TestClient``: each
recipe pays the gold 1.0 and each wrong outcome the page names less. The recipes' helpers (``over_budget``,
``returned``, ``same``) are ``rft_sdk.rewards``' own, imported by the page's first block, never a copy on the page,
and graders.md's evidence grader imports the same ``returned``; the set recipe's warning
(``precision_recall_f1(set(), set())`` is 1.0, so a lenient parser pays nonsense in full) holds;
the ordered-list table is what the grader pays, and the doctor's own ``reversed_ranking`` reply and severity rule
pass ``c = 0.4`` (and 0.5, on the line) and fail ``c = 0.6``; the doctor's ``read_time`` reply scores 0 on the time-zone recipe; the budget
recipe's prompt states ``max_tool_calls`` as ``rft validate`` reads it; the ignored note is free text to the doctor;
the state recipes compare a stored float within half a unit of the stated precision (``same``), not with ``==``;
the zoned time refuses the same instant in another zone; the set recipe's evidence (depot and day) keeps another
day's read of the same depot at 0; the database recipe forgives a note on the gold's own row only; the correction
recipe refuses what ``superseded_request`` plays; the seeded-state recipe grades a rollout whose calls were all refused
as the seed, as it grades one that only read; the time-zone helper reads a zone that is none as no moment (``None``),
whichever exception ``ZoneInfo`` raises for it; the money and set recipes' patterns (``re.ASCII``) refuse digits of
another script, which an ASCII-blind digit class and ``int()`` would otherwise read."""

from __future__ import annotations

import ast
import re
import sqlite3
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from rft_sdk import GradingContext, Rollout, SQLiteDatabase, ToolError, ToolServer, rewards
from rft_sdk.doctor._dataset_probes import described_prose
from rft_sdk.doctor._severity import Outcome, judge_probe
from rft_sdk.doctor._shifted_times import read_times
from rft_sdk.doctor._tied_order import reversed_ranking
from rft_sdk.rewards import over_budget, precision_recall_f1, returned, same
from rft_sdk.testing import TestClient

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGE = "honest-graders.md"
HELPERS = "from rft_sdk.rewards import over_budget, returned, same"
RECIPES = ["async def end_state(", "def booked(", "def rota_set(", "def invoice_total(", "def kick_off(", "def kick_off_zoned(",
           "def due_buses(", "def podium(", "def shelf(", "def delivery_booked(", "def delivery_booked_notes_apart(",
           "async def lent(", "def stay_booked("]


def _blocks(page: str = PAGE) -> list[str]:
    text = (DOCS / page).read_text(encoding="utf-8")
    return [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", text, flags=re.S)]


def _block(marker: str, page: str = PAGE) -> str:
    found = [b for b in _blocks(page) if marker in b]
    assert len(found) == 1, f"docs/{page}: {len(found)} python blocks hold {marker!r}"
    return found[0]


def _serve(server: ToolServer, *markers: str) -> dict[str, Any]:
    """The helpers block (the package import), then the recipes' blocks in order, run in one namespace holding
    ``server``."""
    namespace: dict[str, Any] = {"server": server, "__name__": "docs"}
    for block in (_block(HELPERS), *(_block(m) for m in markers)):
        exec(compile(block, f"docs/{PAGE}", "exec"), namespace)
    return namespace


def _score(client: TestClient, item: dict[str, Any], calls: list[tuple[str, dict[str, Any]]], reply: str,
           grader: str | None = None) -> float:
    """One rollout: ``calls`` as the model sent them (refused ones too), then the grade of ``reply``."""
    trace = client.new_trace_id()
    for name, args in calls:
        client.call(name, trace_id=trace, item=item, arguments=args)
    return client.grade(trace, reply, item=item, grader=grader).score


def test_every_block_of_the_page_is_one_recipe_this_file_runs() -> None:
    markers = [HELPERS, *RECIPES]
    blocks = _blocks()
    assert len(blocks) == len(markers)
    assert all(sum(m in b for m in markers) == 1 for b in blocks)  # each block is one recipe (or the helpers)


def test_the_helpers_are_the_packages_and_no_page_defines_its_own() -> None:
    """The helpers block is the import alone, so every recipe runs with ``rft_sdk.rewards``' functions; no block of
    this page or of graders.md defines a helper of the same name (a copy would be what the recipes test), and
    graders.md's evidence grader gets ``returned`` from the package too."""
    helpers = ast.parse(_block(HELPERS))
    assert len(helpers.body) == 1 and isinstance(helpers.body[0], ast.ImportFrom)
    namespace = _serve(ToolServer(auth_env_var=None))
    assert (namespace["over_budget"], namespace["returned"], namespace["same"]) == (over_budget, returned, same)
    for page in (PAGE, "graders.md"):
        for block in _blocks(page):
            nodes = list(ast.walk(ast.parse(block)))
            defined = {n.name for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            defined |= {t.id for n in nodes if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
            assert not defined & {"over_budget", "returned", "same"}, (page, defined)
    graders: dict[str, Any] = {"server": ToolServer(auth_env_var=None), "GradingContext": GradingContext,
                               "__name__": "docs"}
    exec(compile(_block("def availability(", "graders.md"), "docs/graders.md", "exec"), graders)
    assert graders["returned"] is returned


# -- (a) end state in a rollout database ------------------------------------------------------------------------------
def _library(tmp_path: Path) -> ToolServer:
    def setup(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE books (id TEXT PRIMARY KEY, title TEXT, copies INTEGER)")
        conn.executemany("INSERT INTO books VALUES (?, ?, ?)",
                         [("b1", "Dune", 1), ("b2", "Emma", 1), ("b3", "Ulysses", 2), ("b4", "Dune", 1)])
        conn.execute("CREATE TABLE loans (book_id TEXT, member TEXT, PRIMARY KEY (book_id, member))")

    server = ToolServer(db=SQLiteDatabase(setup=setup, dir=str(tmp_path)), auth_env_var=None)

    @server.tool(writes=False)
    def get_book(book_id: str, *, rollout: Rollout) -> dict[str, Any]:
        """A book by id.

        Args:
            book_id: e.g. "b1".
        """
        row = rollout.db.execute("SELECT id, title, copies FROM books WHERE id = ?", (book_id,)).fetchone()
        if row is None:
            raise ToolError(f"no book {book_id}")
        return {"id": row[0], "title": row[1], "copies": row[2]}

    @server.tool(writes=True)
    def lend_book(book_id: str, member: str, *, rollout: Rollout) -> str:
        """Lend a copy.

        Args:
            book_id: e.g. "b1".
            member: e.g. "ada".
        """
        if rollout.db.execute("UPDATE books SET copies = copies - 1 WHERE id = ? AND copies > 0",
                              (book_id,)).rowcount != 1:
            raise ToolError(f"no copy of {book_id} left")
        rollout.db.execute("INSERT INTO loans VALUES (?, ?)", (book_id, member))
        return "lent"

    _serve(server, "async def end_state(")
    return server


def test_a_the_database_end_state_recipe(tmp_path: Path) -> None:
    server = _library(tmp_path)
    lend = [("get_book", {"book_id": "b1"}), ("lend_book", {"book_id": "b1", "member": "ada"})]
    item = {"max_tool_calls": 4, "actions": [{"name": n, "arguments": a} for n, a in lend],
            "alternatives": [{"actions": [{"name": "lend_book", "arguments": {"book_id": "b4", "member": "ada"}}]}]}
    with TestClient(server) as client:
        assert _score(client, item, lend, "Lent.") == 1.0
        assert _score(client, item, [("lend_book", {"book_id": "b4", "member": "ada"})], "Lent.") == 1.0  # alternative
        assert _score(client, item, [("lend_book", {"book_id": "b2", "member": "ada"})], "Lent.") == 0.0  # wrong book
        assert _score(client, item, [*lend, ("lend_book", {"book_id": "b3", "member": "bob"})], "Lent.") == 0.0
        assert _score(client, item, [], "Lent.") == 0.0                                                   # nothing
        assert _score(client, item, [("get_book", {"book_id": "b1"})] * 3 + lend[1:], "Lent.") == 1.0     # 4 calls
        assert _score(client, item, [("get_book", {"book_id": "b1"})] * 4 + lend[1:], "Lent.") == 0.0     # over


# -- (b) end state in rollout.state -----------------------------------------------------------------------------------
def _rooms() -> ToolServer:
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=True)
    def book_room(slot: str, name: str, party: int, deposit: float, *, rollout: Rollout) -> str:
        """Book a slot.

        Args:
            slot: e.g. "SAT-10".
            name: the guest.
            party: how many.
            deposit: the deposit in pounds, to the penny.
        """
        rollout.state.setdefault("bookings", {})[slot] = {"name": name, "party": party, "deposit": deposit}
        return "booked"

    @server.tool(writes=True)
    def cancel(slot: str, *, rollout: Rollout) -> str:
        """Cancel a booking.

        Args:
            slot: e.g. "SAT-10".
        """
        rollout.state.get("bookings", {}).pop(slot, None)
        return "cancelled"

    _serve(server, "def booked(")
    return server


def test_b_the_state_end_state_recipe() -> None:
    item = {"max_tool_calls": 4, "expected_bookings": {"SAT-10": {"name": "Ada", "party": 2, "deposit": 12.3}}}
    right = ("book_room", {"slot": "SAT-10", "name": "Ada", "party": "2", "deposit": 12.3})  # "2" as sent: stored 2
    assert 12.2 + 0.1 != 12.3  # what exact == on the stored float would refuse
    with TestClient(_rooms()) as client:
        assert _score(client, item, [right], "Booked.") == 1.0
        assert _score(client, item, [("book_room", {"slot": "SAT-11", "name": "Ada", "party": 2, "deposit": 12.3}), (
            "cancel", {"slot": "SAT-11"}), right], "Booked.") == 1.0                          # undone, then right
        for deposit in (12.2 + 0.1, 12.304, "12.30"):                                        # within half a penny
            assert _score(client, item, [("book_room", {**right[1], "deposit": deposit})], "Booked.") == 1.0, deposit
        for deposit in (12.31, 12.29, 12.33, 13.3):                                          # a penny off, or more
            assert _score(client, item, [("book_room", {**right[1], "deposit": deposit})], "Booked.") == 0.0, deposit
        assert _score(client, item, [("book_room", {**right[1], "slot": "SAT-11"})], "Booked.") == 0.0
        assert _score(client, item, [right, ("book_room", {**right[1], "slot": "SUN-10"})], "Booked.") == 0.0
        assert _score(client, item, [("book_room", {**right[1], "party": 3})], "Booked.") == 0.0
        assert _score(client, item, [], "Booked.") == 0.0
        refused = ("book_room", {"slot": "SAT-10"})                                           # 422: arguments missing
        assert _score(client, item, [refused] * 3 + [right], "Booked.") == 1.0                # 4 calls: the budget
        assert _score(client, item, [refused] * 4 + [right], "Booked.") == 0.0                # refused calls count too


ROTA = {"MON": "Ann", "TUE": "Bo"}


def _rota() -> ToolServer:
    server = ToolServer(auth_env_var=None)

    def seeded(rollout: Rollout) -> dict[str, str]:
        if "rota" not in rollout.state:                             # the first touch: copy the item's rota
            rollout.state["rota"] = dict(rollout.item["rota"])
        return rollout.state["rota"]

    @server.tool(writes=False)
    def get_rota(rollout: Rollout) -> dict[str, str]:
        """The rota: who works each day."""
        return seeded(rollout)

    @server.tool(writes=True)
    def assign(day: str, name: str, rollout: Rollout) -> str:
        """Put someone on a day.

        Args:
            day: e.g. "MON".
            name: e.g. "Ann".
        """
        rota = seeded(rollout)
        if day not in rota:
            raise ToolError(f"no day {day}")
        rota[day] = name
        return "assigned"

    _serve(server, "def rota_set(")
    return server


def test_b_a_seeded_state_falls_back_to_the_seed() -> None:
    change = {"rota": ROTA, "expected_rota": {"MON": "Cy", "TUE": "Bo"}, "max_tool_calls": 4}
    keep = {"rota": ROTA, "expected_rota": ROTA, "max_tool_calls": 4}       # a request turned down: nothing changes
    refused = ("assign", {"day": "SUN", "name": "Cy"})                      # a ToolError: rolled back, seeding too
    with TestClient(_rota()) as client:
        trace = client.new_trace_id()
        assert not client.call("assign", trace_id=trace, item=change, arguments=refused[1]).ok
        assert client.state(trace) == {}                                    # what the grader gets as ctx.state
        assert _score(client, change, [("get_rota", {}), ("assign", {"day": "MON", "name": "Cy"})], "Done.") == 1.0
        for calls in ([], [refused], [("get_rota", {})], [("assign", {"day": "TUE", "name": "Cy"})]):
            assert _score(client, change, calls, "Done.") == 0.0, calls
        for calls in ([], [refused], [("get_rota", {})]):                   # no call, only refused ones, only reads:
            assert _score(client, keep, calls, "Sorry, no.") == 1.0, calls  # each ends as the seed


def test_same_compares_exactly_but_a_tolerated_number_within_its_tolerance() -> None:
    """What the page says of ``same``, on the function the recipes get (the package's)."""
    same = _serve(ToolServer(auth_env_var=None), "def booked(")["same"]
    assert same is rewards.same
    tol = {"deposit": 0.005}
    assert same({"a": {"deposit": 12.304, "n": [1, "x"]}}, {"a": {"deposit": 12.3, "n": [1, "x"]}}, tol)
    assert not same({"a": {"deposit": 12.3, "n": [1, "x"]}}, {"a": {"deposit": 12.3, "n": ["x", 1]}}, tol)
    assert not same({"a": {"deposit": 12.3}}, {"a": {"deposit": 12.3, "n": 1}}, tol)          # a key missing
    assert not same({"a": {"deposit": 12.3, "n": 1}}, {"a": {"deposit": 12.3}}, tol)          # a key extra
    for wrong in (float("nan"), float("inf"), "12.3", True, None):
        assert not same({"deposit": wrong}, {"deposit": 12.3}, tol), wrong
    assert not same({"other": 12.304}, {"other": 12.3}, tol)                                   # not named: exact
    assert same({"other": 12.3}, {"other": 12.3}, {})



def test_same_on_one_number_and_a_value_exactly_half_a_unit_off() -> None:
    """(b): one number compared at its key's tolerance by naming the key (``field``), else exactly; the bound is
    inclusive where floats hold the difference exactly, and a decimal half-unit lands on either side; a margin of
    1e-9 above or below the tolerance decides the edge both ways; ``numeric_match`` bounds it the same way."""
    page = (DOCS / PAGE).read_text(encoding="utf-8")
    assert 'same(rate, 7.0, {"rate_pct": 0.005}, "rate_pct")' in page and "`0.04999999999999982`" in page
    assert same(7.004, 7.0, {"rate_pct": 0.005}, "rate_pct") and not same(7.004, 7.0, {"rate_pct": 0.005})
    assert not same(7.01, 7.0, {"rate_pct": 0.005}, "rate_pct")
    assert same(2.5, 2, {"x": 0.5}, "x") and same(1.5, 2, {"x": 0.5}, "x")            # equal to it: inclusive
    assert (abs(4.05 - 4.1), abs(4.15 - 4.1)) == (0.04999999999999982, 0.05000000000000071)
    assert same(4.05, 4.1, {"x": 0.05}, "x") and not same(4.15, 4.1, {"x": 0.05}, "x")  # either side of the edge
    assert same(4.05, 4.1, {"x": 0.05 + 1e-9}, "x") and same(4.15, 4.1, {"x": 0.05 + 1e-9}, "x")
    assert not same(4.05, 4.1, {"x": 0.05 - 1e-9}, "x") and not same(4.15, 4.1, {"x": 0.05 - 1e-9}, "x")
    for half in (0.05, 0.005):                # the margin holds for values under a million, both ways
        for want in (0.1, 4.1, 414.4, 99_999.9, 999_999.9):
            for got in (want - half, want + half):
                assert same(got, want, {"x": half + 1e-9}, "x") and not same(got, want, {"x": half - 1e-9}, "x")
    assert rewards.numeric_match(2.5, 2.0, abs_tol=0.5) == 1.0 and rewards.numeric_match(4.15, 4.1, abs_tol=0.05) == 0.0


# -- (c) a money answer with evidence of the read ---------------------------------------------------------------------
INVOICES = {"INV-7": {"id": "INV-7", "lines": [1000.00, 234.56]}, "INV-8": {"id": "INV-8", "lines": [1234.56]}}


def _invoices() -> ToolServer:
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def get_invoice(invoice_id: str) -> dict[str, Any]:
        """An invoice and its lines.

        Args:
            invoice_id: e.g. "INV-7".
        """
        if invoice_id not in INVOICES:
            raise ToolError(f"no invoice {invoice_id}")
        return INVOICES[invoice_id]

    _serve(server, "def invoice_total(")
    return server


@pytest.mark.parametrize(("read", "reply", "score"), [
    ("INV-7", "Lines 1,000.00 and 234.56.\nANSWER: £1,234.56", 1.0),
    ("INV-7", "ANSWER: £1234.56", 1.0),
    (None, "ANSWER: £1,234.56", 0.0),                      # no read
    ("INV-8", "ANSWER: £1,234.56", 0.0),                   # another invoice read
    ("INV-7", "ANSWER: £1,234.50", 0.0),
    ("INV-7", "ANSWER: £1,234.5", 0.0),
    ("INV-7", "ANSWER: 1,234.56", 0.0),
    ("INV-7", "ANSWER: £1,234.56\nANSWER: £1,235.56", 0.0),  # two answers that disagree
    ("INV-7", "ANSWER: £\uff11,\uff12\uff13\uff14.\uff15\uff16", 0.0),  # full-width digits: re.ASCII refuses them
    ("INV-7", "ANSWER: £\u0661\u0662\u0663\u0664.\u0665\u0666", 0.0),  # Arabic-Indic digits
])
def test_c_the_money_recipe(read: str | None, reply: str, score: float) -> None:
    item = {"invoice_id": "INV-7", "expected_pence": 123456, "max_tool_calls": 3}
    with TestClient(_invoices()) as client:
        calls = [("get_invoice", {"invoice_id": read})] if read else []
        assert _score(client, item, calls, reply) == score


# -- (d) a date and time in a time zone -------------------------------------------------------------------------------
MATCH = {"id": "M-4", "kick_off_utc": "2026-03-14T16:30:00Z"}


def _matches() -> ToolServer:
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def get_match(match_id: str) -> dict[str, Any]:
        """A match and its kick-off, in UTC.

        Args:
            match_id: e.g. "M-4".
        """
        return MATCH

    _serve(server, "def kick_off(", "def kick_off_zoned(")
    return server


def test_d_the_time_zone_recipe() -> None:
    item = {"time_zone": "Pacific/Auckland", "expected_utc": "2026-03-14T16:30:00+00:00", "max_tool_calls": 3}
    reference = "Kick-off is 16:30 UTC, which is 05:30 in Auckland.\nANSWER: 2026-03-15 05:30"
    read_time = read_times(reference, ['{"id":"M-4","kick_off_utc":"2026-03-14T16:30:00Z"}'])
    assert read_time is not None and read_time.endswith("ANSWER: 2026-03-14 16:30")  # the doctor's read_time reply
    read = [("get_match", {"match_id": "M-4"})]
    with TestClient(_matches()) as client:
        assert _score(client, item, read, reference) == 1.0
        for wrong in (read_time, "ANSWER: 2026-03-15 17:30", "ANSWER: 2026-03-14 05:30", "ANSWER: 2026-02-30 05:30",
                      "ANSWER: 5:30 am", "", "ANSWER: \uff12\uff10\uff12\uff16-03-15 05:30"):  # full-width year
            assert _score(client, item, read, wrong) == 0.0, wrong


def test_d_a_zone_that_is_none_is_no_moment() -> None:
    local_moment = _serve(ToolServer(auth_env_var=None), "def kick_off(")["local_moment"]
    assert local_moment("2026-03-15 05:30", "Pacific/Auckland") is not None
    for zone in ("Nowhere/City", "../etc/passwd", "", "Europe", "Europe/London/x", "Pacific/Auckland/", "x" * 300):
        assert local_moment("2026-03-15 05:30", zone) is None, zone           # never an exception, so never a 500
    item = {"time_zone": "Nowhere/City", "expected_utc": "2026-03-14T16:30:00+00:00", "max_tool_calls": 3}
    with TestClient(_matches()) as client:                                    # a mistyped item zone: the gold scores 0
        assert _score(client, item, [("get_match", {"match_id": "M-4"})], "ANSWER: 2026-03-15 05:30") == 0.0


def test_d_an_answer_that_names_its_zone() -> None:
    item = {"time_zone": "Pacific/Auckland", "expected_utc": "2026-03-14T16:30:00+00:00", "max_tool_calls": 3}
    reference = "Kick-off is 16:30 UTC, which is 05:30 in Auckland.\nANSWER: 2026-03-15 05:30 Pacific/Auckland"
    read_time = read_times(reference, ['{"id":"M-4","kick_off_utc":"2026-03-14T16:30:00Z"}'])
    assert read_time is not None and read_time.endswith("ANSWER: 2026-03-14 16:30 Pacific/Auckland")  # zone kept
    read = [("get_match", {"match_id": "M-4"})]
    with TestClient(_matches()) as client:
        assert _score(client, item, read, reference, grader="kick_off_zoned") == 1.0
        for wrong in (read_time, "ANSWER: 2026-03-14 16:30 UTC", "ANSWER: 2026-03-14 16:30 Etc/UTC",  # same instant
                      "ANSWER: 2026-03-15 05:30", "ANSWER: 2026-03-15 05:30 Australia/Sydney",
                      "ANSWER: 2026-03-15 17:30 Pacific/Auckland", ""):
            assert _score(client, item, read, wrong, grader="kick_off_zoned") == 0.0, wrong


# -- (e) a set answer by F1 -------------------------------------------------------------------------------------------
DUE = {("D3", "2026-05-04"): ["B-12", "B-40"], ("D3", "2026-05-05"): ["B-12", "B-40", "B-77"], ("D5", "2026-05-04"): []}


def _depots() -> tuple[ToolServer, dict[str, Any]]:
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def list_due(depot: str, day: str) -> dict[str, Any]:
        """The buses due for service at a depot on a day.

        Args:
            depot: e.g. "D3".
            day: e.g. "2026-05-04".
        """
        return {"depot": depot, "day": day, "due": DUE.get((depot, day), [])}

    return server, _serve(server, "def due_buses(")


def test_e_the_set_recipe_and_its_warning() -> None:
    server, ns = _depots()
    d3 = {"depot": "D3", "day": "2026-05-04", "expected_due": ["B-12", "B-40"], "max_tool_calls": 3}
    d5 = {"depot": "D5", "day": "2026-05-04", "expected_due": [], "max_tool_calls": 3}

    def read(depot: str, day: str = "2026-05-04") -> list[tuple[str, dict[str, Any]]]:
        return [("list_due", {"depot": depot, "day": day})]

    with TestClient(server) as client:
        assert _score(client, d3, read("D3"), "ANSWER: B-12, B-40") == 1.0
        assert _score(client, d5, read("D5"), "Nothing is due.\nANSWER: none") == 1.0
        assert _score(client, d5, read("D5"), "ANSWER: None.") == 1.0
        assert _score(client, d3, read("D3"), "ANSWER: none") == 0.0
        assert _score(client, d5, read("D5"), "ANSWER: I could not tell") == 0.0      # no parse: 0, not F1 of {}
        assert _score(client, d3, read("D3"), "ANSWER: B-\uff11\uff12, B-40") == 0.0  # a full-width digit: no id
        assert _score(client, d5, [], "ANSWER: none") == 0.0                          # no read
        assert _score(client, d3, read("D5"), "ANSWER: B-12, B-40") == 0.0            # another depot read
        # cross_item_replay's donor: another item's read of the same depot on another day, and its answer, whose
        # set overlaps this one's (F1 0.8: reward); the day in the evidence keeps it at 0
        donor = "ANSWER: B-12, B-40, B-77"
        assert precision_recall_f1({"B-12", "B-40", "B-77"}, d3["expected_due"]).f1 == 0.8
        assert _score(client, d3, read("D3", "2026-05-05"), donor) == 0.0
        assert round(_score(client, d3, read("D3"), "ANSWER: B-12"), 3) == 0.667
        assert _score(client, d3, read("D3"), "ANSWER: B-12, B-40, B-77") == 0.8
    # the warning: both sets empty is F1 1.0, so a lenient parser pays nonsense in full where the answer is none
    assert precision_recall_f1(set(), set()).f1 == 1.0
    bus = ns["BUS"]
    body = "I could not tell"
    lenient = {p.strip() for p in body.split(",") if bus.fullmatch(p.strip())}
    assert precision_recall_f1(lenient, d5["expected_due"]).f1 == 1.0
    assert ns["bus_set"](body) is None


# -- (f) an ordered list ----------------------------------------------------------------------------------------------
def _regatta() -> tuple[ToolServer, dict[str, Any]]:
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def get_results(race: str) -> dict[str, Any]:
        """A race's finishing times.

        Args:
            race: e.g. "R1".
        """
        return {"race": race, "times": {"Kestrel": 3601, "Osprey": 3622, "Merlin": 3650}}

    return server, _serve(server, "def podium(")


ORDER_ITEM = {"messages": [{"role": "user", "content": "Rank the boats of race R1, fastest first. End with ANSWER: "
                                                      "A > B > C."}],
              "expected_order": ["Kestrel", "Osprey", "Merlin"], "max_tool_calls": 3,
              "reference_answer": "Kestrel 3601 s, Osprey 3622 s, Merlin 3650 s.\nANSWER: Kestrel > Osprey > Merlin"}


def test_f_the_ordered_list_recipe_pays_what_its_table_says() -> None:
    text = (DOCS / PAGE).read_text(encoding="utf-8").split("## (f)")[1].split("## (g)")[0]
    rows = re.findall(r"^\| `([^`]+)`[^|]*\| (yes|no) \| ([\d.]+) \| ([\d.]+) \|$", text, flags=re.M)
    assert len(rows) == 6
    server, _ = _regatta()
    read = [("get_results", {"race": "R1"})]
    with TestClient(server) as client:
        for line, exact, f1, score in rows:
            got = line.split(" > ")
            assert (got == ORDER_ITEM["expected_order"]) == (exact == "yes")
            assert round(precision_recall_f1(got, ORDER_ITEM["expected_order"]).f1, 3) == round(float(f1), 3)
            assert round(_score(client, ORDER_ITEM, read, f"ANSWER: {line}"), 2) == float(score), line
        assert _score(client, ORDER_ITEM, read, "ANSWER: Kestrel >  > Merlin") == 0.0


def test_f_under_half_is_safe_on_the_doctors_reversed_ranking_and_more_is_reward() -> None:
    server, ns = _regatta()
    reply = reversed_ranking(ORDER_ITEM, SimpleNamespace(answer_field="reference_answer"))  # type: ignore[arg-type]
    assert reply == ["Kestrel 3601 s, Osprey 3622 s, Merlin 3650 s.\nANSWER: Merlin > Osprey > Kestrel"]
    with TestClient(server) as client:
        paid = _score(client, ORDER_ITEM, [("get_results", {"race": "R1"})], reply[0])
    assert paid == ns["OUT_OF_ORDER"] == 0.4

    def verdict(score: float) -> str:
        return judge_probe("hack", [Outcome(item=0, score=score, calls=1)], [1.0], pass_threshold=1.0).verdict

    assert verdict(paid) == "pass" and verdict(0.5) == "pass" and verdict(0.6) == "fail"  # 0.5: on the line


# -- (g) a budget stated in the prompt --------------------------------------------------------------------------------
def _shelves() -> tuple[ToolServer, dict[str, Any]]:
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def get_book(book_id: str) -> dict[str, Any]:
        """A book and its shelf.

        Args:
            book_id: e.g. "b3".
        """
        return {"id": book_id, "shelf": "S-4"}

    @server.grader
    def counts_ok_calls(ctx: GradingContext) -> float:  # the wrong count: successful calls only
        if sum(c.ok for c in ctx.trajectory) > ctx.item["max_tool_calls"]:
            return 0.0
        return 1.0 if ns["answer_line"](ctx.output_text) == ctx.item["expected_shelf"] else 0.0

    ns = _serve(server, "def shelf(")
    return server, ns


def test_g_the_budget_recipe_counts_every_recorded_call() -> None:
    from rft_sdk._validation._stated_budget import stated_budgets

    item = {"messages": [{"role": "user", "content": "Which shelf holds book b3? You may make at most 3 tool calls; "
                                                     "a refused call counts too. End with ANSWER: shelf."}],
            "book_id": "b3", "expected_shelf": "S-4", "max_tool_calls": 3}
    assert stated_budgets(item) == [item["max_tool_calls"]]  # rft validate reads the same number: no warning
    server, _ = _shelves()
    read = ("get_book", {"book_id": "b3"})
    refused = ("get_book", {"book_id": "b3", "rft_doctor_unknown_argument": "x"})  # 422, as refused_spam sends
    with TestClient(server) as client:
        assert _score(client, item, [read], "ANSWER: S-4", grader="shelf") == 1.0
        assert _score(client, item, [read] * 3, "ANSWER: S-4", grader="shelf") == 1.0
        assert _score(client, item, [read] * 4, "ANSWER: S-4", grader="shelf") == 0.0
        assert _score(client, item, [refused] * 3 + [read], "ANSWER: S-4", grader="shelf") == 0.0
        assert _score(client, item, [refused] * 3 + [read], "ANSWER: S-4", grader="counts_ok_calls") == 1.0
        assert _score(client, item, [], "ANSWER: S-4", grader="shelf") == 0.0
        assert _score(client, item, [read], "ANSWER: S-5", grader="shelf") == 0.0


# -- (h) a free-text note the grader ignores --------------------------------------------------------------------------
def _deliveries() -> ToolServer:
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=True)
    def book_delivery(order_id: str, slot: str, note: str = "", *, rollout: Rollout) -> str:
        """Book a delivery slot for an order.

        Args:
            order_id: e.g. "O-7".
            slot: e.g. "SAT-AM".
            note: Optional note for the driver.
        """
        rollout.state.setdefault("deliveries", {})[order_id] = {"slot": slot, "note": note}
        return "booked"

    _serve(server, "def delivery_booked(")
    return server


def test_h_the_ignored_note_recipe() -> None:
    server = _deliveries()
    assert ("book_delivery", "note") in described_prose([{"tools": server.dataset_tools()}])  # free text to the doctor
    item = {"expected_deliveries": {"O-7": {"slot": "SAT-AM"}}, "max_tool_calls": 3}
    book = {"order_id": "O-7", "slot": "SAT-AM"}
    with TestClient(server) as client:
        for note in ({"note": "leave it with the neighbour at number 12"}, {"note": "ring twice"}, {"note": None}, {}):
            assert _score(client, item, [("book_delivery", {**book, **note})], "Booked.") == 1.0
        assert _score(client, item, [("book_delivery", {**book, "slot": "SUN-AM", "note": "as requested by the "
                                                                                           "customer today"})],
                      "Booked.") == 0.0
        assert _score(client, item, [("book_delivery", book), ("book_delivery", {**book, "order_id": "O-8"})],
                      "Booked.") == 0.0
        assert _score(client, item, [], "Booked.") == 0.0



def _deliveries_notes_apart() -> ToolServer:
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=True)
    def book_delivery(order_id: str, slot: str, note: str = "", *, rollout: Rollout) -> str:
        """Book a delivery slot for an order.

        Args:
            order_id: e.g. "O-7".
            slot: e.g. "SAT-AM".
            note: Optional note for the driver.
        """
        rollout.state.setdefault("deliveries", {})[order_id] = {"slot": slot}
        if note:
            rollout.state.setdefault("notes", []).append({"order_id": order_id, "text": note})
        return "booked"

    @server.tool(writes=True)
    def add_note(order_id: str, text: str, *, rollout: Rollout) -> str:
        """Add a note for an order's driver.

        Args:
            order_id: e.g. "O-7".
            text: the note.
        """
        rollout.state.setdefault("notes", []).append({"order_id": order_id, "text": text})
        return "noted"

    _serve(server, "def delivery_booked_notes_apart(")
    return server


def test_h_a_note_kept_apart_from_the_record() -> None:
    server = _deliveries_notes_apart()
    item = {"expected_deliveries": {"O-7": {"slot": "SAT-AM"}}, "max_tool_calls": 3}
    book = {"order_id": "O-7", "slot": "SAT-AM"}
    with TestClient(server) as client:
        for note in ({"note": "leave it with the neighbour at number 12"}, {}):
            assert _score(client, item, [("book_delivery", {**book, **note})], "Booked.",
                          grader="delivery_booked_notes_apart") == 1.0
        assert _score(client, item, [("book_delivery", book), ("add_note", {"order_id": "O-7", "text": "ring twice"})],
                      "Booked.", grader="delivery_booked_notes_apart") == 1.0              # own order, a second note
        assert _score(client, item, [("book_delivery", book), ("add_note", {"order_id": "O-8", "text": "ring twice"})],
                      "Booked.", grader="delivery_booked_notes_apart") == 0.0              # another order's note alone
        assert _score(client, item, [("book_delivery", {**book, "slot": "SUN-AM"})], "Booked.",
                      grader="delivery_booked_notes_apart") == 0.0


# -- (i) a database end state with a free-text column ignored ---------------------------------------------------------
def _loans(tmp_path: Path) -> ToolServer:
    def setup(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE books (id TEXT PRIMARY KEY, copies INTEGER)")
        conn.executemany("INSERT INTO books VALUES (?, ?)", [("b1", 1), ("b2", 1), ("b3", 2)])
        conn.execute("CREATE TABLE loans (book_id TEXT, member TEXT, note TEXT, PRIMARY KEY (book_id, member))")
        conn.execute("INSERT INTO loans VALUES ('b3', 'bob', '')")

    server = ToolServer(db=SQLiteDatabase(setup=setup, dir=str(tmp_path)), auth_env_var=None)

    @server.tool(writes=True)
    def lend_book(book_id: str, member: str, note: str = "", *, rollout: Rollout) -> str:
        """Lend a copy.

        Args:
            book_id: e.g. "b1".
            member: e.g. "ada".
            note: Optional note for the loan.
        """
        if rollout.db.execute("UPDATE books SET copies = copies - 1 WHERE id = ? AND copies > 0",
                              (book_id,)).rowcount != 1:
            raise ToolError(f"no copy of {book_id} left")
        rollout.db.execute("INSERT INTO loans VALUES (?, ?, ?)", (book_id, member, note))
        return "lent"

    @server.tool(writes=True)
    def edit_note(book_id: str, member: str, note: str, *, rollout: Rollout) -> str:
        """Change a loan's note.

        Args:
            book_id: e.g. "b1".
            member: e.g. "ada".
            note: the new note.
        """
        rollout.db.execute("UPDATE loans SET note = ? WHERE book_id = ? AND member = ?", (note, book_id, member))
        return "noted"

    _serve(server, "async def lent(")
    return server


def test_i_the_database_recipe_that_ignores_a_note(tmp_path: Path) -> None:
    from rft_sdk.doctor._excuse import EXCUSE, text_slot

    server = _loans(tmp_path)
    gold = {"name": "lend_book", "arguments": {"book_id": "b1", "member": "ada"}}    # the gold passes no note
    item = {"actions": [gold], "max_tool_calls": 3, "tools": server.dataset_tools()}
    assert text_slot(item, gold) == "note"       # where excused_wrong_outcome writes its excuse
    lend = ("lend_book", gold["arguments"])
    with TestClient(server) as client:
        assert _score(client, item, [lend], "Lent.") == 1.0
        assert _score(client, item, [("lend_book", {**gold["arguments"], "note": "back by Friday please"})],
                      "Lent.") == 1.0                                                      # a note of its own
        assert _score(client, item, [lend, ("edit_note", {"book_id": "b1", "member": "ada", "note": "x"})],
                      "Lent.") == 1.0                                                      # own row's note edited
        assert _score(client, item, [("lend_book", {"book_id": "b2", "member": "ada"})], "Lent.") == 0.0
        assert _score(client, item, [("lend_book", {"book_id": "b2", "member": "ada", "note": EXCUSE})],
                      "Lent.") == 0.0                                                      # excused wrong outcome
        assert _score(client, item, [lend, ("edit_note", {"book_id": "b3", "member": "bob", "note": "x"})],
                      "Lent.") == 0.0                                                      # another loan's note
        assert _score(client, item, [lend, ("lend_book", {"book_id": "b3", "member": "ada"})], "Lent.") == 0.0
        assert _score(client, item, [], "Lent.") == 0.0


# -- (j) a request corrected in a later turn --------------------------------------------------------------------------
def _kennel() -> ToolServer:
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=True)
    def book_run(run_id: str, dog: str, check_in: str, check_out: str, *, rollout: Rollout) -> str:
        """Book a run for a dog.

        Args:
            run_id: e.g. "K-2".
            dog: the dog's name.
            check_in: YYYY-MM-DD.
            check_out: YYYY-MM-DD.
        """
        rollout.state.setdefault("stays", {})[run_id] = {"dog": dog, "check_in": check_in, "check_out": check_out}
        return "booked"

    _serve(server, "def stay_booked(")
    return server


def test_j_the_correction_recipe_refuses_the_withdrawn_request() -> None:
    from rft_sdk.doctor._superseded import SupersededRequest

    page = (DOCS / PAGE).read_text(encoding="utf-8").split("## (j)")[1]
    said = re.findall(r'"((?:Please book|Actually)[^"]*)"', page)
    assert len(said) == 2
    gold = {"run_id": "K-2", "dog": "Biscuit", "check_in": "2026-04-15", "check_out": "2026-04-18"}
    item = {"messages": [{"role": "user", "content": said[0]},
                         {"role": "assistant", "content": "K-2 is free then. Shall I book it?"},
                         {"role": "user", "content": said[1]}],
            "actions": [{"name": "book_run", "arguments": gold}],
            "reference_answer": "Booked: K-2 for Biscuit, 2026-04-15 to 2026-04-18.", "max_tool_calls": 3,
            "expected_stays": {"K-2": {k: v for k, v in gold.items() if k != "run_id"}}}
    assert SupersededRequest().swap(item) == ("2026-04-15", "2026-04-13")   # what superseded_request plays
    with TestClient(_kennel()) as client:
        assert _score(client, item, [("book_run", gold)], "Booked.") == 1.0
        assert _score(client, item, [("book_run", {**gold, "check_in": "2026-04-13"})], "Booked.") == 0.0
        assert _score(client, item, [("book_run", {**gold, "run_id": "K-3"})], "Booked.") == 0.0
        assert _score(client, item, [], "Booked.") == 0.0
