"""Group-normalised advantages against hand-computed values."""

import math

import pytest
import torch

from rft_sdk.train import group_advantages


def test_one_group_std_scaled():
    # rewards 1,0,0,1: mean 0.5; unbiased std = sqrt(4 * 0.25 / 3) = sqrt(1/3)
    a = group_advantages([1.0, 0.0, 0.0, 1.0], [0, 0, 0, 0], eps=0.0)
    expected = 0.5 / math.sqrt(1 / 3)
    assert torch.allclose(a, torch.tensor([expected, -expected, -expected, expected]), atol=1e-6)


def test_groups_are_independent_and_eps_is_added():
    a = group_advantages([2.0, 0.0, 5.0, 5.0, 1.0, 3.0], ["x", "x", "y", "y", "z", "z"], eps=0.5)
    # x: mean 1, std sqrt(2) -> ±1/(sqrt2+0.5); y: all equal -> 0; z: mean 2, std sqrt(2)
    s = 1 / (math.sqrt(2) + 0.5)
    assert torch.allclose(a, torch.tensor([s, -s, 0.0, 0.0, -s, s]), atol=1e-6)


def test_dr_grpo_no_std_scaling():
    a = group_advantages([1.0, 0.0, 0.0, 0.0], [0, 0, 0, 0], scale_by_std=False)
    assert torch.allclose(a, torch.tensor([0.75, -0.25, -0.25, -0.25]))


def test_single_sample_group_is_zero_and_errors():
    assert group_advantages([3.0], [0]).tolist() == [0.0]
    with pytest.raises(ValueError, match="group keys"):
        group_advantages([1.0, 2.0], [0])
    with pytest.raises(ValueError, match="finite"):
        group_advantages([float("nan"), 1.0], [0, 0])
