"""HTTP semantics and what the server says: every non-2xx is JSON (unmatched routes included), a 500
keeps HTTP semantics (``Connection: close``), a body naming another tool or reusing a ``call_id``
with other arguments is refused, secrets never leave, logged values stay on their line, and each
counter counts what its name says."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid

import httpx
import pytest
from rel_helpers import body, closed_by_peer, connect, raw_request, read_response

from rft_sdk import GradingContext, RedisStore, Rollout, ToolServer
from rft_sdk.protocol import ErrorBody
from rft_sdk.testing import free_port, run_server


def _server(**kwargs) -> ToolServer:
    server = ToolServer(auth_env_var=None, **kwargs)
    server.runs = []

    @server.tool
    def add(sku: str, qty: int = 1, *, rollout: Rollout) -> str:
        """Add to the cart.

        Args:
            sku: product.
            qty: units.
        """
        server.runs.append(rollout.call_id)
        rollout.state[sku] = rollout.state.get(sku, 0) + qty
        return f"{rollout.state[sku]}"

    @server.tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    @server.grader
    def grade(ctx: GradingContext) -> float:
        """Raises for items asking so; else 1.0."""
        if ctx.item.get("raise"):
            raise RuntimeError("grader broke")
        return 1.0

    return server


@pytest.fixture(scope="module")
def live():
    server = _server()
    with run_server(server) as url, httpx.Client(base_url=url, timeout=10) as client:
        yield server, client, url


@pytest.mark.parametrize("method, path, status, code", [
    ("GET", "/nope", 404, "not_found"),
    ("POST", "/tools/add/extra", 404, "not_found"),
    ("GET", "/tools/add", 405, "method_not_allowed"),
    ("DELETE", "/healthz", 405, "method_not_allowed"),
    ("PUT", "/grade", 405, "method_not_allowed"),
])
def test_unmatched_routes_answer_json_from_the_one_handler(live, method, path, status, code):
    _, client, _ = live
    answer = client.request(method, path)
    assert answer.status_code == status and answer.headers["content-type"] == "application/json"
    parsed = ErrorBody.model_validate(answer.json())
    assert parsed.error.code == code and path in parsed.error.message
    if status == 405:
        assert answer.headers["allow"] and answer.headers["allow"] in parsed.error.message


def test_an_unhandled_500_says_connection_close_and_the_next_request_gets_a_fresh_connection():
    server = _server()

    async def broken_load(trace_id):
        raise KeyError("bug in a custom store")

    server.store.load_for_call = lambda trace_id: broken_load(trace_id)
    with run_server(server) as url:
        sock = connect(url)
        try:
            sock.sendall(raw_request("/tools/add", json.dumps(body("add", {"sku": "A"})).encode()))
            status, headers, payload = read_response(sock)
            assert status == 500 and headers["connection"] == "close" and headers["content-type"] == "application/json"
            assert json.loads(payload)["error"]["code"] == "internal_error"
            assert closed_by_peer(sock, 5.0)  # announced, then done: no EOF surprise on a kept-alive connection
        finally:
            sock.close()
        assert httpx.get(url + "/healthz").status_code == 200
    assert server.metrics["counters"]["internal_errors"] == 1


def test_a_body_naming_another_tool_is_refused_naming_both(live):
    server, client, _ = live
    runs = len(server.runs)
    answer = client.post("/tools/add", json=body("ping", {"sku": "A"}))
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "invalid_request"
    message = answer.json()["error"]["message"]
    assert "'ping'" in message and "'add'" in message and answer.json()["error"]["details"][0]["field"] == "name"
    assert len(server.runs) == runs
    # the one-URL dialect dispatches on the body's name, so it always matches
    assert client.post("/tools", json=body("ping")).json()["output"] == "pong"


def test_a_reused_call_id_with_other_arguments_or_tool_is_409_and_a_true_retry_replays(live):
    server, client, _ = live
    trace = f"trace_{uuid.uuid4().hex}"
    first = client.post("/tools/add", json=body("add", {"sku": "A"}, trace_id=trace, call_id="call_1"))
    assert first.status_code == 200 and first.json()["output"] == "1"
    runs = len(server.runs)
    retry = client.post("/tools/add", json=body("add", {"sku": "A"}, trace_id=trace, call_id="call_1"))
    assert retry.content == first.content  # the hosted retry: replayed, not run again
    other = client.post("/tools/add", json=body("add", {"sku": "B"}, trace_id=trace, call_id="call_1"))
    assert other.status_code == 409 and other.json()["error"]["code"] == "call_id_conflict"
    assert "other arguments" in other.json()["error"]["message"]
    tool = client.post("/tools/ping", json=body("ping", {}, trace_id=trace, call_id="call_1"))
    assert tool.status_code == 409 and "'add'" in tool.json()["error"]["message"]
    assert len(server.runs) == runs  # neither ran
    assert client.post("/tools/add", json=body("add", {"sku": "A"}, trace_id=trace)).json()["output"] == "2"
    assert server.metrics["counters"]["call_id_conflicts"] == 2


def test_store_passwords_never_leave_the_process(caplog):
    """``redis://:PASSWORD@host`` with Redis down: the 503, the log and /metrics never show the password."""
    secret = "Sup3rSecretAccessKey"
    url = f"redis://:{secret}@127.0.0.1:{free_port()}/0?socket_connect_timeout=0.2"
    store = RedisStore(url, persistence="off")
    assert secret not in repr(store)
    server = _server(store=store)
    with caplog.at_level(logging.DEBUG, logger="rft_sdk"), run_server(server) as base:
        answer = httpx.post(base + "/tools/add", json=body("add", {"sku": "A"}), timeout=60)
        metrics = httpx.get(base + "/metrics").text + httpx.get(base + "/metrics?format=json").text
    assert answer.status_code == 503 and answer.json()["error"]["code"] == "store_unavailable"
    assert "redis://:***@127.0.0.1" in answer.json()["error"]["message"]
    assert secret not in answer.text and secret not in caplog.text and secret not in metrics
    assert "redis://:***@" in caplog.text  # the log still says which store


