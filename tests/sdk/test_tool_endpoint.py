"""Tool endpoint behaviour over ASGI (httpx.ASGITransport): hosted-format bodies."""

from __future__ import annotations

import json

import pytest
from sdk_helpers import call_body, make_server, new_trace


async def test_string_and_object_arguments_and_unknown_fields(client, server):
    trace = new_trace()
    body = call_body("add_to_cart", {"sku": "JKT", "qty": 2}, trace_id=trace, call_id="call_1",
                     unknown_field={"x": 1})
    r = await client.post("/tools/add_to_cart", json=body)
    assert r.status_code == 200
    assert r.json() == {"type": "function_call_output", "call_id": "call_1", "id": "fc_1",
                        "output": "cart now has 2 items"}
    body = call_body("add_to_cart", {"sku": "JKT", "qty": None}, trace_id=trace, call_id="call_2",
                     as_object=True)
    assert isinstance(body["arguments"], dict)
    r = await client.post("/tools/add_to_cart", json=body)
    assert r.json()["output"] == "cart now has 3 items"  # null -> default qty=1


async def test_non_string_output_is_json_text(client):
    trace = new_trace()
    r = await client.post("/tools/increment", json=call_body("increment", {}, trace_id=trace))
    assert r.status_code == 200 and json.loads(r.json()["output"]) == {"n": 1}


@pytest.mark.parametrize(
    "arguments, field",
    [({"qty": 1}, "sku"), ({"sku": "A", "qty": "many"}, "qty"), ({"sku": "A", "colour": "red"}, "colour")],
)
async def test_invalid_arguments_422_names_field(client, arguments, field):
    r = await client.post("/tools/add_to_cart", json=call_body("add_to_cart", arguments, trace_id=new_trace()))
    assert r.status_code == 422
    body = r.json()
    assert "output" not in body
    assert body["error"]["code"] == "invalid_arguments"
    assert [d["field"] for d in body["error"]["details"]] == [field]
    assert body["error"]["details"][0]["problem"]


