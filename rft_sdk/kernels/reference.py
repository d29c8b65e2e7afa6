"""Pure-torch reference maths: the CPU path of :mod:`rft_sdk.kernels` and the oracle of its tests.

Everything here is plain autograd-able torch, written to mirror the formulas in
TRL's ``GRPOTrainer`` (``trl/trainer/grpo_trainer.py``: ``selective_log_softmax``,
``_compute_loss``) rather than to be fast. Half-precision logits are upcast to
float32 before the softmax; float64 logits are kept in float64 (used as gold in tests).
"""

from __future__ import annotations

import torch

from ._common import GRPOLossOutput, check_grpo_inputs, check_selective_inputs, masked_clip_ratio

__all__ = ["fused_linear_grpo_loss", "grpo_loss", "grpo_per_token_loss", "reduce_loss", "selective_log_softmax",
           "token_entropy"]


def _compute_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


def selective_log_softmax(logits: torch.Tensor, token_ids: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """``log_softmax(logits / temperature)`` gathered at ``token_ids``.

    Args:
        logits: ``[..., V]`` float tensor (any strides).
        token_ids: ``[...]`` integer tensor with values in ``[0, V)``.
        temperature: > 0; logits are divided by it before the softmax (as TRL does).

    Returns:
        ``[...]`` log-probabilities, float32 (float64 for float64 logits), differentiable.

    Raises:
        TypeError / ValueError: on bad dtypes, shapes, devices, temperature or out-of-range ids.
    """
    check_selective_inputs(logits, token_ids, temperature)
    return _selective_log_softmax(logits, token_ids, temperature)


def _selective_log_softmax(logits: torch.Tensor, token_ids: torch.Tensor, temperature: float) -> torch.Tensor:
    """:func:`selective_log_softmax` without the input checks (the caller has run them)."""
    x = logits.to(_compute_dtype(logits.dtype))
    if temperature != 1.0:
        x = x / temperature
    picked = torch.gather(x, -1, token_ids.long().unsqueeze(-1)).squeeze(-1)
    return picked - torch.logsumexp(x, dim=-1)


def token_entropy(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """Per-row entropy ``-Σ_v p log p`` (nats) of ``p = softmax(logits / temperature)``, detached.

    Args:
        logits: ``[..., V]`` float tensor; ``-inf`` entries count as ``p = 0`` (``0 · log 0 = 0``).

    Returns:
        ``[...]`` float32 (float64 for float64 logits), no gradient.
    """
    with torch.no_grad():
        x = logits.to(_compute_dtype(logits.dtype))
        logp = torch.log_softmax(x / temperature if temperature != 1.0 else x, dim=-1)
        p = logp.exp()
        return -(p * torch.where(p > 0, logp, torch.zeros_like(logp))).sum(-1)


def grpo_per_token_loss(
    logprobs: torch.Tensor,
    advantages: torch.Tensor,
    old_logprobs: torch.Tensor | None = None,
    ref_logprobs: torch.Tensor | None = None,
    *,
    epsilon_low: float = 0.2,
    epsilon_high: float = 0.2,
    beta: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
    """Per-token GRPO loss from log-probabilities (TRL ``GRPOTrainer._compute_loss``).

    ``r = exp(lp - old)``; ``loss = -min(r·A, clip(r, 1-ε_low, 1+ε_high)·A) + β·kl`` with the
    k3 estimator ``kl = exp(ref - lp) - (ref - lp) - 1`` (Schulman, "Approximating KL divergence").
    ``old_logprobs=None`` means on-policy: ``old = lp.detach()`` so ``r == 1`` with gradient ``A``.

    Args:
        logprobs: ``[B, T]`` current-policy logprobs (differentiable).
        advantages: ``[B]`` (per sequence) or ``[B, T]`` (per token).
        old_logprobs, ref_logprobs: ``[B, T]`` or ``None``.

    Returns:
        ``(per_token_loss [B, T], kl [B, T] | None, is_region_clipped [B, T] bool)``.
    """
    lp = logprobs
    adv = advantages.to(lp.dtype)
    if adv.dim() == 1:
        adv = adv.unsqueeze(1)
    old = lp.detach() if old_logprobs is None else old_logprobs.to(lp.dtype)
    coef_1 = torch.exp(lp - old)
    coef_2 = torch.clamp(coef_1, 1 - epsilon_low, 1 + epsilon_high)
    per_token_loss = -torch.min(coef_1 * adv, coef_2 * adv)
    kl = None
    if beta != 0.0 and ref_logprobs is not None:
        ref = ref_logprobs.to(lp.dtype)
        kl = torch.exp(ref - lp) - (ref - lp) - 1
        per_token_loss = per_token_loss + beta * kl
    clipped = ((coef_1 < 1 - epsilon_low) & (adv < 0)) | ((coef_1 > 1 + epsilon_high) & (adv > 0))
    return per_token_loss, kl, clipped


def reduce_loss(
    per_token_loss: torch.Tensor,
    completion_mask: torch.Tensor,
    loss_type: str = "grpo",
    max_completion_length: int | None = None,
) -> torch.Tensor:
    """Scalar loss from ``per_token_loss[B, T]`` and ``completion_mask[B, T]`` (TRL normalisations).

    ``grpo``: mean over sequences of (masked sum / max(1, mask count)) — DeepSeekMath GRPO;
    ``dr_grpo``: masked sum / (B · max_completion_length, default T) — Dr. GRPO (arXiv:2503.20783);
    ``dapo``: masked sum / max(1, total mask count) — DAPO token-level loss (arXiv:2503.14476).

    Raises:
        ValueError: unknown ``loss_type``.
    """
    mask = completion_mask.to(per_token_loss.dtype)
    masked = per_token_loss * mask
    if loss_type == "grpo":
        return (masked.sum(-1) / mask.sum(-1).clamp(min=1.0)).mean()
    if loss_type == "dr_grpo":
        length = per_token_loss.shape[1] if max_completion_length is None else max_completion_length
        return masked.sum() / (per_token_loss.shape[0] * length)
    if loss_type == "dapo":
        return masked.sum() / mask.sum().clamp(min=1.0)
    raise ValueError(f"loss_type must be 'grpo', 'dr_grpo' or 'dapo', got {loss_type!r}")


def grpo_loss(
    logits: torch.Tensor,
    token_ids: torch.Tensor,
    advantages: torch.Tensor,
    completion_mask: torch.Tensor,
    old_logprobs: torch.Tensor | None = None,
    ref_logprobs: torch.Tensor | None = None,
    *,
    temperature: float = 1.0,
    epsilon_low: float = 0.2,
    epsilon_high: float = 0.2,
    beta: float = 0.0,
    loss_type: str = "grpo",
    max_completion_length: int | None = None,
    logits_offset: int | None = None,
    return_entropy: bool = False,
) -> GRPOLossOutput:
    """Reference GRPO loss from logits ``[B, T, V]`` (or ``[B, L, V]`` + ``logits_offset``).

    Same contract as :func:`rft_sdk.kernels.grpo_loss`; the window is an autograd slice here,
    so its gradient is a full-size zero tensor with the window's rows copied in.

    Raises:
        TypeError / ValueError: on inconsistent shapes, devices, dtypes or parameters.
    """
    offset = check_grpo_inputs(logits, token_ids, advantages, completion_mask, old_logprobs, ref_logprobs,
                               epsilon_low, epsilon_high, beta, loss_type, max_completion_length, temperature,
                               logits_offset)
    return _grpo_loss(logits.narrow(1, offset, token_ids.shape[1]), token_ids, advantages, completion_mask,
                      old_logprobs, ref_logprobs, temperature=temperature, epsilon_low=epsilon_low,
                      epsilon_high=epsilon_high, beta=beta, loss_type=loss_type,
                      max_completion_length=max_completion_length, return_entropy=return_entropy)


def _grpo_loss(
    logits: torch.Tensor,
    token_ids: torch.Tensor,
    advantages: torch.Tensor,
    completion_mask: torch.Tensor,
    old_logprobs: torch.Tensor | None,
    ref_logprobs: torch.Tensor | None,
    *,
    temperature: float,
    epsilon_low: float,
    epsilon_high: float,
    beta: float,
    loss_type: str,
    max_completion_length: int | None,
    return_entropy: bool = False,
) -> GRPOLossOutput:
    """:func:`grpo_loss` on aligned ``[B, T, V]`` logits without the input checks (the caller has run them)."""
    lp = _selective_log_softmax(logits, token_ids, temperature)
    per_token_loss, kl, clipped = grpo_per_token_loss(
        lp, advantages, old_logprobs, ref_logprobs,
        epsilon_low=epsilon_low, epsilon_high=epsilon_high, beta=beta,
    )
    return GRPOLossOutput(
        loss=reduce_loss(per_token_loss, completion_mask, loss_type, max_completion_length),
        logprobs=lp.detach(),
        kl=None if kl is None else kl.detach(),
        clip_ratio=masked_clip_ratio(clipped, completion_mask),
        entropy=token_entropy(logits, temperature) if return_entropy else None,
    )


def fused_linear_grpo_loss(
    hidden: torch.Tensor,
    weight: torch.Tensor,
    token_ids: torch.Tensor,
    advantages: torch.Tensor,
    completion_mask: torch.Tensor,
    old_logprobs: torch.Tensor | None = None,
    ref_logprobs: torch.Tensor | None = None,
    *,
    bias: torch.Tensor | None = None,
    temperature: float = 1.0,
    epsilon_low: float = 0.2,
    epsilon_high: float = 0.2,
    beta: float = 0.0,
    loss_type: str = "grpo",
    max_completion_length: int | None = None,
    return_entropy: bool = False,
) -> GRPOLossOutput:
    """Eager LM head + GRPO loss: ``logits = hidden @ weight.T (+ bias)`` in full, then :func:`grpo_loss`.

    The oracle of :func:`rft_sdk.kernels.fused_linear_grpo_loss` (which never materialises the
    ``[B, T, V]`` logits). Computes in ``hidden``'s dtype; pass float64 tensors for a gold value.

    Args:
        hidden: ``[B, T, H]``; weight: ``[V, H]``; bias: ``[V]`` or ``None``; the rest as :func:`grpo_loss`.

    Raises:
        TypeError / ValueError: on inconsistent shapes, devices, dtypes or parameters.
    """
    logits = torch.nn.functional.linear(hidden, weight, bias)
    return grpo_loss(logits, token_ids, advantages, completion_mask, old_logprobs, ref_logprobs,
                     temperature=temperature, epsilon_low=epsilon_low, epsilon_high=epsilon_high, beta=beta,
                     loss_type=loss_type, max_completion_length=max_completion_length,
                     return_entropy=return_entropy)
