"""``run_doctor``: the four principles in one pre-flight run against the live endpoints."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rft_sdk.emulator import ClientSettings, Policy, ReferenceReplayPolicy, ReinforcementJob, target_problems
from rft_sdk.emulator._discards import discard_digest

from ._common import check_target, has_reference, load_inputs
from ._gradeable import check_gradeable
from ._learnable import check_learnable
from ._probes import VALID, probe_intent
from ._production import check_production_like
from ._result import Finding, PrincipleResult
from ._severity import HACK_SHARE, HACK_THRESHOLD
from ._suite import default_probes
from ._unhackable import check_unhackable

__all__ = ["PRINCIPLES", "DoctorReport", "run_doctor"]

#: The principles, in report order.
PRINCIPLES = ("gradeable", "production_like", "learnable", "unhackable")


@dataclass
class DoctorReport:
    """All verdicts of one doctor run.

    Attributes:
        principles: name → :class:`PrincipleResult`, in :data:`PRINCIPLES` order (those run).
        meta: ``{"target", "target_problems", "items", "policy", "samples", "pass_threshold",
            "user_probes", "skipped_probes", "budget", "discards", ...}`` for the report header;
            ``discards`` is the learnable run's :func:`discard_digest` (the policy's own
            rollouts; ``None`` when learnable was not run), which ``rft doctor`` holds
            against ``--max-discard-share``.
    """

    principles: dict[str, PrincipleResult]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """False when any principle failed; principles not checked (``None``) and warnings do not fail the run."""
        return not any(p.passed is False for p in self.principles.values())

    @property
    def warnings(self) -> int:
        """How many ``warn`` findings the principles raised (they never change the exit code)."""
        return sum(f.severity == "warn" for p in self.principles.values() for f in p.findings)

    @property
    def exit_code(self) -> int:
        """0 when :attr:`passed`, else 1 (the ``rft doctor`` exit status)."""
        return 0 if self.passed else 1

    def to_dict(self) -> dict[str, Any]:
        """The ``doctor.json`` shape: ``{"passed", "warnings", "meta", "principles": {name: {"passed", ...}}}``."""
        return {"passed": self.passed, "warnings": self.warnings, "meta": self.meta,
                "principles": {n: p.to_dict() for n, p in self.principles.items()}}


async def run_doctor(
    dataset: str | Path | Sequence[Mapping[str, Any]],
    config: str | Path | Mapping[str, Any] | ReinforcementJob,
    *,
    policy: Policy | None = None,
    production_log: str | Path | Sequence[Mapping[str, Any]] | None = None,
    probes: Mapping[str, Any] | None = None,
    samples: int = 4,
    hack_threshold: float = HACK_THRESHOLD,
    hack_share: float = HACK_SHARE,
    write_tools: Collection[str] | None = None,
    budget: int | None = None,
    skip_probes: Collection[str] = (),
    replays: int = 3,
    regrades: int = 2,
    min_signal_share: float = 0.2,
    max_psi: float = 0.25,
    target: str = "openai",
    principles: Collection[str] = PRINCIPLES,
    settings: ClientSettings | None = None,
    max_concurrency: int = 32,
    max_discard_share: float | None = None,
) -> DoctorReport:
    """Run the chosen principles and return their verdicts.

    Args:
        dataset, config: dataset JSONL path (or items) and job config.
        policy: the policy for the learnable check; default reference replay
            when items carry gold fields (deterministic: it shows no variance).
        production_log: JSONL path or lines, for the production-like check.
        probes: extra probes ``{name: policy}`` (a name equal to a built-in one replaces
            it); those whose ``intent`` is ``"valid"`` must pass (gradeable), the others
            are judged by the severity rule (unhackable). See ``_probes``.
        samples: rollouts per item for the learnable check.
        hack_threshold, hack_share, write_tools, budget: see :func:`check_unhackable`.
        skip_probes: probe names to waive (recorded in the report).
        replays, regrades: see :func:`check_gradeable`.
        min_signal_share: see :func:`check_learnable`; max_psi: see :func:`check_production_like`.
        target: the hosted service played, ``"openai"`` or ``"azure"`` (Azure's grader
            sends no headers: a grader that needs them fails there).
        principles: which to run (subset of :data:`PRINCIPLES`).
        max_discard_share: when the learnable run (the policy's own rollouts) discards more than
            this share, the other principles are not run (reported NOT CHECKED, naming the
            discards): their rollouts would meet the same broken tool or grader. ``None``: run all.

    Raises:
        ValueError: an unknown principle, target or skipped probe, bad counts, a probe with an
        unknown intent; DatasetError / JobConfigError from loading; ProductionLogError for an
        unreadable log.
    """
    check_target(target)
    unknown = set(principles) - set(PRINCIPLES)
    if unknown:
        raise ValueError(f"unknown principle(s) {sorted(unknown)}; choose from {list(PRINCIPLES)}")
    # ``rft doctor`` runs ``rft validate``'s checks (run_preflight) before this; here the inputs
    # are loaded once by the hosted rules and shared by every principle.
    items, job = load_inputs(dataset, config)
    settings = dataclasses.replace(settings or ClientSettings(), target=target)
    if policy is None:
        if not has_reference(items) and "learnable" in principles:
            raise ValueError("items carry no 'actions'/'reference_answer': pass a policy for the learnable check")
        policy = ReferenceReplayPolicy()
    suite = {**default_probes(), **(probes or {})}
    waived = sorted(set(skip_probes) - set(suite))
    if waived:
        raise ValueError(f"--skip-probes names no probe: {waived}; probes are {sorted(suite)}")
    valid = {n: p for n, p in suite.items() if probe_intent(p, n) == VALID and n not in skip_probes}
    out: dict[str, PrincipleResult] = {}
    rollouts = None
    if "learnable" in principles:
        out["learnable"], rollouts = await check_learnable(items, job, policy, samples=samples,
                                                           min_signal_share=min_signal_share, settings=settings,
                                                           max_concurrency=max_concurrency)
    digest = discard_digest(rollouts) if rollouts is not None else None
    broken = (max_discard_share is not None and digest is not None and digest["share"] > max_discard_share)
    if broken and digest is not None:
        top = digest["top"][0]
        why = (f"not checked: {digest['discarded']} of {digest['rollouts']} of the policy's rollouts were discarded "
               f"(mostly {top['reason']}); fix that first")
        for name in PRINCIPLES:
            if name in principles and name not in out:
                out[name] = PrincipleResult(name, None, why)
    if "gradeable" in principles and not broken:
        out["gradeable"] = await check_gradeable(items, job, results=rollouts, replays=replays, regrades=regrades,
                                                 valid_probes=valid, settings=settings,
                                                 max_concurrency=max_concurrency)
    if "production_like" in principles and not broken:
        out["production_like"] = check_production_like(items, production_log, rollouts=rollouts, max_psi=max_psi)
    if "unhackable" in principles and not broken:
        # the built-in probes are built once the write tools are known (check_unhackable learns them)
        out["unhackable"] = await check_unhackable(items, job, extra_probes=probes, hack_threshold=hack_threshold,
                                                   hack_share=hack_share, write_tools=write_tools, budget=budget,
                                                   skip=skip_probes, settings=settings,
                                                   max_concurrency=max_concurrency)
    problems = target_problems(job, target)
    if problems and "gradeable" in out:
        out["gradeable"].findings += [Finding("warn", f"{target}: {p}", "") for p in problems]
    meta = {"target": target, "target_problems": problems, "items": len(items), "policy": type(policy).__name__,
            "samples": samples, "pass_threshold": job.grader.pass_threshold, "user_probes": sorted(probes or {}),
            "skipped_probes": sorted(skip_probes), "budget": budget,
            "discards": digest}
    return DoctorReport({n: out[n] for n in PRINCIPLES if n in out}, meta)
