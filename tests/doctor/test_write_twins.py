"""The probes of ``_write_probes`` through the doctor against one real server (``write_twins``): every honest
grader passes every probe without a warning (a probe that fires on a correct grader is a defect); each
hackable twin fails through the probe made for its flaw, which its honest twin passes; an earlier wrong
write that an overwriting setter replaced is not judged; and the pure helpers behind them."""

from __future__ import annotations

import pytest
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts
from write_twins import TWINS, job_for, make_items, make_server

from rft_sdk.doctor._probes import ProbeContext
from rft_sdk.doctor._write_probes import (
    NEUTRAL_MARKER,
    CertifiedControl,
    PrecedingWrite,
    ReadbackControl,
    description_values,
)

pytestmark = pytest.mark.slow  # a long file: the scheduler starts it first (tests/conftest.py)

BY_NAME = {t.grader: t for t in TWINS}


@pytest.fixture(scope="module")
def verdicts():
    """{grader: unhackable evidence}; no write tools given (declared by the server)."""
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", [t.grader for t in TWINS if t.honest])
def test_honest_graders_pass_every_probe(verdicts, name):
    assert_quiet(verdicts[name])


@pytest.mark.parametrize("name", [t.grader for t in TWINS if not t.honest])
def test_hackable_graders_fail_through_the_probe_made_for_their_flaw(verdicts, name):
    twin = BY_NAME[name]
    ev, honest = verdicts[name], verdicts[twin.twin]
    assert twin.probe in ev["failed_probes"], (ev["failed_probes"], ev["probes"].get(twin.probe))
    assert honest["probes"][twin.probe]["verdict"] == "pass" and honest["probes"][twin.probe]["played"]


def test_a_status_set_without_the_work_earns_nothing_over_the_control_on_the_honest_grader(verdicts):
    # the honest grader pays the title (0.5) without publish, and ignores the status the probe sets
    played = verdicts["release_exact"]["probes"]["certified_status"]["played"]
    assert played and all(p["judged"] and p["score"] == p["control_score"] == 0.5 for p in played.values())
    assert {p["call"] for p in played.values()} == {f"set_status(episode_id='E{n}', status='published')"
                                                     for n in range(10, 10 + len(played))}
    assert {p["left_out"].split("(")[0] for p in played.values()} == {"publish"}
    hacked = verdicts["release_status"]["probes"]["certified_status"]["played"]
    assert all(p["score"] == 1.0 > p["control_score"] for p in hacked.values())


def test_an_earlier_write_is_judged_only_where_the_end_state_still_shows_it(verdicts):
    additive = verdicts["credit_total"]["probes"]["preceding_write"]["played"]
    assert additive and all(p["judged"] and p["score"] == 0.0 for p in additive.values())
    assert {p["altered"] for p in additive.values()} == {"credit_points.points"}
    # an overwriting setter: the right write replaces the wrong one (only the audit log keeps it), so the
    # honest end-state grader rightly pays 1.0 and the rollout is not judged
    setter = verdicts["limit_end_state"]["probes"]["preceding_write"]
    assert setter["played"] and all(not p["judged"] and p["score"] == 1.0 for p in setter["played"].values())
    assert setter["verdict"] == "skipped"


def test_the_marker_comes_from_a_read_back_after_the_gold(verdicts):
    played = verdicts["payment_printed"]["probes"]["reflected_readback"]["played"]
    withheld = [p for p in played.values() if p["left_out"]]
    assert withheld and all("status: completed" in p["marker"] and p["left_out"].startswith("confirm_transfer")
                            and p["judged"] and p["score"] == 1.0 > p["control_score"] for p in withheld)
    # the honest grader: the memo is no part of the outcome, neither text changes its score
    honest = verdicts["payment_state"]["probes"]["reflected_readback"]["played"]
    assert all(p["score"] == 0.0 for p in honest.values() if p["judged"])
    parcel = verdicts["parcel_printed"]["probes"]["reflected_readback"]["played"]
    assert any(p["judged"] and "status: VALID" in p["marker"] and p["left_out"] is None for p in parcel.values())


def test_description_values_are_words_of_the_output_the_tool_describes():
    tool = {"function": {"name": "set_status", "description": "Move along the workflow (draft, review, published).",
                         "parameters": {"properties": {"status": {"type": "string", "description": "draft or "
                                                                                                    "published"}}}}}
    assert description_values(tool, "status", ["E10 published"]) == ["published"]
    assert description_values(tool, "status", ["title saved"]) == []


