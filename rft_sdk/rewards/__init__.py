"""Small reward building blocks that compose into a :class:`~rft_sdk.Grade`.

Not a framework: plain functions returning floats or ``Grade`` objects, so a
grader stays ordinary Python. Typical layered reward (Cosine-style: a hard
gate, then secondary criteria; Kodo-style tool budget; Cognition-style F1)::

    from rft_sdk import rewards

    @server.grader
    def grade(ctx):
        prf = rewards.precision_recall_f1(predicted=files_chosen, expected=ctx.item["files"])
        g = rewards.weighted_sum({"f1": prf.f1, "answer": rewards.numeric_match(x, 42.0, rel_tol=0.01)},
                                 weights={"f1": 0.7, "answer": 0.3})
        g = rewards.apply_penalty(g, "tool_budget", rewards.budget_penalty(ctx.count(), budget=8, cost_per_call=0.05))
        return rewards.gate(g, passed=ctx.state.get("tests_pass", False), name="tests_pass")

LLM judge behind a strict gate (the judge is only called, and can only add,
when the gate passed)::

    judge = rewards.LLMJudge("http://localhost:8000/v1", "judge-model", rubric="1 if ... else 0")
    g = await rewards.gated_judge(0.8, passed=tests_pass, judge=judge, content={...}, bonus=0.2)

The three helpers of the honest-grader recipes (docs/honest-graders.md), each one rule of the honest
grader contract (docs/grader-contract.md)::

    from rft_sdk.rewards import over_budget, returned, same

    if over_budget(ctx):                                    # rule 16: refused calls count too
        return 0.0
    read_it = any(r.get("id") == ctx.item["book_id"] for c in ctx.trajectory for r in returned(c))  # rule 15
    stored = same(ctx.state.get("bookings", {}), ctx.item["expected_bookings"], {"deposit": 0.005})   # rule 8
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

from .._definitions._grading import Grade, GradingContext
from .._definitions._rollout import ToolCallRecord
from ._judge import Judge, JudgeError, JudgeVerdict, LLMJudge, gated_judge

__all__ = [
    "PRF",
    "Judge",
    "JudgeError",
    "JudgeVerdict",
    "LLMJudge",
    "apply_penalty",
    "budget_penalty",
    "gate",
    "gated_judge",
    "numeric_match",
    "over_budget",
    "precision_recall_f1",
    "returned",
    "same",
    "weighted_sum",
]


def weighted_sum(scores: Mapping[str, float], weights: Mapping[str, float] | None = None, *,
                 normalize: bool = True) -> Grade:
    """``Grade(score = Σ w_k·s_k [/ Σ w_k], subscores = scores)``.

    Args:
        scores: named sub-scores.
        weights: weight per name (missing names weigh 0; ``None`` = all 1).
        normalize: divide by the sum of weights (so [0, 1] sub-scores give a [0, 1] score).

    Raises:
        ValueError: empty ``scores``, a negative/non-finite weight, a weight for an
            unknown name, or a zero weight sum with ``normalize=True``.
    """
    if not scores:
        raise ValueError("weighted_sum needs at least one sub-score")
    weights = dict(weights) if weights is not None else {k: 1.0 for k in scores}
    unknown = set(weights) - set(scores)
    if unknown:
        raise ValueError(f"weights for unknown sub-scores: {sorted(unknown)}")
    for name, w in weights.items():
        if not math.isfinite(w) or w < 0:
            raise ValueError(f"weight {name!r} must be finite and >= 0, got {w}")
    total_w = sum(weights.values())
    total = sum(weights.get(k, 0.0) * float(v) for k, v in scores.items())
    if normalize:
        if total_w == 0:
            raise ValueError("weights sum to 0")
        total /= total_w
    return Grade(total, {k: float(v) for k, v in scores.items()}, [])


def gate(grade: Grade | float, passed: bool, *, name: str = "gate", reason: str | None = None) -> Grade:
    """Hard requirement: score 0 when ``passed`` is false, else ``grade`` unchanged.

    The gate's outcome is added as sub-score ``name`` (1.0/0.0) and, when
    failed, ``reason`` (default ``"<name> failed"``) is appended to the reasons.
    """
    g = grade if isinstance(grade, Grade) else Grade(float(grade))
    subscores = {**g.subscores, name: 1.0 if passed else 0.0}
    if passed:
        return Grade(g.score, subscores, list(g.reasons))
    return Grade(0.0, subscores, [*g.reasons, reason or f"{name} failed"])


def budget_penalty(n_calls: int, budget: int, cost_per_call: float, max_penalty: float | None = None) -> float:
    """Penalty ``cost_per_call · max(0, n_calls - budget)``, capped at ``max_penalty``.

    Raises:
        ValueError: negative ``budget``/``n_calls`` or ``cost_per_call``.
    """
    if n_calls < 0 or budget < 0 or cost_per_call < 0:
        raise ValueError("n_calls, budget and cost_per_call must be >= 0")
    penalty = cost_per_call * max(0, n_calls - budget)
    return min(penalty, max_penalty) if max_penalty is not None else penalty


def apply_penalty(grade: Grade | float, name: str, penalty: float, *, floor: float = 0.0) -> Grade:
    """Subtract ``penalty`` (>= 0) from the score, not below ``floor``; recorded as
    sub-score ``name`` = ``-penalty`` and a reason when non-zero.

    Raises:
        ValueError: negative or non-finite ``penalty``.
    """
    if not math.isfinite(penalty) or penalty < 0:
        raise ValueError(f"penalty must be finite and >= 0, got {penalty}")
    g = grade if isinstance(grade, Grade) else Grade(float(grade))
    reasons = list(g.reasons) + ([f"{name}: -{penalty:g}"] if penalty else [])
    return Grade(max(floor, g.score - penalty), {**g.subscores, name: -float(penalty)}, reasons)


@dataclasses.dataclass(frozen=True)
class PRF:
    """Set precision, recall and F1 (all in [0, 1]) with the counts behind them."""

    precision: float
    recall: float
    f1: float
    true_positives: int
    predicted: int
    expected: int


def precision_recall_f1(predicted: Iterable[Hashable], expected: Iterable[Hashable]) -> PRF:
    """Set-based precision = |P∩E|/|P|, recall = |P∩E|/|E|, F1 = harmonic mean.

    Duplicates are ignored (sets). Conventions for empty sets: both empty →
    1, 1, 1 (nothing to find, nothing claimed); P empty, E not → precision 1,
    recall 0; E empty, P not → precision 0, recall 1; F1 = 0 when P+R = 0.
    """
    p, e = set(predicted), set(expected)
    tp = len(p & e)
    precision = tp / len(p) if p else 1.0
    recall = tp / len(e) if e else 1.0
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return PRF(precision, recall, f1, tp, len(p), len(e))


def numeric_match(value: float | None, target: float, *, abs_tol: float = 0.0, rel_tol: float = 0.0,
                  partial_within: float | None = None) -> float:
    """1.0 when ``|value - target| <= max(abs_tol, rel_tol·|target|)``; otherwise
    linear partial credit falling to 0 at ``partial_within`` beyond that
    tolerance (0.0 at once when ``partial_within`` is None). ``None`` or a
    non-finite value scores 0.0.

    Raises:
        ValueError: negative tolerances or ``partial_within <= 0``.
    """
    if abs_tol < 0 or rel_tol < 0 or (partial_within is not None and partial_within <= 0):
        raise ValueError("tolerances must be >= 0 and partial_within > 0")
    if value is None or not math.isfinite(value):
        return 0.0
    tol = max(abs_tol, rel_tol * abs(target))
    excess = abs(value - target) - tol
    if excess <= 0:
        return 1.0
    if partial_within is None:
        return 0.0
    return max(0.0, 1.0 - excess / partial_within)


def over_budget(ctx: GradingContext) -> bool:
    """Whether the rollout made more recorded calls than the item's ``max_tool_calls``.

    Every recorded call counts, refused ones (4xx) too: the count is ``ctx.count()``, never the
    successful calls alone, so that calls the server refuses cannot pass the budget unseen (the
    doctor's ``refused_spam``). Contract rule 16 (docs/grader-contract.md): past the item's budget
    the score is 0, not a penalty::

        if over_budget(ctx):
            return 0.0

    Args:
        ctx: the grading context; its ``item`` may hold ``max_tool_calls`` (a number).

    Returns:
        ``True`` when ``ctx.item["max_tool_calls"]`` is set (not ``None``) and ``ctx.count()``
        exceeds it; ``False`` for an item without one (no budget to enforce).

    Raises:
        TypeError: a ``max_tool_calls`` that is not a number (``"3"``): write it as one in the dataset.
    """
    budget = ctx.item.get("max_tool_calls")
    return budget is not None and ctx.count() > budget


def returned(call: ToolCallRecord, *, deep: bool = False) -> list[dict[str, Any]]:
    """The JSON objects a successful call returned: the object, or each object of a list.

    A tool's ``dict`` or ``list`` reaches the model, and ``call.output``, as compact JSON text, so
    ``json.loads(call.output)`` gives back what the tool returned (docs/tools.md, what the SDK
    guarantees). This is the evidence of a read of contract rule 15 (docs/grader-contract.md): a
    successful read, by any tool, whose answer holds the item's entity; a refused call changed and
    showed nothing (rule 5)::

        read_it = any(r.get("id") == ctx.item["invoice_id"] for c in ctx.trajectory for r in returned(c))

    A page of a listing holds its records in a field (``{"page": 1, "runs": [{"run_id": ...}]}``):
    ``deep=True`` gives those records too, so a record read by id and the same record found in a
    listing count alike::

        read_it = any(r.get("run_id") == ctx.item["run_id"] for c in ctx.trajectory
                      for r in returned(c, deep=True))

    Args:
        call: one recorded call (``ctx.trajectory``'s ``ToolCallRecord``, or anything with ``ok``
            and ``output``).
        deep: also every object nested in those objects' fields, at any depth (in a list field or
            an object field), each after the object that holds it, in document order.

    Returns:
        ``[obj]`` when ``call.output`` decodes to a JSON object; the objects of a JSON list, in
        order (a list's other values skipped); ``[]`` for a refused call (``not call.ok``), an
        output that is ``None`` or ``""``, text that is not JSON, or any other JSON value (a
        string, a number, ``null``). Without ``deep`` it looks one level deep: the objects nested
        in an object's own fields are not unpacked. Never raises for text that is not JSON.
    """
    try:
        out = json.loads(call.output) if call.ok and call.output else None
    except ValueError:
        return []
    if isinstance(out, dict):
        top = [out]
    else:
        top = [o for o in out if isinstance(o, dict)] if isinstance(out, list) else []
    if not deep:
        return top
    found: list[dict[str, Any]] = []
    pending: list[Any] = list(reversed(top))
    while pending:  # depth first, in document order: an object, then what its fields hold
        value = pending.pop()
        if isinstance(value, dict):
            found.append(value)
            pending.extend(reversed(list(value.values())))
        elif isinstance(value, list):
            pending.extend(reversed(value))
    return found


def same(got: Any, want: Any, tolerance: Mapping[str, float], field: str = "") -> bool:
    """Decoded JSON equal by value, except a number under a key ``tolerance`` names: within that of the expected one.

    Compares a stored end state (``ctx.state``, decoded JSON) with the item's expected one at the
    precision the task states (contract rule 8, docs/grader-contract.md): objects must have the
    same keys (a missing or an extra key is unequal: the whole end state, rule 2), lists the same
    length and order, and every other value compares with ``==``; a number whose nearest enclosing
    key is named in ``tolerance`` (``{"deposit": 0.005}``: half a unit of the stated precision)
    passes when ``abs(got - want) <= tolerance[key]`` (inclusive: a difference equal to the tolerance
    passes where floats hold it exactly, as ``2.5`` against ``2`` under ``0.5``; ``4.15`` against ``4.1``
    under ``0.05`` differs by ``0.05000000000000071`` and does not). Under such a key a ``nan`` or ``inf`` is
    never within the tolerance, ``inf`` against ``inf`` included (rule 10: fail closed). A ``bool``
    is not a number here: it is never compared within a tolerance, so ``True`` against ``1.004``
    is unequal under ``{"x": 0.005}``, and a ``bool`` equals only the same ``bool`` (JSON's ``true`` is
    not ``1``, though Python's ``True == 1``). Every other value compares with Python's ``==``: ``2``
    equals ``2.0``.

    Args:
        got: the decoded JSON to check (dicts, lists, strings, numbers, bools, ``None``).
        want: the expected decoded JSON, of the same shapes.
        tolerance: per key, the largest allowed absolute difference of a number under that key
            (``{}``: everything exact).
        field: the key ``got`` and ``want`` sit under: the recursion sets it (a list's elements keep
            the key of the list), and a caller comparing one number passes the key whose tolerance
            applies (``same(rate, 7.0, {"rate_pct": 0.005}, "rate_pct")``); ``""`` names no key.

    Returns:
        ``True`` when ``got`` equals ``want`` by these rules, else ``False``. Never raises for
        decoded JSON.
    """
    if isinstance(want, dict):
        return isinstance(got, dict) and got.keys() == want.keys() and all(
            same(got[k], want[k], tolerance, k) for k in want)
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(
            same(g, w, tolerance, field) for g, w in zip(got, want))
    if isinstance(got, bool) or isinstance(want, bool):  # JSON's true is no number: never equal to 1
        return type(got) is type(want) and got == want
    if field in tolerance and type(got) in (int, float) and type(want) in (int, float):
        return bool(abs(got - want) <= tolerance[field])  # nan and inf are never within it
    return bool(got == want)
