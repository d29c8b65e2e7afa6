"""Public entry points: dispatch between the Triton kernels and the torch reference."""

from __future__ import annotations

import torch

from . import reference
from ._backend import resolve_backend, triton_module
from ._common import GRPOLossOutput, check_grpo_inputs, check_selective_inputs, loss_weights, masked_clip_ratio


def selective_log_softmax(
    logits: torch.Tensor,
    token_ids: torch.Tensor,
    temperature: float = 1.0,
    *,
    backend: str = "auto",
    inplace_backward: bool = False,
    block_v: int | None = None,
    num_warps: int | None = None,
) -> torch.Tensor:
    """Log-probabilities of the chosen tokens: ``log_softmax(logits / temperature)[n, token_ids[n]]``.

    Same maths as TRL's ``selective_log_softmax`` (``trl/trainer/utils.py``) but, on the Triton
    path, in one pass over V per row with fp32 accumulation and no ``[N, V]`` temporary; the
    backward recomputes the softmax blockwise from the saved log-sum-exp.

    Args:
        logits: ``[N, V]`` (any row stride) or ``[B, T, V]`` (any strides, e.g. ``logits[:, :-1]``),
            float32 / bfloat16 / float16 (float64 on the torch path). ``-inf`` entries are allowed.
        token_ids: ``[N]`` or ``[B, T]`` integer ids in ``[0, V)``.
        temperature: > 0; logits are divided by it (as TRL does before the softmax).
        backend: ``"auto"`` (Triton for CUDA tensors when triton is installed, else torch),
            ``"triton"`` (CUDA, or CPU under ``TRITON_INTERPRET=1``) or ``"torch"``.
        inplace_backward: Triton path only — write ``dlogits`` into the logits buffer in the
            backward (saves one ``[N, V]`` allocation; the logits are destroyed).
        block_v, num_warps: Triton launch overrides (``block_v`` a power of two).

    Returns:
        ``[N]`` / ``[B, T]`` float32 log-probabilities (float64 for float64 logits on the torch
        path), differentiable w.r.t. ``logits``.

    Raises:
        TypeError / ValueError: bad dtypes, shapes, devices, temperature or ids outside ``[0, V)``
            (the id range check costs one host–device sync per call on CUDA).
        RuntimeError: ``backend="triton"`` without triton, or on CPU without ``TRITON_INTERPRET=1``.
    """
    check_selective_inputs(logits, token_ids, temperature)
    if resolve_backend(backend, logits.device) == "torch":
        return reference._selective_log_softmax(logits, token_ids, temperature)  # inputs checked above
    if logits.dim() not in (2, 3):
        raise ValueError(f"the Triton path takes [N, V] or [B, T, V] logits, got shape {tuple(logits.shape)}")
    mod = triton_module("_selective_log_softmax")
    return mod.selective_log_softmax_triton(
        logits, token_ids, temperature, inplace_backward=inplace_backward, block_v=block_v, num_warps=num_warps
    )


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
    backend: str = "auto",
    inplace_backward: bool = False,
    block_v: int | None = None,
    num_warps: int | None = None,
) -> GRPOLossOutput:
    """Fused GRPO policy-gradient loss from logits, as in TRL's ``GRPOTrainer._compute_loss``.

    Per token: ``lp = log_softmax(logits/T)[id]``, ``r = exp(lp - old)``,
    ``loss_tok = -min(r·A, clip(r, 1-ε_low, 1+ε_high)·A) + β·(exp(ref-lp) - (ref-lp) - 1)``
    (PPO clip, Schulman et al. 2017; asymmetric "clip-higher" ε from DAPO, arXiv:2503.14476;
    k3 KL estimator as in DeepSeekMath GRPO, arXiv:2402.03300). Reduction (``loss_type``):
    ``grpo`` — per-sequence masked mean, then mean over sequences; ``dr_grpo`` — masked sum /
    (B · max_completion_length) (Dr. GRPO, arXiv:2503.20783); ``dapo`` — masked sum / number of
    completion tokens (DAPO token-level loss).

    Args:
        logits: ``[B, T, V]`` policy logits aligned with ``token_ids`` (any strides, so
            ``logits[:, :-1]`` works without a copy); fp32 / bf16 / fp16.
        token_ids: ``[B, T]`` sampled completion ids in ``[0, V)`` (padding ids included).
        advantages: ``[B]`` (per sequence) or ``[B, T]`` (per token).
        completion_mask: ``[B, T]`` 1 for completion tokens, 0 for padding (bool/int/float).
        old_logprobs: ``[B, T]`` behaviour-policy logprobs; ``None`` = on-policy (ratio 1, gradient A).
        ref_logprobs: ``[B, T]`` reference-policy logprobs; needed when ``beta > 0``.
        temperature, epsilon_low, epsilon_high, beta: as above (T > 0, ε ≥ 0, β ≥ 0).
        loss_type: ``"grpo"``, ``"dr_grpo"`` or ``"dapo"``.
        max_completion_length: ``dr_grpo`` denominator length; default ``T``.
        backend, inplace_backward, block_v, num_warps: see :func:`selective_log_softmax`.

    Returns:
        :class:`GRPOLossOutput` ``(loss scalar fp32, logprobs [B, T] fp32 detached,
        kl [B, T] | None, clip_ratio float)``. On the Triton path masked tokens add exactly 0
        to the loss and gradient even if their logits are non-finite.

    Raises:
        TypeError / ValueError: inconsistent shapes, devices, dtypes, ids or parameters
        (including ``beta > 0`` without ``ref_logprobs``).
        RuntimeError: as for :func:`selective_log_softmax`.
    """
    check_grpo_inputs(logits, token_ids, advantages, completion_mask, old_logprobs, ref_logprobs,
                      epsilon_low, epsilon_high, beta, loss_type, max_completion_length, temperature)
    if resolve_backend(backend, logits.device) == "torch":  # inputs checked above
        return reference._grpo_loss(
            logits, token_ids, advantages, completion_mask, old_logprobs, ref_logprobs,
            temperature=temperature, epsilon_low=epsilon_low, epsilon_high=epsilon_high, beta=beta,
            loss_type=loss_type, max_completion_length=max_completion_length,
        )
    weights = loss_weights(completion_mask, loss_type, max_completion_length)
    mod = triton_module("_grpo_loss")
    loss, logprobs, kl, clipped = mod.grpo_loss_triton(
        logits, token_ids, advantages, weights, old_logprobs, ref_logprobs, temperature,
        epsilon_low, epsilon_high, beta, inplace_backward=inplace_backward, block_v=block_v, num_warps=num_warps,
    )
    return GRPOLossOutput(loss=loss, logprobs=logprobs, kl=kl, clip_ratio=masked_clip_ratio(clipped, completion_mask))
