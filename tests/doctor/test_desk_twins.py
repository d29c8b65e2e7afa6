"""The desk twins (``desk_twins``) through the doctor against one real server: the honest graders (results as they
stand and the answer line's one name; each SKU's quantity; the plate the resident described) pass every probe
without a warning; each hackable twin fails through the probe its flaw asks for, which its honest twin passes.
And the units under them: an enum argument is altered to another member, the pair of ``swapped_writes`` takes the
first differing argument as its entity, a marked answer line has slots, a plain-text listing of plates has
siblings."""

from __future__ import annotations

from typing import Any

import pytest
from desk_twins import TWINS, job_for, make_items, make_server
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts

from rft_sdk.doctor._choices import _listed_tokens, record_texts
from rft_sdk.doctor._decisions import SwappedWrites
from rft_sdk.doctor._in_format import answer_slots
from rft_sdk.doctor._probes import ProbeContext

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, Any]]:
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if t[1]])
def test_honest_graders_pass_every_probe_without_warnings(verdicts, name):
    assert_quiet(verdicts[name])


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if not t[1]])
def test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it(verdicts, name):
    task, _, probe = TWINS[name]
    assert probe in verdicts[name]["failed_probes"], (name, verdicts[name]["failed_probes"])
    honest = next(g for g, t in TWINS.items() if t[0] == task and t[1])
    row = verdicts[honest]["probes"][probe]
    # hedged_answer judges only where the wrong-first hedge earned the gold's score too: never on the honest twin
    assert row["verdict"] == ("skipped" if probe == "hedged_answer" else "pass"), (honest, probe, row["skip_reasons"])
    assert row["rollouts"] > 0 or probe == "hedged_answer"


def test_swapped_writes_takes_the_first_differing_argument_as_the_entity():
    item = {"messages": [{"role": "user", "content": "x"}], "reference_answer": "ok",
            "actions": [{"name": "checkout", "arguments": {"member": "M1", "sku": "TOM-1", "qty": 2}},
                        {"name": "checkout", "arguments": {"member": "M1", "sku": "BAS-1", "qty": 1}}]}
    probe = SwappedWrites(["checkout"])
    probe.prepare(ProbeContext([item], write_tools=["checkout"]))
    assert probe.plan(item) == [[{"name": "checkout", "arguments": {"member": "M1", "sku": "TOM-1", "qty": 1}}],
                                [{"name": "checkout", "arguments": {"member": "M1", "sku": "BAS-1", "qty": 2}}]]
    same_qty = {**item, "actions": [{"name": "checkout", "arguments": {"member": "M1", "sku": s, "qty": 1}}
                                    for s in ("TOM-1", "BAS-1")]}
    probe.prepare(ProbeContext([same_qty], write_tools=["checkout"]))
    assert not probe.applies(same_qty)  # only the entity differs: nothing to swap


def test_a_marked_answer_line_has_slots_and_no_number_slot_inside_a_date_or_a_time():
    slots = {s.name: s.value for s in answer_slots("All 3 results entered.\nANSWER: Ben Okoro")}
    assert slots == {"line": "Ben Okoro", "word 0": "Ben", "word 1": "Okoro"}
    slots = {s.name: s.value for s in answer_slots("Booked C5 from 18:15 for 90 minutes.\nANSWER: C5 18:15")}
    assert slots == {"line": "C5 18:15", "word 0": "C5"}
    assert answer_slots("A long reply of prose with no marked line at all here.") == []


def test_a_plain_text_listing_of_plates_has_siblings_and_records():
    text = "resident_id=1 name=Maria Duarte vehicles: MD71 RRA (Ford Transit van); MD19 KLP (Honda Civic)"
    assert _listed_tokens("MD71 RRA", [text]) == ["MD19 KLP"]
    assert record_texts("MD71 RRA", "MD19 KLP", [text], []) == (" (Ford Transit van)", " (Honda Civic)")
