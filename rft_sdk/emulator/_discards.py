"""Loud discards: how many rollouts a run threw away, why, and whether that is too many.

``rft emulate`` and ``rft doctor`` compare the share of discarded rollouts
with ``--max-discard-share`` and exit 1 past it, printing the most common
reasons with one example each on the terminal (a run that discarded 80 of 80
rollouts must not look like a success; issue 36).

Defaults (this SDK's rule, not the hosted service's: the service discards and
carries on, and a run whose rollouts are all discarded wastes its budget):

* :data:`REPLAY_MAX_DISCARD_SHARE` = 0 for replay policies (those with an
  ``actions_field``: reference, perturbed, noisy): they issue the gold calls, so any
  discard is a broken tool server, grader or dataset line.
* :data:`MODEL_MAX_DISCARD_SHARE` = 0.1 for every other policy (a model endpoint,
  ``MODULE:ATTR``): a model may legitimately get a few rollouts discarded
  (an unparseable answer is ``policy_error``), but past one in ten the run
  measures the failures, not the task.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from rich.console import Console

from ._rollout import RolloutResult

__all__ = ["MODEL_MAX_DISCARD_SHARE", "REPLAY_MAX_DISCARD_SHARE", "default_max_discard_share",
           "discard_digest", "report_discards"]

#: Default ``--max-discard-share`` of a replay policy (one with an ``actions_field``).
REPLAY_MAX_DISCARD_SHARE = 0.0
#: Default ``--max-discard-share`` of any other policy (a model).
MODEL_MAX_DISCARD_SHARE = 0.1
#: Characters of a discard's detail shown as its example.
_EXAMPLE_CHARS = 300


def default_max_discard_share(policy: object) -> float:
    """:data:`REPLAY_MAX_DISCARD_SHARE` for a replay policy (it has a ``str`` ``actions_field``),
    else :data:`MODEL_MAX_DISCARD_SHARE`."""
    return REPLAY_MAX_DISCARD_SHARE if isinstance(getattr(policy, "actions_field", None), str) \
        else MODEL_MAX_DISCARD_SHARE


def discard_digest(results: Sequence[RolloutResult], top: int = 3) -> dict[str, Any]:
    """The discards of ``results`` in short.

    Shape: ``{"rollouts": int, "discarded": int, "share": float (0 when no rollout),
    "top": [{"reason", "count", "example": {"item_index", "trace_id", "detail"}}]}``,
    ``top`` the ``top`` most common reasons, most common first (ties by name); the
    example is the first rollout discarded for that reason, its detail cut to 300 characters.
    """
    dropped = [r for r in results if r.discarded]
    counts = Counter(r.discard_reason or "unknown" for r in dropped)
    rows = []
    for reason, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]:
        first = next(r for r in dropped if (r.discard_reason or "unknown") == reason)
        rows.append({"reason": reason, "count": count,
                     "example": {"item_index": first.item_index, "trace_id": first.trace_id,
                                 "detail": (first.discard_detail or "")[:_EXAMPLE_CHARS]}})
    return {"rollouts": len(results), "discarded": len(dropped),
            "share": len(dropped) / len(results) if results else 0.0, "top": rows}


def report_discards(digest: dict[str, Any], max_share: float, prog: str, console: Console) -> bool:
    """Print the top discard reasons on ``console`` when there are discards; return whether the
    share passed ``max_share`` (the caller then exits 1).

    The last line names the option that tolerates more (``--max-discard-share``).
    """
    if not digest["discarded"]:
        return False
    over = digest["share"] > max_share
    style = "red" if over else "yellow"
    console.print(f"{prog}: {digest['discarded']} of {digest['rollouts']} rollouts discarded "
                  f"({digest['share']:.0%}; allowed: {max_share:.0%}). Top reasons:",
                  style=style, markup=False, highlight=False)
    for row in digest["top"]:
        ex = row["example"]
        console.print(f"  {row['reason']}: {row['count']} (e.g. item {ex['item_index']}, {ex['trace_id']}: "
                      f"{ex['detail'] or 'no detail'})", style=style, markup=False, highlight=False)
    if over:
        console.print(f"{prog}: too many discarded rollouts: fix the cause above (every rollout is in "
                      f"rollouts.jsonl), or pass --max-discard-share to tolerate more",
                      style=style, markup=False, highlight=False)
    return over
