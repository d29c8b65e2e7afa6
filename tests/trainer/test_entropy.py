"""Chunked entropy equals the full log-softmax entropy, without building the [B, T, V] temporary."""

from __future__ import annotations

import pytest
import torch

from rft_sdk.train._entropy import token_entropy


@pytest.mark.parametrize("temperature", [1.0, 0.7])
@pytest.mark.parametrize("chunk_rows", [1, 5, 1024])
def test_chunked_entropy_matches_the_full_formula(temperature: float, chunk_rows: int) -> None:
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 7, 259, generator=g) * 4
    logp = torch.log_softmax(logits / temperature, dim=-1)
    expected = -(logp.exp() * logp).sum(-1)
    got = token_entropy(logits, temperature, chunk_rows=chunk_rows)
    assert got.shape == (3, 7)
    assert torch.allclose(got, expected, atol=1e-5)


def test_entropy_limits_and_no_grad() -> None:
    logits = torch.zeros(2, 4, requires_grad=True)
    uniform = token_entropy(logits)
    assert torch.allclose(uniform, torch.full((2,), torch.log(torch.tensor(4.0)).item()))
    assert not uniform.requires_grad
    peaked = token_entropy(torch.tensor([[100.0, 0.0, 0.0]]))
    assert peaked.item() == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ValueError, match="temperature"):
        token_entropy(logits, 0.0)
