"""The site twins (``site_twins``) through the doctor against one real server: the honest graders (the total to the
cent; the whole shop compared) pass every probe without a warning; each hackable twin fails through the probe its
flaw asks for, which its honest twin passes. And the units under them: the precision a format example shows, and
the extra write with every sibling-bearing argument moved."""

from __future__ import annotations

import pytest
from doctor_helpers import twin_tests
from site_twins import TWINS, job_for, make_items, make_server

from rft_sdk.doctor._answers import marked_lines
from rft_sdk.doctor._near_probes import answer_precision, example_precision, one_value
from rft_sdk.doctor._probes import ProbeContext
from rft_sdk.doctor._requested_note import RECORD_REQUEST
from rft_sdk.doctor._scope import SupersetApart

pytestmark = pytest.mark.slow


verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)


def test_a_format_example_sets_the_precision_only_for_an_answer_stated_as_finely():
    said = ["End with a line `ANSWER: <pitch> <total in euros>`, e.g. `ANSWER: P04 65.00`."]
    assert example_precision(said, "Booked.\nANSWER: P02 73.50") == 0.01
    assert example_precision(said, "Booked.\nANSWER: P02 73.5") is None  # the gold states it less finely
    assert example_precision(["Reply with the total, e.g. 65.00."], "ANSWER: P02 73.50") is None  # not quoted
    assert example_precision(['for example "12.5 kg" or "13 kg"'], "ANSWER: 14.2 kg") == 0.1
    item = {"messages": [{"role": "user", "content": "Give it to the cent, e.g. `ANSWER: 1.5`."}]}
    assert answer_precision(item, "ANSWER: 2.25") == 0.01  # words first


def test_superset_apart_moves_every_argument_with_siblings_and_skips_a_write_with_one():
    listing = '{"tickets": {"T-1": {}, "T-2": {}, "T-3": {}}, "mechanics": {"Ada": 1, "Bo": 2}}'
    items = [{"messages": [{"role": "user", "content": "assign T-1"}],
              "actions": [{"name": "shop", "arguments": {}},
                          {"name": "assign", "arguments": {"ticket": "T-1", "mechanic": "Ada"}}],
              "reference_answer": "done"}]
    probe = SupersetApart(["assign"])
    probe.prepare(ProbeContext(items, write_tools=["assign"], gold_outputs=[[listing, "ok"]]))
    assert probe.candidates(items[0]) == [{"name": "assign", "arguments": {"ticket": t, "mechanic": "Bo"}}
                                          for t in ("T-2", "T-3")]
    one = [{**items[0], "actions": [items[0]["actions"][0], {"name": "assign", "arguments": {"ticket": "T-1"}}]}]
    probe.prepare(ProbeContext(one, write_tools=["assign"], gold_outputs=[[listing, "ok"]]))
    assert probe.candidates(one[0]) == []


def test_a_last_line_with_a_capitalised_marker_of_its_own_is_the_marked_answer_line():
    reply = "412.6 kg minus 6.8 kg at the week's price comes to EUR 3182.28.\nPAYOUT T-4101: 3182.28"
    assert [m["body"] for m in marked_lines(reply)] == ["3182.28"]
    assert [m.group() for m in one_value(reply)] == ["3182.28", "3182.28"]  # both places, the working left
    assert [m["body"] for m in marked_lines("Checked.\nCURRENT UNTIL: 2026-04-30\n")] == ["2026-04-30"]
    assert marked_lines("Note: 5 and 6") == []  # not capitalised
    assert marked_lines("PAYOUT T-1: 5\nthanks") == []  # not the last line
    assert [m["body"] for m in marked_lines("PAYOUT T-1: 5\nANSWER: 6")] == ["6"]  # ANSWER: first


def test_a_text_the_task_says_must_state_something_counts_as_requested():
    assert RECORD_REQUEST.search("The correction text must state the right fact, name or speaker.")
    assert RECORD_REQUEST.search("The note should include the dog's diet.")
    assert not RECORD_REQUEST.search("This text is long. It must state nothing here.")  # another sentence


def test_datetime_date_moves_only_the_marked_lines_moment_beside_a_working_one():
    from rft_sdk.doctor._near_probes import TimeControl
    from rft_sdk.doctor._shifted_times import DatetimeDate

    item = {"messages": [{"role": "user", "content": "The first pass from 2 May 2026 at 20:00 local time?"}],
            "actions": [{"name": "passes", "arguments": {}}], "reference_answer": ""}
    probe = DatetimeDate(TimeControl())
    probe.prepare(ProbeContext([item], write_tools=[]))
    prose = "AOS 2026-05-03 06:45 UTC, which is 2026-05-02 22:45 local.\n"
    assert probe.rewrite(item, prose + "ANSWER: 2026-05-02 22:45") is None  # the line's date is the prompt's
    moved = probe.rewrite(item, prose + "ANSWER: 2026-05-03 06:45")
    assert moved is not None and moved.startswith(prose) and not moved.endswith("2026-05-03 06:45")
