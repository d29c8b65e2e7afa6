"""The choice twins (``choice_twins``) through the doctor against one real server: the honest graders (the
smallest free locker that holds the parcel; the cheapest unit and its total; the earliest free slot) pass every
probe without a warning; the hackable ones (any free locker that holds it; any unit whose quote agrees with it; any
free slot) FAIL through ``ranked_listed_choice`` (the prompt ranks the entities: the runner-up is wrong) and WARN
through ``other_listed_choice`` (a shortcut: another listed entity may be a valid alternative the dataset does not
list), which the honest twins pass. And the pure helpers that restate a quote for the other entity."""

from __future__ import annotations

from typing import Any

import pytest
from choice_twins import LOCKERS, SLOTS, TWINS, job_for, make_items, make_server
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts

from rft_sdk.doctor._choices import listed_records, restated_figures, restated_text, runner_up

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, Any]]:
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS, "other_listed_choice"))


@pytest.mark.parametrize("name", ["locker_rule", "unit_cheapest", "slot_earliest"])
def test_the_honest_graders_pass_every_probe_without_warnings(verdicts, name):
    assert_quiet(verdicts[name])
    assert verdicts[name]["probes"]["other_listed_choice"]["verdict"] == "pass"
    ranked = verdicts[name]["probes"]["ranked_listed_choice"]
    assert ranked["verdict"] == "pass" and ranked["played"], ranked  # played, and paid nothing


def test_any_fitting_locker_warns_through_another_listed_choice(verdicts):
    ev = verdicts["locker_any_fit"]
    assert ev["warned_probes"] == ["other_listed_choice"] and ev["failed_probes"] == ["ranked_listed_choice"]
    for p in ev["probes"]["ranked_listed_choice"]["played"].values():  # never a tie: another size than the gold's
        assert LOCKERS[p["to"]] != LOCKERS[p["from"]], p
    played = ev["probes"]["other_listed_choice"]["played"].values()
    lockers = {p["to"] for p in played}
    assert len(lockers) > 1  # the items take different siblings in turn
    paid = [p for p in played if p["score"] == 1.0]
    assert paid and all(p["answer"].endswith(f"locker {p['to']}.") for p in paid)  # named in the reply too


def test_a_quote_that_only_agrees_with_the_unit_reserved_warns_with_the_total_restated(verdicts):
    ev = verdicts["unit_self_consistent"]
    assert ev["warned_probes"] == ["other_listed_choice"] and ev["failed_probes"] == ["ranked_listed_choice"]
    played = list(ev["probes"]["other_listed_choice"]["played"].values())
    paid = [p for p in played if p["score"] == 1.0]
    assert paid, played
    for p in paid:  # the other unit named, and its own total quoted (the gold's total beside it paid nothing)
        assert p["answer"].startswith(f"Reserved {p['to']} for ") and p["from"] not in p["answer"]
    honest = verdicts["unit_cheapest"]["probes"]["other_listed_choice"]["played"].values()
    assert honest and all(p["score"] == 0.0 for p in honest)


def test_figures_are_restated_from_the_other_record_and_given_numbers_kept():
    listing = [{"unit": "U03", "size_m2": 5, "monthly": 45}, {"unit": "U05", "size_m2": 8, "monthly": 55.5}]
    records = listed_records("U03", "U05", [{"note": "x"}, listing])
    assert records == (listing[0], listing[1])
    assert listed_records("U03", "U05", [{"U03": {"monthly": 45}, "U05": {"monthly": 50}}]) \
        == ({"monthly": 45}, {"monthly": 50})
    assert listed_records("U03", "U07", [listing]) is None
    text = "U03 (5 m2) for 3 months: $135.00 total, 45/month, ref 2026-03-04, id CL-45."
    assert restated_figures(text, *records, [3.0]) \
        == "U03 (8 m2) for 3 months: $166.50 total, 55.5/month, ref 2026-03-04, id CL-45."
    # a figure that derives from nothing listed stays; a number the user gave is never restated
    assert restated_figures("Done: 7 items, 3 months.", *records, [3.0]) == "Done: 7 items, 3 months."


def test_any_free_slot_fails_through_the_runner_up_with_its_time_restated(verdicts):
    ev = verdicts["slot_any_free"]
    assert "ranked_listed_choice" in ev["failed_probes"], ev["failed_probes"]
    played = list(ev["probes"]["ranked_listed_choice"]["played"].values())
    paid = [p for p in played if p["score"] == 1.0]
    assert len(paid) == len(played), played  # the runner-up is the next free slot: the tools accept it
    starts = {sid: start for day in SLOTS.values() for sid, start, _ in day}
    for p in paid:  # the next free slot, its own time stated (in both lines), not the gold's
        assert p["to"] == p["from"] + 1 and starts[p["from"]] not in p["answer"], p
        assert p["answer"] == f"You are booked at {starts[p['to']]}.\nANSWER: {starts[p['to']]}"


def test_the_runner_up_is_the_most_alike_record_and_never_a_tie():
    slots = [{"id": 1, "start": "09:00", "free": False}, {"id": 2, "start": "09:30", "free": True},
             {"id": 3, "start": "10:00", "free": True}, {"id": 4, "start": "10:30", "free": True}]
    assert runner_up(2, [1, 3, 4], [slots]) == 3  # free like the gold's, the nearest time
    lockers = [{"locker": "L01", "size": "S"}, {"locker": "L04", "size": "S"}, {"locker": "L02", "size": "M"}]
    assert runner_up("L01", ["L04", "L02"], [lockers]) == "L02"  # L04 ties (same size): never played
    posts = [{"id": "gate", "name": "Main gate", "km": 0.3}, {"id": "bar", "name": "Big top bar", "km": 0.3}]
    assert runner_up("gate", ["bar"], [posts]) is None  # as near, only the name differs: a tie
    assert runner_up("gate", ["bar"], [[{"x": 1}]]) is None  # no record: nothing to rank
    text = "You're at the Main gate (gate), 0.3 km away, from 09:30."
    assert restated_text(text, {"id": "gate", "name": "Main gate", "at": "09:30"},
                         {"id": "bar", "name": "Big top bar", "at": "10:00"}, "gate") \
        == "You're at the Big top bar (gate), 0.3 km away, from 10:00."  # the id is the caller's to rename
