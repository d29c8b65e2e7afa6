"""Reference solutions (this project's own code): one ``ModelNew`` per problem.

``SOLUTIONS`` covers the self-authored reference programs of ``references/``
and, for builds from a KernelBench checkout (``build_dataset --source``), the
KernelBench level-1 problems listed in ``KERNELBENCH``.

On CPU the "kernel" is a torch formulation that does not call the
reference's own operator (that would be the ``reference_op`` hack); on a GPU a
real solution would be a Triton or CUDA kernel. Each class keeps the
reference's ``__init__`` signature and attribute names. Speed-ups of these
formulations are usually below 1: they exist to show that a correct, honest
candidate scores ``correct × speed-up > 0`` while every hack scores 0.
"""

from __future__ import annotations

__all__ = ["KERNELBENCH", "SOLUTIONS", "solution_source"]

_HEADER = "import math\n\nimport torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
_PLAIN_INIT = "    def __init__(self):\n        super().__init__()\n\n"


def _init(*params: str) -> str:
    sig = ", ".join(params)
    body = "".join(f"        self.{p.split(':')[0].split('=')[0].strip()} = {p.split(':')[0].split('=')[0].strip()}\n"
                   for p in params)
    return f"    def __init__(self, {sig}):\n        super().__init__()\n{body}\n"


def _fwd(expr: str, *setup: str, args: str = "x") -> str:
    lines = "".join(f"        {s}\n" for s in setup)
    return f"    def forward(self, {args}):\n{lines}        return {expr}\n"


def _layer(params: str, *lines: str) -> str:
    body = "".join(f"        {line}\n" for line in lines)
    return f"    def __init__(self, {params}):\n        super().__init__()\n{body}\n"


_OWN: dict[str, str] = {
    "relu": _PLAIN_INIT + _fwd("x.clamp_min(0.0)"),
    "leaky_relu": _init("negative_slope: float = 0.05") + _fwd("torch.where(x >= 0, x, x * self.negative_slope)"),
    "sigmoid": _PLAIN_INIT + _fwd("1.0 / (1.0 + torch.exp(-x))"),
    "gelu_tanh": _PLAIN_INIT + _fwd("0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))"),
    "hardswish": _PLAIN_INIT + _fwd("x * (x + 3.0).clamp(0.0, 6.0) / 6.0"),
    "softplus": _PLAIN_INIT + _fwd("torch.where(x > 20.0, x, torch.log1p(torch.exp(x.clamp_max(20.0))))"),
    "row_softmax": _PLAIN_INIT + _fwd("e / e.sum(dim=-1, keepdim=True)",
                                      "e = torch.exp(x - x.amax(dim=-1, keepdim=True))"),
    "log_softmax": _init("dim: int") + _fwd("s - torch.log(torch.exp(s).sum(dim=self.dim, keepdim=True))",
                                            "s = x - x.amax(dim=self.dim, keepdim=True)"),
    "layer_norm": _init("eps: float = 1e-5") + _fwd(
        "c * torch.rsqrt((c * c).mean(dim=-1, keepdim=True) + self.eps)", "c = x - x.mean(dim=-1, keepdim=True)"),
    "rms_norm": _init("eps: float = 1e-6") + _fwd(
        "x * torch.rsqrt((x * x).sum(dim=-1, keepdim=True) / x.shape[-1] + self.eps)"),
    "sum_dim": _init("dim: int") + _fwd("x.movedim(self.dim, -1) @ torch.ones(x.shape[self.dim], dtype=x.dtype)"),
    "mean_dim": _init("dim: int") + _fwd("x.sum(dim=self.dim) / x.shape[self.dim]"),
    "max_dim": _init("dim: int") + _fwd("x.amax(dim=self.dim)"),
    "cumsum": _init("dim: int") + _fwd(
        "(x.movedim(self.dim, -1) @ torch.triu(torch.ones(n, n, dtype=x.dtype))).movedim(-1, self.dim)",
        "n = x.shape[self.dim]"),
    "matmul": _PLAIN_INIT + _fwd("(a.unsqueeze(-1) * b.unsqueeze(0)).sum(dim=1)", args="a, b"),
    "batched_matmul": _PLAIN_INIT + _fwd('torch.einsum("bik,bkj->bij", a, b)', args="a, b"),
    "matvec": _PLAIN_INIT + _fwd("(a * v.reshape(1, -1)).sum(dim=1, keepdim=True)", args="a, v"),
    "linear_relu": _layer("in_features: int, out_features: int", "self.fc = nn.Linear(in_features, out_features)")
    + _fwd("torch.addmm(self.fc.bias, x, self.fc.weight.t()).clamp_min(0.0)"),
    "conv1d": _layer("in_channels: int, out_channels: int, kernel_size: int",
                     "self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, bias=False)")
    + _fwd('torch.einsum("bclk,ock->bol", x.unfold(2, self.conv.kernel_size[0], 1), self.conv.weight)'),
    "mse_loss": _PLAIN_INIT + _fwd("(d * d).sum() / d.numel()", "d = predictions - targets",
                                   args="predictions, targets"),
}