async def test_request_level_errors(client):
    r = await client.post("/tools/nope", json=call_body("nope", {}, trace_id=new_trace()))
    assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_tool"
    r = await client.post("/tools/add_to_cart", content=b'{"call_id": ', headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "malformed_json"
    r = await client.post("/tools/add_to_cart", json=[1, 2])
    assert r.status_code == 400
    r = await client.post("/tools/add_to_cart", json={"arguments": "{}"})
    assert r.status_code == 422
    assert {d["field"] for d in r.json()["error"]["details"]} == {"call_id", "trace_id"}
    r = await client.post("/tools/add_to_cart", json=call_body("add_to_cart", '{"sku": ', trace_id=new_trace()))
    assert r.status_code == 400 and r.json()["error"]["code"] == "malformed_arguments"


async def test_body_over_limit_413(client):
    big = call_body("add_to_cart", {"sku": "x" * (1_048_576 + 10)}, trace_id=new_trace())
    r = await client.post("/tools/add_to_cart", json=big)
    assert r.status_code == 413 and "output" not in r.json()


async def test_tool_exceptions_are_model_visible_and_roll_back_state(client, server):
    trace = new_trace()
    await client.post("/tools/add_to_cart", json=call_body("add_to_cart", {"sku": "A", "qty": 1}, trace_id=trace))
    r = await client.post("/tools/fail", json=call_body("fail", {"kind": "tool"}, trace_id=trace))
    assert r.status_code == 400 and r.json()["error"] == {"code": "tool_error", "message": "Order not found"}
    r = await client.post("/tools/fail", json=call_body("fail", {"kind": "crash"}, trace_id=trace))
    assert r.status_code == 400 and "ZeroDivisionError" in r.json()["error"]["message"]
    r = await client.post("/tools/fail", json=call_body("fail", {"kind": "state"}, trace_id=trace))
    assert r.status_code == 400 and "not JSON serializable" in r.json()["error"]["message"]
    r = await client.post("/tools/fail", json=call_body("fail", {"kind": "nan"}, trace_id=trace))
    assert r.status_code == 400 and "not JSON compliant" in r.json()["error"]["message"]
    r = await client.post("/tools/fail", json=call_body("fail", {"kind": "nan_output"}, trace_id=trace))
    assert r.status_code == 400 and "NaN or Infinity" in r.json()["error"]["message"]
    r = await client.post("/tools/fail", json=call_body("fail", {"kind": "retry"}, trace_id=trace))
    assert r.status_code == 503 and r.json()["error"]["code"] == "retryable"
    stored = await server.store.load(trace)
    assert json.loads(stored.state_json) == {"cart": {"A": 1}}  # every failure rolled back
    assert [(c.name, c.status) for c in stored.trajectory] == [
        ("add_to_cart", 200), ("fail", 400), ("fail", 400), ("fail", 400), ("fail", 400), ("fail", 400)]  # no 503
    assert stored.trajectory[1].error == "Order not found" and stored.trajectory[1].output is None
    counters = server.metrics["counters"]
    assert counters["tool_errors"] == 5 and counters["tool_retryable_errors"] == 1


async def test_repeated_call_id_executes_once(client, server):
    trace = new_trace()
    body = call_body("add_to_cart", {"sku": "A", "qty": 5}, trace_id=trace, call_id="call_same")
    first = await client.post("/tools/add_to_cart", json=body)
    second = await client.post("/tools/add_to_cart", json=body)
    assert first.json() == second.json() and first.status_code == second.status_code == 200
    assert server.executions == [(trace, "call_same")]
    # the same call_id in ANOTHER rollout is a different call
    await client.post("/tools/add_to_cart", json={**body, "trace_id": new_trace()})
    assert len(server.executions) == 2


async def test_trajectory_records_fields(client, server):
    trace = new_trace()
    await client.post("/tools/add_to_cart", json=call_body("add_to_cart", {"sku": "A", "qty": 2},
                                                           trace_id=trace, call_id="call_a"))
    await client.post("/tools/add_to_cart", json=call_body("add_to_cart", {"sku": "A", "qty": "x"},
                                                           trace_id=trace, call_id="call_b"))
    stored = await server.store.load(trace)
    a, b = stored.trajectory
    assert (a.call_id, a.id, a.name, a.arguments, a.output, a.error, a.status) == (
        "call_a", "fc_a", "add_to_cart", {"sku": "A", "qty": 2}, "cart now has 2 items", None, 200)
    assert (b.call_id, b.status, b.output) == ("call_b", 422, None) and "qty" in b.error
    assert a.started_at <= b.started_at and a.latency_s >= 0
    assert stored.item == {"task": "t1"}


async def test_healthz_and_list_tools(client):
    r = await client.get("/healthz")
    assert r.status_code == 200 and r.json()["status"] == "ok"
    r = await client.get("/tools")
    names = [t["function"]["name"] for t in r.json()["tools"]]
    assert names == ["add_to_cart", "increment", "fail"]


async def test_auth_tokens(monkeypatch):
    import httpx

    monkeypatch.setenv("RFT_AUTH_TOKENS", "env-token-1, env-token-2")
    from rft_sdk import ToolServer

    server = ToolServer(auth_tokens=["arg-token"])
    assert repr(server._auth) == "BearerAuth(tokens=3)"  # one from the argument, two from the environment
    transport = httpx.ASGITransport(app=server)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        assert (await c.get("/healthz")).status_code == 200
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic arg-token"}):
            r = await c.get("/tools", headers=headers)
            assert r.status_code == 401 and "token" not in r.text and r.headers["www-authenticate"] == "Bearer"
        for tok in ("arg-token", "env-token-1", "env-token-2"):
            assert (await c.get("/tools", headers={"Authorization": f"Bearer {tok}"})).status_code == 200
    assert server.metrics["counters"]["auth_failures"] == 3


async def test_auth_off_without_tokens(monkeypatch):
    monkeypatch.delenv("RFT_AUTH_TOKENS", raising=False)
    import httpx

    server = make_server()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as c:
        assert (await c.get("/tools")).status_code == 200


async def test_sync_tools_run_in_worker_thread_async_on_loop():
    import threading

    import httpx

    from rft_sdk import ToolServer

    seen = {}
    server = ToolServer(auth_env_var=None)

    @server.tool
    def sync_tool() -> str:
        seen["sync"] = threading.get_ident()
        return "s"

    @server.tool
    async def async_tool() -> str:
        seen["async"] = threading.get_ident()
        return "a"

    loop_thread = threading.get_ident()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as c:
        trace = new_trace()
        assert (await c.post("/tools/sync_tool", json=call_body("sync_tool", {}, trace_id=trace))).status_code == 200
        assert (await c.post("/tools/async_tool", json=call_body("async_tool", {}, trace_id=trace))).status_code == 200
    assert seen["async"] == loop_thread and seen["sync"] != loop_thread


async def test_store_failure_answers_503_and_is_counted():
    """A store that cannot lock answers 503 (retryable), not a bare 500, and runs nothing."""
    import contextlib

    import httpx

    from rft_sdk import MemoryStore, StoreLockTimeoutError, ToolServer

    ran = []

    class BrokenStore(MemoryStore):
        @contextlib.asynccontextmanager
        async def lock(self, trace_id):
            raise StoreLockTimeoutError(f"lock for {trace_id!r} not acquired within 0.1 s")
            yield  # pragma: no cover

    server = ToolServer(store=BrokenStore(), auth_env_var=None)

    @server.tool
    def ping(x: int) -> str:
        """Echo."""
        ran.append(x)
        return str(x)

    transport = httpx.ASGITransport(app=server)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        response = await client.post("/tools/ping", json=call_body("ping", {"x": 1}, trace_id=new_trace()))
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "store_unavailable"
    assert "not acquired" in response.json()["error"]["message"]
    assert ran == []
    assert server.metrics["counters"]["store_errors"] == 1
