"""OpenEnv's own client (``openenv`` from the index, ``MCPToolClient``) against ``rft serve --surfaces ...,openenv``.

10 retail items x 4 parallel sessions (``num_generations`` = 4): every episode's reward equals the hosted
wire's score of the same trajectory, its sub-scores are the grader's, and the 4 rollouts of an item never
see each other's state (their recorded trajectories are identical although each one writes the database).
"""

from __future__ import annotations

import json

import httpx
import pytest

from rft_sdk.testing import serve_process

from .conftest import DATASET, ITEMS, TOKEN, hosted_replay_score, run_eco, stored

pytestmark = pytest.mark.slow  # a long file: the scheduler starts it first (tests/conftest.py)

N_ITEMS, GENERATIONS = 10, 4


def _gold(index: int) -> list[list]:
    return [[a["name"], a["arguments"], None] for a in ITEMS[index]["actions"]]


def test_gold_rollouts_in_parallel_sessions_score_like_the_hosted_wire(eco_python, recorded_server):
    base_url, store = recorded_server
    episodes = [{"index": i, "calls": _gold(i), "answer": ITEMS[i]["reference_answer"]}
                for i in range(N_ITEMS) for _ in range(GENERATIONS)]
    out = run_eco(eco_python, "tests.surfaces.eco_openenv", base_url + "/openenv", TOKEN,
                  json.dumps({"episodes": episodes, "parallel": True}))
    results = out["episodes"]
    assert all("exception" not in r for r in results), [r for r in results if "exception" in r][:2]
    trace_ids = [r["trace_id"] for r in results]
    assert len(set(trace_ids)) == N_ITEMS * GENERATIONS and all(t.startswith("trace_") for t in trace_ids)
    records = stored(store, trace_ids)
    by_item: dict[int, list] = {}
    for result in results:
        rollout, grades = records[result["trace_id"]]
        assert result["done"] is True and result["step_count"] == len(ITEMS[result["index"]]["actions"])
        assert [c.name for c in rollout.trajectory] == [a["name"] for a in ITEMS[result["index"]]["actions"]]
        assert rollout.item["task_id"] == ITEMS[result["index"]]["task_id"]
        assert result["reward"] == grades["retail"].score
        assert result["metadata"]["subscores"] == grades["retail"].details["subscores"]
        assert result["reward"] == hosted_replay_score(base_url, rollout, ITEMS[result["index"]]["reference_answer"])
        by_item.setdefault(result["index"], []).append([(c.status, c.output) for c in rollout.trajectory])
    for index, trajectories in by_item.items():  # a write in one session never shows in another
        assert len(trajectories) == GENERATIONS and all(t == trajectories[0] for t in trajectories), index
    assert sum(r["reward"] for r in results) > 0  # gold trajectories earn reward (not all-zero by accident)


def test_malformed_calls_are_treated_like_the_hosted_wire(eco_python, recorded_server):
    base_url, store = recorded_server
    # OpenEnv's action carries arguments as an object, and MCPToolClient sends no action metadata: a model's
    # unparseable arguments text cannot travel through it (the harness rejects it); raw text sent as
    # action.metadata.raw_arguments by a client that can is covered in test_websocket_without_a_token_is_refused
    bad = [["no_such_tool", {}, None], ["get_order_details", {"order": "#W1"}, None]]
    spec = {"index": 0, "calls": bad + _gold(0), "answer": ITEMS[0]["reference_answer"]}
    result = run_eco(eco_python, "tests.surfaces.eco_openenv", base_url + "/openenv", TOKEN,
                     json.dumps({"episodes": [spec], "parallel": False}))["episodes"][0]
    unknown, invalid = (step["error"] for step in result["steps"][:2])
    assert unknown["error_type"] == "tool_not_found" and json.loads(unknown["message"])["error"]["code"] == "unknown_tool"
    assert invalid["error_type"] == "invalid_args" and json.loads(invalid["message"])["error"]["code"] == \
        "invalid_arguments"
    rollout, grades = stored(store, [result["trace_id"]])[result["trace_id"]]
    # recorded as on the hosted wire: the 422 is in the trajectory; the unknown tool (404) is not
    assert [(c.name, c.status) for c in rollout.trajectory[:2]] == [("get_order_details", 422),
                                                                    (ITEMS[0]["actions"][0]["name"], 200)]
    assert result["reward"] == grades["retail"].score == hosted_replay_score(base_url, rollout,
                                                                             ITEMS[0]["reference_answer"])


