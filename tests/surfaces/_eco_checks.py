"""Shared checks of the trainer-ecosystem tests (verl, ART, rft portability): run a driver script in an ecosystem's
venv, and compare what it reports per rollout with what the server recorded and with the hosted wire's score."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from .conftest import ITEMS, ROOT, hosted_replay_score, stored

N_ITEMS, ROLLOUTS = 10, 4


def run_script(python: Path, script: str, *args: str, timeout: float = 600) -> dict:
    """``python tests/surfaces/SCRIPT args`` (by path: verl's wheel ships a top-level ``tests`` package)."""
    done = subprocess.run([str(python), str(ROOT / "tests" / "surfaces" / script), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def check_rollouts(base_url: str, store: Any, rollouts: list[dict]) -> None:
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


