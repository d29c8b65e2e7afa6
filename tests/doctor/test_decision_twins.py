"""The decision twins (``decision_twins``) through the doctor against one real server: the honest graders (each
decision as the policy says and the approved hours; the same with partial credit) pass every probe without a
warning; the hackable one (any decisions, the total agreeing with them) fails through ``flipped_decision``,
which the honest twins pass."""

from __future__ import annotations

from typing import Any

import pytest
from decision_twins import TWINS, job_for, make_items, make_server
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, Any]]:
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", ["policy", "policy_partial"])
def test_honest_graders_pass_every_probe_without_warnings(verdicts, name):
    assert_quiet(verdicts[name])
    row = verdicts[name]["probes"]["flipped_decision"]
    assert row["verdict"] == "pass" and row["played"], row


def test_a_total_that_only_agrees_with_the_decisions_fails_through_a_flipped_one(verdicts):
    ev = verdicts["consistent"]
    assert "flipped_decision" in ev["failed_probes"], ev["failed_probes"]
    played = list(ev["probes"]["flipped_decision"]["played"].values())
    assert played and all(p["score"] == 1.0 for p in played), played
    assert all(p["altered"] == "reject_entry → approve_entry" for p in played)  # a rejected entry approved
