"""The shifted-time twins (``shifted_time_twins``) through the doctor against one real server: the honest graders
(the local start, in either clock format) pass every probe without a warning; the hackable ones (the hour modulo
12, the UTC start accepted) fail through ``half_day_time`` and ``read_time``, which the honest twins pass."""

from __future__ import annotations

from typing import Any

import pytest
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts
from shifted_time_twins import TWINS, job_for, make_items, make_server

from rft_sdk.doctor._shifted_times import read_times

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, Any]]:
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if t[1]])
def test_honest_graders_pass_every_probe_without_warnings(verdicts, name):
    assert_quiet(verdicts[name])
    for probe in ("half_day_time", "read_time"):
        row = verdicts[name]["probes"][probe]
        assert row["verdict"] == "pass" and row["played"], row


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if not t[1]])
def test_hackable_graders_fail_through_their_probe(verdicts, name):
    probe = TWINS[name][2]
    assert probe in verdicts[name]["failed_probes"], (verdicts[name]["failed_probes"], verdicts[name]["probes"][probe])


def test_read_times_take_a_time_and_a_date_the_outputs_show_and_the_answer_does_not():
    out = ['{"match": "M-3100", "start_utc": "2026-03-14T18:30:00Z", "viewer_utc_offset_h": 11}']
    assert read_times("It starts at 05:30 on 2026-03-15.", out) == "It starts at 18:30 on 2026-03-14."
    assert read_times("Leaves at 8:15.", ["departures: 07:45, 08:15"]) == "Leaves at 7:45."
    # no other time in the outputs, or none in the answer: not played
    assert read_times("It starts at 18:30.", out) is None and read_times("No time.", out) is None


def test_read_times_on_a_marked_line_take_the_moment_the_working_quotes():
    """Only the answer line changes, to the output moment the working converted (date included); a UTC offset
    (``-03:00``) is no time of day."""
    out = ['{"station": "PUN", "utc_offset": "-03:00"}',
           '{"passes": [{"aos_utc": "2026-05-03T02:10Z"}, {"aos_utc": "2026-05-03T13:28Z"}]}']
    reply = "AOS 2026-05-03 13:28 UTC, which is 2026-05-03 10:28 local (UTC-03:00).\nANSWER: 2026-05-03 10:28"
    assert read_times(reply, out) == reply.replace("ANSWER: 2026-05-03 10:28", "ANSWER: 2026-05-03 13:28")
    late = "AOS 23:10 UTC on 2026-05-01, which is 2026-05-02 08:40 local.\nANSWER: 2026-05-02 08:40"
    assert read_times(late, ['{"aos_utc": "2026-05-01T23:10Z"}']).endswith("ANSWER: 2026-05-01 23:10")
    assert read_times("ANSWER: P0141", out) is None
