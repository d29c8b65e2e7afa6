"""A write moved onto another entity the rollout made (issue 37, doctor38's ``cobbler__twin_b``): the gold redeems
the loyalty points on the dearest line (``redeem_points(tag_no=41, service_code="RESOLE-LTH")``), and a grader that
checks the redemption by the points spent and the *number* of free lines pays it on a cheaper line the rollout had
just added (``add_service(tag_no=42, service_code="HEELS")``).

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
moved_write               one gold write with **every argument** taken from an earlier gold write of
                          another tool that passes arguments of all its names with other values (the
                          redemption moved onto the line an ``add_service`` made); item ``k`` takes the
                          candidates in turn (the gold's later writes first), on at most
                          :data:`~._scope.SCOPE_ITEMS` items. Judged ``must_lower`` where the moved
                          write took effect and the end state differs from the gold's
========================= ==========================================================================

**Why the honest twin stays silent**: the write acts on another entity than the task's rule picks (another line,
another ticket), so the end state differs from the gold's where it matters, and a grader that compares it (or
``diff_gold``) scores it below the gold. One that counts the writes, or checks only that some entity got one, keeps
the gold's score. A write the tool refuses on that entity leaves nothing to judge. Nothing names a tool, a field or
a task.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from ._probes import HACK
from ._scope import SCOPE_ITEMS, _arguments
from ._widened_list import ReplacedGoldWrite

__all__ = ["MOVED_WRITE_ADVICE", "MovedWrite", "moved_write_probes"]

MOVED_WRITE_ADVICE = {
    "moved_write": "a write moved onto another entity the rollout had just made (the points redeemed on a cheaper "
                   "line) earns the gold's score: compare which entity each write changed (the end state, or "
                   "diff_gold), not how many writes there were",
}


class MovedWrite(ReplacedGoldWrite):
    """``moved_write`` (module table)."""

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = SCOPE_ITEMS,
                 **kwargs: Any) -> None:
        super().__init__(write_tools, max_items, **kwargs)
        self._reason = ("the gold changes nothing, no write of it has an earlier write of another tool passing "
                        "arguments of all its names with other values, or the probe's "
                        f"{max_items} items are already chosen")

    def candidates(self, item: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Every moved write of ``item`` (``{"name", "arguments", "position"}``), the gold's later writes first."""
        gold = item[self.actions_field]
        writes = self.writes_of(item)
        seen = {json.dumps([a.get("name"), _arguments(a.get("arguments"))], sort_keys=True, default=str)
                for a in gold if isinstance(a, Mapping)}
        out = []
        for position in sorted(writes, reverse=True):
            mine = _arguments(gold[position].get("arguments"))
            if not mine:
                continue
            for earlier in writes:
                other = _arguments(gold[earlier].get("arguments"))
                if earlier >= position or gold[earlier].get("name") == gold[position].get("name") or \
                        not set(mine) <= set(other):
                    continue
                moved = {k: other[k] for k in mine}
                key = json.dumps([gold[position]["name"], moved], sort_keys=True, default=str)
                if moved != mine and key not in seen:
                    seen.add(key)
                    out.append({"name": gold[position]["name"], "arguments": moved, "position": position})
        return out


def moved_write_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probe of the module table, by name (``intent`` ``hack``)."""
    probe = MovedWrite(write_tools, **fields)
    probe.intent = HACK
    return {"moved_write": probe}
