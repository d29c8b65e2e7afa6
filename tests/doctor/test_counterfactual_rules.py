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

from rft_sdk.doctor._generic import SupersetEndState, WrongAnswer, answers_overlap
from rft_sdk.doctor._probes import HACK
from rft_sdk.doctor._severity import Outcome, judge_probe


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


def test_wrong_answer_does_not_judge_an_item_whose_borrowed_answer_is_partly_right() -> None:
    from rft_sdk.doctor._probes import ProbeContext

    items = [{"actions": [], "reference_answer": "a.py, b.py"}, {"actions": [], "reference_answer": "b.py, c.py"},
             {"actions": [], "reference_answer": "d.py"}]
    probe = WrongAnswer()
    probe.prepare(ProbeContext(items))
    assert not probe.judged(items[0])  # its donor (item 1) shares b.py
    assert probe.judged(items[1])      # its donor (item 2) shares nothing
