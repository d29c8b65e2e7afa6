"""The ranked-time twins (``ranked_time_twins``) through the doctor against one real server: the honest grader (the
earliest free hour) passes every probe without a warning; the hackable one (any hour of the day) fails through
``ranked_time``, which the honest twin passes."""

from __future__ import annotations

from typing import Any

import pytest
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts
from ranked_time_twins import TWINS, job_for, make_items, make_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, Any]]:
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


def test_the_earliest_hour_grader_passes_with_the_probe_played(verdicts):
    assert_quiet(verdicts["exact_start"])
    row = verdicts["exact_start"]["probes"]["ranked_time"]
    assert row["verdict"] == "pass" and any(p["judged"] for p in row["played"].values()), row


def test_a_date_only_grader_fails_through_a_later_hour(verdicts):
    ev = verdicts["same_day"]
    assert "ranked_time" in ev["failed_probes"], ev["failed_probes"]
    for p in ev["probes"]["ranked_time"]["played"].values():
        assert p["to"][:10] == p["from"][:10] and p["to"] > p["from"], p  # the same day, later
