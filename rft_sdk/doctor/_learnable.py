"""Principle 3, learnable: for an item, some samples do better than others.

GRPO's advantage of a sample is its score minus the mean of its group (the
item's samples), so an item whose samples all score the same teaches nothing;
the signal lives in items solved sometimes. Measured with the chosen policy,
``samples`` rollouts per item:

* per item: pass rate (share of samples with ``score >= pass_threshold``),
  best-of-n minus mean, whether every sample scored the same;
* the share of items with signal (samples differ), items never and always solved;
* whether rewards are binary (every score is 0 or 1) or continuous.

Fails when fewer than ``min_signal_share`` (default 0.2) of the items with at
least two graded samples have samples that differ; ``None`` (not checked) when no
item has two graded samples, or when the policy declares ``deterministic = True``
(the reference replay: its samples cannot differ, whatever the task).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rft_sdk.emulator import ClientSettings, Policy, ReinforcementJob, RolloutResult, run_rollouts

from ._common import load_inputs, scores_by_item
from ._result import Finding, PrincipleResult

__all__ = ["check_learnable", "learnable_from_results"]

ADVICE = {
    "deterministic": "rft doctor --policy noisy plays the gold with dropped, repeated and altered calls and wrong "
                     "answers (rft_sdk.emulator.NOISE rates): learnable then says whether the grader separates "
                     "better from worse work; a model (--policy openai) says whether the items fit its skill",
    "no_signal": "samples that all score the same give GRPO a zero advantage: nothing is learnt from them. "
                 "Use a stochastic policy (a real model, temperature > 0), and items the model solves sometimes",
    "never": "never solved: too hard for this policy today, the run spends compute on them with no signal; "
             "drop or simplify them, or give partial credit for progress",
    "always": "always solved: already learnt, no signal; move them to the eval set or make them harder",
    "binary": "binary reward: only items solved sometimes carry signal; a continuous reward (partial credit "
              "for sub-goals) gives a gradient on more items",
}


def learnable_from_results(results: Sequence[RolloutResult], n_items: int, pass_threshold: float,
                           min_signal_share: float = 0.2) -> PrincipleResult:
    """The learnable verdict from rollouts already run (see the module docstring for the rules).

    Returns:
        :class:`PrincipleResult` with evidence ``{"samples_per_item", "items":
        [{"item", "scores", "pass_rate", "best_minus_mean", "all_same"}],
        "mean_best_minus_mean", "share_items_all_same", "share_items_with_signal",
        "never_solved", "always_solved", "reward_kind", "distinct_scores",
        "min_signal_share"}``.
    """
    by_item = scores_by_item(results)
    rows: list[dict[str, Any]] = []
    for idx in range(n_items):
        scores = by_item.get(idx, [])
        if not scores:
            rows.append({"item": idx, "scores": [], "pass_rate": None, "best_minus_mean": None, "all_same": None})
            continue
        mean = sum(scores) / len(scores)
        rows.append({"item": idx, "scores": scores,
                     "pass_rate": sum(s >= pass_threshold for s in scores) / len(scores),
                     "best_minus_mean": max(scores) - mean,
                     "all_same": (max(scores) == min(scores)) if len(scores) >= 2 else None})
    multi = [r for r in rows if r["all_same"] is not None]
    scored = [r for r in rows if r["pass_rate"] is not None]
    never = [r["item"] for r in scored if r["pass_rate"] == 0.0]
    always = [r["item"] for r in scored if r["pass_rate"] == 1.0]
    distinct = sorted({s for r in scored for s in r["scores"]})
    kind = "none" if not distinct else ("binary" if set(distinct) <= {0.0, 1.0} else "continuous")
    signal = [r for r in multi if not r["all_same"]]
    share_signal = len(signal) / len(multi) if multi else None
    evidence: dict[str, Any] = {
        "samples_per_item": max((len(r["scores"]) for r in rows), default=0),
        "items": rows,
        "mean_best_minus_mean": (sum(r["best_minus_mean"] for r in scored) / len(scored)) if scored else None,
        "share_items_all_same": (1.0 - share_signal) if share_signal is not None else None,
        "share_items_with_signal": share_signal,
        "never_solved": never, "always_solved": always,
        "reward_kind": kind, "distinct_scores": distinct[:20], "min_signal_share": min_signal_share,
    }
    findings = []
    if share_signal is None:
        findings.append(Finding("warn", "no item has two graded samples", "run with --samples 2 or more"))
        return PrincipleResult("learnable", None, "not checked: fewer than 2 graded samples per item",
                               evidence, findings)
    passed = share_signal >= min_signal_share
    findings.append(Finding("fail" if not passed else "info",
                            f"{1 - share_signal:.0%} of items have samples that all score the same", ADVICE["no_signal"]))
    if never:
        findings.append(Finding("warn" if len(never) > len(scored) / 2 else "info",
                                f"{len(never)} item(s) never solved", ADVICE["never"]))
    if always:
        findings.append(Finding("warn" if len(always) > len(scored) / 2 else "info",
                                f"{len(always)} item(s) always solved", ADVICE["always"]))
    if kind == "binary":
        findings.append(Finding("info", "rewards are binary (0 or 1)", ADVICE["binary"]))
    summary = (f"{share_signal:.0%} of items with signal (min {min_signal_share:.0%}), "
               f"best-of-n − mean {evidence['mean_best_minus_mean']:.3f}, {kind} reward, "
               f"never/always solved {len(never)}/{len(always)}")
    return PrincipleResult("learnable", passed, summary, evidence, findings)


async def check_learnable(
    dataset: str | Path | Sequence[Mapping[str, Any]],
    config: str | Path | Mapping[str, Any] | ReinforcementJob,
    policy: Policy,
    *,
    samples: int = 4,
    min_signal_share: float = 0.2,
    settings: ClientSettings | None = None,
    max_concurrency: int = 32,
) -> tuple[PrincipleResult, list[RolloutResult]]:
    """Roll ``policy`` out ``samples`` times per item and judge learnability.

    Returns:
        ``(result, rollouts)``; the rollouts can be re-graded by
        :func:`check_gradeable` and compared by :func:`check_production_like`.

    Raises:
        ValueError: ``samples < 2`` (one sample per item cannot show variance).
    """
    if samples < 2:
        raise ValueError(f"samples must be >= 2 to measure within-item variance, got {samples}")
    items, job = load_inputs(dataset, config)
    results = await run_rollouts(items, policy, job, samples_per_item=samples, max_concurrency=max_concurrency,
                                 settings=settings)
    result = learnable_from_results(results, len(items), job.grader.pass_threshold, min_signal_share)
    if getattr(policy, "deterministic", False):
        # every sample of an item is the same by construction: no verdict on the task from it (issue 36)
        result.passed = None
        result.summary = (f"not checked: the policy ({type(policy).__name__}) is deterministic, so samples of "
                          f"an item cannot differ; use --policy noisy (the gold with mistakes) or a model")
        result.findings = [Finding("info", result.summary, ADVICE["deterministic"])]
    return result, results
