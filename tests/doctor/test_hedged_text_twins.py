"""The hedged-text twins (``hedged_text_twins``) through the doctor against one real server: the honest graders
(exactly one collection point named; the first one named) pass every probe without a warning; the hackable one
(the right point anywhere in the reply) fails through ``hedged_listed_text``, which the honest twins pass."""

from __future__ import annotations

from typing import Any

import pytest
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts
from hedged_text_twins import TWINS, job_for, make_items, make_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, Any]]:
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", ["one_point", "first_point"])
def test_honest_graders_pass_every_probe_without_warnings(verdicts, name):
    assert_quiet(verdicts[name])
    row = verdicts[name]["probes"]["hedged_listed_text"]
    assert row["verdict"] == "pass" and row["played"], row


def test_the_right_name_anywhere_in_the_reply_fails_through_the_hedge(verdicts):
    ev = verdicts["point_named"]
    assert "hedged_listed_text" in ev["failed_probes"], ev["failed_probes"]
    for p in ev["probes"]["hedged_listed_text"]["played"].values():  # the right point in the middle, never first
        assert " (or " in p["to"] and p["score"] == 1.0, p
