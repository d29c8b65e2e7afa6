"""Watching a GRPO run: the best held-out evaluation's weights, group statistics, a no-signal warning."""

from __future__ import annotations

import warnings

import torch

from rft_sdk.emulator import RolloutResult

__all__ = ["NO_SIGNAL_STEPS", "Best", "SignalWatch", "eval_rank", "group_stats"]


#: consecutive GRPO steps without one informative group before :class:`SignalWatch` warns.
NO_SIGNAL_STEPS = 10


class SignalWatch:
    """Warns once when ``NO_SIGNAL_STEPS`` steps in a row had no group with differing scores.

    Then every advantage is 0 and (with ``beta == 0``) no update happens: GRPO cannot start. Seen
    with a warm start that never passes (held-out 0.0, every rollout scored 0): warm start longer
    (``sft_steps``, or ``sft_target_loss`` to stop on the loss instead) or give the grader partial credit.
    """

    def __init__(self) -> None:
        self.run = 0
        self.warned = False

    def after_step(self, step: int, groups: dict[str, float], rewards: list[float]) -> str | None:
        """Count the step (``groups`` from :func:`group_stats`); return the warning the first time it is due."""
        self.run = self.run + 1 if groups["groups"] == 0 or groups["groups_all_equal"] == 1.0 else 0
        if self.warned or self.run < NO_SIGNAL_STEPS:
            return None
        self.warned = True
        scores = sorted(set(rewards))
        msg = (f"no learning signal for {self.run} GRPO steps (up to step {step}): every group's samples scored "
               f"alike (scores seen: {scores[:5]}), so every advantage is 0 and nothing is learned; warm start "
               f"longer (sft_steps, or sft_target_loss to stop SFT on its loss), sample more (group_size, "
               f"temperature) or give the grader partial credit")
        warnings.warn(msg, RuntimeWarning, stacklevel=2)
        return msg


def eval_rank(success: float, sampled_success: float | None = None) -> tuple[float, float]:
    """Sort key of a held-out evaluation: greedy ``success`` first, then ``sampled_success`` (absent = 0)."""
    return success, 0.0 if sampled_success is None else sampled_success


class Best:
    """The best held-out evaluation so far and a CPU copy of its weights.

    Ranked by ``success`` (greedy), then by ``sampled_success`` when present (``eval_sampled``);
    full ties keep the earlier step.
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.info: dict[str, float] | None = None
        self.state: dict[str, torch.Tensor] | None = None

    def offer(self, step: int, ev: dict[str, float], model: torch.nn.Module) -> None:
        """Keep ``ev`` (``{"success", "reward_mean", "n"[, "sampled_success"]}``) and the model's weights
        if it beats the best so far."""
        if not self.enabled or (self.info is not None and eval_rank(ev["success"], ev.get("sampled_success"))
                                <= eval_rank(self.info["success"], self.info.get("sampled_success"))):
            return
        self.info = {"step": step, "success": ev["success"], "reward_mean": ev["reward_mean"], "n": ev["n"]}
        if "sampled_success" in ev:
            self.info["sampled_success"] = ev["sampled_success"]
        self.state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}


def group_stats(kept: list[RolloutResult]) -> dict[str, float]:
    """``groups`` (items with >= 2 graded samples) and ``groups_all_equal`` (the share whose samples all
    scored alike: zero advantage, no learning signal, as in DAPO's dynamic-sampling filter)."""
    by_item: dict[int, list[float]] = {}
    for r in kept:
        if r.score is not None:
            by_item.setdefault(r.item_index, []).append(r.score)
    multi = [s for s in by_item.values() if len(s) >= 2]
    tied = sum(1 for s in multi if max(s) == min(s))
    return {"groups": len(multi), "groups_all_equal": tied / len(multi) if multi else 0.0}
