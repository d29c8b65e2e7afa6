"""Shared helpers for the emulator tests (imported as a plain module; conftest puts the repo root on sys.path)."""

from __future__ import annotations

from typing import Any

from rft_sdk.emulator import ClientSettings

TOOL_URL = "http://tools.test/tools/{name}"
GRADER_URL = "http://tools.test/grade"

#: tiny backoff so retry tests take milliseconds
FAST = ClientSettings(backoff_initial_s=0.001, backoff_max_s=0.002, timeout_s=5.0)


def make_job(tools: list[str], *, headers: dict[str, str] | None = None, rate_limit: float = 1000.0,
             pass_threshold: float = 1.0, max_episode_steps: int = 5, compute_multiplier: float = 1.0,
             full: bool = False) -> dict[str, Any]:
    """A job config dict (inner reinforcement object, or the full hosted shape)."""
    inner = {
        "tools": [{"name": t, "server_url": TOOL_URL.format(name=t), "headers": dict(headers or {})} for t in tools],
        "grader": {"type": "endpoint", "name": "g", "url": GRADER_URL, "headers": dict(headers or {}),
                   "rate_limit": rate_limit, "pass_threshold": pass_threshold},
        "max_episode_steps": max_episode_steps,
        "hyperparameters": {"compute_multiplier": compute_multiplier, "eval_samples": 2},
    }
    return {"model": "m", "method": {"type": "reinforcement", "reinforcement": inner}} if full else inner


def tool_spec(name: str, props: dict[str, Any] | None = None) -> dict[str, Any]:
    """A chat-completions function tool declaration."""
    props = props if props is not None else {"x": {"type": "integer"}}
    return {"type": "function", "function": {"name": name, "description": name, "parameters": {
        "type": "object", "properties": props, "required": sorted(props), "additionalProperties": False},
        "strict": True}}


def make_item(i: int = 0, **extra: Any) -> dict[str, Any]:
    """A dataset line."""
    return {"messages": [{"role": "user", "content": f"question {i}"}], **extra}

