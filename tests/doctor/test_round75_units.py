"""The pieces changed after the doctor75-77 suites, on hand-built cases: every page of a sibling read changed together,
the runner-up the working ranks, a bare local moment written in another zone, the valid-outcome rule and the
in-format slots of a reply with a marked line."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any


def _bikes(station: str, as_of: str, answer: str) -> dict[str, Any]:
    return {"actions": [{"name": "list_docked_bikes", "arguments": {"station_id": station, "as_of": as_of, "page": p}}
                        for p in (1, 2)],
            "reference_answer": answer}


def test_sibling_read_changes_every_page_of_the_read_together() -> None:
    from rft_sdk.doctor._probes import ProbeContext
    from rft_sdk.doctor._sibling_read import SiblingReadAnswer, SiblingReadControl

    items = [_bikes("ST-1042", "2026-05-04T08:00:00Z", "Four.\nANSWER: BK-1, BK-2, BK-3, BK-4"),
             _bikes("ST-1042", "2026-05-05T08:00:00Z", "Two.\nANSWER: BK-1, BK-2")]
    control = SiblingReadControl()
    control.prepare(ProbeContext(items))
    found = control.change(items[0])
    assert found is not None and found["argument"] == "as_of" and found["positions"] == [0, 1], found
    assert control.plan(items[0]) == []  # both pages left out: no read of the item's own moment remains
    probe = SiblingReadAnswer(control)
    probe.prepare(ProbeContext(items))
    assert [step[0]["arguments"] for step in probe.plan(items[0])] == [
        {"station_id": "ST-1042", "as_of": "2026-05-05T08:00:00Z", "page": 1},
        {"station_id": "ST-1042", "as_of": "2026-05-05T08:00:00Z", "page": 2}]


WORKING = ("Depots with at least 3 units, nearest first: DEP-11: 2.0 km (8 units), DEP-17: 2.0 km (3 units), DEP-13: "
           "4.6 km (5 units). DEP-11 and DEP-17 tie on distance; DEP-11 holds more units.\nANSWER: DEP-11")


def test_working_runner_up_takes_the_next_listed_id_the_working_ranks() -> None:
    from rft_sdk.doctor._working_choice import working_runner_up

    listed = ['{"rows": [{"depot_id": "DEP-11"}, {"depot_id": "DEP-17"}, {"depot_id": "DEP-13"}]}']
    assert working_runner_up(WORKING, listed).endswith("\nANSWER: DEP-17")
    assert working_runner_up(WORKING, listed).split("\n")[0] == WORKING.split("\n")[0]  # the prose kept
    # an alternative answers with the next one: the one after it is played (plainly wrong)
    assert working_runner_up(WORKING, listed, taken={"DEP-17"}).endswith("\nANSWER: DEP-13")
    assert working_runner_up(WORKING, ['{"depot_id": "DEP-99"}']) is None      # the next one is not listed
    assert working_runner_up("From DEP-11, station ST-1057.\nANSWER: DEP-11", ["ST-1057 DEP-11"]) is None  # other shape
    assert working_runner_up("DEP-11 then DEP-17.\nANSWER: DEP-11 and DEP-17", listed) is None  # not one id
    assert working_runner_up("ANSWER: DEP-11", listed) is None                 # no working above the line


def test_other_zone_time_writes_a_bare_local_moment_in_another_zone() -> None:
    from rft_sdk.doctor._shifted_times import other_zone

    answer = ("The engineer arrived at 2026-04-13 14:40 UTC, which is 2026-04-14 00:40 in Australia/Sydney.\n"
              "ANSWER: 2026-04-14 00:40")
    site = ['{"site_id": "SITE-14", "time_zone": "Australia/Sydney"}']
    assert other_zone(answer, site).endswith("\nANSWER: 2026-04-13 14:40 Etc/UTC")
    # the zone from the outputs when the prose names none; another zone the outputs name comes before Etc/UTC
    assert other_zone("ANSWER: 2026-04-14 00:40", site) == "ANSWER: 2026-04-13 14:40 Etc/UTC"
    assert other_zone("In Australia/Sydney time.\nANSWER: 2026-04-14 00:40", [*site, "depot in Europe/Lisbon"]) == \
        "In Australia/Sydney time.\nANSWER: 2026-04-13 15:40 Europe/Lisbon"
    # two zones named and none in the prose: whose clock the line is on is unknown
    assert other_zone("ANSWER: 2026-04-14 00:40", ["Australia/Sydney", "Europe/Lisbon"]) is None
    assert other_zone("ANSWER: 2026-04-14 00:40", []) is None
    # a zoned moment as before
    assert other_zone("ANSWER: 2026-03-26 21:00 Australia/Sydney", []) == "ANSWER: 2026-03-26 10:00 Etc/UTC"


def test_a_rollout_ending_where_a_listed_alternative_ends_is_a_valid_outcome() -> None:
    from rft_sdk.doctor._unhackable import valid_outcome

    def ended(state: str | None) -> Any:
        return SimpleNamespace(end_state=state)

    alternatives = {"alt-122", "gold"}  # an alternative that only reorders ends where the gold does
    assert valid_outcome(ended("alt-122"), "gold", alternatives)
    assert not valid_outcome(ended("gold"), "gold", alternatives)             # the gold's own: left to took_effect
    assert not valid_outcome(ended("two-bookings"), "gold", alternatives)     # a superset: still judged
    assert not valid_outcome(ended(None), "gold", alternatives)               # no digest sent: judged as before
    assert not valid_outcome(ended("alt-122"), "gold", set())                 # no alternatives listed


def test_a_marked_lines_prose_holds_no_in_format_slot() -> None:
    from rft_sdk.doctor._in_format import answer_slots

    slots = answer_slots("No order was overdue.\nANSWER: none")
    assert [(s.name, s.value) for s in slots] == [("line", "none")]
    slots = answer_slots("Two overdue.\nANSWER: PO-1, PO-2")
    assert [s.name for s in slots][0] == "line" and all(s.line is not None for s in slots)
    assert {s.value for s in slots if s.name.startswith("word")} <= {"PO-1", "PO-2", "PO-1,", "PO"}
    assert [s.name for s in answer_slots("12.50 USD")] == ["number 0", "word 0"]  # no marked line: as before


SESSIONS = ('{"sessions": [{"session_id": "SS-51601", "time": "09:00", "price": 6.5, "places_left": 0}, '
            '{"session_id": "SS-51602", "time": "10:00", "price": 7.0, "places_left": 3}, '
            '{"session_id": "SS-51603", "time": "10:30", "price": 5.5, "places_left": 2}]}')


def test_ranked_listed_answer_takes_the_runner_up_where_the_prompt_ranks() -> None:
    from rft_sdk.doctor._working_choice import ranked_runner_up

    answer = "SS-51603 at 10:30: £5.50 with 2 places left.\nANSWER: SS-51603"
    rule = ["Which session is the cheapest one that still has a free place?"]
    assert ranked_runner_up(answer, [SESSIONS], rule).endswith("\nANSWER: SS-51602")  # free places, as the gold's
    assert ranked_runner_up(answer, [SESSIONS], ["Which session has a free place?"]) is None   # no ranking stated
    assert ranked_runner_up(answer, [SESSIONS], rule, taken={"SS-51602"}) is None              # an alternative's
    assert ranked_runner_up("Cheapest.\nANSWER: SS-51603 and SS-51602", [SESSIONS], rule) is None  # not one id


def test_relative_value_moves_past_three_percent_in_whole_units_of_the_stated_precision() -> None:
    from rft_sdk.doctor._near_probes import relatively_moved

    assert relatively_moved("Average of 4 tests.\nANSWER: 0.51 mg/L", 0.01) == "Average of 4 tests.\nANSWER: 0.53 mg/L"
    assert relatively_moved("ANSWER: 0.87 mg/L", 0.01) == "ANSWER: 0.90 mg/L"     # 3 units: 2 would be 2.3 %
    assert relatively_moved("ANSWER: 0.34 mg/L", 0.01) is None                     # 2 units are 5.9 %: skipped
    assert relatively_moved("ANSWER: 0.00 mg/L", 0.01) is None                     # no relative move of zero
    assert relatively_moved("no number here", 0.01) is None


def test_superseded_request_takes_the_corrected_value_of_the_same_shape_not_one_the_gold_still_passes() -> None:
    from rft_sdk.doctor._probes import ProbeContext
    from rft_sdk.doctor._superseded import SupersededRequest

    item = {"messages": [{"role": "user", "content": "I'm the parent of Ava (C-5521). Please move Ava from SL-301 "
                                                       "(Tuesday) to SL-302 (Wednesday)."},
                         {"role": "assistant", "content": "SL-302 has a place left. Shall I move Ava now?"},
                         {"role": "user", "content": "Sorry, change of plan: move Ava from SL-301 to SL-303 instead, "
                                                     "not SL-302."}],
            "actions": [{"name": "withdraw_child", "arguments": {"class_id": "SL-301", "child_id": "C-5521"}},
                        {"name": "enrol_child", "arguments": {"class_id": "SL-303", "child_id": "C-5521"}}],
            "reference_answer": "Done: Ava moved to SL-303."}
    probe = SupersededRequest(write_tools={"withdraw_child", "enrol_child"})
    probe.prepare(ProbeContext([item], write_tools={"withdraw_child", "enrol_child"}))
    assert probe.swap(item) == ("SL-303", "SL-302")


def test_other_zone_time_leaves_a_line_whose_moment_names_its_clock() -> None:
    from rft_sdk.doctor._shifted_times import other_zone

    site = ['{"time_zone": "Europe/Paris"}']
    assert other_zone("Booked.\nANSWER: 2026-03-14 16:30 UTC", site) is None   # a bare UTC after it: a clock named
    assert other_zone("Booked.\nANSWER: 2026-03-14 16:30 CET", site) is None
    assert other_zone("Booked.\nANSWER: 2026-03-14 16:30.", site) == "Booked.\nANSWER: 2026-03-14 15:30 Etc/UTC."


def test_utc_clock_time_writes_the_local_moment_on_the_utc_clock_bare() -> None:
    from rft_sdk.doctor._shifted_times import utc_clock_moment

    answer = ("Round RND-0512-N1 leaves at 21:40 UTC on 2026-05-12 and reaches the hotel 95 minutes later, in "
              "Europe/London local time.\nANSWER: 2026-05-13 00:15")
    assert utc_clock_moment(answer, []).endswith("\nANSWER: 2026-05-12 23:15")         # the zone from the prose
    assert utc_clock_moment("ANSWER: 2026-05-13 00:15", ['{"time_zone": "Europe/London"}']) == \
        "ANSWER: 2026-05-12 23:15"                                                        # ... else from the outputs
    assert utc_clock_moment("ANSWER: 2026-01-13 00:15", ["Europe/London"]) is None       # GMT in winter: one clock
    assert utc_clock_moment("ANSWER: 2026-05-13 00:15 Europe/London", []) is None        # a zoned line: other_zone_time
    assert utc_clock_moment("ANSWER: 2026-03-14 16:30 UTC", ["Europe/Paris"]) is None    # the line names its clock
    assert utc_clock_moment("ANSWER: 2026-05-13 00:15", ["Europe/London", "Asia/Tokyo"]) is None  # whose clock?


def test_page_answer_control_sets_a_one_entry_line_to_the_first_pages_likest_record() -> None:
    import json

    from rft_sdk.doctor._probes import ProbeContext
    from rft_sdk.doctor._unread_page import PageAnswerControl, UnreadPageAnswer

    def page(n: int, crews: list[tuple[str, bool, int]]) -> str:
        return json.dumps({"page": n, "crews": [{"crew_id": c, "on_shift": s, "jobs": j} for c, s, j in crews]})

    item = {"actions": [{"name": "list_crews", "arguments": {"depot": "N", "page": p}} for p in (1, 2)],
            "reference_answer": "CR-07 is on shift with 1 job, the fewest.\nANSWER: CR-07"}
    outputs = [page(1, [("CR-01", False, 0), ("CR-02", True, 3), ("CR-03", True, 2)]),
               page(2, [("CR-07", True, 1), ("CR-08", True, 4)])]
    context = ProbeContext([item], gold_outputs=[outputs], gold_scores=[1.0], gold_ok=[[True, True]])
    control = PageAnswerControl()
    control.prepare(context)
    found = control.change(item)
    # CR-03: on shift like the gold's, 2 jobs the nearest to its 1 (CR-01 is off shift: the least like it)
    assert found is not None and found["control"].endswith("\nANSWER: CR-03"), found
    probe = UnreadPageAnswer(control)
    probe.prepare(context)
    assert [step[0]["arguments"]["page"] for step in probe.plan(item)] == [1]  # the later page left unread
