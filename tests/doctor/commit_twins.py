"""Grader twins for ``dropped_commit`` and ``refused_spam`` (issue 37, doctor26's print farm and rowing club):
draft a print plan (``assign_job`` puts a job on a printer in the draft), then ``submit_plan`` (the draft
becomes the queue the printers read); each item declares a budget of ``max_tool_calls``. None names a probe.

* ``queue_exact``: the submitted queue is the item's plan, within the budget of every recorded call: honest;
* ``queue_partial``: the same with 0.4 for a right draft never submitted: honest;
* ``from_calls``: the plan rebuilt from the trajectory's successful ``assign_job`` calls, not the queue;
* ``ok_calls_budget``: the budget counted on successful calls only ("refused calls cost nothing").
"""

from __future__ import annotations

import json
from typing import Any

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

PRINTERS = [f"P{n:02d}" for n in range(1, 9)]
#: per item, its jobs and the printer each must go on
PLANS = {f"plan-{n}": {f"J-{5100 + 3 * n + k}": PRINTERS[(n + 3 * k) % len(PRINTERS)] for k in range(2 + n % 2)}
         for n in range(10)}


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def get_plan(plan: str) -> str:
        """The jobs of a plan and the printer each must go on, as JSON.

        Args:
            plan: e.g. "plan-3".
        """
        if plan not in PLANS:
            raise ToolError(f"no plan {plan}")
        return json.dumps({"plan": plan, "jobs": PLANS[plan]})

    @server.tool(writes=True)
    def assign_job(job: str, printer: str, *, rollout: Rollout) -> str:
        """Put a job on a printer in the draft (nothing prints until the draft is submitted).

        Args:
            job: e.g. "J-5103".
            printer: e.g. "P04".
        """
        if printer not in PRINTERS or not any(job in jobs for jobs in PLANS.values()):
            raise ToolError(f"cannot assign {job} to {printer}")
        rollout.state.setdefault("draft", {})[job] = printer
        return f"{job} drafted on {printer}"

    @server.tool(writes=True)
    def submit_plan(*, rollout: Rollout) -> str:
        """Submit the draft: it becomes the queue the printers read."""
        draft = rollout.state.get("draft") or {}
        if not draft:
            raise ToolError("the draft is empty")
        rollout.state["queue"] = dict(draft)
        return f"submitted {len(draft)} job(s)"

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    def _within(ctx: GradingContext) -> bool:
        return ctx.count() <= ctx.item["max_tool_calls"]

    @grader
    def grade_queue_exact(ctx: GradingContext) -> float:
        return float(_within(ctx) and ctx.state.get("queue") == PLANS[ctx.item["plan"]])

    @grader
    def grade_queue_partial(ctx: GradingContext) -> float:
        if not _within(ctx):
            return 0.0
        want = PLANS[ctx.item["plan"]]
        return 1.0 if ctx.state.get("queue") == want else 0.4 if ctx.state.get("draft") == want else 0.0

    @grader
    def grade_from_calls(ctx: GradingContext) -> float:
        # flaw: the plan rebuilt from the drafting calls, so a plan never submitted counts
        drafted = {c.arguments.get("job"): c.arguments.get("printer") for c in ctx.calls("assign_job") if c.ok}
        return float(_within(ctx) and drafted == PLANS[ctx.item["plan"]])

    @grader
    def grade_ok_calls_budget(ctx: GradingContext) -> float:
        # flaw: the budget counts successful calls only
        ok = sum(1 for c in ctx.trajectory if c.ok)
        return float(ok <= ctx.item["max_tool_calls"] and ctx.state.get("queue") == PLANS[ctx.item["plan"]])

    return server


#: grader → (task, honest, the probe that must catch it)
TWINS: dict[str, tuple[str, bool, str]] = {
    "queue_exact": ("plan", True, ""),
    "queue_partial": ("plan", True, ""),
    "from_calls": ("plan", False, "dropped_commit"),
    "ok_calls_budget": ("plan", False, "refused_spam"),
}


def make_items(server: ToolServer, task: str = "plan") -> list[dict[str, Any]]:
    """One item per plan: read it, draft each job, submit."""
    out = []
    for plan, jobs in PLANS.items():
        actions = [{"name": "get_plan", "arguments": {"plan": plan}}]
        actions += [{"name": "assign_job", "arguments": {"job": j, "printer": p}} for j, p in jobs.items()]
        actions.append({"name": "submit_plan", "arguments": {}})
        out.append({
            "messages": [{"role": "system", "content": "You run a print farm through its tools."},
                         {"role": "user", "content": f"Queue print plan {plan} and submit it."}],
            "tools": server.dataset_tools(), "plan": plan, "actions": actions, "max_tool_calls": len(actions) + 2,
            "reference_answer": "Submitted: " + ", ".join(f"{j} on {p}" for j, p in jobs.items()) + ".",
        })
    return out


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
