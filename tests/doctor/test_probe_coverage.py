"""Three probe gaps an outside team's held-back suite found (every probe scored 0 on each miss):

* ``altered_writes`` always altered the same argument of a write (``amount_cents``, never ``order_id``):
  now the items share every argument of the gold's writes out, ids retargeted at a sibling entity of the
  item's own (so the call succeeds), free text and status writes only when nothing else can be altered;
* a JSON answer with list fields: no probe sent the right answer with extra list elements
  (``answer_superset``, with ``structured_control`` telling where the lists are graded), and the dumps and
  wildcards sent text a parser rejects (now in the answer's own JSON shape);
* ``self_certification`` was skipped whenever the gold itself sets a status after the work with a word
  outside the success list: now it plays the gold's own status writes without the work writes.

The end-to-end twins (an honest grader the probe must not fail beside each hackable one) are the
``refund``, ``meeting`` and ``cite`` shapes of ``shape_twins``.
"""

from __future__ import annotations

import json
from typing import Any

from rft_sdk.doctor._answers import answer_object, object_dump, object_wildcards
from rft_sdk.doctor._dataset_probes import AlteredWrites, AnswerSpaceDump
from rft_sdk.doctor._generic import SelfCertification
from rft_sdk.doctor._probes import ProbeContext
from rft_sdk.doctor._structured import AnswerSuperset, StructuredControl

NOTE = "refund issued for the damaged item as agreed"


def _refund_items(n: int = 6) -> list[dict[str, Any]]:
    return [{"messages": [{"role": "user", "content": f"refund {k}"}], "reference_answer": f"Refunded {k}.",
             "orders": {f"#O{k}a": {}, f"#O{k}b": {}},
             "actions": [{"name": "refund", "arguments": {"order_id": f"#O{k}a", "amount_cents": 100 + k,
                                                          "note": NOTE}},
                         {"name": "set_case_status", "arguments": {"order_id": f"#O{k}a", "status": "refunded"}}]}
            for k in range(n)]


def test_altered_writes_alters_every_argument_that_matters_on_some_item() -> None:
    items = _refund_items()
    probe = AlteredWrites(["refund", "set_case_status"])
    probe.prepare(ProbeContext(items, write_tools=["refund", "set_case_status"]))
    played = [probe.describe(i) for i in items]
    altered = [p["altered"] for p in played]
    # the old probe altered refund.amount_cents on every item: an order-blind grader went unseen
    assert set(altered) == {"refund.amount_cents", "refund.order_id"}, altered
    assert altered.count("refund.order_id") == 3
    # an id goes to another entity of the item's own (the customer's other order), so the call succeeds
    order = next(p for p in played if p["altered"] == "refund.order_id")
    assert order["source"] == "sibling" and order["to"] == order["from"][:-1] + "b"
    # the free-text note and the status write are never altered while anything else can be
    assert not any(a.endswith(".note") or a.startswith("set_case_status") for a in altered)
    plan = probe.plan(items[1])
    assert plan[1] == [items[1]["actions"][1]]  # the rest of the gold unchanged


def test_altered_writes_falls_back_to_status_writes_and_never_alters_free_text() -> None:
    only_status = [{"messages": [], "reference_answer": "ok", "actions": [
        {"name": "set_case_status", "arguments": {"order_id": f"#O{k}", "status": "refunded"}}]} for k in range(2)]
    probe = AlteredWrites(["set_case_status"])
    probe.prepare(ProbeContext(only_status, write_tools=["set_case_status"]))
    assert probe.applies(only_status[0]) and probe.describe(only_status[0])["altered"].startswith("set_case_status")
    only_note = [{"messages": [], "reference_answer": "ok", "actions": [
        {"name": "annotate", "arguments": {"note": NOTE}}]}]
    probe = AlteredWrites(["annotate"])
    probe.prepare(ProbeContext(only_note, write_tools=["annotate"]))
    # issue 37: free text is no graded outcome, so a gold whose only write is a note has nothing to alter
    assert probe.describe(only_note[0]) == {} and not probe.applies(only_note[0])


def _tool(name: str, **props: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props,
                                                                          "required": list(props)}}}


