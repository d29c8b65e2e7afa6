"""The policy contract: what the rollout loop asks of a policy and how it reads the answer.

Source: ``docs/ARCHITECTURE.md`` section "Emulator ↔ trainer seam". A policy is
asked once per model turn with the chat-completions ``messages`` so far and the
item's ``tools``; it answers a :class:`PolicyStep`: tool calls (the rollout
continues) or final content. :func:`check_step` normalises the answer (dict
tool calls become :class:`ToolCall` s). Concrete policies live in
``_policy.py`` (scripted, replay) and ``_openai.py`` (HTTP chat completions).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from ._types import PolicyStep, ToolCall, make_tool_call

__all__ = ["Policy", "PolicyError", "check_step", "turns_taken"]


class PolicyError(RuntimeError):
    """The policy failed or produced output the emulator cannot interpret.

    The rollout loop discards the rollout with reason ``"policy_error"``.
    """


@runtime_checkable
class Policy(Protocol):
    """What the rollout loop asks once per turn.

    Optional hook: ``end_rollout(trace_id) -> dict | None``, called once when a
    rollout ends (graded or discarded); its dict is kept as
    ``RolloutResult.policy_info`` and its ``"perturbation"`` key, if any, as
    ``RolloutResult.perturbation``.
    """

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, item: dict[str, Any],
                  trace_id: str) -> PolicyStep:
        """Return the next turn for ``messages`` (chat-completions dicts)."""
        ...


def _coerce_call(i: int, call: Any) -> ToolCall:
    name: Any
    args: Any
    id_: Any
    call_id: Any
    if isinstance(call, ToolCall):
        name, args, id_, call_id = call.name, call.arguments, call.id, call.call_id
    elif isinstance(call, dict):
        name, args, id_, call_id = call.get("name"), call.get("arguments", "{}"), call.get("id"), call.get("call_id")
        for key, value in (("id", id_), ("call_id", call_id)):
            if key in call and not isinstance(value, str):
                raise PolicyError(f"tool_calls[{i}].{key} must be a string")
    else:
        raise PolicyError(f"tool_calls[{i}] must be a ToolCall or a dict, got {type(call).__name__}")
    if not isinstance(name, str) or not name:
        raise PolicyError(f"tool_calls[{i}].name must be a non-empty string, got {name!r}")
    if not isinstance(args, (str, dict)):
        raise PolicyError(f"tool_calls[{i}].arguments must be a JSON string or object, got {type(args).__name__}")
    return make_tool_call(name, args, id=id_ or None, call_id=call_id or None)


def check_step(step: Any) -> PolicyStep:
    """Validate and normalise a policy's answer.

    Accepts a :class:`PolicyStep` (or a dict with the same keys). Each tool
    call is a :class:`ToolCall` or a dict with a non-empty string ``name`` and
    ``arguments`` as a string or a dict (encoded to JSON); missing
    ``id``/``call_id`` are minted. Arguments that are a string but not valid
    JSON are passed through unchanged: the tool endpoint judges them, as the
    hosted service does.

    Returns:
        A new :class:`PolicyStep` whose ``tool_calls`` are all :class:`ToolCall` s.

    Raises:
        PolicyError: anything else (wrong type, tool call without a name,
            non-string content, duplicate call_id in one step).
    """
    if isinstance(step, dict):
        unknown = set(step) - {"content", "tool_calls", "extra"}
        if unknown:
            raise PolicyError(f"policy step has unknown keys {sorted(unknown)}")
        step = PolicyStep(**step)
    if not isinstance(step, PolicyStep):
        raise PolicyError(f"policy must return a PolicyStep, got {type(step).__name__}")
    if step.content is not None and not isinstance(step.content, str):
        raise PolicyError(f"PolicyStep.content must be a string or None, got {type(step.content).__name__}")
    if not isinstance(step.tool_calls, list):
        raise PolicyError(f"PolicyStep.tool_calls must be a list, got {type(step.tool_calls).__name__}")
    calls = [_coerce_call(i, call) for i, call in enumerate(step.tool_calls)]
    ids = [c.call_id for c in calls]
    if len(set(ids)) != len(ids):
        raise PolicyError(f"duplicate call_id in one step: {ids}")
    return PolicyStep(content=step.content, tool_calls=list(calls), extra=step.extra)


def turns_taken(messages: Sequence[dict[str, Any]], item: dict[str, Any]) -> int:
    """Assistant turns already taken in this rollout (those after the item's own messages)."""
    start = len(item.get("messages", []))
    return sum(1 for m in messages[start:] if m.get("role") == "assistant")
