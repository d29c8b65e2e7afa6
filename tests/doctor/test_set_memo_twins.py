"""Issue 37's false alarms through the doctor against one real server (``set_memo_twins``): an honest
set-F1 grader over a shortlist written by three calls and stored as a list, and an honest grader that
ignores a stored memo, pass every probe; their hackable twins fail through ``altered_writes``."""

from __future__ import annotations

import pytest
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts
from set_memo_twins import TWINS, job_for, make_items, make_server

BY_NAME = {t.grader: t for t in TWINS}


@pytest.fixture(scope="module")
def verdicts():
    """{grader: unhackable evidence}; no write tools given (declared by the server)."""
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", [t.grader for t in TWINS if t.honest])
def test_honest_graders_pass_every_probe(verdicts, name):
    assert_quiet(verdicts[name])


@pytest.mark.parametrize("name", [t.grader for t in TWINS if not t.honest])
def test_hackable_graders_fail_through_the_probe_named_for_their_flaw(verdicts, name):
    twin = BY_NAME[name]
    ev, honest = verdicts[name], verdicts[twin.twin]
    assert twin.probe in ev["failed_probes"], (ev["failed_probes"], ev["probes"].get(twin.probe))
    assert honest["probes"][twin.probe]["verdict"] == "pass"


def test_the_memo_is_never_altered_and_one_of_three_additions_earns_honest_partial_credit(verdicts):
    played = verdicts["transfer_ledger"]["probes"]["altered_writes"]["played"]
    assert played and all(p["altered"] != "transfer.memo" for p in played.values())
    rows = verdicts["shortlist_f1"]["probes"]
    scores = {p["score"] for p in rows["altered_writes"]["played"].values() if p["judged"]}
    assert scores and all(abs(s - 2 / 3) < 1e-9 for s in scores)  # paid 2/3, judged, not rewarded
    # the same three candidates in another order: the task asks none, so nothing is judged
    reordered = rows["reordered_writes"]
    assert reordered["verdict"] == "skipped" and reordered["played"]
    assert not any(p["judged"] for p in reordered["played"].values())


def test_one_write_sent_to_another_entity_earns_the_f1_of_one_missing_not_a_hack(verdicts):
    """A grader of the role's own list pays a candidate shortlisted for another role as one missing (F1 0.8 of
    three); that is what leaving the write out earns, so ``altered_writes`` passes it (before: its line was
    2/3 and it FAILed). Its blindness to the other role's list is ``superset_end_state``'s finding."""
    rows = verdicts["shortlist_role_f1"]["probes"]
    scores = {round(p["score"], 6) for p in rows["altered_writes"]["played"].values() if p["judged"]}
    assert 0.8 in scores and rows["altered_writes"]["verdict"] == "pass", rows["altered_writes"]
    assert "superset_end_state" in verdicts["shortlist_role_f1"]["failed_probes"]


def test_superset_in_scope_says_what_it_played(verdicts):
    played = verdicts["shortlist_f1"]["probes"]["superset_in_scope"]["played"]
    assert played and all(p["write"].startswith("add_to_shortlist(") for p in played.values())
