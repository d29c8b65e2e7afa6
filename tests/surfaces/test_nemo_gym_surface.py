"""The nemo_gym surface's contract in process (no NeMo Gym install): sessions, verify, limits, config command."""

from __future__ import annotations

import json

import httpx
import pytest
import yaml

from examples.retail._server_tools import SERVED_TOOLS
from examples.retail.app import retail
from rft_sdk import ToolServer, tool
from rft_sdk.cli import main as rft_main
from rft_sdk.surfaces import load_surface
from rft_sdk.surfaces._nemo_gym import COOKIE, NeMoGymSurface
from rft_sdk.surfaces._nemo_gym_session import aggregate_metrics, final_answer

from .conftest import DATASET, ITEMS

ITEM = ITEMS[0]
# per-request cookies name the session under test explicitly (they override the client's jar)
pytestmark = pytest.mark.filterwarnings("ignore:Setting per-request cookies:DeprecationWarning")


def _client(**surface_options) -> httpx.AsyncClient:
    server = ToolServer(tools=SERVED_TOOLS, graders=[retail], auth_env_var=None,
                        surfaces=["hosted", NeMoGymSurface(**surface_options)])
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://gym")


def _answer(text: str) -> dict:
    return {"output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}]}


async def _seed(client: httpx.AsyncClient, **body) -> dict[str, str]:
    response = await client.post("/seed_session", json=body or {"responses_create_params": {"input": "hi"},
                                                                 "rft_item": ITEM})
    assert response.status_code == 200, response.text
    return {COOKIE: response.cookies[COOKIE]}


async def test_a_session_is_a_rollout_graded_on_its_own_trajectory():
    async with _client() as client:
        first, second = await _seed(client), await _seed(client)
        assert first != second
        for action in ITEM["actions"]:
            answer = await client.post(f"/{action['name']}", json=action["arguments"], cookies=first)
            assert answer.status_code == 200, answer.text
        good = await client.post("/verify", json={"responses_create_params": {"input": "hi"}, "extra": 1,
                                                  "response": _answer(ITEM["reference_answer"])}, cookies=first)
        idle = await client.post("/verify", json={"response": _answer(ITEM["reference_answer"])}, cookies=second)
        again = await client.post("/verify", json={"response": _answer(ITEM["reference_answer"])}, cookies=first)
    body = good.json()
    assert body["reward"] == 1.0 and body["extra"] == 1 and body["mask_sample"] is False  # the request is echoed
    assert body["trace_id"].startswith("trace_") and body["reward_components"]["db_match"] == 1.0
    assert idle.json()["reward"] < 1.0 and idle.json()["trace_id"] != body["trace_id"]  # no calls: not solved
    assert again.json()["reward"] == 1.0  # a repeated verify answers the same grade


async def test_lost_sessions_and_bad_bodies_are_refused_clearly():
    async with _client() as client:
        lost = await client.post("/verify", json={"response": _answer("x")}, cookies={COOKIE: "forged"})
        call = await client.post("/calculate", json={"expression": "1+1"}, cookies={COOKIE: "forged"})
        huge = await client.post("/seed_session", json={"rft_item": {"blob": "x" * 1_100_000}})
        not_json = await client.post("/seed_session", content=b"{oops")
        not_object = await client.post("/seed_session", json=[1])
        bad_seed = await client.post("/seed_session", json={"resources_session_id": "r", "episode_id": "e"})
        grade = await client.post("/grade", json={})  # a hosted route, never taken for a tool
        cookies = await _seed(client)
        unknown = await client.post("/no_such_tool", json={}, cookies=cookies)
        raw = await client.post("/calculate", content=b"{not json", cookies=cookies)
    assert lost.status_code == 200 and lost.json()["mask_sample"] is True
    assert lost.json()["failure_kind"] == "session_lost" and lost.json()["reward"] == 0.0
    assert call.status_code == 400 and call.json()["error"]["code"] == "no_session"
    assert not_json.status_code == 400 and not_object.status_code == 422 and bad_seed.status_code == 422
    assert huge.status_code == 413  # a session's item is held in memory: bounded like a hosted call
    assert grade.status_code == 422 and grade.json()["error"]["code"] == "invalid_request"
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_tool"
    assert raw.status_code == 400 and raw.json()["error"]["code"] == "malformed_arguments"


async def test_environment_server_seeds_are_idempotent_and_closed_ids_stay_closed():
    seed = {"resources_session_id": "rs-1", "episode_id": {"rollout_id": "r1", "attempt": 0},
            "task_id": {"taskset": "retail", "task_id": "5"}, "task_data": {"rft_item": ITEM}}
    close = {"resources_session_id": "rs-1", "episode_id": {"rollout_id": "r1", "attempt": 0}}
    async with _client() as client:
        one = await client.post("/seed_session", json=seed)
        two = await client.post("/seed_session", json=seed)
        other = await client.post("/seed_session", json={**seed, "episode_id": {"rollout_id": "r2", "attempt": 0}})
        closed = [await client.post("/close_session", json=close) for _ in range(2)]
        late = await client.post("/seed_session", json=seed)
    assert one.json() == two.json() == {"resources_session_id": "rs-1"}
    assert one.cookies[COOKIE] == two.cookies[COOKIE]
    assert other.status_code == 409 and [c.status_code for c in closed] == [200, 200]
    assert late.status_code == 409 and late.json()["error"]["code"] == "session_closed"


async def test_capacity_and_expiry():
    async with _client(max_sessions=1, session_timeout_s=0.05) as client:
        cookies = await _seed(client)
        full = await client.post("/seed_session", json={"rft_item": ITEM})
        import asyncio

        await asyncio.sleep(0.1)
        expired = await client.post("/verify", json={"response": _answer("x")}, cookies=cookies)
        again = await client.post("/seed_session", json={"rft_item": ITEM})  # the expired one was reaped
    assert full.status_code == 503 and full.json()["error"]["code"] == "capacity_reached"
    assert expired.json()["failure_kind"] == "session_expired" and expired.json()["mask_sample"] is True
    assert again.status_code == 200


@pytest.mark.parametrize("options", [{"max_sessions": 0}, {"session_timeout_s": 0}, {"session_timeout_s": -1.0}])
def test_bounds_not_positive_are_refused_not_replaced_by_the_default(options):
    with pytest.raises(ValueError, match="must be positive"):
        NeMoGymSurface(**options)


def test_the_final_answer_is_the_last_model_turns_text():
    call = {"type": "function_call", "call_id": "c1", "name": "t", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
    msg = _answer("thinking")["output"][0]
    assert final_answer({"output": [msg, call, output, *_answer("done")["output"]]}) == "done"
    assert final_answer({"output": [call, output, msg, call, output]}) == "thinking"  # cut: that turn's text
    assert final_answer({"output": [call, output]}) == "" and final_answer(None) == ""


def test_aggregate_metrics_use_nemo_gyms_names_and_leave_masked_samples_out():
    metrics = aggregate_metrics([{"_ng_task_index": 0, "reward": 1.0, "reward_components": {"a": 1.0}},
                                 {"_ng_task_index": 0, "reward": 0.0, "reward_components": {"a": 0.0}},
                                 {"_ng_task_index": 1, "reward": 0.0, "mask_sample": True}])
    assert metrics["agent_metrics"]["mean/reward"] == 0.5 and metrics["agent_metrics"]["mean/a"] == 0.5
    assert metrics["agent_metrics"]["mean/mask_sample"] == pytest.approx(1 / 3)
    assert metrics["group_level_metrics"] == [{"_ng_task_index": 0, "mean/reward": 0.5, "max/reward": 1.0,
                                               "min/reward": 0.0, "median/reward": 0.5, "std/reward": 0.5}]


def test_reserved_tool_names_are_refused_at_mount():
    @tool(name="verify")
    def verify_order(order_id: str) -> str:
        """Check an order."""
        return order_id

    with pytest.raises(ValueError, match="verify"):
        ToolServer(tools=[verify_order], surfaces=["nemo_gym"], auth_env_var=None)

    @tool(name="readyz")  # a probe route: POST /readyz answers 405, so the tool could never be reached
    def readiness(order_id: str) -> str:
        """Check readiness."""
        return order_id

    with pytest.raises(ValueError, match="readyz"):
        ToolServer(tools=[readiness], surfaces=["nemo_gym"], auth_env_var=None)
    assert isinstance(load_surface("nemo_gym", max_sessions=3), NeMoGymSurface)


def test_rft_nemo_gym_writes_a_config_nemo_gym_can_load(tmp_path, capsys):
    assert rft_main(["nemo-gym", "--url", "http://127.0.0.1:8123", "--dataset", str(DATASET), "--out",
                     str(tmp_path), "--name", "retail"]) == 0
    root = tmp_path / "resources_servers" / "retail"
    config = yaml.safe_load((root / "configs" / "retail.yaml").read_text())
    server = config["retail_resources_server"]["resources_servers"]["retail"]
    assert (server["host"], server["port"], server["domain"]) == ("127.0.0.1", 8123, "agent")
    agent = config["retail_simple_agent"]["responses_api_agents"]["simple_agent"]
    assert agent["datasets"] == [{"name": "retail_test", "type": "validation", "license": "TBD",
                                  "jsonl_fpath": "resources_servers/retail/data/retail_test.jsonl"}]
    env = config["retail_environment_server"]["environment_servers"]["legacy_agent"]
    assert env["agent_server"] == {"type": "responses_api_agents", "name": "retail_simple_agent"}
    rows = [json.loads(line) for line in (root / "data" / "retail_test.jsonl").read_text().splitlines()]
    assert len(rows) == len(ITEMS) and rows[0]["rft_item"] == ITEMS[0]
    params = rows[0]["responses_create_params"]
    assert params["input"] == [{"role": m["role"], "content": m["content"]} for m in ITEMS[0]["messages"]]
    assert {t["name"] for t in params["tools"]} == {t["function"]["name"] for t in ITEMS[0]["tools"]}
    assert all(t["type"] == "function" and "strict" in t for t in params["tools"])
    assert "127.0.0.1:8123/healthz" in (root / "app.py").read_text()
    assert rft_main(["nemo-gym", "--url", "http://127.0.0.1:8123/sub", "--dataset", str(DATASET), "--out",
                     str(tmp_path)]) == 2


async def test_raw_encoded_surrogates_are_refused_before_anything_runs():
    surrogate = b"\xed\xa0\x80"  # a lone UTF-16 surrogate, UTF-8 encoded (json.loads(bytes) would keep it)
    async with _client() as client:
        seed = await client.post("/seed_session", content=b'{"rft_item": {"note": "' + surrogate + b'"}}')
        cookies = await _seed(client)
        call = await client.post("/calculate", content=b'{"expression": "1+' + surrogate + b'"}', cookies=cookies)
        verify = await client.post("/verify", content=b'{"response": {"output": "' + surrogate + b'"}}',
                                   cookies=cookies)
        fine = await client.post("/calculate", json={"expression": "1+1"}, cookies=cookies)
    assert seed.status_code == 400 and "surrogate" in seed.json()["error"]["message"]
    assert call.status_code == 400 and call.json()["error"]["code"] == "malformed_json"  # the tool never ran
    assert verify.status_code == 400 and fine.status_code == 200
