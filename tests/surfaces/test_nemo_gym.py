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

pytestmark = pytest.mark.slow  # a long file: the scheduler starts it first (tests/conftest.py)

DRIVER = "rft_sdk.portability._nemo_gym_driver"


@pytest.fixture(scope="module")
def nemo_server(tmp_path_factory):
    """``rft serve tests.integrations.apps:retail_recorded --surfaces hosted,nemo_gym`` without tokens
    (NeMo Gym's servers send none); yields ``(base_url, store)``."""
    store_path = tmp_path_factory.mktemp("nemo") / "rollouts.db"
    env = {"RFT_AUTH_TOKENS": "", "RFT_TEST_STORE": str(store_path)}
    with serve_process("tests.integrations.apps:retail_recorded", "--surfaces", "hosted,nemo_gym", env=env) as url:
        yield url, SQLiteStore(store_path)


#: item 10 of the dataset (an 11th item collected beside the first ten, 4 rollouts): a bad-JSON call (NeMo Gym's
#: agent answers it itself: never sent), an unknown tool (404 body to the model, not recorded) and a
#: schema-invalid call (422 body, recorded) before its gold calls
BAD_ITEM = 10
BAD_CALLS = [["calculate", "{not json"], ["no_such_tool", "{}"], ["calculate", '{"expression": 5}']]


@pytest.fixture(scope="module")
def collected(nemo_server, tmp_path_factory):
    """One ``ng_collect_rollouts`` run (NeMo Gym's servers start once): items 0-10 x 4 rollouts, item 10 with
    :data:`BAD_CALLS`; yields the driver's result."""
    python = eco2_python("nemo_gym")
    base_url, _ = nemo_server
    return run_eco2(python, DRIVER, base_url, str(DATASET), str(tmp_path_factory.mktemp("gym")), str(BAD_ITEM + 1),
                    "4", "--bad-calls", json.dumps({str(BAD_ITEM): BAD_CALLS}))


def test_nemo_gym_rollout_collection_scores_like_the_hosted_wire(nemo_server, collected):
    base_url, store = nemo_server
    assert collected["nemo_gym"].startswith("0.7.")
    by_task = {str(item["task_id"]): item for item in ITEMS[:10]}
    assert len(collected["rollouts"]) == 44
    rollouts = [r for r in collected["rollouts"] if r["task_id"] in by_task]
    assert len(rollouts) == 40
    assert {r["task_id"] for r in rollouts} == set(by_task)
    assert all(sum(r["task_id"] == t for r in rollouts) == 4 for t in by_task)
    trace_ids = [r["trace_id"] for r in collected["rollouts"]]
    assert len(set(trace_ids)) == 44 and all(t.startswith("trace_") for t in trace_ids)  # one rollout per session
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


def test_malformed_calls_and_the_step_limit_through_nemo_gyms_agent(nemo_server, collected, tmp_path):
    """Item 10's rollouts of the collection: of :data:`BAD_CALLS` only the 422 call is recorded, then the gold.
    Second run, ``max_steps=2``: cut after two turns of tool calls, graded with the last turn's text ("")."""
    python = eco2_python("nemo_gym")
    base_url, store = nemo_server
    item = ITEMS[BAD_ITEM]
    bad = [r for r in collected["rollouts"] if r["task_id"] == str(item["task_id"])]
    assert len(bad) == 4
    records = stored(store, [r["trace_id"] for r in bad])
    answers = set()
    for rollout in bad:
        saved, _ = records[rollout["trace_id"]]
        names = [c.name for c in saved.trajectory]
        assert names == ["calculate", *[a["name"] for a in item["actions"]]]  # only the 422 call of the three
        assert saved.trajectory[0].status == 422 and saved.trajectory[0].error is not None
        answers.add(tuple((c.status, c.output) for c in saved.trajectory))
        assert rollout["tool_calls"][:3] == ["calculate", "no_such_tool", "calculate"]
        assert rollout["reward"] == hosted_replay_score(base_url, saved, item["reference_answer"])
    assert len(answers) == 1  # isolated: the four rollouts of the item saw the same answers

    cut = run_eco2(python, DRIVER, base_url, str(DATASET), str(tmp_path / "cut"), "1", "1", "--max-steps", "2")
    (rollout,) = cut["rollouts"]
    saved, grades = stored(store, [rollout["trace_id"]])[rollout["trace_id"]]
    assert [c.name for c in saved.trajectory] == [a["name"] for a in ITEMS[0]["actions"][:2]]  # the cut turn's calls
    assert len(grades) == 1 and rollout["reward"] == hosted_replay_score(base_url, saved, "")


def test_nemo_gyms_session_conformance_check_passes():
    python = eco2_python("nemo_gym")
    result = run_eco2(python, "tests.surfaces.eco_nemo_gym")
    assert result["conformance"] == "passed" and result["nemo_gym"].startswith("0.7.")
