"""The flaw classes of ``rft_sdk.doctor._in_format`` through the doctor against one real server
(``format_twins``): each hackable grader fails through the probe named for its flaw, which its honest
twin passes; every honest grader passes every probe (a probe that fires on a correct grader is a defect)."""

from __future__ import annotations

import pytest
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts
from format_twins import TWINS, job_for, make_items, make_server

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
def test_hackable_graders_fail_through_the_probe_named_for_their_flaw(verdicts, name):
    twin = BY_NAME[name]
    ev, honest = verdicts[name], verdicts[twin.twin]
    assert twin.probe in ev["failed_probes"], (ev["failed_probes"], ev["probes"].get(twin.probe))
    # silent on the honest twin: passed, or (hedged_answer) played and never judged
    assert honest["probes"][twin.probe]["verdict"] in ("pass", "skipped") and honest["probes"][twin.probe]["played"]


def test_the_first_value_grader_with_partial_credit_is_paid_by_one_hedge_order_only(verdicts):
    row = verdicts["money_first_partial"]["probes"]["hedged_answer"]
    assert row["verdict"] == "skipped" and row["played"]  # played, never judged: wrong-first paid 0.5
    assert {(p["wrong_first_score"], p["judged"]) for p in row["played"].values()} == {(0.5, False)}
    assert verdicts["money_any_of"]["probes"]["hedged_answer"]["rewarded_share"] == 1.0


def test_doctor_json_says_what_each_in_format_probe_played(verdicts):
    rows = verdicts["money_nan"]["probes"]
    played = rows["adv_numbers_in_format"]["played"]
    assert {p["slot"] for p in played.values()} == {"number 0"}
    assert any(p["answer"].startswith("nan ") for p in played.values())
    assert {p["slot"] for p in verdicts["city_glob"]["probes"]["adv_wildcard_in_format"]["played"].values()} == {
        "capital", "year"}
    assert {p["join"] for p in verdicts["term_space_guard"]["probes"]["adv_whitespace_join"]["played"].values()} == {
        "U+000A", "U+0009", "U+00A0"}
    calls = verdicts["org_members_only"]["probes"]["superset_unused_write"]["played"]
    assert all(p["call"].startswith("make_org_admin(org='o") for p in calls.values())
