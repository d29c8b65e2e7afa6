"""Reward building blocks on hand-computed cases."""

from __future__ import annotations

import pytest

from rft_sdk import Grade
from rft_sdk import rewards as R


def test_weighted_sum_hand_computed():
    g = R.weighted_sum({"a": 1.0, "b": 0.5, "c": 0.0}, {"a": 2.0, "b": 1.0, "c": 1.0})
    assert g.score == pytest.approx((2 * 1.0 + 0.5) / 4.0)  # 0.625
    assert g.subscores == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert R.weighted_sum({"a": 1.0, "b": 0.5}, {"a": 2.0, "b": 1.0}, normalize=False).score == 2.5
    assert R.weighted_sum({"a": 0.2, "b": 0.4}).score == pytest.approx(0.3)
    with pytest.raises(ValueError):
        R.weighted_sum({"a": 1.0}, {"z": 1.0})
    with pytest.raises(ValueError):
        R.weighted_sum({})


def test_gate_zeroes_failed_requirement_then_secondary_on_top():
    base = R.weighted_sum({"style": 0.5, "speed": 1.0})  # 0.75
    passed = R.gate(base, True, name="tests_pass")
    failed = R.gate(base, False, name="tests_pass", reason="unit tests fail")
    assert passed.score == 0.75 and passed.subscores["tests_pass"] == 1.0 and passed.reasons == []
    assert failed.score == 0.0 and failed.subscores["tests_pass"] == 0.0
    assert failed.subscores["style"] == 0.5 and failed.reasons == ["unit tests fail"]
    assert R.gate(0.3, False).reasons == ["gate failed"]


def test_budget_penalty_and_apply():
    assert R.budget_penalty(5, budget=8, cost_per_call=0.1) == 0.0
    assert R.budget_penalty(11, budget=8, cost_per_call=0.1) == pytest.approx(0.3)
    assert R.budget_penalty(30, budget=8, cost_per_call=0.1, max_penalty=0.5) == 0.5
    g = R.apply_penalty(Grade(0.9, {"f1": 0.9}), "tool_budget", 0.3)
    assert g.score == pytest.approx(0.6) and g.subscores == {"f1": 0.9, "tool_budget": -0.3}
    assert g.reasons == ["tool_budget: -0.3"]
    assert R.apply_penalty(0.2, "b", 0.5).score == 0.0  # floored
    with pytest.raises(ValueError):
        R.apply_penalty(0.2, "b", -1.0)


def test_precision_recall_f1_hand_computed():
    prf = R.precision_recall_f1(["a.py", "b.py", "c.py", "c.py"], ["b.py", "c.py", "d.py", "e.py"])
    # TP = {b, c} = 2; P = 3 distinct; E = 4
    assert (prf.precision, prf.recall) == (pytest.approx(2 / 3), pytest.approx(0.5))
    assert prf.f1 == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))  # 4/7
    assert prf.f1 == pytest.approx(4 / 7)
    assert (prf.true_positives, prf.predicted, prf.expected) == (2, 3, 4)
    assert R.precision_recall_f1([], []).f1 == 1.0
    assert R.precision_recall_f1([], ["x"]).f1 == 0.0
    assert R.precision_recall_f1(["x"], []).f1 == 0.0
    assert R.precision_recall_f1(["x"], ["y"]).f1 == 0.0


def test_numeric_match_tolerance_and_partial_credit():
    assert R.numeric_match(100.4, 100.0, abs_tol=0.5) == 1.0
    assert R.numeric_match(101.0, 100.0, rel_tol=0.01) == 1.0
    assert R.numeric_match(102.0, 100.0, rel_tol=0.01) == 0.0
    # tolerance 1, excess 1.5 over a 3-wide partial band -> 1 - 1.5/3 = 0.5
    assert R.numeric_match(102.5, 100.0, abs_tol=1.0, partial_within=3.0) == pytest.approx(0.5)
    assert R.numeric_match(110.0, 100.0, abs_tol=1.0, partial_within=3.0) == 0.0
    assert R.numeric_match(None, 1.0) == 0.0 and R.numeric_match(float("nan"), 1.0) == 0.0
    with pytest.raises(ValueError):
        R.numeric_match(1.0, 1.0, partial_within=0)
