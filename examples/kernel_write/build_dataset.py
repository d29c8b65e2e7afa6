"""Build ``data/train.jsonl`` and ``data/test.jsonl`` from the reference programs.

``python -m examples.kernel_write.build_dataset`` (offline): one item per program of
``references/`` — reference PyTorch programs written for this project in the usual
benchmark style (``class Model(nn.Module)`` with ``forward``, ``get_inputs()``,
``get_init_inputs()``), element-wise ops, reductions, softmax, normalisations,
matrix products, a 1-D convolution and a loss, with small CPU shapes.

``--source PATH --out DIR`` builds the same kind of items from a local checkout of
KernelBench (https://github.com/ScalingIntelligence/KernelBench, MIT; you clone it
yourself): the level-1 problems of ``solutions.KERNELBENCH``, read at ``--commit``
(default ``KERNELBENCH_COMMIT``), shapes scaled down for CPU by ``CPU_OVERRIDES``
(applied by the harness after loading; the reference text is unchanged).

Items: ``messages`` (task + the reference source), ``problem``, ``reference`` (the
source), ``overrides``, and for reference replay ``actions`` (``write_kernel`` the
solution, ``run_candidate``) and ``reference_answer``. Every other problem goes to
the test split.
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path
from typing import Any

from .._common import write_jsonl
from .solutions import KERNELBENCH, solution_source

__all__ = ["CPU_OVERRIDES", "KERNELBENCH_COMMIT", "PROBLEMS", "REFERENCES", "SYSTEM_PROMPT", "build_items",
           "kernelbench_items", "main"]

DATA_DIR = Path(__file__).resolve().parent / "data"
REFERENCES = Path(__file__).resolve().parent / "references"
PROBLEMS = ("relu", "leaky_relu", "sigmoid", "gelu_tanh", "hardswish", "softplus", "row_softmax", "log_softmax",
            "layer_norm", "rms_norm", "sum_dim", "mean_dim", "max_dim", "cumsum", "matmul", "batched_matmul",
            "matvec", "linear_relu", "conv1d", "mse_loss")
KERNELBENCH_COMMIT = "423217d9fda91e0c2d67e4a43bf62f96f6d104f1"
_ELEMENTWISE = {"batch_size": 64, "dim": 16384}
_NORM4D = {"batch_size": 8, "features": 16, "dim1": 32, "dim2": 32}
_REDUCE = {"batch_size": 16, "dim1": 256, "dim2": 255}
CPU_OVERRIDES: dict[str, dict[str, int]] = {
    **{p: _ELEMENTWISE for p in KERNELBENCH if int(p.split("_")[0]) <= 32 or p.startswith(("38_", "39_"))},
    "36_RMSNorm_": _NORM4D, "37_FrobeniusNorm_": _NORM4D,
    **{p: _REDUCE for p in KERNELBENCH if int(p.split("_")[0]) in (47, 48, 49, 53)},
}
SYSTEM_PROMPT = (
    "You write fast kernels. Given a PyTorch reference program (class Model, get_inputs, get_init_inputs), "
    "write a Python module defining class ModelNew (same constructor arguments, same outputs) that is "
    "faster than the reference. Do not call the reference's operator, return the reference, cache "
    "outputs or touch timing: such candidates score 0. Use write_kernel to save your module and "
    "run_candidate to check correctness and speed; your last written module is graded."
)


def _item(problem: str, ref: str, overrides: dict[str, int], label: str) -> dict[str, Any]:
    return {
        "messages": [{"role": "system", "content": SYSTEM_PROMPT},
                     {"role": "user", "content": f"Reference program ({label}):\n\n```python\n{ref}```"}],
        "problem": problem, "reference": ref, "overrides": overrides,
        "actions": [{"name": "write_kernel", "arguments": {"code": solution_source(problem)}},
                    {"name": "run_candidate", "arguments": {}}],
        "reference_answer": "ModelNew written with write_kernel; it matches the reference.",
    }


def build_items() -> list[dict[str, Any]]:
    """One item per program of ``references/``, in ``PROBLEMS`` order."""
    return [_item(p, (REFERENCES / f"{p}.py").read_text(encoding="utf-8"), {}, p) for p in PROBLEMS]


def kernelbench_items(source: Path, commit: str = KERNELBENCH_COMMIT) -> list[dict[str, Any]]:
    """One item per problem of ``solutions.KERNELBENCH``, read from a KernelBench git checkout."""
    items = []
    for problem in sorted(KERNELBENCH, key=lambda p: int(p.split("_")[0])):
        ref = subprocess.run(["git", "-C", str(source), "show", f"{commit}:KernelBench/level1/{problem}.py"],
                             check=True, capture_output=True, text=True).stdout
        items.append(_item(problem, ref, CPU_OVERRIDES[problem], f"KernelBench level 1, {problem}"))
    return items


def main(argv: list[str] | None = None) -> int:
    """Write both splits; returns 0."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--source", type=Path, help="a KernelBench git checkout (default: references/)")
    p.add_argument("--commit", default=KERNELBENCH_COMMIT, help="KernelBench commit to read with --source")
    p.add_argument("--out", type=Path, default=DATA_DIR, help="output folder (default: data/)")
    args = p.parse_args(argv)
    items = build_items() if args.source is None else kernelbench_items(args.source, args.commit)
    write_jsonl(args.out / "train.jsonl", items[0::2])
    write_jsonl(args.out / "test.jsonl", items[1::2])
    print(f"{len(items[0::2])} train + {len(items[1::2])} test items in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