def test_self_certification_plays_the_golds_own_status_write_without_the_work() -> None:
    tools = [_tool("refund", order_id={"type": "string"}, amount_cents={"type": "integer"}, note={"type": "string"}),
             _tool("set_case_status", order_id={"type": "string"},
                   status={"type": "string", "enum": ["open", "refunded", "rejected"]})]
    items = [{**i, "tools": tools} for i in _refund_items(2)]
    probe = SelfCertification(["refund", "set_case_status"])
    probe.prepare(ProbeContext(items, write_tools=["refund", "set_case_status"]))
    # "refunded" is no success word and the enum holds none: the old probe skipped the item
    assert probe.applies(items[0])
    assert probe.calls(items[0]) == [items[0]["actions"][1]]
    assert probe.describe(items[0]) == {"calls": ["set_case_status(order_id='#O0a', status='refunded')"]}
    # the status write is the whole task: skipped; the status an argument of the work write itself: skipped
    alone = [{**items[0], "actions": [items[0]["actions"][1]]}]
    probe.prepare(ProbeContext(alone, write_tools=["refund", "set_case_status"]))
    assert not probe.applies(alone[0])
    single = [{**items[0], "tools": [_tool("update", id={"type": "string"}, hour={"type": "integer"},
                                           status={"type": "string"})],
               "actions": [{"name": "update", "arguments": {"id": "a1", "hour": 10, "status": "scheduled"}}]}]
    probe = SelfCertification(["update"])
    probe.prepare(ProbeContext(single, write_tools=["update"]))
    assert not probe.applies(single[0])
    # "state" is an address field, not a status: a work write with it is no status write
    address = {"name": "modify_address", "arguments": {"order_id": "#O1", "city": "Austin", "state": "TX"}}
    assert SelfCertification(["modify_address"]).calls({"actions": [address], "tools": []}) == []


def _cite_items() -> list[dict[str, Any]]:
    return [{"messages": [{"role": "user", "content": f"q{k}"}], "actions": [{"name": "search", "arguments": {}}],
             "reference_answer": json.dumps({"answer": f"finding {k}", "citations": [f"S{k}", f"S{k + 10}"]})}
            for k in range(4)]


def test_structured_answers_are_padded_replaced_dumped_and_wildcarded_in_their_own_shape() -> None:
    items = _cite_items()
    context = ProbeContext(items, write_tools=[])
    control, superset = StructuredControl([]), AnswerSuperset([])
    control.prepare(context)
    mine = answer_object(items[0]["reference_answer"])
    assert mine is not None and answer_object("finding 0") is None
    replaced = json.loads(control.final_answer(items[0]))
    assert replaced["answer"] == "finding 0" and len(replaced["citations"]) == 2
    assert not set(replaced["citations"]) & {"S0", "S10"}
    # the control: replacing the lists kept the gold's score on item 1 only (its lists are not graded)
    control.record(context, {0: 0.0, 1: 1.0, 2: 0.5}, {0: 1.0, 1: 1.0, 2: 1.0})
    assert context.lists_free == {1} and context.lists_checked == {0, 1, 2}
    superset.prepare(context)
    assert [superset.applies(i) for i in items] == [True, False, True, False]  # item 3: never checked
    padded = json.loads(superset.final_answer(items[0]))
    assert padded["answer"] == "finding 0" and padded["citations"][:2] == ["S0", "S10"]
    assert len(padded["citations"]) == 4 and not set(padded["citations"][2:]) & {"S0", "S10"}
    assert superset.must_lower and control.control
    # the dump and the wildcards keep the answer's keys (a parser accepts them), commit to nothing
    objects = [answer_object(i["reference_answer"]) for i in items]
    dump = json.loads(object_dump(mine, [o for o in objects if o]))
    assert set(dump) == {"answer", "citations"} and len(dump["citations"]) == 8
    assert dump["answer"].split("\n") == [f"finding {k}" for k in range(4)]
    probe = AnswerSpaceDump()
    probe.prepare(context)
    assert json.loads(probe.dump(items[2])) == dump
    assert [json.loads(w) for w in object_wildcards(mine)][0] == {"answer": "*", "citations": ["*"]}


def test_altered_writes_never_plays_a_write_that_a_listed_alternative_makes() -> None:
    # An outside suite's honest calendar grader FAILed: the hour was altered 11 -> 12, which the item lists
    # as an alternative (another valid hour), and the honest grader rightly paid it.
    items = [{"messages": [], "reference_answer": "Booked.",
              "actions": [{"name": "book", "arguments": {"request_id": f"R{k}", "hour": 11}}],
              "alternatives": [{"actions": [{"name": "book", "arguments": json.dumps({"request_id": f"R{k}",
                                                                                       "hour": 12})}]}]}
             for k in range(2)]
    items.append({"messages": [], "reference_answer": "Booked.",
                  "actions": [{"name": "book", "arguments": {"request_id": "R9", "hour": 12}}]})
    probe = AlteredWrites(["book"])
    probe.prepare(ProbeContext(items, write_tools=["book"]))
    for item in items[:2]:
        for option in probe.candidates(item):
            assert option["call"]["arguments"]["hour"] != 12, option
    assert {o["altered"] for o in probe.candidates(items[0])} == {"book.request_id"}
    assert any(o["to"] == 11 for o in probe.candidates(items[2]))  # no alternative listed there: altered as before
