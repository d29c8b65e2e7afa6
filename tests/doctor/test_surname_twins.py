"""The surname twins (``surname_twins``) through the doctor against one real server: the honest graders (whole
names, all or by share) pass every probe without a warning; the grader keying people on their family name fails
through ``shared_surname``, which the honest twins pass."""

from __future__ import annotations

from typing import Any

import pytest
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts
from surname_twins import TWINS, job_for, make_items, make_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, Any]]:
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if t[1]])
def test_honest_graders_pass_every_probe_without_warnings(verdicts, name):
    assert_quiet(verdicts[name])
    row = verdicts[name]["probes"]["shared_surname"]
    assert row["verdict"] == "pass" and row["played"], row


def test_a_crew_keyed_on_family_names_fails_through_shared_surname(verdicts):
    assert "shared_surname" in verdicts["family_names"]["failed_probes"], verdicts["family_names"]["failed_probes"]
    played = verdicts["family_names"]["probes"]["shared_surname"]["played"]
    assert all(p["from"].split()[-1] == p["to"].split()[-1] and p["from"] != p["to"] for p in played.values())
