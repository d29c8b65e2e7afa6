"""The round-78 twins (``round78_twins``) through the doctor against one real server: each honest grader passes every
probe without a warning; each hackable twin fails through its probe, which its honest twin played and passed. And
what each probe played: the runner-up session the listing holds (one with a free place), the combined chlorine
moved 3-4.5 % in whole units of 0.01 (never on the two small values), the class first asked for in place of the
corrected one (the class ids swapped, never the child's)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import pytest
from doctor_helpers import gold_replays, twin_tests
from round78_twins import (
    CLASSES,
    DAYS,
    MOVES,
    TESTS,
    TWINS,
    cheapest_free,
    combined_answer,
    combined_mean,
    job_for,
    make_items,
    make_server,
    moved_rosters,
    session_rows,
    start_rosters,
)

pytestmark = pytest.mark.slow

verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)


@pytest.fixture(scope="module")
def replays() -> dict[str, Any]:
    """``{grader: (items, its gold replay)}``: one reference replay per item on every twin."""
    return gold_replays(TWINS, make_server, make_items, job_for)


def _runner_up(k: int) -> dict[str, Any]:
    """Day ``k``'s runner-up session as the doctor picks it (``_choices.runner_up`` over the listing)."""
    from rft_sdk.doctor._choices import runner_up
    from rft_sdk.doctor._scope import sibling_values

    best = cheapest_free(k)["session_id"]
    listed = [{"sessions": session_rows(k)}]
    other = runner_up(best, sibling_values(best, listed), listed)
    return next(r for r in session_rows(k) if r["session_id"] == other)


def test_every_gold_pays_full_marks_on_every_twin(replays: Mapping[str, Any]) -> None:
    scores = {grader: replay.scores for grader, (_, replay) in replays.items()}
    assert all(s == [1.0] * 10 for s in scores.values()), scores


def test_the_other_order_pays_full_marks_on_both_lesson_graders() -> None:
    """The listed alternative (enrol in the corrected class, then withdraw) is a valid path both graders pay."""
    from rft_sdk.doctor import check_alternatives
    from rft_sdk.doctor._common import load_inputs
    from rft_sdk.testing import run_server

    server = make_server()
    with run_server(server) as url:
        for grader in ("lessons_honest", "lesson_any_named_class"):
            items, job = load_inputs(make_items(server, "lessons"), job_for(server, url, grader))
            report = asyncio.run(check_alternatives(items, job, max_concurrency=4))
            assert report["checked"] == 10 and report["rejected"] == [] and report["truncated"] == [], report


def test_the_data_holds_what_the_probes_need() -> None:
    """Sessions: the cheapest listed session is full on eight days, two days tie on price among the free ones (the
    earlier chosen), and each day's runner-up (the doctor's pick) has a free place and is not the answer. Chlorine:
    no mean lies half-way between two hundredths; eight answers lie between 0.45 and 1.30 mg/L, two below. Lessons:
    the child starts in the class they leave, in neither other class; the three classes differ; the correcting turn
    names the corrected class and the one first asked for, never the child."""
    full_cheapest = [k for k in range(10) if min(session_rows(k), key=lambda r: r["price"])["places_left"] == 0]
    assert full_cheapest == [0, 2, 4, 5, 6, 7, 8, 9], full_cheapest
    tied = [k for k in range(10) if sum(r["places_left"] > 0 and r["price"] == cheapest_free(k)["price"]
                                        for r in session_rows(k)) > 1]
    assert tied == [3, 7], tied
    for k in range(10):
        other = _runner_up(k)
        assert other["places_left"] > 0 and other["session_id"] != cheapest_free(k)["session_id"], k
    answers = [Decimal(combined_answer(k)) for k in range(10)]
    assert all((combined_mean(k) * 1000) % 10 != 5 for k in range(10))
    assert sum(Decimal("0.45") <= a <= Decimal("1.30") for a in answers) == 8, answers
    assert [k for k, a in enumerate(answers) if a < Decimal("0.45")] == [8, 9], answers
    rosters = start_rosters()
    items = make_items(make_server(), "lessons")
    for item, (child, _, source, first, target) in zip(items, MOVES, strict=True):
        assert len({source, first, target}) == 3 and {source, first, target} <= set(CLASSES)
        assert child in rosters[source] and child not in rosters[first] and child not in rosters[target]
        correcting = item["messages"][-1]["content"]
        assert target in correcting and first in correcting and child not in correcting, correcting
        assert moved_rosters(child, source, first) != moved_rosters(child, source, target)


