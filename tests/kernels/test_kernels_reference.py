"""Reference maths against hand-computed values, input validation and the CPU dispatch."""

import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from rft_sdk import kernels
from rft_sdk.kernels import reference as R


def test_selective_log_softmax_hand_values():
    logits = torch.tensor([[0.0, 0.0, 0.0, 0.0], [0.0, math.log(3.0), -math.inf, -math.inf]])
    lp = R.selective_log_softmax(logits, torch.tensor([2, 1]))
    torch.testing.assert_close(lp, torch.tensor([math.log(0.25), math.log(0.75)]))


def test_selective_log_softmax_temperature_hand_value():
    # [0, 2] / T=2 -> [0, 1]: log p(1) = 1 - log(1 + e)
    lp = R.selective_log_softmax(torch.tensor([[0.0, 2.0]]), torch.tensor([1]), temperature=2.0)
    torch.testing.assert_close(lp, torch.tensor([1.0 - math.log(1.0 + math.e)]))


def test_selective_log_softmax_gradient_hand_value():
    # x / T = [0, 2 log 3] -> softmax = [1/10, 9/10]; d log p(1) / d x = (onehot - softmax) / T
    x = torch.tensor([[0.0, math.log(3.0)]], requires_grad=True)
    R.selective_log_softmax(x, torch.tensor([1]), temperature=0.5).sum().backward()
    torch.testing.assert_close(x.grad, torch.tensor([[-0.1 / 0.5, 0.1 / 0.5]]))


# (ratio, advantage) -> (per-token loss, region clipped, d loss / d lp) with eps = 0.2:
#   r=1.5, A=+1: -min(1.5, 1.2)   = -1.2, clipped (r > 1.2, A > 0), gradient 0
#   r=1.5, A=-1: -min(-1.5, -1.2) =  1.5, not clipped,              gradient -r·A = 1.5
#   r=0.5, A=-1: -min(-0.5, -0.8) =  0.8, clipped (r < 0.8, A < 0), gradient 0
#   r=0.5, A=+1: -min(0.5, 0.8)   = -0.5, not clipped,              gradient -r·A = -0.5
CASES = [(1.5, 1.0, -1.2, True, 0.0), (1.5, -1.0, 1.5, False, 1.5),
         (0.5, -1.0, 0.8, True, 0.0), (0.5, 1.0, -0.5, False, -0.5)]


def test_clipped_surrogate_hand_values():
    ratio = torch.tensor([[c[0] for c in CASES]], dtype=torch.float64)
    adv = torch.tensor([[c[1] for c in CASES]], dtype=torch.float64)
    old = torch.full_like(ratio, -2.0)
    lp = (old + ratio.log()).requires_grad_()
    loss, kl, clipped = R.grpo_per_token_loss(lp, adv, old)
    assert kl is None
    torch.testing.assert_close(loss.detach(), torch.tensor([[c[2] for c in CASES]], dtype=torch.float64))
    assert clipped.tolist() == [[c[3] for c in CASES]]
    loss.sum().backward()
    torch.testing.assert_close(lp.grad, torch.tensor([[c[4] for c in CASES]], dtype=torch.float64))


def test_k3_kl_hand_value():
    # ref - lp = log 2 -> kl = 2 - log 2 - 1; on-policy surrogate = -A
    lp = torch.tensor([[-1.0]], dtype=torch.float64)
    ref = lp + math.log(2.0)
    loss, kl, _ = R.grpo_per_token_loss(lp, torch.tensor([0.5], dtype=torch.float64), None, ref, beta=0.1)
    assert kl.item() == pytest.approx(1.0 - math.log(2.0))
    assert loss.item() == pytest.approx(-0.5 + 0.1 * (1.0 - math.log(2.0)))


def test_reductions_hand_values():
    per_token = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    mask = torch.tensor([[1, 1, 0], [1, 0, 0]])
    assert R.reduce_loss(per_token, mask, "grpo").item() == pytest.approx((3 / 2 + 4 / 1) / 2)
    assert R.reduce_loss(per_token, mask, "dr_grpo").item() == pytest.approx(7 / (2 * 3))
    assert R.reduce_loss(per_token, mask, "dr_grpo", max_completion_length=5).item() == pytest.approx(7 / 10)
    assert R.reduce_loss(per_token, mask, "dapo").item() == pytest.approx(7 / 3)


