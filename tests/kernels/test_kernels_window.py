"""Full-logits window (``logits_offset``), the one-gradient-buffer rule, in-place gradients, entropy, no syncs.

The anchor measured 2× Liger's memory because the API took the aligned view ``logits[:, :-1]``:
autograd then allocates a full-size zero gradient and copies the view's gradient into it. With
``logits_offset`` the kernel's gradient *is* the logits-shaped buffer; with ``inplace_backward``
it is the logits tensor itself. Checked by value (offset path == view path), by storage
identity, and by counting allocations of logits size (CPU profiler here, CUDA allocator on GPU).
"""

import math

import pytest
import torch
from kernels_testutil import FWD_TOL, assert_grad_close, big_allocations

from rft_sdk import kernels
from rft_sdk.kernels import reference as R


def _setup(b, t, extra, vocab, dtype, seed):
    """``full[B, extra + T + 1, V]`` (prompt rows + completion rows + last row) and GRPO inputs for T tokens."""
    g = torch.Generator().manual_seed(seed)
    full = (torch.randn(b, extra + t + 1, vocab, generator=g) * 2).to(dtype)
    ids = torch.randint(0, vocab, (b, t), generator=g)
    lp = R.selective_log_softmax(full[:, extra:extra + t], ids)
    old, ref = lp + 0.4 * torch.randn(b, t, generator=g), lp + 0.4 * torch.randn(b, t, generator=g)
    adv = torch.randn(b, generator=g)
    mask = torch.rand(b, t, generator=g) > 0.25
    mask[:, 0] = True
    return full, ids, adv, mask, old, ref


