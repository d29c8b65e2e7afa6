import torch
import torch.nn as nn


class Model(nn.Module):
    """Batched matrix product (B, M, K) x (B, K, N)."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


batch_size = 8
M = 32
K = 48
N = 40


def get_inputs():
    return [torch.randn(batch_size, M, K), torch.randn(batch_size, K, N)]


def get_init_inputs():
    return []
