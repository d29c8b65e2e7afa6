"""The visit twins (``visit_twins``) through the doctor against one real server: the honest graders (the booking that
stands and the whole date; the set of parts; litres within 0.05 L; the customer's words in the note) pass every
probe without a warning; each hackable twin fails through the probe its flaw asks for, which its honest twin passes.
And the units under them: a list answer cut to one element, a value moved inside its whole unit, converted, or
swapped for a figure of the working, a date the user corrected."""

from __future__ import annotations

import pytest
from doctor_helpers import twin_tests
from visit_twins import TWINS, job_for, make_items, make_server

from rft_sdk.doctor._answer_line import first_listed
from rft_sdk.doctor._category_answer import CategoryAnswer
from rft_sdk.doctor._other_kind import superseded_dates
from rft_sdk.doctor._probes import ProbeContext

pytestmark = pytest.mark.slow


verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)


def test_a_listed_answer_is_cut_to_one_element_only_from_four():
    assert first_listed("6 to print.\nANSWER: A-1, A-2, A-4, A-5") == ["6 to print.\nANSWER: A-1"]
    assert first_listed("ANSWER: 2026-06-11, Tom Okafor") == []  # two slots of one answer, no list
    assert first_listed("No marked line: A-1, A-2, A-4, A-5") == []


def test_a_date_counts_as_corrected_only_when_the_last_user_message_asks_for_it_alone():
    said = ["Move us to the 14 May departure?", "Actually, the 16 May departure works better."]
    assert superseded_dates("2026-05-16", said) == ["2026-05-14"]
    assert superseded_dates("2026-05-14", said) == []  # the gold keeps the first request: nothing corrected
    assert superseded_dates("2026-05-16", said[1:]) == []  # one user message


def test_category_answer_learns_only_string_members_and_takes_a_list_argument_in_its_stride():
    tools = [{"type": "function", "function": {"name": "tag", "parameters": {"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        "kind": {"type": "string", "enum": ["x", "y"]}}}}}]
    items = [{"messages": [{"role": "user", "content": f"item {k}"}], "tools": tools,
              "actions": [{"name": "tag", "arguments": {"tags": ["a"], "kind": "xy"[k % 2]}}],
              "reference_answer": f"Done.\nANSWER: EUR {'0.00' if k % 2 == 0 else '35.00'}"} for k in range(4)]
    probe = CategoryAnswer(["tag"])
    probe.prepare(ProbeContext(items, write_tools=["tag"]))
    assert probe.plan(items[0]) == [[{"name": "tag", "arguments": {"tags": ["a"], "kind": "y"}}]]
    assert probe.final_answer(items[0]) == "Done.\nANSWER: EUR 35.00"


def test_a_figure_in_tonnes_is_played_in_kilograms_with_its_label_kept():
    """doctor35's quarry: a grader "lenient about kg and t" pays 3590 t for 3.59 t; the gallons pair stays."""
    from rft_sdk.doctor._coarse_values import UnitFigure

    figure = object.__new__(UnitFigure)
    assert figure.rewrite({}, "The load weighs 3.59 tonnes.\nANSWER: 3.59 t") == (
        "The load weighs 3590.00 tonnes.\nANSWER: 3590.00 t")
    assert figure.rewrite({}, "ANSWER: 87.1 L") == "ANSWER: 23.0 L"
    assert figure.rewrite({}, "ANSWER: 12 boxes") is None
