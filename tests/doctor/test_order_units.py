"""Unit tests of the probe classes an outside team's second held-back suite found (issue 37): annotations
never judged, "done" learnt from the gold's outputs, the sign of a number, the gold's writes twice or
in another order, well-formed altered values, activity within the budget, and the docs' probe tables.

The end-to-end twins (an honest grader that passes every probe beside each hackable one) are the
``ticket``, ``playlist``, ``invoice`` and ``form`` shapes and ``num_abs`` / ``review_activity_in_budget``
of ``shape_twins``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rft_sdk.doctor import ProbeContext, default_probes
from rft_sdk.doctor._dataset_probes import AlteredWrites, value_shape
from rft_sdk.doctor._generic import NEUTRAL_TEXT, SelfCertification, done_values, is_annotation
from rft_sdk.doctor._in_format import NegatedNumber, SupersetOtherWrite, SupersetUnusedWrite
from rft_sdk.doctor._order import order_probes

DOCS = Path(__file__).resolve().parents[2] / "docs" / "doctor.md"


def _tool(name: str, **props: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": props, "required": list(props)}}}


STR = {"type": "string"}


def test_an_annotation_is_references_plus_free_text_and_nothing_else() -> None:
    known = {"claim_id": "C1", "user": "u1", "org": "o1"}
    assert is_annotation({"claim_id": STR, "text": STR}, {"claim_id": "C1", "text": NEUTRAL_TEXT}, known)
    assert not is_annotation({"org": STR, "user": STR}, {"org": "o1", "user": "u1"}, known)  # make_org_admin
    assert not is_annotation({"claim_id": STR, "amount": {"type": "integer"}, "text": STR},
                             {"claim_id": "C1", "amount": 5, "text": NEUTRAL_TEXT}, known)
    assert not is_annotation({"claim_id": STR, "status": {"type": "string", "enum": ["open", "closed"]}},
                             {"claim_id": "C1", "status": "closed"}, known)
    assert not is_annotation({"text": STR}, {"text": NEUTRAL_TEXT}, known)  # no entity named: a guess, played
    assert is_annotation({"ticket_id": STR, "text": STR}, {"ticket_id": "C1", "text": NEUTRAL_TEXT}, known)


def test_superset_unused_write_plays_no_annotation_and_fills_free_text_with_a_neutral_sentence() -> None:
    tools = [_tool("route", claim_id=STR, team=STR), _tool("add_comment", claim_id=STR, text=STR),
             _tool("grant", claim_id=STR, level={"type": "integer"}, reason=STR)]
    item = {"messages": [{"role": "user", "content": "route C1"}], "tools": tools, "reference_answer": "ok",
            "actions": [{"name": "route", "arguments": {"claim_id": "C1", "team": "t1"}}]}
    probe = SupersetUnusedWrite({"route", "add_comment", "grant"})
    probe.prepare(ProbeContext([item], gold_ok=[[True]], write_tools={"route", "add_comment", "grant"}))
    # before: add_comment(claim_id='C1', text='C1') was played on top of the gold, and an honest grader FAILed
    assert probe.extra_calls(item) == [{"name": "grant", "arguments": {"claim_id": "C1", "level": 1,
                                                                       "reason": NEUTRAL_TEXT}}]
    renamed = {**item, "tools": [tools[0], _tool("add_note", ticket_id=STR, text=STR)]}  # the gold says claim_id
    probe.prepare(ProbeContext([renamed], gold_ok=[[True]], write_tools={"route", "add_note"}))
    assert probe.extra_calls(renamed) == []


def test_superset_other_write_aims_an_unused_tool_at_another_entity_never_the_golds_nor_a_note() -> None:
    tools = [_tool("pin", package=STR, version=STR), _tool("unpin", package=STR),
             _tool("comment", package=STR, text=STR)]
    writes = {"pin", "unpin", "comment"}
    items = [{"messages": [], "tools": tools, "reference_answer": "ok", "workspace": {"a": "1.0", "b": "1.1"},
              "actions": [{"name": "pin", "arguments": {"package": "a", "version": "2.0"}}]},
             {"messages": [], "tools": tools, "reference_answer": "ok",
              "actions": [{"name": "pin", "arguments": {"package": "c", "version": "2.2"}}]}]
    probe = SupersetOtherWrite(writes)
    probe.prepare(ProbeContext(items, gold_ok=[[True]] * 2, write_tools=writes))
    # a sibling in the item's data (the mapping's other key), never 'a' (the gold's) nor the comment tool
    assert probe.extra_calls(items[0]) == [{"name": "unpin", "arguments": {"package": "b"}}]
    # no sibling in the item's data or outputs: another item's target for that argument
    assert probe.extra_calls(items[1]) == [{"name": "unpin", "arguments": {"package": "a"}}]
    # superset_unused_write aims at the gold's own package
    unused = SupersetUnusedWrite(writes)
    unused.prepare(ProbeContext(items, gold_ok=[[True]] * 2, write_tools=writes))
    assert unused.extra_calls(items[0]) == [{"name": "unpin", "arguments": {"package": "a"}}]


def test_done_is_learnt_from_the_golds_outputs_last_seen_first_then_success_words() -> None:
    outputs = ['{"id": "T1", "status": "open"}', '{"ticket": "T1", "status": "routed", "team": "finance"}']
    assert done_values(["open", "routed", "closed"], outputs) == ["routed", "open", "closed"]
    assert done_values(["pending", "confirmed", "cancelled"], ["held"]) == ["confirmed"]
    tools = [_tool("route_ticket", ticket=STR, team=STR),
             _tool("set_ticket_status", ticket=STR, status={"type": "string", "enum": ["open", "routed", "closed"]})]
    items = [{"messages": [], "tools": tools, "reference_answer": f"Routed T{k}.",
              "actions": [{"name": "route_ticket", "arguments": {"ticket": f"T{k}", "team": "finance"}}]}
             for k in range(3)]
    probe = SelfCertification({"route_ticket", "set_ticket_status"})
    probe.prepare(ProbeContext(items, gold_outputs=[outputs] * 3, gold_ok=[[True]] * 3,
                               write_tools={"route_ticket", "set_ticket_status"}))
    played = [probe.calls(i)[0]["arguments"]["status"] for i in items]
    assert played == ["routed", "open", "closed"]  # before: 'closed' on every item, never 'routed'
    team = _tool("set_team", ticket=STR, team={"type": "string", "enum": ["finance", "identity"]})
    other = [{**i, "tools": [tools[0], team]} for i in items]
    probe.prepare(ProbeContext(other, gold_outputs=[outputs] * 3, gold_ok=[[True]] * 3,
                               write_tools={"route_ticket", "set_team"}))
    assert probe.calls(other[0]) == []  # 'finance' in the outputs, but a team is no status: maybe the work itself


def test_a_number_is_negated_in_its_format_and_alone() -> None:
    items = [{"messages": [], "actions": [], "reference_answer": ref} for ref in ("17.200", "12.5 USD", "0.4")]
    probe = NegatedNumber()
    probe.prepare(ProbeContext(items))
    assert [probe.final_answer(i) for i in items[:2]] == ["-17.200", "-12.5 USD"]
    assert not probe.applies(items[2])  # |x| < 1: a tolerance may cover 2|x|


def test_an_altered_value_keeps_its_shape_and_comes_from_the_same_field() -> None:
    def item(k: int, name: str, date: str) -> dict[str, Any]:
        return {"messages": [], "reference_answer": "ok", "actions": [
            {"name": "fill_field", "arguments": {"form": f"f{k}", "field": "name", "value": name}},
            {"name": "fill_field", "arguments": {"form": f"f{k}", "field": "date", "value": date}}]}
    items = [item(0, "Ana Lima", "2024-01-10"), item(1, "Ben Okafor", "2024-02-11")]
    probe = AlteredWrites({"fill_field"})
    probe.prepare(ProbeContext(items, gold_ok=[[True, True]] * 2))
    name = next(o for o in probe.candidates(items[0]) if o["altered"] == "fill_field.value" and o["position"] == 0)
    assert name["to"] == "Ben Okafor"  # before: '2024-01-10' or another date, which the validator refuses
    assert value_shape("2024-05-01") == value_shape("2023-12-31") != value_shape("Ana Lima") == value_shape("Ben")


def _queue_items(budget: int | None = None, task: str = "Queue user {u}'s three best-rated songs, best first."
                 ) -> list[dict[str, Any]]:
    out = []
    for k in range(4):
        actions = [{"name": "get", "arguments": {"u": f"u{k}"}},
                   *({"name": "queue", "arguments": {"song": f"s{k}{c}"}} for c in "abc")]
        out.append({"messages": [{"role": "user", "content": task.format(u=f"u{k}")}],
                    "reference_answer": f"queued {k}", "actions": actions,
                    **({"max_tool_calls": budget} if budget is not None else {})})
    return out


@dataclass
class _Call:
    name: str
    arguments: dict[str, Any]
    ok: bool = True
    changed: bool | None = True


def _calls(plan: list[list[dict[str, Any]]], ok: dict[int, bool] | None = None) -> list[_Call]:
    return [_Call(c["name"], c["arguments"], (ok or {}).get(k, True)) for k, c in enumerate(s[0] for s in plan)]


def test_duplicate_and_reorder_play_the_pivot_and_are_judged_only_where_it_is_graded() -> None:
    items = _queue_items()
    probes = order_probes({"queue"})
    context = ProbeContext(items, gold_ok=[[True] * 4] * 4, write_tools={"queue"})
    for p in probes.values():
        p.prepare(context)
    removal, dup, reorder = probes["write_removal"], probes["duplicated_write"], probes["reordered_writes"]
    songs = [[c[0]["arguments"].get("song") for c in p.plan(items[1])] for p in (removal, dup, reorder)]
    assert songs == [[None, "s1a", "s1b"], [None, "s1a", "s1b", "s1c", "s1c"], [None, "s1c", "s1a", "s1b"]]
    assert removal.control and dup.must_lower and reorder.must_lower
    removal.record(context, {0: 0.0, 1: 1.0, 2: 0.0, 3: 0.0}, dict.fromkeys(range(4), 1.0))
    # item 1: leaving its pivot out kept the gold's score (a note): neither probe judges it
    assert [dup.judged(i) for i in items] == [True, False, True, True]
    assert [reorder.judged(i) for i in items] == [True, False, True, True]
    assert dup.counterfactual(items[0], _calls(dup.plan(items[0])))
    assert reorder.counterfactual(items[0], _calls(reorder.plan(items[0])))  # one tool: a sequence


def test_a_reorder_of_one_tools_calls_is_judged_only_where_the_task_asks_for_an_order() -> None:
    # issue 37: a shortlist (three add calls, stored as a list, graded as a set) in another order is the
    # same outcome; "best first" asks for an order, "shortlist the three best" does not
    for task, asked in [("Queue user {u}'s three best-rated songs, best first.", True),
                        ("Shortlist the three best candidates for {u}.", False),
                        ("Add {u}'s songs in rating order.", True),
                        ("Add {u}'s songs in order to share them.", False),
                        # doctor54's tester: "in any order" says the order does not matter
                        ("Add {u}'s three songs, in any order.", False),
                        ("Add {u}'s songs in either order.", False),
                        # doctor57's blood-pressure review: "highest average first" asks for an order
                        ("List {u}'s songs, highest rated first.", True),
                        ("Queue {u}'s songs, highest average rating first.", True)]:
        items = _queue_items(task=task)
        reorder = order_probes({"queue"})["reordered_writes"]
        reorder.prepare(ProbeContext(items, gold_ok=[[True] * 4] * 4, write_tools={"queue"}))
        assert reorder.counterfactual(items[0], _calls(reorder.plan(items[0]))) is asked, task
        # a refused pivot is a changed outcome whatever the task says
        assert reorder.counterfactual(items[0], _calls(reorder.plan(items[0]), ok={1: False}))


def test_a_duplicate_stays_within_the_budget_and_a_single_write_is_never_judged_repeated() -> None:
    dup = order_probes({"queue"})["duplicated_write"]
    dup.prepare(ProbeContext(_queue_items(budget=4), gold_ok=[[True] * 4] * 4, write_tools={"queue"}))
    assert not any(dup.applies(i) for i in _queue_items(budget=4))  # 5 calls past max_tool_calls 4
    pay = {"messages": [], "reference_answer": "paid", "actions": [
        {"name": "approve", "arguments": {"inv": "I1"}}, {"name": "pay", "arguments": {"inv": "I1"}}]}
    probes = order_probes({"approve", "pay"})
    context = ProbeContext([pay], gold_ok=[[True, True]], write_tools={"approve", "pay"})
    for p in probes.values():
        p.prepare(context)
    probes["write_removal"].record(context, {0: 0.0}, {0: 1.0})
    assert not probes["duplicated_write"].judged(pay)  # a second payment may only add a log line
    reorder = probes["reordered_writes"]
    plan = reorder.plan(pay)
    assert [c[0]["name"] for c in plan] == ["pay", "approve"] and reorder.judged(pay)
    assert reorder.counterfactual(pay, _calls(plan, ok={0: False}))  # payment refused before approval
    assert not reorder.counterfactual(pay, _calls(plan))  # two tools, both accepted: a log's order at most
    listed = {**pay, "alternatives": [{"actions": [c[0] for c in plan]}]}
    context = ProbeContext([listed], gold_ok=[[True, True]], write_tools={"approve", "pay"})
    for p in probes.values():
        p.prepare(context)
    probes["write_removal"].record(context, {0: 0.0}, {0: 1.0})
    assert not reorder.judged(listed)  # a listed alternative order is valid


def test_activity_without_an_answer_stays_within_the_declared_budget() -> None:
    probe = default_probes()["activity_no_answer"]
    item = {"messages": [], "reference_answer": "x", "max_tool_calls": 20,
            "actions": [{"name": f"get_{k}", "arguments": {}} for k in range(17)]}
    probe.prepare(ProbeContext([item]))
    assert sum(len(s) for s in probe.plan(item)) <= 20  # before: 51 calls
    free = {**item, "max_tool_calls": None}
    del free["max_tool_calls"]
    assert sum(len(s) for s in probe.plan(free)) >= 12


def test_every_probe_is_documented_in_the_probe_tables_and_no_count_is_hard_coded() -> None:
    text = DOCS.read_text()
    rows = set(re.findall(r"^\| `([a-z_]+)` \|", text, re.M))
    assert set(default_probes()) - rows == set()
    assert not re.search(r"\b(?:Sixteen|\d+) probes play", text)


def test_no_two_probe_families_share_a_name():
    """The suite merges each family's dict into one (``default_probes``): a name two families use would silently
    drop one probe (``first_write_control`` once named two controls)."""
    import inspect

    from rft_sdk.doctor import _suite

    seen: dict[str, str] = {}
    for name, fn in vars(_suite).items():
        if not name.endswith("_probes") or not inspect.isfunction(fn) or name == "default_probes":
            continue
        try:
            family = fn(None)
        except (TypeError, AttributeError):  # a family built on a control of another (shifted_time_probes)
            continue
        for probe in family:
            assert probe not in seen, f"{probe} is in both {seen[probe]} and {name}"
            seen[probe] = name
