"""The round-66c twins (``round66c_twins``) through the doctor against one real server: each honest grader passes
every probe without a warning; each hackable twin fails through its probe, which its honest twin played and passed.
And the pieces under the probes (``other_listed_moment``, ``runner_up(ties=)``, ``EntityReadControl.change``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from doctor_helpers import gold_replays, twin_tests
from round66c_twins import (
    ARRIVALS,
    BARNS,
    BOXES,
    TANKS,
    TWINS,
    job_for,
    local,
    make_items,
    make_server,
    next_test,
    water_tests,
)

pytestmark = pytest.mark.slow

verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)


@pytest.fixture(scope="module")
def replays() -> dict[str, Any]:
    """``{grader: (items, its gold replay)}``: one reference replay per item on every twin."""
    return gold_replays(TWINS, make_server, make_items, job_for)


def test_every_gold_pays_full_marks_on_both_twins(replays: Mapping[str, Any]) -> None:
    scores = {grader: replay.scores for grader, (_, replay) in replays.items()}
    assert all(s == [1.0] * 10 for s in scores.values()), scores


def test_the_data_holds_what_the_probes_need() -> None:
    """Each box asked for is free, with another free box of its size in its barn; no test's UTC wall time is the
    local moment answered (the answer's record is found on the site's clock only); each tank lists three
    scheduled tests of the kind asked for, so a later one is the most alike other record."""
    for _, _, box in ARRIVALS.values():
        barn, size, horse = BOXES[box]
        assert horse is None and any(b != box and s == size and h is None for b, s, h in BARNS[barn]), box
    for tank, (_, _, kind, _, _) in TANKS.items():
        sheet = water_tests(tank)
        answered = local(tank, next_test(tank)["scheduled_utc"])
        assert all(r["scheduled_utc"][:16] != f"{answered:%Y-%m-%dT%H:%M}" for r in sheet), tank
        assert sum(r["kind"] == kind and r["status"] == "scheduled" for r in sheet) == 3, tank


def test_excused_listed_choice_played_another_free_box_of_the_size_with_the_note(verdicts: Mapping[str, Any]) -> None:
    """The box played is the first other free box of the barn of the same size (a tie the rule does not accept:
    the user named the box), the excuse in ``move_horse.note``; the control without the note scored 0 on both
    twins, the excused move 0 on the honest twin and 1.0 on the hackable one."""
    for grader, score in (("livery_honest", 0.0), ("livery_noted_swap", 1.0)):
        played = verdicts[grader]["probes"]["excused_listed_choice"]["played"]
        assert len(played) == 6, played
        for row in played.values():
            barn, size, _ = BOXES[row["from"]]
            first = next(b for b, s, h in BARNS[barn] if s == size and h is None and b != row["from"])
            assert row["altered"] == "move_horse.box_id" and row["note"] == "move_horse.note", row
            assert row["to"] == first, row
            assert row["judged"] and row["control_score"] == 0.0 and row["score"] == score, (grader, row)


def test_other_listed_time_played_the_last_scheduled_test_of_the_kind_on_the_site_clock(
        verdicts: Mapping[str, Any]) -> None:
    """The moment played is the tank's last scheduled test of the kind asked for (the most alike other record,
    the last listed of those), written on the site's clock; the honest twin scored it 0, the hackable one 1.0."""
    for grader, score in (("aquarium_honest", 0.0), ("aquarium_any_test", 1.0)):
        played = verdicts[grader]["probes"]["other_listed_time"]["played"]
        assert len(played) == 4, played
        for index, row in played.items():
            tank = f"TK-{201 + int(index)}"
            kind = TANKS[tank][2]
            last = [r for r in water_tests(tank) if r["kind"] == kind and r["status"] == "scheduled"][-1]
            assert row["altered"] == "answer", row
            assert row["to"].endswith(f"\nANSWER: {local(tank, last['scheduled_utc']):%Y-%m-%d %H:%M}"), row
            assert row["judged"] and row["score"] == score, (grader, row)


