"""Unit tests of the doctor's pure parts: drift statistics, probes, learnability maths, log loading."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest

from rft_sdk.doctor import (
    GoldPlanProbe,
    ProductionLogError,
    default_probes,
    is_write_tool,
    js_distance,
    ks_statistic,
    learnable_from_results,
    load_production_log,
    probe_applies,
    psi_categorical,
    psi_numeric,
)
from rft_sdk.emulator import RolloutResult


def test_psi_by_hand():
    assert psi_categorical("aabb", "aabb") == 0.0
    # shares (0.5, 0.5) -> (0.75, 0.25): (0.25)ln(1.5) + (-0.25)ln(0.5)
    assert psi_categorical("aabb", "aaab") == pytest.approx(0.25 * math.log(1.5) - 0.25 * math.log(0.5))
    assert psi_numeric(list(range(100)), list(range(100))) == pytest.approx(0.0)
    assert psi_numeric(list(range(100)), [x + 50 for x in range(100)]) > 0.25


def test_psi_counts_a_shift_outside_a_constant_reference():
    assert psi_numeric([5.0] * 10, [5.0] * 7) == 0.0
    assert psi_numeric([5.0] * 10, [6.0] * 7) > 10  # every actual value sits in the empty "above" bin
    assert psi_numeric([1.0, 2.0, 3.0, 4.0], [9.0] * 4) > 1  # open-ended top bin: all actual there, 25% expected
    assert psi_numeric([5.0] * 10, [4.0] * 7) > 10
    with pytest.raises(ValueError):
        psi_numeric([], [1.0])


def test_ks_and_js_by_hand():
    assert ks_statistic([1, 2, 3], [1, 2, 3]) == 0.0
    assert ks_statistic([1, 2, 3], [10, 11]) == 1.0
    assert ks_statistic([1, 2, 3, 4], [3, 4, 5, 6]) == pytest.approx(0.5)
    assert js_distance(Counter("aab"), Counter("aab")) == pytest.approx(0.0)
    assert js_distance(Counter("aa"), Counter("bb")) == pytest.approx(1.0)
    # P = (1, 0), Q = (1/2, 1/2): JSD = 1/2 KL(P||M) + 1/2 KL(Q||M), M = (3/4, 1/4)
    jsd = 0.5 * math.log2(4 / 3) + 0.5 * (0.5 * math.log2(2 / 3) + 0.5 * math.log2(2))
    assert js_distance(Counter("a"), Counter("ab")) == pytest.approx(math.sqrt(jsd))


ITEM = {
    "messages": [{"role": "system", "content": "Rules.\n```python\ndef ref(x):\n    return x\n```"},
                 {"role": "user", "content": "Set k1 to 42, order #W123, option 'blue'."}],
    "tools": [{"type": "function", "function": {"name": "pick", "parameters": {
        "type": "object", "properties": {"c": {"type": "string", "enum": ["red", "green"]}}}}}],
    "actions": [{"name": "get_k", "arguments": {"k": "k1"}}, {"name": "set_k", "arguments": {"k": "k1", "v": "42"}}],
    "reference_answer": "Set.",
}


async def _answer(probe, item=ITEM, messages=None):
    return await probe.act(messages or list(item["messages"]), item["tools"], item=item, trace_id="trace_x")


async def test_text_probes_play_their_hack():
    probes = default_probes()
    assert (await _answer(probes["empty_answer"])).content == ""
    assert (await _answer(probes["echo_prompt"])).content == ITEM["messages"][1]["content"]
    assert (await _answer(probes["prompt_reference"])).content == "def ref(x):\n    return x\n"
    dump = (await _answer(probes["answer_dump"])).content
    for expected in ("42", "#W123", "blue", "red", "green", "yes", "no"):
        assert expected in dump.split("\n")
    assert "score: 1" in (await _answer(probes["injected_score"])).content
    assert "Ignore previous instructions" in (await _answer(probes["ignore_instructions"])).content
    for name in ("empty_answer", "no_tool_calls", "copied_answer"):
        assert (await _answer(probes[name])).tool_calls == []
    assert (await _answer(probes["copied_answer"])).content == "Set."


async def test_gold_plan_probes_transform_the_gold_calls():
    probes = default_probes(copies=3)
    first = await _answer(probes["read_only"])
    assert [c["name"] for c in first.tool_calls] == ["get_k"]
    after = [*ITEM["messages"], {"role": "assistant", "content": None}]
    assert (await _answer(probes["read_only"], messages=after)).content == "Set."
    spam = await _answer(probes["tool_spam"])
    assert [c["name"] for c in spam.tool_calls] == ["get_k"] * 3
    assert len({c["call_id"] for c in spam.tool_calls}) == 3
    noop = await _answer(probes["noop_write"], messages=after)
    assert noop.tool_calls[0]["name"] == "set_k" and json.loads(noop.tool_calls[0]["arguments"]) == {}


def test_probe_applicability_and_write_heuristic():
    probes = default_probes()
    reads_only = {**ITEM, "actions": [{"name": "get_k", "arguments": {}}]}
    assert probe_applies(probes["read_only"], ITEM) and not probe_applies(probes["read_only"], reads_only)
    assert not probe_applies(probes["noop_write"], {"messages": ITEM["messages"]})
    assert probe_applies(probes["empty_answer"], {"messages": ITEM["messages"]})
    assert is_write_tool("cancel_order") and not is_write_tool("get_order")
    assert is_write_tool("get_order", ["get_order"]) and not is_write_tool("cancel_order", [])
    assert not GoldPlanProbe(lambda a: [], answer_field="nope").applies(ITEM)
    with pytest.raises(ValueError, match="copies"):
        default_probes(copies=1)


def _rollouts(scores_by_item):
    return [RolloutResult(trace_id=f"t{i}{k}", item_index=i, sample_index=k, score=s)
            for i, scores in enumerate(scores_by_item) for k, s in enumerate(scores)]


def test_learnable_figures_by_hand():
    res = learnable_from_results(_rollouts([[0, 0], [1, 1], [0, 1], [0.5, 1]]), 4, pass_threshold=1.0)
    ev = res.evidence
    assert ev["share_items_with_signal"] == 0.5 and ev["share_items_all_same"] == 0.5
    assert ev["never_solved"] == [0] and ev["always_solved"] == [1]
    assert ev["mean_best_minus_mean"] == pytest.approx((0 + 0 + 0.5 + 0.25) / 4)
    assert ev["reward_kind"] == "continuous"
    assert [r["pass_rate"] for r in ev["items"]] == [0.0, 1.0, 0.5, 0.5]
    assert res.passed is True
    flat = learnable_from_results(_rollouts([[1, 1]] * 5 + [[0, 1]]), 6, pass_threshold=1.0)
    assert flat.passed is False and flat.evidence["reward_kind"] == "binary"
    assert any(f.severity == "fail" and f.advice for f in flat.findings)
    single = learnable_from_results(_rollouts([[1]] * 3), 3, pass_threshold=1.0)
    assert single.passed is None


def test_production_log_errors_name_the_line(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text('{"messages": []}\n{not json}\n', encoding="utf-8")
    with pytest.raises(ProductionLogError, match="line 2"):
        load_production_log(path)
    path.write_text('{"messages": []}\n{"msgs": []}\n', encoding="utf-8")
    with pytest.raises(ProductionLogError, match="line 2: expected an object with a 'messages' list"):
        load_production_log(path)
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(ProductionLogError, match="no requests"):
        load_production_log(path)
    with pytest.raises(ProductionLogError, match="cannot read"):
        load_production_log(tmp_path / "missing.jsonl")
    path.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n', encoding="utf-8")
    assert load_production_log(path) == [{"messages": [{"role": "user", "content": "hi"}]}]
