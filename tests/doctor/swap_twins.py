"""Grader twins for ``swapped_writes`` (issue 37, doctor26's scholarship ledger): decide every pending application of
a fund (``list_applications`` reads them; ``decide(application, decision, award)``: approve with the fund's award,
or reject with 0). None names a probe.

* ``per_application``: each application's decision and award are the item's: honest;
* ``per_application_partial``: the share of applications decided right: honest;
* ``ledger``: the count approved and the dollars committed match ("the fund's books balance").
"""

from __future__ import annotations

import json
from typing import Any

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

#: fund → {application: (eligible, award if approved)}
FUNDS = {f"F-{n}": {f"A-{100 * n + k}": (bool((n + k) % 3), 1000 * (1 + (n + k) % 4)) for k in range(3 + n % 3)}
         for n in range(10)}


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def list_applications(fund: str) -> str:
        """A fund's pending applications: eligible or not, and the award an approval carries, as JSON.

        Args:
            fund: e.g. "F-3".
        """
        if fund not in FUNDS:
            raise ToolError(f"no fund {fund}")
        return json.dumps([{"application": a, "eligible": e, "award": w} for a, (e, w) in FUNDS[fund].items()])

    @server.tool(writes=True)
    def decide(application: str, decision: str, award: int, *, rollout: Rollout) -> str:
        """Record a decision on a pending application.

        Args:
            application: e.g. "A-301".
            decision: "approve" or "reject".
            award: whole dollars; 0 for a rejection.
        """
        if decision not in ("approve", "reject") or (decision == "reject") != (award == 0) or award < 0:
            raise ToolError(f"cannot {decision} with an award of {award}")
        rollout.state.setdefault("decisions", {})[application] = [decision, award]
        return f"{application}: {decision} ({award})"

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    def _want(fund: str) -> dict[str, list[Any]]:
        return {a: ["approve", w] if e else ["reject", 0] for a, (e, w) in FUNDS[fund].items()}

    @grader
    def grade_per_application(ctx: GradingContext) -> float:
        return float(ctx.state.get("decisions") == _want(ctx.item["fund"]))

    @grader
    def grade_per_application_partial(ctx: GradingContext) -> float:
        want, got = _want(ctx.item["fund"]), ctx.state.get("decisions") or {}
        if set(got) - set(want):
            return 0.0
        return sum(got.get(a) == v for a, v in want.items()) / len(want)

    @grader
    def grade_ledger(ctx: GradingContext) -> float:
        # flaw: reconciles the books (how many approved, dollars committed), not who got what
        want, got = _want(ctx.item["fund"]), ctx.state.get("decisions") or {}

        def books(d: dict[str, list[Any]]) -> tuple[int, int, int]:
            return len(d), sum(v[0] == "approve" for v in d.values()), sum(v[1] for v in d.values())
        return float(books(got) == books(want))

    return server


#: grader → (task, honest, the probe that must catch it)
TWINS: dict[str, tuple[str, bool, str]] = {
    "per_application": ("fund", True, ""),
    "per_application_partial": ("fund", True, ""),
    "ledger": ("fund", False, "swapped_writes"),
}


def make_items(server: ToolServer, task: str = "fund") -> list[dict[str, Any]]:
    """One item per fund: read its applications, decide each."""
    out = []
    for fund, apps in FUNDS.items():
        actions = [{"name": "list_applications", "arguments": {"fund": fund}}]
        actions += [{"name": "decide", "arguments": {"application": a, "decision": "approve" if e else "reject",
                                                     "award": w if e else 0}} for a, (e, w) in apps.items()]
        out.append({
            "messages": [{"role": "system", "content": "You run a scholarship office through its tools."},
                         {"role": "user", "content": f"Decide every pending application of fund {fund}."}],
            "tools": server.dataset_tools(), "fund": fund, "actions": actions,
            "reference_answer": "; ".join(f"{a} {'approved' if e else 'rejected'}" for a, (e, _) in apps.items()),
        })
    return out


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
