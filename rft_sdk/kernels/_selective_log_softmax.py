"""Triton selective log-softmax: ``logprob[n] = x[n, id[n]]/T - logsumexp(x[n, :]/T)``.

Layout (Liger-Kernel style): private ``@triton.jit`` kernels → typed host launchers →
``torch.autograd.Function``. This module imports triton at the top; :mod:`rft_sdk.kernels`
imports it lazily, only when the Triton path is taken.

Rows are addressed as ``row = outer * inner + i`` → ``outer * stride_outer + i * stride_inner``
so both ``[N, V]`` with any row stride and ``[B, T, V]`` windows of a longer ``[B, L, V]``
tensor are read in place, without a copy. Each program handles one row in a single pass over V
with an online max / sum (Milakov & Gimelshein 2018, "Online normalizer calculation for
softmax"), optionally also the row's entropy from the same running statistics; the backward
recomputes ``softmax = exp(x/T - lse)`` block by block from the saved log-sum-exp, so no
``[N, V]`` fp32 temporary is ever made.

Gradient buffer: the backward returns a gradient shaped like the tensor the caller passed
(the *whole* ``[B, L, V]`` logits when a ``logits_offset`` window was used), so autograd never
builds a second full-size zero gradient to scatter a view's gradient into; with
``inplace=True`` that buffer is the logits tensor itself (no allocation at all).

Token ids outside ``[0, V)`` are never dereferenced: their logprob is NaN (no host sync needed
to detect them; the public API checks the range on CPU tensors, see ``check_ids``).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._launch import launch_config


@triton.jit
def row_stats(base, stride_v, V, inv_temp, BLOCK_V: tl.constexpr, WITH_ENTROPY: tl.constexpr):
    """``(logsumexp(x/T), entropy(softmax(x/T)))`` of one row in one pass, fp32.

    Running max ``m``, ``d = Σ exp(x - m)`` and ``s = Σ exp(x - m)·(x - m)``, all rescaled when
    ``m`` grows; then ``lse = m + log d`` and ``H = -Σ p log p = log d - s/d``. Without
    ``WITH_ENTROPY`` the ``s`` terms are compiled out (the returned entropy is then meaningless).
    """
    m = float("-inf")
    d = 0.0
    s = 0.0
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        x = tl.load(base + cols * stride_v, mask=cols < V, other=float("-inf")).to(tl.float32) * inv_temp
        m_new = tl.maximum(m, tl.max(x, axis=0))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # all -inf so far: avoid -inf - -inf
        alpha = tl.exp(m - m_safe)
        e = tl.exp(x - m_safe)
        if WITH_ENTROPY:
            shift = tl.where(m == float("-inf"), 0.0, m - m_safe)  # d == s == 0 while m == -inf
            xs = tl.where(x == float("-inf"), 0.0, x - m_safe)  # 0·(-inf) would be NaN
            s = alpha * (s + d * shift) + tl.sum(e * xs, axis=0)
        d = d * alpha + tl.sum(e, axis=0)
        m = m_new
    log_d = tl.log(d)
    return m + log_d, log_d - s / d


@triton.jit
def target_logit(base, ids_ptr, row, stride_v, V, inv_temp):
    """``(x[id]/T, id)`` of one row; NaN for an id outside ``[0, V)`` (never dereferenced)."""
    tok = tl.load(ids_ptr + row).to(tl.int64)
    valid = (tok >= 0) & (tok < V)
    x_tok = tl.load(base + tok * stride_v, mask=valid, other=float("nan")).to(tl.float32) * inv_temp
    return x_tok, tok


@triton.jit
def _lse_fwd_kernel(
    logits_ptr, ids_ptr, logprob_ptr, lse_ptr,
    inner, stride_outer, stride_inner, stride_v, V, inv_temp,
    BLOCK_V: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    outer = row // inner
    base = logits_ptr + outer * stride_outer + (row - outer * inner) * stride_inner
    lse, _ = row_stats(base, stride_v, V, inv_temp, BLOCK_V, False)
    x_tok, _ = target_logit(base, ids_ptr, row, stride_v, V, inv_temp)
    tl.store(lse_ptr + row, lse)
    tl.store(logprob_ptr + row, x_tok - lse)


@triton.jit
def _lse_bwd_kernel(
    logits_ptr, grad_ptr, ids_ptr, lse_ptr, scale_ptr,
    inner, stride_outer, stride_inner, stride_v,
    g_stride_outer, g_stride_inner, g_stride_v, V, inv_temp,
    BLOCK_V: tl.constexpr,
):
    # grad[n, v] = scale[n] * (onehot(v == id[n]) - softmax(x[n]/T)[v]) / T
    row = tl.program_id(0).to(tl.int64)
    outer = row // inner
    i = row - outer * inner
    base = logits_ptr + outer * stride_outer + i * stride_inner
    gbase = grad_ptr + outer * g_stride_outer + i * g_stride_inner
    tok = tl.load(ids_ptr + row).to(tl.int64)
    scale = tl.load(scale_ptr + row)
    coef = scale * inv_temp
    # rows with zero weight (padding) skip the logits read and write exact zeros, even if
    # their logits (hence lse) are non-finite
    read_end = tl.where(scale != 0.0, V, 0)
    lse = tl.where(scale != 0.0, tl.load(lse_ptr + row), 0.0)
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        in_row = cols < V
        x = tl.load(base + cols * stride_v, mask=cols < read_end, other=float("-inf")).to(tl.float32)
        p = tl.exp(x * inv_temp - lse)
        g = tl.where(cols == tok, coef * (1.0 - p), -coef * p)
        tl.store(gbase + cols * g_stride_v, g.to(grad_ptr.dtype.element_ty), mask=in_row)


def row_layout(logits: torch.Tensor) -> tuple[int, int, int, int]:
    """``(inner, stride_outer, stride_inner, stride_v)`` of a ``[N, V]`` or ``[B, T, V]`` tensor."""
    if logits.dim() == 2:
        return max(1, logits.shape[0]), 0, logits.stride(0), logits.stride(1)
    if logits.dim() == 3:
        return max(1, logits.shape[1]), logits.stride(0), logits.stride(1), logits.stride(2)
    raise ValueError(f"logits must be 2-D or 3-D, got shape {tuple(logits.shape)}")


def window(logits: torch.Tensor, offset: int, length: int) -> torch.Tensor:
    """The ``[B, length, V]`` rows ``offset .. offset+length`` of ``[B, L, V]`` logits (a view); 2-D: as is."""
    return logits if logits.dim() == 2 else logits.narrow(1, offset, length)


def lse_forward(
    logits: torch.Tensor, token_ids: torch.Tensor, temperature: float,
    *, block_v: int | None = None, num_warps: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Launch the forward kernel. ``logits[N, V]`` or ``[B, T, V]`` → ``(logprob, lse)`` fp32, shaped like ids."""
    vocab = logits.shape[-1]
    ids = token_ids.contiguous()
    logprob = torch.empty(ids.shape, dtype=torch.float32, device=logits.device)
    lse = torch.empty_like(logprob)
    rows = ids.numel()
    if rows == 0:
        return logprob, lse
    inner, s_outer, s_inner, s_v = row_layout(logits)
    block, warps, stages = launch_config(vocab, logits.element_size(), "forward", block_v, num_warps)
    _lse_fwd_kernel[(rows,)](
        logits, ids, logprob, lse, inner, s_outer, s_inner, s_v, vocab, 1.0 / float(temperature),
        BLOCK_V=block, num_warps=warps, num_stages=stages,
    )
    return logprob, lse


