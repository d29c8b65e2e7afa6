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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._report import Report

__all__ = ["DEFAULT_EPISODE_STEPS", "check_steps", "episode_steps"]

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