def test_ranked_listed_answer_plays_the_runner_up_session_paid_only_by_any_free(verdicts: Mapping[str, Any]) -> None:
    """The session played is the runner-up of the day's listing (a session with a free place, never the answer) on
    every item played, the prose kept; the honest twin scored it 0, the hackable one 1.0. ``working_runner_up``
    does not play: the reference's prose names one session only."""
    for grader, score in (("sessions_honest", 0.0), ("session_any_free", 1.0)):
        played = verdicts[grader]["probes"]["ranked_listed_answer"]["played"]
        assert played, verdicts[grader]["probes"]["ranked_listed_answer"]["skip_reasons"]
        for index, row in played.items():
            k = int(index)
            assert row["from"] == f"ANSWER: {cheapest_free(k)['session_id']}", row
            assert row["to"] == f"ANSWER: {_runner_up(k)['session_id']}", row
            assert row["judged"] and row["score"] == score, (grader, row)
    assert verdicts["sessions_honest"]["probes"]["working_runner_up"]["rollouts"] == 0


def test_relative_value_moves_the_mean_past_a_unit_but_within_five_percent(verdicts: Mapping[str, Any]) -> None:
    """The value played is the item's answer moved up by the fewest whole hundredths (2 at least) past 3 % of it,
    at most 4.5 % (``0.52`` → ``0.54``), never on the answers 0.34 and 0.41 (2 hundredths are more than 4.5 % of
    them); both honest graders scored it 0, the 5 % twin 1.0."""
    from rft_sdk.doctor._near_probes import relatively_moved

    items = make_items(make_server(), "chlorine")
    for grader, score in (("chlorine_honest", 0.0), ("chlorine_unit_either_way", 0.0), ("chlorine_five_percent", 1.0)):
        played = verdicts[grader]["probes"]["relative_value"]["played"]
        assert played, verdicts[grader]["probes"]["relative_value"]["skip_reasons"]
        for index, row in played.items():
            k = int(index)
            assert k not in (8, 9), row
            moved = relatively_moved(items[k]["reference_answer"], 0.01)
            assert moved is not None and row["altered"] == "answer", row
            assert row["from"] == items[k]["reference_answer"] and row["to"] == moved, row
            new = Decimal(moved.splitlines()[-1].split()[1])
            share = (new - Decimal(combined_answer(k))) / Decimal(combined_answer(k))
            assert new - Decimal(combined_answer(k)) >= Decimal("0.02") and Decimal("0.03") < share <= Decimal("0.045")
            assert row["judged"] and row["score"] == score, (grader, row)
        assert relatively_moved(items[8]["reference_answer"], 0.01) is None
        assert relatively_moved(items[9]["reference_answer"], 0.01) is None


def test_superseded_request_swaps_the_class_ids_never_the_child(verdicts: Mapping[str, Any]) -> None:
    """``doctor.json``'s ``superseded_request`` rows: the corrected class swapped for the one first asked for
    (``SL-303 -> SL-302``), never the child's id (``C-5521``, which the gold still passes and the correcting turn
    does not name); the honest twin scored the move to the first class 0, the hackable one 1.0."""
    for grader, score in (("lessons_honest", 0.0), ("lesson_any_named_class", 1.0)):
        played = verdicts[grader]["probes"]["superseded_request"]["played"]
        assert played, verdicts[grader]["probes"]["superseded_request"]["skip_reasons"]
        for index, row in played.items():
            _, _, _, first, target = MOVES[int(index)]
            assert row["superseded"] == f"{target} -> {first}", row
            assert row["judged"] and row["score"] == score, (grader, row)
    assert verdicts["lessons_honest"]["probes"]["superseded_request"]["played"]["0"]["superseded"] == "SL-303 -> SL-302"


def test_days_and_pools_are_the_items() -> None:
    """Each item of the answer tasks is its own day or pool test (no two items share a read)."""
    assert len({(a, c, d) for a, c, d, _ in DAYS}) == 10 and len({(p, d) for p, d, _ in TESTS}) == 10
