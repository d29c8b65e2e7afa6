"""Triton fused GRPO loss: logits → logprob → clipped surrogate (+ k3 KL) → weighted loss, and its backward.

Maths as in TRL's ``GRPOTrainer._compute_loss`` (``trl/trainer/grpo_trainer.py``):
``r = exp(lp - old)``, ``loss_tok = -min(r·A, clip(r, 1-ε_low, 1+ε_high)·A) + β·(exp(ref-lp) - (ref-lp) - 1)``;
the ``grpo`` / ``dr_grpo`` / ``dapo`` normalisations enter as per-token weights ``w``
(see :func:`rft_sdk.kernels._common.loss_weights`), so ``loss = Σ w·loss_tok``.

One program per token row. The forward makes one pass over the row's V logits (online
log-sum-exp and, on request, entropy, shared with :mod:`._selective_log_softmax`) and also
stores ``dloss/dlp`` per token; the backward is the selective log-softmax backward with
``scale = grad_loss · dloss/dlp`` (rows with zero weight skip the logits read), writing a
gradient shaped like the logits the caller passed (or into them, ``inplace_backward``).
Nothing here reads a device value on the host: the loss, the clip fraction and all per-token
outputs stay tensors.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._launch import launch_config
from ._selective_log_softmax import lse_backward, row_layout, row_stats, target_logit, window


@triton.jit
def _grpo_fwd_kernel(
    logits_ptr, ids_ptr, adv_ptr, weight_ptr, old_ptr, ref_ptr,
    logprob_ptr, lse_ptr, wloss_ptr, dlogprob_ptr, kl_ptr, clipped_ptr, entropy_ptr,
    inner, stride_outer, stride_inner, stride_v, V, inv_temp,
    eps_low, eps_high, beta,
    HAS_OLD: tl.constexpr, HAS_REF: tl.constexpr, WITH_ENTROPY: tl.constexpr, BLOCK_V: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    outer = row // inner
    base = logits_ptr + outer * stride_outer + (row - outer * inner) * stride_inner
    lse, entropy = row_stats(base, stride_v, V, inv_temp, BLOCK_V, WITH_ENTROPY)
    x_tok, _ = target_logit(base, ids_ptr, row, stride_v, V, inv_temp)
    lp = x_tok - lse

    adv = tl.load(adv_ptr + row)
    w = tl.load(weight_ptr + row)
    if HAS_OLD:
        old = tl.load(old_ptr + row)
    else:
        old = lp  # on-policy: ratio exactly 1, gradient A
    ratio = tl.exp(lp - old)
    ratio_clipped = tl.minimum(tl.maximum(ratio, 1.0 - eps_low), 1.0 + eps_high)
    surr1 = ratio * adv
    surr2 = ratio_clipped * adv
    loss_tok = -tl.minimum(surr1, surr2)
    # d(-min(surr1, surr2))/dlp: the unclipped branch carries -r·A; when the clipped branch is
    # strictly smaller, r is outside the clip range and the gradient is 0 (ties give -r·A in torch too).
    dloss = tl.where(surr1 <= surr2, -surr1, 0.0)
    if HAS_REF:
        delta = tl.load(ref_ptr + row) - lp
        e = tl.exp(delta)
        kl = e - delta - 1.0
        loss_tok += beta * kl
        dloss += beta * (1.0 - e)
        tl.store(kl_ptr + row, kl)
    if WITH_ENTROPY:
        tl.store(entropy_ptr + row, entropy)
    bad = lp != lp  # NaN logprob (an id outside [0, V) or NaN logits): keep it visible in the loss
    loss_tok = tl.where(bad, float("nan"), loss_tok)
    dloss = tl.where(bad, float("nan"), dloss)
    clipped = ((ratio < 1.0 - eps_low) & (adv < 0.0)) | ((ratio > 1.0 + eps_high) & (adv > 0.0))
    active = w != 0.0  # masked tokens contribute exactly 0, even if their loss is inf/nan
    tl.store(lse_ptr + row, lse)
    tl.store(logprob_ptr + row, lp)
    tl.store(wloss_ptr + row, tl.where(active, w * loss_tok, 0.0))
    tl.store(dlogprob_ptr + row, tl.where(active, w * dloss, 0.0))
    tl.store(clipped_ptr + row, clipped.to(tl.float32))


def grpo_forward(
    logits: torch.Tensor, token_ids: torch.Tensor, advantages: torch.Tensor, weights: torch.Tensor,
    old_logprobs: torch.Tensor | None, ref_logprobs: torch.Tensor | None,
    temperature: float, epsilon_low: float, epsilon_high: float, beta: float,
    *, with_entropy: bool = False, block_v: int | None = None, num_warps: int | None = None,
) -> dict[str, torch.Tensor]:
    """Launch the fused forward on ``logits[B, T, V]`` (any strides) or ``[N, V]``; the rest has ids' shape.

    ``advantages`` may also be ``[B]`` (per sequence). Returns fp32 tensors shaped like the ids:
    ``logprob, lse, wloss (w·loss_tok), dlogprob (w·dloss/dlp), clipped (0/1)``, plus ``kl`` (when
    ``ref_logprobs`` is given and ``beta > 0``) and ``entropy`` (when ``with_entropy``).
    """
    vocab = logits.shape[-1]
    shape = token_ids.shape
    ids = token_ids.contiguous()
    adv = advantages.to(torch.float32)
    adv = (adv.unsqueeze(1) if adv.dim() == 1 and len(shape) == 2 else adv).expand(shape).contiguous()
    has_ref = ref_logprobs is not None and beta > 0
    names = ["logprob", "lse", "wloss", "dlogprob", "clipped"] + (["kl"] if has_ref else [])
    out = {name: torch.empty(shape, dtype=torch.float32, device=logits.device)
           for name in names + (["entropy"] if with_entropy else [])}
    if ids.numel() == 0:
        return out
    old = old_logprobs.to(torch.float32).contiguous() if old_logprobs is not None else out["logprob"]
    ref = ref_logprobs.to(torch.float32).contiguous() if has_ref and ref_logprobs is not None else out["logprob"]
    inner, s_outer, s_inner, s_v = row_layout(logits)
    block, warps, stages = launch_config(vocab, logits.element_size(), "forward", block_v, num_warps)
    _grpo_fwd_kernel[(ids.numel(),)](
        logits, ids, adv, weights.to(torch.float32).contiguous(), old, ref,
        out["logprob"], out["lse"], out["wloss"], out["dlogprob"], out.get("kl", out["logprob"]),
        out["clipped"], out.get("entropy", out["logprob"]),
        inner, s_outer, s_inner, s_v, vocab, 1.0 / float(temperature),
        float(epsilon_low), float(epsilon_high), float(beta),
        HAS_OLD=old_logprobs is not None, HAS_REF=has_ref, WITH_ENTROPY=with_entropy, BLOCK_V=block,
        num_warps=warps, num_stages=stages,
    )
    return out


class GRPOLossFunction(torch.autograd.Function):
    """Autograd wrapper of the fused GRPO loss → ``(loss, logprob, kl, clipped, entropy)``; only ``loss`` has a gradient.

    ``logits`` is ``[B, L, V]``; rows ``offset .. offset+T`` score ``token_ids[B, T]``. The
    gradient is one ``[B, L, V]`` buffer (zero outside the window), or the logits themselves.
    """

    @staticmethod
    def forward(ctx, logits, token_ids, advantages, weights, old_logprobs, ref_logprobs,
                temperature, epsilon_low, epsilon_high, beta, offset, with_entropy, inplace_backward,
                block_v, num_warps):
        out = grpo_forward(window(logits, offset, token_ids.shape[1]), token_ids, advantages, weights,
                           old_logprobs, ref_logprobs, temperature, epsilon_low, epsilon_high, beta,
                           with_entropy=with_entropy, block_v=block_v, num_warps=num_warps)
        loss = out["wloss"].sum()
        ctx.save_for_backward(logits, token_ids, out["lse"], out["dlogprob"])
        ctx.config = (temperature, offset, inplace_backward, block_v, num_warps)
        empty = out["logprob"].new_empty(0)
        kl, entropy = out.get("kl", empty), out.get("entropy", empty)
        ctx.mark_non_differentiable(out["logprob"], kl, out["clipped"], entropy)
        return loss, out["logprob"], kl, out["clipped"], entropy

    @staticmethod
    def backward(ctx, grad_loss, _grad_logprob, _grad_kl, _grad_clipped, _grad_entropy):
        logits, token_ids, lse, dlogprob = ctx.saved_tensors
        temperature, offset, inplace, block_v, num_warps = ctx.config
        grad = lse_backward(logits, token_ids, lse, dlogprob * grad_loss, temperature,
                            offset=offset, inplace=inplace, block_v=block_v, num_warps=num_warps)
        return (grad,) + (None,) * 14


def grpo_loss_triton(
    logits, token_ids, advantages, weights, old_logprobs, ref_logprobs, temperature,
    epsilon_low, epsilon_high, beta, *, logits_offset=0, return_entropy=False, inplace_backward=False,
    block_v=None, num_warps=None,
):
    """Triton path of :func:`rft_sdk.kernels.grpo_loss` (inputs validated).

    Returns ``(loss, logprob, kl | None, clipped, entropy | None)``.
    """
    loss, logprob, kl, clipped, entropy = GRPOLossFunction.apply(
        logits, token_ids, advantages, weights, old_logprobs, ref_logprobs, float(temperature),
        float(epsilon_low), float(epsilon_high), float(beta), int(logits_offset), bool(return_entropy),
        inplace_backward, block_v, num_warps,
    )
    has_kl = ref_logprobs is not None and beta > 0
    return loss, logprob, (kl if has_kl else None), clipped, (entropy if return_entropy else None)
