"""verifiers 0.4's own evaluation entry point (``vf-eval``, ``verifiers>=0.4`` from the index, in ``.venv-vf4``)
loading the taskset ``rft-verifiers`` (``rft_sdk.integrations._verifiers_v1``) by its id, with verifiers' own
``null`` chat harness in a local subprocess runtime and a scripted chat-completions server on 127.0.0.1 that
emits each item's gold tool calls, then its reference answer (no cloud sandbox, no Prime account).

6 retail items x 2 rollouts, all in flight together: every rollout's reward equals the hosted wire's score of
the same trajectory, the grader's sub-scores are trace metrics, and the 2 rollouts of an item never share state.
Each rollout starts a harness process (about 1.9 s of CPU), so the test is sized by rollouts, not items.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from rft_sdk.portability import ScriptedLLM
from rft_sdk.testing import run_server

from .conftest import ITEMS, ROOT, TOKEN, hosted_replay_score, stored

VF4_BIN = ROOT / ".venv-vf4" / "bin"
N_ITEMS, ROLLOUTS = 6, 2

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def vf4_bin() -> Path:
    if not (VF4_BIN / "vf-eval").exists():
        pytest.skip("verifiers 0.4's venv .venv-vf4 is missing: run `make vf4` (part of `make test`)")
    return VF4_BIN


def vf_eval(vf4_bin: Path, base_url: str, llm_url: str, dataset: Path, out: Path, rollouts: int,
            *extra: str) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    """``vf-eval rft-verifiers ...`` as a user types it; returns the process and its traces (one per rollout)."""
    command = [str(vf4_bin / "vf-eval"), "rft-verifiers", "--env.taskset.dataset", str(dataset),
               "--env.taskset.task.url", base_url, "--env.taskset.task.grader", "retail",
               "--env.agent.runtime.type", "subprocess", "--client.base-url", llm_url + "/v1",
               "--client.api-key-var", "SCRIPTED_LLM_KEY", "-m", "scripted-gold", "-r", str(rollouts),
               "--no-push", "--no-rich", "-o", str(out), *extra]
    env = {**os.environ, "RFT_AUTH_TOKEN": TOKEN, "SCRIPTED_LLM_KEY": "scripted", "PYTHONPATH": str(ROOT),
           "PATH": f"{vf4_bin}:{os.environ.get('PATH', '')}"}  # verifiers' harness runs its chat program with uv
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    traces = [trace for path in out.glob("*/traces.jsonl") for line in path.read_text().splitlines() if line.strip()
              for trace in json.loads(line)["traces"]]
    return done, traces


def _reward(trace: dict) -> float:
    return sum(r["score"] * r["weight"] for r in trace["rewards"].values())


def test_vf_eval_gold_rollouts_score_like_the_hosted_wire(vf4_bin, recorded_server, tmp_path):
    base_url, store = recorded_server
    dataset = tmp_path / "items.jsonl"
    dataset.write_text("".join(json.dumps(item) + "\n" for item in ITEMS[:N_ITEMS]))
    llm = ScriptedLLM(ITEMS)
    with run_server(llm.app) as llm_url:
        done, traces = vf_eval(vf4_bin, base_url, llm_url, dataset, tmp_path / "out", ROLLOUTS)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(traces) == N_ITEMS * ROLLOUTS
    assert all(not t["errors"] and t["stop_condition"] == "agent_completed" for t in traces), \
        [t["errors"] for t in traces if t["errors"]][:1]
    trace_ids = [t["info"]["rft"]["trace_id"] for t in traces]
    assert len(set(trace_ids)) == len(traces) and all(t.startswith("trace_") for t in trace_ids)
    records = stored(store, trace_ids)
    by_task: dict[str, list] = {}
    for trace, trace_id in zip(traces, trace_ids):
        item = trace["task"]["data"]["item"]
        rollout, grades = records[trace_id]
        assert [c.name for c in rollout.trajectory] == [a["name"] for a in item["actions"]]
        assert _reward(trace) == grades["retail"].score
        assert _reward(trace) == hosted_replay_score(base_url, rollout, item["reference_answer"], "retail")
        assert trace["metrics"] == grades["retail"].details["subscores"]  # sub-scores are trace metrics
        by_task.setdefault(item["task_id"], []).append([(c.status, c.output) for c in rollout.trajectory])
    assert len(by_task) == N_ITEMS
    for task_id, trajectories in by_task.items():  # isolated: every rollout of an item saw the same answers
        assert len(trajectories) == ROLLOUTS and all(t == trajectories[0] for t in trajectories), task_id
    assert sum(_reward(t) for t in traces) > 0
    sent = {t["function"]["name"] for t in llm.requests[0]["tools"]}  # the server's tools, unprefixed
    assert {"get_order_details", "cancel_pending_order"} <= sent


CHECKS = """
import json, os, sys
from pathlib import Path
from verifiers.v1.utils.loaders import default_harness_id, taskset_class
import rft_verifiers
from rft_sdk.integrations._verifiers_v1 import HostedTasksetConfig
cls = taskset_class("rft-verifiers")  # what vf-eval resolves the id to
bad = Path(sys.argv[1])
bad.write_text(json.dumps({"task_id": "x", "messages": []}) + "\\n")
try:
    list(cls(HostedTasksetConfig(id="rft-verifiers", dataset=bad)))
except ValueError as exc:
    refused = str(exc)
os.environ.pop("RFT_VERIFIERS_DATASET", None)
try:
    list(cls(HostedTasksetConfig(id="rft-verifiers")))
except ValueError as exc:
    missing = str(exc)
developer = Path(sys.argv[1]).with_name("developer.jsonl")  # what `rft init` writes: a developer system prompt
developer.write_text(json.dumps({"task_id": "d", "messages": [{"role": "developer", "content": "Be brief."},
                                                               {"role": "user", "content": "Hi"}]}) + "\\n")
task = list(cls(HostedTasksetConfig(id="rft-verifiers", dataset=developer)))[0]
data = task.data
print(json.dumps({"taskset": cls.__name__, "harness": default_harness_id("rft-verifiers"), "refused": refused,
                  "missing": missing, "developer": [data.system_prompt, [dict(m) for m in data.prompt]]}))
"""


def test_the_taskset_id_resolves_and_bad_datasets_are_refused(vf4_bin, tmp_path):
    done = subprocess.run([str(vf4_bin / "python"), "-c", CHECKS, str(tmp_path / "bad.jsonl")], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["taskset"] == "HostedTaskset" and out["harness"] == "rft-verifiers"  # its own null-chat harness
    assert "line 1 has no 'messages' list" in out["refused"]
    assert out["missing"] == "no dataset: set --env.taskset.dataset or $RFT_VERIFIERS_DATASET"
    # a `developer` system prompt (OpenAI's newer name, what `rft init` writes) became verifiers' system prompt
    assert out["developer"] == ["Be brief.", [{"role": "user", "content": "Hi"}]]
