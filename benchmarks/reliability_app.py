"""The app of ``benchmarks/reliability_run.py`` (served by ``rft serve``, store from ``--store``).

* ``write(sku)``: one unit of ``sku`` into the rollout's state (a write that must happen once per call_id);
* ``quick()``: instant, ``timeout_s=1`` (the tool other rollouts call while ``hang`` is stuck);
* ``hang(seconds)``: a blocking backend that answers late, no ``timeout_s``;
* grader ``count``: score = recorded calls; sub-scores: the state's count (must equal it).
"""

from __future__ import annotations

import time

from rft_sdk import Grade, GradingContext, Rollout, ToolServer

server = ToolServer(auth_env_var=None)


@server.tool
def write(sku: str, rollout: Rollout) -> str:
    """Add one unit of ``sku`` to this rollout's state.

    Args:
        sku: product id.
    """
    rollout.state[sku] = rollout.state.get(sku, 0) + 1
    rollout.state["writes"] = rollout.state.get("writes", 0) + 1
    return str(rollout.state["writes"])


@server.tool(timeout_s=1)
def quick(rollout: Rollout) -> str:
    """Answer at once (1 s timeout)."""
    rollout.state["quick"] = rollout.state.get("quick", 0) + 1
    return "ok"


@server.tool
def hang(seconds: float) -> str:
    """A blocking backend that answers after ``seconds``.

    Args:
        seconds: how long it blocks.
    """
    time.sleep(seconds)
    return "late"


@server.grader
def count(ctx: GradingContext) -> Grade:
    """Score: the recorded calls; sub-score ``writes``: the count the state holds (equal unless a write doubled)."""
    return Grade(float(len(ctx.trajectory)), {"writes": float(ctx.state.get("writes", 0))})