def lse_backward(
    logits: torch.Tensor, token_ids: torch.Tensor, lse: torch.Tensor, scale: torch.Tensor, temperature: float,
    *, offset: int = 0, inplace: bool = False, block_v: int | None = None, num_warps: int | None = None,
) -> torch.Tensor:
    """Launch the backward kernel: ``dlogits = scale[..., None] · (onehot − softmax(logits/T)) / T``.

    ``logits`` is the tensor the caller passed: ``[N, V]``, or ``[B, L, V]`` whose rows
    ``offset .. offset+T`` score ``token_ids[B, T]``. The gradient has ``logits``' shape; rows
    outside the window are zero. ``scale`` has the ids' shape (the upstream gradient w.r.t. each
    logprob). With ``inplace=True`` the gradient overwrites ``logits`` (no allocation) and
    ``logits`` is returned; otherwise exactly one buffer of ``logits``' shape is allocated.
    """
    vocab = logits.shape[-1]
    grad = logits if inplace else torch.empty(logits.shape, dtype=logits.dtype, device=logits.device)
    if logits.dim() == 3:
        length = token_ids.shape[1]
        grad[:, :offset].zero_()
        grad[:, offset + length:].zero_()
    rows = token_ids.numel()
    if rows == 0:
        return grad
    src, dst = window(logits, offset, token_ids.shape[-1]), window(grad, offset, token_ids.shape[-1])
    inner, s_outer, s_inner, s_v = row_layout(src)
    _, g_outer, g_inner, g_v = row_layout(dst)
    block, warps, stages = launch_config(vocab, logits.element_size(), "backward", block_v, num_warps)
    _lse_bwd_kernel[(rows,)](
        src, dst, token_ids.contiguous(), lse.contiguous(), scale.to(torch.float32).contiguous(),
        inner, s_outer, s_inner, s_v, g_outer, g_inner, g_v, vocab, 1.0 / float(temperature),
        BLOCK_V=block, num_warps=warps, num_stages=stages,
    )
    return grad


class SelectiveLogSoftmaxFunction(torch.autograd.Function):
    """Autograd wrapper: ``logits[N, V]`` (or ``[B, L, V]`` + offset), ``token_ids`` → logprob fp32 (ids' shape)."""

    @staticmethod
    def forward(ctx, logits, token_ids, temperature, offset, inplace_backward, block_v, num_warps):
        logprob, lse = lse_forward(window(logits, offset, token_ids.shape[-1]), token_ids, temperature,
                                   block_v=block_v, num_warps=num_warps)
        ctx.save_for_backward(logits, token_ids, lse)
        ctx.config = (temperature, offset, inplace_backward, block_v, num_warps)
        return logprob

    @staticmethod
    def backward(ctx, grad_logprob):
        logits, token_ids, lse = ctx.saved_tensors
        temperature, offset, inplace, block_v, num_warps = ctx.config
        grad = lse_backward(logits, token_ids, lse, grad_logprob, temperature,
                            offset=offset, inplace=inplace, block_v=block_v, num_warps=num_warps)
        return grad, None, None, None, None, None, None


def selective_log_softmax_triton(
    logits: torch.Tensor, token_ids: torch.Tensor, temperature: float = 1.0,
    *, logits_offset: int = 0, inplace_backward: bool = False, block_v: int | None = None,
    num_warps: int | None = None,
) -> torch.Tensor:
    """Triton path of :func:`rft_sdk.kernels.selective_log_softmax` (inputs already validated)."""
    return SelectiveLogSoftmaxFunction.apply(
        logits, token_ids, float(temperature), int(logits_offset), inplace_backward, block_v, num_warps)
