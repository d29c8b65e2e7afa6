"""Summary metrics of an emulator run.

Sources: ``docs/hosted-protocol.md`` section 4 (reward mean and the four
tool metrics the hosted service reports) and the seeds' principle 3 (a task
is learnable only if samples of one item score differently).

Conventions (stated so that numbers can be checked by hand):

* reward mean/std, pass rate: over graded rollouts only; std is the
  population std (ddof = 0); passed means ``score >= pass_threshold``.
* tool calls per rollout (overall and per tool): calls divided by *all*
  rollouts, discarded ones included (their calls reached the endpoints).
* tokens per tool call: no tokenizer is downloaded, so the default estimate
  is ``ceil(len(text) / 4)`` characters-per-token, applied separately to the
  call's ``arguments`` string and to the ``output`` the model saw; pass
  ``token_counter`` to use a real tokenizer.
* tool latency p50/p95/p99: seconds per call including retries, over calls
  that were sent (unknown-tool calls are not); numpy's default linear
  interpolation between order statistics (Hyndman & Fan type 7).
* tool error count: calls whose result is not a 2xx with ``output``.
* learnability, per item over its graded samples: ``best - mean`` (best-of-n
  minus mean score); ``all_same`` when at least 2 samples and max == min.
  ``share_items_all_same`` is over items with at least 2 graded samples.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._rollout import RolloutResult

__all__ = ["TOKEN_ESTIMATE", "estimate_tokens", "server_load", "summarize"]

TOKEN_ESTIMATE = "ceil(chars / 4)"


def estimate_tokens(text: str) -> int:
    """Token estimate ``ceil(len(text) / 4)`` (about 4 characters per token for English/JSON)."""
    return math.ceil(len(text) / 4)


def _mean(xs: Sequence[float]) -> float | None:
    return float(np.mean(xs)) if len(xs) else None


def server_load(calls: Sequence[Any]) -> dict[str, Any]:
    """Whether the tool server was the bottleneck of a run: ``{"calls_queued", "queue_wait_s": {"mean",
    "max"}, "calls_retried", "bottleneck"}``. ``calls_queued``: answers that say they waited in the
    server's admission queue (``x-rft-queue-wait-s``, ``rft_sdk._server._admission``); ``calls_retried``: calls
    that needed more than one attempt (5xx, e.g. 503 with ``Retry-After``, or no answer);
    ``bottleneck``: either happened, i.e. the server, not the policy, set the pace somewhere."""
    waits = [c.queued_s for c in calls if c.queued_s > 0]
    retried = sum(1 for c in calls if c.attempts > 1)
    return {"calls_queued": len(waits),
            "queue_wait_s": {"mean": _mean(waits), "max": max(waits) if waits else None},
            "calls_retried": retried, "bottleneck": bool(waits or retried)}


def summarize(
    results: Sequence[RolloutResult],
    *,
    pass_threshold: float,
    token_counter: Callable[[str], int] | None = None,
    label: str | None = None,
) -> dict[str, Any]:
    """Summarise rollouts into a JSON-ready dict (see module docstring for every rule).

    Shape: ``{"label", "rollouts", "graded", "discarded", "discards_by_reason",
    "truncated", "reward": {"mean", "std", "min", "max"}, "pass_threshold",
    "pass_rate", "tools": {"calls", "calls_per_rollout", "calls_per_rollout_by_tool",
    "mean_tokens_per_tool_call": {"arguments", "output", "total"}, "token_estimate",
    "latency_s": {"p50", "p95", "p99", "mean"}, "error_count", "errors_by_kind",
    "server": {"calls_queued", "queue_wait_s", "calls_retried", "bottleneck"}},
    "learnability": {"items": [...], "mean_best_minus_mean", "share_items_all_same",
    "items_with_2plus_samples"}, "subscores": {name: {"mean", "n"}}, "reasons":
    {reason: count} (the 10 most common), "perturbations"}``. Sub-scores and reasons
    come from the grader's ``x-rft-grade-details`` header, over graded rollouts that
    reported them. Values are ``None`` where there is nothing to average.
    """
    count = token_counter or estimate_tokens
    n = len(results)
    graded = [r for r in results if not r.discarded and r.score is not None]
    scores = [r.score for r in graded if r.score is not None]
    calls = [c for r in results for c in r.tool_calls]
    sent = [c.latency_s for c in calls if c.attempts > 0]
    by_tool = Counter(c.name for c in calls)
    arg_tokens = [count(c.arguments) for c in calls]
    out_tokens = [count(c.output) for c in calls]
    errors = Counter(c.error or f"HTTP {c.status}" for c in calls if not c.ok)

    per_item: dict[int, list[float]] = defaultdict(list)
    for r in graded:
        if r.score is not None:
            per_item[r.item_index].append(r.score)
    item_rows: list[dict[str, Any]] = []
    for idx in sorted({r.item_index for r in results}):
        s = per_item.get(idx, [])
        item_rows.append({
            "item_index": idx, "n": len(s), "mean": _mean(s),
            "best": max(s) if s else None, "std": float(np.std(s)) if s else None,
            "best_minus_mean": (max(s) - float(np.mean(s))) if s else None,
            "all_same": (max(s) == min(s)) if len(s) >= 2 else None,
        })
    multi = [row for row in item_rows if row["n"] >= 2]
    gaps: list[float] = [row["best_minus_mean"] for row in item_rows if row["n"] >= 1]

    subscores: dict[str, list[float]] = defaultdict(list)
    reasons: Counter[str] = Counter()
    for r in graded:
        details = r.grade_details or {}
        for name, value in (details.get("subscores") or {}).items():
            if isinstance(value, (int, float)):
                subscores[name].append(float(value))
        reasons.update(str(x) for x in details.get("reasons") or [])

    pert = Counter(r.perturbation for r in results if r.perturbation is not None)
    return {
        "label": label,
        "rollouts": n,
        "graded": len(graded),
        "discarded": sum(r.discarded for r in results),
        "discards_by_reason": dict(sorted(Counter(r.discard_reason for r in results if r.discarded).items())),
        "truncated": sum(r.truncated for r in results),
        "reward": {
            "mean": _mean(scores),
            "std": float(np.std(scores)) if scores else None,
            "min": min(scores) if scores else None,
            "max": max(scores) if scores else None,
        },
        "pass_threshold": pass_threshold,
        "pass_rate": (sum(s >= pass_threshold for s in scores) / len(scores)) if scores else None,
        "tools": {
            "calls": len(calls),
            "calls_per_rollout": len(calls) / n if n else None,
            "calls_per_rollout_by_tool": {k: v / n for k, v in sorted(by_tool.items())} if n else {},
            "mean_tokens_per_tool_call": {
                "arguments": _mean(arg_tokens), "output": _mean(out_tokens),
                "total": _mean([a + o for a, o in zip(arg_tokens, out_tokens)]),
            },
            "token_estimate": TOKEN_ESTIMATE if token_counter is None else "token_counter",
            "latency_s": {
                "p50": float(np.percentile(sent, 50)) if sent else None,
                "p95": float(np.percentile(sent, 95)) if sent else None,
                "p99": float(np.percentile(sent, 99)) if sent else None,
                "mean": _mean(sent),
            },
            "error_count": sum(errors.values()),
            "errors_by_kind": dict(sorted(errors.items())),
            "server": server_load(calls),
        },
        "learnability": {
            "items": item_rows,
            "mean_best_minus_mean": _mean(gaps),
            "share_items_all_same": (sum(r["all_same"] for r in multi) / len(multi)) if multi else None,
            "items_with_2plus_samples": len(multi),
        },
        "subscores": {k: {"mean": _mean(v), "n": len(v)} for k, v in sorted(subscores.items())},
        "reasons": dict(reasons.most_common(10)),
        "perturbations": dict(sorted(pert.items())),
    }
