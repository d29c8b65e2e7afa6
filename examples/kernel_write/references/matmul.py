import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix product of an (M, K) and a (K, N) matrix."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


M = 64
K = 96
N = 80


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
