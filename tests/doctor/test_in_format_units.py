"""Units of ``rft_sdk.doctor._in_format``: the slots of an answer, what each probe plays on an item, and
the control that keeps ungraded slots out (the end-to-end twins are ``format_twins``)."""

from __future__ import annotations

import json
import math
from typing import Any

from rft_sdk.doctor._in_format import (
    FormatControl,
    HedgedAnswer,
    HedgeWrongFirst,
    InFormatAnswer,
    SupersetUnusedWrite,
    _negated,
    _special,
    _wildcard,
    answer_slots,
    in_format_probes,
    number_of,
    substitute,
)
from rft_sdk.doctor._probes import ProbeContext


def _items(answers: list[str]) -> list[dict[str, Any]]:
    return [{"messages": [{"role": "user", "content": f"q{k}"}], "reference_answer": a,
             "actions": [{"name": "lookup", "arguments": {"key": f"k{k}"}}]} for k, a in enumerate(answers)]


def test_slots_of_json_and_short_text_answers_and_none_in_prose() -> None:
    json_slots = answer_slots(json.dumps({"capital": "Paris", "year": 1889, "tags": ["a"], "ok": True}))
    assert [(s.name, s.kind) for s in json_slots] == [("capital", "string"), ("year", "number"), ("tags", "list")]
    text = answer_slots("12.34 USD")
    assert [(s.name, s.kind, s.value) for s in text] == [("number 0", "number", "12.34"), ("word 0", "string", "USD")]
    assert [s.value for s in answer_slots("Fixed s10 via E3.")] == ["Fixed", "s10", "via", "E3"]  # names, not numbers
    assert answer_slots("Paris") == [] and answer_slots("one two three four five six seven") == []
    assert substitute("12.34 USD", text[0], "nan") == "nan USD"
    assert json.loads(substitute(json.dumps({"year": 1889}), json_slots[1], math.nan), parse_constant=str) == {
        "year": "NaN"}


def test_a_number_with_thousands_separators_is_one_slot() -> None:
    slots = answer_slots("15,031.25 USD")
    assert [(s.name, s.value) for s in slots] == [("number 0", "15,031.25"), ("word 0", "USD")]
    assert number_of(slots[0]) == 15031.25
    assert [substitute("15,031.25 USD", slots[0], v) for v in _negated(slots[0], None)] == ["-15,031.25 USD"]
    assert [s.value for s in answer_slots("3, 4 and 5 bins") if s.kind == "number"] == ["3", "4", "5"]


def test_in_format_values_keep_the_rest_of_the_gold_and_try_every_slot_first_value_first() -> None:
    items = _items([json.dumps({"capital": c, "year": 1800 + k}) for k, c in enumerate(["Paris", "Lyon", "Oslo"])])
    context = ProbeContext(items, gold_scores=[1.0] * 3)
    wildcard, numbers = InFormatAnswer(_wildcard), InFormatAnswer(_special)
    for probe in (wildcard, numbers):
        probe.prepare(context)
    played = [json.loads(wildcard.final_answer(i)) for i in items]
    assert played == [{"capital": "*", "year": 1800}, {"capital": "Lyon", "year": "*"},
                      {"capital": ".*", "year": 1802}]
    assert json.loads(numbers.final_answer(items[0]), parse_constant=str) == {"capital": "Paris", "year": "NaN"}
    assert numbers.describe(items[1])["slot"] == "year"


def test_the_control_keeps_a_slot_that_no_rule_reads_out_of_every_probe() -> None:
    items = _items([json.dumps({"answer": f"finding {k}", "note": f"note {k}"}) for k in range(4)])
    context = ProbeContext(items, gold_scores=[1.0] * 4)
    probes = in_format_probes()
    control, wildcard = probes["format_control"], probes["adv_wildcard_in_format"]
    control.prepare(context)
    assert [control.played(i)[0].name for i in items] == ["answer", "note", "answer", "note"]
    # replacing the answer lowered the score, replacing the note did not: the note is free text
    control.record(context, {0: 0.0, 1: 1.0, 2: 0.0, 3: 1.0}, dict.fromkeys(range(4), 1.0))
    assert control.graded_slots == {"answer"}
    wildcard.prepare(context)
    assert {wildcard.played(i)[0].name for i in items} == {"answer"}


def test_hedges_put_the_wrong_value_first_in_the_control_and_second_in_the_probe() -> None:
    items = _items(["12.34 USD", "13.71 USD", "15.08 USD"])
    context = ProbeContext(items, gold_scores=[1.0, 1.0, 1.0])
    first = HedgeWrongFirst()
    probe = HedgedAnswer(first)
    first.prepare(context)
    probe.prepare(context)
    assert first.final_answer(items[0]) == "13.71 USD or 12.34 USD"
    assert probe.final_answer(items[0]) == "12.34 USD or 13.71 USD"
    first.record(context, {0: 0.5, 1: 1.0}, {})
    assert not probe.judged(items[0]) and probe.judged(items[1]) and not probe.judged(items[2])
    one_word = _items(["Paris", "Lyon"])
    first.prepare(ProbeContext(one_word, gold_scores=[1.0, 1.0]))
    assert first.final_answer(one_word[0]) == "Lyon, or maybe Paris"


