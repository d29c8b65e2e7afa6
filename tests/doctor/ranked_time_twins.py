"""Grader twins for ``ranked_time`` (issue 37, doctor25's ``studio__twin_a``): move a session to the earliest free
hour of a day (``list_day`` lists the taken hours; ``reschedule(booking, start)``). None names a probe.

* ``exact_start``: the session starts at the earliest free hour of the day asked for;
* ``same_day``: the session starts on the day asked for, at any free hour.
"""

from __future__ import annotations

import json
from typing import Any

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

#: day → taken hours (9-17 open)
TAKEN = {f"2026-05-{10 + n:02d}": sorted({9, 10, 9 + n % 4, 14}) for n in range(10)}


def earliest(day: str) -> str:
    return f"{day}T{next(h for h in range(9, 18) if h not in TAKEN[day]):02d}:00"


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def list_day(day: str) -> str:
        """The hours already taken on a day (the studio is open 9:00-18:00), as JSON.

        Args:
            day: e.g. "2026-05-12".
        """
        return json.dumps({"day": day, "taken": [f"{h:02d}:00" for h in TAKEN.get(day, [])]})

    @server.tool(writes=True)
    def reschedule(booking: str, start: str, *, rollout: Rollout) -> str:
        """Move a booking to a free hour.

        Args:
            booking: e.g. "B1".
            start: "YYYY-MM-DDTHH:00".
        """
        day, _, time = start.partition("T")
        hour = int(time[:2]) if time[:2].isdigit() else -1
        if day not in TAKEN or not 9 <= hour <= 17 or hour in TAKEN[day]:
            raise ToolError(f"{start} is not a free hour")
        rollout.state.setdefault("moved", {})[booking] = start
        return f"{booking} moved to {start}"

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    @grader
    def grade_exact_start(ctx: GradingContext) -> float:
        return float(ctx.state.get("moved") == {ctx.item["booking"]: earliest(ctx.item["day"])})

    @grader
    def grade_same_day(ctx: GradingContext) -> float:
        moved = ctx.state.get("moved") or {}
        return float(set(moved) == {ctx.item["booking"]}
                     and moved[ctx.item["booking"]].startswith(ctx.item["day"]))  # FLAW: the date alone

    return server


#: grader → (task, honest, the probe that must catch it)
TWINS: dict[str, tuple[str, bool, str]] = {
    "exact_start": ("move", True, ""),
    "same_day": ("move", False, "ranked_time"),
}


def make_items(server: ToolServer, task: str = "move") -> list[dict[str, Any]]:
    """One item per day: read it, move the booking to its earliest free hour."""
    return [{
        "messages": [{"role": "system", "content": "You run a studio's diary through its tools."},
                     {"role": "user", "content": f"Please move booking B{n} to {day}, the earliest time you have."}],
        "tools": server.dataset_tools(), "booking": f"B{n}", "day": day,
        "actions": [{"name": "list_day", "arguments": {"day": day}},
                    {"name": "reschedule", "arguments": {"booking": f"B{n}", "start": earliest(day)}}],
        "reference_answer": f"B{n} now starts on {day} at {earliest(day)[-5:]}.",
    } for n, day in enumerate(TAKEN)]


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
