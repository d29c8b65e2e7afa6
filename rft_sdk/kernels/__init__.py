"""Fused kernels for the policy-gradient hot path: selective log-softmax and the GRPO loss.

Triton kernels run on CUDA tensors; on CPU the pure-torch maths in :mod:`kernels.reference`
is used (``backend="auto"``). ``import kernels`` never imports triton; the Triton modules
are loaded on first use. See ``docs/ARCHITECTURE.md`` ("Kernels API").
"""

from . import reference
from ._api import grpo_loss, selective_log_softmax
from ._backend import interpreter_enabled, triton_available
from ._common import LOSS_TYPES, GRPOLossOutput, loss_weights

__all__ = [
    "GRPOLossOutput",
    "LOSS_TYPES",
    "grpo_loss",
    "interpreter_enabled",
    "loss_weights",
    "reference",
    "selective_log_softmax",
    "triton_available",
]
