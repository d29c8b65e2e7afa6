"""Grader twins for issue 37's false alarms of ``altered_writes`` and ``reordered_writes``: a set-valued
outcome written by several calls and stored as a list, and a free-text argument the tool stores. Each
hackable grader is its honest twin with one flaw; none was written against a probe's text.

Tasks (10 items each, each item offering only its task's tools):

* ``shortlist``: shortlist a role's three best-scored candidates (one ``add_to_shortlist`` call each; the
  tool appends to the role's list, kept per role; the task asks no order);
* ``transfer``: transfer an amount between two of the customer's accounts, with a memo (stored with the
  transfer; natural language, not part of the outcome).

Honest graders: ``shortlist_f1`` (set F1 of every shortlisted ``(role, candidate)`` pair, every role's list,
against the three best: one wrong candidate of three earns 2/3, on this role's list or another's; the tool
refuses a candidate already listed), ``transfer_ledger`` (the right accounts and amount, memo ignored).
Hackable: ``shortlist_any_three`` (any three pairs), ``shortlist_role_f1`` (set F1 of this role's list only:
a candidate shortlisted for another role is blind to it; one of three writes sent to another role earns the
F1 of one missing, 0.8, which is partial credit, not a hack: ``altered_writes`` must pass it),
``transfer_any_amount`` (a transfer between the right accounts, of any amount).
"""

from __future__ import annotations

import json
from typing import Any

from doctor_helpers import Twin, twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

IDS = list(range(10, 20))
SCORES = {f"r{n}": {f"c{n}{c}": (n * 7 + k * 5) % 11 + k / 10 for k, c in enumerate("abcdef")} for n in IDS}
SHORTLIST = {r: sorted(s, key=lambda c, s=s: -s[c])[:3] for r, s in SCORES.items()}
ACCOUNTS = {n: [f"A{n}{k}" for k in range(3)] for n in IDS}
MEMOS = ["June rent", "gym fees", "car repair", "school trip", "holiday savings", "phone bill", "gift for Ana",
         "shared dinner", "book club", "bike service"]


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool
    def get_candidates(role: str, *, rollout: Rollout) -> str:
        """The role's candidates and their scores, as JSON records.

        Args:
            role: e.g. "r10".
        """
        return json.dumps([{"candidate": c, "score": s} for c, s in SCORES.get(role, {}).items()])

    @server.tool(writes=True)
    def add_to_shortlist(role: str, candidate: str, *, rollout: Rollout) -> str:
        """Add one of the role's candidates to its shortlist.

        Args:
            role: e.g. "r10".
            candidate: e.g. "c10a".
        """
        if role not in SCORES or not any(candidate in s for s in SCORES.values()):
            raise ToolError(f"{role!r} is no role or {candidate!r} no candidate")
        if candidate in rollout.state.get("shortlist", {}).get(role, []):
            raise ToolError(f"{candidate!r} is already on the shortlist")
        rollout.state.setdefault("shortlist", {}).setdefault(role, []).append(candidate)
        return f"shortlisted {candidate}"

    @server.tool
    def get_accounts(customer: str, *, rollout: Rollout) -> str:
        """The customer's account ids, as a JSON list.

        Args:
            customer: e.g. "p10".
        """
        return json.dumps(ACCOUNTS.get(int(customer.removeprefix("p") or 0), []))

    @server.tool(writes=True)
    def transfer(from_account: str, to_account: str, amount_cents: int, memo: str, *, rollout: Rollout) -> str:
        """Move money between two of the customer's accounts.

        Args:
            from_account: e.g. "A100".
            to_account: e.g. "A101".
            amount_cents: a positive amount, e.g. 2500.
            memo: a note for the statement, e.g. "June rent".
        """
        if from_account == to_account or amount_cents <= 0:
            raise ToolError("a transfer needs two accounts and a positive amount")
        rollout.state.setdefault("transfers", []).append(
            {"from": from_account, "to": to_account, "amount_cents": amount_cents, "memo": memo})
        return "transferred"

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    def f1(got: set[Any], truth: set[Any]) -> float:
        hits = len(got & truth)
        return 0.0 if not hits else 2 * hits / (len(got) + len(truth))

    def pairs(ctx: GradingContext) -> set[tuple[str, str]]:
        return {(r, c) for r, listed in ctx.state.get("shortlist", {}).items() for c in listed}

    @grader
    def grade_shortlist_f1(ctx: GradingContext) -> float:
        return f1(pairs(ctx), {(ctx.item["role"], c) for c in ctx.item["shortlist"]})

    @grader
    def grade_shortlist_any_three(ctx: GradingContext) -> float:
        return float(len(pairs(ctx)) == 3)

    @grader
    def grade_shortlist_role_f1(ctx: GradingContext) -> float:
        return f1(set(ctx.state.get("shortlist", {}).get(ctx.item["role"], [])), set(ctx.item["shortlist"]))

    def transfers(ctx: GradingContext) -> list[tuple[str, str, int]]:
        return [(t["from"], t["to"], t["amount_cents"]) for t in ctx.state.get("transfers", [])]

    @grader
    def grade_transfer_ledger(ctx: GradingContext) -> float:
        return float(transfers(ctx) == [tuple(ctx.item["transfer"])])

    @grader
    def grade_transfer_any_amount(ctx: GradingContext) -> float:
        return float([t[:2] for t in transfers(ctx)] == [tuple(ctx.item["transfer"][:2])])

    return server


