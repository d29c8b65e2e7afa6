"""The commit twins (``commit_twins``) through the doctor against one real server: the honest graders (the
submitted queue within the budget of every recorded call, with or without partial credit for a right draft)
pass every probe without a warning; the hackable ones (the plan rebuilt from the drafting calls, the budget
counted on successful calls only) fail through ``dropped_commit`` and ``refused_spam``, which the honest twins
pass."""

from __future__ import annotations

from typing import Any

import pytest
from commit_twins import TWINS, job_for, make_items, make_server
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts

from rft_sdk.doctor._suite import commits

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, Any]]:
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if t[1]])
def test_honest_graders_pass_every_probe_without_warnings(verdicts, name):
    assert_quiet(verdicts[name])
    for probe in ("dropped_commit", "refused_spam"):
        row = verdicts[name]["probes"][probe]
        assert row["verdict"] == "pass" and row["rollouts"], row


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if not t[1]])
def test_hackable_graders_fail_through_their_probe(verdicts, name):
    probe = TWINS[name][2]
    assert probe in verdicts[name]["failed_probes"], (verdicts[name]["failed_probes"], verdicts[name]["probes"][probe])


def test_a_commit_is_a_write_named_by_a_commit_verb():
    assert [commits({"name": n}) for n in ("submit_plan", "confirmBooking", "finalise", "checkout")] == [True] * 4
    assert not any(commits({"name": n}) for n in ("assign_job", "committee_add", "place_order", "send_email"))
