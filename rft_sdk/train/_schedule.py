"""Learning-rate schedule of the GRPO phase: linear warmup, then cosine decay to a floor.

``lr(s)`` for GRPO step ``s`` (1-based) with peak ``lr``, ``warmup`` steps and
``horizon`` planned steps (Loshchilov & Hutter 2017, "SGDR", arXiv:1608.03983,
for the cosine; the warmup as in Goyal et al. 2017, arXiv:1706.02677)::

    s <= warmup:            lr * s / warmup
    warmup < s <= horizon:  lr * (m + (1 - m) * (1 + cos(pi * (s - warmup) / (horizon - warmup))) / 2)
    s > horizon:            lr * m

with ``m = min_lr_ratio``. ``"constant"`` keeps ``lr`` after the warmup.
"""

from __future__ import annotations

import math

__all__ = ["LR_SCHEDULES", "lr_at"]

LR_SCHEDULES = ("constant", "cosine")


def lr_at(step: int, *, lr: float, schedule: str, warmup_steps: int, horizon: int, min_lr_ratio: float) -> float:
    """The learning rate of GRPO step ``step`` (1-based); see the module docstring.

    Raises:
        ValueError: unknown ``schedule``.
    """
    if schedule not in LR_SCHEDULES:
        raise ValueError(f"lr_schedule must be one of {LR_SCHEDULES}, got {schedule!r}")
    if warmup_steps > 0 and step <= warmup_steps:
        return lr * step / warmup_steps
    if schedule == "constant":
        return lr
    span = max(1, horizon - warmup_steps)
    progress = min(1.0, max(0.0, (step - warmup_steps) / span))
    return lr * (min_lr_ratio + (1.0 - min_lr_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress)))