@pytest.mark.parametrize("backend", ["triton", "torch"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_offset_path_equals_view_path(backend, dtype):
    full, ids, adv, mask, old, ref = _setup(2, 5, 2, 97, dtype, 1)
    kw = dict(beta=0.04, loss_type="dapo", temperature=0.9, backend=backend, return_entropy=True)
    if backend == "triton":
        kw["block_v"] = 32
    x_view, x_full = full.clone().requires_grad_(), full.clone().requires_grad_()
    by_view = kernels.grpo_loss(x_view[:, 2:7], ids, adv, mask, old, ref, **kw)
    by_offset = kernels.grpo_loss(x_full, ids, adv, mask, old, ref, logits_offset=2, **kw)
    by_view.loss.backward()
    by_offset.loss.backward()
    assert torch.equal(by_view.loss, by_offset.loss) and torch.equal(by_view.logprobs, by_offset.logprobs)
    assert torch.equal(by_view.entropy, by_offset.entropy) and torch.equal(by_view.kl, by_offset.kl)
    assert x_full.grad.shape == full.shape and torch.equal(x_view.grad, x_full.grad)
    assert (x_full.grad[:, :2] == 0).all() and (x_full.grad[:, 7:] == 0).all()
    assert (x_full.grad[:, 2:7].abs().amax(-1)[mask] > 0).all()  # every completion row got a gradient


def test_selective_offset_matches_fp64_gold():
    full, ids, _, _, _, _ = _setup(3, 4, 1, 61, torch.float16, 2)
    x = full.clone().requires_grad_()
    lp = kernels.selective_log_softmax(x, ids, 1.3, logits_offset=1, backend="triton", block_v=16)
    up = torch.linspace(-1.0, 2.0, lp.numel()).reshape(lp.shape)
    (lp * up).sum().backward()
    gold_x = full.double().requires_grad_()
    gold = R.selective_log_softmax(gold_x[:, 1:5], ids, 1.3)
    (gold * up.double()).sum().backward()
    torch.testing.assert_close(lp.double(), gold.detach(), **FWD_TOL[torch.float16])
    assert_grad_close(x.grad, gold_x.grad, torch.float16)


def test_gradient_is_the_only_logits_sized_allocation():
    full, ids, adv, mask, old, ref = _setup(2, 6, 0, 400, torch.float32, 3)  # [2, 7, 400]: view is 6/7 of it
    window_bytes = 2 * 6 * 400 * 4

    def backward_allocs(logits_for_loss, leaf, **kw):
        out = kernels.grpo_loss(logits_for_loss, ids, adv, mask, old, ref, beta=0.1, backend="triton", **kw)
        return big_allocations(lambda: torch.autograd.grad(out.loss, leaf), window_bytes)

    x = full.clone().requires_grad_()
    view_allocs = backward_allocs(x[:, :-1], x)
    assert len(view_allocs) == 2  # the anchor's problem: the view's gradient + a full-size zero gradient
    x = full.clone().requires_grad_()
    offset_allocs = backward_allocs(x, x, logits_offset=0)
    assert [size for _, size in offset_allocs] == [full.numel() * 4]  # exactly one buffer, logits-sized
    leaf = full.clone().requires_grad_()
    buf = leaf * 1  # a non-leaf logits tensor, as an LM head produces
    assert backward_allocs(buf, buf, logits_offset=0, inplace_backward=True) == []


def test_inplace_gradient_shares_storage_and_equals_out_of_place():
    full, ids, adv, mask, old, ref = _setup(2, 4, 1, 80, torch.bfloat16, 4)
    x = full.clone().requires_grad_()
    out = kernels.grpo_loss(x, ids, adv, mask, old, ref, logits_offset=1, backend="triton", block_v=32)
    (expected,) = torch.autograd.grad(out.loss, x)

    buf = full.clone().requires_grad_() * 1
    out = kernels.grpo_loss(buf, ids, adv, mask, old, ref, logits_offset=1, backend="triton", block_v=32,
                            inplace_backward=True)
    (grad,) = torch.autograd.grad(out.loss, buf)
    assert grad.data_ptr() == buf.data_ptr() and grad.shape == buf.shape and grad.stride() == buf.stride()
    assert torch.equal(grad, expected)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA (the CPU stand-in is the test above)")
def test_cuda_extra_memory_is_one_gradient_buffer():
    b, t, vocab = 4, 256, 32_000
    full = torch.randn(b, t + 1, vocab, device="cuda", dtype=torch.bfloat16)
    ids = torch.randint(0, vocab, (b, t), device="cuda")
    adv, mask = torch.randn(b, device="cuda"), torch.ones(b, t, device="cuda")
    grad_bytes = full.numel() * full.element_size()
    for inplace, budget in ((False, grad_bytes), (True, 0)):
        x = full.clone().requires_grad_() * 1
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        out = kernels.grpo_loss(x, ids, adv, mask, logits_offset=0, inplace_backward=inplace)
        torch.autograd.grad(out.loss, x)
        extra = torch.cuda.max_memory_allocated() - base
        assert extra <= budget + 64 * b * t * 4 + 2**20, (inplace, extra, grad_bytes)  # + O(N) fp32 vectors


@pytest.mark.parametrize("backend", ["triton", "torch"])
def test_entropy_matches_fp64_gold_with_neg_inf_and_temperature(backend):
    full, ids, adv, mask, old, ref = _setup(2, 3, 0, 150, torch.float32, 5)
    full[0, 0, 40:] = -math.inf  # a -inf tail, whole blocks of it
    full[1, 1, :70] = -math.inf  # leading -inf blocks: the online max starts at -inf
    full[1, 2, 3] = 60.0  # one dominant entry: entropy ~ 0
    ids[0, 0], ids[1, 1] = 5, 100
    out = kernels.grpo_loss(full, ids, adv, mask, old, ref, beta=0.1, temperature=0.7, logits_offset=0,
                            return_entropy=True, backend=backend, **({"block_v": 32} if backend == "triton" else {}))
    gold = R.token_entropy(full[:, :3].double(), 0.7)
    p = torch.softmax(full[0, 2].double() / 0.7, -1)
    assert gold[0, 2].item() == pytest.approx(-(p * p.log()).sum().item())  # the gold is the textbook formula
    assert out.entropy.dtype == torch.float32 and not out.entropy.requires_grad
    torch.testing.assert_close(out.entropy.double(), gold, atol=2e-5, rtol=1e-5)
    assert out.entropy[1, 2].item() < 1e-6


def test_loss_path_returns_device_tensors_not_floats():
    full, ids, adv, mask, old, ref = _setup(2, 3, 0, 40, torch.float32, 6)
    out = kernels.grpo_loss(full, ids, adv, mask, old, ref, beta=0.1, backend="triton", logits_offset=0)
    assert isinstance(out.clip_ratio, torch.Tensor) and out.clip_ratio.dim() == 0
    gold = R.grpo_loss(full[:, :3], ids, adv, mask, old, ref, beta=0.1)
    assert float(out.clip_ratio) == pytest.approx(float(gold.clip_ratio))  # what the trainer reads
    assert out.entropy is None


def test_unchecked_bad_ids_give_nan_not_a_wild_read():
    logits = torch.randn(1, 3, 20)
    ids = torch.tensor([[0, 25, -1]])
    with pytest.raises(ValueError, match="token_ids must lie"):
        kernels.selective_log_softmax(logits, ids, backend="triton")  # CPU tensors: checked by default
    lp = kernels.selective_log_softmax(logits, ids, backend="triton", check_ids=False, block_v=8)
    assert math.isfinite(lp[0, 0].item()) and math.isnan(lp[0, 1].item()) and math.isnan(lp[0, 2].item())
    out = kernels.grpo_loss(logits, ids, torch.ones(1), torch.ones(1, 3), backend="triton", check_ids=False)
    assert math.isnan(out.loss.item())


@pytest.mark.parametrize("call", [
    lambda x, i: kernels.grpo_loss(x, i, torch.ones(2), torch.ones(2, 3), logits_offset=3),  # L=5 < 3+3
    lambda x, i: kernels.grpo_loss(x, i, torch.ones(2), torch.ones(2, 3), logits_offset=-1),
    lambda x, i: kernels.grpo_loss(x, i, torch.ones(2), torch.ones(2, 3)),  # longer logits need an offset
    lambda x, i: kernels.selective_log_softmax(x[:, 0], i[:, 0], logits_offset=0),  # offset needs 3-D
    lambda x, i: kernels.selective_log_softmax(x, i, logits_offset=True),
])
def test_bad_offset_raises(call):
    with pytest.raises(ValueError, match="logits_offset|token_ids shape"):
        call(torch.randn(2, 5, 11), torch.randint(0, 11, (2, 3)))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA (sync debug mode)")
def test_cuda_loss_paths_never_synchronise():
    b, t, vocab, h = 2, 64, 4096, 64
    logits = torch.randn(b, t + 1, vocab, device="cuda", requires_grad=True)
    ids = torch.randint(0, vocab, (b, t), device="cuda")
    adv, mask = torch.randn(b, device="cuda"), torch.ones(b, t, device="cuda")
    lp = torch.randn(b, t, device="cuda") - 8
    hidden = torch.randn(b, t, h, device="cuda", requires_grad=True)
    weight = torch.randn(vocab, h, device="cuda", requires_grad=True)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        out = kernels.grpo_loss(logits, ids, adv, mask, lp, lp, beta=0.04, logits_offset=0, return_entropy=True)
        out.loss.backward()
        fused = kernels.fused_linear_grpo_loss(hidden, weight, ids, adv, mask, lp, lp, beta=0.04, chunk_size=32)
        fused.loss.backward()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert torch.isfinite(out.loss) and torch.isfinite(fused.loss)
