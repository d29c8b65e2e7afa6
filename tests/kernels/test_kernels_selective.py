"""Triton selective log-softmax (under TRITON_INTERPRET=1) vs the torch reference and fp64 gold.

Small BLOCK_V values force several blocks per row with a ragged last block (V not a multiple
of BLOCK_V) while keeping the interpreter fast.
"""

import math

import pytest
import torch
from kernels_testutil import DTYPES, FWD_TOL, assert_grad_close, slow

from rft_sdk import kernels
from rft_sdk.kernels import reference as R


def _run(logits, ids, temperature, **kw):
    """(logprob, dlogits) for a random upstream gradient, on the Triton path."""
    x = logits.detach().clone().requires_grad_()
    lp = kernels.selective_log_softmax(x, ids, temperature, backend="triton", **kw)
    g = torch.linspace(-1.5, 2.0, lp.numel()).reshape(lp.shape)
    (lp * g).sum().backward()
    return lp.detach(), x.grad, g


def _gold(logits, ids, temperature, g):
    x = logits.detach().double().requires_grad_()
    lp = R.selective_log_softmax(x, ids, temperature)
    (lp * g.double()).sum().backward()
    return lp.detach(), x.grad


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("n, vocab, block_v, temperature", [(3, 123, 32, 1.0), (47, 5003, 1024, 0.7)])
def test_forward_backward_vs_gold(dtype, n, vocab, block_v, temperature):
    g = torch.Generator().manual_seed(n)
    logits = (torch.randn(n, vocab, generator=g) * 3).to(dtype)
    ids = torch.randint(0, vocab, (n,), generator=g)
    lp, grad, up = _run(logits, ids, temperature, block_v=block_v)
    gold_lp, gold_grad = _gold(logits, ids, temperature, up)
    assert lp.dtype == torch.float32 and grad.dtype == dtype
    torch.testing.assert_close(lp.double(), gold_lp, **FWD_TOL[dtype])
    assert_grad_close(grad, gold_grad, dtype)
    # and the torch reference (what the CPU path returns) agrees to the same tolerance
    torch.testing.assert_close(R.selective_log_softmax(logits, ids, temperature).double(), gold_lp, **FWD_TOL[dtype])


def test_non_contiguous_row_stride_and_3d_slice():
    g = torch.Generator().manual_seed(5)
    big = torch.randn(9, 140, generator=g)
    logits = big[::2, 3:126]  # row stride 280, V = 123, not contiguous
    ids = torch.randint(0, 123, (5,), generator=g)
    lp, grad, up = _run(logits, ids, 1.3, block_v=64)
    gold_lp, gold_grad = _gold(logits, ids, 1.3, up)
    torch.testing.assert_close(lp.double(), gold_lp, atol=2e-5, rtol=1e-5)
    assert_grad_close(grad, gold_grad, torch.float32)

    seq = torch.randn(2, 6, 77, generator=g, dtype=torch.float64).to(torch.bfloat16)
    sliced = seq[:, :-1]  # [B, T-1, V] view with a batch stride of 6*77: read in place
    ids3 = torch.randint(0, 77, (2, 5), generator=g)
    lp3, grad3, up3 = _run(sliced, ids3, 1.0, block_v=32)
    gold3, gold_grad3 = _gold(sliced, ids3, 1.0, up3)
    assert lp3.shape == (2, 5)
    torch.testing.assert_close(lp3.double(), gold3, atol=2e-5, rtol=1e-5)
    assert_grad_close(grad3, gold_grad3, torch.bfloat16)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_extreme_logits_and_neg_inf(dtype):
    big = {torch.float32: 1e30, torch.bfloat16: 1e30, torch.float16: 6e4}[dtype]
    logits = torch.randn(4, 100, generator=torch.Generator().manual_seed(7)).to(dtype)
    logits[0, :] = -big            # all entries hugely negative but finite
    logits[0, 17] = -big / 2
    logits[1, 40:] = -math.inf     # a -inf tail, including whole blocks
    logits[2, 5] = big             # one dominant entry
    logits[3, :64] = -math.inf     # the first whole block is -inf (online max starts at -inf)
    ids = torch.tensor([17, 3, 5, 70])
    lp, grad, up = _run(logits, ids, 1.0, block_v=32)
    gold_lp, gold_grad = _gold(logits, ids, 1.0, up)
    assert torch.isfinite(lp).all() and torch.isfinite(grad).all()
    torch.testing.assert_close(lp.double(), gold_lp, **FWD_TOL[dtype])
    assert_grad_close(grad, gold_grad, dtype)
    assert (grad[1, 40:] == 0).all() and (grad[3, :64] == 0).all()


def test_neg_inf_target_gives_neg_inf_logprob():
    logits = torch.randn(2, 50)
    logits[0, 9] = -math.inf
    ids = torch.tensor([9, 1])
    lp, grad, up = _run(logits, ids, 1.0, block_v=16)
    gold_lp, gold_grad = _gold(logits, ids, 1.0, up)
    assert lp[0].item() == -math.inf and math.isfinite(lp[1].item())
    torch.testing.assert_close(grad.double(), gold_grad, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_inplace_backward_writes_gradient_into_logits(dtype):
    g = torch.Generator().manual_seed(11)
    base = (torch.randn(6, 99, generator=g) * 2).to(dtype)
    ids = torch.randint(0, 99, (6,), generator=g)
    _, expected, _ = _run(base, ids, 0.9, block_v=32)

    leaf = base.clone().requires_grad_()
    buf = leaf * 1  # non-leaf "logits" buffer, as produced by an lm_head
    lp = kernels.selective_log_softmax(buf, ids, 0.9, backend="triton", block_v=32, inplace_backward=True)
    (lp * torch.linspace(-1.5, 2.0, 6)).sum().backward()
    assert torch.equal(leaf.grad, expected)
    assert torch.equal(buf.detach(), expected)  # the buffer now holds the gradient


def test_auto_backend_on_cpu_matches_triton():
    logits = torch.randn(4, 37)
    ids = torch.tensor([0, 36, 5, 18])
    auto = kernels.selective_log_softmax(logits, ids)  # CPU tensors: torch reference
    tri = kernels.selective_log_softmax(logits, ids, backend="triton")
    torch.testing.assert_close(auto, tri, atol=1e-5, rtol=1e-5)


@slow
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_large_vocab_slow(dtype):
    g = torch.Generator().manual_seed(13)
    logits = (torch.randn(64, 32_768 + 77, generator=g) * 4).to(dtype)
    ids = torch.randint(0, logits.shape[1], (64,), generator=g)
    lp, grad, up = _run(logits, ids, 1.0, block_v=8192)  # the GPU default block: 5 blocks, ragged tail
    gold_lp, gold_grad = _gold(logits, ids, 1.0, up)
    torch.testing.assert_close(lp.double(), gold_lp, atol=1e-4, rtol=1e-5)
    assert_grad_close(grad, gold_grad, dtype)
