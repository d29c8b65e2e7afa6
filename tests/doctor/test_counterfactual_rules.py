"""Rules found by an outside team's held-back doctor suite (honest graders the doctor FAILed):

* ``superset_end_state`` only adds writes to the gold's outcome: an honest grader lowers the score by any
  amount (set-F1 over the comments paid 0.8 for one stray comment, above the half-way line), one that
  ignores extra writes does not lower it at all;
* an extra write that is one of the gold's own calls again changes nothing (the end state is the gold's);
* ``wrong_answer`` (the honest-but-wrong baseline) does not judge an item whose borrowed answer is a list
  sharing an element with this item's (partly right here: set-F1 rightly pays it 0.667); the rollout still
  counts in the baseline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rft_sdk.doctor._choices import listed_records
from rft_sdk.doctor._generic import SelfCertification, SupersetEndState, WrongAnswer, answers_overlap
from rft_sdk.doctor._probes import HACK, ProbeContext
from rft_sdk.doctor._scope import sibling_values
from rft_sdk.doctor._severity import Outcome, judge_probe
from rft_sdk.doctor._unhackable import took_effect


def _verdict(scores: list[float], *, must_lower: bool) -> str:
    outcomes = [Outcome(item=i, score=s, calls=3, must_lower=must_lower) for i, s in enumerate(scores)]
    return judge_probe(HACK, outcomes, [1.0] * len(scores), pass_threshold=1.0).verdict


def test_a_superset_probe_fails_only_a_grader_that_does_not_lower_the_score() -> None:
    assert _verdict([0.8] * 10, must_lower=True) == "pass"          # honest: set-F1 over the writes
    assert _verdict([0.99] * 10, must_lower=True) == "pass"         # any fall is the grader noticing
    assert _verdict([1.0] * 10, must_lower=True) == "fail"          # ignores the extra writes
    assert _verdict([0.8] * 10, must_lower=False) == "fail"         # the half-way rule would call F1 a hack


@dataclass
class _Call:
    name: str
    arguments: str
    ok: bool = True


def test_an_extra_write_repeating_a_gold_call_is_no_counterfactual() -> None:
    probe = SupersetEndState()
    item = {"actions": [{"name": "set_key", "arguments": {"key": "a", "value": 1}}], "reference_answer": "done"}
    gold = [_Call("set_key", '{"key": "a", "value": 1}')]
    assert not probe.counterfactual(item, [*gold, _Call("set_key", '{"value": 1, "key": "a"}')])
    assert not probe.counterfactual(item, [*gold, _Call("set_key", '{"key": "b", "value": 2}', ok=False)])
    assert probe.counterfactual(item, [*gold, _Call("set_key", '{"key": "b", "value": 2}')])


def test_list_answers_sharing_an_element_overlap() -> None:
    assert answers_overlap("src/a.py, src/b.py", "src/b.py, src/c.py")
    assert not answers_overlap("src/a.py, src/b.py", "src/c.py")
    assert not answers_overlap("Paris", "London")
    assert not answers_overlap("42", "43")


def test_list_answers_with_a_marked_line_overlap_by_that_line() -> None:
    """doctor68's royalty set: prose of the statement, then the set on the marked line; a donor's line holding
    this item's one work is partly right here (a set F1 pays 0.67), so wrong_answer must not judge it."""
    mine = "Mateo Ibarra's 2025-Q3 statement holds 6 lines; unmatched: MW-1404 (North Pier).\nANSWER: MW-1404"
    donor = "Mateo Ibarra's 2025-Q4 statement: MW-1401, MW-1404 unmatched.\nANSWER: MW-1401, MW-1404"
    assert answers_overlap(mine, donor)
    assert not answers_overlap(mine, "Statement: MW-1401 unmatched.\nANSWER: MW-1401, MW-1402")
    assert not answers_overlap("Nothing unmatched.\nANSWER: none", "ANSWER: none")  # one element each: equal, no list


def test_wrong_answer_does_not_judge_an_item_whose_borrowed_answer_is_partly_right() -> None:
    items = [{"actions": [], "reference_answer": "a.py, b.py"}, {"actions": [], "reference_answer": "b.py, c.py"},
             {"actions": [], "reference_answer": "d.py"}]
    probe = WrongAnswer()
    probe.prepare(ProbeContext(items))
    assert not probe.judged(items[0])  # its donor (item 1) shares b.py
    assert probe.judged(items[1])      # its donor (item 2) shares nothing


# ---- issue 37, second outside run: what an extra write changed decides whether it is judged -------------


@dataclass
class _Said:
    """A tool call as the emulator records it, with the server's ``changed`` (x-rft-state-changed)."""

    name: str
    arguments: str
    ok: bool = True
    changed: bool | None = None


def test_an_extra_write_the_server_says_changed_nothing_is_no_counterfactual() -> None:
    # the honest config grader's false alarm: the extra write set a value the key already had
    probe = SupersetEndState()
    item = {"actions": [{"name": "set_key", "arguments": {"key": "a", "value": 1}}], "reference_answer": "done"}
    gold = [_Said("set_key", '{"key": "a", "value": 1}', changed=True)]
    assert not probe.counterfactual(item, [*gold, _Said("set_key", '{"key": "b", "value": 2}', changed=False)])
    assert probe.counterfactual(item, [*gold, _Said("set_key", '{"key": "b", "value": 2}', changed=True)])
    assert probe.counterfactual(item, [*gold, _Said("set_key", '{"key": "b", "value": 2}')])  # older server