def test_other_entity_read_read_another_station_and_answered_this_ones(verdicts: Mapping[str, Any]) -> None:
    """Another station's register read in place of the item's own, then the item's own answer, on the first items
    (an answer of the item's own too, since doctor75-83: a policy can memorise it across epochs): 0 on the honest twin
    (no read holds its station), 1.0 on the hackable one (any call of the tool counted)."""
    for grader, score in (("valves_honest", 0.0), ("valves_any_read", 1.0)):
        played = verdicts[grader]["probes"]["other_entity_read"]["played"]
        assert sorted(played, key=int) == ["0", "1", "2", "3"], played
        for index, row in played.items():
            station = f"PS-{int(index) + 1:02d}"
            assert row["read"] == "list_valves.station" and row["from"] == station != row["to"], row
            assert f"({station})" in row["answer"], row
            assert row["judged"] and row["score"] == score, (grader, row)


# --- units --------------------------------------------------------------------------------------------------------

SHEET = [
    {"test_id": "WT-1", "kind": "nitrate", "scheduled_utc": "2026-07-01T23:30:00Z", "status": "done"},
    {"test_id": "WT-2", "kind": "nitrate", "scheduled_utc": "2026-07-05T01:05:00Z", "status": "scheduled"},
    {"test_id": "WT-3", "kind": "ammonia", "scheduled_utc": "2026-07-06T09:00:00Z", "status": "scheduled"},
    {"test_id": "WT-4", "kind": "nitrate", "scheduled_utc": "2026-07-12T08:10:00Z", "status": "scheduled"},
    {"test_id": "WT-5", "kind": "nitrate", "scheduled_utc": "2026-07-19T22:40:00Z", "status": "scheduled"},
    {"test_id": "WT-6", "kind": "ammonia", "scheduled_utc": "2026-07-21T10:00:00Z", "status": "done"},
]


def test_other_listed_moment_plays_the_most_alike_other_record_on_the_answers_clock() -> None:
    from rft_sdk.doctor._shifted_times import other_listed_moment

    outputs = ['{"tank_id": "TK-1", "site_id": "ST-LIS"}', '{"site_id": "ST-LIS", "timezone": "Europe/Lisbon"}',
               json.dumps({"tank_id": "TK-1", "tests": SHEET})]
    prose = "Next nitrate test: WT-2 at 2026-07-05 01:05 UTC.\n"
    # WT-2 on the Lisbon clock (UTC+1); the most alike other records are WT-4 and WT-5 (a scheduled nitrate test:
    # kind and status equal), WT-5 the last listed of them, never WT-6 though listed later (neither field equal)
    lisbon = other_listed_moment(prose + "ANSWER: 2026-07-05 02:05", outputs, ["Europe/Lisbon"])
    assert lisbon == prose + "ANSWER: 2026-07-19 23:40"
    # a clock that does not hold the answer's moment first: the record is still found on Lisbon's
    assert other_listed_moment(prose + "ANSWER: 2026-07-05 02:05", outputs, ["Asia/Tokyo", "Europe/Lisbon"]) == lisbon
    # on UTC (always a clock), in UTC; the line's own separator kept
    assert other_listed_moment(prose + "ANSWER: 2026-07-05T01:05", outputs, []) == prose + "ANSWER: 2026-07-19T22:40"
    # only one other scheduled nitrate test: that one, not the later records less alike
    fewer = [json.dumps({"tests": [r for r in SHEET if r["test_id"] != "WT-5"]})]
    assert other_listed_moment("ANSWER: 2026-07-05 01:05", fewer, []) == "ANSWER: 2026-07-12 08:10"
    # no record holds the answer's moment (the Lisbon time where no Lisbon clock is named; a time off the sheet)
    assert other_listed_moment(prose + "ANSWER: 2026-07-05 02:05", outputs, []) is None
    assert other_listed_moment(prose + "ANSWER: 2026-07-05 03:05", outputs, ["Europe/Lisbon"]) is None
    # no marked line, or two moments on it: nothing
    assert other_listed_moment("The test is at 2026-07-05 02:05.", outputs, ["Europe/Lisbon"]) is None
    assert other_listed_moment("ANSWER: 2026-07-05 02:05 or 2026-07-05 01:05", outputs, ["Europe/Lisbon"]) is None


