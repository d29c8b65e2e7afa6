"""Integration: a real uvicorn server on 127.0.0.1 driven with httpx (hosted-format bodies)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from sdk_helpers import call_body, make_server, new_trace

from rft_sdk.testing import run_server


@pytest.fixture(scope="module")
def live():
    server = make_server()
    with run_server(server) as url:
        yield server, url


async def test_interleaved_rollouts_keep_separate_state(live):
    server, url = live
    t1, t2 = new_trace(), new_trace()
    async with httpx.AsyncClient(base_url=url) as c:
        plan = [(t1, "A", 1), (t2, "B", 2), (t1, "A", 3), (t2, "C", 4), (t1, "D", 5)]
        outputs = []
        for i, (trace, sku, qty) in enumerate(plan):
            r = await c.post("/tools/add_to_cart", json=call_body(
                "add_to_cart", {"sku": sku, "qty": qty}, trace_id=trace, call_id=f"call_{i}"))
            outputs.append(r.json()["output"])
    assert outputs == ["cart now has 1 items", "cart now has 2 items", "cart now has 4 items",
                       "cart now has 6 items", "cart now has 9 items"]
    s1, s2 = await server.store.load(t1), await server.store.load(t2)
    assert json.loads(s1.state_json) == {"cart": {"A": 4, "D": 5}}
    assert json.loads(s2.state_json) == {"cart": {"B": 2, "C": 4}}
    assert [r.call_id for r in s1.trajectory] == ["call_0", "call_2", "call_4"]


async def test_parallel_calls_of_one_rollout_do_not_race(live):
    server, url = live
    trace = new_trace()
    async with httpx.AsyncClient(base_url=url, limits=httpx.Limits(max_connections=50)) as c:
        responses = await asyncio.gather(*[
            c.post("/tools/increment", json=call_body("increment", {}, trace_id=trace, call_id=f"call_{i}"))
            for i in range(50)])
    assert all(r.status_code == 200 for r in responses)
    assert sorted(json.loads(r.json()["output"])["n"] for r in responses) == list(range(1, 51))
    stored = await server.store.load(trace)
    assert json.loads(stored.state_json) == {"n": 50} and len(stored.trajectory) == 50


async def test_many_concurrent_rollouts_no_cross_talk(live):
    server, url = live
    traces = [new_trace() for _ in range(60)]
    async with httpx.AsyncClient(base_url=url, limits=httpx.Limits(max_connections=60)) as c:
        async def rollout(k: int, trace: str):
            for step in range(3):
                r = await c.post("/tools/add_to_cart", json=call_body(
                    "add_to_cart", {"sku": f"SKU{k}", "qty": k + 1}, trace_id=trace, call_id=f"call_{step}",
                    item={"k": k}))
                assert r.status_code == 200

        await asyncio.gather(*[rollout(k, t) for k, t in enumerate(traces)])
    for k, trace in enumerate(traces):
        stored = await server.store.load(trace)
        assert json.loads(stored.state_json) == {"cart": {f"SKU{k}": 3 * (k + 1)}}
        assert stored.item == {"k": k}


async def test_concurrent_duplicate_call_id_runs_once(live):
    server, url = live
    trace = new_trace()
    body = call_body("add_to_cart", {"sku": "A", "qty": 1}, trace_id=trace, call_id="call_dup")
    async with httpx.AsyncClient(base_url=url) as c:
        responses = await asyncio.gather(*[c.post("/tools/add_to_cart", json=body) for _ in range(5)])
    assert {r.text for r in responses} == {responses[0].text} and responses[0].status_code == 200
    assert [e for e in server.executions if e[0] == trace] == [(trace, "call_dup")]


async def test_errors_over_http(live):
    _, url = live
    trace = new_trace()
    async with httpx.AsyncClient(base_url=url) as c:
        assert (await c.post("/tools/missing", json=call_body("missing", {}, trace_id=trace))).status_code == 404
        r = await c.post("/tools/add_to_cart", content=b"{not json", headers={"content-type": "application/json"})
        assert r.status_code == 400
        r = await c.post("/tools/add_to_cart", json=call_body("add_to_cart", {"qty": 2}, trace_id=trace))
        assert r.status_code == 422 and r.json()["error"]["details"][0]["field"] == "sku"
        r = await c.post("/tools/fail", json=call_body("fail", {"kind": "crash"}, trace_id=trace))
        assert r.status_code == 400
        r = await c.post("/tools/fail", json=call_body("fail", {"kind": "retry"}, trace_id=trace))
        assert r.status_code == 503

        async def chunks():  # chunked upload, no Content-Length: the server must stop reading
            yield b'{"call_id": "call_big", "trace_id": "' + trace.encode() + b'", "arguments": "'
            for _ in range(40):
                yield b"x" * 65_536
            yield b'"}'

        r = await c.post("/tools/add_to_cart", content=chunks(), headers={"content-type": "application/json"})
        assert r.status_code == 413
        assert (await c.get("/healthz")).status_code == 200  # worker still alive


def test_auth_on_over_http(monkeypatch):
    monkeypatch.delenv("RFT_AUTH_TOKENS", raising=False)
    server = make_server(auth_tokens=["old-token", "new-token"])
    with run_server(server) as url:
        body = call_body("add_to_cart", {"sku": "A"}, trace_id=new_trace())
        assert httpx.post(f"{url}/tools/add_to_cart", json=body).status_code == 401
        assert httpx.post(f"{url}/tools/add_to_cart", json=body,
                          headers={"Authorization": "Bearer bad"}).status_code == 401
        assert httpx.get(f"{url}/healthz").status_code == 200
        for token in ("old-token", "new-token"):
            r = httpx.post(f"{url}/tools/add_to_cart", json={**body, "call_id": f"call_{token}"},
                           headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 200
