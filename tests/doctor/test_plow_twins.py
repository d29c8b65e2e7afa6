"""The plow twins (``plow_twins``) through the doctor against one real server: the honest graders (the routes
written; the asked day's rain from the record; the whole register; the dictated note) pass every probe without a
warning; each hackable twin fails through the probe its flaw asks for, which its honest twin passes. And the units
under them: the rule a read's numbers give the answer by, and the writes a refused plan leaves."""

from __future__ import annotations

import pytest
from doctor_helpers import twin_tests
from plow_twins import TWINS, job_for, make_items, make_server

from rft_sdk.doctor._own_read_date import implied_rule
from rft_sdk.doctor._own_read_total import RULES, numbers_of
from rft_sdk.doctor._suite import REFUSED_ARGUMENT, RefusedWrites

pytestmark = pytest.mark.slow


verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)


def test_a_reads_numbers_are_its_json_leaves_and_the_rules_work_them_out():
    assert numbers_of('{"day": "2025-04-01", "flag": true, "hourly": {"00:00": 0.2, "01:00": 0.5}}') == [0.2, 0.5]
    assert numbers_of("rain 0.2 mm then 0.5 mm") == [0.2, 0.5]
    assert RULES["sum"]([0.2, 0.5]) == pytest.approx(0.7) and RULES["max"]([0.2, 0.5]) == 0.5


def test_a_date_rule_needs_two_items_that_agree():
    import datetime as dt
    d = dt.date.fromisoformat
    listed = [d("2026-03-20"), d("2026-03-10"), d("2026-03-01")]
    other = [d("2026-03-15"), d("2026-03-05"), d("2026-02-26")]
    assert implied_rule([(listed, d("2026-05-30")), (other, d("2026-05-27"))]) == (2, 90)  # the third plus 90 days
    assert implied_rule([(listed, d("2026-05-30"))]) is None


def test_refused_writes_adds_the_unknown_argument_to_writes_only():
    probe = RefusedWrites(["assign"])
    steps = probe.transform([{"name": "streets", "arguments": {"district": "D1"}},
                             {"name": "assign", "arguments": {"plow": "P1", "street_ids": ["a"]}}])
    assert steps == [[{"name": "streets", "arguments": {"district": "D1"}}],
                     [{"name": "assign", "arguments": {"plow": "P1", "street_ids": ["a"], REFUSED_ARGUMENT: True}}]]