@pytest.mark.parametrize("loss_type", kernels.LOSS_TYPES)
def test_loss_weights_match_reductions(loss_type):
    g = torch.Generator().manual_seed(1)
    per_token = torch.randn(4, 6, generator=g, dtype=torch.float64)
    mask = torch.rand(4, 6, generator=g) > 0.4
    mask[2] = False  # a sequence with no completion tokens
    w = kernels.loss_weights(mask, loss_type, 9 if loss_type == "dr_grpo" else None)
    expected = R.reduce_loss(per_token, mask, loss_type, 9 if loss_type == "dr_grpo" else None)
    assert (w.double() * per_token).sum().item() == pytest.approx(expected.item(), rel=1e-6)


def test_on_policy_loss_is_minus_mean_advantage():
    g = torch.Generator().manual_seed(2)
    logits = torch.randn(2, 3, 11, generator=g, requires_grad=True)
    ids = torch.randint(0, 11, (2, 3), generator=g)
    adv = torch.tensor([0.7, -1.3])
    out = kernels.grpo_loss(logits, ids, adv, torch.ones(2, 3))
    assert out.loss.item() == pytest.approx(-adv.mean().item(), rel=1e-6)
    assert out.kl is None and out.clip_ratio == 0.0
    assert not out.logprobs.requires_grad


def test_float64_reference_close_to_float32():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(5, 7, 301, generator=g, dtype=torch.float64) * 4
    ids = torch.randint(0, 301, (5, 7), generator=g)
    gold = R.selective_log_softmax(x, ids, 0.8)
    assert gold.dtype == torch.float64
    torch.testing.assert_close(R.selective_log_softmax(x.float(), ids, 0.8).double(), gold, atol=1e-5, rtol=1e-6)


@pytest.mark.parametrize("call, error", [
    (lambda x, i: kernels.selective_log_softmax(x, i + 100), ValueError),
    (lambda x, i: kernels.selective_log_softmax(x, i - 100), ValueError),
    (lambda x, i: kernels.selective_log_softmax(x, i, temperature=0.0), ValueError),
    (lambda x, i: kernels.selective_log_softmax(x, i[:, :2]), ValueError),
    (lambda x, i: kernels.selective_log_softmax(x.long(), i), TypeError),
    (lambda x, i: kernels.selective_log_softmax(x, i.float()), TypeError),
    (lambda x, i: kernels.selective_log_softmax(x, i, backend="cuda"), ValueError),
    (lambda x, i: kernels.grpo_loss(x[0], i[0], torch.ones(3), torch.ones(3)), ValueError),
    (lambda x, i: kernels.grpo_loss(x, i, torch.ones(5), torch.ones(2, 3)), ValueError),
    (lambda x, i: kernels.grpo_loss(x, i, torch.ones(2), torch.ones(2, 4)), ValueError),
    (lambda x, i: kernels.grpo_loss(x, i, torch.ones(2), torch.ones(2, 3), beta=0.1), ValueError),
    (lambda x, i: kernels.grpo_loss(x, i, torch.ones(2), torch.ones(2, 3), loss_type="ppo"), ValueError),
    (lambda x, i: kernels.grpo_loss(x, i, torch.ones(2), torch.ones(2, 3), torch.ones(3, 2)), ValueError),
    (lambda x, i: kernels.grpo_loss(x, i, torch.ones(2), torch.ones(2, 3), epsilon_low=-0.1), ValueError),
    (lambda x, i: kernels.grpo_loss(x, i, torch.ones(2), torch.ones(2, 3), loss_type="dr_grpo",
                                    max_completion_length=0), ValueError),
])
def test_bad_input_raises(call, error):
    x = torch.randn(2, 3, 13)
    ids = torch.randint(0, 13, (2, 3))
    with pytest.raises(error):
        call(x, ids)


def test_triton_backend_on_cpu_needs_interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    with pytest.raises(RuntimeError, match="TRITON_INTERPRET"):
        kernels.selective_log_softmax(torch.randn(2, 5), torch.tensor([0, 1]), backend="triton")


def test_import_and_cpu_path_work_without_triton():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'triton' or name.startswith('triton.'):\n"
        "            raise ImportError('triton blocked')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import torch\nfrom rft_sdk import kernels\n"
        "assert not kernels.triton_available()\n"
        "x = torch.zeros(1, 4, requires_grad=True)\n"
        "lp = kernels.selective_log_softmax(x, torch.tensor([1]))\n"
        "lp.sum().backward()\n"
        "print(round(lp.item(), 6), 'triton' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parents[2]
    res = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == [str(round(math.log(0.25), 6)), "False"]
