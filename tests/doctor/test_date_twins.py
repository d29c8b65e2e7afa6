"""The date twins (``date_twins``) through the doctor against one real server: the honest graders (the exact
day, in one format or two) pass every probe without a warning; the hackable ones (the year and month only, a
day either side, the day and month either way round) fail through ``near_date``, ``neighbour_date`` and
``swapped_date``, which the honest twins pass. And the date mover keeps each date's format."""

from __future__ import annotations

from typing import Any

import pytest
from date_twins import TWINS, job_for, make_items, make_server
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts

from rft_sdk.doctor._near_dates import moved_dates

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, Any]]:
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if t[1]])
def test_honest_graders_pass_every_probe_without_warnings(verdicts, name):
    assert_quiet(verdicts[name])
    for probe in ("near_date", "neighbour_date", "swapped_date"):
        row = verdicts[name]["probes"][probe]
        assert row["verdict"] == "pass" and row["played"], row


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if not t[1]])
def test_a_date_graded_loosely_fails_through_its_probe(verdicts, name):
    probe = TWINS[name][2]
    assert probe in verdicts[name]["failed_probes"], (verdicts[name]["failed_probes"], verdicts[name]["probes"][probe])


def test_a_swapped_date_plays_only_dates_whose_day_could_be_a_month():
    from rft_sdk.doctor._near_dates import _swapped, rewritten_dates

    assert rewritten_dates("on 2026-04-10 and 2026-04-20", _swapped) == "on 2026-10-04 and 2026-04-20"
    assert rewritten_dates("until 5 May 2026", _swapped) is None and rewritten_dates("2026-04-20", _swapped) is None


def test_dates_move_in_their_own_format_and_within_their_month():
    assert moved_dates("until 18 June 2026.", 9, within_month=True) == "until 27 June 2026."
    assert moved_dates("until 28 February 2027", 9, within_month=True) == "until 19 February 2027"
    assert moved_dates("due 2026-03-04 (June 1, 2026)", 400) == "due 2027-04-08 (July 6, 2027)"
    assert moved_dates("no date here, 5:14 pm", 9) is None
    assert moved_dates("on 2026-02-30", 9) is None  # no real day: nothing played


def test_a_swapped_date_is_played_only_where_every_graded_date_swaps():
    """A date kept may be the one graded (a UTC date swapped in the working beside an unswappable local one on the
    answer line paid the honest grader in full: the shifted-time ``line_local`` twin): such answers are not
    played, and a marked answer line's dates are the only ones changed."""
    from rft_sdk.doctor._near_dates import SwappedDate

    swap = object.__new__(SwappedDate)
    assert swap.rewrite({}, "on 2026-04-10 and 2026-04-20") is None
    assert swap.rewrite({}, "on 2026-04-10 and 2026-05-11") == "on 2026-10-04 and 2026-11-05"
    line = "AOS 2026-03-12 17:30 UTC, which is 2026-03-13 02:30 local.\nANSWER: 2026-03-13 02:30"
    assert swap.rewrite({}, line) is None
    line = "AOS 2026-03-12 17:30 UTC, which is 2026-03-13 02:30 local.\nANSWER: 2026-03-11 02:30"
    assert swap.rewrite({}, line) == line.replace("ANSWER: 2026-03-11", "ANSWER: 2026-11-03")
