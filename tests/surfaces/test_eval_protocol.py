"""The retail example through Eval Protocol's own local test loop and Fireworks RFT's remote-rollout contract.

EP's ``@evaluation_test`` loop (``pytest`` on ``tests/surfaces/eval_protocol/ep_retail_eval.py``, what ``ep
local-test`` runs) drives ``ToolServerRolloutProcessor`` and scores with ``evaluate_row``, in ``.venv-eco2``,
against a real ``rft serve`` process; the model is the gold-replay chat-completions server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from rft_sdk import SQLiteStore
from rft_sdk.portability._gold_llm import ScriptedLLM
from rft_sdk.testing import run_server, serve_process

from ._eco2 import ENV, ROOT, eco2_python, run_eco2
from .conftest import DATASET, ITEMS, TOKEN, hosted_replay_score, stored

pytestmark = pytest.mark.slow  # a long file: the scheduler starts it first (tests/conftest.py)

EVAL_FILE = "tests/surfaces/eval_protocol/ep_retail_eval.py"


@pytest.fixture(scope="module")
def ep_server(tmp_path_factory):
    """``rft serve tests.integrations.apps:retail_recorded`` (hosted routes, a token); ``(base_url, store)``."""
    store_path = tmp_path_factory.mktemp("ep") / "rollouts.db"
    with serve_process("tests.integrations.apps:retail_recorded", env={"RFT_AUTH_TOKENS": TOKEN,
                                                                       "RFT_TEST_STORE": str(store_path)}) as url:
        yield url, SQLiteStore(store_path)


def _ep_loop(python, base_url: str, tmp_path, *, rows: int, runs: int, steps: int = 30,
             bad_calls: dict | None = None) -> list[dict]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    out = tmp_path / "rows.jsonl"
    with run_server(ScriptedLLM(ITEMS, bad_calls=bad_calls).app) as llm_url:
        env = {**os.environ, **ENV, "RFT_EP_URL": base_url, "RFT_EP_LLM": llm_url, "RFT_EP_DATASET": str(DATASET),
               "RFT_EP_ROWS": str(rows), "RFT_EP_RUNS": str(runs), "RFT_EP_STEPS": str(steps), "RFT_EP_OUT": str(out),
               "RFT_EP_TOKEN": TOKEN, "EVAL_PROTOCOL_DIR": str(tmp_path / "ep")}
        done = subprocess.run([str(python), "-m", "pytest", "--noconftest", "-q", "-p", "no:cacheprovider", EVAL_FILE],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_eps_local_loop_scores_like_the_hosted_wire(ep_server, tmp_path):
    python = eco2_python("eval_protocol")
    base_url, store = ep_server
    rows = _ep_loop(python, base_url, tmp_path, rows=10, runs=4)
    assert len(rows) == 40
    by_task = {str(item["task_id"]): item for item in ITEMS[:10]}
    assert {r["task_id"] for r in rows} == set(by_task) and len({r["run_id"] for r in rows}) == 4
    trace_ids = [r["trace_id"] for r in rows]
    assert len(set(trace_ids)) == 40  # one trace_id per rollout
    records = stored(store, trace_ids)
    for row in rows:
        item = by_task[row["task_id"]]
        saved, grades = records[row["trace_id"]]
        assert [c.name for c in saved.trajectory] == [a["name"] for a in item["actions"]] == row["tool_calls"]
        assert all(c.error is None for c in saved.trajectory)  # no state seen from a parallel sibling
        assert row["valid"] is True and row["score"] == next(iter(grades.values())).score
        assert set(row["metrics"]) == {"communicate_info", "db_match", "process"}
    for task_id, item in by_task.items():
        first = next(r for r in rows if r["task_id"] == task_id)
        replay = hosted_replay_score(base_url, records[first["trace_id"]][0], item["reference_answer"])
        assert [r["score"] for r in rows if r["task_id"] == task_id] == [replay] * 4
    assert sum(r["score"] == 1.0 for r in rows) >= 36


def test_malformed_calls_and_the_turn_limit_in_eps_loop(ep_server, tmp_path):
    """Bad JSON is sent verbatim (hosted 400, recorded), an unknown tool gets the 404 body (not recorded), a
    schema-invalid call the 422 body (recorded); ``steps=2`` cuts the rollout after two turns of calls."""
    python = eco2_python("eval_protocol")
    base_url, store = ep_server
    bad = {0: [("calculate", "{not json"), ("no_such_tool", "{}"), ("calculate", '{"expression": 5}')]}
    (row,) = _ep_loop(python, base_url, tmp_path / "bad", rows=1, runs=1, bad_calls=bad)
    saved, _ = stored(store, [row["trace_id"]])[row["trace_id"]]
    assert [c.name for c in saved.trajectory][:2] == ["calculate", "calculate"]
    assert [c.status for c in saved.trajectory][:2] == [400, 422]
    assert row["score"] == hosted_replay_score(base_url, saved, ITEMS[0]["reference_answer"])
    (cut,) = _ep_loop(python, base_url, tmp_path / "cut", rows=1, runs=1, steps=2)
    saved, _ = stored(store, [cut["trace_id"]])[cut["trace_id"]]
    assert [c.name for c in saved.trajectory] == [a["name"] for a in ITEMS[0]["actions"][:2]]
    assert cut["score"] == hosted_replay_score(base_url, saved, "")  # graded with the cut turn's text


def test_remote_rollout_server_takes_eps_init_requests(ep_server):
    python = eco2_python("eval_protocol")
    base_url, store = ep_server
    with run_server(ScriptedLLM(ITEMS).app) as llm_url:
        result = run_eco2(python, "tests.surfaces.eval_protocol.eco_remote", base_url, llm_url, str(DATASET), "4",
                          "3", TOKEN)
    assert result["eval_protocol"].startswith("0.3.") and result["unknown_row"] == 422
    rollouts = result["rollouts"]
    assert len(rollouts) == 12 and {r["status"] for r in rollouts} == {"FINISHED"}
    assert len({r["trace_id"] for r in rollouts}) == 12
    records = stored(store, [r["trace_id"] for r in rollouts])
    by_task = {str(item["task_id"]): item for item in ITEMS[:4]}
    for rollout in rollouts:
        item = by_task[rollout["task_id"]]
        saved = records[rollout["trace_id"]][0]
        assert [c.name for c in saved.trajectory] == [a["name"] for a in item["actions"]]
        assert rollout["score"] == hosted_replay_score(base_url, saved, item["reference_answer"])


def test_init_is_authenticated_calls_only_allowed_model_urls_and_bounds_its_bodies(ep_server):
    """Issue 39 #3: before, /init took any POST, sent FIREWORKS_API_KEY to the caller's model_base_url, read
    any body and echoed it in its 422."""
    python = eco2_python("eval_protocol")
    base_url, _ = ep_server
    with run_server(ScriptedLLM(ITEMS).app) as llm_url:
        result = run_eco2(python, "tests.surfaces.eval_protocol.eco_init_attack", base_url, llm_url, str(DATASET),
                          TOKEN)
    assert result["no_token"] == result["wrong_token"] == result["status_no_token"] == 401
    assert result["token_forms"] == [422, 422, 422]  # past auth in every token form (the row is unknown)
    assert result["evil_url"] == [422, "model_url_not_allowed"]
    assert result["userinfo_url"] == result["sibling_path"] == 422
    assert result["huge"][0] == 413 and result["huge"][1] < 1000
    assert result["invalid"][0] == 422 and not result["invalid"][1] and result["invalid"][2] < 5000
    assert result["deep"] == result["big_int"] == 400
    assert result["attacker_requests"] == []  # nothing, let alone a key, ever reached the caller's URL
