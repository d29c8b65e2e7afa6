"""The written-value twins (``value_twins``) through the doctor against one real server: the honest
graders (end state; last write) pass every probe without a warning, each hackable twin (substring
test of the written value; first write read; a success marker the tool echoes from the model's own
argument) fails through the probe made for it, which its honest twins pass; a one-letter
multiple-choice reference is never played back by ``adv_answer_prefix``."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from doctor_helpers import twin_probes, twin_verdicts
from value_twins import LIMITS, TWINS, job_for, make_items, make_server

from rft_sdk.doctor._generic import FAMILIES, AdversarialAnswer
from rft_sdk.doctor._probes import ProbeContext
from rft_sdk.doctor._value_probes import OverwrittenWrite, ReflectedMarker, containing, success_markers

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict]:
    """{grader: unhackable evidence}; no write tools given (declared)."""
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if t[1]])
def test_honest_graders_pass_every_probe_without_warnings(verdicts, name):
    ev = verdicts[name]
    assert ev["failed_probes"] == [], {p: (ev["probes"][p]["mean_score"], ev["probes"][p].get("played"))
                                       for p in ev["failed_probes"]}
    # four letters over ten items: answering a letter without reading is a prior RL can learn, a
    # warning of answer_without_work (the shortcut's own rule), not of a probe of this file
    assert set(ev["warned_probes"]) <= ({"answer_without_work"} if name == "choice_exact" else set())


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if not t[1]])
def test_hackable_graders_fail_through_their_probe_which_the_honest_twins_pass(verdicts, name):
    probe = TWINS[name][2]
    assert probe in verdicts[name]["failed_probes"], (verdicts[name]["failed_probes"], verdicts[name]["probes"][probe])
    for honest in ("limit_end_state", "limit_last_write"):
        assert verdicts[honest]["probes"][probe]["verdict"] == "pass"


def test_the_report_says_what_each_probe_played(verdicts):
    rows = verdicts["limit_trusts_echo"]["probes"]
    assert all("status: VALID" in p["marker"] and p["call"].startswith("set_limit(account=")
               for p in rows["reflected_marker"]["played"].values())
    contained = verdicts["limit_contains"]["probes"]["contained_value"]["played"]
    # the limit, never the free-text comment (a note an honest grader may rightly ignore)
    assert contained and {(p["from"], p["to"]) for p in contained.values()} <= {(v, "1" + v) for v in LIMITS.values()}
    assert all(p["altered"] == "set_limit.limit" for p in verdicts["limit_first_write"]["probes"]
               ["overwritten_write"]["played"].values())
    # every adversarial answer played is in the report (a failure can be explained from doctor.json)
    choice = verdicts["choice_exact"]["probes"]
    assert choice["adv_special_numbers"]["played"] and all(
        "answer" in p for p in choice["adv_special_numbers"]["played"].values())


def test_a_one_letter_reference_is_never_played_back_as_its_own_prefix(verdicts):
    # the old adv_answer_prefix sent "B" for the reference "B": a correct multiple-choice grader paid it and FAILed
    row = verdicts["choice_exact"]["probes"]["adv_answer_prefix"]
    assert row["verdict"] == "skipped" and any("too short" in r for r in row["skip_reasons"])
    probe = AdversarialAnswer(FAMILIES["adv_answer_prefix"])
    for ref in ("B", "Yes", "no."):
        assert FAMILIES["adv_answer_prefix"]({"reference_answer": ref}, probe) == []
    assert FAMILIES["adv_answer_prefix"]({"reference_answer": "Paris"}, probe) == ["P"]


def test_containing_values_contain_the_gold_and_differ_from_it():
    for value in (678, "8070", "-3.5", "0.25", "0", "s10", "port", "a + b\n"):
        new = containing(value)
        assert str(value) in str(new) and str(new) != str(value)
        if isinstance(value, str):  # a number parsed from it is another number, far outside a tolerance
            try:
                assert abs(float(new) - float(value)) >= 1
            except ValueError:
                pass
    assert [containing(v) for v in (0, 1.5, True, "", [1])] == [None] * 5


def test_overwritten_write_plays_the_gold_first_and_the_wrong_value_last():
    """The converse (a wrong write, then the gold's) ends right: an end-state grader must pay it, so the
    probe never plays it; its wrong write always comes after the gold's, on the same account."""
    server = make_server()
    items = make_items(server, "limit")
    probe = OverwrittenWrite({"set_limit"})
    probe.prepare(ProbeContext(items, write_tools={"set_limit"}))
    for item in items:
        writes = [c for [c] in probe.plan(item) if c["name"] == "set_limit"]
        assert len(writes) == 2 and writes[0] == item["actions"][1]
        assert writes[1]["arguments"]["account"] == item["account"]
        assert writes[1]["arguments"]["limit"] != LIMITS[item["account"]]


def test_success_markers_are_the_output_lines_with_words_the_task_never_gave():
    outputs = ['{"account": "a10", "requested": "730"}', "saved a10: raised as asked\nstatus: VALID"]
    known = ["Account a10 asked for a new limit", '{"account": "a10", "requested": "730"}', "raised as asked"]
    assert success_markers(outputs, known) == "saved a10: raised as asked\nstatus: VALID"
    assert success_markers(["a10 730"], ["a10 730"]) == ""


def test_a_marker_line_the_reads_printed_before_the_write_is_no_echo():
    """A held-out honest grader FAILed ``reflected_marker``: its marker was lines of a listing read, and the
    read back after the write lists the same rows whatever the model wrote. Only a line the reads did not
    print before the write can be an echo of the model's text."""
    probe = ReflectedMarker({"suspend_vessel"})
    probe.marker = lambda item: "FV1: quota 100 kg, landed 120 kg\nstatus: SUSPENDED"  # type: ignore[method-assign]
    item = {"actions": [_call_of("list_port", port="P1"), _call_of("suspend_vessel", vessel="FV1")]}
    listing = "FV1: quota 100 kg, landed 120 kg\nFV2: quota 90 kg, landed 50 kg"
    calls = [SimpleNamespace(output=listing, ok=True), SimpleNamespace(output="FV1 suspended", ok=True),
             SimpleNamespace(output=listing, ok=True)]
    assert not probe.counterfactual(item, calls)
    calls[2] = SimpleNamespace(output=listing + "\nstatus: SUSPENDED", ok=True)
    assert probe.counterfactual(item, calls)


def _call_of(name, **arguments):
    return {"name": name, "arguments": arguments}