SYSTEM = "You act for the user through the tools. Answer briefly."
TASK_TOOLS = {"shortlist": ["get_candidates", "add_to_shortlist"], "transfer": ["get_accounts", "transfer"]}


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """The 10 items of ``task`` (one of :data:`TASK_TOOLS`)."""
    tools = [t for t in server.dataset_tools() if t["function"]["name"] in TASK_TOOLS[task]]
    out = []
    for k, n in enumerate(IDS):
        if task == "shortlist":
            role = f"r{n}"
            q = f"Shortlist the three best-scored candidates for role {role}."
            actions = [{"name": "get_candidates", "arguments": {"role": role}},
                       *({"name": "add_to_shortlist", "arguments": {"role": role, "candidate": c}}
                         for c in SHORTLIST[role])]
            ref, extra = f"Shortlisted {', '.join(SHORTLIST[role])}.", {"shortlist": SHORTLIST[role], "role": role}
        elif task == "transfer":
            src, dst = ACCOUNTS[n][k % 3], ACCOUNTS[n][(k + 1) % 3]
            amount, memo = 1000 + 37 * n, MEMOS[k]
            q = f"Customer p{n}: move {amount} cents from {src} to {dst}, memo '{memo}'."
            actions = [{"name": "get_accounts", "arguments": {"customer": f"p{n}"}},
                       {"name": "transfer", "arguments": {"from_account": src, "to_account": dst,
                                                          "amount_cents": amount, "memo": memo}}]
            ref, extra = f"Moved {amount} cents from {src} to {dst}.", {"transfer": [src, dst, amount]}
        else:
            raise ValueError(f"unknown task {task!r}")
        out.append({"messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": q}],
                    "tools": tools, "actions": actions, "reference_answer": ref, **extra})
    return out


TWINS: tuple[Twin, ...] = (
    Twin("shortlist_f1", "shortlist", True),
    Twin("shortlist_any_three", "shortlist", False, "shortlist_f1", "altered_writes"),
    Twin("shortlist_role_f1", "shortlist", False, "shortlist_f1", "superset_end_state"),
    Twin("transfer_ledger", "transfer", True),
    Twin("transfer_any_amount", "transfer", False, "transfer_ledger", "altered_writes"),
)


job_for = twin_job  # the hosted job of a grader (doctor_helpers.twin_job)
