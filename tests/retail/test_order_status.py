"""The trainer's order-status grader requires the lookup's evidence: a status no lookup of this
rollout returned is a guess and scores 0 (issue 25: "pending" without the lookup used to pay)."""

from __future__ import annotations

import json
import uuid
from collections import Counter

import httpx

from examples.retail.app import grade_order_status, server
from examples.retail.order_status_task import build_items
from rft_sdk.testing import run_server

ITEM = {"order_id": "#W2611340", "answer": "processed"}


def _call(name, order_id, output, status=200):
    return {"name": name, "arguments": {"order_id": order_id}, "output": output if status == 200 else None,
            "error": None if status == 200 else "Order not found", "status": status}


def test_the_right_status_needs_a_lookup_of_this_order_that_returned_it():
    assert grade_order_status(ITEM, "processed", [_call("get_order_status", "#W2611340", "processed")]).score == 1.0
    details = json.dumps({"order_id": "#W2611340", "status": "processed"})
    assert grade_order_status(ITEM, "Processed.", [_call("get_order_details", "#W2611340", details)]).score == 1.0
    guess = grade_order_status(ITEM, "processed", [])
    assert guess.score == 0.0 and guess.subscores == {"correct": 1.0, "called_lookup": 0.0}
    assert "a guess" in guess.reasons[0]
    other = grade_order_status(ITEM, "processed", [_call("get_order_status", "#W0000001", "processed")])
    assert other.score == 0.0 and other.subscores["called_lookup"] == 1.0  # another order's status proves nothing
    failed = grade_order_status(ITEM, "processed", [_call("get_order_status", "#W2611340", "", status=400)])
    assert failed.score == 0.0
    wrong = grade_order_status(ITEM, "pending", [_call("get_order_status", "#W2611340", "processed")])
    assert wrong.score == 0.0 and wrong.subscores["correct"] == 0.0


def test_answering_the_commonest_status_everywhere_no_longer_pays():
    _, held = build_items(seed=0)
    commonest, count = Counter(i["answer"] for i in held).most_common(1)[0]
    assert count / len(held) > 0.3  # what the guess used to earn on held-out items
    assert all(grade_order_status(i, commonest, []).score == 0.0 for i in held)
    gold = [grade_order_status(i, i["answer"], [_call("get_order_status", i["order_id"], i["answer"])]).score
            for i in held]
    assert gold == [1.0] * len(held)


async def test_over_http_the_lookup_then_the_answer_scores_one_and_the_guess_zero():
    train, _ = build_items(seed=0)
    item = next(i for i in train if i["answer"] == "pending")
    with run_server(server) as url:
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            scores = []
            for lookup in (True, False):
                trace = "trace_" + uuid.uuid4().hex
                if lookup:
                    body = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_order_status",
                            "arguments": json.dumps({"order_id": item["order_id"]}), "trace_id": trace,
                            "item": item}
                    resp = await client.post("/tools/get_order_status", json=body)
                    assert resp.json()["output"] == "pending"
                resp = await client.post("/grade/order_status", json={"sample": {"output_text": "pending"},
                                                                      "item": item, "trace_id": trace})
                scores.append(resp.json()["score"])
    assert scores == [1.0, 0.0]
