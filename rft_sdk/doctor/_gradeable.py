"""Principle 1, gradeable: the grader gives the same, correct verdict every time.

Checks, through the real endpoints:

* **replays**: the items' gold solutions (reference replay of ``actions`` then
  ``reference_answer``) are rolled out ``replays`` times each, each time with
  a fresh ``trace_id``; an item whose replays score differently exposes a
  non-deterministic grader (or tools).
* **re-grades**: every recorded trajectory is sent to the grader again
  ``regrades`` times with the same ``{"sample", "item", "trace_id"}``; any
  other score is non-determinism. (An ``rft_sdk`` server answers an identical
  request for a released rollout from its stored grade, so for it this checks
  idempotent retries; a stateless grader is re-run.)
* **gold**: the share of items whose best reference replay scores below the
  job's ``pass_threshold`` — a grader that fails its own gold.
* **valid alternatives** (``_alternatives``): every item's ``alternatives``
  (other valid paths to the same outcome) and every user probe whose
  ``intent`` is ``"valid"`` must score at least ``pass_threshold`` — a grader
  that matches the gold's path rejects correct solutions;
* **errors and latency**: grader failures after the emulator's retries, and
  grader latency p50/p95 against the job's ``rate_limit`` (requests per
  second): by Little's law (L = λW) the grader must hold about
  ``rate_limit × latency`` requests in flight to keep up.

Fails on any non-determinism, any grader error, any gold below the threshold,
or any valid alternative rejected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import httpx

from rft_sdk._wire._tls import ssl_context
from rft_sdk.emulator import (
    ClientSettings,
    EndpointClient,
    EndpointFailure,
    ReferenceReplayPolicy,
    ReinforcementJob,
    RolloutResult,
    run_rollouts,
)

from ._alternatives import ALTERNATIVES_FIELD, check_alternatives
from ._common import has_reference, load_inputs, percentiles, scores_by_item
from ._result import Finding, PrincipleResult

__all__ = ["check_gradeable"]

#: Scores closer than this count as equal (float noise, not non-determinism).
SCORE_TOLERANCE = 1e-9


async def _regrade(results: Sequence[RolloutResult], items: Sequence[Mapping[str, Any]], job: ReinforcementJob,
                   regrades: int, settings: ClientSettings, max_concurrency: int
                   ) -> tuple[list[dict[str, Any]], list[float], list[str]]:
    """Re-send each graded rollout's grading request; return (differing, latencies, errors)."""
    differing: list[dict[str, Any]] = []
    latencies: list[float] = []
    errors: list[str] = []
    limiter = anyio.CapacityLimiter(max_concurrency)
    async with httpx.AsyncClient(timeout=httpx.Timeout(settings.timeout_s), verify=ssl_context()) as http:
        client = EndpointClient(http, settings, {})

        async def one(r: RolloutResult) -> None:
            scores = []
            for _ in range(regrades):
                async with limiter:
                    try:
                        g = await client.grade(job.grader, r.sample or {}, item=dict(items[r.item_index]),
                                               trace_id=r.trace_id)
                    except EndpointFailure as exc:
                        errors.append(f"item {r.item_index}: {exc}")
                        continue
                latencies.append(g.latency_s)
                scores.append(g.score)
            if any(abs(s - (r.score or 0.0)) > SCORE_TOLERANCE for s in scores):
                differing.append({"item": r.item_index, "trace_id": r.trace_id, "recorded": r.score,
                                  "regraded": scores})

        async with anyio.create_task_group() as tg:
            for r in results:
                if not r.discarded and r.score is not None and r.sample is not None:
                    tg.start_soon(one, r)
    return differing, latencies, errors


