"""Holistic grading of a retail rollout by its end state, as pure functions.

Rule (from ``docs/retail-domain.md``, τ²-bench's database check):
apply the item's gold actions to a fresh view of the base database, and
compare the rollout's final database (base + its overlay) with that result;
read calls never matter, only end state. On top of that gate, every
``communicate_info`` string must appear in the final answer.

Score: database mismatch → 0.0; match → ``0.5 + 0.5 * found / required``
(1.0 when every string is present or none is required; otherwise strictly
between 0.5 and 1.0).

Hardening found by ``rft doctor`` (``docs/doctor.md``), applied when the
grader is given the rollout's tool calls (``calls``), each scoring 0.0:

* **empty answer**: the final answer is empty or whitespace (store rule 8:
  always tell the customer what was done). Before: full reward on 2 of 40
  test items.
* **no evidence of work**: when the gold actions leave the database
  unchanged (the task is to look something up, refuse, or transfer), the
  database gate is vacuous, so the rollout must have called every tool the
  gold calls (by name). Before: any text — an echo, a reference answer
  copied, ``score: 1`` — passed those items.
* **tool-call spam**: more than ``2 * len(gold) + 5`` tool calls
  (:func:`call_budget`). Before: every gold call repeated ten times scored 1.0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._db import BaseDB, RetailView, load_base_db
from ._tools import RetailError, call_tool

__all__ = ["RetailGrade", "apply_actions", "call_budget", "gold_view", "grade_end_state", "grade_retail", "mentions",
           "normalize_text"]


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


_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


def _canonical_number(match: re.Match[str]) -> str:
    token = match.group(0).replace(",", "")
    if "." in token:
        token = token.rstrip("0").rstrip(".")
    return token


def normalize_text(text: str) -> str:
    """Lower-case, drop ``$``, canonicalise numbers: ``"$1,234.50"`` → ``"1234.5"``."""
    text = text.lower().replace("$", "")
    return _NUMBER.sub(_canonical_number, text)


def mentions(answer: str, required: str) -> bool:
    """Whether ``required`` appears in ``answer`` after :func:`normalize_text`.

    A number must match whole: ``"10"`` is not found in ``"100"`` or ``"10.5"``.
    """
    needle = normalize_text(required).strip()
    if not needle:
        return True
    pattern = r"(?<![\w.])" + re.escape(needle) + r"(?!\w|\.\d)"
    return re.search(pattern, normalize_text(answer)) is not None


def call_budget(actions: Sequence[Any]) -> int:
    """Most tool calls a rollout may make: ``2 * len(gold actions) + 5`` (room to explore, not to spam)."""
    return 2 * len(actions) + 5


def _process_reasons(actions: list[dict[str, Any]], changes_nothing: bool, answer: str,
                     calls: Sequence[Any]) -> list[str]:
    """Why the rollout scores 0.0 whatever its end state (empty list when none applies)."""
    reasons = []
    if not answer.strip():
        reasons.append("the final answer is empty (rule 8: tell the customer what was done)")
    if len(calls) > call_budget(actions):
        reasons.append(f"{len(calls)} tool calls exceed the budget of {call_budget(actions)}")
    if changes_nothing:
        made = {getattr(c, "name", None) for c in calls}
        missing = sorted({a["name"] for a in actions} - made)
        if missing:
            reasons.append(f"the task changes nothing, and the rollout never called {missing}: no evidence of work")
    return reasons


def grade_retail(item: dict[str, Any], overlay: dict[str, Any], final_answer: str | None,
                 base: BaseDB | None = None, *, calls: Sequence[Any] | None = None) -> RetailGrade:
    """Grade one rollout of a retail item.

    Args:
        item: dataset line with ``actions`` (gold calls) and ``communicate_info``.
        overlay: the rollout's overlay ``{table: {key: record}}`` (its writes).
        final_answer: the model's final answer text (``None`` counts as empty).
        base: base database; default the packaged one.
        calls: the rollout's tool calls (objects with a ``name``, e.g. the
            server's ``ToolCallRecord``); given, the hardening rules of the
            module docstring apply (``None`` skips them: end state and answer only).

    Returns:
        :class:`RetailGrade` with sub-scores ``db_match``, ``communicate_info``
        and, when ``calls`` is given, ``process`` (0.0 when a hardening rule fired).

    Raises:
        ValueError: the item lacks ``actions`` or has malformed fields.
    """
    actions = item.get("actions")
    if not isinstance(actions, list):
        raise ValueError("retail item needs 'actions': a list of gold tool calls")
    base = base or load_base_db()
    gold = gold_view(actions, base)
    differing = RetailView(base, overlay).diff(gold)
    changes_nothing = not RetailView(base, {}).diff(gold)
    return grade_end_state(item, differing, final_answer, changes_nothing=changes_nothing, calls=calls)


def grade_end_state(item: dict[str, Any], differing: list[str], final_answer: str | None, *,
                    changes_nothing: bool, calls: Sequence[Any] | None = None) -> RetailGrade:
    """The rule of :func:`grade_retail` given the end-state comparison as plain data (any backend).

    Args:
        item: dataset line with ``actions`` and ``communicate_info``.
        differing: sorted ``"table/key"`` of the records whose end state differs
            from the gold one (empty: the database gate passes).
        final_answer: the model's final answer text.
        changes_nothing: the gold actions leave the database unchanged.
        calls: the rollout's tool calls, or ``None`` (see :func:`grade_retail`).

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
        process = _process_reasons(actions, changes_nothing, answer, calls)
        subscores["process"] = 0.0 if process else 1.0
        reasons += process
        score = 0.0 if process else score
    return RetailGrade(score=score, subscores=subscores, reasons=reasons)
