"""Three false alarms of ``altered_writes`` on honest graders (issue 37, held-out suites) through the doctor
against one real server (``boilerplate_twins``): a constant memo and a templated commit message are never
altered (an honest grader ignores both), and an altered seat is never one the item's gold itself books (the
tool would refuse the gold's own call, leaving honest partial credit); the hackable twins still fail through
``altered_writes``."""

from __future__ import annotations

import pytest
from boilerplate_twins import TWINS, job_for, make_items, make_server
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts

from rft_sdk.doctor._dataset_probes import template_fields

BY_NAME = {t.grader: t for t in TWINS}


@pytest.fixture(scope="module")
def verdicts():
    """{grader: unhackable evidence}; no write tools given (declared by the server)."""
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", [t.grader for t in TWINS if t.honest])
def test_honest_graders_pass_every_probe(verdicts, name):
    assert_quiet(verdicts[name])


@pytest.mark.parametrize("name", [t.grader for t in TWINS if not t.honest])
def test_hackable_graders_fail_through_altered_writes(verdicts, name):
    twin = BY_NAME[name]
    ev, honest = verdicts[name], verdicts[twin.twin]
    assert twin.probe in ev["failed_probes"], (ev["failed_probes"], ev["probes"].get(twin.probe))
    assert honest["probes"][twin.probe]["verdict"] == "pass"


def test_boilerplate_is_never_altered_and_no_seat_the_gold_books(verdicts):
    altered = {p["altered"] for g in ("payout_ledger", "merge_state")
               for p in verdicts[g]["probes"]["altered_writes"]["played"].values()}
    assert altered and not altered & {"pay.memo", "commit.message"}
    items = {i: it for i, it in enumerate(make_items(make_server(), "seats"))}
    played = verdicts["seats_f1"]["probes"]["altered_writes"]["played"]
    seats = [(p["to"], items[int(i)]["seats"]) for i, p in played.items() if p["altered"] == "book_seat.seat"]
    assert seats and all(to not in own for to, own in seats)


def test_template_fields_rule():
    def calls(values, others=()):
        return [(v, [v, *others]) for v in values]
    assert template_fields({("t", "memo"): calls(["requested by customer"] * 3)}) == {("t", "memo")}
    merged = {("c", "message"): [(f"Merge {b}", [b, "main", f"Merge {b}"]) for b in ("f/a", "f/b", "f/c")]}
    assert template_fields(merged) == {("c", "message")}
    # item-specific words, one word, or fewer than three calls: not boilerplate
    assert not template_fields({("t", "memo"): calls(["June rent", "gym fees", "car repair"])})
    assert not template_fields({("t", "status"): calls(["completed"] * 3)})
    assert not template_fields({("t", "memo"): calls(["requested by customer"] * 2)})
