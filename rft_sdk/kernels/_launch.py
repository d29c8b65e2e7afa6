"""Launch shapes of the row kernels: ``(BLOCK_V, num_warps, num_stages)`` per pass, V and dtype.

Every kernel in this package runs one program per token row and loops over V in blocks of
``BLOCK_V``. The forward passes only reduce (online max / sum), so many light programs per SM
hide memory latency best; the backward writes a gradient block per iteration and gets wider
blocks. The table below is the starting point; ``benchmarks/bench_kernels.py --sweep``
times the candidates on the GPU at hand and prints the best, and ``block_v`` / ``num_warps``
arguments override it per call.

=========  ==================  ==========  ======  =========  ==========================
pass       V                   dtype size  BLOCK_V num_warps  num_stages
=========  ==================  ==========  ======  =========  ==========================
forward    ≤ 4,096             any         next power of two ≥ V, 4 warps, 2 stages
forward    > 4,096             2 bytes     2,048   1          4  (anchor: Liger-Kernel's
                                                                selective log-softmax)
forward    > 4,096             4 bytes     1,024   1          4  (same bytes per block)
backward   ≤ 4,096             any         next power of two ≥ V, 4 warps, 2 stages
backward   > 4,096             2 bytes     4,096   8          2
backward   > 4,096             4 bytes     2,048   8          2
=========  ==================  ==========  ======  =========  ==========================

These are not measured in this repository yet (no GPU in CI); see ``docs/kernels.md``.
Under the Triton interpreter (CPU) warps and stages mean nothing and bigger blocks only
cut Python overhead, so the block is ``next_power_of_two(V)`` capped at 65,536.
"""

from __future__ import annotations

from ._backend import interpreter_enabled

PASSES: tuple[str, ...] = ("forward", "backward")
SMALL_V = 4096
_INTERPRET_MAX_BLOCK_V = 65536
# (pass, element size in bytes) -> (BLOCK_V, num_warps, num_stages) for V > SMALL_V
_TABLE: dict[tuple[str, int], tuple[int, int, int]] = {
    ("forward", 2): (2048, 1, 4),
    ("forward", 4): (1024, 1, 4),
    ("backward", 2): (4096, 8, 2),
    ("backward", 4): (2048, 8, 2),
}


def next_power_of_2(n: int) -> int:
    """Smallest power of two ``≥ n`` (1 for ``n ≤ 1``)."""
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def launch_config(
    vocab: int, element_size: int, pass_: str, block_v: int | None = None, num_warps: int | None = None,
) -> tuple[int, int, int]:
    """``(BLOCK_V, num_warps, num_stages)`` for a row kernel over ``vocab`` entries of ``element_size`` bytes.

    Args:
        vocab: V, the row length (> 0).
        element_size: bytes per logit (2 for bf16/fp16, 4 for fp32, 8 for fp64).
        pass_: ``"forward"`` (reduction only) or ``"backward"`` (reads and writes a row).
        block_v, num_warps: overrides; ``block_v`` must be a positive power of two.

    Raises:
        ValueError: unknown pass, or ``block_v`` / ``num_warps`` not a positive power of two.
    """
    if pass_ not in PASSES:
        raise ValueError(f"pass_ must be one of {PASSES}, got {pass_!r}")
    if interpreter_enabled():
        block, warps, stages = min(_INTERPRET_MAX_BLOCK_V, next_power_of_2(vocab)), 4, 1
    elif vocab <= SMALL_V:
        block, warps, stages = next_power_of_2(vocab), 4, 2
    else:
        block, warps, stages = _TABLE[(pass_, min(4, max(2, element_size)))]
    block = block if block_v is None else block_v
    warps = warps if num_warps is None else num_warps
    for name, value in (("block_v", block), ("num_warps", warps)):
        if value <= 0 or value & (value - 1):
            raise ValueError(f"{name} must be a positive power of two, got {value}")
    return block, warps, stages
