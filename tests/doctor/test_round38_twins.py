"""The round-38 twins (``round38_twins``) through the doctor against one real server: each honest grader passes
every probe without a warning; each hackable twin fails through its probe, which its honest twin played and passed.
And the pieces under the new probes."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from doctor_helpers import twin_tests
from round38_twins import TWINS, job_for, make_items, make_server

from rft_sdk.doctor._boundary_sibling import boundary_record
from rft_sdk.doctor._excluded_entry import excluded_entry_line
from rft_sdk.doctor._item_fields import field_answers
from rft_sdk.doctor._leading_entry import leading_entry_line

pytestmark = pytest.mark.slow

verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)


def _row(answer: str, **fields: object) -> dict[str, object]:
    return {"reference_answer": answer, "messages": [], **fields}


def test_a_row_field_of_the_answers_shape_is_played_and_accepted_spellings_never_are():
    rows = [_row("Top: A, B, C.\nANSWER: A, B, C", top=["A", "B", "C"], old=["B", "A", "C"],
                 accepted_top=["a1", "b1", "c1"], also_ok=["C", "B", "A"]),
            _row("ANSWER: D, E, F", top=["D", "E", "F"], old=["E", "D", "F"])]
    control, probes = field_answers(rows[0], "reference_answer", rows)
    assert control.endswith("ANSWER: D, E, F")
    assert probes == [("old", "Top: A, B, C.\nANSWER: B, A, C")]  # accepted_top and also_ok never played
    times = [_row("Gangway 07:55.\nANSWER: 2026-06-16 07:55", want="2026-06-16 07:55", local="2026-06-16 08:55",
                  note="by the ship's clock", nested={"meets": "2026-06-16 08:15"}),
             _row("ANSWER: 2026-06-17 07:20", want="2026-06-17 07:20")]
    control, probes = field_answers(times[0], "reference_answer", times)
    assert control == "Gangway 07:55.\nANSWER: 2026-06-17 07:20"
    assert [p for p, _ in probes] == ["local", "nested.meets"] and probes[0][1].endswith("ANSWER: 2026-06-16 08:55")
    assert field_answers(_row("ANSWER: 2026-06-16 07:55", want="2026-06-16 07:55"), "reference_answer",
                         times) is None  # no second field
    assert field_answers(_row("no marked line", want="x"), "reference_answer", times) is None


def test_the_leading_entry_is_kept_and_the_rest_taken_from_the_bottom_of_the_listing():
    outputs = [json.dumps({"standings": [{"team": t} for t in ["A", "B", "C", "D", "E", "F"]]})]
    assert leading_entry_line("ANSWER: A, B, C", outputs) == ("ANSWER: A, E, F", 3)
    assert leading_entry_line("ANSWER: A > B > C", outputs) == ("ANSWER: A > E > F", 3)
    assert leading_entry_line("ANSWER: A, B", outputs) is None  # two entries: one right is half
    assert leading_entry_line("ANSWER: A, B, C", [json.dumps({"teams": ["A", "B", "C", "D"]})]) is None  # too few


def test_the_excluded_entry_is_one_a_second_listing_holds_apart_from_the_answer():
    rides = json.dumps([{"name": n} for n in ["A", "B", "C", "D"]])
    assert excluded_entry_line("ANSWER: A, B", [rides, json.dumps({"closed": [{"name": "C"}]})]) == "ANSWER: C, A, B"
    # no second listing: the first other member of the listing (a recall-only or subsequence grader pays it)
    assert excluded_entry_line("ANSWER: A, B", [rides]) == "ANSWER: C, A, B"
    assert excluded_entry_line("ANSWER: A, B", [rides, json.dumps({"open": ["A", "D"]})]) == "ANSWER: C, A, B"
    # a running order read set by set: no one listing holds every entry
    sets = [json.dumps({"pieces": [{"title": t} for t in ts]}) for ts in (["A", "X"], ["B", "Y"])]
    assert excluded_entry_line("ANSWER: A; B", sets) == "ANSWER: X; A; B"
    assert excluded_entry_line("ANSWER: A, B", [json.dumps({"teams": ["A", "B"]})]) is None  # nothing beside them


def test_a_list_kept_beside_the_answers_is_played_together_with_it():
    rows = [_row("ANSWER: Bramble, Pepper", expected=["Bramble", "Pepper"], due_that_day=["Moss"]),
            _row("ANSWER: Juniper, Moss", expected=["Juniper", "Moss"], due_that_day=["Pepper"])]
    _, probes = field_answers(rows[0], "reference_answer", rows)
    assert probes == [("due_that_day", "ANSWER: Moss, Bramble, Pepper")]


def test_a_plate_corrected_in_the_last_turn_is_swapped_even_where_that_turn_names_the_old_one():
    from rft_sdk.doctor._superseded import SupersededRequest

    item = {"messages": [{"role": "user", "content": "A permit for my car FH21 NKD, please."},
                         {"role": "assistant", "content": "A permit for FH21 NKD?"},
                         {"role": "user", "content": "Sorry: the plate is FH21 NKB, not FH21 NKD."}],
            "actions": [{"name": "issue_permit", "arguments": {"plate": "FH21 NKB"}}], "tools": []}
    probe = SupersededRequest()
    assert probe._swap_in(item, item["messages"][2]["content"], item["messages"][0]["content"]) == ("FH21 NKB",
                                                                                                     "FH21 NKD")
    # named again without withdrawing it: still requested, no swap
    assert probe._swap_in(item, "FH21 NKB and FH21 NKD both, please", item["messages"][0]["content"]) is None


def test_a_figure_of_the_working_is_no_answer_where_the_marked_line_holds_none():
    from rft_sdk.doctor._near_probes import one_value

    # doctor39's observatory: the seeing in the working, a time on the line (own_read_total played the seeing)
    assert one_value("Slot KR-3 (seeing 0.6 arcsec), 23:15Z.\nANSWER: 2026-03-12 01:15") == []
    assert [m.group() for m in one_value("Seeing 0.6 arcsec.\nANSWER: 0.6 arcsec")] == ["0.6", "0.6"]
    assert [m.group() for m in one_value("Working: 3 bags of 2.5 kg.\nANSWER: 7.5 kg")] == ["7.5"]


def test_the_boundary_record_is_the_nearest_unwritten_one_of_the_written_group():
    rows = [{"id": "A", "study": "S", "expires": "2026-05-01"}, {"id": "B", "study": "T", "expires": "2026-05-09"},
            {"id": "C", "study": "S", "expires": "2026-05-10"}, {"id": "D", "study": "S", "expires": "2026-07-01"},
            {"id": "E", "study": "T", "expires": "2026-05-02"}]
    assert boundary_record(rows, "id", {"A"})["id"] == "C"  # study S, nearest date: not B (another study)
    assert boundary_record([{"id": "A", "n": 1}, {"id": "B", "n": 2}], "id", {"A"}) is None  # no date field


def test_the_first_record_after_a_date_is_read_with_its_time():
    from rft_sdk.doctor._later_read import first_after

    output = json.dumps([{"date": "2026-05-11", "time": "13:00"}, {"date": "2026-05-14", "time": "10:00"}])
    assert first_after(output, dt.date(2026, 5, 11)) == ("2026-05-14", "10:00")
    assert first_after(output, dt.date(2026, 5, 20)) is None
    assert first_after("no JSON here", dt.date(2026, 5, 1)) is None
    # one date-time string per record (doctor41's dental slots)
    slots = json.dumps([{"start": "2025-06-10 11:00", "minutes": 60}, {"start": "2025-06-11T14:30:00", "minutes": 45}])
    assert first_after(slots, dt.date(2025, 6, 10)) == ("2025-06-11", "14:30")
    assert first_after(slots, dt.date(2025, 6, 9)) == ("2025-06-10", "11:00")


def test_an_excluded_entry_goes_in_front_of_a_ranking_with_the_rankings_own_separator():
    results = json.dumps([{"runner": n, "mispunch": n == "Cai"} for n in ["Ada", "Bo", "Cai", "Dita"]])
    assert excluded_entry_line("Bo first.\nANSWER: Bo > Ada > Dita", [results]) == \
        "Bo first.\nANSWER: Cai > Bo > Ada > Dita"
    assert excluded_entry_line("ANSWER: Bo \u2192 Ada", [results]) == "ANSWER: Cai \u2192 Bo \u2192 Ada"
    assert excluded_entry_line("ANSWER: Bo, Ada, Dita", [results]) == "ANSWER: Cai, Bo, Ada, Dita"


def test_a_figure_of_the_prose_is_found_with_its_currency_before_it():
    from rft_sdk.doctor._coarse_values import ProseFigure

    probe = ProseFigure.__new__(ProseFigure)  # rewrite reads nothing of the probe's state
    toll = "KX-301-B: EUR 4.20 a crossing, EUR 13.65 net, plus VAT.\nANSWER: EUR 16.38"
    assert probe.rewrite({}, toll) == "KX-301-B: EUR 4.20 a crossing, EUR 13.65 net, plus VAT.\nANSWER: EUR 13.65"
    assert probe.rewrite({}, "Net \u20ac13.65, then VAT.\nANSWER: \u20ac16.38").endswith("ANSWER: \u20ac13.65")
    assert probe.rewrite({}, "It was 13.65 km away.\nANSWER: EUR 16.38") is None  # another unit
    assert probe.rewrite({}, "Change 79.2 L; mix it.\nANSWER: 87.1 L").endswith("ANSWER: 79.2 L")


def test_a_written_value_moves_three_units_of_the_precision_its_argument_states():
    from rft_sdk.doctor._near_writes import argument_precision

    def tools(description: str) -> list[dict[str, object]]:
        return [{"type": "function", "function": {"name": "book", "parameters": {"type": "object", "properties": {
            "garment_id": {"type": "string"}, "measure_cm": {"type": "number", "description": description}}}}}]

    assert argument_precision({"tools": tools("the length in centimetres, to 0.1 cm")}, "book", "measure_cm") == 0.1
    assert argument_precision({"tools": tools("the amount, to the cent")}, "book", "measure_cm") == 0.01
    assert argument_precision({"tools": tools("the length in centimetres")}, "book", "measure_cm") is None
    assert argument_precision({"tools": tools("to the nearest 5 cm")}, "book", "measure_cm") is None  # not under 1
    assert argument_precision({"tools": tools("to 0.1 cm")}, "other", "measure_cm") is None


def test_a_two_argument_write_of_a_dictated_reason_is_emptied_and_one_of_the_desks_own_words_is_not():
    from rft_sdk.doctor._requested_note import EmptiedNoteControl

    control = EmptiedNoteControl()
    control._prose = {("hold", "reason")}
    said = "my doctor said the dose is changing next week"
    item = {"messages": [{"role": "user", "content": f"Please put my pills on hold and record the reason in my own "
                                                     f"words: {said}."}],
            "actions": [{"name": "hold", "arguments": {"rx_id": "RX-1", "reason": said}}]}
    assert control.candidate(item, "hold", "reason", said, 0) == {"control": "", "probe": "as requested"}
    plain = {"messages": [{"role": "user", "content": "Please put RX-1 on hold, the dose is changing."}],
             "actions": [{"name": "hold", "arguments": {"rx_id": "RX-1", "reason": "dose change"}}]}
    assert control.candidate(plain, "hold", "reason", "dose change", 0) is None  # nobody asked it recorded


def test_a_dump_whose_marked_lines_all_hold_the_items_own_answer_is_no_hedge():
    from rft_sdk.doctor._dataset_probes import AnswerSpaceDump, WorkThenDump
    from rft_sdk.doctor._probes import ProbeContext

    def rows(*answers: str) -> list[dict[str, object]]:
        return [{"messages": [{"role": "user", "content": f"Ticket {k}?"}], "actions": [],
                 "reference_answer": f"Turned down.\nANSWER: {a}"} for k, a in enumerate(answers)]

    for probe in (AnswerSpaceDump(), WorkThenDump()):
        probe.prepare(ProbeContext(items=rows("locked", "locked")))
        assert not probe.hedges(probe._context.items[0])  # the dump commits to the right answer: not played
        probe.prepare(ProbeContext(items=rows("locked", "archived")))
        assert probe.hedges(probe._context.items[0]) and probe.applies(probe._context.items[0])
    free = AnswerSpaceDump()
    free.prepare(ProbeContext(items=[{"reference_answer": "The order is locked."}]))
    assert free.hedges(free._context.items[0])  # no marked line: the text dump plays as before


def test_the_repeated_entry_line_repeats_the_first_of_distinct_entries():
    from rft_sdk.doctor._repeated_entry import repeated_entry_lines

    assert repeated_entry_lines("Three are full.\nANSWER: C-1, C-4, C-7") == (
        "Three are full.\nANSWER: C-1", "Three are full.\nANSWER: C-1, C-1, C-1")
    assert repeated_entry_lines("ANSWER: A; B.") == ("ANSWER: A.", "ANSWER: A; A.")
    assert repeated_entry_lines("ANSWER: A, a") is None  # not distinct
    assert repeated_entry_lines("ANSWER: none") is None  # one entry
    assert repeated_entry_lines("No marked line, A, B") is None
