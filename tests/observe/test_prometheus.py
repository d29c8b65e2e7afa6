"""``GET /metrics``: Prometheus text parsed with ``prometheus_client``'s parser; histograms move with calls."""

from __future__ import annotations

import json

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from rft_sdk import Grade, GradingContext, Rollout, ToolError, ToolServer
from rft_sdk.testing import run_server

AUTH = {"Authorization": "Bearer metrics-token"}


@pytest.fixture
def server() -> ToolServer:
    server = ToolServer(auth_tokens=["metrics-token"], auth_env_var=None)

    @server.tool
    def echo(text: str, *, rollout: Rollout) -> str:
        """Echo the text.

        Args:
            text: anything.
        """
        rollout.state["n"] = rollout.state.get("n", 0) + 1
        return text

    @server.tool
    def fail() -> str:
        """Always a model-visible error."""
        raise ToolError("nope")

    @server.grader
    def judge(ctx: GradingContext) -> Grade:
        """0.7 for any rollout."""
        return Grade(0.7, {"x": 1.0})

    return server


def scrape(client: httpx.Client) -> dict[tuple[str, tuple], float]:
    """``{(sample name, sorted labels): value}`` of one scrape."""
    r = client.get("/metrics", headers=AUTH)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(r.text) for s in family.samples}


def call(client: httpx.Client, tool: str, trace_id: str, call_id: str, args: dict) -> int:
    body = {"type": "function_call", "call_id": call_id, "name": tool, "arguments": json.dumps(args),
            "trace_id": trace_id}
    return client.post(f"/tools/{tool}", json=body, headers=AUTH).status_code


def test_histograms_move_as_calls_are_made(server: ToolServer) -> None:
    with run_server(server) as url, httpx.Client(base_url=url) as client:
        before = scrape(client)
        assert before[("rft_events_total", (("event", "tool_calls"),))] == 0  # known events exported at 0
        assert before[("rft_rollouts_in_flight", ())] == 0
        assert call(client, "echo", "t1", "c1", {"text": "hello"}) == 200
        assert call(client, "echo", "t1", "c2", {"text": "x" * 300}) == 200
        assert call(client, "echo", "t1", "c2", {"text": "x" * 300}) == 200  # replayed: not executed again
        assert call(client, "fail", "t1", "c3", {}) == 400
        mid = scrape(client)
        assert client.post("/grade", json={"sample": {"output_text": "done"}, "trace_id": "t1"},
                           headers=AUTH).json() == {"score": 0.7}
        after = scrape(client)

    echo = (("tool", "echo"),)
    assert mid[("rft_tool_latency_seconds_count", echo)] == 2
    assert mid[("rft_tool_latency_seconds_sum", echo)] > 0
    assert mid[("rft_tool_latency_seconds_bucket", (("le", "+Inf"), ("tool", "echo")))] == 2
    assert mid[("rft_tool_calls_total", (("outcome", "ok"), ("tool", "echo")))] == 2
    assert mid[("rft_tool_calls_total", (("outcome", "error"), ("tool", "fail")))] == 1
    assert mid[("rft_tool_arguments_bytes_count", echo)] == 2
    assert mid[("rft_tool_arguments_bytes_sum", echo)] == len('{"text": "hello"}') + len(json.dumps({"text": "x" * 300}))
    assert mid[("rft_tool_arguments_bytes_bucket", (("le", "256.0"), ("tool", "echo")))] == 1  # 300 x's: above
    assert mid[("rft_tool_output_bytes_sum", echo)] == 5 + 300
    assert mid[("rft_events_total", (("event", "tool_calls"),))] == 3
    assert mid[("rft_events_total", (("event", "replayed_calls"),))] == 1
    assert mid[("rft_rollouts_in_flight", ())] == 1
    assert ("rft_rollout_tool_calls_count", (("grader", "judge"),)) not in mid  # nothing graded yet

    judge = (("grader", "judge"),)
    assert after[("rft_rollout_tool_calls_count", judge)] == 1
    assert after[("rft_rollout_tool_calls_sum", judge)] == 3  # two echo calls and one failed call recorded
    assert after[("rft_rollout_tool_calls_bucket", (("grader", "judge"), ("le", "2.0")))] == 0
    assert after[("rft_rollout_tool_calls_bucket", (("grader", "judge"), ("le", "3.0")))] == 1
    assert after[("rft_grade_score_sum", judge)] == pytest.approx(0.7)
    assert after[("rft_grade_score_bucket", (("grader", "judge"), ("le", "0.6")))] == 0
    assert after[("rft_grade_score_bucket", (("grader", "judge"), ("le", "0.7")))] == 1
    assert after[("rft_grade_latency_seconds_count", judge)] == 1
    assert after[("rft_rollouts_in_flight", ())] == 0
    assert after[("rft_store_events_total", (("event", "released"),))] == 1


def test_json_view_and_auth(server: ToolServer) -> None:
    with run_server(server) as url, httpx.Client(base_url=url) as client:
        assert call(client, "echo", "t2", "c1", {"text": "a"}) == 200
        as_query = client.get("/metrics?format=json", headers=AUTH)
        as_accept = client.get("/metrics", headers={**AUTH, "Accept": "application/json"})
        openmetrics = client.get("/metrics", headers={**AUTH, "Accept": "application/openmetrics-text"})
        assert client.get("/metrics").status_code == 401
        assert server.metrics["counters"] == {"tool_calls": 1, "auth_failures": 1}
    for r in (as_query, as_accept):
        assert r.headers["content-type"] == "application/json"
        assert r.json()["counters"] == {"tool_calls": 1}  # read before the unauthenticated request
        assert r.json()["tools"]["echo"]["calls"] == 1
    assert openmetrics.headers["content-type"].startswith("application/openmetrics-text")
    assert openmetrics.text.rstrip().endswith("# EOF")


def test_each_server_has_its_own_registry(server: ToolServer) -> None:
    other = ToolServer(auth_env_var=None)
    server.metrics_state.tool_call("echo", error=False, latency_s=0.1)
    text = other.metrics_state.exposition(None, None)[0].decode()
    assert "rft_tool_latency_seconds_count{" not in text
    text = server.metrics_state.exposition(None, None)[0].decode()
    assert 'rft_tool_latency_seconds_count{tool="echo"} 1.0' in text
