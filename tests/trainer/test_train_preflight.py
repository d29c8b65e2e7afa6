"""``rft train`` as a user runs it (a subprocess): rows too long for ``block_size`` are refused before any
rollout with the fix; ``max_train_s`` covers SFT and GRPO together and says how it split them (issue 36)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from examples.retail.app import server as retail_server
from examples.retail.order_status_task import build_items
from rft_sdk import ToolServer, grader
from rft_sdk.testing import free_port, run_server

pytestmark = pytest.mark.slow  # a long file: the scheduler starts it first (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]
TINY = dict(n_layer=1, n_embd=32, n_head=2, block_size=192, sft_batch_size=8, items_per_step=2, group_size=2,
            max_new_tokens=24, progress=False, seed=3)


@grader(name="exact")
def exact(ctx) -> bool:
    return ctx.output_text.strip().lower() == ctx.item["answer"]


def _job(tools_url: str, grader_url: str) -> dict:
    return {"tools": [{"name": "get_order_status", "server_url": f"{tools_url}/tools/get_order_status"}],
            "grader": {"type": "endpoint", "url": f"{grader_url}/grade/exact", "rate_limit": 1000,
                       "pass_threshold": 1.0},
            "max_episode_steps": 2}


def rft_train(tmp_path: Path, job: dict, items: list[dict], training: dict) -> subprocess.CompletedProcess[str]:
    (tmp_path / "job.json").write_text(json.dumps(job))
    (tmp_path / "train.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    (tmp_path / "cfg.json").write_text(json.dumps({"job": "job.json", "train_items": "train.jsonl",
                                                   "training": training}))
    return subprocess.run([sys.executable, "-m", "rft_sdk", "train", "--config", str(tmp_path / "cfg.json"),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_rows_longer_than_block_size_are_refused_before_any_rollout(tmp_path: Path) -> None:
    items, _ = build_items(seed=0)
    items = items[:6]
    items[4] = {**items[4], "messages": [{"role": "user", "content": "Where is my order? " * 40}]}
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens: a rollout would fail, not this check
    proc = rft_train(tmp_path, _job(dead, dead), items, {**TINY, "sft_steps": 5, "steps": 1})
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("rft train: 1 of 6 train item(s) have a gold SFT row longer than block_size=192; "
                           "the longest, item 4, needs at least ")
    need = int(line.split("needs at least ")[1].split()[0])
    assert need > 192 * 3 and f"raise training.block_size to at least {need} (from 192" in line
    assert not (tmp_path / "out" / "summary.json").exists()


def test_max_train_s_covers_sft_and_grpo_and_says_how_it_split(tmp_path: Path) -> None:
    items, _ = build_items(seed=0)
    with run_server(retail_server) as tools_url, run_server(ToolServer(graders=[exact])) as grader_url:
        proc = rft_train(tmp_path, _job(tools_url, grader_url), items[:8],
                         {**TINY, "sft_steps": 100000, "steps": 100000, "max_train_s": 40, "sft_budget_share": 0.25})
    assert proc.returncode == 0, proc.stderr
    split = json.loads((tmp_path / "out" / "summary.json").read_text())["budget_split"]
    assert split["max_train_s"] == 40 and split["sft_cap_s"] == 10.0
    # SFT stopped at its share of the budget, not at its step count (past the share only by the step running
    # then; on a loaded CI machine the model and the demonstrations alone took 32 s once, so no absolute bound
    # on it), and GRPO got the rest: it stopped at the budget too
    assert 0 < split["sft_steps_done"] < 100000 and split["sft_s"] < split["max_train_s"]
    assert 1 <= split["grpo_steps_done"] < 100000 and split["grpo_s"] > 0
    assert split["total_s"] < 40 + 20  # SFT + GRPO kept to the budget (+ the last step, checkpoint and plot)
    assert (f"rft train: budget 40 s: SFT {split['sft_s']:g} s ({split['sft_steps_done']}/100000 steps, capped at "
            f"10 s), GRPO {split['grpo_s']:g} s ({split['grpo_steps_done']}/100000 steps)") in proc.stderr
