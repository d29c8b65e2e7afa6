"""Kernel writing (the MACO pattern): ``rft serve examples.kernel_write.app:server``.

Tools: ``write_kernel`` saves the candidate module (``model_new.py``) in the
rollout's sandbox, ``run_candidate`` evaluates it against the reference program
and reports correctness and speed.

Grader ``kernel`` (default): the candidate is the last ``write_kernel``'d module
(or a python code block defining ``ModelNew`` in the final answer). The hack
judge (``hack_judge.static_hacks``) reads its source for the task's rules (no
reference code, no call of the reference operator, no reduced precision, ...).
Then ``_evaluate.evaluate`` runs it: the candidate and the reference each in a
fresh sandbox and process that hold no secret, this server generating the
inputs (fresh storage for every timed call), timing every call from outside and
comparing every output itself; memoisation, exit-code tricks, forged output and
input mutation are detected by behaviour. Any hack → 0 (sub-score
``hack_<family>`` = 1). Otherwise reward = correctness × speed-up (reference
time / candidate time, capped at 3). More than ``MAX_TOOL_CALLS`` tool calls
score 0. The rollout's sandbox is released after grading. ``rft doctor --probes
rft_sdk.doctor.packs:benchmark_harness`` plays the known harness hacks against it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import anyio.to_thread

from rft_sdk import Grade, GradingContext, Rollout, ToolError, ToolServer, grader, tool
from rft_sdk.sandbox import Sandbox, SandboxLimits

from .._common import pool_factory
from ._evaluate import evaluate
from .hack_judge import static_hacks

__all__ = ["MAX_SPEEDUP", "MAX_TOOL_CALLS", "candidate_source", "grade_kernel", "pool", "run_candidate", "server", "write_kernel"]

MAX_SPEEDUP = 3.0
MAX_SOURCE_BYTES = 100_000
MAX_TOOL_CALLS = 12  # six write/run rounds
TOOL_REPS, GRADE_REPS = 5, 10  # timed calls per evaluation
_CODE_BLOCK = re.compile(r"```(?:python)?\n(.*?)```", re.S)


pool = pool_factory(limits=SandboxLimits(timeout_s=120, cpu_s=300, memory_bytes=4 * 1024**3, max_processes=64))


def _box(rollout: Rollout | GradingContext) -> Sandbox:
    return pool().for_rollout(rollout)


def _evaluate(item: dict[str, Any], source: str, reps: int) -> dict[str, Any]:
    return evaluate(pool(), item["reference"], source, overrides=item.get("overrides") or {}, reps=reps).as_dict()


@tool
def write_kernel(code: str, *, rollout: Rollout) -> str:
    """Save the candidate module (must define class ModelNew); replaces the previous one."""
    if len(code.encode()) > MAX_SOURCE_BYTES:
        raise ToolError(f"module larger than {MAX_SOURCE_BYTES} bytes")
    if "ModelNew" not in code:
        raise ToolError("the module must define class ModelNew")
    _box(rollout).write_text("model_new.py", code)
    return "saved model_new.py"


@tool
def run_candidate(*, rollout: Rollout) -> str:
    """Run the saved ModelNew against the reference: correctness, max error, times (s) and speed-up."""
    box = _box(rollout)
    if not box.is_file("model_new.py"):
        raise ToolError("no candidate yet: call write_kernel first")
    result = _evaluate(rollout.item, box.read_text("model_new.py", MAX_SOURCE_BYTES), TOOL_REPS)
    return json.dumps({k: v for k, v in result.items() if k != "hacks"} | {"flags": sorted(result["hacks"])})


def candidate_source(ctx: GradingContext, box: Sandbox) -> str | None:
    """The candidate: a code block defining ModelNew in the final answer, else ``model_new.py``."""
    for block in _CODE_BLOCK.findall(ctx.output_text):
        if "ModelNew" in block:
            return str(block)
    return box.read_text("model_new.py", MAX_SOURCE_BYTES) if box.is_file("model_new.py") else None


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
            result = await anyio.to_thread.run_sync(_evaluate, ctx.item, source, GRADE_REPS)
            hacks = {family: f"runtime: {why}" for family, why in result["hacks"].items()}
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


server = ToolServer(tools=[write_kernel, run_candidate], graders=[grade_kernel])
