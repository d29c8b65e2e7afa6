"""Shared pieces of the kernels package: output type, loss types, input checks, loss weights.

Loss normalisations follow TRL's ``GRPOTrainer._compute_loss``
(https://github.com/huggingface/trl, ``trl/trainer/grpo_trainer.py``):

* ``grpo``    — per-sequence mean over completion tokens, then mean over sequences
  (DeepSeekMath GRPO, Shao et al. 2024, arXiv:2402.03300).
* ``dr_grpo`` — sum over all completion tokens / (B · max_completion_length)
  ("Understanding R1-Zero-Like Training", Liu et al. 2025, arXiv:2503.20783).
* ``dapo``    — token-level: sum over all completion tokens / number of completion tokens
  (DAPO, Yu et al. 2025, arXiv:2503.14476).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

LOSS_TYPES: tuple[str, ...] = ("grpo", "dr_grpo", "dapo")
FLOAT_DTYPES = (torch.float32, torch.bfloat16, torch.float16, torch.float64)


@dataclass(frozen=True)
class GRPOLossOutput:
    """Result of :func:`kernels.grpo_loss`.

    Attributes:
        loss: scalar tensor (fp32), differentiable w.r.t. the logits.
        logprobs: ``[B, T]`` fp32, detached log-probabilities of the sampled tokens
            under the current policy (at the given temperature).
        kl: ``[B, T]`` fp32 detached per-token k3 KL estimate
            ``exp(ref - lp) - (ref - lp) - 1`` (without β), or ``None`` when
            ``beta == 0`` or no reference logprobs were given.
        clip_ratio: fraction (0..1) of completion tokens whose ratio lies in the
            clipped region (TRL's ``clip_ratio/region_mean``: ``r < 1-ε_low`` with
            ``A < 0`` or ``r > 1+ε_high`` with ``A > 0``).
    """

    loss: torch.Tensor
    logprobs: torch.Tensor
    kl: torch.Tensor | None
    clip_ratio: float


def check_selective_inputs(logits: torch.Tensor, token_ids: torch.Tensor, temperature: float) -> None:
    """Validate ``logits[..., V]`` / ``token_ids[...]`` / temperature; raise ``ValueError``/``TypeError``."""
    if not isinstance(logits, torch.Tensor) or not isinstance(token_ids, torch.Tensor):
        raise TypeError("logits and token_ids must be torch.Tensor")
    if logits.dtype not in FLOAT_DTYPES:
        raise TypeError(f"logits must be float32/bfloat16/float16/float64, got {logits.dtype}")
    if token_ids.dtype not in (torch.int64, torch.int32, torch.int16, torch.uint8):
        raise TypeError(f"token_ids must be an integer tensor, got {token_ids.dtype}")
    if logits.dim() < 1 or tuple(logits.shape[:-1]) != tuple(token_ids.shape):
        raise ValueError(
            f"logits shape {tuple(logits.shape)} must be token_ids shape {tuple(token_ids.shape)} + (V,)"
        )
    if logits.device != token_ids.device:
        raise ValueError(f"logits on {logits.device} but token_ids on {token_ids.device}")
    vocab = logits.shape[-1]
    if vocab == 0:
        raise ValueError("vocabulary size V must be > 0")
    if not float(temperature) > 0.0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    if token_ids.numel() and bool(((token_ids < 0) | (token_ids >= vocab)).any()):
        raise ValueError(f"token_ids must lie in [0, {vocab}); got min {int(token_ids.min())}, max {int(token_ids.max())}")


def check_grpo_inputs(
    logits: torch.Tensor,
    token_ids: torch.Tensor,
    advantages: torch.Tensor,
    completion_mask: torch.Tensor,
    old_logprobs: torch.Tensor | None,
    ref_logprobs: torch.Tensor | None,
    epsilon_low: float,
    epsilon_high: float,
    beta: float,
    loss_type: str,
    max_completion_length: int | None,
    temperature: float = 1.0,
) -> None:
    """Validate the arguments of :func:`kernels.grpo_loss`; raise ``ValueError``/``TypeError``."""
    if logits.dim() != 3:
        raise ValueError(f"logits must be [B, T, V], got shape {tuple(logits.shape)}")
    check_selective_inputs(logits, token_ids, temperature)
    b, t = token_ids.shape
    if tuple(advantages.shape) not in ((b,), (b, t)):
        raise ValueError(f"advantages must be [B]={b} or [B, T]={b, t}, got {tuple(advantages.shape)}")
    if tuple(completion_mask.shape) != (b, t):
        raise ValueError(f"completion_mask must be [B, T]={b, t}, got {tuple(completion_mask.shape)}")
    for name, x in (("old_logprobs", old_logprobs), ("ref_logprobs", ref_logprobs)):
        if x is not None and tuple(x.shape) != (b, t):
            raise ValueError(f"{name} must be [B, T]={b, t}, got {tuple(x.shape)}")
    for name, x in (("advantages", advantages), ("completion_mask", completion_mask),
                    ("old_logprobs", old_logprobs), ("ref_logprobs", ref_logprobs)):
        if x is not None and x.device != logits.device:
            raise ValueError(f"{name} on {x.device} but logits on {logits.device}")
    if epsilon_low < 0 or epsilon_high < 0:
        raise ValueError(f"epsilon_low/epsilon_high must be >= 0, got {epsilon_low}, {epsilon_high}")
    if beta < 0:
        raise ValueError(f"beta must be >= 0, got {beta}")
    if beta > 0 and ref_logprobs is None:
        raise ValueError("beta > 0 needs ref_logprobs")
    if loss_type not in LOSS_TYPES:
        raise ValueError(f"loss_type must be one of {LOSS_TYPES}, got {loss_type!r}")
    if max_completion_length is not None and max_completion_length <= 0:
        raise ValueError(f"max_completion_length must be > 0, got {max_completion_length}")


def loss_weights(completion_mask: torch.Tensor, loss_type: str, max_completion_length: int | None) -> torch.Tensor:
    """Per-token weights ``w[B, T]`` (fp32) with ``loss = Σ w · per_token_loss`` for each loss type.

    ``grpo``: ``m / (B · max(1, Σ_t m))``; ``dr_grpo``: ``m / (B · L)`` with ``L = max_completion_length``
    (default ``T``); ``dapo``: ``m / max(1, Σ m)`` — the TRL normalisations rewritten as weights.
    """
    m = completion_mask.to(torch.float32)
    b, t = m.shape
    if loss_type == "grpo":
        return m / (m.sum(dim=1, keepdim=True).clamp(min=1.0) * b)
    if loss_type == "dr_grpo":
        length = t if max_completion_length is None else max_completion_length
        return m / float(b * length)
    if loss_type == "dapo":
        return m / m.sum().clamp(min=1.0)
    raise ValueError(f"loss_type must be one of {LOSS_TYPES}, got {loss_type!r}")


def masked_clip_ratio(clipped: torch.Tensor, completion_mask: torch.Tensor) -> float:
    """Fraction (0..1) of completion tokens flagged in ``clipped[B, T]`` (bool or 0/1); 0 when there are none."""
    mask = completion_mask.to(torch.float32)
    return float((clipped.to(torch.float32) * mask).sum() / mask.sum().clamp(min=1.0))
