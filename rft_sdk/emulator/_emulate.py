"""One-call emulation: validate dataset and job, run rollouts with a progress bar, summarise, report."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ._client import ClientSettings
from ._contract import Policy
from ._dataset import MIN_LINES, load_dataset, validate_items
from ._job import ReinforcementJob, load_job
from ._job import samples_per_item as _samples_rule
from ._metrics import summarize
from ._report import write_report
from ._rollout import RolloutResult
from ._session import run_rollouts

__all__ = ["EmulationRun", "emulate"]


@dataclass
class EmulationRun:
    """What :func:`emulate` returns: the rollouts, their summary and the written files."""

    results: list[RolloutResult]
    summary: dict[str, Any]
    paths: dict[str, Path] = field(default_factory=dict)


def _warn_replay_truncation(items: Sequence[dict[str, Any]], policy: Policy, steps: int, console: Console) -> None:
    """Warn when a replay policy's items need more than ``steps`` turns (gold calls + the answer)."""
    field_name = getattr(policy, "actions_field", None)
    if not isinstance(field_name, str):
        return
    long = [(i, len(item[field_name]) + 1) for i, item in enumerate(items)
            if isinstance(item.get(field_name), list) and len(item[field_name]) + 1 > steps]
    if long:
        shown = ", ".join(str(i) for i, _ in long[:10]) + (" ..." if len(long) > 10 else "")
        console.print(f"warning: {len(long)} item(s) need more turns than max_episode_steps={steps} "
                      f"(up to {max(n for _, n in long)}: {field_name} + the final answer); their replays "
                      f"will be truncated and graded unfinished. Items (0-based): {shown}. Raise "
                      f"max_episode_steps in the job config or pass --max-episode-steps.",
                      style="yellow", markup=False, highlight=False)


async def emulate(
    dataset: str | Path | Sequence[dict[str, Any]],
    job: ReinforcementJob | dict[str, Any] | str | Path,
    policy: Policy,
    *,
    out_dir: str | Path | None = None,
    samples_per_item: int | None = None,
    use_eval_samples: bool = False,
    limit: int | None = None,
    max_concurrency: int = 64,
    settings: ClientSettings | None = None,
    client: httpx.AsyncClient | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: bool = True,
    label: str | None = None,
    console: Console | None = None,
    min_lines: int = MIN_LINES,
    max_episode_steps: int | None = None,
) -> EmulationRun:
    """Validate, run and report one policy on one dataset, as ``rft emulate`` does.

    Args:
        dataset: a JSONL path or already-parsed items; validated by the hosted
            rules against the job's tool names (:func:`load_dataset`).
        job: the job config (path, dict or :class:`ReinforcementJob`).
        policy: the policy to roll out.
        out_dir: where to write the report files; ``None`` writes nothing.
        samples_per_item: overrides the ``compute_multiplier`` rule.
        use_eval_samples: use ``hyperparameters.eval_samples`` as samples per item.
        limit: only the first ``limit`` items (after validating all of them).
        progress: show a rich progress bar on ``console``.
        max_episode_steps: overrides the job's value (``None``: the job's).
        Others: passed to :func:`run_rollouts`.

    A replay policy (one with ``actions_field``) whose items need more turns
    than ``max_episode_steps`` allows (gold calls + 1 answer) would be cut off
    and graded on an unfinished episode; a warning naming those items is
    printed on ``console`` before the run (the run still happens, as the
    hosted service would run it).

    Raises:
        DatasetError, JobConfigError: invalid inputs (nothing is run).
        ValueError: ``use_eval_samples`` without ``eval_samples`` in the job.
    """
    job = load_job(job)
    if isinstance(dataset, (str, Path)):
        items = load_dataset(dataset, job.tool_names, min_lines=min_lines)
    else:
        items = validate_items(dataset, job.tool_names, min_lines=min_lines)
    if limit is not None:
        items = items[:limit]
    if use_eval_samples and samples_per_item is None:
        if job.hyperparameters.eval_samples is None:
            raise ValueError("use_eval_samples: the job has no hyperparameters.eval_samples")
        samples_per_item = job.hyperparameters.eval_samples
    console = console or Console(stderr=True)
    steps = max_episode_steps if max_episode_steps is not None else job.max_episode_steps
    _warn_replay_truncation(items, policy, steps, console)
    kwargs: dict[str, Any] = dict(samples_per_item=samples_per_item, max_concurrency=max_concurrency,
                                  settings=settings, client=client, transport=transport,
                                  max_episode_steps=max_episode_steps)
    if progress:
        bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TextColumn("discarded {task.fields[discarded]}"), TimeElapsedColumn(), console=console)
        n = samples_per_item or _samples_rule(job.hyperparameters.compute_multiplier)
        with bar:
            task = bar.add_task(label or "rollouts", total=len(items) * n, discarded=0)
            discarded = 0

            def tick(r: RolloutResult) -> None:
                nonlocal discarded
                discarded += r.discarded
                bar.update(task, advance=1, discarded=discarded)

            results = await run_rollouts(items, policy, job, on_result=tick, **kwargs)
    else:
        results = await run_rollouts(items, policy, job, **kwargs)
    summary = summarize(results, pass_threshold=job.grader.pass_threshold, label=label)
    paths = write_report(out_dir, results, summary) if out_dir is not None else {}
    return EmulationRun(results, summary, paths)
