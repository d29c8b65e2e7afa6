"""``claimed_write`` against one real server (``claim_twins``): honest graders that grade the end state, add a
separate point for the answer, ignore a write, or count the reply's words only once the work is done all pass
it; the grader that takes the reply's "told" as the notification fails through it. Only this module's probes
run, so the file stays fast."""

from __future__ import annotations

import pytest
from claim_twins import TWINS, job_for, make_items, make_server
from doctor_helpers import assert_quiet, twin_verdicts

from rft_sdk.doctor._claims import claim_probes

BY_NAME = {t.grader: t for t in TWINS}


@pytest.fixture(scope="module")
def verdicts():
    """{grader: unhackable evidence} with only ``_claims``' probes; write tools declared by the server."""
    return twin_verdicts(make_server, make_items, job_for, TWINS, probes=claim_probes)


@pytest.mark.parametrize("name", [t.grader for t in TWINS if t.honest])
def test_honest_graders_pass_claimed_write(verdicts, name):
    assert_quiet(verdicts[name])
    row = verdicts[name]["probes"]["claimed_write"]
    assert row["played"] and any(p["judged"] for p in row["played"].values()), row  # judged, not skipped


def test_the_reply_standing_in_for_the_write_fails_and_both_writes_are_dropped_on_some_item(verdicts):
    twin = BY_NAME["parcel_told_word"]
    ev = verdicts[twin.grader]
    assert twin.probe in ev["failed_probes"], ev["probes"][twin.probe]
    played = ev["probes"]["claimed_write"]["played"].values()
    assert {p["dropped"] for p in played} == {"store", "notify"}
    # where the notification was dropped, the claim earned it back: 1.0 against a ceiling of 0.5
    assert any(p["dropped"] == "notify" and p["score"] == 1.0 for p in played)
