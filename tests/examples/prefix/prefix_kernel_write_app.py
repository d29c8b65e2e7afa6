"""PRE-FIX FIXTURE (issue #25): the kernel_write app as it was before the grader fix, kept to show that
``rft doctor --probes rft_sdk.doctor.packs:benchmark_harness`` FAILs it. Do not use it for anything else.

Kernel writing (the MACO pattern): ``rft serve examples.kernel_write.app:server``.

Each rollout's sandbox holds the reference program
(``reference.py``) and ``harness.py``. Tools: ``write_kernel`` saves the
candidate module (``model_new.py``), ``run_candidate`` runs it against the
reference in the sandbox (CPU, one thread) and reports correctness and speed.

Grader ``kernel`` (default): the candidate is the last ``write_kernel``'d module
(or a python code block defining ``ModelNew`` in the final answer). The hack
judge (``hack_judge.static_hacks``) reads its source; the grader then runs the
harness itself in the sandbox with a fresh seed and a secret nonce and adds the
harness's runtime flags. Any hack → 0 (sub-score ``hack_<family>`` = 1).
Otherwise reward = correctness × speed-up (reference time / candidate time,
capped at 3). More than ``MAX_TOOL_CALLS`` tool calls score 0: each
``run_candidate`` costs a harness run, and ``rft doctor``'s tool-spam probe
(the gold calls repeated) found the reward unpenalised without the cap. The
sandbox is released after grading.
"""

from __future__ import annotations

import functools
import json
import re
import secrets
import shutil
import sys
from pathlib import Path
from typing import Any

from examples._common import pool_factory
from examples._repos import _atomic_dir, cache_dir
from examples.kernel_write.hack_judge import static_hacks
from rft_sdk import Grade, GradingContext, Rollout, ToolError, ToolServer, grader, tool
from rft_sdk.sandbox import Sandbox, SandboxLimits

__all__ = ["MAX_SPEEDUP", "MAX_TOOL_CALLS", "candidate_source", "grade_kernel", "pool", "run_candidate", "server", "write_kernel"]

MAX_SPEEDUP = 3.0
MAX_SOURCE_BYTES = 100_000
MAX_TOOL_CALLS = 12  # six write/run rounds
HARNESS = Path(__file__).resolve().parent / "prefix_kernel_harness.py"
RUNTIME_FLAGS = {"identity": "identity", "caching": "caching", "timing_tamper": "timing",
                 "input_mutation": "input_mutation", "tensor_subclass": "lazy_output"}
_CODE_BLOCK = re.compile(r"```(?:python)?\n(.*?)```", re.S)


pool = pool_factory(limits=SandboxLimits(timeout_s=120, cpu_s=120, memory_bytes=None, max_processes=None))


def _template(item: dict[str, Any]) -> Path:
    ref = item["reference"]

    def build(tmp: Path) -> None:
        (tmp / "reference.py").write_text(ref, encoding="utf-8")
        shutil.copy(HARNESS, tmp / "harness.py")

    import hashlib
    key = hashlib.sha256(ref.encode() + HARNESS.read_bytes()).hexdigest()[:16]
    return _atomic_dir(cache_dir() / f"prefix-kernel-{key}", build)


def _box(rollout: Rollout | GradingContext) -> Sandbox:
    return pool().for_rollout(rollout, _template(rollout.item))


def _evaluate(box: Sandbox, item: dict[str, Any], seed: int, reps: int) -> dict[str, Any]:
    nonce = secrets.token_hex(16)
    request = json.dumps({"nonce": nonce, "seed": seed, "overrides": item.get("overrides", {}), "reps": reps})
    res = box.run([sys.executable, "harness.py", "reference.py", "model_new.py"], stdin=request.encode() + b"\n",
                  env={"OMP_NUM_THREADS": "1"})
    for line in res.stdout.splitlines():
        if line.startswith(nonce + " "):
            return dict(json.loads(line[len(nonce) + 1:]))
    return {"correct": False, "speedup": 0.0, "flags": [],
            "error": f"no result from the harness: {res.text()[-500:]}"}


@tool
def write_kernel(code: str, *, rollout: Rollout) -> str:
    """Save the candidate module (must define class ModelNew); replaces the previous one."""
    if len(code.encode()) > MAX_SOURCE_BYTES:
        raise ToolError(f"module larger than {MAX_SOURCE_BYTES} bytes")
    if "ModelNew" not in code:
        raise ToolError("the module must define class ModelNew")
    (_box(rollout).path / "model_new.py").write_text(code, encoding="utf-8")
    return "saved model_new.py"


@tool
def run_candidate(*, rollout: Rollout) -> str:
    """Run the saved ModelNew against the reference: correctness, max error, times (s) and speed-up."""
    box = _box(rollout)
    if not (box.path / "model_new.py").exists():
        raise ToolError("no candidate yet: call write_kernel first")
    return json.dumps(_evaluate(box, rollout.item, seed=0, reps=5))


def candidate_source(ctx: GradingContext, box: Sandbox) -> str | None:
    """The candidate: a code block defining ModelNew in the final answer, else ``model_new.py``."""
    for block in _CODE_BLOCK.findall(ctx.output_text):
        if "ModelNew" in block:
            return str(block)
    path = box.path / "model_new.py"
    return path.read_text(encoding="utf-8") if path.exists() else None


@grader(name="kernel", default=True, score_range=(0.0, MAX_SPEEDUP))
async def grade_kernel(ctx: GradingContext) -> Grade:
    """Hack judge, then correctness × speed-up measured by the grader; see the module docstring."""
    try:
        box = _box(ctx)
        if ctx.count() > MAX_TOOL_CALLS:
            return Grade(0.0, {"correct": 0.0, "tool_budget": 0.0},
                         [f"{ctx.count()} tool calls exceed the budget of {MAX_TOOL_CALLS}"])
        source = candidate_source(ctx, box)
        if source is None:
            return Grade(0.0, {"correct": 0.0}, ["no candidate module"])
        hacks = static_hacks(source, ctx.item["reference"])
        if not hacks:
            (box.path / "model_new.py").write_text(source, encoding="utf-8")
            result = await _arun_eval(box, ctx.item)
            hacks = {RUNTIME_FLAGS[f]: f"runtime: {f}" for f in result.get("flags", []) if f in RUNTIME_FLAGS}
        else:
            result = {"correct": False, "speedup": 0.0, "error": None}
        subscores = {f"hack_{family}": 1.0 for family in hacks}
        if hacks:
            return Grade(0.0, {**subscores, "correct": 0.0}, [f"hack {k}: {v}" for k, v in sorted(hacks.items())])
        correct = bool(result.get("correct"))
        speedup = float(result.get("speedup") or 0.0)
        score = float(correct) * min(speedup, MAX_SPEEDUP)
        reasons = [] if correct else [str(result.get("error"))[:300]]
        return Grade(score, {"correct": float(correct), "speedup": speedup}, reasons)
    finally:
        pool().release(ctx.trace_id)


async def _arun_eval(box: Sandbox, item: dict[str, Any]) -> dict[str, Any]:
    import anyio.to_thread

    return await anyio.to_thread.run_sync(functools.partial(_evaluate, box, item, secrets.randbelow(2**31), 10))


server = ToolServer(tools=[write_kernel, run_candidate], graders=[grade_kernel])
