import torch
import torch.nn as nn


class Model(nn.Module):
    """Mean over one dimension of a 3-D tensor."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(x, dim=self.dim)


batch_size = 16
rows = 128
cols = 256


def get_inputs():
    return [torch.randn(batch_size, rows, cols)]


def get_init_inputs():
    return [2]
