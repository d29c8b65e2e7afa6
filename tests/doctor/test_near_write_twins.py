"""The near-write twins (``near_write_twins``) through the doctor against one real server: the honest
graders (a temperature to the hundredth; 0.5 title + 0.5 tag F1 over items that share tags) pass every probe
without a warning; each hackable twin (half a degree of tolerance on the written or the stated temperature,
any room holding the same product) fails through the probe made for it (run with the baselines,
the controls and the module's probes only, to keep the test fast), which the honest twin passes."""

from __future__ import annotations

from typing import Any

import pytest
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts
from near_write_twins import TWINS, job_for, make_items, make_server

from rft_sdk.doctor._near_writes import near_moves

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, Any]]:
    """{grader: unhackable evidence}: the honest graders through every probe, the hackable ones through the
    baselines, the controls and their probes."""
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if t[1]])
def test_honest_graders_pass_every_probe_without_warnings(verdicts, name):
    assert_quiet(verdicts[name])


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if not t[1]])
def test_hackable_graders_fail_through_their_probe_which_the_honest_twin_passes(verdicts, name):
    task, _, probe = TWINS[name]
    assert verdicts[name]["failed_probes"] == [probe], (verdicts[name]["failed_probes"],
                                                       verdicts[name]["probes"][probe])
    honest = verdicts["room_exact"]["probes"][probe]
    assert honest["verdict"] == "pass" and honest["rollouts"] > 0, honest


def test_the_report_says_what_was_played(verdicts):
    near = verdicts["room_loose"]["probes"]["near_value"]["played"]
    assert near and all(p["altered"] == "set_temperature.temp_c" and 0.09 < abs(float(p["to"]) - float(p["from"])) < 0.5
                        for p in near.values())
    sibling = verdicts["room_same_product"]["probes"]["sibling_entity"]["played"]
    assert sibling and all(p["from"] != p["to"] and set(p["attributes"]) == {"product"} for p in sibling.values())


def test_the_near_move_is_three_percent_or_ten_units_of_the_last_digit():
    assert near_moves("4.35", False) == (4.49, 5.75)  # 3 % (0.13) rounded up to the hundredth
    assert near_moves("4.35", True) == (4.21, 2.95)
    assert near_moves("24.0", False) == (25.0, 34.0)  # ten tenths: one unit of the digit before the last
    assert near_moves("0.82", True) == (0.92, 1.82)  # down would change the control's sign: up
    assert near_moves("7", False) is None and near_moves("0.0", False) is None  # integers, zero: not moved
