"""A line's tool-call budget against the job's ``max_episode_steps`` (``rft validate --config``, and the
pre-flight of ``rft emulate`` and ``rft doctor``, which print these warnings before any rollout).

The hosted service, like the emulator (``rft_sdk.emulator._rollout``), cuts a rollout after
``max_episode_steps`` model turns and grades it as it stands: the reply graded is the last turn's text (a
turn that makes tool calls usually has none; the doctor's replays send none). A turn may hold several calls,
and the budget ``max_tool_calls`` counts calls, so the two limits meet in two places (each a **warning**: the
run still happens):

* **An honest rollout within its budget is cut.** A policy that makes one call per turn needs ``B + 1``
  turns to spend a budget of ``B`` calls and answer. With ``B + 1 > max_episode_steps`` it is cut after
  ``max_episode_steps`` calls, before its answer, while still within its budget, and graded unfinished;
  only a policy that makes several calls in one turn can reach the budget. Fix: ``--max-episode-steps B + 1``
  (``rft tools``/``rft job`` write it), or a budget of ``max_episode_steps - 1``.
* **The doctor's ``refused_spam`` probe is cut before its answer.** It plays the refused calls past the
  budget in one turn, then the gold's ``n`` calls one per turn, then the reference answer: ``n + 2`` turns
  (``rft_sdk.doctor._suite.RefusedSpam``). With ``n + 2 > max_episode_steps`` it is still graded and judged,
  on an empty reply, so a grader that lets refused calls past the budget but pays nothing without an answer
  is not caught on that line. Fix: ``--max-episode-steps n + 2``.

The doctor's other budget probes are not cut by the budget: ``tool_spam`` puts its extra calls in the gold's
turns (``n + 1`` turns, as the gold's own replay, which ``rft emulate`` and ``rft doctor`` warn about when it is
cut) and ``activity_no_answer`` stays within the budget.

:func:`needed_steps` is the other direction, the one rule of ``docs/gold-items.md`` ("Sizing
max_episode_steps"): the fewest turns every line of a dataset needs, which ``rft tools --dataset`` and
``rft job --dataset`` write.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ._report import Report

__all__ = ["DEFAULT_EPISODE_STEPS", "check_steps", "dataset_steps", "episode_steps", "needed_steps", "size_steps"]

#: ``max_episode_steps`` when the job leaves it out: what ``rft emulate`` and ``rft doctor`` then use
#: (``rft_sdk.emulator.ReinforcementJob``), and what ``rft tools``/``rft job`` write by default.
DEFAULT_EPISODE_STEPS = 10


def episode_steps(reinforcement: Mapping[str, Any]) -> tuple[int, bool] | None:
    """``(max_episode_steps, written)`` of a job's ``reinforcement`` object: its value and ``True``, or
    :data:`DEFAULT_EPISODE_STEPS` and ``False`` when the job leaves it out; ``None`` when the value is not an
    integer >= 1 (the job's own check reports that)."""
    if "max_episode_steps" not in reinforcement:
        return DEFAULT_EPISODE_STEPS, False
    value = reinforcement["max_episode_steps"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return None
    return value, True


def _budget(item: Mapping[str, Any]) -> int | None:
    value = item.get("max_tool_calls")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None  # absent, or malformed (check_gold reports that)
    return value


def check_steps(items: Sequence[Any], reinforcement: Mapping[str, Any], report: Report) -> None:
    """Warn, per line, where the line's ``max_tool_calls`` and the job's ``max_episode_steps`` meet (the module
    docstring's two cases); lines without a well-formed ``max_tool_calls`` are skipped.

    Args:
        items: decoded lines (``None`` for a line that did not decode: skipped).
        reinforcement: the job's ``reinforcement`` object (its ``max_episode_steps``, :func:`episode_steps`).
        report: where the warnings go (field ``max_tool_calls``; lines with the same numbers share one).
    """
    found = episode_steps(reinforcement)
    if found is None:
        return
    steps, written = found
    where = (f"the job's max_episode_steps={steps}" if written else
             f"max_episode_steps={steps} (the job leaves it out: the default rft emulate and rft doctor use)")
    for index, item in enumerate(items):
        if not isinstance(item, dict) or (budget := _budget(item)) is None:
            continue
        if budget + 1 > steps:
            report.add("warning", index + 1, "max_tool_calls",
                       f"max_tool_calls={budget} needs {budget + 1} turns for a policy making one call per turn "
                       f"(its calls, then the answer), but {where} cuts a rollout after {steps} turns and "
                       f"grades it unfinished: such a rollout is cut after {steps} calls, before its answer, "
                       f"while still within its budget of {budget}; only several calls in one turn reach the "
                       "budget", f"write the job with --max-episode-steps {budget + 1} (rft tools / rft job), "
                       f"or lower max_tool_calls to {steps - 1}")
        actions = item.get("actions")
        if isinstance(actions, list) and actions and isinstance(item.get("reference_answer"), str) \
                and len(actions) + 2 > steps:
            n = len(actions)
            report.add("warning", index + 1, "max_tool_calls",
                       f"rft doctor's budget probe refused_spam plays {n + 2} turns here (refused calls past "
                       f"max_tool_calls={budget} in one turn, the gold's {n} call(s) one per turn, then the "
                       f"answer), but {where} cuts it before its answer: it is judged on an empty reply, so a "
                       "grader that lets refused calls past the budget but pays nothing without an answer is "
                       "not caught on this line",
                       f"write the job with --max-episode-steps {n + 2} (rft tools / rft job)")


def _line_needs(item: Mapping[str, Any]) -> list[tuple[int, str]]:
    """``(turns, why)`` for each part of the one rule that applies to one line."""
    out: list[tuple[int, str]] = []
    actions = item.get("actions")
    if isinstance(actions, list):
        out.append((len(actions) + 1, f"the gold's {len(actions)} call(s) + 1"))
    alternatives = item.get("alternatives")
    for k, alt in enumerate(alternatives if isinstance(alternatives, list) else []):
        calls = alt.get("actions") if isinstance(alt, dict) else None
        if isinstance(calls, list):
            label = alt.get("name") if isinstance(alt.get("name"), str) else str(k)
            out.append((len(calls) + 1, f"alternative {label!r}'s {len(calls)} call(s) + 1"))
    budget = _budget(item)
    if budget is not None:
        out.append((budget + 1, f"max_tool_calls={budget} + 1"))
        if isinstance(actions, list) and actions and isinstance(item.get("reference_answer"), str):
            out.append((len(actions) + 2, f"the gold's {len(actions)} call(s) + 2 (refused_spam, with a budget)"))
    return out


def needed_steps(items: Sequence[Any]) -> tuple[int, int, str] | None:
    """The one rule of ``docs/gold-items.md`` ("Sizing max_episode_steps") over decoded dataset lines:
    ``(turns, line, why)``, the fewest ``max_episode_steps`` that every line fits, the first line (1-based)
    that needs that many and which part of the rule sets it; ``None`` when no line has gold calls,
    alternatives or a ``max_tool_calls``.

    Per line: the gold's ``n`` calls + 1 and each alternative's calls + 1 (one call per turn, then the
    answer); on a line with a well-formed ``max_tool_calls`` ``B``, also ``B + 1`` (its budget spent one
    call per turn) and, where the line has a gold answer, ``n + 2`` (the doctor's ``refused_spam``). A budget
    given only to ``rft doctor --budget N`` is not in the lines: take ``max(N + 1, n + 2)`` for it yourself.
    """
    best: tuple[int, int, str] | None = None
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        for turns, why in _line_needs(item):
            if best is None or turns > best[0]:
                best = (turns, index + 1, why)
    return best


def dataset_steps(path: str | Path) -> tuple[int, int, str] | None:
    """:func:`needed_steps` of a JSONL dataset file.

    Raises:
        ValueError: the file cannot be read, or a line is blank or not JSON (named, as ``rft validate`` does).
    """
    from ._validate import read_dataset

    report = Report("openai", str(path))
    items = read_dataset(path, report)
    if report.errors:
        first = report.errors[0]
        raise ValueError(f"--dataset {str(path)!r}: {first.where()}: {first.message} ({len(report.errors)} "
                         f"error(s); rft validate {path} names each)")
    return needed_steps(items)


def size_steps(path: str | Path, floor: int) -> tuple[int, str | None]:
    """``max_episode_steps`` for a job written with ``--dataset path``: the larger of ``floor`` (the command's
    ``--max-episode-steps``, default 10) and :func:`dataset_steps`, and a line of information for stderr where
    the dataset changed something or could not be read for it: the value raised (which line needs it, and why),
    or no line to size it by. ``None`` where every line fits in ``floor``: the job holds what the command was
    given, and there is nothing to say (``rft tools --dataset`` then prints nothing on stderr).

    Raises:
        ValueError: as :func:`dataset_steps`.
    """
    found = dataset_steps(path)
    if found is None:
        return floor, (f"max_episode_steps {floor} kept: no line of {path} has gold calls, alternatives or "
                       "max_tool_calls to size it by")
    turns, line, why = found
    if turns > floor:
        return turns, f"max_episode_steps raised to {turns}: line {line} of {path} needs {turns} turns ({why})"
    return floor, None
