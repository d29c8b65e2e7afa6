"""Group-normalised advantages (GRPO).

For the rewards ``r`` of one group (the samples of one item):
``A_i = (r_i - mean(r)) / (std(r) + eps)`` — Shao et al. 2024, "DeepSeekMath",
arXiv:2402.03300, §4.1.2, with ``std`` the unbiased (Bessel-corrected) sample
standard deviation as in TRL's ``GRPOTrainer``. ``scale_by_std=False`` gives
``A_i = r_i - mean(r)``, the Dr. GRPO variant (Liu et al. 2025, arXiv:2503.20783, §3.1).
A group of one sample has advantage 0.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import torch

__all__ = ["group_advantages"]


def group_advantages(
    rewards: Sequence[float] | torch.Tensor,
    groups: Sequence[Hashable],
    *,
    scale_by_std: bool = True,
    eps: float = 1e-4,
) -> torch.Tensor:
    """Advantage per sample, normalised within its group.

    Args:
        rewards: ``[N]`` rewards (scores), any float.
        groups: ``N`` group keys (e.g. item index); samples with equal keys form a group.
        scale_by_std: divide by ``std + eps`` (GRPO) or not (Dr. GRPO).
        eps: added to the std; keeps all-equal groups at 0 instead of NaN.

    Returns: ``[N]`` float32 advantages.

    Raises:
        ValueError: lengths differ, or a reward is not finite.
    """
    r = torch.as_tensor(rewards, dtype=torch.float64).flatten()
    if r.numel() != len(groups):
        raise ValueError(f"{r.numel()} rewards but {len(groups)} group keys")
    if not torch.isfinite(r).all():
        raise ValueError("rewards must be finite")
    out = torch.zeros_like(r)
    index: dict[Hashable, list[int]] = {}
    for i, g in enumerate(groups):
        index.setdefault(g, []).append(i)
    for members in index.values():
        if len(members) < 2:
            continue
        idx = torch.tensor(members)
        rg = r[idx]
        centred = rg - rg.mean()
        out[idx] = centred / (rg.std(unbiased=True) + eps) if scale_by_std else centred
    return out.float()