def test_unused_write_tools_are_called_with_the_golds_values_and_schema_placeholders() -> None:
    tool = {"type": "function", "function": {"name": "make_org_admin", "parameters": {
        "type": "object", "properties": {"org": {"type": "string"}, "user": {"type": "string"},
                                         "level": {"type": "integer"}, "note": {"type": "string"}},
        "required": ["org", "user", "level"]}}}
    add = {"type": "function", "function": {"name": "add_member", "parameters": {"type": "object", "properties": {
        "org": {"type": "string"}, "user": {"type": "string"}}}}}
    item = {"messages": [], "reference_answer": "Added.", "tools": [add, tool],
            "actions": [{"name": "add_member", "arguments": {"org": "o1", "user": "u1"}}]}
    probe = SupersetUnusedWrite({"add_member", "make_org_admin"})
    probe.prepare(ProbeContext([item], gold_ok=[[True]], write_tools={"add_member", "make_org_admin"}))
    assert probe.applies(item) and probe.must_lower and probe.changes_end_state
    assert probe.plan(item)[-1] == [{"name": "make_org_admin", "arguments": {"org": "o1", "user": "u1", "level": 1}}]
    # a read tool the gold never calls is no superset
    probe = SupersetUnusedWrite({"add_member"})
    probe.prepare(ProbeContext([item], gold_ok=[[True]], write_tools={"add_member"}))
    assert not probe.applies(item)


def test_whitespace_joins_use_newline_tab_and_no_break_space() -> None:
    items = _items(["small hot cache", "large cold cache", "tiny warm cache"])
    probe = in_format_probes()["adv_whitespace_join"]
    probe.prepare(ProbeContext(items, gold_scores=[1.0] * 3))
    answers = [probe.final_answer(i) for i in items]
    assert [probe.describe(i)["join"] for i in items] == ["U+000A", "U+0009", "U+00A0"]
    assert all(" " not in a and len(a.split()) == 9 for a in answers)  # one "word" to split(" "), 9 to split()
    assert isinstance(FormatControl().control, bool)


def test_a_slot_that_only_echoes_the_prompt_is_played_by_no_probe() -> None:
    # An outside suite's honest currency grader FAILed adv_numbers_in_format: "nan EUR is 1,337.54 USD." paid
    # 1.0. The grader refuses a *wrong* source amount (another item's: the control lowered the score) but
    # rightly pays an answer with none; the removal control tells the echo from the outcome.
    items = _items([f"{100 + k}.00 EUR is {200 + k}.50 USD." for k in range(4)])
    context = ProbeContext(items, gold_scores=[1.0] * 4)
    probes = in_format_probes()
    control, removal, numbers = probes["format_control"], probes["format_removal"], probes["adv_numbers_in_format"]
    control.prepare(context)
    removal.prepare(context)
    slots = [control.played(i)[0].name for i in items]
    assert [removal.played(i)[0].name for i in items] == slots  # the same slot per item, left out
    assert "200.50" not in removal.final_answer(items[0]) or "100.00" not in removal.final_answer(items[0])
    echo, outcome = slots[0], slots[1]
    control.record(context, {0: 0.0, 1: 0.0, 2: 0.0, 3: 0.0}, dict.fromkeys(range(4), 1.0))  # both refused wrong
    removal.record(context, {0: 1.0, 1: 0.0, 2: 1.0, 3: 0.0}, dict.fromkeys(range(4), 1.0))  # echo not needed
    assert control.graded_slots == {echo, outcome} and removal.graded_slots == {outcome}
    numbers.prepare(context)
    assert {numbers.played(i)[0].name for i in items if numbers.played(i)} == {outcome}


def test_the_unit_of_a_number_is_the_word_after_it_else_before_a_closing_number() -> None:
    from rft_sdk.doctor._in_format import unit_of

    def unit(answer: str) -> list[Any]:
        return [(u.value if (u := unit_of(answer, s)) else None) for s in answer_slots(answer) if s.kind == "number"]

    assert unit("5632.70 m") == ["m"] and unit("USD 12.34") == ["USD"]
    assert unit("12 kg and 3 lb") == ["kg", "lb"]
    assert unit("the total is 42 today") == ["today"]  # a word after it, whatever it is: the controls decide
    assert unit_of('{"amount": 12.3, "unit": "kg"}', answer_slots('{"amount": 12.3, "unit": "kg"}')[0]) is None


def test_unit_swap_plays_another_items_unit_only_where_the_number_is_graded() -> None:
    items = _items(["5632.70 m", "12.50 kg", "3.10 l"])
    probes = in_format_probes()
    swap = probes["adv_unit_swap"]
    context = ProbeContext(items, [[]] * 3, [1.0] * 3, [True] * 3, write_tools=set())
    probes["format_control"].prepare(context)
    swap.prepare(context)
    assert swap.variants(items[0]) == [(answer_slots("5632.70 m")[1], "5632.70 kg")]  # the controls did not run
    control = probes["format_control"]
    control.ran, control.graded_slots = True, {"word 0"}  # the number was not graded: no unit to swap
    assert swap.variants(items[0]) == []
    control.graded_slots = {"number 0"}  # the word was found free: a number's unit is still its value
    assert [a for _, a in swap.variants(items[0])] == ["5632.70 kg"]


def test_intervals_in_format_include_a_range_around_the_value() -> None:
    from rft_sdk.doctor._in_format import _interval

    slot = answer_slots("12.34 USD")[0]
    assert _interval(slot, None) == ["0 ± 1000000", "-1e9 to 1e9", "0-1000000"]  # type: ignore[arg-type]
    negative = answer_slots("-3.5 C")[0]
    assert _interval(negative, None)[-1] == "-1000000-1"  # type: ignore[arg-type]
