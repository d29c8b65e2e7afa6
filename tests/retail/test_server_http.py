"""The retail server over real HTTP (uvicorn on 127.0.0.1 via rft_sdk.testing.run_server)."""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
import pytest

from examples.retail.app import server
from rft_sdk.testing import run_server


@pytest.fixture(scope="module")
def base_url():
    with run_server(server) as url:
        yield url


def _trace() -> str:
    return "trace_" + uuid.uuid4().hex


async def _call(client, trace, name, args, item=None, call_id=None):
    cid = call_id or "call_" + uuid.uuid4().hex[:12]
    body = {"type": "function_call", "id": "fc_" + cid, "call_id": cid, "name": name,
            "arguments": json.dumps(args), "trace_id": trace, "item": item or {}}
    return await client.post(f"/tools/{name}", json=body)


async def _grade(client, trace, item, text, name=None):
    url = "/grade" + (f"/{name}" if name else "")
    return await client.post(url, json={"sample": {"output_text": text}, "item": item, "trace_id": trace})


def _items(split, n):
    from examples.retail._db import DATA_DIR
    lines = (DATA_DIR / f"retail_{split}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines[:n]]


async def test_reference_replay_over_http_scores_one(base_url):
    items = _items("test", 12) + _items("train", 8)
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        for item in items:
            trace = _trace()
            for action in item["actions"]:
                resp = await _call(client, trace, action["name"], action["arguments"], item)
                assert resp.status_code in (200, 400), resp.text
            resp = await _grade(client, trace, item, item["reference_answer"])
            assert resp.status_code == 200 and resp.json() == {"score": 1.0}, (item["task_id"], resp.text)
            details = json.loads(resp.headers["x-rft-grade-details"])
            assert details["subscores"]["db_match"] == 1.0


async def test_model_visible_error_with_spec_message(base_url):
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        resp = await _call(client, _trace(), "get_order_details", {"order_id": "#W0"})
        assert resp.status_code == 400 and "output" not in resp.json()
        assert "Order not found" in resp.text


async def test_fifty_concurrent_rollouts_on_same_order_do_not_cross_talk(base_url, base):
    order = next(o for o in base.tables["orders"].values()
                 if o["status"] == "pending" and len(o["payment_history"]) == 1)
    oid = order["order_id"]
    new_address = {"address1": "1 Test Way", "address2": "", "city": "Austin", "state": "TX",
                   "country": "USA", "zip": "73301"}
    traces = [_trace() for _ in range(60)]

    async def rollout(k, client):
        trace = traces[k]
        if k % 2 == 0:
            resp = await _call(client, trace, "cancel_pending_order", {"order_id": oid, "reason": "no longer needed"})
        else:
            resp = await _call(client, trace, "modify_pending_order_address", {"order_id": oid, **new_address})
        assert resp.status_code == 200, resp.text
        return json.loads((await _call(client, trace, "get_order_details", {"order_id": oid})).json()["output"])

    limits = httpx.Limits(max_connections=64)
    async with httpx.AsyncClient(base_url=base_url, timeout=60, limits=limits) as client:
        finals = await asyncio.gather(*(rollout(k, client) for k in range(60)))
        for k, final in enumerate(finals):
            if k % 2 == 0:
                assert final["status"] == "cancelled" and final["address"] == order["address"]
                assert len(final["payment_history"]) == 2
            else:
                assert final["status"] == "pending" and final["address"] == new_address
                assert final["payment_history"] == order["payment_history"]
        fresh = json.loads((await _call(client, _trace(), "get_order_details", {"order_id": oid})).json()["output"])
    assert fresh == order  # the shared base never changed


async def test_retried_call_id_applies_write_once(base_url, base):
    order = next(o for o in base.tables["orders"].values()
                 if o["status"] == "pending" and o["payment_history"][0]["payment_method_id"].startswith("gift_card"))
    oid, uid = order["order_id"], order["user_id"]
    gift = order["payment_history"][0]["payment_method_id"]
    balance = base.tables["users"][uid]["payment_methods"][gift]["balance"]
    trace = _trace()
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        args = {"order_id": oid, "reason": "ordered by mistake"}
        first = await _call(client, trace, "cancel_pending_order", args, call_id="call_retry1")
        again = await _call(client, trace, "cancel_pending_order", args, call_id="call_retry1")
        assert first.status_code == again.status_code == 200 and first.json() == again.json()
        user = json.loads((await _call(client, trace, "get_user_details", {"user_id": uid})).json()["output"])
        final = json.loads((await _call(client, trace, "get_order_details", {"order_id": oid})).json()["output"])
    refunds = [e for e in final["payment_history"] if e["transaction_type"] == "refund"]
    assert len(refunds) == 1
    assert user["payment_methods"][gift]["balance"] == round(balance + order["payment_history"][0]["amount"], 2)


async def test_order_status_tool_and_grader(base_url, base):
    order = next(o for o in base.tables["orders"].values() if o["status"] == "delivered")
    item = {"order_id": order["order_id"], "answer": "delivered"}
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        trace = _trace()
        resp = await _call(client, trace, "get_order_status", {"order_id": order["order_id"]}, item)
        assert resp.json()["output"] == "delivered"
        good = await _grade(client, trace, item, "  Delivered! ", name="order_status")
        assert good.json() == {"score": 1.0}
        assert json.loads(good.headers["x-rft-grade-details"])["subscores"]["called_lookup"] == 1.0
        other = _trace()
        bad = await _grade(client, other, item, "pending", name="order_status")
        assert bad.json() == {"score": 0.0}
        assert json.loads(bad.headers["x-rft-grade-details"])["subscores"]["called_lookup"] == 0.0
        missing = await _call(client, _trace(), "get_order_status", {"order_id": "#W0"})
        assert missing.status_code == 400 and "Order not found" in missing.text
