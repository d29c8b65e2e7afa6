"""The retail example through NVIDIA NeMo Gym's own code against ``rft serve --surfaces hosted,nemo_gym``.

NeMo Gym's ``vllm_model`` (model server, in front of a gold-replay chat-completions server on 127.0.0.1),
``simple_agent``, ``legacy_agent`` environment server and ``ng_collect_rollouts`` run in ``.venv-eco2``
(``rft_sdk.portability._nemo_gym_driver``); the tool server is a real ``rft serve`` process on a SQLite
store the test reads back.
"""

from __future__ import annotations

import json

import pytest

from rft_sdk import SQLiteStore
from rft_sdk.testing import serve_process

from ._eco2 import eco2_python, run_eco2
from .conftest import DATASET, ITEMS, hosted_replay_score, stored

DRIVER = "rft_sdk.portability._nemo_gym_driver"


@pytest.fixture(scope="module")
def nemo_server(tmp_path_factory):
    """``rft serve tests.integrations.apps:retail_recorded --surfaces hosted,nemo_gym`` without tokens
    (NeMo Gym's servers send none); yields ``(base_url, store)``."""
    store_path = tmp_path_factory.mktemp("nemo") / "rollouts.db"
    env = {"RFT_AUTH_TOKENS": "", "RFT_TEST_STORE": str(store_path)}
    with serve_process("tests.integrations.apps:retail_recorded", "--surfaces", "hosted,nemo_gym", env=env) as url:
        yield url, SQLiteStore(store_path)


def test_nemo_gym_rollout_collection_scores_like_the_hosted_wire(nemo_server, tmp_path):
    python = eco2_python("nemo_gym")
    base_url, store = nemo_server
    result = run_eco2(python, DRIVER, base_url, str(DATASET), str(tmp_path / "gym"), "10", "4")
    assert result["nemo_gym"].startswith("0.7.")
    rollouts = result["rollouts"]
    assert len(rollouts) == 40
    by_task = {str(item["task_id"]): item for item in ITEMS[:10]}
    assert {r["task_id"] for r in rollouts} == set(by_task)
    assert all(sum(r["task_id"] == t for r in rollouts) == 4 for t in by_task)
    trace_ids = [r["trace_id"] for r in rollouts]
    assert len(set(trace_ids)) == 40 and all(t.startswith("trace_") for t in trace_ids)  # one rollout per session
    records = stored(store, trace_ids)
    for rollout in rollouts:
        item = by_task[rollout["task_id"]]
        saved, grades = records[rollout["trace_id"]]
        assert saved is not None and saved.item.get("task_id") == item["task_id"]
        # the server recorded exactly this rollout's calls: the gold ones, each answered (no state from a sibling)
        assert [c.name for c in saved.trajectory] == [a["name"] for a in item["actions"]] == rollout["tool_calls"]
        assert [c.arguments for c in saved.trajectory] == [a["arguments"] for a in item["actions"]]
        assert all(c.error is None for c in saved.trajectory)
        assert rollout["mask_sample"] is False and rollout["failure_kind"] is None
        assert rollout["reward"] == grades[next(iter(grades))].score
        assert set(rollout["reward_components"]) == {"communicate_info", "db_match", "process"}
    # the hosted wire's score of the same trajectory (one replay per item: they are identical by the asserts above)
    for task_id, item in by_task.items():
        first = next(r for r in rollouts if r["task_id"] == task_id)
        replay = hosted_replay_score(base_url, records[first["trace_id"]][0], item["reference_answer"])
        assert [r["reward"] for r in rollouts if r["task_id"] == task_id] == [replay] * 4
    assert sum(r["reward"] == 1.0 for r in rollouts) >= 36  # the gold trajectories pass the retail grader


def test_malformed_calls_and_the_step_limit_through_nemo_gyms_agent(nemo_server, tmp_path):
    """Item 0: a bad-JSON call (NeMo Gym's agent answers it itself: never sent), an unknown tool (404 body to
    the model, not recorded) and a schema-invalid call (422 body, recorded) before its gold calls.
    Second run, ``max_steps=2``: cut after two turns of tool calls, graded with the last turn's text ("")."""
    python = eco2_python("nemo_gym")
    base_url, store = nemo_server
    bad = {"0": [["calculate", "{not json"], ["no_such_tool", "{}"], ["calculate", '{"expression": 5}']]}
    result = run_eco2(python, DRIVER, base_url, str(DATASET), str(tmp_path / "bad"), "1", "1",
                      "--bad-calls", json.dumps(bad))
    (rollout,) = result["rollouts"]
    saved, _ = stored(store, [rollout["trace_id"]])[rollout["trace_id"]]
    item = ITEMS[0]
    names = [c.name for c in saved.trajectory]
    assert names == ["calculate", *[a["name"] for a in item["actions"]]]  # only the 422 call of the three
    assert saved.trajectory[0].status == 422 and saved.trajectory[0].error is not None
    assert rollout["tool_calls"][:3] == ["calculate", "no_such_tool", "calculate"]
    assert rollout["reward"] == hosted_replay_score(base_url, saved, item["reference_answer"])

    cut = run_eco2(python, DRIVER, base_url, str(DATASET), str(tmp_path / "cut"), "1", "1", "--max-steps", "2")
    (rollout,) = cut["rollouts"]
    saved, grades = stored(store, [rollout["trace_id"]])[rollout["trace_id"]]
    assert [c.name for c in saved.trajectory] == [a["name"] for a in item["actions"][:2]]  # the cut turn's calls ran
    assert len(grades) == 1 and rollout["reward"] == hosted_replay_score(base_url, saved, "")


def test_nemo_gyms_session_conformance_check_passes():
    python = eco2_python("nemo_gym")
    result = run_eco2(python, "tests.surfaces.eco_nemo_gym")
    assert result["conformance"] == "passed" and result["nemo_gym"].startswith("0.7.")
