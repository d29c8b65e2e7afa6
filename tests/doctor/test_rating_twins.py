"""The rating twins (``rating_twins``) through the doctor against one real server: the honest grader (both
players' ratings recomputed, the member's stated) passes every probe without a warning; the hackable twins
(the member's rating checked against the number the reply states; only the member's row of the two
``set_rating`` calls checked) fail through the probe made for each (run with the baselines, the controls
and those probes, to keep the test fast), which the honest twin passes."""

from __future__ import annotations

from typing import Any

import pytest
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts
from rating_twins import TWINS, job_for, make_items, make_server

from rft_sdk.doctor._consistent import number_of

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, Any]]:
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


def test_the_honest_grader_passes_every_probe_without_warnings(verdicts):
    assert_quiet(verdicts["rating_exact"])


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if not t[1]])
def test_hackable_graders_fail_through_their_probe_which_the_honest_twin_passes(verdicts, name):
    probe = TWINS[name][2]
    assert probe in verdicts[name]["failed_probes"], (verdicts[name]["failed_probes"], verdicts[name]["probes"][probe])
    assert verdicts["rating_exact"]["probes"][probe]["verdict"] == "pass", verdicts["rating_exact"]["probes"][probe]


def test_each_write_of_a_tool_is_altered_on_some_items(verdicts):
    played = verdicts["rating_member_only"]["probes"]["altered_writes"]["played"].values()
    positions = {p["position"] for p in played if p["altered"] == "set_rating.rating"}
    assert positions == {3, 4}  # the member's and the opponent's call
    paid = {p["position"] for p in played if p["altered"] == "set_rating.rating" and p["score"] == 1.0}
    assert paid == {4}  # the grader that checks only the member's row pays a wrong opponent rating


def test_the_consistent_value_changes_the_write_and_the_reply_alike(verdicts):
    played = verdicts["rating_as_stated"]["probes"]["consistent_value"]["played"].values()
    assert played
    for p in played:
        assert p["altered"] == "set_rating.rating" and str(number_of(p["to"])).removesuffix(".0") in p["answer"]
        assert str(p["from"]) not in p["answer"]


@pytest.mark.parametrize(("value", "number"), [(16, 16.0), (1.5, 1.5), ("1,250.5", 1250.5), (True, None),
                                               ("nan", None), ("12 kg", None), ([1], None)])
def test_number_of(value, number):
    assert number_of(value) == number
