"""Fused kernels for the policy-gradient hot path: selective log-softmax, the GRPO loss, and a
fused LM head + GRPO loss that never materialises the logits.

Triton kernels run on CUDA tensors; on CPU the pure-torch maths in
:mod:`rft_sdk.kernels.reference` is used (``backend="auto"``). ``import rft_sdk.kernels`` never
imports triton; the Triton modules are loaded on first use. See ``docs/kernels.md``.
"""

from . import reference
from ._api import fused_linear_grpo_loss, grpo_loss, selective_log_softmax
from ._backend import interpreter_enabled, triton_available
from ._common import LOSS_TYPES, GRPOLossOutput, loss_weights

__all__ = [
    "GRPOLossOutput",
    "LOSS_TYPES",
    "fused_linear_grpo_loss",
    "grpo_loss",
    "interpreter_enabled",
    "loss_weights",
    "reference",
    "selective_log_softmax",
    "triton_available",
]