async def check_gradeable(
    dataset: str | Path | Sequence[Mapping[str, Any]],
    config: str | Path | Mapping[str, Any] | ReinforcementJob,
    *,
    results: Sequence[RolloutResult] | None = None,
    replays: int = 3,
    regrades: int = 2,
    valid_probes: Mapping[str, Any] | None = None,
    alternatives_field: str = ALTERNATIVES_FIELD,
    settings: ClientSettings | None = None,
    max_concurrency: int = 32,
) -> PrincipleResult:
    """Check that the grader is deterministic, error-free and accepts its own gold and every valid path.

    Args:
        dataset: dataset JSONL path or items.
        config: job config (path, dict or :class:`ReinforcementJob`).
        results: recorded rollouts to re-grade as well (e.g. the learnable run's).
        replays: reference replays per item (needs ``actions`` + ``reference_answer``).
        regrades: re-grades per recorded trajectory.
        valid_probes: ``{name: policy}`` of solutions that must pass (``intent`` ``"valid"``).
        alternatives_field: the item field holding alternative solutions (see ``_alternatives``).
        settings: emulator client settings (retries, timeouts).
        max_concurrency: rollouts / grading requests in flight.

    Returns:
        :class:`PrincipleResult` with evidence ``{"items", "replays", "regrades",
        "nondeterministic_items", "nondeterministic_examples", "grader_errors",
        "error_examples", "gold_checked", "gold_below_threshold_share",
        "gold_below_threshold_items", "gold_truncated_items", "pass_threshold", "grader_latency_s":
        {"p50", "p95", "max"}, "rate_limit", "grades_in_flight_at_rate_limit",
        "alternatives_checked", "alternatives_rejected_count", "alternatives_rejected" (first 20):
        [{"item", "path", "score", "reasons"}],
        "alternatives_by_path": {path: {"checked", "rejected"}}}``.
        ``passed`` is ``None`` when there was nothing to grade.

    Raises:
        ValueError: ``replays`` or ``regrades`` below 1; malformed ``alternatives``.
    """
    if replays < 1 or regrades < 1:
        raise ValueError(f"replays ({replays}) and regrades ({regrades}) must be >= 1")
    items, job = load_inputs(dataset, config)
    settings = settings or ClientSettings()
    threshold = job.grader.pass_threshold
    findings: list[Finding] = []
    gold_checked = has_reference(items)
    recorded: list[RolloutResult] = list(results or [])
    nondet: set[int] = set()
    examples: list[dict[str, Any]] = []
    errors: list[str] = []
    gold_bad: list[int] = []
    gold_cut: list[int] = []  # gold replays cut off at max_episode_steps before their answer
    if gold_checked:
        ref = await run_rollouts(items, ReferenceReplayPolicy(), job, samples_per_item=replays,
                                 max_concurrency=max_concurrency, settings=settings)
        recorded += ref
        errors += [f"item {r.item_index}: {r.discard_reason}: {r.discard_detail}" for r in ref if r.discarded]
        by_item = scores_by_item(ref)
        for idx, scores in sorted(by_item.items()):
            if max(scores) - min(scores) > SCORE_TOLERANCE:
                nondet.add(idx)
                examples.append({"item": idx, "replay_scores": scores})
            if max(scores) < threshold:
                gold_bad.append(idx)
        gold_bad = sorted([*gold_bad, *(i for i in range(len(items)) if i not in by_item)])  # all discarded
        gold_cut = sorted({r.item_index for r in ref if r.truncated})
    else:
        findings.append(Finding("warn", "items carry no 'actions' + 'reference_answer': gold solutions not replayed",
                                "add the gold tool calls and answer to each item so the grader can be checked "
                                "against a known-good solution"))
    alts = await check_alternatives(items, job, valid_probes, field=alternatives_field, settings=settings,
                                    max_concurrency=max_concurrency)
    differing, latencies, regrade_errors = await _regrade(recorded, items, job, regrades, settings, max_concurrency)
    errors += regrade_errors
    for d in differing:
        nondet.add(d["item"])
        examples.append(d)
    lat = percentiles(latencies)
    in_flight = None if lat["p95"] is None else job.grader.rate_limit * lat["p95"]
    evidence: dict[str, Any] = {
        "items": len(items), "replays": replays if gold_checked else 0, "regrades": regrades,
        "nondeterministic_items": sorted(nondet), "nondeterministic_examples": examples[:10],
        "grader_errors": len(errors), "error_examples": errors[:10],
        "gold_checked": gold_checked,
        "gold_below_threshold_share": len(gold_bad) / len(items) if gold_checked and items else None,
        "gold_below_threshold_items": gold_bad, "gold_truncated_items": gold_cut, "pass_threshold": threshold,
        "grader_latency_s": lat, "rate_limit": job.grader.rate_limit,
        "grades_in_flight_at_rate_limit": in_flight,
        "alternatives_checked": alts["checked"], "alternatives_rejected_count": len(alts["rejected"]),
        "alternatives_rejected": alts["rejected"][:20],
        "alternatives_by_path": alts["by_path"], "alternatives_truncated": len(alts["truncated"]),
    }
    if nondet:
        findings.append(Finding("fail", f"{len(nondet)} item(s) scored differently for the same trajectory",
                                "a noisy reward is noise in every advantage: make the grader deterministic "
                                "(no sampling, fixed seeds, temperature 0 for model graders, no wall-clock input)"))
    if errors:
        findings.append(Finding("fail", f"{len(errors)} grader/tool failure(s) after retries",
                                "every failed grade is a discarded rollout the run pays for: fix the errors "
                                "shown in error_examples"))
    if gold_cut:
        findings.append(Finding("fail" if set(gold_cut) & set(gold_bad) else "warn",
                                f"{len(gold_cut)} gold solution(s) need more turns than max_episode_steps="
                                f"{job.max_episode_steps} and were cut off before their answer (items "
                                f"{', '.join(map(str, gold_cut[:10]))})",
                                "each gold call is one turn and the answer one more: raise "
                                "method.reinforcement.max_episode_steps in the job, or shorten the gold"))
    if gold_bad:
        findings.append(Finding("fail", f"{len(gold_bad)} of {len(items)} gold solutions score below the pass "
                                f"threshold {threshold}",
                                "the grader rejects a known-good answer: fix the grader or the item's gold"
                                + (" (the cut-off gold replays above count here)" if gold_cut else "")))
    if alts["rejected"]:
        first = alts["rejected"][0]
        paths = sorted({r["path"] for r in alts["rejected"]})
        findings.append(Finding("fail", f"the grader rejects {len(alts['rejected'])} of {alts['checked']} valid "
                                f"alternative solutions ({', '.join(paths)}; e.g. item {first['item']} "
                                f"{first['path']!r} scored {first['score']}: {'; '.join(first['reasons'])[:160]})",
                                "grade the outcome (end state, facts the answer states and where they came from), "
                                "not the path: a correct solution that differs from the gold must score like it"))
    if alts["truncated"]:
        findings.append(Finding("warn", f"{len(alts['truncated'])} valid alternative solution(s) need more turns "
                                f"than max_episode_steps={job.max_episode_steps} (e.g. item "
                                f"{alts['truncated'][0]['item']} {alts['truncated'][0]['path']!r})",
                                "a policy taking that path is cut off before it answers: raise max_episode_steps"))
    if in_flight is not None and in_flight > 64:
        findings.append(Finding("warn", f"at rate_limit {job.grader.rate_limit}/s and p95 latency "
                                f"{lat['p95']:.3f} s the grader must serve {in_flight:.0f} requests at once",
                                "lower grader.rate_limit or make the grader faster / scale it out"))
    if not recorded and not alts["checked"]:
        return PrincipleResult("gradeable", None, "not checked: no gold solutions and no recorded rollouts",
                               evidence, findings)
    passed = not nondet and not errors and not gold_bad and not alts["rejected"]
    summary = (f"{len(nondet)} non-deterministic item(s), {len(errors)} error(s), gold below threshold: "
               + (f"{len(gold_bad)}/{len(items)}" if gold_checked else "not checked")
               + (f", valid alternatives rejected {len(alts['rejected'])}/{alts['checked']}" if alts["checked"]
                  else "")
               + (f", grader p95 {lat['p95'] * 1000:.1f} ms" if lat["p95"] is not None else ""))
    return PrincipleResult("gradeable", passed, summary, evidence, findings)
