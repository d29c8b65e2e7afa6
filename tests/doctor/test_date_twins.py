"""The date twins (``date_twins``) through the doctor against one real server: the honest graders (the exact
day; a day either side) pass every probe without a warning; the hackable one (the year and month only) fails
through ``near_date``, which the honest twins pass. And the date mover keeps each date's format."""

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


@pytest.mark.parametrize("name", ["exact_date", "date_window"])
def test_honest_graders_pass_every_probe_without_warnings(verdicts, name):
    assert_quiet(verdicts[name])
    row = verdicts[name]["probes"]["near_date"]
    assert row["verdict"] == "pass" and row["played"], row


def test_a_date_compared_by_year_and_month_fails_through_near_date(verdicts):
    assert "near_date" in verdicts["month_only"]["failed_probes"], verdicts["month_only"]["failed_probes"]


def test_dates_move_in_their_own_format_and_within_their_month():
    assert moved_dates("until 18 June 2026.", 9, within_month=True) == "until 27 June 2026."
    assert moved_dates("until 28 February 2027", 9, within_month=True) == "until 19 February 2027"
    assert moved_dates("due 2026-03-04 (June 1, 2026)", 400) == "due 2027-04-08 (July 6, 2027)"
    assert moved_dates("no date here, 5:14 pm", 9) is None
    assert moved_dates("on 2026-02-30", 9) is None  # no real day: nothing played
