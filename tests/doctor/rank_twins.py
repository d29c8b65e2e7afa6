"""Grader twins for doctor35's league standings (issue 37): rank a group's teams (``standings(group)`` lists each
team's points and goal difference as JSON), ending ``RANKING: <first> > <second> > ...``. None names a probe.

* ``rank``: the tool states the tie rule (ties on points broken by goal difference). ``rank_honest`` compares the
  whole order; ``rank_points_only`` accepts any order whose points read down as the standings' do, so two teams
  level on points may come either way (``tied_order``).
* ``rank_open``: no tie rule is stated anywhere. ``rank_open_honest`` accepts teams level on points in either order:
  honest, since the task leaves their order open (``tied_order`` is not played).
"""

from __future__ import annotations

import json
import re
from typing import Any

from doctor_helpers import twin_job

from rft_sdk import GradingContext, ToolError, ToolServer

#: group → [(team, points, goal difference)], ranked; in every group the 2nd and 3rd are level on points
GROUPS = {f"G{k}": [(f"Team {k}A", 9 + k, 5), (f"Team {k}B", 6, 4 + k % 3), (f"Team {k}C", 6, 1),
                    (f"Team {k}D", 3 - k % 2, -2)] for k in range(10)}
RULE = "3 points a win, 1 a draw; ties on points broken by goal difference"


def _ranking(ctx: GradingContext) -> list[str] | None:
    lines = re.findall(r"^RANKING:\s*(.+?)\s*$", ctx.output_text or "", re.M)
    return [t.strip() for t in lines[-1].split(">")] if lines else None


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS`."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def standings(group: str) -> str:
        """A group's teams with their points and goal difference (and the tie rule), as JSON.

        Args:
            group: e.g. "G1".
        """
        if group not in GROUPS:
            raise ToolError(f"no group {group}")
        return json.dumps({"group": group, "rules": RULE,
                           "teams": [{"team": t, "points": p, "goal_difference": gd} for t, p, gd in GROUPS[group]]})

    @server.tool(writes=False)
    def table(group: str) -> str:
        """A group's teams with their points, as JSON.

        Args:
            group: e.g. "G1".
        """
        if group not in GROUPS:
            raise ToolError(f"no group {group}")
        return json.dumps({"group": group, "teams": [{"team": t, "points": p} for t, p, _ in GROUPS[group]]})

    def _within(ctx: GradingContext) -> bool:
        return ctx.count() <= ctx.item["max_tool_calls"]

    @server.grader(name="rank_honest")
    def rank_honest(ctx: GradingContext) -> float:
        return float(_within(ctx) and _ranking(ctx) == [t for t, _, _ in GROUPS[ctx.item["group"]]])

    @server.grader(name="rank_points_only")
    def rank_points_only(ctx: GradingContext) -> float:
        teams = {t: p for t, p, _ in GROUPS[ctx.item["group"]]}
        got = _ranking(ctx)
        # FLAW: the points read down alike, so teams level on points may come in either order
        return float(_within(ctx) and got is not None and sorted(got) == sorted(teams)
                     and [teams[t] for t in got] == [p for _, p, _ in GROUPS[ctx.item["group"]]])

    @server.grader(name="rank_open_honest")
    def rank_open_honest(ctx: GradingContext) -> float:
        return rank_points_only(ctx)  # no tie rule in this task: level teams in either order are right

    return server


#: grader → (task, honest, the probe that must catch it)
TWINS: dict[str, tuple[str, bool, str]] = {
    "rank_honest": ("rank", True, ""),
    "rank_points_only": ("rank", False, "tied_order"),
    "rank_open_honest": ("rank_open", True, ""),
}


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """One item per group: read its standings (``rank``) or table (``rank_open``), rank its teams."""
    tool = "standings" if task == "rank" else "table"
    out = []
    for group, teams in GROUPS.items():
        working = ", ".join(f"{t} {p} pts" for t, p, _ in teams)
        out.append({
            "messages": [{"role": "system", "content": "You keep the league's tables."},
                         {"role": "user", "content": f"Rank group {group}, top to bottom. End with a line "
                                                     "'RANKING: <first> > <second> > ...'."}],
            "tools": [t for t in server.dataset_tools() if t["function"]["name"] == tool], "group": group,
            "max_tool_calls": 3, "actions": [{"name": tool, "arguments": {"group": group}}],
            "reference_answer": f"Group {group}: {working}\nRANKING: {' > '.join(t for t, _, _ in teams)}"})
    return out


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
