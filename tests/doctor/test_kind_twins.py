"""The kind twins (``kind_twins``) through the doctor against one real server: the honest graders (the gold's
locker; the first Tuesday re-derived; the litres recomputed from the room) pass every probe without a warning; each hackable twin fails through the
probe its flaw asks for, which its honest twin passes. And the units under them: which enum member a prompt names,
which entities a listing adds, which dates a rule ranks."""

from __future__ import annotations

import pytest
from doctor_helpers import twin_tests
from kind_twins import TWINS, job_for, make_items, make_server

from rft_sdk.doctor._other_kind import kind_said, listed_entities
from rft_sdk.doctor._probes import ProbeContext
from rft_sdk.doctor._ranked_time import RankedDate

pytestmark = pytest.mark.slow


verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)


def test_an_enum_member_counts_as_asked_for_only_as_a_whole_word():
    assert kind_said("large", ["I'd like a LARGE washer"])
    assert kind_said("extra_large", ["an extra large one"])
    assert not kind_said("large", ["a largely empty room"])
    assert not kind_said("small", ["I'd like a large washer"])


def test_listed_entities_are_the_new_ids_of_the_value_shape_with_their_record():
    out = '[{"machine": "W1", "start": "08:00"}, {"machine": "W2", "start": "09:00"}, {"machine": "W4", "start": "10:00"}]'
    assert listed_entities("W4", out, {"W4"}) == [("W1", ["W1", "08:00"]), ("W2", ["W2", "09:00"])]
    assert listed_entities("W4", "W1 free at 08:00\nW4 free at 10:00", {"W4"}) == [("W1", ["W1 free at 08:00"])]
    assert listed_entities("W4", '[{"machine": "W4"}]', {"W4"}) == []  # the same entities under either member


def test_ranked_date_moves_a_worked_out_date_a_week_and_never_one_the_prompt_states():
    tools = [{"type": "function", "function": {"name": "schedule", "parameters": {"type": "object", "properties": {
        "date": {"type": "string"}}}}}]
    item = {"messages": [{"role": "system", "content": "Meetups are on the first Tuesday everyone can make."},
                        {"role": "user", "content": "Schedule June."}], "tools": tools,
            "actions": [{"name": "schedule", "arguments": {"date": "2026-06-09"}}],
            "reference_answer": "On 2026-06-09."}
    probe = RankedDate(["schedule"])
    probe.prepare(ProbeContext([item], write_tools=["schedule"]))
    assert probe.plan(item) == [[{"name": "schedule", "arguments": {"date": "2026-06-16"}}]]
    assert probe.final_answer(item) == "On 2026-06-16."
    stated = {**item, "messages": [*item["messages"][:1], {"role": "user", "content": "Schedule it on 2026-06-09."}]}
    assert not probe.applies(stated)
    unranked = {**item, "messages": [{"role": "user", "content": "Schedule a meetup in June."}]}
    assert not probe.applies(unranked)


def test_other_kind_choice_skips_a_read_whose_every_member_the_user_named():
    from rft_sdk.doctor._other_kind import OtherKindChoice

    tools = [{"type": "function", "function": {"name": "free", "parameters": {"type": "object", "properties": {
        "size": {"type": "string", "enum": ["small", "large"]}}}}}]
    item = {"messages": [{"role": "user", "content": "A large washer, or a small one if none is free."}],
            "tools": tools, "actions": [{"name": "free", "arguments": {"size": "large"}},
                                        {"name": "book", "arguments": {"machine": "W4"}}],
            "reference_answer": "Booked W4."}
    probe = OtherKindChoice(["book"])
    probe.prepare(ProbeContext([item], write_tools=["book"], gold_outputs=[["W4 free", "booked"]],
                               gold_ok=[[True, True]]))
    assert not probe.applies(item)  # it raised ZeroDivisionError (doctor33's stamp catalogue)
