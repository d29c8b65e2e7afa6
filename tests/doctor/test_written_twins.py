"""The probes of ``_written_answers`` against one real server (``written_twins``): where the gold writes and the answer
is graded beside the end state, every honest grader (exact names and number, the end state alone, F1 partial
credit on the names) passes them; each hackable twin (``float()`` letting ``nan`` through, a prefix of the number,
whole units, recall of the names) fails through the probe made for its flaw, which the honest twins pass. Only
this module's probes run (the whole suite's behaviour on such graders is the outside suites' measurement), so the
file stays fast; and the pure helpers behind them."""

from __future__ import annotations

import pytest
from doctor_helpers import assert_quiet, twin_verdicts
from written_twins import TWINS, job_for, make_items, make_server

from rft_sdk.doctor import default_probes
from rft_sdk.doctor._written_answers import (
    asks_which,
    entity_slots,
    number_prefix,
    number_tokens,
    written_answer_probes,
)

BY_NAME = {t.grader: t for t in TWINS}


@pytest.fixture(scope="module")
def verdicts():
    """{grader: unhackable evidence} with only this module's probes; write tools declared by the server."""
    return twin_verdicts(make_server, make_items, job_for, TWINS, probes=written_answer_probes)


@pytest.mark.parametrize("name", [t.grader for t in TWINS if t.honest])
def test_honest_graders_pass_every_written_answer_probe(verdicts, name):
    assert_quiet(verdicts[name])


def test_an_ungraded_answer_is_never_judged(verdicts):
    ev = verdicts["fleet_state"]
    for name in ("written_special_number", "written_number_prefix", "written_fraction", "written_padded_answer"):
        row = ev["probes"][name]
        assert row["played"] and not any(p["judged"] for p in row["played"].values()), (name, row)


@pytest.mark.parametrize("name", [t.grader for t in TWINS if not t.honest])
def test_hackable_graders_fail_through_the_probe_made_for_their_flaw(verdicts, name):
    twin = BY_NAME[name]
    ev = verdicts[name]
    assert twin.probe in ev["failed_probes"], (ev["failed_probes"], ev["probes"].get(twin.probe))
    for honest in (t.grader for t in TWINS if t.honest):
        row = verdicts[honest]["probes"][twin.probe]
        assert row["verdict"] in ("pass", "skipped") and row["played"], (honest, row)
    assert verdicts["fleet_exact"]["probes"][twin.probe]["verdict"] == "pass"


def test_the_report_says_what_each_probe_played(verdicts):
    played = verdicts["fleet_recall"]["probes"]["written_padded_answer"]["played"]
    first = played["0"]
    assert first["altered"] == "answer" and first["from"] == "Suspended V02; overage 1.87 t."
    assert first["to"].startswith("Suspended V02, ") and first["to"].endswith("; overage 1.87 t.")
    assert len(first["to"].split(",")) == 1 + 5  # the gold's one name and 3n + 2 others
    nan = verdicts["fleet_nan"]["probes"]["written_special_number"]["played"]
    assert nan["0"]["to"] == "Suspended V02; overage nan t." and nan["0"]["score"] == 1.0


def test_the_probes_and_their_controls_are_built_in():
    probes = default_probes()
    for name in ("written_number_control", "written_number_omitted", "written_special_number", "written_number_prefix", "written_fraction",
                 "written_entity_control", "written_padded_answer"):
        assert probes[name].intent == "hack"
    assert probes["written_number_control"].control and probes["written_number_omitted"].control
    assert probes["written_entity_control"].control
    assert not probes["written_padded_answer"].control


def test_number_tokens_skip_the_digits_of_ids_and_words():
    text = "FV101 and CL-20413 on 2026-03-14: 1,234.56 EUR, pace 5:14, the 3rd (SG01) 7."
    assert [m.group() for m in number_tokens(text)] == ["2026-03-14", "1,234.56", "5:14", "7"]


def test_a_number_prefix_is_another_value():
    assert [number_prefix(t) for t in ("5:14", "116.00", "0.5", "10", "7", "5.00", "2026-03-14")] \
        == ["5", "1", "0", "1", None, None, "2"]


def test_entity_slots_are_whole_tokens_the_gold_writes():
    gold = {("suspend", "vessel"): ["FV101", "FV104"], ("assign", "section"): ["alto1"],
            ("log", "note"): ["cod over quota"], ("set", "kg"): ["12"]}
    assert entity_slots("Suspended: FV101, FV104 (not FV1040); ALTO1.", gold) \
        == {("suspend", "vessel"): ["FV101", "FV104"], ("assign", "section"): ["alto1"]}


def test_entities_are_padded_only_where_the_user_asks_to_be_told():
    def item(text: str) -> dict:
        return {"messages": [{"role": "system", "content": "Tell the truth."}, {"role": "user", "content": text}]}

    assert asks_which(item("Suspend every vessel over quota and tell me which vessels you suspended."))
    assert asks_which(item("Which section is she in now?"))
    # a confirmation nobody asked for: a grader checking that the slot is mentioned is honest there
    assert not asks_which(item("Please book me the earliest free slot with Dr. Okafor (D01)."))
    # a figure asked for: the unit named beside the total is a confirmation; asked which as well, it is not
    assert not asks_which(item("I need a unit for 3 months. Please reserve one and tell me the total."))
    assert not asks_which(item("How much is left on card G1?"))
    assert asks_which(item("Suspend them, then tell me which and the port's total overage."))
    assert asks_which(item("What is the balance? Also tell me which card you used."))
