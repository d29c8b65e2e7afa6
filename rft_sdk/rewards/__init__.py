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
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable, Iterable, Mapping

from .._definitions._grading import Grade
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
    "precision_recall_f1",
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
