"""``rft train``: its help documents every config key; its progress bar counts the steps the budget fits."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_train_help_lists_every_training_key_with_its_default():
    from rft_sdk.train import TrainConfig

    result = subprocess.run([sys.executable, "-m", "rft_sdk", "train", "--help"], capture_output=True, text=True,
                            timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    for field in dataclasses.fields(TrainConfig):
        line = next((x for x in result.stdout.splitlines() if x.strip().startswith(f"{field.name} = ")), None)
        assert line is not None, field.name
        assert len(line.split("  ", 2)[-1]) > 3, line  # a meaning, read from the comment beside the default
    assert "--max-train-s" in result.stdout
    steps = next(x for x in result.stdout.splitlines() if x.strip().startswith("steps = "))
    assert steps.strip().startswith("steps = 20 ")


def test_progress_bar_total_is_the_steps_the_budget_fits(tmp_path, capsys, monkeypatch):
    """The budget's estimate is pinned (5 steps, made at step 3) so the test does not depend on how fast this
    machine is; what is checked is that the bar shows that estimate, never ``steps`` (10,000)."""
    from examples.retail.app import server as retail_server
    from examples.retail.order_status_task import build_items
    from rft_sdk.testing import run_server
    from rft_sdk.train import TrainConfig, _trainer, train
    from rft_sdk.train._budget import MEASURE_STEPS, StepBudget

    class PinnedBudget(StepBudget):
        done = 0

        def spent(self) -> bool:
            return self.steps_fit is not None and self.done >= self.steps_fit

        def after_step(self, step):
            self.done = step
            if step != MEASURE_STEPS:
                return None
            self.steps_fit = self.horizon = 5
            return {"phase": "budget", "step": step, "steps_fit": 5}

    monkeypatch.setattr(_trainer, "StepBudget", PinnedBudget)
    train_items, _ = build_items(seed=0)
    cfg = TrainConfig(n_layer=1, n_embd=32, n_head=2, block_size=192, steps=10_000, max_train_s=3600.0,
                      items_per_step=2, group_size=2, max_new_tokens=8, min_steps_to_learn=0, progress=True,
                      keep_best=False, log_ref_kl=False)
    with run_server(retail_server) as url:
        job = {"tools": [{"name": "get_order_status", "server_url": f"{url}/tools/get_order_status"}],
               "grader": {"type": "endpoint", "url": f"{url}/grade/order_status", "rate_limit": 1000},
               "max_episode_steps": 2}
        result = train(cfg, job=job, train_items=train_items[:20], out_dir=tmp_path / "run")
    err = capsys.readouterr().err
    assert result.steps_done == 5
    grpo = [line for line in re.split(r"[\r\n]", err) if line.startswith("GRPO")]
    assert grpo and not any("/10000" in line for line in grpo), grpo  # no 10,000-step bar, no 19-49 h ETA
    assert re.search(r"\b5/5\b", grpo[-1]), grpo[-1]
