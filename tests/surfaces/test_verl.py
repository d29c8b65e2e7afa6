"""verl 0.9's own tool classes (``.venv-verl``: ``verl --no-deps`` plus what its agent loop imports; no vLLM, no
GPU) against a real ``rft serve``: 10 retail items x 4 trajectories, all in flight, through
``tests/surfaces/eco_verl.py`` (verl's tool registry, ``ToolAgentLoop._call_tool``, ``AgentData``) with the
scripted gold model. Every reward equals the hosted wire's score of the same trajectory, sub-scores come back
as reward metrics, one ``trace_id`` per trajectory although verl makes a tool instance per call, and the 4
trajectories of an item never share state.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rft_sdk.portability import ScriptedLLM
from rft_sdk.testing import run_server

from .conftest import DATASET, ITEMS, ROOT, TOKEN, hosted_replay_score, stored

VERL_PYTHON = ROOT / ".venv-verl" / "bin" / "python"
N_ITEMS, ROLLOUTS = 10, 4


@pytest.fixture(scope="module")
def verl_python() -> Path:
    if not VERL_PYTHON.exists():
        pytest.skip("verl's light venv .venv-verl is missing: run `make verl` (part of `make test`)")
    return VERL_PYTHON


def run_script(python: Path, script: str, *args: str, timeout: float = 600) -> dict:
    """``python tests/surfaces/SCRIPT args`` (by path: verl's wheel ships a top-level ``tests`` package)."""
    done = subprocess.run([str(python), str(ROOT / "tests" / "surfaces" / script), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def check_rollouts(base_url: str, store, rollouts: list[dict]) -> None:
    """Every rollout: the gold calls recorded under its own trace_id, reward == the recorded grade == the hosted
    replay's score, metrics == the grader's sub-scores; the rollouts of an item saw the same tool answers."""
    assert len(rollouts) == N_ITEMS * ROLLOUTS
    trace_ids = [r["trace_id"] for r in rollouts]
    assert len(set(trace_ids)) == len(rollouts) and all(t.startswith("trace_") for t in trace_ids)
    records = stored(store, trace_ids)
    index_of = {item["task_id"]: i for i, item in enumerate(ITEMS)}
    by_task: dict[str, list] = {}
    for result in rollouts:
        rollout, grades = records[result["trace_id"]]
        item = ITEMS[index_of[result["task_id"]]]
        assert [c.name for c in rollout.trajectory] == [a["name"] for a in item["actions"]]
        assert result["reward"] == grades["retail"].score
        assert result["reward"] == hosted_replay_score(base_url, rollout, item["reference_answer"], "retail")
        assert result["metrics"] == grades["retail"].details["subscores"]
        by_task.setdefault(result["task_id"], []).append([(c.status, c.output) for c in rollout.trajectory])
    assert len(by_task) == N_ITEMS
    for task_id, trajectories in by_task.items():
        assert len(trajectories) == ROLLOUTS and all(t == trajectories[0] for t in trajectories), task_id
    assert sum(r["reward"] for r in rollouts) > 0


def test_verl_tool_agent_loop_rollouts_score_like_the_hosted_wire(verl_python, recorded_server):
    base_url, store = recorded_server
    with run_server(ScriptedLLM(ITEMS).app) as llm_url:
        out = run_script(verl_python, "eco_verl.py", base_url, llm_url, str(DATASET), str(N_ITEMS), str(ROLLOUTS),
                         TOKEN)
    assert out["tools"] >= 16  # one HostedTool per served tool, from the generated YAML
    check_rollouts(base_url, store, out["rollouts"])


def test_the_tool_config_generator_reads_get_tools_and_names_no_secret(recorded_server):
    """The generator needs no verl: it runs in the main venv."""
    base_url, _ = recorded_server
    done = subprocess.run([sys.executable, "-m", "rft_sdk.integrations.verl", base_url, "MY_TOKEN"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "MY_TOKEN": TOKEN})
    assert done.returncode == 0, done.stderr[-2000:]
    import yaml

    config = yaml.safe_load(done.stdout)
    names = [t["tool_schema"]["function"]["name"] for t in config["tools"]]
    assert "get_order_details" in names and len(names) == len(set(names))
    assert {t["class_name"] for t in config["tools"]} == {"rft_sdk.integrations.verl.HostedTool"}
    assert all(t["config"]["token_env"] == "MY_TOKEN" and t["config"]["base_url"] == base_url
               for t in config["tools"])
    assert TOKEN not in done.stdout
    refused = subprocess.run([sys.executable, "-m", "rft_sdk.integrations.verl", base_url, "NO_SUCH_VAR"],
                             cwd=ROOT, capture_output=True, text=True, timeout=120,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert refused.returncode == 1 and "401" in refused.stderr
