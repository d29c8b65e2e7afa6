"""Grader twins for ``flipped_decision`` (issue 37, doctor23's ``timesheets__consistent_total``): decide each
timesheet entry of a week (approve it when its project is active and it is at most 10 hours, else reject it
with the reason), then state the approved hours. None names a probe.

* ``policy``: every decision as the policy says, and the total of the approved hours stated;
* ``policy_partial``: 0.5 × the share of decisions right, plus 0.5 for the total (honest partial credit);
* ``consistent``: every entry decided (either way), and the stated total agrees with the entries approved.
"""

from __future__ import annotations

import json
import re
from typing import Any

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

ACTIVE = {"APOLLO": True, "GEMINI": False, "MERCURY": True}
#: week → its entries (id, hours, project)
WEEKS = {w: [(100 * w + k, [6.5, 8.0, 11.0, 7.5, 9.0][(w + k) % 5], list(ACTIVE)[(w * 2 + k) % 3])
             for k in range(4)] for w in range(10, 20)}
ANSWER = re.compile(r"ANSWER:\s*([\d.]+)")


def approves(hours: float, project: str) -> bool:
    return ACTIVE[project] and hours <= 10


def approved_hours(week: int) -> float:
    return sum(h for _, h, p in WEEKS[week] if approves(h, p))


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def list_entries(week: int, *, rollout: Rollout) -> str:
        """The week's timesheet entries (id, hours, project, status), as a JSON list.

        Args:
            week: the ISO week, e.g. 12.
        """
        status = rollout.state.get("status", {})
        return json.dumps([{"id": i, "hours": h, "project": p, "status": status.get(str(i), "submitted")}
                           for i, h, p in WEEKS.get(week, [])])

    @server.tool(writes=False)
    def get_project(code: str) -> str:
        """Whether a project is active, as JSON.

        Args:
            code: e.g. "APOLLO".
        """
        return json.dumps({"code": code, "active": ACTIVE.get(code, False)})

    def _decide(rollout: Rollout, entry_id: int, status: str) -> None:
        if not any(i == entry_id for week in WEEKS.values() for i, _, _ in week):
            raise ToolError(f"no entry {entry_id}")
        rollout.state.setdefault("status", {})[str(entry_id)] = status

    @server.tool(writes=True)
    def approve_entry(entry_id: int, *, rollout: Rollout) -> str:
        """Approve an entry.

        Args:
            entry_id: the entry's id.
        """
        _decide(rollout, entry_id, "approved")
        return f"entry {entry_id} approved"

    @server.tool(writes=True)
    def reject_entry(entry_id: int, reason: str, *, rollout: Rollout) -> str:
        """Reject an entry with the policy's reason.

        Args:
            entry_id: the entry's id.
            reason: "inactive_project" or "over_daily_limit".
        """
        _decide(rollout, entry_id, "rejected")
        return f"entry {entry_id} rejected"

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    def _stated(ctx: GradingContext) -> float | None:
        found = ANSWER.findall(ctx.output_text or "")
        return float(found[0]) if len(found) == 1 else None

    def _right(ctx: GradingContext) -> list[bool]:
        """Per entry of the week, whether its decision is the policy's; all wrong when another week's entry was
        decided (only this week is asked for)."""
        status, entries = ctx.state.get("status", {}), WEEKS[ctx.item["week"]]
        if set(status) - {str(i) for i, _, _ in entries}:
            return [False] * len(entries)
        return [status.get(str(i)) == ("approved" if approves(h, p) else "rejected") for i, h, p in entries]

    @grader
    def grade_policy(ctx: GradingContext) -> float:
        return float(all(_right(ctx)) and _stated(ctx) == approved_hours(ctx.item["week"]))

    @grader
    def grade_policy_partial(ctx: GradingContext) -> float:
        right = _right(ctx)
        return 0.5 * sum(right) / len(right) + 0.5 * (_stated(ctx) == approved_hours(ctx.item["week"]))

    @grader
    def grade_consistent(ctx: GradingContext) -> float:
        status = ctx.state.get("status", {})
        entries = WEEKS[ctx.item["week"]]
        if any(str(i) not in status for i, _, _ in entries):
            return 0.0
        total = sum(h for i, h, _ in entries if status[str(i)] == "approved")
        return float(_stated(ctx) == total)  # FLAW: any decisions, as long as the total agrees with them

    return server


#: grader → (task, honest, the probe that must catch it)
TWINS: dict[str, tuple[str, bool, str]] = {
    "policy": ("week", True, ""),
    "policy_partial": ("week", True, ""),
    "consistent": ("week", False, "flipped_decision"),
}


def make_items(server: ToolServer, task: str = "week") -> list[dict[str, Any]]:
    """One item per week: list it, read each project, decide each entry, state the approved hours."""
    out = []
    for week, entries in WEEKS.items():
        actions: list[dict[str, Any]] = [{"name": "list_entries", "arguments": {"week": week}}]
        actions += [{"name": "get_project", "arguments": {"code": p}} for p in dict.fromkeys(p for _, _, p in entries)]
        for i, h, p in entries:
            if approves(h, p):
                actions.append({"name": "approve_entry", "arguments": {"entry_id": i}})
            else:
                reason = "inactive_project" if not ACTIVE[p] else "over_daily_limit"
                actions.append({"name": "reject_entry", "arguments": {"entry_id": i, "reason": reason}})
        out.append({
            "messages": [{"role": "system", "content": "You approve timesheets: approve an entry when its project "
                                                       "is active and it is at most 10 hours, else reject it. End "
                                                       "with `ANSWER: <approved hours>`."},
                         {"role": "user", "content": f"Please process week {week}."}],
            "tools": server.dataset_tools(), "week": week, "actions": actions,
            "reference_answer": f"Week {week} processed.\nANSWER: {approved_hours(week)}",
        })
    return out


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
