"""Public entry points: dispatch between the Triton kernels and the torch reference."""

from __future__ import annotations

import torch

from . import reference
from ._backend import resolve_backend, triton_module
from ._common import (
    GRPOLossOutput,
    check_fused_linear_inputs,
    check_grpo_inputs,
    check_grpo_params,
    check_id_range,
    check_selective_inputs,
    check_token_ids,
    loss_weights,
    masked_clip_ratio,
)
from ._fused_linear import ChunkConfig, default_chunk_size, fused_linear_grpo_loss_impl


def selective_log_softmax(
    logits: torch.Tensor,
    token_ids: torch.Tensor,
    temperature: float = 1.0,
    *,
    logits_offset: int | None = None,
    backend: str = "auto",
    inplace_backward: bool = False,
    check_ids: bool | None = None,
    block_v: int | None = None,
    num_warps: int | None = None,
) -> torch.Tensor:
    """Log-probabilities of the chosen tokens: ``log_softmax(logits / temperature)[n, token_ids[n]]``.

    Same maths as TRL's ``selective_log_softmax`` (``trl/trainer/utils.py``) but, on the Triton
    path, in one pass over V per row with fp32 accumulation and no ``[N, V]`` temporary; the
    backward recomputes the softmax blockwise from the saved log-sum-exp.

    Args:
        logits: ``[N, V]`` (any row stride) or ``[B, T, V]`` (any strides), float32 / bfloat16 /
            float16 (float64 on the torch path). ``-inf`` entries are allowed. With
            ``logits_offset`` it may be longer: ``[B, L, V]`` with ``L ≥ logits_offset + T``.
        token_ids: ``[N]`` or ``[B, T]`` integer ids in ``[0, V)``.
        temperature: > 0; logits are divided by it (as TRL does before the softmax).
        logits_offset: ``token_ids[:, t]`` is scored by ``logits[:, t + logits_offset]``. Pass the
            policy's whole ``[B, L, V]`` output with an offset instead of a slice such as
            ``logits[:, :-1]``: on the Triton path the gradient is then one buffer of the logits'
            own shape (zero outside the window), where a slice makes autograd allocate a second
            full-size zero gradient and copy the slice's gradient into it. ``None``: shapes must match.
        backend: ``"auto"`` (Triton for CUDA tensors when triton is installed, else torch),
            ``"triton"`` (CUDA, or CPU under ``TRITON_INTERPRET=1``) or ``"torch"``.
        inplace_backward: Triton path only — write ``dlogits`` into the logits buffer in the
            backward (no gradient allocation at all; the logits are destroyed, so nothing else
            may read them after the backward).
        check_ids: check ``0 ≤ id < V`` on the host; ``None`` (default) checks CPU tensors only —
            on CUDA it would cost a device sync per call. Unchecked bad ids give NaN logprobs on
            the Triton path (never an out-of-bounds read).
        block_v, num_warps: Triton launch overrides (``block_v`` a power of two); defaults from
            the table in :mod:`rft_sdk.kernels._launch`.

    Returns:
        ``[N]`` / ``[B, T]`` float32 log-probabilities (float64 for float64 logits on the torch
        path), differentiable w.r.t. ``logits``.

    Raises:
        TypeError / ValueError: bad dtypes, shapes, devices, offset, temperature or (when
            checked) ids outside ``[0, V)``.
        RuntimeError: ``backend="triton"`` without triton, or on CPU without ``TRITON_INTERPRET=1``.
    """
    offset = check_selective_inputs(logits, token_ids, temperature, logits_offset, check_ids)
    if resolve_backend(backend, logits.device) == "torch":  # inputs checked above
        aligned = logits if logits_offset is None else logits.narrow(1, offset, token_ids.shape[1])
        return reference._selective_log_softmax(aligned, token_ids, temperature)
    if logits.dim() not in (2, 3):
        raise ValueError(f"the Triton path takes [N, V] or [B, T, V] logits, got shape {tuple(logits.shape)}")
    mod = triton_module("_selective_log_softmax")
    return mod.selective_log_softmax_triton(
        logits, token_ids, temperature, logits_offset=offset, inplace_backward=inplace_backward,
        block_v=block_v, num_warps=num_warps,
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
    logits_offset: int | None = None,
    return_entropy: bool = False,
    backend: str = "auto",
    inplace_backward: bool = False,
    check_ids: bool | None = None,
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
        logits: ``[B, T, V]`` policy logits aligned with ``token_ids`` (any strides), or the
            policy's whole ``[B, L, V]`` output with ``logits_offset`` (preferred: see
            :func:`selective_log_softmax`, no second gradient buffer); fp32 / bf16 / fp16.
        token_ids: ``[B, T]`` sampled completion ids in ``[0, V)`` (padding ids included).
        advantages: ``[B]`` (per sequence) or ``[B, T]`` (per token).
        completion_mask: ``[B, T]`` 1 for completion tokens, 0 for padding (bool/int/float).
        old_logprobs: ``[B, T]`` behaviour-policy logprobs; ``None`` = on-policy (ratio 1, gradient A).
        ref_logprobs: ``[B, T]`` reference-policy logprobs; needed when ``beta > 0``.
        temperature, epsilon_low, epsilon_high, beta: as above (T > 0, ε ≥ 0, β ≥ 0).
        loss_type: ``"grpo"``, ``"dr_grpo"`` or ``"dapo"``.
        max_completion_length: ``dr_grpo`` denominator length; default ``T``.
        return_entropy: also return the per-token entropy of ``softmax(logits/T)``, computed in
            the same pass over V from the online softmax statistics (no extra read).
        logits_offset, backend, inplace_backward, check_ids, block_v, num_warps: see
            :func:`selective_log_softmax`.

    Returns:
        :class:`GRPOLossOutput` ``(loss scalar fp32, logprobs [B, T] fp32 detached,
        kl [B, T] | None, clip_ratio 0-dim tensor, entropy [B, T] | None)``, all on the logits'
        device (no host sync). On the Triton path masked tokens add exactly 0 to the loss and
        gradient even if their logits are non-finite.

    Raises:
        TypeError / ValueError: inconsistent shapes, devices, dtypes, ids or parameters
        (including ``beta > 0`` without ``ref_logprobs``).
        RuntimeError: as for :func:`selective_log_softmax`.
    """
    offset = check_grpo_inputs(logits, token_ids, advantages, completion_mask, old_logprobs, ref_logprobs,
                               epsilon_low, epsilon_high, beta, loss_type, max_completion_length, temperature,
                               logits_offset, check_ids)
    if resolve_backend(backend, logits.device) == "torch":  # inputs checked above
        return reference._grpo_loss(
            logits.narrow(1, offset, token_ids.shape[1]), token_ids, advantages, completion_mask,
            old_logprobs, ref_logprobs, temperature=temperature, epsilon_low=epsilon_low,
            epsilon_high=epsilon_high, beta=beta, loss_type=loss_type,
            max_completion_length=max_completion_length, return_entropy=return_entropy,
        )
    weights = loss_weights(completion_mask, loss_type, max_completion_length)
    mod = triton_module("_grpo_loss")
    loss, logprobs, kl, clipped, entropy = mod.grpo_loss_triton(
        logits, token_ids, advantages, weights, old_logprobs, ref_logprobs, temperature,
        epsilon_low, epsilon_high, beta, logits_offset=offset, return_entropy=return_entropy,
        inplace_backward=inplace_backward, block_v=block_v, num_warps=num_warps,
    )
    return GRPOLossOutput(loss=loss, logprobs=logprobs, kl=kl, clip_ratio=masked_clip_ratio(clipped, completion_mask),
                          entropy=entropy)


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
    chunk_size: int | None = None,
    temperature: float = 1.0,
    epsilon_low: float = 0.2,
    epsilon_high: float = 0.2,
    beta: float = 0.0,
    loss_type: str = "grpo",
    max_completion_length: int | None = None,
    return_entropy: bool = False,
    backend: str = "auto",
    check_ids: bool | None = None,
    block_v: int | None = None,
    num_warps: int | None = None,
) -> GRPOLossOutput:
    """GRPO loss straight from the last hidden states and the LM-head weight, never making ``[B·T, V]`` logits.

    Same loss as :func:`grpo_loss` on ``logits = hidden @ weight.T (+ bias)``; the tokens are
    processed ``chunk_size`` rows at a time (one ``[chunk_size, V]`` logits buffer, reused
    maths of :func:`grpo_loss`), and the gradients w.r.t. ``hidden``, ``weight`` and ``bias``
    are accumulated chunk by chunk during the forward; the backward scales them by the upstream
    gradient. See :mod:`rft_sdk.kernels._fused_linear`.

    Args:
        hidden: ``[B, T, H]`` hidden states aligned with ``token_ids`` (row ``t`` predicts
            ``token_ids[:, t]``), fp32 / bf16 / fp16 (fp64 on the torch backend).
        weight: ``[V, H]`` LM-head weight, same dtype and device as ``hidden``.
        token_ids, advantages, completion_mask, old_logprobs, ref_logprobs: as :func:`grpo_loss`.
        bias: ``[V]`` or ``None``.
        chunk_size: token rows per chunk (> 0); default: rows whose logits fit in 512 MiB
            (1,728 for V = 151,936 in bf16). Extra memory ≈ ``chunk_size · V`` logits elements
            plus O(B·T) fp32, independent of B·T.
        temperature, epsilon_low, epsilon_high, beta, loss_type, max_completion_length,
        return_entropy, check_ids, block_v, num_warps: as :func:`grpo_loss`.
        backend: ``"auto"`` / ``"triton"`` / ``"torch"`` for the per-chunk loss (the GEMMs are torch's).

    Returns:
        :class:`GRPOLossOutput`; ``loss`` is differentiable w.r.t. ``hidden``, ``weight`` and ``bias``.
        The chunk logits are computed in ``hidden``'s dtype and ``grad_weight`` is accumulated in
        ``weight``'s dtype (as a bf16 LM head's own backward would produce them).

    Raises:
        TypeError / ValueError: inconsistent shapes, dtypes, devices or parameters.
        RuntimeError: as for :func:`selective_log_softmax`; or a second backward through one call.
    """
    check_fused_linear_inputs(hidden, weight, bias, chunk_size)
    check_token_ids(token_ids, hidden.device)
    if token_ids.dim() != 2 or tuple(hidden.shape[:-1]) != tuple(token_ids.shape):
        raise ValueError(f"hidden must be [B, T, H] with token_ids [B, T], got {tuple(hidden.shape)} and "
                         f"{tuple(token_ids.shape)}")
    if not float(temperature) > 0.0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    check_id_range(token_ids, weight.shape[0], check_ids)
    check_grpo_params(hidden.device, token_ids, advantages, completion_mask, old_logprobs, ref_logprobs,
                      epsilon_low, epsilon_high, beta, loss_type, max_completion_length)
    resolved = resolve_backend(backend, hidden.device)
    cfg = ChunkConfig(float(temperature), float(epsilon_low), float(epsilon_high), float(beta),
                      chunk_size or default_chunk_size(weight.shape[0], hidden.element_size()), resolved,
                      bool(return_entropy), block_v, num_warps)
    weights = loss_weights(completion_mask, loss_type, max_completion_length)
    loss, logprobs, kl, clipped, entropy = fused_linear_grpo_loss_impl(
        hidden, weight, bias, token_ids, advantages, weights, old_logprobs, ref_logprobs, cfg)
    return GRPOLossOutput(loss=loss, logprobs=logprobs, kl=kl, clip_ratio=masked_clip_ratio(clipped, completion_mask),
                          entropy=entropy)