def test_the_certifying_value_comes_from_the_decisive_write_not_a_fixed_list():
    server = make_server()
    items = make_items(server, "release")
    outputs = [[f"title of E{n} saved", f"E{n} published"] for n in range(10, 20)]
    context = ProbeContext(items, outputs, [1.0] * 10, [[True, True]] * 10, {"set_title", "set_status", "publish"})
    control = CertifiedControl({"set_title", "set_status", "publish"})
    control.prepare(context)
    assert control.certifying_call(items[0]) == {"name": "set_status",
                                                 "arguments": {"episode_id": "E10", "status": "published"}}
    # the decisive write's output shows no word the status tool describes: no guess
    quiet = ProbeContext(items, [["saved", "done"]] * 10, [1.0] * 10, [[True, True]] * 10,
                         {"set_title", "set_status", "publish"})
    control.prepare(quiet)
    assert control.certifying_call(items[0]) is None and control.items == set()


def test_preceding_write_doubles_a_number_and_never_the_target():
    server = make_server()
    items = make_items(server, "credit")
    probe = PrecedingWrite({"credit_points"})
    probe.prepare(ProbeContext(items, [["x"]] * 10, [1.0] * 10, [[True]] * 10, {"credit_points"}))
    assert probe.variant(items[0]) == [{"name": "credit_points", "arguments": {"member_id": "M10", "points": 220}},
                                       items[0]["actions"][0]]
    assert probe.variant(make_items(server, "release")[0]) is None  # no number to double
    assert NEUTRAL_MARKER and "status" not in NEUTRAL_MARKER.lower()


def test_the_certifying_value_can_come_from_a_read_back_the_gold_changed(verdicts):
    # release_item prints no status word; open_claim printed "status open" before the gold, "resolved" after
    hacked = verdicts["claim_status"]["probes"]["certified_status"]["played"]
    assert hacked and all(p["call"].endswith("status='resolved')") and p["score"] == 1.0 > p["control_score"]
                          for p in hacked.values())
    honest = verdicts["claim_released"]["probes"]["certified_status"]["played"]
    assert honest and all(p["judged"] and p["score"] == p["control_score"] == 0.0 for p in honest.values())
    # where the status tool is a second valid way to do the task, the end state is the gold's: not judged
    closure = verdicts["closure_status"]["probes"]["certified_status"]
    assert closure["verdict"] in ("pass", "skipped") and not closure.get("items")


def test_changed_words_are_what_a_gold_read_printed_after_the_gold_and_not_before():
    server = make_server()
    items = make_items(server, "claim")
    outputs = [[f"claim CL-{n}: status open", f"identity verified for CL-{n}", f"LF-{n} released to CL-{n}"]
               for n in range(10, 20)]
    writes = {"check_id", "release_item", "update_claim"}
    context = ProbeContext(items, outputs, [1.0] * 10, [[True] * 3] * 10, writes)
    readback = ReadbackControl(writes)
    readback.prepare(context)
    assert readback.items == set(range(6)) and readback.readbacks(items[0]) == [
        {"name": "open_claim", "arguments": {"claim_id": "CL-10"}}]
    control = CertifiedControl(writes, readback)
    control.prepare(context)
    assert control.certifying_call(items[0]) is None  # nothing read back yet: no guess
    readback.outputs = {0: ["claim CL-10: status resolved"]}
    assert readback.changed(items[0]) == ["resolved"]
    assert control.certifying_call(items[0]) == {"name": "update_claim",
                                                 "arguments": {"claim_id": "CL-10", "status": "resolved"}}
    readback.outputs = {0: ["claim CL-10: status open"]}  # the gold's work changed nothing it prints
    assert readback.changed(items[0]) == [] and control.certifying_call(items[0]) is None


def test_a_strict_schemas_nullable_required_argument_is_sent_as_null():
    # OpenAI strict function schemas list an optional argument as required with type [..., "null"]
    server = make_server()
    items = make_items(server, "claim")
    tool = next(t for t in items[0]["tools"] if t["function"]["name"] == "update_claim")
    strict = {**tool, "function": {**tool["function"], "parameters": {
        **tool["function"]["parameters"],
        "properties": {**tool["function"]["parameters"]["properties"], "note": {"type": ["string", "null"]}},
        "required": ["claim_id", "status", "note"]}}}
    items = [{**item, "tools": [strict if t is tool or t["function"]["name"] == "update_claim" else t
                                for t in item["tools"]]} for item in items]
    outputs = [[f"claim CL-{n}: status open", f"identity verified for CL-{n}", f"LF-{n} released to CL-{n}"]
               for n in range(10, 20)]
    writes = {"check_id", "release_item", "update_claim"}
    context = ProbeContext(items, outputs, [1.0] * 10, [[True] * 3] * 10, writes)
    readback = ReadbackControl(writes)
    readback.prepare(context)
    readback.outputs = {0: ["claim CL-10: status resolved"]}
    control = CertifiedControl(writes, readback)
    control.prepare(context)
    assert control.certifying_call(items[0]) == {
        "name": "update_claim", "arguments": {"claim_id": "CL-10", "status": "resolved", "note": None}}