KERNELBENCH: dict[str, str] = {
    "19_ReLU": _PLAIN_INIT + _fwd("x.clamp_min(0.0)"),
    "20_LeakyReLU": _init("negative_slope: float = 0.01") + _fwd("torch.where(x >= 0, x, x * self.negative_slope)"),
    "21_Sigmoid": _PLAIN_INIT + _fwd("1.0 / (1.0 + torch.exp(-x))"),
    "22_Tanh": _PLAIN_INIT + _fwd("2.0 / (1.0 + torch.exp(-2.0 * x)) - 1.0"),
    "23_Softmax": _PLAIN_INIT + _fwd("e / e.sum(dim=1, keepdim=True)", "e = torch.exp(x - x.amax(dim=1, keepdim=True))"),
    "24_LogSoftmax": _init("dim: int = 1") + _fwd(
        "s - torch.log(torch.exp(s).sum(dim=self.dim, keepdim=True))", "s = x - x.amax(dim=self.dim, keepdim=True)"),
    "25_Swish": _PLAIN_INIT + _fwd("x / (1.0 + torch.exp(-x))"),
    "26_GELU_": _PLAIN_INIT + _fwd("0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))"),
    "27_SELU_": _PLAIN_INIT + _fwd(
        "1.0507009873554805 * torch.where(x > 0, x, 1.6732632423543772 * torch.expm1(x))"),
    "28_HardSigmoid": _PLAIN_INIT + _fwd("(x / 6.0 + 0.5).clamp(0.0, 1.0)"),
    "29_Softplus": _PLAIN_INIT + _fwd("torch.where(x > 20.0, x, torch.log1p(torch.exp(x)))"),
    "30_Softsign": _PLAIN_INIT + _fwd("x / (1.0 + torch.sqrt(x * x))"),
    "31_ELU": _init("alpha: float = 1.0") + _fwd("torch.where(x > 0, x, self.alpha * torch.expm1(x))"),
    "32_HardTanh": _PLAIN_INIT + _fwd("x.clamp(-1.0, 1.0)"),
    "36_RMSNorm_": _init("num_features: int", "eps: float = 1e-5") + _fwd(
        "x * torch.rsqrt((x * x).sum(dim=1, keepdim=True) / x.shape[1] + self.eps)"),
    "37_FrobeniusNorm_": _PLAIN_INIT + _fwd("x * torch.rsqrt((x * x).sum())"),
    "38_L1Norm_": _PLAIN_INIT + _fwd("x * (x.shape[1] / x.abs().sum(dim=1, keepdim=True))"),
    "39_L2Norm_": _PLAIN_INIT + _fwd("x * torch.rsqrt((x * x).sum(dim=1, keepdim=True))"),
    "47_Sum_reduction_over_a_dimension": _init("dim: int") + _fwd(
        "torch.ones(1, x.shape[self.dim], dtype=x.dtype).matmul(x.movedim(self.dim, -2)).movedim(-2, self.dim)"),
    "48_Mean_reduction_over_a_dimension": _init("dim: int") + _fwd("x.sum(dim=self.dim) / x.shape[self.dim]"),
    "49_Max_reduction_over_a_dimension": _init("dim: int") + _fwd("x.amax(dim=self.dim)"),
    "53_Min_reduction_over_a_dimension": _init("dim: int") + _fwd("x.amin(dim=self.dim)"),
}

SOLUTIONS: dict[str, str] = {**_OWN, **KERNELBENCH}


def solution_source(problem: str) -> str:
    """The full module source of the solution to ``problem``."""
    return _HEADER + SOLUTIONS[problem]
