import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Softplus log(1 + exp(x)), element-wise."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softplus(x)


batch_size = 16
dim = 16384


def get_inputs():
    return [torch.randn(batch_size, dim) * 8]


def get_init_inputs():
    return []
