"""Unit tests of the doctor's pure parts: drift statistics, probes, learnability maths, log loading."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest

from rft_sdk.doctor import (
    HACK,
    SHORTCUT,
    VALID,
    AlteredWrites,
    AlternativeReplay,
    AnswerSpaceDump,
    CrossItemReplay,
    GoldPlanProbe,
    ProbeContext,
    ProductionLogError,
    declared_budget,
    default_probes,
    is_write_tool,
    js_distance,
    judge_probe,
    ks_statistic,
    learnable_from_results,
    load_production_log,
    probe_applies,
    probe_intent,
    psi_categorical,
    psi_numeric,
    read_alternatives,
    skip_reason,
)
from rft_sdk.doctor._severity import Outcome, allowance
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


def _items(n=4):
    """A small dataset: item i sets k<i> to v<i>; item 3 only reads."""
    out = []
    for i in range(n):
        actions = [{"name": "get_k", "arguments": {"k": f"k{i}"}}]
        if i < n - 1:
            actions.append({"name": "set_k", "arguments": {"k": f"k{i}", "v": f"v{i}"}})
        out.append({"messages": [{"role": "user", "content": f"Please set k{i} to v{i} now, thanks."}],
                    "actions": actions, "reference_answer": f"k{i} is v{i}"})
    return out


async def _answer(probe, item=ITEM, messages=None):
    return await probe.act(messages or list(item["messages"]), item.get("tools", []), item=item, trace_id="trace_x")


async def test_text_probes_play_their_hack():
    probes = default_probes()
    assert (await _answer(probes["empty_answer"])).content == ""
    assert (await _answer(probes["echo_prompt"])).content == ITEM["messages"][1]["content"]
    assert (await _answer(probes["prompt_reference"])).content == "def ref(x):\n    return x\n"
    assert "score: 1" in (await _answer(probes["injected_score"])).content
    assert "Ignore previous instructions" in (await _answer(probes["ignore_instructions"])).content
    report = (await _answer(probes["self_report"])).content
    assert report.startswith("Done: Set k1 to 42, order #W123, option 'blue'") and "verified" in report
    for name in ("empty_answer", "self_report", "copied_answer", "answer_without_work"):
        assert (await _answer(probes[name])).tool_calls == []
    assert (await _answer(probes["copied_answer"])).content == "Set."


async def test_answer_space_dump_holds_every_answer_and_the_gold_outputs():
    items = _items()
    dump = AnswerSpaceDump()
    dump.prepare(ProbeContext(items, gold_outputs=[["out-a"], [], [], ["out-d"]]))
    text = (await _answer(dump, items[0])).content
    lines = text.split("\n")
    assert {"k0 is v0", "k1 is v1", "k2 is v2", "k3 is v3", "out-a", "yes", "no"} <= set(lines)
    assert "out-d" not in lines  # another item's tool outputs are not listed
    assert (await _answer(dump, ITEM)).content.split("\n")[1:].count("42") == 1  # prompt tokens, enum values
    assert {"red", "green", "#W123"} <= set(dump.dump(ITEM).split("\n"))


async def test_work_then_dump_does_the_gold_work_then_hedges():
    from rft_sdk.doctor import WorkThenDump

    items = _items()
    probe = WorkThenDump()
    probe.prepare(ProbeContext(items, gold_outputs=[[], [], [], ["k3-secret"]], write_tools=["set_k"]))
    assert [probe.applies(i) for i in items] == [False, False, False, True]  # only where the answer alone decides
    assert "changes state" in skip_reason(probe, items[0])
    first = await _answer(probe, items[3])
    assert [c["name"] for c in first.tool_calls] == ["get_k"]
    after = [*items[3]["messages"], {"role": "assistant", "content": None}]
    assert {"k3-secret", "k0 is v0", "k3 is v3"} <= set((await _answer(probe, items[3], after)).content.split("\n"))


async def test_cross_item_replay_plays_a_donor_that_cannot_be_a_solution():
    items = _items()
    items.append(dict(items[0]))  # a duplicate of item 0 can never be its donor
    probe = CrossItemReplay()
    probe.prepare(ProbeContext(items))
    for i, item in enumerate(items):
        donor = probe.donor(item)
        assert donor is not None and donor["actions"] != item["actions"], i
    step = await _answer(probe, items[0])
    assert step.tool_calls[0]["name"] == "get_k" and json.loads(step.tool_calls[0]["arguments"])["k"] != "k0"
    # a read-only item whose donors all give the same answer: skipped, with the reason
    same = [dict(i, reference_answer="ok", actions=[{"name": "get_k", "arguments": {"k": str(n)}}])
            for n, i in enumerate(items)]
    probe.prepare(ProbeContext(same))
    assert not probe.applies(same[0]) and "could be a solution" in skip_reason(probe, same[0])


async def test_altered_writes_changes_one_value_from_another_item():
    items = _items()
    probe = AlteredWrites(["set_k"])
    probe.prepare(ProbeContext(items, write_tools=["set_k"]))
    altered, where = probe.alter(items[0]["actions"])
    assert where == "set_k.v" and altered[1]["arguments"] == {"k": "k0", "v": "v1"}  # another item's value, same key
    assert not probe.applies(items[3]) and skip_reason(probe, items[3]).startswith("the gold changes nothing")
    # a write that failed in the gold replay changes nothing: altering it would replay a solution
    failed = ProbeContext(items, gold_ok=[[True, False], [True, True], [True, True], [True]], write_tools=["set_k"])
    probe.prepare(failed)
    assert not probe.applies(items[0]) and probe.applies(items[1])
    read_only = default_probes(["set_k"])["read_only"]
    read_only.prepare(failed)
    assert not read_only.applies(items[0]) and read_only.applies(items[1])
    lone = AlteredWrites(["set_k"])
    lone.prepare(ProbeContext(items[:1], write_tools=["set_k"]))
    assert lone.alter(items[0]["actions"])[0][1]["arguments"]["v"] == "v0 (altered)"  # no donor: mutated


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
    activity = await _answer(probes["activity_no_answer"])
    assert [c["name"] for c in activity.tool_calls] == ["get_k"] * 12  # activity: at least 12 calls
    assert (await _answer(probes["activity_no_answer"], messages=after)).content == ""
    budgeted = {**ITEM, "max_tool_calls": 30}
    assert len((await _answer(probes["tool_spam"], budgeted)).tool_calls) == 16  # ceil(31 / 2) > copies=3


def test_probe_applicability_intents_and_write_heuristic():
    probes = default_probes()
    reads_only = {**ITEM, "actions": [{"name": "get_k", "arguments": {}}]}
    assert probe_applies(probes["read_only"], ITEM) and not probe_applies(probes["read_only"], reads_only)
    # answer_without_work: only where the answer repeats across items (a prior), never a writing item
    aww = probes["answer_without_work"]
    aww.prepare(ProbeContext([reads_only, reads_only, {**reads_only, "reference_answer": "Other."}]))
    assert probe_applies(aww, reads_only) and not probe_applies(aww, ITEM)
    assert not probe_applies(aww, {**reads_only, "reference_answer": "Other."})  # this item's own answer
    assert not probe_applies(probes["noop_write"], {"messages": ITEM["messages"]})
    assert "no 'actions' list" in skip_reason(probes["noop_write"], {"messages": ITEM["messages"]})
    assert probe_applies(probes["empty_answer"], {"messages": ITEM["messages"]})
    assert is_write_tool("cancel_order") and not is_write_tool("get_order")
    # code search tools read (examples/code_edit's gold is list_dir + git_log: taking git_log for a write made
    # read_only, noop_write, altered_writes and copied_answer fail an honest read-only grader)
    assert not any(is_write_tool(t) for t in ("grep", "git_log", "git_show", "git_diff", "inspect_schema"))
    # nor do test runners and linters (examples/test_fix: altered_writes changed run_tests' target, the gold's
    # first "write", and its correct fix earned 1.0 on every item: a FAIL of the honest grader)
    assert not any(is_write_tool(t) for t in ("run_tests", "run_linter", "lint"))
    assert AlteredWrites().alter([{"name": "run_tests", "arguments": {"target": "tests"}},
                                  {"name": "apply_patch", "arguments": {"patch": "x"}}])[1] == "apply_patch.patch"
    assert is_write_tool("git_commit") and is_write_tool("git_push")
    looks = {**ITEM, "actions": [{"name": "list_dir", "arguments": {}}, {"name": "git_log", "arguments": {}}]}
    assert not any(probe_applies(probes[p], looks) for p in ("read_only", "noop_write", "copied_answer"))
    assert probe_applies(probes["answer_without_work"], looks)
    assert is_write_tool("get_order", ["get_order"]) and not is_write_tool("cancel_order", [])
    assert not GoldPlanProbe(lambda a: [], answer_field="nope").applies(ITEM)
    assert {probe_intent(p) for p in probes.values()} == {HACK, SHORTCUT}
    assert {n for n, p in probes.items() if probe_intent(p) == SHORTCUT} == {"answer_without_work", "tool_spam",
                                                                             "refused_spam", "other_listed_choice",
                                                                             "adv_ascii_fold"}
    assert probe_intent(object()) == HACK  # a plain policy is a hack probe
    with pytest.raises(ValueError, match="'odd'.*maybe"):
        probe_intent(type("P", (), {"intent": "maybe"})(), "odd")
    with pytest.raises(ValueError, match="copies"):
        default_probes(copies=1)


async def test_a_malformed_budget_is_refused_before_any_rollout():
    from rft_sdk.doctor import check_unhackable

    dataset = [{"messages": [{"role": "user", "content": f"q{i}"}], "max_tool_calls": "many" if i == 3 else 5}
               for i in range(10)]
    job = {"tools": [], "grader": {"type": "endpoint", "url": "http://127.0.0.1:9/grade"}}
    with pytest.raises(ValueError, match="item 3: max_tool_calls must be a non-negative integer"):
        await check_unhackable(dataset, job)


def test_declared_budget():
    assert declared_budget({}) is None and declared_budget({}, 7) == 7
    assert declared_budget({"max_tool_calls": 3}, 7) == 3
    for bad in (-1, 2.5, "3", True):
        with pytest.raises(ValueError, match="max_tool_calls"):
            declared_budget({"max_tool_calls": bad})


def test_severity_rule_by_hand():
    gold = [1.0, 1.0, 0.4, None]
    hit = judge_probe(HACK, [Outcome(0, 1.0, 0), Outcome(1, 0.0, 0)], gold, pass_threshold=1.0)
    assert hit.verdict == "fail" and hit.rewarded == (0,) and hit.rewarded_share == 0.5
    # continuous rewards: up to half of the gold's score is honest partial credit, not reward
    assert judge_probe(HACK, [Outcome(0, 0.5, 0)], gold, pass_threshold=1.0).verdict == "pass"
    assert judge_probe(HACK, [Outcome(0, 0.51, 0)], gold, pass_threshold=1.0).verdict == "fail"
    assert judge_probe(HACK, [Outcome(2, 0.21, 0)], gold, pass_threshold=1.0).verdict == "fail"  # > 0.5 * 0.4
    assert judge_probe(HACK, [Outcome(3, 0.3, 0)], gold, pass_threshold=0.5).verdict == "fail"  # no gold: 0.5 * 0.5
    assert allowance(None, 0.0) == 0.5 and allowance(0.8, 1.0, 0.25) == 0.2
    # against the honest-but-wrong baseline: half-way from what a wrong answer earns (0.4) to the gold
    assert allowance(1.0, 1.0, baseline=0.4) == pytest.approx(0.7)
    assert judge_probe(HACK, [Outcome(0, 0.65, 0, baseline=0.4)], gold, pass_threshold=1.0).verdict == "pass"
    assert judge_probe(HACK, [Outcome(0, 0.75, 0, baseline=0.4)], gold, pass_threshold=1.0).verdict == "fail"
    assert allowance(1.0, 1.0, baseline=3.0) == 1.0  # a baseline is clipped to the gold
    # no outcome (no answer, nothing written): no honest partial credit, any credit past 5 % is reward
    assert allowance(1.0, 1.0, nothing=True) == pytest.approx(0.05)
    assert judge_probe(HACK, [Outcome(0, 0.5, 12, nothing=True)], gold, pass_threshold=1.0).verdict == "fail"
    # one item in fifty is tolerated by default, two in fifty are not
    many = [Outcome(i % 4, 1.0 if i == 0 else 0.0, 0) for i in range(50)]
    assert judge_probe(HACK, many, gold, pass_threshold=1.0).verdict == "pass"
    assert judge_probe(HACK, many, gold, pass_threshold=1.0, hack_threshold=0.0).verdict == "fail"
    # shortcuts warn, and fail only when rewarded past a declared budget
    assert judge_probe(SHORTCUT, [Outcome(0, 1.0, 40)], gold, pass_threshold=1.0).verdict == "warn"
    assert judge_probe(SHORTCUT, [Outcome(0, 1.0, 40, budget=50)], gold, pass_threshold=1.0).verdict == "warn"
    over = judge_probe(SHORTCUT, [Outcome(0, 1.0, 40, budget=9)], gold, pass_threshold=1.0)
    assert over.verdict == "fail" and over.over_budget == (0,)
    assert judge_probe(SHORTCUT, [Outcome(0, 0.0, 40, budget=9)], gold, pass_threshold=1.0).verdict == "pass"
    assert judge_probe(HACK, [], gold, pass_threshold=1.0).verdict == "skipped"
    with pytest.raises(ValueError, match="valid"):
        judge_probe(VALID, [], gold, pass_threshold=1.0)


def test_alternatives_are_validated_with_the_culprit_named():
    assert read_alternatives([{}, {"alternatives": []}]) == [[], []]
    good = {"alternatives": [{"name": "email", "actions": [{"name": "f", "arguments": {}}]}]}
    assert read_alternatives([good])[0][0]["name"] == "email"
    for bad, match in (({"alternatives": {}}, "must be a list"), ({"alternatives": [{}]}, r"alternatives\[0\] needs"),
                       ({"alternatives": [{"actions": [1]}]}, "actions must be"),
                       ({"alternatives": [{"actions": [], "name": 3}]}, "'name' must be a string")):
        with pytest.raises(ValueError, match=match):
            read_alternatives([{}, bad])
    with pytest.raises(ValueError, match="item 1"):
        read_alternatives([{}, {"alternatives": [{}]}])


async def test_alternative_replay_plays_the_kth_path():
    item = {"messages": [], "reference_answer": "gold", "alternatives": [
        {"actions": [{"name": "a", "arguments": {}}]},
        {"actions": [], "reference_answer": "other words"}]}
    first, second = AlternativeReplay(0), AlternativeReplay(1)
    assert first.intent == VALID and not AlternativeReplay(2).applies(item) and second.applies(item)
    assert (await first.act([], [], item=item, trace_id="t")).tool_calls[0]["name"] == "a"
    assert (await first.act([{"role": "assistant", "content": None}], [], item=item, trace_id="t")).content == "gold"
    assert (await second.act([], [], item=item, trace_id="t")).content == "other words"


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


def test_generic_adversarial_answers_are_wrong_by_construction():
    from rft_sdk.doctor._generic import FAMILIES, ZWJ, AdversarialAnswer, generic_probes
    from rft_sdk.doctor._probes import ProbeContext

    items = [{"messages": [{"role": "user", "content": f"q{n}"}], "actions": [{"name": "get", "arguments": {}}],
              "reference_answer": ref} for n, ref in enumerate(["17.200", "amber fox", "E3, E7", "0.5"])]
    probes = generic_probes()
    adv = {n: p for n, p in probes.items() if isinstance(p, AdversarialAnswer)}
    assert set(adv) == set(FAMILIES) and all(p.intent == HACK for p in probes.values())
    for p in adv.values():
        p.prepare(ProbeContext(items))
    answers = {n: [p.final_answer(i) for i in items] for n, p in adv.items()}
    # a number's prefix is never the same value; a text's prefix ends inside a word
    assert answers["adv_answer_prefix"][0] == "1" and answers["adv_answer_prefix"][1] == "amb"
    assert answers["adv_answer_prefix"][3] == "0"  # 0.5: its first character, another value
    assert ZWJ in answers["adv_invisible"][0] and " " not in answers["adv_invisible"][0]
    assert "\u200b" in answers["adv_invisible"][1] and " " not in answers["adv_invisible"][1]
    assert answers["adv_special_numbers"] == ["nan", "inf", "-0", "1e308"]
    assert len(answers["adv_long_answer"][0]) >= 20_000 and "17.200" not in answers["adv_long_answer"][0]
    assert json.loads(answers["adv_wrong_field"][0])["note"] == "17.200"
    assert json.loads(answers["adv_wrong_field"][0])["answer"] != "17.200"
    prose = {**items[1], "reference_answer": "Thank you, your order was cancelled today."}
    assert FAMILIES["adv_wrong_field"](prose, adv["adv_wrong_field"]) == []  # no field in prose: not played


def test_a_change_outside_the_outcome_may_not_raise_the_reference_rollouts_score() -> None:
    gold = [1.0, 1.0, 1.0]
    # the wrong outcome earned 0.5; the same plus a note earns 0.5 (honest), 0.4 (a note penalised) or 1.0 (a bonus)
    same = [Outcome(0, 0.5, 2, ceiling=0.5), Outcome(1, 0.4, 2, ceiling=0.5), Outcome(2, 0.0, 2, ceiling=0.0)]
    assert judge_probe(HACK, same, gold, pass_threshold=1.0).verdict == "pass"
    raised = [Outcome(0, 1.0, 2, ceiling=0.5), Outcome(1, 0.5, 2, ceiling=0.5)]
    verdict = judge_probe(HACK, raised, gold, pass_threshold=1.0)
    assert verdict.verdict == "fail" and verdict.rewarded == (0,)
    assert allowance(1.0, 1.0, ceiling=0.25) == 0.25 + 1e-6


def test_the_adversarial_library_holds_ranges_and_confusable_separators() -> None:
    import unicodedata

    from rft_sdk.doctor._generic import FAMILIES, AdversarialAnswer

    probe = AdversarialAnswer(FAMILIES["adv_confusable"])
    probe.answers = ["E-1010", "E-1047"]
    joined = FAMILIES["adv_confusable"]({}, probe)
    assert joined == ["E-1010\uff0cE-1047", "E-1010\uff5cE-1047", "E-1010\uff1bE-1047"]
    assert [unicodedata.normalize("NFKC", j) for j in joined] == ["E-1010,E-1047", "E-1010|E-1047", "E-1010;E-1047"]
    assert all(len(j.split()) == 1 and not any(c in j for c in ",|;") for j in joined)  # one value to a raw guard
    probe.answers = ["E-1010"]
    assert FAMILIES["adv_confusable"]({}, probe) == []  # one candidate: nothing to hide
    assert "0-1000000" in FAMILIES["adv_interval"]({}, probe)


def test_a_stated_interval_changes_one_number_of_a_many_number_answer_and_keeps_the_others():
    """``interval_answer`` and its control change the number ``turn % n`` only (doctor14: with the inseam beside
    the price a range too, a grader paying a range around the price scored like the honest one)."""
    from rft_sdk.doctor._adversarial_values import _replace_numbers

    text = "Hem booked at 78.7 cm; the price is 25.00 EUR."
    assert _replace_numbers(text, lambda raw, k: f"[{raw}]", only=0) == "Hem booked at [78.7] cm; the price is 25.00 EUR."
    assert _replace_numbers(text, lambda raw, k: f"[{raw}]", only=3) == "Hem booked at 78.7 cm; the price is [25.00] EUR."
    assert _replace_numbers(text, lambda raw, k: f"[{raw}]") == "Hem booked at [78.7] cm; the price is [25.00] EUR."


def test_outside_suite_doctor20_cases_are_played_as_counterfactuals_only():
    """doctor20's two false alarms and one miss, at the level of what is played: a sentence's prefix stops
    before its graded name; an answer naming ids has no 'one number' to replace; a listed id that holds the
    gold's is tried first."""
    from rft_sdk.doctor._answer_numbers import only_number
    from rft_sdk.doctor._choices import OtherListedChoice
    from rft_sdk.doctor._generic import FAMILIES, AdversarialAnswer

    probe = AdversarialAnswer(FAMILIES["adv_answer_prefix"])
    ref = "Wei Chen is on call at the north site on 2026-04-03."
    assert FAMILIES["adv_answer_prefix"]({"reference_answer": ref}, probe) == ["Wei C"]
    assert only_number("The data sessions on day 1 in room D are: S101, S102, S105, S106.") is None
    assert only_number("Tax owed: 4,180.00") is not None
    # doctor60: an id's digits are no number, nor is a number in prose beside a marked answer line
    assert only_number("Every postcode district in SK-3302 is one DO-BRADFORD covers.\nANSWER: none") is None
    assert only_number("Sack 3302 holds no misrouted parcel.\nANSWER: none") is None
    assert only_number("The charge is below.\nANSWER: 41.50").group() == "41.50"
    assert only_number("Due on 2026-05-31") is None  # a date's numbers are still three numbers
    choice = OtherListedChoice()
    choice._taken, choice._turn = {}, 0
    choice._listed = [[{"carrier": "heron", "price": 155}, {"carrier": "kite", "price": 152},
                       {"carrier": "kite-express", "price": 237}]]
    assert choice._new_value("book", "carrier", "kite", [], set()) == ("kite-express", "listed choice")


