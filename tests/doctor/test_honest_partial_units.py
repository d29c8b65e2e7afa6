"""doctor25's three honest graders that FAILed, as unit checks of the rules that failed them (issue 37): a person's
name with its accents stripped is the same person; an unrequested extra write sets a status that undoes the
record, not one an honest grader may accept as the same state; doing nothing may earn the share of the outcome
the untouched state already has right."""

from __future__ import annotations

import pytest

from rft_sdk.doctor._adversarial_values import FoldedText
from rft_sdk.doctor._in_format import _placeholder
from rft_sdk.doctor._severity import NOTHING_SHARE, Outcome, allowance, judge_probe


def test_a_proper_name_keeps_its_accents_and_gets_look_alikes_instead():
    probe = FoldedText()
    value, source = probe._new_value("claim_item", "claimant_name", "Tomás Ferreira", [], ())
    assert source == "look-alikes" and value != "Tomas Ferreira" and value != "Tomás Ferreira"
    assert probe._new_value("order_part", "part", "Zündkerze", [], ()) == ("Zundkerze", "accents stripped")


@pytest.mark.parametrize(("enum", "chosen"), [
    (["confirmed", "rescheduled", "cancelled", "no_show"], "cancelled"),  # undoes the session
    (["approved", "pending", "archived"], "pending"),  # no undoing value: the first that is no success
    (["done", "ok"], "done"),  # only success values: the first
])
def test_an_unrequested_status_write_undoes_the_record(enum, chosen):
    assert _placeholder({"enum": enum}, {}, []) == chosen


def test_doing_nothing_may_earn_what_the_untouched_state_has_right():
    assert allowance(1.0, 1.0, nothing=True) == NOTHING_SHARE
    assert allowance(1.0, 1.0, nothing=True, unchanged=0.5) == pytest.approx(0.5 + 1e-6)
    # an on-time return (the gold only checks in): 0.5 for "no charge" is no reward; where the gold also
    # charges (u = 0), the same 0.5 for doing nothing is
    honest = [Outcome(0, 0.5, 0, None, True, unchanged=0.5), Outcome(1, 0.0, 0, None, True)]
    lenient = [Outcome(0, 0.5, 0, None, True, unchanged=0.5), Outcome(1, 0.5, 0, None, True)]
    assert judge_probe("hack", honest, [1.0, 1.0], pass_threshold=1.0).verdict == "pass"
    assert judge_probe("hack", lenient, [1.0, 1.0], pass_threshold=1.0).verdict == "fail"
