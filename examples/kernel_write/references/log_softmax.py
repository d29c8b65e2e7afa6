import torch
import torch.nn as nn


class Model(nn.Module):
    """Log-softmax over a chosen dimension."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=self.dim)


batch_size = 64
dim = 2048


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [1]
