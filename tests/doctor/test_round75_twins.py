"""The round-75 twins (``round75_twins``) through the doctor against one real server: each honest grader passes every
probe without a warning; each hackable twin fails through its probe, which its honest twin played and passed. And
what each probe played: the runner-up the depot working ranks, another item's engineer (a listed alternative here
or not), the arrival's UTC instant written with a zone name, the station's other moment read over both pages."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import pytest
from doctor_helpers import gold_replays, twin_tests
from round75_twins import (
    CALLOUTS,
    LIFTS,
    QUESTIONS,
    SITES,
    STATIONS,
    TWINS,
    _utc,
    arrival_local,
    docked,
    eligible,
    job_for,
    make_items,
    make_server,
    question_moment,
    ranking,
    stale,
)

pytestmark = pytest.mark.slow

verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)

#: the skip reason of a probe rollout that ended where a listed alternative ends (``_unhackable.valid_outcome``)
VALID_OUTCOME = "a listed alternative of the item reaches"


@pytest.fixture(scope="module")
def replays() -> dict[str, Any]:
    """``{grader: (items, its gold replay)}``: one reference replay per item on every twin."""
    return gold_replays(TWINS, make_server, make_items, job_for)


def test_every_gold_pays_full_marks_on_both_twins(replays: Mapping[str, Any]) -> None:
    scores = {grader: replay.scores for grader, (_, replay) in replays.items()}
    assert all(s == [1.0] * 10 for s in scores.values()), scores


def test_every_listed_engineer_pays_full_marks_on_both_booking_graders() -> None:
    """Each listed alternative (another certified engineer, the same reads) is a valid path both graders pay."""
    from rft_sdk.doctor import check_alternatives
    from rft_sdk.doctor._common import load_inputs
    from rft_sdk.testing import run_server

    server = make_server()
    with run_server(server) as url:
        for grader in ("booking_honest", "booking_any_engineer"):
            items, job = load_inputs(make_items(server, "booking"), job_for(server, url, grader))
            report = asyncio.run(check_alternatives(items, job, max_concurrency=4))
            want = sum(len(eligible(lift)) - 1 for lift in LIFTS)
            assert report["checked"] == want and report["rejected"] == [] and report["truncated"] == [], report


def test_the_data_holds_what_the_probes_need() -> None:
    """Depots: six requests have a depot as near as the chosen one (one tied on units too, the lower id chosen).
    Booking: every engineer is certified for some make, every make has two or more. Arrival: no site's clock is
    UTC's at the arrival, so the local moment is never the UTC one. Bikes: every question's station holds five to
    eight bikes (two pages of four); the stations asked about twice answer otherwise, their answers overlapping."""
    tied = [k for k in range(10) if ranking(k)[1]["km"] == ranking(k)[0]["km"]]
    assert tied == [0, 2, 4, 5, 7, 9], tied
    assert [k for k in tied if ranking(k)[1]["units"] == ranking(k)[0]["units"]] == [4]
    assert all(len(eligible(lift)) >= 2 and LIFTS[lift][4] in eligible(lift) for lift in LIFTS)
    for callout, (site, _, _, utc) in CALLOUTS.items():
        assert site in SITES and arrival_local(callout) != _utc(utc).replace(tzinfo=None), callout
    for k in range(10):
        assert 5 <= len(docked(QUESTIONS[k][0], _utc(question_moment(k)))) <= 8, k
    for station in STATIONS:
        asked = [question_moment(k) for k in range(10) if QUESTIONS[k][0] == station]
        if len(asked) == 2:
            first, second = (set(stale(station, m)) for m in asked)
            assert first != second and first & second, station


def test_working_runner_up_plays_the_next_ranked_depot_paid_only_where_as_near(verdicts: Mapping[str, Any]) -> None:
    """The depot played is the second of the working's ranking on every item; the honest twin scored it 0
    everywhere, the hackable one 1.0 exactly where it is as near as the chosen depot (the tie-breaks it skips)."""
    for grader in ("depot_honest", "depot_first_two_criteria"):
        played = verdicts[grader]["probes"]["working_runner_up"]["played"]
        assert sorted(played, key=int) == [str(k) for k in range(10)], played
        for index, row in played.items():
            first, second = ranking(int(index))[:2]
            assert row["from"] == f"ANSWER: {first['depot_id']}" and row["to"] == f"ANSWER: {second['depot_id']}", row
            paid = grader == "depot_first_two_criteria" and second["km"] == first["km"]
            assert row["judged"] and row["score"] == float(paid), (grader, index, row)


def test_donor_write_skips_a_listed_engineer_as_a_valid_outcome_and_judges_the_rest(
        verdicts: Mapping[str, Any]) -> None:
    """``doctor.json``'s ``donor_write`` row (``principles.unhackable.probes``, the evidence read here): another
    item's engineer booked for this item's lift and date on the first eight items; where that engineer is a listed
    alternative here (LIFT-506's ENG-208, LIFT-508's ENG-201) the end state is one the alternative reaches and is not
    judged (the skip reason says so, on both twins); elsewhere the honest twin scored it 0, the hackable one 1.0."""
    for grader in ("booking_honest", "booking_any_engineer"):
        row = verdicts[grader]["probes"]["donor_write"]
        valid = [why for why in row["skip_reasons"] if VALID_OUTCOME in why]
        assert len(valid) == 1 and row["skip_reasons"][valid[0]] == 2, row["skip_reasons"]
        played = row["played"]
        assert sorted(played, key=int) == [str(k) for k in range(8)], played
        listed = []
        for index, row_ in played.items():
            lift = f"LIFT-{501 + int(index)}"
            assert row_["altered"] == "book_visit.engineer_id" and row_["from"] == LIFTS[lift][4] != row_["to"], row_
            if row_["to"] in eligible(lift):
                listed.append(index)
                assert not row_["judged"] and row_["score"] == 1.0, (grader, row_)
            else:
                assert row_["judged"] and row_["score"] == (1.0 if grader == "booking_any_engineer" else 0.0), row_
        assert sorted(listed) == ["5", "7"], listed


def test_other_zone_time_wrote_the_utc_instant_with_a_zone_name(verdicts: Mapping[str, Any]) -> None:
    """The moment played is the arrival's UTC wall time followed by ``Etc/UTC`` (the only zone the outputs name is
    the site's own), the working kept; the honest twin scored it 0 (no zone name is asked for), the hackable one
    1.0."""
    from rft_sdk.doctor._shifted_times import other_zone

    server = make_server()
    items = make_items(server, "arrival")
    for grader, score in (("arrival_honest", 0.0), ("arrival_trusts_zone", 1.0)):
        played = verdicts[grader]["probes"]["other_zone_time"]["played"]
        assert played, verdicts[grader]["probes"]["other_zone_time"]["skip_reasons"]
        for index, row in played.items():
            reference = items[int(index)]["reference_answer"]
            site, _, _, utc = CALLOUTS[f"CO-{7101 + int(index)}"]
            expected = reference.rsplit("\n", 1)[0] + f"\nANSWER: {utc[:10]} {utc[11:16]} Etc/UTC"
            assert other_zone(reference, [json.dumps({"site_id": site, "time_zone": SITES[site][1]})]) == expected
            assert row["altered"] == "answer" and row["to"] == expected[:160], row  # ``to``: its first 160 characters
            assert row["judged"] and row["score"] == score, (grader, row)


def test_sibling_read_answer_read_the_stations_other_moment(verdicts: Mapping[str, Any]) -> None:
    """On the stations asked about twice, the other moment read in place of the item's own (both pages) and its
    answer given: 0 on the honest twin (no read holds the item's moment), the overlap's F1 on the hackable one."""
    for grader in ("bikes_honest", "bikes_station_only_evidence"):
        played = verdicts[grader]["probes"]["sibling_read_answer"]["played"]
        assert played, verdicts[grader]["probes"]["sibling_read_answer"]["skip_reasons"]
        for index, row in played.items():
            station = QUESTIONS[int(index)][0]
            other = next(k for k in range(10) if QUESTIONS[k][0] == station and k != int(index))
            assert row["read"] == "list_docked_bikes.as_of", row
            assert row["from"] == question_moment(int(index)) and row["to"] == question_moment(other), row
            mine, theirs = set(stale(station, row["from"])), set(stale(station, row["to"]))
            f1 = 2 * len(mine & theirs) / (len(mine) + len(theirs))
            want = f1 if grader == "bikes_station_only_evidence" else 0.0
            assert row["judged"] and row["score"] == pytest.approx(want), (grader, row)
