"""verifiers' own evaluation loop (``env.evaluate``, ``verifiers`` from the index) against the verifiers
environment of ``rft_sdk.integrations.verifiers``, with a scripted chat-completions server on 127.0.0.1 that
emits each item's gold tool calls, then its reference answer.

10 retail items x 4 rollouts each: every rollout's reward equals the hosted wire's score of the same
trajectory, the grader's sub-scores are rubric metrics, and the 4 rollouts of an item never share state.
"""

from __future__ import annotations

import json
import os
import subprocess

from rft_sdk.portability import ScriptedLLM
from rft_sdk.testing import run_server

from .conftest import DATASET, ITEMS, ROOT, TOKEN, hosted_replay_score, run_eco, stored

N_ITEMS, ROLLOUTS = 10, 4


def _evaluate(eco_python, base_url, llm, n, rollouts, max_turns=20):
    with run_server(llm.app) as llm_url:
        return run_eco(eco_python, "tests.surfaces.eco_verifiers", base_url, llm_url, str(DATASET), str(n),
                       str(rollouts), TOKEN, str(max_turns))


def test_gold_rollouts_score_like_the_hosted_wire(eco_python, recorded_server):
    base_url, store = recorded_server
    llm = ScriptedLLM(ITEMS)
    out = _evaluate(eco_python, base_url, llm, N_ITEMS, ROLLOUTS)
    rollouts = out["rollouts"]
    assert len(rollouts) == N_ITEMS * ROLLOUTS and not any(r["error"] for r in rollouts), \
        [r["error"] for r in rollouts if r["error"]][:3]
    trace_ids = [r["trace_id"] for r in rollouts]
    assert len(set(trace_ids)) == len(rollouts) and all(t.startswith("trace_") for t in trace_ids)
    records = stored(store, trace_ids)
    by_task: dict[str, list] = {}
    index_of = {item["task_id"]: i for i, item in enumerate(ITEMS)}
    for result in rollouts:
        rollout, grades = records[result["trace_id"]]
        item = ITEMS[index_of[result["task_id"]]]
        assert [c.name for c in rollout.trajectory] == [a["name"] for a in item["actions"]]
        assert result["reward"] == grades["retail"].score
        assert result["reward"] == hosted_replay_score(base_url, rollout, item["reference_answer"])
        for name, value in grades["retail"].details["subscores"].items():  # sub-scores are rubric metrics
            assert result["metrics"][name] == value
        assert result["metrics"]["grader_score"] == result["reward"]
        by_task.setdefault(result["task_id"], []).append([(c.status, c.output) for c in rollout.trajectory])
    assert len(by_task) == N_ITEMS
    for task_id, trajectories in by_task.items():
        assert len(trajectories) == ROLLOUTS and all(t == trajectories[0] for t in trajectories), task_id
    assert sum(r["reward"] for r in rollouts) > 0
    # verifiers sent the server's tool schemas to the model
    sent = {t["function"]["name"] for t in llm.requests[0]["tools"]}
    assert {"get_order_details", "cancel_pending_order"} <= sent


def test_malformed_calls_are_recorded_like_the_hosted_wire(eco_python, recorded_server):
    base_url, store = recorded_server
    llm = ScriptedLLM(ITEMS, bad_calls={0: [("no_such_tool", "{}"), ("get_order_details", '{"order_id": "#W1')]})
    result = _evaluate(eco_python, base_url, llm, 1, 1)["rollouts"][0]
    rollout, grades = stored(store, [result["trace_id"]])[result["trace_id"]]
    # the unknown tool is answered 404 and not recorded (as on the hosted wire); the malformed text is sent
    # verbatim and recorded as the hosted 400 malformed_arguments
    assert rollout.trajectory[0].status == 400 and rollout.trajectory[0].arguments == {"_raw": '{"order_id": "#W1'}
    tool_messages = [m for m in llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert json.loads(tool_messages[0]["content"])["error"]["code"] == "unknown_tool"
    assert json.loads(tool_messages[1]["content"])["error"]["code"] == "malformed_arguments"
    assert result["reward"] == grades["retail"].score == hosted_replay_score(base_url, rollout,
                                                                             ITEMS[0]["reference_answer"])


def test_rollout_cut_at_max_turns_runs_the_last_calls_then_grades_an_empty_answer(eco_python, recorded_server):
    base_url, store = recorded_server
    result = _evaluate(eco_python, base_url, ScriptedLLM(ITEMS), 1, 1, max_turns=3)["rollouts"][0]
    rollout, grades = stored(store, [result["trace_id"]])[result["trace_id"]]
    # 3 model turns, each one gold call: all 3 executed (the last one at the cut, as the hosted side does)
    assert [c.name for c in rollout.trajectory] == [a["name"] for a in ITEMS[0]["actions"][:3]]
    assert result["reward"] == grades["retail"].score == hosted_replay_score(base_url, rollout, "")


def test_a_developer_system_prompt_reaches_verifiers_as_system(eco_python):
    # `rft init` writes OpenAI's newer `developer` role; verifiers 0.1 raised "Unknown role: developer".
    code = ("import json; from rft_sdk.integrations._verifiers import hosted_rows\n"
            "rows = hosted_rows([{'messages': [{'role': 'developer', 'content': 'Be brief.'},"
            " {'role': 'user', 'content': 'Hi'}]}])\n"
            "print(json.dumps(rows[0]['prompt']))")
    done = subprocess.run([str(eco_python), "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