@dataclass
class _Result:
    tool_calls: list[Any]
    end_state: str | None


def test_an_end_state_equal_to_the_gold_replays_is_no_counterfactual() -> None:
    probe = SupersetEndState()
    item = {"actions": [{"name": "set_key", "arguments": {"key": "a", "value": 1}}], "reference_answer": "done"}
    calls = [_Said("set_key", '{"key": "a", "value": 1}'), _Said("set_key", '{"key": "b", "value": 2}')]
    assert not took_effect(probe, item, _Result(calls, "sha256:gold"), "sha256:gold")  # type: ignore[arg-type]
    assert took_effect(probe, item, _Result(calls, "sha256:other"), "sha256:gold")  # type: ignore[arg-type]
    assert took_effect(probe, item, _Result(calls, None), "sha256:gold")  # type: ignore[arg-type]  # no digest


def test_self_certification_is_judged_only_when_a_certifying_call_changed_state() -> None:
    tools = [{"type": "function", "function": {"name": "set_status", "parameters": {
        "type": "object", "properties": {"ticket": {"type": "string"},
                                         "status": {"type": "string", "enum": ["open", "confirmed"]}},
        "required": ["ticket", "status"]}}}]
    item = {"actions": [{"name": "read_ticket", "arguments": {"ticket": "T1"}}], "reference_answer": "done",
            "tools": tools}
    probe = SelfCertification(write_tools={"fix"})
    probe.prepare(ProbeContext([item], write_tools={"fix"}))
    assert probe.calls(item) == []  # set_status: neither a known write nor of unknown kind
    probe.prepare(ProbeContext([item], write_tools={"fix"}, unknown_tools={"set_status"}))
    assert probe.calls(item) == [{"name": "set_status", "arguments": {"ticket": "T1", "status": "confirmed"}}]
    assert probe.counterfactual(item, [_Said("set_status", "{}", changed=True)])
    assert not probe.counterfactual(item, [_Said("set_status", "{}", changed=False)])
    assert not probe.counterfactual(item, [_Said("set_status", "{}")])  # unknown kind, nothing said


def test_siblings_come_from_the_items_own_collections() -> None:
    item = {"flights": {"RF100": {"fare": 1}, "RF101": {"fare": 2}, "RF102": {"fare": 3}},
            "people": [{"id": 7, "name": "a"}, {"id": 8, "name": "b"}], "tags": ["x", "y"]}
    assert sibling_values("RF101", [item]) == ["RF100", "RF102"]
    assert sibling_values("RF101", [item], exclude={'"RF100"'}) == ["RF102"]
    assert sibling_values(7, [item]) == [8]
    assert sibling_values("x", [item]) == ["y"]
    assert sibling_values("RF999", [item]) == [] and sibling_values(True, [item]) == []
    assert sibling_values("7", [item]) == []  # another type is another kind of value


def test_a_mapping_of_labels_to_codes_holds_siblings() -> None:
    """doctor68's podcast feeds: ``{"public": "FD-QO-PUB", "premium": "FD-QO-PRM"}``, each code's label its record."""
    show = {"show": "The Quiet Orbit", "release": "05:00", "feeds": {"public": "FD-QO-PUB", "premium": "FD-QO-PRM"}}
    assert sibling_values("FD-QO-PRM", [show]) == ["FD-QO-PUB"]
    assert listed_records("FD-QO-PRM", "FD-QO-PUB", [show]) == ({"label": "premium"}, {"label": "public"})
    person = {"name": "Ana Lima", "city": "Porto"}  # a record's words, not codes
    assert sibling_values("Porto", [person]) == []
    mixed = {"a": "FD-QO-PUB", "b": "X1"}  # codes of two shapes
    assert sibling_values("X1", [mixed]) == []


def test_superset_end_state_never_writes_over_a_record_the_gold_writes() -> None:
    """doctor18: another item's ``set_setpoint(nursery, 68, "F")`` after this item's ``set_setpoint(nursery, 20,
    "C")`` is the same outcome, which an honest grader rightly pays: a write to a record the gold writes with
    that tool replaces the gold's value (``overwritten_write``'s question), it adds no change."""
    def item(room: str, value: int, unit: str, answer: str, mode_room: str | None = None) -> dict:
        actions = [{"name": "set_setpoint", "arguments": {"room": room, "value": value, "unit": unit}}]
        if mode_room:
            actions.append({"name": "set_mode", "arguments": {"room": mode_room, "mode": "eco"}})
        return {"actions": actions, "reference_answer": answer}

    items = [item("nursery", 20, "C", "20 C"), item("nursery", 68, "F", "68 F", mode_room="office")]
    probe = SupersetEndState(write_tools={"set_setpoint", "set_mode"})
    probe.prepare(ProbeContext(items, write_tools={"set_setpoint", "set_mode"}))
    played = [call for step in probe.plan(items[0]) for call in step]
    assert played == [items[0]["actions"][0], {"name": "set_mode", "arguments": {"room": "office", "mode": "eco"}}]
