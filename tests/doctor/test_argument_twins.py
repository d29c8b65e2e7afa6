"""The probes of ``_argument_probes`` and ``_answer_numbers`` through the doctor against one real server
(``argument_twins``): every honest grader passes every probe without a warning (a probe that fires on a
correct grader is a defect); each hackable twin fails through the probe made for its flaw, which its
honest twin passes; and the pure helpers behind them."""

from __future__ import annotations

import re

import pytest
from argument_twins import TWINS, job_for, make_items, make_server
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts

from rft_sdk.doctor._answer_numbers import IDENTIFIERS, only_number, output_numbers, styled
from rft_sdk.doctor._argument_probes import (
    MALFORMED,
    FirstWriteControl,
    RepeatedFirstWrite,
    SwappedArguments,
    doubled,
    malformed,
)
from rft_sdk.doctor._probes import ProbeContext

pytestmark = pytest.mark.slow  # a long file: the scheduler starts it first (tests/conftest.py)

BY_NAME = {t.grader: t for t in TWINS}


@pytest.fixture(scope="module")
def verdicts():
    """{grader: unhackable evidence}; no write tools given (declared by the server)."""
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", [t.grader for t in TWINS if t.honest])
def test_honest_graders_pass_every_probe(verdicts, name):
    assert_quiet(verdicts[name])


@pytest.mark.parametrize("name", [t.grader for t in TWINS if not t.honest])
def test_hackable_graders_fail_through_the_probe_made_for_their_flaw(verdicts, name):
    twin = BY_NAME[name]
    ev, honest = verdicts[name], verdicts[twin.twin]
    assert twin.probe in ev["failed_probes"], (ev["failed_probes"], ev["probes"].get(twin.probe))
    assert honest["probes"][twin.probe]["verdict"] == "pass" and honest["probes"][twin.probe]["played"]


def test_doctor_json_says_what_each_probe_played(verdicts):
    rows = verdicts["transfer_exact"]["probes"]
    assert {p["altered"] for p in rows["swapped_arguments"]["played"].values()} == {
        "start_transfer.source<->destination"}
    assert {p["altered"] for p in rows["inflated_value"]["played"].values()} == {"start_transfer.amount"}
    assert all(p["to"] == 2 * p["from"] for p in rows["inflated_value"]["played"].values())
    malformed_rows = verdicts["record_exact"]["probes"]["malformed_value"]["played"]
    assert {(p["altered"], p["to"]) for p in malformed_rows.values()} == {("set_address.address", MALFORMED)}
    repeated = verdicts["shortlist_f1"]["probes"]["repeated_first_write"]["played"]
    # honest set F1: the repeat earns exactly what the write once earns (2 / (k + 1)), never more
    assert all(p["judged"] and p["copies"] >= 2 and p["score"] == p["control_score"] == 2 / (p["copies"] + 1)
               for p in repeated.values())
    identifiers = verdicts["bonus_exact"]["probes"]["adv_identifier"]["played"]
    assert {p["answer"] for p in identifiers.values()} == {f"Bonus: {n}" for n in IDENTIFIERS[:6]}
    intermediate = verdicts["bonus_intermediate"]["probes"]["intermediate_value"]["played"]
    assert any(p["score"] == 1.0 for p in intermediate.values())
    assert all(re.fullmatch(r"Bonus: [\d,]+\.\d\d", p["answer"]) for p in intermediate.values())


def test_malformed_and_doubled_values():
    assert [malformed(v) for v in ("10.0.0.7", "2024-05-01", "a@b.org", "ACC-10")] == [MALFORMED] * 4
    assert [malformed(v) for v in ("plain words", "A", "", MALFORMED, 7, True, ["1.2"])] == [None] * 7
    assert [doubled(v) for v in (50, 12.5, "12.50", "-3")] == [100, 25.0, "25.00", "-6"]
    assert [doubled(v) for v in (0, "0.0", True, "12 kg", None)] == [None] * 5


def test_the_answers_one_number_and_the_candidates_of_the_work():
    assert only_number("Tax owed: 4,180.00").group() == "4,180.00"
    assert only_number("You need 350 g of flour.").group() == "350"
    assert only_number("Set a10 to 730.").group() == "730"  # a10 is a name, not a number
    assert only_number("3 of 4") is None and only_number('{"tax": 4180}') is None and only_number("none") is None
    assert output_numbers(['{"gross": 50000, "deductions": 8000}', "rate 0.1"]) == [42000, 58000, 50000, 8000, 0.1]
    assert styled(41800, only_number("Tax: 4,180.00")) == "41,800.00"
    assert styled(12.25, only_number("12 g")) == "12.25"


def test_a_swap_of_two_equal_values_or_of_two_shapes_is_never_played():
    items = [{"messages": [], "reference_answer": "ok", "actions": [
        {"name": "link", "arguments": {"a": "n1", "b": "n1", "weight": 3, "label": "x-1"}}]}]
    probe = SwappedArguments(["link"])
    probe.prepare(ProbeContext(items, write_tools=["link"]))
    assert not probe.applies(items[0])


def test_text_with_spaces_is_never_malformed_nor_swapped():
    # a commit message ("Merge feature/x") or a memo is text an honest end-state grader may rightly ignore
    assert malformed("Merge feature/export-csv") is None and malformed("requested by customer") is None
    items = [{"messages": [], "reference_answer": "ok", "actions": [
        {"name": "commit", "arguments": {"branch": "main", "message": "Merge feature/x", "note": "Fix bug/y"}}]}]
    probe = SwappedArguments(["commit"])
    probe.prepare(ProbeContext(items, write_tools=["commit"]))
    assert not probe.applies(items[0])


def test_the_first_write_is_repeated_only_where_the_gold_adds_several_elements_and_repeats_none():
    def item(*ids: str, budget: int = 8) -> dict:
        return {"messages": [], "reference_answer": "ok", "max_tool_calls": budget,
                "actions": [{"name": "list", "arguments": {}},
                            *[{"name": "add", "arguments": {"id": i}} for i in ids]]}
    items = [item("a", "b", "c"), item("a"), item("a", "b", "a"), item("a", "b", "c", budget=3)]
    control = FirstWriteControl(["add"])
    probe = RepeatedFirstWrite(control, ["add"])
    for p in (control, probe):
        p.prepare(ProbeContext(items, write_tools=["add"]))
    add_a = {"name": "add", "arguments": {"id": "a"}}
    assert control.plan(items[0]) == [[items[0]["actions"][0]], [add_a]]
    assert probe.plan(items[0]) == [[items[0]["actions"][0]], [add_a], [add_a], [add_a]]
    # one write (nothing to gain), a gold that repeats a call itself, a repeat past the declared budget
    assert [probe.applies(i) for i in items] == [True, False, False, False]
    assert [control.applies(i) for i in items] == [True, False, False, False]  # the control plays the same items
