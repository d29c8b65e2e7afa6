"""Dispatch (Triton only for CUDA tensors) and finite-difference checks of the reference gradients.

The Triton kernels are tested against the torch reference's autograd gradients; here the
reference's gradients themselves are checked against central finite differences in float64
(``torch.autograd.gradcheck``), so the oracle does not just agree with itself.
"""

import math

import pytest
import torch
from kernels_testutil import FWD_TOL, assert_grad_close

from rft_sdk import kernels
from rft_sdk.kernels import _api
from rft_sdk.kernels import reference as R
from rft_sdk.kernels._backend import resolve_backend


def test_auto_uses_reference_on_cpu_even_under_the_interpreter(monkeypatch):
    assert kernels.interpreter_enabled()  # conftest sets TRITON_INTERPRET=1
    assert resolve_backend("auto", torch.device("cpu")) == "torch"

    def no_triton(name):
        raise AssertionError(f"Triton module {name} loaded for CPU tensors")

    monkeypatch.setattr(_api, "triton_module", no_triton)
    x = torch.randn(2, 3, 11)
    ids = torch.randint(0, 11, (2, 3))
    lp = kernels.selective_log_softmax(x, ids)
    torch.testing.assert_close(lp, torch.log_softmax(x, -1).gather(-1, ids[..., None])[..., 0])
    out = kernels.grpo_loss(x, ids, torch.ones(2), torch.ones(2, 3))
    assert out.loss.item() == pytest.approx(-1.0)


@pytest.mark.skipif(not kernels.triton_available(), reason="triton not installed")
def test_auto_picks_triton_for_cuda_tensors():
    assert resolve_backend("auto", torch.device("cuda")) == "triton"
    assert resolve_backend("auto", torch.device("cuda", 0)) == "triton"
    assert resolve_backend("torch", torch.device("cuda")) == "torch"


def test_reference_selective_gradient_matches_finite_differences():
    g = torch.Generator().manual_seed(61)
    x = (torch.randn(3, 9, generator=g, dtype=torch.float64) * 2).requires_grad_()
    ids = torch.tensor([0, 4, 8])
    assert torch.autograd.gradcheck(lambda t: R.selective_log_softmax(t, ids, 0.7), (x,))


@pytest.mark.parametrize("loss_type", kernels.LOSS_TYPES)
def test_reference_grpo_gradient_matches_finite_differences(loss_type):
    g = torch.Generator().manual_seed(67)
    b, t, v = 2, 4, 7
    x = (torch.randn(b, t, v, generator=g, dtype=torch.float64) * 2).requires_grad_()
    ids = torch.randint(0, v, (b, t), generator=g)
    lp = R.selective_log_softmax(x.detach(), ids, 1.3)
    # ratios chosen away from the clip boundaries (finite differences need a smooth neighbourhood):
    # 0.5 and 1.6 are clipped or not depending on the sign of A, 0.95 / 1.05 are inside
    log_r = torch.tensor([[0.5, 0.95, 1.05, 1.6], [1.6, 1.05, 0.95, 0.5]], dtype=torch.float64).log()
    old = lp - log_r
    ref = lp + 0.3 * torch.randn(b, t, generator=g, dtype=torch.float64)
    adv = torch.tensor([[1.0, -1.0, 0.5, -0.5], [-1.0, 1.0, -0.5, 0.5]], dtype=torch.float64)
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]])

    def loss(t_):
        return R.grpo_loss(t_, ids, adv, mask, old, ref, temperature=1.3, beta=0.2, loss_type=loss_type,
                           epsilon_low=0.2, epsilon_high=0.28).loss

    assert torch.autograd.gradcheck(loss, (x,))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_triton_neg_inf_with_temperature(dtype):
    g = torch.Generator().manual_seed(71)
    logits = (torch.randn(5, 150, generator=g) * 3).to(dtype)
    logits[0, 70:] = -math.inf
    logits[1, :64] = -math.inf
    logits[2, ::3] = -math.inf
    ids = torch.tensor([3, 100, 4, 149, 0])
    up = torch.linspace(-1.0, 1.5, 5)
    x = logits.clone().requires_grad_()
    lp = kernels.selective_log_softmax(x, ids, 0.6, backend="triton", block_v=32)
    (lp * up).sum().backward()
    gold_x = logits.double().requires_grad_()
    gold = R.selective_log_softmax(gold_x, ids, 0.6)
    (gold * up.double()).sum().backward()
    torch.testing.assert_close(lp.double(), gold.detach(), **FWD_TOL[dtype])
    assert_grad_close(x.grad, gold_x.grad, dtype)
    assert (x.grad[0, 70:] == 0).all() and (x.grad[2, ::3] == 0).all()
