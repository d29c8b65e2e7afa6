"""Triton selective log-softmax: ``logprob[n] = x[n, id[n]]/T - logsumexp(x[n, :]/T)``.

Layout (Liger-Kernel style): private ``@triton.jit`` kernels → typed host launchers →
``torch.autograd.Function``. This module imports triton at the top; :mod:`kernels`
imports it lazily, only when the Triton path is taken.

Rows are addressed as ``row = outer * inner + i`` → ``outer * stride_outer + i * stride_inner``
so both ``[N, V]`` with any row stride and ``[B, T, V]`` slices such as ``logits[:, :-1]``
are read in place, without a copy. Each program handles one row in a single pass over V
with an online max / sum (Milakov & Gimelshein 2018, "Online normalizer calculation for
softmax"); the backward recomputes ``softmax = exp(x/T - lse)`` block by block from the saved
log-sum-exp, so no ``[N, V]`` fp32 temporary is ever made.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._backend import interpreter_enabled

_MAX_BLOCK_V = 8192
_INTERPRET_MAX_BLOCK_V = 65536


@triton.jit
def row_logsumexp(base, stride_v, V, inv_temp, BLOCK_V: tl.constexpr):
    """``logsumexp(x[0:V] * inv_temp)`` of one row in one pass (online max / sum), fp32."""
    m = float("-inf")
    d = 0.0
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        x = tl.load(base + cols * stride_v, mask=cols < V, other=float("-inf")).to(tl.float32) * inv_temp
        m_new = tl.maximum(m, tl.max(x, axis=0))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # all -inf so far: avoid -inf - -inf
        d = d * tl.exp(m - m_safe) + tl.sum(tl.exp(x - m_safe), axis=0)
        m = m_new
    return m + tl.log(d)


@triton.jit
def _lse_fwd_kernel(
    logits_ptr, ids_ptr, logprob_ptr, lse_ptr,
    inner, stride_outer, stride_inner, stride_v, V, inv_temp,
    BLOCK_V: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    outer = row // inner
    base = logits_ptr + outer * stride_outer + (row - outer * inner) * stride_inner
    tok = tl.load(ids_ptr + row).to(tl.int64)
    lse = row_logsumexp(base, stride_v, V, inv_temp, BLOCK_V)
    x_tok = tl.load(base + tok * stride_v).to(tl.float32) * inv_temp
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


def launch_config(vocab: int, block_v: int | None, num_warps: int | None) -> tuple[int, int]:
    """``(BLOCK_V, num_warps)``: a power of two ≤ 8192 on GPU (≤ 65536 under the interpreter)."""
    if block_v is None:
        cap = _INTERPRET_MAX_BLOCK_V if interpreter_enabled() else _MAX_BLOCK_V
        block_v = min(cap, triton.next_power_of_2(vocab))
    if block_v <= 0 or block_v & (block_v - 1):
        raise ValueError(f"block_v must be a positive power of two, got {block_v}")
    if num_warps is None:
        num_warps = 16 if block_v >= 8192 else 8 if block_v >= 2048 else 4
    return block_v, num_warps


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
    block, warps = launch_config(vocab, block_v, num_warps)
    _lse_fwd_kernel[(rows,)](
        logits, ids, logprob, lse, inner, s_outer, s_inner, s_v, vocab, 1.0 / float(temperature),
        BLOCK_V=block, num_warps=warps,
    )
    return logprob, lse


def lse_backward(
    logits: torch.Tensor, token_ids: torch.Tensor, lse: torch.Tensor, scale: torch.Tensor, temperature: float,
    *, inplace: bool = False, block_v: int | None = None, num_warps: int | None = None,
) -> torch.Tensor:
    """Launch the backward kernel: ``dlogits = scale[..., None] · (onehot − softmax(logits/T)) / T``.

    ``scale`` has the ids' shape (the upstream gradient w.r.t. each logprob). With ``inplace=True``
    the gradient overwrites ``logits`` (same strides) and ``logits`` is returned.
    """
    vocab = logits.shape[-1]
    grad = logits if inplace else torch.empty(logits.shape, dtype=logits.dtype, device=logits.device)
    rows = token_ids.numel()
    if rows == 0:
        return grad
    inner, s_outer, s_inner, s_v = row_layout(logits)
    _, g_outer, g_inner, g_v = row_layout(grad)
    block, warps = launch_config(vocab, block_v, num_warps)
    _lse_bwd_kernel[(rows,)](
        logits, grad, token_ids.contiguous(), lse.contiguous(), scale.to(torch.float32).contiguous(),
        inner, s_outer, s_inner, s_v, g_outer, g_inner, g_v, vocab, 1.0 / float(temperature),
        BLOCK_V=block, num_warps=warps,
    )
    return grad


class SelectiveLogSoftmaxFunction(torch.autograd.Function):
    """Autograd wrapper: ``logits[N, V]`` (or ``[B, T, V]``), ``token_ids`` → logprob fp32 (ids' shape)."""

    @staticmethod
    def forward(ctx, logits, token_ids, temperature, inplace_backward, block_v, num_warps):
        logprob, lse = lse_forward(logits, token_ids, temperature, block_v=block_v, num_warps=num_warps)
        ctx.save_for_backward(logits, token_ids, lse)
        ctx.config = (temperature, inplace_backward, block_v, num_warps)
        return logprob

    @staticmethod
    def backward(ctx, grad_logprob):
        logits, token_ids, lse = ctx.saved_tensors
        temperature, inplace, block_v, num_warps = ctx.config
        grad = lse_backward(logits, token_ids, lse, grad_logprob, temperature,
                            inplace=inplace, block_v=block_v, num_warps=num_warps)
        return grad, None, None, None, None, None


def selective_log_softmax_triton(
    logits: torch.Tensor, token_ids: torch.Tensor, temperature: float = 1.0,
    *, inplace_backward: bool = False, block_v: int | None = None, num_warps: int | None = None,
) -> torch.Tensor:
    """Triton path of :func:`kernels.selective_log_softmax` (inputs already validated)."""
    return SelectiveLogSoftmaxFunction.apply(logits, token_ids, float(temperature), inplace_backward, block_v, num_warps)
