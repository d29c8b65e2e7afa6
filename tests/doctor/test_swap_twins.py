"""The swap twins (``swap_twins``) through the doctor against one real server: the honest graders (each
application's decision, all or by share) pass every probe without a warning; the ledger grader (counts and dollars
only) fails through ``swapped_writes``, which the honest twins pass. And the pair is never ids or free text."""

from __future__ import annotations

from typing import Any

import pytest
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts
from swap_twins import TWINS, job_for, make_items, make_server

from rft_sdk.doctor._decisions import SwappedWrites
from rft_sdk.doctor._probes import ProbeContext

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, Any]]:
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if t[1]])
def test_honest_graders_pass_every_probe_without_warnings(verdicts, name):
    assert_quiet(verdicts[name])
    row = verdicts[name]["probes"]["swapped_writes"]
    assert row["verdict"] == "pass" and row["played"], row


def test_a_ledger_grader_fails_through_swapped_writes(verdicts):
    assert "swapped_writes" in verdicts["ledger"]["failed_probes"], verdicts["ledger"]["failed_probes"]


def test_the_pair_differs_in_a_decision_or_a_number_never_only_in_an_id_or_free_text():
    def item(*calls: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [{"role": "user", "content": "x"}], "reference_answer": "A-1 approved; A-2 rejected",
                "actions": [{"name": "w", "arguments": c} for c in calls]}
    decided = item({"id": "A-1", "decision": "approve", "award": 5}, {"id": "A-2", "decision": "reject", "award": 0})
    printers = item({"job": "J-1", "printer": "P02"}, {"job": "J-2", "printer": "P05"})
    notes = item({"id": "A-1", "note": "late by two days"}, {"id": "A-2", "note": "on time as agreed"})
    probe = SwappedWrites(["w"])
    probe.prepare(ProbeContext([decided, printers, notes], write_tools=["w"]))
    assert probe.plan(decided) == [[{"name": "w", "arguments": {"id": "A-1", "decision": "reject", "award": 0}}],
                                   [{"name": "w", "arguments": {"id": "A-2", "decision": "approve", "award": 5}}]]
    assert probe.final_answer(decided) == "A-2 approved; A-1 rejected"
    assert not probe.applies(printers) and not probe.applies(notes)
