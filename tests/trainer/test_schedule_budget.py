"""The GRPO learning-rate schedule, the wall-clock step budget and its warning, and best-weights tracking."""

from __future__ import annotations

import time

import pytest
import torch

from rft_sdk.train import TrainConfig
from rft_sdk.train._budget import MEASURE_STEPS, StepBudget
from rft_sdk.train._schedule import lr_at
from rft_sdk.train._watch import Best, group_stats


def test_warmup_then_cosine_to_the_floor() -> None:
    kw = dict(lr=1e-3, schedule="cosine", warmup_steps=10, horizon=110, min_lr_ratio=0.1)
    assert lr_at(1, **kw) == pytest.approx(1e-4) and lr_at(10, **kw) == pytest.approx(1e-3)
    assert lr_at(60, **kw) == pytest.approx(1e-3 * (0.1 + 0.9 * 0.5))  # half way down the cosine
    assert lr_at(110, **kw) == pytest.approx(1e-4) and lr_at(500, **kw) == pytest.approx(1e-4)
    lrs = [lr_at(s, **kw) for s in range(10, 111)]
    assert all(a >= b for a, b in zip(lrs, lrs[1:]))  # monotone decay after the warmup
    const = dict(kw, schedule="constant")
    assert lr_at(5, **const) == pytest.approx(5e-4) and lr_at(500, **const) == 1e-3
    with pytest.raises(ValueError, match="lr_schedule"):
        lr_at(1, **dict(kw, schedule="linear"))
    with pytest.raises(ValueError, match="lr_schedule"):
        TrainConfig(lr_schedule="linear")


def test_budget_estimates_steps_and_warns_when_too_few() -> None:
    cfg = TrainConfig(steps=1000, max_train_s=0.5, eval_every=0, min_steps_to_learn=50)
    budget = StepBudget(cfg, time.perf_counter())
    assert budget.horizon == 1000 and budget.steps_fit is None
    time.sleep(0.06)  # three "steps" of ~20 ms
    assert budget.after_step(1) is None
    with pytest.warns(RuntimeWarning, match="fits about"):
        row = budget.after_step(MEASURE_STEPS)
    assert row is not None and row["phase"] == "budget"
    assert 3 <= row["steps_fit"] < 50 and budget.horizon == row["steps_fit"] == budget.steps_fit
    assert 0.015 <= row["grpo_step_s"] < 0.5
    assert "min_steps_to_learn=50" in row["warning"]


def test_budget_without_time_limit_plans_all_steps_and_never_stops() -> None:
    budget = StepBudget(TrainConfig(steps=200), time.perf_counter())
    assert not budget.spent() and budget.after_step(MEASURE_STEPS) is None and budget.horizon == 200


def test_budget_spent_before_grpo_warns() -> None:
    with pytest.warns(RuntimeWarning, match="before GRPO"):
        budget = StepBudget(TrainConfig(steps=10, max_train_s=0.0), time.perf_counter() - 1.0)
    assert budget.spent() and budget.steps_fit == 0


def test_best_keeps_the_first_highest_evaluation_weights() -> None:
    model = torch.nn.Linear(2, 1)
    best = Best(enabled=True)
    for step, success, w in [(0, 0.3, 1.0), (25, 0.9, 2.0), (50, 0.9, 3.0), (75, 0.7, 4.0)]:
        with torch.no_grad():
            model.weight.fill_(w)
        best.offer(step, {"success": success, "reward_mean": success, "n": 10}, model)
    assert best.info == {"step": 25, "success": 0.9, "reward_mean": 0.9, "n": 10}
    assert best.state is not None and torch.equal(best.state["weight"], torch.full((1, 2), 2.0))
    off = Best(enabled=False)
    off.offer(0, {"success": 1.0, "reward_mean": 1.0, "n": 1}, model)
    assert off.info is None and off.state is None


def test_best_breaks_greedy_ties_on_sampled_success() -> None:
    model = torch.nn.Linear(2, 1)
    best = Best(enabled=True)
    for step, success, sampled in [(0, 1.0, 0.4), (25, 1.0, 0.7), (50, 1.0, 0.7), (75, 0.9, 0.95)]:
        with torch.no_grad():
            model.weight.fill_(float(step))
        best.offer(step, {"success": success, "reward_mean": success, "n": 10, "sampled_success": sampled}, model)
    assert best.info == {"step": 25, "success": 1.0, "reward_mean": 1.0, "n": 10, "sampled_success": 0.7}
    assert best.state is not None and torch.equal(best.state["weight"], torch.full((1, 2), 25.0))


def test_group_stats_counts_tied_groups() -> None:
    from rft_sdk.emulator import RolloutResult

    def r(item: int, score: float) -> RolloutResult:
        return RolloutResult(trace_id="t", item_index=item, sample_index=0, score=score)

    kept = [r(0, 1.0), r(0, 1.0), r(1, 0.0), r(1, 1.0), r(2, 0.0)]  # item 2 has one sample: not a group
    assert group_stats(kept) == {"groups": 2, "groups_all_equal": 0.5}
    assert group_stats([]) == {"groups": 0, "groups_all_equal": 0.0}


def test_signal_watch_warns_once_after_ten_tied_steps() -> None:
    from rft_sdk.train._watch import NO_SIGNAL_STEPS, SignalWatch

    watch = SignalWatch()
    tied = {"groups": 8, "groups_all_equal": 1.0}
    mixed = {"groups": 8, "groups_all_equal": 0.5}
    for step in range(1, NO_SIGNAL_STEPS):
        assert watch.after_step(step, tied, [0.0] * 64) is None
    assert watch.after_step(NO_SIGNAL_STEPS, mixed, [0.0, 1.0]) is None  # a signal resets the count
    for step in range(NO_SIGNAL_STEPS + 1, 2 * NO_SIGNAL_STEPS):
        assert watch.after_step(step, tied, [0.0] * 64) is None
    with pytest.warns(RuntimeWarning, match="no learning signal for 10 GRPO steps"):
        msg = watch.after_step(2 * NO_SIGNAL_STEPS, tied, [0.0] * 64)
    assert msg is not None and "[0.0]" in msg
    assert watch.after_step(2 * NO_SIGNAL_STEPS + 1, tied, [0.0] * 64) is None  # only once
