"""Grader twins for doctor35's league standings and doctor33's archery desk (issue 37): rank a group's teams (``standings(group)`` lists each
team's points and goal difference as JSON), ending ``RANKING: <first> > <second> > ...``. None names a probe.

* ``rank``: the tool states the tie rule (ties on points broken by goal difference). ``rank_honest`` compares the
  whole order; ``rank_points_only`` accepts any order whose points read down as the standings' do, so two teams
  level on points may come either way (``tied_order``).
* ``score``: enter an archery end (``scorecard(archer)`` gives the total so far, ``record_end(archer, arrows)``) and
  answer the running total (``ANSWER: <total>``). ``score_honest`` checks the end entered and the running total;
  ``score_either_total`` also takes the end's own total (``written_total``).
* ``rank_open``: no tie rule is stated anywhere. ``rank_open_honest`` accepts teams level on points in either order:
  honest, since the task leaves their order open (``tied_order`` is not played).
"""

from __future__ import annotations

import json
import re
from typing import Any

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

#: group → [(team, points, goal difference)], ranked; in every group the 2nd and 3rd are level on points
GROUPS = {f"G{k}": [(f"Team {k}A", 9 + k, 5), (f"Team {k}B", 6, 4 + k % 3), (f"Team {k}C", 6, 1),
                    (f"Team {k}D", 3 - k % 2, -2)] for k in range(10)}
#: archer → (total before this end, the end's arrows)
ENDS = {f"A{k}": (200 + 7 * k, [10, 9, 9 - k % 3, 8, 7, k % 4]) for k in range(10)}
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

    @server.tool(writes=False)
    def scorecard(archer: str) -> str:
        """An archer's total so far, as JSON.

        Args:
            archer: e.g. "A1".
        """
        if archer not in ENDS:
            raise ToolError(f"no archer {archer}")
        return json.dumps({"archer": archer, "total": ENDS[archer][0]})

    @server.tool(writes=True)
    def record_end(archer: str, arrows: list[int], *, rollout: Rollout) -> str:
        """Enter an end's arrows on an archer's scorecard.

        Args:
            archer: e.g. "A1".
            arrows: the six arrows' scores.
        """
        if archer not in ENDS:
            raise ToolError(f"no archer {archer}")
        rollout.state.setdefault("ends", {})[archer] = list(arrows)
        return f"end entered for {archer}"

    def _scored(ctx: GradingContext, either: bool) -> float:
        archer = ctx.item["archer"]
        before, arrows = ENDS[archer]
        said = re.findall(r"^ANSWER:\s*(\d+)\s*$", ctx.output_text or "", re.M)
        right = {before + sum(arrows)} | ({sum(arrows)} if either else set())
        return float(_within(ctx) and ctx.state.get("ends") == {archer: arrows} and len(said) == 1
                     and int(said[0]) in right)

    @server.grader(name="score_honest")
    def score_honest(ctx: GradingContext) -> float:
        return _scored(ctx, False)

    @server.grader(name="score_either_total")
    def score_either_total(ctx: GradingContext) -> float:
        return _scored(ctx, True)  # FLAW: the end's own total is taken for the running total

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
    "score_honest": ("score", True, ""),
    "score_either_total": ("score", False, "written_total"),
}


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """One item per group: read its standings (``rank``) or table (``rank_open``), rank its teams."""
    if task == "score":
        return [{"messages": [{"role": "system", "content": "You enter archery ends and give running totals."},
                              {"role": "user", "content": f"End for {archer}: {', '.join(map(str, arrows))}. What is "
                                                          "the running total now? End with 'ANSWER: <total>'."}],
                 "tools": [t for t in server.dataset_tools() if t["function"]["name"] in ("scorecard", "record_end")],
                 "archer": archer, "max_tool_calls": 4,
                 "actions": [{"name": "scorecard", "arguments": {"archer": archer}},
                             {"name": "record_end", "arguments": {"archer": archer, "arrows": arrows}}],
                 "reference_answer": f"End entered for {archer}: {sum(arrows)}. Running total: "
                                     f"{before + sum(arrows)}.\nANSWER: {before + sum(arrows)}"}
                for archer, (before, arrows) in ENDS.items()]
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
