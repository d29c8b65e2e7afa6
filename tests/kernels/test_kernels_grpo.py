"""Triton fused GRPO loss (under TRITON_INTERPRET=1) vs the torch reference and fp64 gold."""

import math

import pytest
import torch
from kernels_testutil import DTYPES, FWD_TOL, assert_grad_close, slow

from rft_sdk import kernels
from rft_sdk.kernels import reference as R


def _inputs(b, t, vocab, dtype, seed, *, per_token_adv=False, spread=0.5):
    g = torch.Generator().manual_seed(seed)
    logits = (torch.randn(b, t, vocab, generator=g) * 2).to(dtype)
    ids = torch.randint(0, vocab, (b, t), generator=g)
    true_lp = R.selective_log_softmax(logits, ids)
    # old/ref logprobs near the current ones, spread wide enough that ratios leave [0.8, 1.2]
    old = true_lp + spread * torch.randn(b, t, generator=g)
    ref = true_lp + spread * torch.randn(b, t, generator=g)
    adv = torch.randn((b, t) if per_token_adv else (b,), generator=g)
    mask = torch.rand(b, t, generator=g) > 0.3
    mask[:, 0] = True
    return logits, ids, adv, mask, old, ref


def _loss_and_grad(logits, *args, backend, gold=False, **kw):
    x = logits.detach().clone()
    x = (x.double() if gold else x).requires_grad_()
    fn = R.grpo_loss if backend == "reference" else kernels.grpo_loss
    extra = {} if backend == "reference" else {"backend": backend}
    out = fn(x, *args, **kw, **extra)
    out.loss.backward()
    return out, x.grad


