import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Leaky ReLU with a configurable slope for negative inputs."""

    def __init__(self, negative_slope: float = 0.05):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(x, negative_slope=self.negative_slope)


batch_size = 16
dim = 16384
negative_slope = 0.05


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [negative_slope]
