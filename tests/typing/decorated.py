"""Checked by mypy in test_decorator_types.py (not collected by pytest): the decorators keep each signature."""

from __future__ import annotations

from typing import Any

from typing_extensions import assert_type

from rft_sdk import Grade, GradingContext, Rollout, ToolServer, grader, tool

server = ToolServer()


@server.tool
def lookup(key: str, limit: int = 3, *, rollout: Rollout) -> list[str]:
    """Look a key up."""
    return [key] * limit


@server.tool(name="save", description="Save a value.")
async def save_value(key: str, value: float, *, rollout: Rollout) -> dict[str, Any]:
    return {"key": key, "value": value}


@server.grader
def exact(ctx: GradingContext) -> float:
    return 1.0


@server.grader(name="detailed", score_range=(0.0, 1.0))
async def detailed(ctx: GradingContext) -> Grade:
    return Grade(1.0)


@tool
def standalone(x: int) -> int:
    return x


@grader(default=True)
def standalone_grader(ctx: GradingContext) -> bool:
    return True


async def uses(rollout: Rollout, ctx: GradingContext) -> None:
    assert_type(lookup("k", rollout=rollout), list[str])
    assert_type(lookup("k", 2, rollout=rollout), list[str])
    assert_type(await save_value("k", 1.5, rollout=rollout), dict[str, Any])
    assert_type(exact(ctx), float)
    assert_type(await detailed(ctx), Grade)
    assert_type(standalone(1), int)
    assert_type(standalone_grader(ctx), bool)
