"""Backend choice: Triton kernels on CUDA tensors, the torch reference elsewhere.

Triton is imported lazily (only when the Triton path is taken), so ``import kernels``
works without triton installed. On CPU tensors the Triton path only works under the
Triton interpreter, i.e. with ``TRITON_INTERPRET=1`` set *before* the kernel modules
are first imported (the tests do this in ``tests/kernels/conftest.py``); this module
only reads the variable, it never sets it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from types import ModuleType

import torch

BACKENDS: tuple[str, ...] = ("auto", "triton", "torch")


def triton_available() -> bool:
    """True when the ``triton`` package can be found (checked without importing it)."""
    try:
        return importlib.util.find_spec("triton") is not None
    except (ImportError, ValueError):  # blocked import hook, or sys.modules["triton"] = None
        return False


def interpreter_enabled() -> bool:
    """True when ``TRITON_INTERPRET=1`` is set in the environment (Triton kernels run on CPU)."""
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def resolve_backend(backend: str, device: torch.device) -> str:
    """Return ``"triton"`` or ``"torch"`` for ``backend`` in ``("auto", "triton", "torch")``.

    ``auto`` picks Triton for CUDA tensors when triton is importable, torch otherwise.

    Raises:
        ValueError: unknown backend.
        RuntimeError: ``"triton"`` requested but triton is missing, or tensors are not on
            CUDA and ``TRITON_INTERPRET=1`` is not set.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if backend == "torch":
        return "torch"
    if backend == "auto":
        return "triton" if device.type == "cuda" and triton_available() else "torch"
    if not triton_available():
        raise RuntimeError("backend='triton' requested but the triton package is not installed")
    if device.type != "cuda" and not interpreter_enabled():
        raise RuntimeError(
            f"backend='triton' needs CUDA tensors (got {device}) or TRITON_INTERPRET=1 set before "
            "the first Triton kernel import"
        )
    return "triton"


def triton_module(name: str) -> ModuleType:
    """Import ``kernels.<name>`` (a Triton kernel module) on first use; looked up in ``sys.modules``."""
    return importlib.import_module(f"{__package__}.{name}")
