"""Fused LM head + logprob + GRPO loss, chunked over tokens: the ``[N, V]`` logits never exist in full.

For each chunk of ``C`` token rows: ``logits_c = hidden_c @ weight.T (+ bias)`` (one GEMM), the
fused GRPO forward on ``logits_c`` (logprob, loss, KL, clip flag, entropy), then — when a
gradient is wanted — ``dloss/dlogits_c`` written over ``logits_c`` in place and two more GEMMs:
``grad_hidden_c = dlogits_c @ weight`` and ``grad_weight += dlogits_c.T @ hidden_c``. The
gradients are thus computed in the forward (as Liger-Kernel's fused linear losses do) and the
backward only scales them by the upstream gradient (a device tensor: no host sync).

Extra memory beyond the inputs and the gradients themselves (``grad_hidden`` ``[N, H]``,
``grad_weight`` ``[V, H]``, ``grad_bias`` ``[V]``): one ``[C, V]`` logits chunk in the hidden
states' dtype plus O(N) fp32 per-token vectors — independent of N for the ``[N, V]`` part.
The per-chunk loss runs on the Triton kernels (:mod:`._grpo_loss`) or, on the torch backend,
on the reference maths with autograd confined to the chunk.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from . import reference
from ._backend import triton_module

DEFAULT_CHUNK_BYTES = 512 * 2**20  # bytes of one [C, V] logits chunk when chunk_size is not given


@dataclass(frozen=True)
class ChunkConfig:
    """Non-tensor settings of one :class:`FusedLinearGRPOFunction` call."""

    temperature: float
    epsilon_low: float
    epsilon_high: float
    beta: float
    chunk_size: int
    backend: str  # "triton" or "torch" (resolved)
    return_entropy: bool
    block_v: int | None = None
    num_warps: int | None = None


def default_chunk_size(vocab: int, element_size: int, budget: int = DEFAULT_CHUNK_BYTES) -> int:
    """Rows per chunk so one ``[C, V]`` logits chunk stays within ``budget`` bytes (a multiple of 64 when ≥ 64).

    V = 151,936 in bf16 with the 512 MiB default gives 1,728 rows (≈ 525 MB).
    """
    rows = max(1, budget // max(1, vocab * element_size))
    return rows - rows % 64 if rows >= 64 else rows


def _chunk_triton(logits, ids, adv, w, old, ref, cfg: ChunkConfig, need_grad: bool) -> dict[str, torch.Tensor]:
    grpo = triton_module("_grpo_loss")
    out = grpo.grpo_forward(logits, ids, adv, w, old, ref, cfg.temperature, cfg.epsilon_low, cfg.epsilon_high,
                            cfg.beta, with_entropy=cfg.return_entropy, block_v=cfg.block_v, num_warps=cfg.num_warps)
    if need_grad:  # dloss/dlogits over the chunk's logits, in place: no second [C, V] buffer
        grpo.lse_backward(logits, ids, out["lse"], out["dlogprob"], cfg.temperature, inplace=True,
                          block_v=cfg.block_v, num_warps=cfg.num_warps)
    return out


def _chunk_torch(logits, ids, adv, w, old, ref, cfg: ChunkConfig, need_grad: bool) -> dict[str, torch.Tensor]:
    with torch.enable_grad():
        x = logits.detach().requires_grad_(need_grad)
        lp = reference._selective_log_softmax(x, ids, cfg.temperature)
        per_token, kl, clipped = reference.grpo_per_token_loss(
            lp[None], adv[None], None if old is None else old[None], None if ref is None else ref[None],
            epsilon_low=cfg.epsilon_low, epsilon_high=cfg.epsilon_high, beta=cfg.beta)
        wloss = torch.where(w != 0, w.to(lp.dtype) * per_token[0], torch.zeros_like(lp))
        out = {"logprob": lp.detach(), "wloss": wloss.detach(), "clipped": clipped[0].to(lp.dtype)}
        if kl is not None:
            out["kl"] = kl[0].detach()
        if cfg.return_entropy:  # before the logits are overwritten by their gradient
            out["entropy"] = reference.token_entropy(logits, cfg.temperature)
        if need_grad:
            (grad,) = torch.autograd.grad(wloss.sum(), x)
            logits.copy_(grad)
    return out


class FusedLinearGRPOFunction(torch.autograd.Function):
    """``(hidden[N, H], weight[V, H], bias[V] | None, ids[N], adv[N], w[N], old[N] | None, ref[N] | None, cfg)``
    → ``(loss, logprob[N], kl[N] | [0], clipped[N], entropy[N] | [0])``; only ``loss`` is differentiable.
    """

    @staticmethod
    def forward(ctx, hidden, weight, bias, token_ids, advantages, weights, old, ref, cfg: ChunkConfig):
        need_h, need_w = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        need_b = bias is not None and ctx.needs_input_grad[2]
        need_grad = need_h or need_w or need_b
        n, acc = hidden.shape[0], (torch.float64 if hidden.dtype == torch.float64 else torch.float32)
        keep = ["logprob", "wloss", "clipped"] + (["kl"] if ref is not None and cfg.beta > 0 else [])
        keep += ["entropy"] if cfg.return_entropy else []
        out = {k: torch.empty(n, dtype=acc, device=hidden.device) for k in keep}
        grad_h = torch.empty_like(hidden) if need_h else None
        grad_w = torch.zeros_like(weight) if need_w else None
        grad_b = torch.zeros(weight.shape[0], dtype=acc, device=hidden.device) if need_b else None
        chunk_fn = _chunk_triton if cfg.backend == "triton" else _chunk_torch
        for s in range(0, n, cfg.chunk_size):
            e = min(n, s + cfg.chunk_size)
            h = hidden[s:e]
            logits = h @ weight.t() if bias is None else torch.addmm(bias, h, weight.t())
            res = chunk_fn(logits, token_ids[s:e], advantages[s:e], weights[s:e],
                           None if old is None else old[s:e], None if ref is None else ref[s:e], cfg, need_grad)
            for k in keep:
                out[k][s:e] = res[k]
            if grad_h is not None:
                torch.mm(logits, weight, out=grad_h[s:e])
            if grad_w is not None:
                grad_w.addmm_(logits.t(), h)
            if grad_b is not None:
                grad_b += logits.sum(0, dtype=acc)
            del logits
        ctx.save_for_backward(grad_h, grad_w, None if grad_b is None else grad_b.to(bias.dtype))
        ctx.used = False
        empty = out["logprob"].new_empty(0)
        extras = (out.get("kl", empty), out.get("entropy", empty))
        ctx.mark_non_differentiable(out["logprob"], out["clipped"], *extras)
        return (out["wloss"].sum(), out["logprob"], extras[0], out["clipped"], extras[1])

    @staticmethod
    def backward(ctx, grad_loss, *_unused):
        if ctx.used:
            raise RuntimeError("fused_linear_grpo_loss: backward twice through one call is not supported "
                               "(the gradients are computed in the forward and scaled in place)")
        ctx.used = True
        grads = [None if g is None else g.mul_(grad_loss) for g in ctx.saved_tensors]
        return (*grads, None, None, None, None, None, None)


def fused_linear_grpo_loss_impl(
    hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, token_ids: torch.Tensor,
    advantages: torch.Tensor, weights: torch.Tensor, old_logprobs: torch.Tensor | None,
    ref_logprobs: torch.Tensor | None, cfg: ChunkConfig,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor, torch.Tensor | None]:
    """Flatten ``[B, T, ...]`` inputs to token rows and run :class:`FusedLinearGRPOFunction` (inputs validated).

    Returns ``(loss, logprobs [B, T], kl [B, T] | None, clipped [B, T], entropy [B, T] | None)``.
    """
    b, t = token_ids.shape
    flat = hidden.reshape(b * t, hidden.shape[-1])
    adv = advantages.to(torch.float32)
    adv = (adv.unsqueeze(1) if adv.dim() == 1 else adv).expand(b, t).reshape(-1)
    rows = [None if x is None else x.to(torch.float32).reshape(-1) for x in (old_logprobs, ref_logprobs)]
    has_kl = ref_logprobs is not None and cfg.beta > 0
    loss, logprob, kl, clipped, entropy = FusedLinearGRPOFunction.apply(
        flat, weight, bias, token_ids.reshape(-1), adv, weights.reshape(-1), rows[0], rows[1] if has_kl else None,
        cfg)
    return (loss, logprob.view(b, t), kl.view(b, t) if has_kl else None, clipped.view(b, t),
            entropy.view(b, t) if cfg.return_entropy else None)
