"""The round-82 twins (``round82_twins``) through the doctor against one real server: the honest grader passes every
probe without a warning; the hackable twin fails through its probe, which its honest twin played and passed. And
what the probe played: the arrival's instant written bare on the UTC clock, the working kept (no tool printed it)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from doctor_helpers import gold_replays, twin_tests
from round82_twins import (
    DELIVERIES,
    DELIVERY_IDS,
    HOTELS,
    ROUNDS,
    TWINS,
    arrival_local,
    arrival_utc,
    hotel_zone,
    job_for,
    make_items,
    make_server,
    reference_answer,
)

pytestmark = pytest.mark.slow

verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)


@pytest.fixture(scope="module")
def replays() -> dict[str, Any]:
    """``{grader: (items, its gold replay)}``: one reference replay per item on every twin."""
    return gold_replays(TWINS, make_server, make_items, job_for)


def _utc_line(k: int) -> str:
    """Item ``k``'s reference with its answer line's moment written bare on the UTC clock."""
    delivery = DELIVERY_IDS[k]
    return reference_answer(delivery).rsplit("\n", 1)[0] + f"\nANSWER: {arrival_utc(delivery):%Y-%m-%d %H:%M}"


def test_every_gold_pays_full_marks_on_both_twins(replays: Mapping[str, Any]) -> None:
    scores = {grader: replay.scores for grader, (_, replay) in replays.items()}
    assert all(s == [1.0] * 10 for s in scores.values()), scores


def test_the_data_holds_what_the_probes_need() -> None:
    """No hotel's clock is UTC's at the arrival (the local moment is never the UTC one), the five zones are all
    used, five arrivals fall on another local date than their UTC one (midnight crossed both ways), no tool output
    prints the UTC arrival's clock time, each item is its own delivery and round, and each reference with its line
    on the UTC clock is short enough for ``doctor.json`` to keep whole."""
    assert {zone for _, zone in HOTELS.values()} == {"Europe/London", "Europe/Paris", "America/New_York",
                                                     "Asia/Tokyo", "Australia/Sydney"}
    for delivery in DELIVERY_IDS:
        assert arrival_local(delivery) != arrival_utc(delivery).replace(tzinfo=None), delivery
    crossed = [k for k, d in enumerate(DELIVERY_IDS) if arrival_local(d).date() != arrival_utc(d).date()]
    assert crossed == [0, 2, 3, 4, 6], crossed
    assert any(arrival_local(d).date() < arrival_utc(d).date() for d in DELIVERY_IDS)
    assert any(arrival_local(d).date() > arrival_utc(d).date() for d in DELIVERY_IDS)
    for delivery, (round_id, hotel, minutes, bags) in DELIVERIES.items():
        printed = json.dumps([ROUNDS[round_id], HOTELS[hotel], [delivery, round_id, hotel, minutes, bags]])
        assert f"{arrival_utc(delivery):%H:%M}" not in printed, delivery
    assert len(set(DELIVERIES)) == len({r for r, _, _, _ in DELIVERIES.values()}) == 10
    assert all(len(_utc_line(k)) < 160 for k in range(10))  # doctor.json's ``to`` keeps a row's first 160 characters


def test_utc_clock_moment_writes_the_arrival_on_the_utc_clock() -> None:
    """On every reference (the prose names the hotel's zone, the one zone named) the probe's rewrite is the UTC
    arrival, bare, the working kept; ``None`` where the line names its clock."""
    from rft_sdk.doctor._shifted_times import utc_clock_moment

    for k, delivery in enumerate(DELIVERY_IDS):
        assert utc_clock_moment(reference_answer(delivery), []) == _utc_line(k), k
        assert utc_clock_moment(reference_answer(delivery) + " UTC", []) is None, k


def test_utc_clock_time_plays_the_utc_arrival_paid_only_by_either_clock(verdicts: Mapping[str, Any]) -> None:
    """``doctor.json``'s ``utc_clock_time`` rows: the answer line's moment written bare on the UTC clock on every
    item played, the working kept; the honest twin scored it 0 (judged), the hackable one 1.0."""
    for grader, score in (("delivery_honest", 0.0), ("delivery_either_clock", 1.0)):
        row = verdicts[grader]["probes"]["utc_clock_time"]
        played = row["played"]
        assert played, row["skip_reasons"]
        for index, row_ in played.items():
            assert row_["altered"] == "answer" and row_["to"] == _utc_line(int(index)), row_  # under 160 characters
            assert row_["judged"] and row_["score"] == score, (grader, row_)
    assert verdicts["delivery_honest"]["probes"]["utc_clock_time"]["verdict"] == "pass"
    assert "utc_clock_time" in verdicts["delivery_either_clock"]["failed_probes"]


def test_utc_clock_time_rows_on_the_honest_grader_score_0_and_are_judged(verdicts: Mapping[str, Any]) -> None:
    """Every ``utc_clock_time`` row the honest grader played is judged and scored 0."""
    played = verdicts["delivery_honest"]["probes"]["utc_clock_time"]["played"]
    assert played and all(r["judged"] and r["score"] == 0.0 for r in played.values()), played


def test_hotel_zones_are_the_items_zones() -> None:
    """Each item's prompt names its delivery only; its zone is the hotel's, read from ``get_hotel``."""
    items = make_items(make_server(), "delivery")
    for item, delivery in zip(items, DELIVERY_IDS, strict=True):
        assert item["delivery_id"] == delivery and hotel_zone(delivery) not in json.dumps(item["messages"])
        assert item["reference_answer"].endswith(f"ANSWER: {arrival_local(delivery):%Y-%m-%d %H:%M}")
