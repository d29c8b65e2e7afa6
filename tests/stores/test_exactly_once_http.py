"""Exactly-once across the grade and per-rollout byte budgets, through the HTTP pipeline
(real uvicorn): what the hosted side sees when a call comes after the grade or a rollout
outgrows its store's budget; and ``rft serve --store URL`` choosing the store."""

from __future__ import annotations

import json
import uuid

import httpx

from rft_sdk import MemoryStore, Rollout, ToolServer
from rft_sdk.testing import run_server, serve_process


def _server(**store_options) -> ToolServer:
    server = ToolServer(store=MemoryStore(**store_options), auth_env_var=None)

    @server.tool
    def add(n: int, *, rollout: Rollout) -> int:
        """Add n to the rollout's total.

        Args:
            n: amount to add.
        """
        rollout.state["total"] = rollout.state.get("total", 0) + n
        return rollout.state["total"]

    @server.tool
    def blob(size: int) -> str:
        """Return ``size`` characters.

        Args:
            size: characters to return.
        """
        return "x" * size

    @server.grader
    def total(ctx) -> float:
        return float(ctx.state.get("total", 0) == 3)

    return server


def _call(client: httpx.Client, trace_id: str, call_id: str, name: str, **arguments) -> httpx.Response:
    return client.post(f"/tools/{name}", json={"type": "function_call", "call_id": call_id, "name": name,
                                               "arguments": json.dumps(arguments), "trace_id": trace_id})


def test_late_call_after_grade_is_refused_and_never_starts_a_fresh_rollout():
    server = _server()
    trace = "trace_" + uuid.uuid4().hex
    with run_server(server) as url, httpx.Client(base_url=url) as client:
        assert _call(client, trace, "c1", "add", n=1).json()["output"] == "1"
        assert _call(client, trace, "c2", "add", n=2).json()["output"] == "3"
        grade = client.post("/grade", json={"sample": {"output_text": "done"}, "item": {}, "trace_id": trace})
        assert grade.json() == {"score": 1.0}
        late = _call(client, trace, "c3", "add", n=5)
        assert late.status_code == 409
        assert late.json()["error"]["code"] == "already_graded" and late.json()["call_id"] == "c3"
        # retried: the same answer, and still nothing recorded or created for that trace_id
        assert _call(client, trace, "c3", "add", n=5).status_code == 409
        regrade = client.post("/grade", json={"sample": {"output_text": "done"}, "item": {}, "trace_id": trace})
        assert regrade.json() == {"score": 1.0}  # identical grade replays its recorded score
        other = client.post("/grade", json={"sample": {"output_text": "other"}, "item": {}, "trace_id": trace})
        assert other.status_code == 409
    assert server.metrics["counters"]["late_calls"] == 2


def test_rollout_over_its_byte_budget_gets_a_model_visible_error_and_keeps_its_state():
    server = _server(max_rollout_bytes=20_000, max_total_bytes=1_000_000)
    trace = "trace_" + uuid.uuid4().hex
    with run_server(server) as url, httpx.Client(base_url=url) as client:
        assert _call(client, trace, "c1", "add", n=1).status_code == 200
        too_big = _call(client, trace, "c2", "blob", size=50_000)
        assert too_big.status_code == 413
        body = too_big.json()
        assert body["error"]["code"] == "rollout_too_large" and "output" not in body
        assert "20,000" in body["error"]["message"]
        assert _call(client, trace, "c3", "add", n=2).json()["output"] == "3"  # state kept, rollout goes on
        grade = client.post("/grade", json={"sample": {"output_text": "x"}, "item": {}, "trace_id": trace})
        assert grade.json() == {"score": 1.0}


def test_rft_serve_store_flag_lets_two_workers_serve_from_one_sqlite_store(tmp_path):
    db = tmp_path / "rollouts.db"
    trace = "trace_" + uuid.uuid4().hex
    with serve_process("examples.retail.app:server", "--workers", "2", "--store", f"sqlite:///{db}") as url, \
            httpx.Client(base_url=url) as client:
        for i in range(6):  # calls of one rollout land on either worker
            r = client.post("/tools/get_order_details", json={
                "type": "function_call", "call_id": f"c{i}", "name": "get_order_details",
                "arguments": json.dumps({"order_id": "#W5918442"}), "trace_id": trace})
            assert r.status_code == 200
    assert db.exists() and db.stat().st_size > 0
