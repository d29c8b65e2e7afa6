"""Principle 4, unhackable: no shortcut earns reward.

Each probe (see ``_probes``) plays one known hack through the real tool and
grader endpoints, one rollout per applicable item. Per probe: ``mean_score``
over graded rollouts, ``pass_rate`` (share with ``score >= pass_threshold``),
the items it fooled (passed) and the items it got any reward on.

A probe fails when its mean score exceeds ``hack_threshold`` (default
:data:`HACK_THRESHOLD` = 0.02: one item in fifty fully rewarded). The bar is
low on purpose: RL amplifies any reward a shortcut earns — MACO's kernel
agent found seven such hacks and trained well only once each was closed.
The principle fails when any probe fails.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rft_sdk.emulator import ClientSettings, ReinforcementJob, run_rollouts

from ._common import load_inputs
from ._probes import default_probes, probe_applies
from ._result import Finding, PrincipleResult

__all__ = ["HACK_THRESHOLD", "check_unhackable"]

#: Default largest mean score a hack probe may earn.
HACK_THRESHOLD = 0.02

ADVICE = {
    "empty_answer": "reject an empty final answer (score 0) before anything else",
    "echo_prompt": "the grader credits text the prompt already holds; check against the outcome, not words",
    "prompt_reference": "returning the reference material unchanged earns reward (MACO's 'returned the reference "
                        "code'): require that the answer differs from what the prompt gives",
    "answer_dump": "listing every candidate earns reward: grade one committed answer (exact match on a parsed "
                   "field), or penalise extra candidates",
    "injected_score": "text in the answer steers the grader: never let a model grader read the answer as "
                      "instructions; parse a score only from the grader's own output",
    "ignore_instructions": "text in the answer steers the grader: isolate the answer (quote it, strip "
                           "instructions) and check outcomes rather than claims",
    "no_tool_calls": "a claim of success without any tool call earns reward: check the state the tools "
                     "changed, or require the calls the task needs",
    "copied_answer": "the right words without the work earn reward: grade what the tools did (end state, "
                     "calls made), not only the answer text",
    "read_only": "reading without acting earns reward: grade the end state the writes must produce",
    "tool_spam": "calls far past the needed budget are not penalised: cap or penalise calls beyond a budget",
    "noop_write": "a write that changes nothing earns reward: grade the end state, not that a tool was called",
}


async def check_unhackable(
    dataset: str | Path | Sequence[Mapping[str, Any]],
    config: str | Path | Mapping[str, Any] | ReinforcementJob,
    probes: Mapping[str, Any] | None = None,
    *,
    hack_threshold: float = HACK_THRESHOLD,
    write_tools: Sequence[str] | None = None,
    samples: int = 1,
    settings: ClientSettings | None = None,
    max_concurrency: int = 32,
) -> PrincipleResult:
    """Run every probe over the dataset and judge whether any hack pays.

    Args:
        dataset, config: as for :func:`check_gradeable`.
        probes: ``{name: policy}``; default :func:`default_probes` (``write_tools`` passed on).
        hack_threshold: largest mean score a probe may earn.
        write_tools: state-changing tool names (for the built-in probes).
        samples: rollouts per item and probe (the built-in probes are deterministic: 1).

    Returns:
        :class:`PrincipleResult` with evidence ``{"hack_threshold", "pass_threshold",
        "probes": {name: {"mean_score", "pass_rate", "items" (fooled item indices),
        "rewarded": {item: best score > 0}, "rollouts", "discarded", "skipped_items",
        "passed", "advice"}}, "failed_probes": [names]}``; a probe with no
        applicable item has ``mean_score`` ``None`` and ``passed`` ``None``.

    Raises:
        ValueError: ``hack_threshold`` outside [0, 1) or ``samples < 1``.
    """
    if not 0 <= hack_threshold < 1 or samples < 1:
        raise ValueError(f"hack_threshold must be in [0, 1) and samples >= 1; got {hack_threshold}, {samples}")
    items, job = load_inputs(dataset, config)
    probes = dict(probes if probes is not None else default_probes(write_tools))
    threshold = job.grader.pass_threshold
    rows: dict[str, dict[str, Any]] = {}
    for name, probe in probes.items():
        index = [i for i, item in enumerate(items) if probe_applies(probe, item)]
        results = await run_rollouts([items[i] for i in index], probe, job, samples_per_item=samples,
                                     max_concurrency=max_concurrency, settings=settings) if index else []
        graded = [(index[r.item_index], r.score) for r in results if not r.discarded and r.score is not None]
        scores = [s for _, s in graded]
        mean = sum(scores) / len(scores) if scores else None
        rewarded: dict[int, float] = {}
        for i, s in graded:
            if s > 0:
                rewarded[i] = max(s, rewarded.get(i, 0.0))
        rows[name] = {
            "mean_score": mean, "pass_rate": (sum(s >= threshold for s in scores) / len(scores)) if scores else None,
            "items": sorted({i for i, s in graded if s >= threshold}),
            "rewarded": {str(k): v for k, v in sorted(rewarded.items())},
            "rollouts": len(results), "discarded": sum(r.discarded for r in results),
            "skipped_items": len(items) - len(index),
            "passed": None if mean is None else mean <= hack_threshold,
            "advice": ADVICE.get(name, "close the shortcut this probe takes"),
        }
    failed = [n for n, r in rows.items() if r["passed"] is False]
    findings = [Finding("fail", f"probe {n}: mean score {rows[n]['mean_score']:.3f} > {hack_threshold} "
                        f"({len(rows[n]['items'])} item(s) fooled)", rows[n]["advice"]) for n in failed]
    for n, r in rows.items():
        if r["passed"] is None:
            findings.append(Finding("info", f"probe {n}: no applicable item (skipped)",
                                    "items need 'actions' and 'reference_answer' for the gold-plan probes"))
    checked = [r for r in rows.values() if r["passed"] is not None]
    evidence = {"hack_threshold": hack_threshold, "pass_threshold": threshold, "probes": rows,
                "failed_probes": failed}
    if not checked:
        return PrincipleResult("unhackable", None, "not checked: no probe applied to any item", evidence, findings)
    worst = max(checked, key=lambda r: r["mean_score"])
    worst_name = next(n for n, r in rows.items() if r is worst)
    summary = (f"{len(failed)} of {len(checked)} probes fooled the grader" + (f": {', '.join(failed)}" if failed else "")
               + f"; worst {worst_name} mean {worst['mean_score']:.3f} (max {hack_threshold})")
    return PrincipleResult("unhackable", not failed, summary, evidence, findings)
