"""The ToolServer served by ``rft serve`` in the observability tests (and ``benchmarks/bench_tracing.py``)."""

from __future__ import annotations

import asyncio

from rft_sdk import Grade, GradingContext, Rollout, ToolError, ToolServer

server = ToolServer(auth_tokens=["observe-token"], auth_env_var=None)


@server.tool
async def lookup(key: str, *, rollout: Rollout) -> dict:
    """Look a key up (sleeps 20 ms, like a real backend) and count calls in the rollout state.

    Args:
        key: the key to look up.
    """
    await asyncio.sleep(0.02)
    rollout.state["lookups"] = rollout.state.get("lookups", 0) + 1
    return {"key": key, "value": key.upper()}


@server.tool
def fail(reason: str) -> str:
    """Always fails with a model-visible tool error.

    Args:
        reason: the error message.
    """
    raise ToolError(reason)


@server.grader
def judge(ctx: GradingContext) -> Grade:
    """Score 1.0 when the answer names the looked-up value; sub-scores for answer and tool use."""
    answer = float("VALUE" in ctx.output_text)
    used = float(any(c.name == "lookup" and c.status == 200 for c in ctx.trajectory))
    return Grade(score=0.5 * answer + 0.5 * used, subscores={"answer": answer, "tool_use": used})
