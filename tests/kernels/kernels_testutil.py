"""Helpers shared by the kernels tests: tolerances per dtype, fp64 gold, slow marker."""

import os

import pytest
import torch

DTYPES = (torch.float32, torch.bfloat16, torch.float16)

# Forward: logprobs/loss are accumulated in fp32 from the (already rounded) input logits, so the
# error vs fp64 gold of the *same* rounded logits is fp32 accumulation error for every dtype.
FWD_TOL = {torch.float32: dict(atol=2e-5, rtol=1e-5),
           torch.bfloat16: dict(atol=2e-5, rtol=1e-5),
           torch.float16: dict(atol=2e-5, rtol=1e-5)}
# Gradients are written in the logits dtype: one rounding of the result (2^-8 bf16, 2^-11 fp16)
# relative to the largest gradient entry, plus fp32 noise.
GRAD_REL = {torch.float32: 1e-5, torch.bfloat16: 2.0**-7, torch.float16: 2.0**-10}

_skip_slow = pytest.mark.skipif(os.environ.get("RFT_KERNELS_SLOW") != "1", reason="slow: set RFT_KERNELS_SLOW=1")


def slow(test):
    """Mark a test ``slow`` and skip it unless ``RFT_KERNELS_SLOW=1``."""
    return pytest.mark.slow(_skip_slow(test))


def assert_grad_close(actual: torch.Tensor, expected: torch.Tensor, dtype: torch.dtype) -> None:
    """Compare gradients with an absolute tolerance scaled by the largest expected entry."""
    assert actual.dtype == dtype
    scale = float(expected.abs().max()) if expected.numel() else 0.0
    torch.testing.assert_close(actual.double(), expected.double(), atol=GRAD_REL[dtype] * scale + 1e-7, rtol=0)


def big_allocations(fn, min_bytes: int) -> list[tuple[str, int]]:
    """Run ``fn()`` under the CPU profiler; return ``(op, bytes)`` of each allocation of ≥ ``min_bytes``.

    The CPU stand-in of ``torch.cuda.max_memory_allocated`` checks: it counts the buffers torch
    allocates (the Triton interpreter's own numpy copies are not torch allocations and do not
    exist on a GPU), by the op that allocated them (``self_cpu_memory_usage``).
    """
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    return [(e.name, e.self_cpu_memory_usage) for e in prof.events() if e.self_cpu_memory_usage >= min_bytes]
