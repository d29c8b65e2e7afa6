"""Built-in concrete policies: scripted (tests) and replay of an item's gold actions.

Source: ``docs/ARCHITECTURE.md`` sections "Emulator ↔ trainer seam" and
"Replay policies ↔ dataset items". The contract they implement
(:class:`Policy`, :func:`check_step`) lives in ``_contract.py``; the HTTP
chat-completions policy in ``_openai.py``.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import random
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from typing import Any

from ._contract import PolicyError, check_step, turns_taken
from ._types import PolicyStep, make_tool_call

__all__ = ["NOISE", "NoisyReplayPolicy", "PerturbedReplayPolicy", "ReferenceReplayPolicy", "ScriptedPolicy"]

Actions = list[dict[str, Any]]


class ScriptedPolicy:
    """A policy for tests: a fixed list of steps, or a function.

    Args:
        script: either a sequence whose k-th entry (a :class:`PolicyStep` or a
            dict ``{"content", "tool_calls"}``) is returned at turn k of every
            rollout, or a callable ``fn(messages, tools, item=..., trace_id=...)``
            (sync or async) returning a step.

    Raises (from ``act``):
        PolicyError: the script has no entry for this turn, or the entry is
            not a valid step (see :func:`check_step`).
    """

    def __init__(self, script: Sequence[PolicyStep | dict[str, Any]] | Callable[..., Any]) -> None:
        self._script = script

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, item: dict[str, Any],
                  trace_id: str) -> PolicyStep:
        """Return the scripted step for this turn."""
        if callable(self._script):
            out = self._script(messages, tools, item=item, trace_id=trace_id)
            if inspect.isawaitable(out):
                out = await out
            return check_step(out)
        turn = turns_taken(messages, item)
        if turn >= len(self._script):
            raise PolicyError(f"script has {len(self._script)} steps; no step for turn {turn}")
        return check_step(self._script[turn])


def _read_actions(item: dict[str, Any], actions_field: str, answer_field: str) -> tuple[list[dict[str, Any]], str]:
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


def _replay_step(actions: list[dict[str, Any]], answer: str, turn: int) -> PolicyStep:
    if turn < len(actions):
        a = actions[turn]
        return PolicyStep(tool_calls=[make_tool_call(a["name"], a.get("arguments", {}))])
    return PolicyStep(content=answer)


class ReferenceReplayPolicy:
    """Replays an item's gold tool calls, one per turn, then its reference answer.

    Items carry ``actions: [{"name": str, "arguments": dict}]`` and
    ``reference_answer: str`` (field names configurable). Stateless: the turn
    is counted from ``messages``.

    Deterministic (``deterministic = True``): every sample of an item is the same, so
    ``rft doctor`` reports *learnable* as not checked with it.

    Raises (from ``act``):
        PolicyError: the item lacks or misshapes those fields.
    """

    deterministic = True

    def __init__(self, actions_field: str = "actions", answer_field: str = "reference_answer") -> None:
        self.actions_field = actions_field
        self.answer_field = answer_field

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, item: dict[str, Any],
                  trace_id: str) -> PolicyStep:
        """Return gold call number ``turn``, or the reference answer after the last one."""
        actions, answer = _read_actions(item, self.actions_field, self.answer_field)
        return _replay_step(actions, answer, turns_taken(messages, item))


def _drop_one_write(write_tools: Collection[str]) -> Callable[[list[dict[str, Any]], random.Random], tuple[list[dict[str, Any]], str]]:
    def perturb(actions: list[dict[str, Any]], rng: random.Random) -> tuple[list[dict[str, Any]], str]:
        # a gold call marked expect_error is meant to be refused: dropping it changes nothing a grader sees
        writes = [i for i, a in enumerate(actions) if a["name"] in write_tools and not a.get("expect_error")]
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

    def __init__(self, write_tools: Collection[str], perturb: Callable[..., tuple[list[dict[str, Any]], str]] | None = None,
                 seed: int = 0, actions_field: str = "actions", answer_field: str = "reference_answer") -> None:
        self.write_tools = frozenset(write_tools)
        self.perturb = perturb or _drop_one_write(self.write_tools)
        self.seed = seed
        self.actions_field = actions_field
        self.answer_field = answer_field
        self._plans: dict[str, tuple[list[dict[str, Any]], str]] = {}
        self._planned_per_item: Counter[str] = Counter()

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, item: dict[str, Any],
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


#: ``NoisyReplayPolicy``'s default mistake rates: per gold call, the chance it is dropped,
#: repeated or altered; per rollout, the chance the answer is another item's (a wrong answer).
NOISE = {"drop": 0.15, "repeat": 0.1, "alter": 0.15, "wrong_answer": 0.2}


def _alter(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "-x"
    return value


class NoisyReplayPolicy:
    """The gold with noise, a stand-in for a model of middling skill (``rft emulate --policy noisy``).

    Per rollout, from ``random.Random(f"{seed}:{item_digest}:{k}")`` (the ``k``-th rollout of the
    item, so a run is reproducible whatever the scheduling): each gold call is dropped with
    probability ``rates["drop"]``, else issued twice with ``rates["repeat"]``, else has one
    argument altered (``+1``, ``not``, ``"-x"`` appended) with ``rates["alter"]``; the answer is
    replaced with probability ``rates["wrong_answer"]`` by a wrong one (the first half of the
    reference followed by ``" (unsure)"``). Defaults: :data:`NOISE` (about half of a
    two-call rollout's samples differ from the gold), so *learnable* gives a verdict offline.

    Raises:
        ValueError: a rate outside [0, 1] or an unknown rate name.
    """

    deterministic = False

    def __init__(self, rates: dict[str, float] | None = None, seed: int = 0, actions_field: str = "actions",
                 answer_field: str = "reference_answer") -> None:
        merged = {**NOISE, **(rates or {})}
        bad = {k: v for k, v in merged.items() if k not in NOISE or not 0 <= v <= 1}
        if bad:
            raise ValueError(f"noisy policy rates must be {sorted(NOISE)} in [0, 1], got {bad}")
        self.rates, self.seed = merged, seed
        self.actions_field, self.answer_field = actions_field, answer_field
        self._plans: dict[str, tuple[list[dict[str, Any]], str, str]] = {}
        self._planned_per_item: Counter[str] = Counter()

    def plan(self, actions: list[dict[str, Any]], answer: str, rng: random.Random) -> tuple[list[dict[str, Any]], str, str]:
        """``(calls, answer, description)`` of one noisy rollout."""
        out: list[dict[str, Any]] = []
        notes: list[str] = []
        for a in actions:
            roll = rng.random()
            drop, repeat, alter = self.rates["drop"], self.rates["repeat"], self.rates["alter"]
            if roll < drop:
                notes.append(f"dropped {a['name']}")
            elif roll < drop + repeat:
                out += [a, a]
                notes.append(f"repeated {a['name']}")
            elif roll < drop + repeat + alter and isinstance(a.get("arguments"), dict) and a["arguments"]:
                key = rng.choice(sorted(a["arguments"]))
                out.append({"name": a["name"], "arguments": {**a["arguments"], key: _alter(a["arguments"][key])}})
                notes.append(f"altered {a['name']}.{key}")
            else:
                out.append(a)
        if rng.random() < self.rates["wrong_answer"]:
            answer = answer[: len(answer) // 2] + " (unsure)"
            notes.append("wrong answer")
        return out, answer, "; ".join(notes) or "unchanged"

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, item: dict[str, Any],
                  trace_id: str) -> PolicyStep:
        """The noisy plan's call for this turn, or its answer."""
        plan = self._plans.get(trace_id)
        if plan is None:
            actions, answer = _read_actions(item, self.actions_field, self.answer_field)
            digest = hashlib.sha256(json.dumps(item, sort_keys=True, default=str).encode()).hexdigest()
            k = self._planned_per_item[digest]
            self._planned_per_item[digest] += 1
            plan = self._plans[trace_id] = self.plan(list(actions), answer, random.Random(f"{self.seed}:{digest}:{k}"))
        return _replay_step(plan[0], plan[1], turns_taken(messages, item))

    def end_rollout(self, trace_id: str) -> dict[str, Any] | None:
        """Forget the rollout's plan; return ``{"perturbation": description}``."""
        plan = self._plans.pop(trace_id, None)
        return None if plan is None else {"perturbation": plan[2]}