def test_rollout_cut_at_the_step_limit_is_graded_with_an_empty_answer(eco_python, recorded_server):
    base_url, store = recorded_server
    calls = [["get_order_details", {"order_id": "#W5918442"}, None]] * 25  # RFT_OPENENV_MAX_STEPS=20
    result = run_eco(eco_python, "tests.surfaces.eco_openenv", base_url + "/openenv", TOKEN,
                     json.dumps({"episodes": [{"index": 1, "calls": calls, "answer": None}], "parallel": False}))
    episode = result["episodes"][0]
    assert episode["done"] is True and episode["metadata"]["truncated"] is True and len(episode["steps"]) == 20
    rollout, grades = stored(store, [episode["trace_id"]])[episode["trace_id"]]
    assert len(rollout.trajectory) == 20
    assert episode["reward"] == grades["retail"].score == hosted_replay_score(base_url, rollout, "")


def test_session_capacity_is_enforced_and_freed(eco_python, tmp_path):
    env = {"RFT_AUTH_TOKENS": TOKEN, "RFT_OPENENV_DATASET": str(DATASET), "RFT_OPENENV_MAX_SESSIONS": "4"}
    with serve_process("examples.retail.app:server", "--surfaces", "openenv", env=env) as url:
        out = run_eco(eco_python, "tests.surfaces.eco_openenv", url + "/openenv", TOKEN, json.dumps({"capacity": 4}))
        assert out["refused"] is not None and "Server at capacity: 4/4 sessions active" in out["refused"]
        assert out["after_close"].startswith("trace_")
        # the hosted routes are not exposed with --surfaces openenv alone; the readiness probe is
        assert httpx.get(url + "/tools", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 404
        assert httpx.get(url + "/healthz").status_code == 200


def test_openenv_routes_take_the_servers_auth(recorded_server):
    base_url, _ = recorded_server
    assert httpx.get(base_url + "/openenv/health").status_code == 401
    for header in ({"X-Functions-Key": TOKEN}, {"api-key": TOKEN}, {"Authorization": f"Bearer {TOKEN}"}):
        assert httpx.get(base_url + "/openenv/health", headers=header).json() == {"status": "healthy"}
    schema = httpx.get(base_url + "/openenv/schema", headers={"api-key": TOKEN}).json()
    assert schema["action"]["title"] == "CallToolAction" and "reset_observation" in schema


def test_websocket_without_a_token_is_refused(recorded_server):
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    base_url, _ = recorded_server
    with pytest.raises(InvalidStatus) as refused:
        connect(base_url.replace("http://", "ws://") + "/openenv/ws", open_timeout=5)
    assert refused.value.response.status_code == 403
    with connect(base_url.replace("http://", "ws://") + "/openenv/ws", open_timeout=5,
                 additional_headers={"X-Functions-Key": TOKEN}) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"index": 3}}))
        reply = json.loads(ws.recv(timeout=10))
        assert reply["type"] == "observation" and reply["data"]["metadata"]["item_index"] == 3
        assert "\"actions\"" not in json.dumps(reply) and "reference_answer" not in json.dumps(reply)  # no gold
        ws.send(json.dumps({"type": "step", "data": {"type": "call_tool", "tool_name": "get_order_details",
                                                     "arguments": {}, "metadata": {"raw_arguments": '{"order_id": '}}}))
        error = json.loads(ws.recv(timeout=10))["data"]["observation"]["error"]
        assert error["error_type"] == "invalid_args"
        assert json.loads(error["message"])["error"]["code"] == "malformed_arguments"  # sent verbatim, hosted 400
        ws.send(json.dumps({"type": "step", "data": {"type": "call_tool", "tool_name": "submit_answer",
                                                     "arguments": {}}}))
        assert json.loads(ws.recv(timeout=10))["data"]["observation"]["error"]["error_type"] == "invalid_args"
        ws.send(json.dumps({"type": "state"}))
        state = json.loads(ws.recv(timeout=10))["data"]
        assert state["step_count"] == 1 and state["done"] is False and state["trace_id"].startswith("trace_")


@pytest.mark.parametrize("options", [{"max_sessions": 0}, {"max_steps": 0}, {"max_sessions": -1}])
def test_bounds_below_one_are_refused_not_replaced_by_the_default(options):
    from rft_sdk.surfaces import OpenEnvSurface

    with pytest.raises(ValueError, match="must be >= 1"):
        OpenEnvSurface(**options)