def test_a_store_outage_is_logged_throttled_not_once_per_request(caplog):
    store = RedisStore(f"redis://127.0.0.1:{free_port()}/0?socket_connect_timeout=0.2", persistence="off")
    server = _server(store=store)

    async def burst(url: str) -> list[int]:
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            answers = await asyncio.gather(*(client.post("/tools/add", json=body("add", {"sku": "A"}))
                                             for _ in range(30)))
        return [a.status_code for a in answers]

    with caplog.at_level(logging.WARNING, logger="rft_sdk"), run_server(server) as url:
        statuses = asyncio.run(burst(url))
        time.sleep(1.1)
        asyncio.run(burst(url))
    assert statuses == [503] * 30
    lines = [r.getMessage() for r in caplog.records if "rollout store error" in r.getMessage()]
    assert 1 <= len(lines) <= 10 and any("more like it" in line for line in lines)
    assert server.metrics["counters"]["store_errors"] == 60  # every one is still counted


def test_a_newline_in_a_trace_id_cannot_forge_a_log_line(live, caplog):
    _, client, _ = live
    forged = "t1\nCRITICAL rft_sdk: forged line"
    with caplog.at_level(logging.INFO, logger="rft_sdk"):
        answer = client.post("/grade", json={"sample": {"output_text": "x"}, "item": {"raise": True},
                                             "trace_id": forged})
    assert answer.status_code == 500
    lines = [r.getMessage() for r in caplog.records if "grader" in r.getMessage()]
    assert lines and all("\n" not in line for line in lines)
    assert any("t1\\nCRITICAL" in line for line in lines)  # escaped, still readable


def test_grader_errors_count_grader_failures_only(live):
    server, client, _ = live
    counters = dict(server.metrics["counters"])
    trace = f"trace_{uuid.uuid4().hex}"
    client.post("/tools/add", json=body("add", {"sku": "A"}, trace_id=trace))
    grade = {"sample": {"output_text": "x"}, "item": {}, "trace_id": trace}
    assert client.post("/grade", json=grade).status_code == 200
    assert client.post("/grade", json={**grade, "sample": {"output_text": "y"}}).status_code == 409
    assert client.post("/tools/add", json=body("add", {"sku": "A"}, trace_id=trace)).status_code == 409
    assert client.post("/grade", json={**grade, "trace_id": "other", "item": {"raise": 1}}).status_code == 500
    after = server.metrics["counters"]
    assert after["grader_errors"] - counters.get("grader_errors", 0) == 1
    assert after["grade_conflicts"] - counters.get("grade_conflicts", 0) == 1
    assert after["late_calls"] - counters.get("late_calls", 0) == 1
