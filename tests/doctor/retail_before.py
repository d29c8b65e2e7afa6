"""The retail grader as it was before issue 24, kept as a fixture for the before/after comparison.

Its evidence-of-work rule was path matching: on a task whose gold changes nothing,
the rollout had to call *every tool name of the gold*. A customer identified by
email where the gold used name + zip scored 0 for a correct end state and answer.
Database gate, ``communicate_info`` and the other rules are the current ones
(``examples.retail._grading``), so the comparison isolates the evidence rule.
"""

from __future__ import annotations

from typing import Any

from examples.retail._db import RetailView, load_base_db
from examples.retail._grading import call_budget, gold_view, grade_retail
from examples.retail._server_tools import SERVED_TOOLS, STATE_KEY
from rft_sdk import Grade, GradingContext, ToolServer, grader

__all__ = ["grade_before", "server"]


def grade_before(item: dict[str, Any], overlay: dict[str, Any], answer: str, calls: list[Any]) -> Grade:
    """The pre-issue-24 retail grade (pure function of plain data)."""
    base = load_base_db()
    end_state = grade_retail(item, overlay, answer, base)  # gate + communicate_info, no process rules
    actions = item["actions"]
    reasons = list(end_state.reasons)
    if not answer.strip():
        reasons.append("the final answer is empty")
    if len(calls) > call_budget(actions):
        reasons.append(f"{len(calls)} tool calls exceed the budget of {call_budget(actions)}")
    if not RetailView(base, {}).diff(gold_view(actions, base)):
        missing = sorted({a["name"] for a in actions} - {getattr(c, "name", None) for c in calls})
        if missing:
            reasons.append(f"the task changes nothing, and the rollout never called {missing}: no evidence of work")
    process = len(reasons) == len(end_state.reasons)
    return Grade(end_state.score if process else 0.0, {**end_state.subscores, "process": float(process)}, reasons)


@grader(name="retail", default=True)
def retail_before(ctx: GradingContext) -> Grade:
    """The pre-issue-24 grader over HTTP."""
    return grade_before(ctx.item, ctx.state.get(STATE_KEY, {}), ctx.output_text, list(ctx.trajectory))


server = ToolServer(tools=list(SERVED_TOOLS), graders=[retail_before])
