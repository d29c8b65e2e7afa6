"""The policy seam and the built-in scripted and replay policies.

Source: ``docs/ARCHITECTURE.md`` sections "Emulator ↔ trainer seam" and
"Replay policies ↔ dataset items". A policy is asked once per model turn with
the chat-completions ``messages`` so far and the item's ``tools``; it answers a
:class:`PolicyStep`: tool calls (the rollout continues) or final content.
The HTTP chat-completions policy lives in ``_openai.py``.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import random
import uuid
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "PerturbedReplayPolicy",
    "Policy",
    "PolicyError",
    "PolicyStep",
    "ReferenceReplayPolicy",
    "ScriptedPolicy",
    "check_step",
    "make_tool_call",
    "turns_taken",
]


class PolicyError(RuntimeError):
    """The policy failed or produced output the emulator cannot interpret.

    The rollout loop discards the rollout with reason ``"policy_error"``.
    """


@dataclass
class PolicyStep:
    """One model turn.

    Attributes:
        content: final answer text when ``tool_calls`` is empty (may also
            accompany tool calls as visible text).
        tool_calls: ``[{"id", "call_id", "name", "arguments": <JSON string>}]``;
            ``id``/``call_id`` are minted when missing, a dict ``arguments`` is
            JSON-encoded (see :func:`check_step`).
        extra: opaque, kept on the step record (e.g. token ids, logprobs).
    """

    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    extra: Any = None


@runtime_checkable
class Policy(Protocol):
    """What the rollout loop asks once per turn.

    Optional hook: ``end_rollout(trace_id) -> dict | None``, called once when a
    rollout ends (graded or discarded); its dict is kept as
    ``RolloutResult.policy_info`` and its ``"perturbation"`` key, if any, as
    ``RolloutResult.perturbation``.
    """

    async def act(self, messages: list[dict], tools: list[dict], *, item: dict,
                  trace_id: str) -> PolicyStep:
        """Return the next turn for ``messages`` (chat-completions dicts)."""
        ...


def make_tool_call(name: str, arguments: dict[str, Any] | str, *, id: str | None = None,
                   call_id: str | None = None) -> dict[str, Any]:
    """Build a tool call dict ``{"id": "fc_<hex>", "call_id": "call_<hex>", "name", "arguments": <JSON str>}``."""
    hex_ = uuid.uuid4().hex
    args = arguments if isinstance(arguments, str) else json.dumps(arguments, separators=(",", ":"))
    return {"id": id or f"fc_{hex_}", "call_id": call_id or f"call_{hex_}", "name": name, "arguments": args}


def check_step(step: Any) -> PolicyStep:
    """Validate and normalise a policy's answer.

    Accepts a :class:`PolicyStep` (or a dict with the same keys). Each tool
    call needs a non-empty string ``name`` and ``arguments`` as a string or a
    dict (encoded to JSON); missing ``id``/``call_id`` are minted. Arguments
    that are a string but not valid JSON are passed through unchanged: the
    tool endpoint judges them, as the hosted service does.

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
    calls = []
    for i, call in enumerate(step.tool_calls):
        if not isinstance(call, dict):
            raise PolicyError(f"tool_calls[{i}] must be a dict, got {type(call).__name__}")
        name, args = call.get("name"), call.get("arguments", "{}")
        if not isinstance(name, str) or not name:
            raise PolicyError(f"tool_calls[{i}].name must be a non-empty string, got {name!r}")
        if not isinstance(args, (str, dict)):
            raise PolicyError(f"tool_calls[{i}].arguments must be a JSON string or object, got {type(args).__name__}")
        for key in ("id", "call_id"):
            if key in call and not isinstance(call[key], str):
                raise PolicyError(f"tool_calls[{i}].{key} must be a string")
        calls.append(make_tool_call(name, args, id=call.get("id"), call_id=call.get("call_id")))
    ids = [c["call_id"] for c in calls]
    if len(set(ids)) != len(ids):
        raise PolicyError(f"duplicate call_id in one step: {ids}")
    return PolicyStep(content=step.content, tool_calls=calls, extra=step.extra)


def turns_taken(messages: Sequence[dict], item: dict) -> int:
    """Assistant turns already taken in this rollout (those after the item's own messages)."""
    start = len(item.get("messages", []))
    return sum(1 for m in messages[start:] if m.get("role") == "assistant")


class ScriptedPolicy:
    """A policy for tests: a fixed list of steps, or a function.

    Args:
        script: either a sequence whose k-th entry (a :class:`PolicyStep` or a
            dict ``{"content", "tool_calls"}``) is returned at turn k of every
            rollout, or a callable ``fn(messages, tools, item=..., trace_id=...)``
            (sync or async) returning a step.

    Raises (from ``act``):
        PolicyError: the script has no entry for this turn.
    """

    def __init__(self, script: Sequence[PolicyStep | dict] | Callable[..., Any]) -> None:
        self._script = script

    async def act(self, messages: list[dict], tools: list[dict], *, item: dict,
                  trace_id: str) -> PolicyStep:
        """Return the scripted step for this turn."""
        if callable(self._script):
            out = self._script(messages, tools, item=item, trace_id=trace_id)
            if inspect.isawaitable(out):
                out = await out
            return out
        turn = turns_taken(messages, item)
        if turn >= len(self._script):
            raise PolicyError(f"script has {len(self._script)} steps; no step for turn {turn}")
        return self._script[turn]