@pytest.mark.parametrize("loss_type", kernels.LOSS_TYPES)
@pytest.mark.parametrize("beta, with_old, per_token_adv", [(0.0, True, False), (0.04, True, True), (0.04, False, False)])
def test_fp32_matches_gold(loss_type, beta, with_old, per_token_adv):
    logits, ids, adv, mask, old, ref = _inputs(3, 5, 123, torch.float32, 17, per_token_adv=per_token_adv)
    args = (ids, adv, mask, old if with_old else None, ref)
    kw = dict(beta=beta, loss_type=loss_type, temperature=0.9, epsilon_low=0.2, epsilon_high=0.28)
    tri, tri_grad = _loss_and_grad(logits, *args, backend="triton", block_v=32, **kw)
    gold, gold_grad = _loss_and_grad(logits, *args, backend="reference", gold=True, **kw)
    ref_out, ref_grad = _loss_and_grad(logits, *args, backend="torch", **kw)
    assert tri.loss.dtype == torch.float32 and tri.loss.dim() == 0
    torch.testing.assert_close(tri.loss.double(), gold.loss.detach(), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(tri.logprobs.double(), gold.logprobs, **FWD_TOL[torch.float32])
    assert_grad_close(tri_grad, gold_grad, torch.float32)
    assert_grad_close(ref_grad, gold_grad, torch.float32)
    assert tri.clip_ratio == pytest.approx(gold.clip_ratio) == pytest.approx(ref_out.clip_ratio)
    if with_old:
        assert tri.clip_ratio > 0  # the clipped branch is exercised
    if beta > 0:
        torch.testing.assert_close(tri.kl.double(), gold.kl, atol=1e-5, rtol=1e-5)
    else:
        assert tri.kl is None and gold.kl is None


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_odd_shape_each_dtype(dtype):
    logits, ids, adv, mask, old, ref = _inputs(2, 7, 1001, dtype, 23)
    args = (ids, adv, mask, old, ref)
    kw = dict(beta=0.1, loss_type="dapo", temperature=1.2)
    tri, tri_grad = _loss_and_grad(logits, *args, backend="triton", block_v=256, **kw)
    gold, gold_grad = _loss_and_grad(logits, *args, backend="reference", gold=True, **kw)
    assert tri_grad.dtype == dtype
    torch.testing.assert_close(tri.loss.double(), gold.loss.detach(), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(tri.logprobs.double(), gold.logprobs, **FWD_TOL[dtype])
    assert_grad_close(tri_grad, gold_grad, dtype)


def test_sliced_logits_and_max_completion_length():
    logits, ids, adv, mask, old, ref = _inputs(2, 6, 64, torch.float32, 29)
    padded = torch.cat([logits, torch.randn(2, 1, 64)], dim=1)  # [B, T+1, V]
    view = padded[:, :-1]  # what a causal-LM trainer passes: no copy on the Triton path
    args = (ids, adv, mask, old, None)
    kw = dict(loss_type="dr_grpo", max_completion_length=10)
    tri, tri_grad = _loss_and_grad(view, *args, backend="triton", block_v=16, **kw)
    gold, gold_grad = _loss_and_grad(logits, *args, backend="reference", gold=True, **kw)
    torch.testing.assert_close(tri.loss.double(), gold.loss.detach(), atol=1e-6, rtol=1e-5)
    assert_grad_close(tri_grad, gold_grad, torch.float32)


@pytest.mark.filterwarnings("ignore:All-NaN slice:RuntimeWarning")
def test_masked_tokens_add_exactly_zero():
    logits, ids, adv, mask, old, ref = _inputs(2, 4, 40, torch.float32, 31)
    mask[1, 2:] = False
    poisoned = logits.clone()
    poisoned[1, 2:] = math.nan  # garbage in padding positions
    tri, tri_grad = _loss_and_grad(poisoned, ids, adv, mask, old, ref, backend="triton", beta=0.1, block_v=16)
    gold, gold_grad = _loss_and_grad(logits, ids, adv, mask, old, ref, backend="reference", gold=True, beta=0.1)
    assert torch.isfinite(tri.loss)
    torch.testing.assert_close(tri.loss.double(), gold.loss.detach(), atol=1e-6, rtol=1e-5)
    assert (tri_grad[1, 2:] == 0).all()
    assert_grad_close(tri_grad, gold_grad, torch.float32)


def test_all_masked_gives_zero_loss_and_gradient():
    logits, ids, adv, mask, old, ref = _inputs(2, 3, 30, torch.float32, 37)
    out, grad = _loss_and_grad(logits, ids, adv, torch.zeros_like(mask), old, ref, backend="triton", beta=0.1)
    assert out.loss.item() == 0.0 and out.clip_ratio == 0.0
    assert (grad == 0).all()


def test_upstream_gradient_scales_and_inplace_backward():
    logits, ids, adv, mask, old, ref = _inputs(2, 3, 50, torch.bfloat16, 41)
    _, expected = _loss_and_grad(logits, ids, adv, mask, old, ref, backend="triton", block_v=16)
    leaf = logits.clone().requires_grad_()
    buf = leaf * 1
    out = kernels.grpo_loss(buf, ids, adv, mask, old, ref, backend="triton", block_v=16, inplace_backward=True)
    (3.0 * out.loss).backward()
    torch.testing.assert_close(leaf.grad.float(), 3.0 * expected.float(), atol=1e-2 * expected.abs().max().item(), rtol=0)
    assert torch.equal(buf.detach(), leaf.grad)  # the logits buffer holds the gradient


def test_on_policy_gradient_is_minus_weighted_advantage():
    # old=None: r == 1, dloss/dlp = -A·w, so dlogits = -A·w·(onehot - softmax)/T
    logits, ids, adv, mask, _, _ = _inputs(2, 4, 33, torch.float32, 43)
    out, grad = _loss_and_grad(logits, ids, adv, mask, None, None, backend="triton", temperature=0.5, block_v=16)
    w = kernels.loss_weights(mask, "grpo", None)
    probs = torch.softmax(logits.double() / 0.5, dim=-1)
    onehot = torch.nn.functional.one_hot(ids, 33).double()
    expected = (-adv.double()[:, None] * w.double())[..., None] * (onehot - probs) / 0.5
    torch.testing.assert_close(grad.double(), expected, atol=1e-6, rtol=1e-5)
    assert out.clip_ratio == 0.0


@slow
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_bigger_batch_slow(dtype):
    logits, ids, adv, mask, old, ref = _inputs(4, 32, 8_191, dtype, 47)
    args = (ids, adv, mask, old, ref)
    tri, tri_grad = _loss_and_grad(logits, *args, backend="triton", beta=0.04, loss_type="grpo", block_v=2048)
    gold, gold_grad = _loss_and_grad(logits, *args, backend="reference", gold=True, beta=0.04, loss_type="grpo")
    torch.testing.assert_close(tri.loss.double(), gold.loss.detach(), atol=1e-5, rtol=1e-5)
    assert_grad_close(tri_grad, gold_grad, dtype)


# Hand-computed, ε_low = 0.1, ε_high = 0.3 (asymmetric, DAPO "clip-higher"); loss_tok = -min(r·A, clip(r)·A):
#   r     A    loss_tok                 clipped  d loss_tok / d lp
#   0.85 -1    -min(-0.85, -0.9) = 0.9   yes      0
#   0.85 +1    -min(0.85, 0.9) = -0.85   no      -0.85
#   1.25 -1    1.25 (inside the range)   no       1.25
#   1.25 +1   -1.25                      no      -1.25
#   1.35 -1    -min(-1.35, -1.3) = 1.35  no       1.35
#   1.35 +1    -min(1.35, 1.3) = -1.3    yes      0
HAND = [(0.85, -1.0, 0.9, 0.0), (0.85, 1.0, -0.85, -0.85), (1.25, -1.0, 1.25, 1.25),
        (1.25, 1.0, -1.25, -1.25), (1.35, -1.0, 1.35, 1.35), (1.35, 1.0, -1.3, 0.0)]


@pytest.mark.parametrize("backend", ["triton", "torch"])
def test_asymmetric_clip_hand_values(backend):
    g = torch.Generator().manual_seed(53)
    logits = torch.randn(1, 6, 10, generator=g, dtype=torch.float64).float()
    ids = torch.randint(0, 10, (1, 6), generator=g)
    lp = torch.log_softmax(logits.double(), -1).gather(-1, ids[..., None])[..., 0]
    ratio = torch.tensor([[h[0] for h in HAND]], dtype=torch.float64)
    old = (lp - ratio.log()).float()
    adv = torch.tensor([[h[1] for h in HAND]])
    x = logits.clone().requires_grad_()
    out = kernels.grpo_loss(x, ids, adv, torch.ones(1, 6), old, epsilon_low=0.1, epsilon_high=0.3,
                            loss_type="dapo", backend=backend, block_v=8)
    out.loss.backward()
    assert out.loss.item() == pytest.approx(sum(h[2] for h in HAND) / 6, abs=1e-5)
    assert out.clip_ratio == pytest.approx(2 / 6)
    dlp = torch.tensor([[h[3] for h in HAND]], dtype=torch.float64) / 6
    onehot = torch.nn.functional.one_hot(ids, 10).double()
    expected = dlp[..., None] * (onehot - torch.softmax(logits.double(), -1))
    torch.testing.assert_close(x.grad.double(), expected, atol=1e-5, rtol=1e-4)