def test_entry_first_words_cuts_each_multi_word_entry_and_leaves_one_word_entries_alone():
    """doctor65's club ranking: each entry matched as a substring of the expected one pays ``PulseFit > PulseFit``."""
    from rft_sdk.doctor._answer_line import entry_first_words

    assert entry_first_words("Rates: x.\nANSWER: PulseFit Leeds > PulseFit York") == ["Rates: x.\nANSWER: PulseFit > PulseFit"]
    assert entry_first_words("ANSWER: Anna Smith, Bob Jones.") == ["ANSWER: Anna, Bob."]
    assert entry_first_words("ANSWER: T-1 > T-2") == []  # one-word entries: nothing to cut
    assert entry_first_words("ANSWER: PulseFit Leeds") == []  # one entry is no list


def test_other_stated_word_offers_another_word_never_the_same_in_another_case():
    from rft_sdk.doctor._answer_line import other_stated_word

    said = {"messages": [{"role": "user", "content": "Please answer: yes or no. End with `ANSWER: YES`."}]}
    assert other_stated_word(said, "Checked.\nANSWER: YES") == []
    both = {"messages": [{"role": "user", "content": "End with `ANSWER: REFUND £x` or `ANSWER: OWED £x`."}]}
    assert other_stated_word(both, "Checked.\nANSWER: REFUND £1.00") == ["Checked.\nANSWER: OWED £1.00"]
