"""Reward building blocks on hand-computed cases."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from rft_sdk import Grade, GradingContext, ToolCallRecord
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


# -- the honest-grader helpers (docs/honest-graders.md): over_budget, returned, same --------------------------------
def _call(output: str | None, status: int = 200, name: str = "get_book") -> ToolCallRecord:
    return ToolCallRecord(call_id="c", id=None, name=name, arguments={}, output=output if status == 200 else None,
                          error=None if status == 200 else "refused", status=status, started_at=0.0, latency_s=0.0)


def _ctx(item: dict[str, Any], *statuses: int) -> GradingContext:
    return GradingContext(sample={}, item=item, trace_id="t", trajectory=tuple(_call("{}", s) for s in statuses))


def test_over_budget_counts_every_recorded_call_refused_ones_included():
    assert not R.over_budget(_ctx({"max_tool_calls": 3}, 200, 200, 200))          # at the budget
    assert R.over_budget(_ctx({"max_tool_calls": 3}, 200, 200, 200, 200))         # one past it
    assert R.over_budget(_ctx({"max_tool_calls": 3}, 200, 400, 404, 422))         # refused calls count (ctx.count())
    assert R.over_budget(_ctx({"max_tool_calls": 0}, 400))
    assert not R.over_budget(_ctx({"max_tool_calls": 0}))
    assert not R.over_budget(_ctx({}, *[200] * 50))                               # no budget: never over
    assert not R.over_budget(_ctx({"max_tool_calls": None}, *[400] * 50))
    with pytest.raises(TypeError):
        R.over_budget(_ctx({"max_tool_calls": "3"}))                              # as its docstring says


def test_returned_decodes_the_objects_of_a_successful_call_only():
    assert R.returned(_call('{"id":"b1","n":2}')) == [{"id": "b1", "n": 2}]               # an object
    assert R.returned(_call('[{"id":"b1"},"b2",3,null,[{"id":"b9"}],{"id":"b4"}]')) == [{"id": "b1"}, {"id": "b4"}]
    assert R.returned(_call("[]")) == []
    assert R.returned(_call('["b1", "b2"]')) == []                                        # plain values: no object
    for other in ('"b1"', "3", "null", "true"):                                            # other JSON values
        assert R.returned(_call(other)) == [], other
    for text in ("lent", "{not json", "", '{"id": "b1"} trailing'):                      # not JSON, empty
        assert R.returned(_call(text)) == [], text
    assert R.returned(_call(None)) == []                                                  # None output
    assert R.returned(_call('{"id":"b1"}', status=404)) == []                            # a refused call
    refused = SimpleNamespace(ok=False, output='{"id":"b1"}')                              # even if it holds JSON
    assert R.returned(refused) == []
    assert R.returned(SimpleNamespace(ok=True, output='{"page":1,"rows":[{"id":"A"}]}')) == [
        {"page": 1, "rows": [{"id": "A"}]}]                                                # one level deep


def test_returned_deep_gives_the_records_of_a_listing_too():
    page = SimpleNamespace(ok=True, output='{"page":1,"rows":[{"id":"A","parts":[{"id":"A1"}]},"x",{"id":"B"}],'
                                           '"next":{"id":"C"}}')
    assert [r.get("id", "page") for r in R.returned(page, deep=True)] == ["page", "A", "A1", "B", "C"]
    assert R.returned(page) == [json.loads(page.output)]                                  # default unchanged
    assert [r["id"] for r in R.returned(_call('[{"id":"b1","sub":[[{"id":"b2"}]]},{"id":"b3"}]'), deep=True)] == [
        "b1", "b2", "b3"]                                                                  # lists in lists
    assert R.returned(_call('{"id":"b1"}', status=404), deep=True) == []                  # refused: still nothing
    assert R.returned(_call("not json"), deep=True) == []


def test_same_compares_decoded_json_by_value_with_a_tolerance_by_key():
    tol = {"deposit": 0.005}
    want = {"S1": {"deposit": 12.3, "party": 4, "guests": [{"name": "Ada", "deposit": 1.0}]}}
    assert R.same({"S1": {"party": 4, "deposit": 12.299999999999999, "guests": [{"name": "Ada", "deposit": 1.004}]}},
                  want, tol)                                                                # nested, key order free
    assert not R.same({"S1": {"deposit": 12.31, "party": 4, "guests": [{"name": "Ada", "deposit": 1.0}]}}, want, tol)
    assert not R.same({"S1": {"deposit": 12.3, "party": 4, "guests": [{"name": "Ada", "deposit": 1.006}]}}, want, tol)
    assert not R.same({"S1": {"deposit": 12.3, "party": 4.001, "guests": [{"name": "Ada", "deposit": 1.0}]}},
                      want, tol)                                                            # "party" not named: exact
    assert R.same(12.304, 12.3, tol, "deposit") and not R.same(12.304, 12.3, tol)          # the key decides
    assert R.same([1, 2], [1, 2], {}) and not R.same([2, 1], [1, 2], {}) and not R.same([1], [1, 2], {})
    assert R.same([12.301, 7.0], [12.3, 7.004], tol, "deposit")                            # a list keeps its key
    assert not R.same({"a": 1}, {"a": 1, "b": 2}, {}) and not R.same({"a": 1, "b": 2}, {"a": 1}, {})  # key sets
    assert not R.same({"a": 1}, {"b": 1}, {}) and not R.same([{"a": 1}], {"a": 1}, {})
    assert not R.same({"a": 1}, [{"a": 1}], {}) and not R.same("12.3", 12.3, tol, "deposit")
    infinite = {"deposit": float("inf")}
    for wrong in (float("nan"), float("inf"), -float("inf")):                               # never within it
        assert not R.same(wrong, 12.3, tol, "deposit"), wrong
        assert not R.same(wrong, wrong, tol, "deposit"), wrong
        assert not R.same(12.3, wrong, tol, "deposit"), wrong
    assert not R.same(float("nan"), float("nan"), {})                                       # nan is not == itself
    assert R.same(1e300, 1.0, infinite, "deposit")                                          # an infinite tolerance
    assert not R.same(True, 1.004, {"x": 0.005}, "x") and R.same(1, 1.004, {"x": 0.005}, "x")  # bool: no number
    assert not R.same(1.004, True, {"x": 0.005}, "x")
    assert not R.same(False, 0.001, {"x": 0.005}, "x")
    assert not R.same(True, 1, {}) and not R.same(0, False, {}) and R.same(2, 2.0, {})     # JSON: true is not 1
    assert R.same(True, True, {}) and not R.same({"ok": True}, {"ok": 1}, {})
    assert R.same(None, None, {}) and not R.same(None, 0, {}) and not R.same(None, {}, {})