def _read_actions(item: dict, actions_field: str, answer_field: str) -> tuple[list[dict], str]:
    if actions_field not in item:
        raise PolicyError(f"item has no {actions_field!r} field for reference replay")
    if answer_field not in item:
        raise PolicyError(f"item has no {answer_field!r} field for reference replay")
    actions, answer = item[actions_field], item[answer_field]
    if not isinstance(actions, list):
        raise PolicyError(f"item[{actions_field!r}] must be a list")
    for i, a in enumerate(actions):
        if not isinstance(a, dict) or not isinstance(a.get("name"), str):
            raise PolicyError(f"item[{actions_field!r}][{i}] must be {{'name': str, 'arguments': dict}}")
    if not isinstance(answer, str):
        raise PolicyError(f"item[{answer_field!r}] must be a string")
    return actions, answer


def _replay_step(actions: list[dict], answer: str, turn: int) -> PolicyStep:
    if turn < len(actions):
        a = actions[turn]
        return PolicyStep(tool_calls=[make_tool_call(a["name"], a.get("arguments", {}))])
    return PolicyStep(content=answer)


class ReferenceReplayPolicy:
    """Replays an item's gold tool calls, one per turn, then its reference answer.

    Items carry ``actions: [{"name": str, "arguments": dict}]`` and
    ``reference_answer: str`` (field names configurable). Stateless: the turn
    is counted from ``messages``.

    Raises (from ``act``):
        PolicyError: the item lacks or misshapes those fields.
    """

    def __init__(self, actions_field: str = "actions", answer_field: str = "reference_answer") -> None:
        self.actions_field = actions_field
        self.answer_field = answer_field

    async def act(self, messages: list[dict], tools: list[dict], *, item: dict,
                  trace_id: str) -> PolicyStep:
        """Return gold call number ``turn``, or the reference answer after the last one."""
        actions, answer = _read_actions(item, self.actions_field, self.answer_field)
        return _replay_step(actions, answer, turns_taken(messages, item))


def _drop_one_write(write_tools: Collection[str]) -> Callable[[list[dict], random.Random], tuple[list[dict], str]]:
    def perturb(actions: list[dict], rng: random.Random) -> tuple[list[dict], str]:
        writes = [i for i, a in enumerate(actions) if a["name"] in write_tools]
        if not writes:
            return actions, "unchanged (no write call)"
        i = rng.choice(writes)
        return actions[:i] + actions[i + 1:], f"dropped {actions[i]['name']}"
    return perturb


class PerturbedReplayPolicy:
    """Reference replay with one write call per rollout dropped or altered.

    Args:
        write_tools: names of the state-changing tools.
        perturb: ``perturb(actions, rng) -> (actions, description)``; default
            drops one randomly chosen write call (description ``"dropped <name>"``).
        seed: the RNG of a rollout is ``random.Random(f"{seed}:{item_digest}:{k}")``
            for the ``k``-th rollout planned on that item (``item_digest``: SHA-256
            of the item's canonical JSON), so a run's set of perturbations per item
            is reproducible whatever the random trace_ids and scheduling order.
        actions_field, answer_field: as in :class:`ReferenceReplayPolicy`.

    The description is returned by ``end_rollout`` and lands on
    ``RolloutResult.perturbation``.
    """

    def __init__(self, write_tools: Collection[str], perturb: Callable[..., tuple[list[dict], str]] | None = None,
                 seed: int = 0, actions_field: str = "actions", answer_field: str = "reference_answer") -> None:
        self.write_tools = frozenset(write_tools)
        self.perturb = perturb or _drop_one_write(self.write_tools)
        self.seed = seed
        self.actions_field = actions_field
        self.answer_field = answer_field
        self._plans: dict[str, tuple[list[dict], str]] = {}
        self._planned_per_item: Counter[str] = Counter()

    async def act(self, messages: list[dict], tools: list[dict], *, item: dict,
                  trace_id: str) -> PolicyStep:
        """Return the perturbed plan's call for this turn, or the reference answer."""
        plan = self._plans.get(trace_id)
        actions, answer = _read_actions(item, self.actions_field, self.answer_field)
        if plan is None:
            digest = hashlib.sha256(json.dumps(item, sort_keys=True, default=str).encode()).hexdigest()
            k = self._planned_per_item[digest]
            self._planned_per_item[digest] += 1
            out = self.perturb(list(actions), random.Random(f"{self.seed}:{digest}:{k}"))
            if not (isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], list)):
                raise PolicyError("perturb must return (actions: list, description: str)")
            plan = self._plans[trace_id] = (out[0], str(out[1]))
        return _replay_step(plan[0], answer, turns_taken(messages, item))

    def end_rollout(self, trace_id: str) -> dict[str, Any] | None:
        """Forget the rollout's plan; return ``{"perturbation": description}``."""
        plan = self._plans.pop(trace_id, None)
        return None if plan is None else {"perturbation": plan[1]}
