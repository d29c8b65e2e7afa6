"""The choice twins (``choice_twins``) through the doctor against one real server: the honest grader (the
smallest free locker that holds the parcel) passes every probe without a warning; the hackable one (any free
locker that holds it) WARNs through ``other_listed_choice`` (a shortcut: another listed locker may be a valid
alternative the dataset does not list), which the honest twin passes."""

from __future__ import annotations

from typing import Any

import pytest
from choice_twins import TWINS, job_for, make_items, make_server
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, Any]]:
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


def test_the_honest_grader_passes_every_probe_without_warnings(verdicts):
    assert_quiet(verdicts["locker_rule"])
    assert verdicts["locker_rule"]["probes"]["other_listed_choice"]["verdict"] == "pass"


def test_any_fitting_locker_warns_through_another_listed_choice(verdicts):
    ev = verdicts["locker_any_fit"]
    assert ev["warned_probes"] == ["other_listed_choice"] and ev["failed_probes"] == [], ev["failed_probes"]
    played = ev["probes"]["other_listed_choice"]["played"].values()
    lockers = {p["to"] for p in played}
    assert len(lockers) > 1  # the items take different siblings in turn
    paid = [p for p in played if p["score"] == 1.0]
    assert paid and all(p["answer"].endswith(f"locker {p['to']}.") for p in paid)  # named in the reply too
