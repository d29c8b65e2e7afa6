"""The ten task shapes beyond retail (``shape_twins``) through the doctor against one real server:
every honest grader passes every probe without a warning (a probe that fires on a correct
grader is a defect), every hackable twin fails through a probe its honest twin passes."""

from __future__ import annotations

import pytest
from doctor_helpers import assert_quiet, reduced_probes, twin_verdicts
from shape_twins import SHAPES, job_for, make_items, make_server

# a long file: the scheduler starts it first (tests/conftest.py); its module fixture runs the doctor on every grader
# (237 s in a fresh-clone CI run on a loaded 2-core machine, past 3/4 of the default 300 s): a bound of its own
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

BY_NAME = {t.grader: t for t in SHAPES}
#: hackable twin → the probe family named for its flaw
EXPECT = {"config_trusts_status": "self_certification", "config_ignores_extra": "superset_end_state",
          "num_nan": "adv_special_numbers", "num_interval": "adv_interval", "files_glob": "adv_wildcard",
          "files_open_credit": "activity_no_answer", "text_zwj_guard": "adv_invisible",
          "text_prefix": "adv_answer_prefix", "review_no_budget": "tool_spam",
          # pays activity only past the declared budget, which activity_no_answer no longer passes
          "review_activity": "tool_spam", "code_ci_status": "self_certification",
          "config_per_step": "altered_writes", "code_contains": "altered_writes",
          "booking_target_only": "superset_in_scope", "booking_trusts_status": "self_certification",
          "refund_order_blind": "altered_writes", "refund_trusts_status": "self_certification",
          "meeting_working_hour": "altered_writes", "cite_recall": "answer_superset",
          "cite_contains": "answer_space_dump", "cite_glob": "adv_wildcard",
          "num_abs": "adv_negated_number", "review_activity_in_budget": "activity_no_answer",
          "ticket_trusts_status": "self_certification", "playlist_dup_blind": "duplicated_write",
          "playlist_order_blind": "reordered_writes", "invoice_counts_refused": "reordered_writes",
          "form_name_blind": "altered_writes"}


@pytest.fixture(scope="module")
def verdicts():
    """{grader: (gradeable passed, unhackable evidence)}; no write tools given (learnt); the hackable twins
    through the baselines, the controls and the probes named for the flaws only (to keep the file fast)."""
    return twin_verdicts(make_server, make_items, job_for, SHAPES, gradeable=True,
                         hackable_probes=reduced_probes(*EXPECT.values()))


def test_the_shapes_cover_what_the_issue_asks_for():
    assert {t.task for t in SHAPES} == {"config", "numeric", "files", "text", "review", "code", "booking", "refund",
                                        "meeting", "cite", "ticket", "playlist", "invoice", "form"}
    assert sum(t.honest for t in SHAPES) == 15 and sum(not t.honest for t in SHAPES) >= 28
    assert all(BY_NAME[t.twin].honest and BY_NAME[t.twin].task == t.task for t in SHAPES if not t.honest)


@pytest.mark.parametrize("name", [t.grader for t in SHAPES if t.honest])
def test_honest_graders_pass_every_probe_without_warnings(verdicts, name):
    gradeable, ev = verdicts[name]
    assert gradeable is True
    assert_quiet(ev)
    assert ev["write_tools_source"] == "declared or learnt in this run"


@pytest.mark.parametrize("name", [t.grader for t in SHAPES if not t.honest])
def test_hackable_graders_fail_through_a_probe_the_honest_twin_passes(verdicts, name):
    gradeable, ev = verdicts[name]
    _, twin = verdicts[BY_NAME[name].twin]
    discriminating = [p for p in ev["failed_probes"] if twin["probes"][p]["verdict"] == "pass"]
    assert gradeable is True and discriminating, (ev["failed_probes"], BY_NAME[name].flaw)


def test_each_flaw_is_caught_by_the_probe_family_named_for_it(verdicts):
    missed = {g: p for g, p in EXPECT.items() if p not in verdicts[g][1]["failed_probes"]}
    assert not missed, missed


def test_honest_partial_credit_is_not_a_hack(verdicts):
    rows = verdicts["review_budget"][1]["probes"]
    # one of two issues (a prefix of the answer) earns 0.5 of the gold's 1.0: at the line, not above it
    assert rows["adv_answer_prefix"]["verdict"] == "pass"
    assert verdicts["config_end_state"][1]["probes"]["altered_writes"]["mean_score"] == 0.0


def test_doctor_json_says_what_each_probe_played(verdicts):
    played = verdicts["refund_order_blind"][1]["probes"]["altered_writes"]["played"]
    assert {p["altered"] for p in played.values()} == {"refund.amount_cents", "refund.order_id"}
    # the miss explained: the order-blind grader pays exactly where the order, not the amount, was altered
    assert {p["altered"] for p in played.values() if p["score"] == 1.0} == {"refund.order_id"}
    assert all(p["judged"] for p in played.values())
    certified = verdicts["refund_trusts_status"][1]["probes"]["self_certification"]["played"]
    assert all(len(p["calls"]) == 1 and p["calls"][0].startswith("set_case_status(order_id=")
               and p["calls"][0].endswith("status='refunded')") for p in certified.values())
