"""Holistic grading of a retail rollout by its end state and evidence of work, as pure functions.

Rule (from ``docs/retail-domain.md``, τ²-bench's database check):
apply the item's gold actions to a fresh view of the base database, and
compare the rollout's final database (base + its overlay) with that result;
read calls never matter, only end state. On top of that gate, every
``communicate_info`` string must appear in the final answer.

Score: database mismatch → 0.0; match → ``0.5 + 0.5 * found / required``
(1.0 when every string is present or none is required; otherwise strictly
between 0.5 and 1.0). ``db_match`` is τ²-bench's database verdict, unchanged.

Process rules, applied when the grader is given the rollout's tool calls
(``calls``); each scores 0.0 (sub-score ``process``):

* **empty answer**: the final answer is empty or whitespace (store rule 8:
  always tell the customer what was done).
* **over budget**: more tool calls than the item's declared ``max_tool_calls``
  (default :func:`call_budget`: ``2 * len(gold) + 5``) — the budget ``rft
  doctor`` reads too, so spamming past it is a hack, not a style issue.
* **a dump, not a message**: an answer longer than ``max_answer_chars`` (item
  field, default :data:`MAX_ANSWER_CHARS`) or one that pastes a tool's output
  (``_evidence.pasted_output``). Store rule 8 asks for the exact figures in a
  message to the customer; pasting every output would state every required fact
  without committing to any (found by ``rft doctor``'s ``work_then_dump``).
* **no evidence of work** (``_evidence``): the facts the answer states were
  not returned by any tool call of this rollout, the customer the gold
  identifies was never identified, or a hand-over the gold makes was not made.
  Evidence is what the tools returned, not which tools were called: a rollout
  that authenticates by email where the gold used name + zip passes.

History (found by ``rft doctor``, ``docs/doctor.md``): the first grader gave
full reward to an empty answer, a copied reference answer and ten-fold spam;
the second closed those by requiring every tool name of the gold on tasks that
change nothing, which rejected valid paths (email instead of name + zip).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._db import BaseDB, RetailView, load_base_db
from ._evidence import as_call, evidence_reasons, pasted_output
from ._text import mentions, normalize_text
from ._tools import RetailError, call_tool

__all__ = ["MAX_ANSWER_CHARS", "RetailGrade", "apply_actions", "call_budget", "declared_budget", "gold_view",
           "grade_end_state", "grade_retail", "mentions", "normalize_text", "process_reasons"]

#: Longest final answer, characters, for items without ``max_answer_chars`` (the references are
#: under 250; a careful answer to the longest task fits in a few hundred).
MAX_ANSWER_CHARS = 1500


@dataclass
class RetailGrade:
    """A retail grade: ``score`` in [0, 1], ``subscores`` in [0, 1], ``reasons``."""

    score: float
    subscores: dict[str, float] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)


def apply_actions(view: RetailView, actions: list[dict[str, Any]]) -> list[str | None]:
    """Run ``[{"name", "arguments"}]`` in order on ``view``; errors do not stop the run.

    Returns:
        One entry per action: ``None`` when it succeeded, else the error message
        (τ²-bench's gold lists contain deliberate failing calls).

    Raises:
        ValueError: an action is not ``{"name": str, "arguments": dict}``.
    """
    errors: list[str | None] = []
    for action in actions:
        if not isinstance(action, dict) or not isinstance(action.get("name"), str):
            raise ValueError(f"bad action {action!r}: need {{'name': str, 'arguments': dict}}")
        arguments = action.get("arguments") or {}
        if isinstance(arguments, str):
            arguments = json.loads(arguments)
        try:
            call_tool(view, action["name"], arguments)
            errors.append(None)
        except RetailError as exc:
            errors.append(str(exc))
    return errors


_GOLD_CACHE_MAX = 1024


def gold_view(actions: list[dict[str, Any]], base: BaseDB | None = None) -> RetailView:
    """A view holding the end state of the gold ``actions`` (cached per action list).

    The returned overlay is shared by later calls with the same actions: read it only.
    """
    base = base or load_base_db()
    key = json.dumps(actions, sort_keys=True)
    overlay = base.gold_cache.get(key)
    if overlay is None:
        view = base.view()
        apply_actions(view, actions)
        overlay = view.overlay
        if len(base.gold_cache) >= _GOLD_CACHE_MAX:
            base.gold_cache.clear()
        base.gold_cache[key] = overlay
    return RetailView(base, overlay)


def call_budget(actions: Sequence[Any]) -> int:
    """Default most tool calls a rollout may make: ``2 * len(gold actions) + 5`` (room to explore, not to spam)."""
    return 2 * len(actions) + 5


def declared_budget(item: Mapping[str, Any]) -> int:
    """The item's ``max_tool_calls`` when it declares one (a non-negative int), else :func:`call_budget`.

    Raises:
        ValueError: ``max_tool_calls`` present but not a non-negative integer.
    """
    budget = item.get("max_tool_calls")
    if budget is None:
        return call_budget(item.get("actions") or [])
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise ValueError(f"retail item 'max_tool_calls' must be a non-negative integer, got {budget!r}")
    return budget


def process_reasons(item: Mapping[str, Any], answer: str, calls: Sequence[Any], base: BaseDB | None = None
                    ) -> list[str]:
    """Why the rollout scores 0.0 whatever its end state (empty list when none applies).

    Args:
        item: the dataset line; answer: the final answer; calls: the rollout's tool calls
            (dicts or record objects, see ``_evidence``); base: default the packaged database.
    """
    reasons = []
    if not answer.strip():
        reasons.append("the final answer is empty (rule 8: tell the customer what was done)")
    budget = declared_budget(item)
    if len(calls) > budget:
        reasons.append(f"{len(calls)} tool calls exceed the budget of {budget}")
    limit = item.get("max_answer_chars", MAX_ANSWER_CHARS)
    if len(answer) > limit:
        reasons.append(f"the answer has {len(answer)} characters, over {limit}: a message to the customer, not a dump")
    outputs = [c.output for c in map(as_call, calls) if c.output is not None]
    if pasted_output(answer, outputs):
        reasons.append("the answer pastes a tool's output: state the figures the customer asked for (rule 8)")
    return reasons + evidence_reasons(item, answer, calls, base or load_base_db())


def grade_retail(item: dict[str, Any], overlay: dict[str, Any], final_answer: str | None,
                 base: BaseDB | None = None, *, calls: Sequence[Any] | None = None) -> RetailGrade:
    """Grade one rollout of a retail item.

    Args:
        item: dataset line with ``actions`` (gold calls) and ``communicate_info``.
        overlay: the rollout's overlay ``{table: {key: record}}`` (its writes).
        final_answer: the model's final answer text (``None`` counts as empty).
        base: base database; default the packaged one.
        calls: the rollout's tool calls (``ToolCallRecord``-like objects or dicts
            ``{"name", "arguments", "output", "error"}``); given, the process rules
            of the module docstring apply (``None`` skips them: end state and answer only).

    Returns:
        :class:`RetailGrade` with sub-scores ``db_match``, ``communicate_info``
        and, when ``calls`` is given, ``process`` (0.0 when a process rule fired).

    Raises:
        ValueError: the item lacks ``actions`` or has malformed fields.
    """
    actions = item.get("actions")
    if not isinstance(actions, list):
        raise ValueError("retail item needs 'actions': a list of gold tool calls")
    base = base or load_base_db()
    gold = gold_view(actions, base)
    differing = RetailView(base, overlay).diff(gold)
    return grade_end_state(item, differing, final_answer, calls=calls, base=base)


def grade_end_state(item: dict[str, Any], differing: list[str], final_answer: str | None, *,
                    calls: Sequence[Any] | None = None, base: BaseDB | None = None) -> RetailGrade:
    """The rule of :func:`grade_retail` given the end-state comparison as plain data (any backend).

    Args:
        item: dataset line with ``actions`` and ``communicate_info``.
        differing: sorted ``"table/key"`` of the records whose end state differs
            from the gold one (empty: the database gate passes).
        final_answer: the model's final answer text.
        calls: the rollout's tool calls, or ``None`` (see :func:`grade_retail`).
        base: the database the evidence rules read facts from; default the packaged one.

    Raises:
        ValueError: the item lacks ``actions`` or has malformed fields.
    """
    actions = item.get("actions")
    if not isinstance(actions, list):
        raise ValueError("retail item needs 'actions': a list of gold tool calls")
    required = item.get("communicate_info") or []
    if not isinstance(required, list) or not all(isinstance(s, str) for s in required):
        raise ValueError("retail item 'communicate_info' must be a list of strings")
    answer = final_answer or ""
    missing = [s for s in required if not mentions(answer, s)]
    info = 1.0 - len(missing) / len(required) if required else 1.0
    db_match = 0.0 if differing else 1.0
    reasons = []
    if differing:
        more = f" and {len(differing) - 5} more" if len(differing) > 5 else ""
        reasons.append(f"database differs from the gold end state at {', '.join(differing[:5])}{more}")
    reasons += [f"final answer does not state {s!r}" for s in missing]
    score = 0.0 if differing else 0.5 + 0.5 * info
    subscores = {"db_match": db_match, "communicate_info": info}
    if calls is not None:
        process = process_reasons(item, answer, calls, base)
        subscores["process"] = 0.0 if process else 1.0
        reasons += process
        score = 0.0 if process else score
    return RetailGrade(score=score, subscores=subscores, reasons=reasons)