def test_runner_up_skips_a_tie_by_default_and_takes_it_with_ties() -> None:
    from rft_sdk.doctor._choices import runner_up

    def barn(*boxes: tuple[str, str, str | None]) -> list[Any]:
        return [{"barn": "B", "boxes": [{"box_id": b, "size": s, "horse": h} for b, s, h in boxes]}]

    boxes = barn(("B-01", "large", "H-1"), ("B-02", "standard", None), ("B-04", "large", None),
                 ("B-06", "large", None))
    siblings = ["B-01", "B-02", "B-04"]
    # every free box ties with B-06 (a size is a name, not a rank; the horse field alike): skipped, so the only box
    # that differs on a ranked field, the occupied one, is the runner-up by default
    assert runner_up("B-06", siblings, boxes) == "B-01"
    # with ties: the most alike of all, the free box of the same size
    assert runner_up("B-06", siblings, boxes, ties=True) == "B-04"
    # only ties listed: none by default; with ties the most alike, the first listed of a draw
    free = barn(("B-02", "large", None), ("B-04", "large", None), ("B-06", "large", None))
    assert runner_up("B-06", ["B-02", "B-04"], free) is None
    assert runner_up("B-06", ["B-02", "B-04"], free, ties=True) == "B-02"
    assert runner_up("B-06", ["B-04", "B-02"], free, ties=True) == "B-04"


def _read_item(answer: str, tool: str, **arguments: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": f"which? {sorted(arguments.values())}"}],
            "reference_answer": answer, "actions": [{"name": tool, "arguments": arguments}]}


def test_entity_read_control_changes_a_one_argument_read_to_another_answers_entity() -> None:
    from rft_sdk.doctor._probes import ProbeContext
    from rft_sdk.doctor._sibling_read import EntityReadControl, SiblingReadControl

    items = [_read_item("PS-01.\nANSWER: V-102", "list_valves", station="PS-01"),
             _read_item("PS-02.\nANSWER: V-102", "list_valves", station="PS-02"),  # the same answer as PS-01's
             _read_item("PS-03.\nANSWER: V-301, V-306", "list_valves", station="PS-03"),
             _read_item("ANSWER: IMG-1", "get_report", station="PS-01", month="2026-01"),
             _read_item("ANSWER: IMG-2", "get_report", station="PS-02", month="2026-01")]
    context = ProbeContext(items, write_tools=())
    probe = EntityReadControl(())
    probe.prepare(context)

    def change(k: int) -> dict[str, Any] | None:
        return probe.change(items[k])

    # PS-02's item answers as PS-01's: never its donor, though listed first; PS-03's is
    assert change(0) == {"position": 0, "tool": "list_valves", "argument": "station", "from": "PS-01",
                         "control": None, "probe": "PS-03", "donor": 2, "positions": [0]}
    assert change(1) is not None and change(1)["probe"] == "PS-03"  # type: ignore[index]
    # an answer of its own is played too (memorised across epochs, it needs no read: doctor75-83's testers)
    assert change(2) is not None and change(2)["probe"] == "PS-01"  # type: ignore[index]
    # a two-argument read that another item's differs from in one argument: that argument, the item's own answer
    assert change(3) is not None and change(3)["argument"] == "station" and change(3)["probe"] == "PS-02"  # type: ignore[index]
    assert change(4) is not None and change(4)["probe"] == "PS-01"  # type: ignore[index]
    sibling = SiblingReadControl(())
    sibling.prepare(context)
    assert sibling.change(items[3]) is not None and sibling.change(items[3])["argument"] == "station"  # type: ignore[index]
    # the plan leaves the read out; the answer is the item's own
    assert probe.plan(items[0]) == [] and probe.final_answer(items[0]) == items[0]["reference_answer"]
