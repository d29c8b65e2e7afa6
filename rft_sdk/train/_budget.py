"""How many GRPO steps a wall-clock budget fits, and a warning when that is too few to learn.

With ``TrainConfig.max_train_s`` set, the number of GRPO steps is unknown in
advance: it depends on the machine and its load. After ``MEASURE_STEPS``
steps the mean step time (sampling + update), plus the held-out evaluation's
time spread over ``eval_every`` steps, gives the estimate::

    steps_fit = min(steps, done + (max_train_s - elapsed - eval_s) // (step_s + eval_s / eval_every))

It becomes the horizon of the learning-rate decay (``_schedule``), is logged
as a ``{"phase": "budget"}`` metrics row and, when below
``min_steps_to_learn``, is announced with a :class:`RuntimeWarning`. Without a
budget the horizon is ``steps``.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

from ._config import TrainConfig

__all__ = ["MEASURE_STEPS", "StepBudget"]

#: GRPO steps timed before the estimate is made.
MEASURE_STEPS = 3


class StepBudget:
    """Tracks the GRPO phase against ``cfg.max_train_s`` (seconds since ``t_start``, a ``perf_counter`` value).

    Args:
        cfg: the run's config. t_start: when :func:`train` began.
        eval_s: seconds one held-out evaluation took (0 if none).
    """

    def __init__(self, cfg: TrainConfig, t_start: float, eval_s: float = 0.0) -> None:
        self.cfg, self.t_start, self.eval_s = cfg, t_start, eval_s
        self.t_grpo = time.perf_counter()
        self.horizon = max(1, cfg.steps)
        self.steps_fit: int | None = None
        if cfg.max_train_s is not None and cfg.steps and self.spent():
            self.steps_fit = 0
            warnings.warn(f"max_train_s={cfg.max_train_s:.0f} s was spent before GRPO began "
                          f"({self.t_grpo - t_start:.0f} s of SFT and evaluation): no GRPO step fits; "
                          f"raise the budget or lower sft_steps", RuntimeWarning, stacklevel=3)

    def spent(self) -> bool:
        """True once ``max_train_s`` seconds have passed since ``t_start`` (never without a budget)."""
        return self.cfg.max_train_s is not None and time.perf_counter() - self.t_start > self.cfg.max_train_s

    def after_step(self, step: int) -> dict[str, Any] | None:
        """After GRPO step ``step``: at step ``MEASURE_STEPS`` return the budget row (and maybe warn), else ``None``."""
        cfg = self.cfg
        if cfg.max_train_s is None or step != min(MEASURE_STEPS, cfg.steps):
            return None
        now = time.perf_counter()
        step_s = (now - self.t_grpo) / step
        per_step = step_s + (self.eval_s / cfg.eval_every if cfg.eval_every else 0.0)
        left = cfg.max_train_s - (now - self.t_start) - self.eval_s  # the final evaluation
        self.steps_fit = min(cfg.steps, step + max(0, int(left // per_step)))
        self.horizon = max(1, self.steps_fit)
        row: dict[str, Any] = {"phase": "budget", "step": step, "steps_fit": self.steps_fit,
                               "grpo_step_s": round(step_s, 3), "eval_s": round(self.eval_s, 3),
                               "max_train_s": cfg.max_train_s}
        if self.steps_fit < cfg.min_steps_to_learn:
            row["warning"] = (f"the budget of {cfg.max_train_s:.0f} s fits about {self.steps_fit} GRPO steps "
                              f"({step_s:.1f} s each here), fewer than min_steps_to_learn="
                              f"{cfg.min_steps_to_learn}: expect little or no improvement over SFT; raise "
                              f"max_train_s, or set steps and no time budget")
            warnings.warn(row["warning"], RuntimeWarning, stacklevel=3)
        return row
