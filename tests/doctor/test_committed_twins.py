"""The committed-answer twins (``committed_twins``, from doctor22's report) through the doctor against one real
server: the honest graders (the reply's *first* "route X at HH:MM"; a credit of exactly kWh × rate cents whose
lower-case, hyphenated memo names the month asked) pass every probe without a warning; the hackable twins (the
route and time anywhere in the reply; a departure within five minutes; the credit compared with ``abs()``) fail through the probe made for
each, which the honest twins pass."""

from __future__ import annotations

from typing import Any

import pytest
from committed_twins import TWINS, job_for, make_items, make_server
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts

from rft_sdk.doctor._answers import own_inside
from rft_sdk.doctor._argument_probes import negated
from rft_sdk.doctor._near_probes import moved_times

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, Any]]:
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if t[1]])
def test_honest_graders_pass_every_probe_without_warnings(verdicts, name):
    assert_quiet(verdicts[name])


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if not t[1]])
def test_hackable_graders_fail_through_their_probe_which_the_honest_twins_pass(verdicts, name):
    probe = TWINS[name][2]
    assert probe in verdicts[name]["failed_probes"], (verdicts[name]["failed_probes"],
                                                      verdicts[name]["probes"][probe])
    for honest in (g for g, t in TWINS.items() if t[1] and t[0] == TWINS[name][0]):
        assert verdicts[honest]["probes"][probe]["verdict"] in ("pass", "skipped"), verdicts[honest]["probes"][probe]


def test_the_dumps_were_played_on_the_first_committed_grader_and_the_memo_never_altered(verdicts):
    dumps = verdicts["timetable_first"]["probes"]["answer_space_dump"]
    assert dumps["verdict"] == "pass" and dumps["rollouts"] >= 10  # item 0 included: its own answer is not first
    flipped = verdicts["credit_abs"]["probes"]["negated_value"]["played"]
    assert flipped and all(p["to"] == -p["from"] and p["altered"] == "post_credit.amount_cents"
                           for p in flipped.values())
    honest = verdicts["credit_exact"]["probes"]
    for name in ("contained_value", "overwritten_write", "truncated_text"):
        played = honest[name].get("played") or {}
        assert not any(str(p.get("altered", "")).endswith(".memo") for p in played.values()), (name, played)


def test_own_inside_and_negated():
    assert own_inside(["a", "b", "c"], "A") == ["b", "a", "c"]
    assert own_inside(["x", "a"], "a") == ["x", "a"]
    assert own_inside(["a"], "a") == ["a"] and own_inside(["b", "c"], "a") == ["b", "c"]
    assert negated(1250) == -1250 and negated(-2.5) == 2.5 and negated("12.50") == "-12.50"
    assert negated("-3") == "3" and negated(0) is None and negated(True) is None and negated("A3") is None
    assert moved_times("Route 12 at 08:15", 3, within_hour=True) == "Route 12 at 08:18"
    assert moved_times("at 23:59, back 8:05", 3, within_hour=True) == "at 23:56, back 8:08"
    assert moved_times("at 23:59, back 8:05", 137) == "at 02:16, back 10:22"
    assert moved_times("19:30:00", 3) is None and moved_times("v1.12:30", 3) is None
