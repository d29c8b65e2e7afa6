import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix times a column vector: (M, K) x (K, 1)."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, v)


M = 512
K = 1024


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, 1)]


def get_init_inputs():
    return []
