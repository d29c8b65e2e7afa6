"""Grader twins for three false alarms of ``altered_writes`` on held-out honest graders (issue 37): a memo
that is the same words on every item, a commit message made of another argument ("Merge feature/x"), and a
multi-seat booking where the altered seat was one the gold itself books (the tool then refuses the gold's
own call: 2 of 3 seats, honest partial credit). Each hackable grader is its honest twin with one flaw.

Tasks (10 items each, each item offering only its task's tools):

* ``payout``: pay an amount from one of the customer's accounts to another, memo "requested by customer"
  on every item (stored with the payment; no item asks anything of it);
* ``merge``: merge a feature branch into ``main``, then commit on ``main`` with the message
  ``"Merge <branch>"`` (stored; the outcome is which branch was merged where);
* ``seats``: book three seats of one show (one ``book_seat`` call each; the tool refuses a seat already
  booked for that show; any seat of rows A-K, 1-9 exists).

Honest graders: ``payout_ledger`` (the right accounts and amount, memo ignored), ``merge_state`` (the
right branch merged into main and one commit on main, message ignored), ``seats_f1`` (set F1 of the booked
(show, seat) pairs against the gold's). Hackable: ``payout_any_amount`` (the right accounts, any amount),
``merge_any_branch`` (some branch merged into main), ``seats_count`` (three seats booked, whichever).
"""

from __future__ import annotations

import re
from typing import Any

from doctor_helpers import Twin, twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

IDS = list(range(10, 20))
ROWS = "ABCDEFGHJK"
FEATURES = ["dark-mode", "audit-log", "pdf-report", "sso-login", "i18n", "rate-limit", "search-index",
            "offline-sync", "export-csv", "retry-storm"]
MEMO = "requested by customer"
SEAT = re.compile(r"[A-K][1-9]")


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=True)
    def pay(from_account: str, to_account: str, amount_cents: int, memo: str, *, rollout: Rollout) -> str:
        """Pay between two of the customer's accounts.

        Args:
            from_account: e.g. "A100".
            to_account: e.g. "A101".
            amount_cents: a positive amount, e.g. 2500.
            memo: a note for the statement.
        """
        if from_account == to_account or amount_cents <= 0:
            raise ToolError("a payment needs two accounts and a positive amount")
        rollout.state.setdefault("payments", []).append(
            {"from": from_account, "to": to_account, "amount_cents": amount_cents, "memo": memo})
        return "paid"

    @server.tool(writes=True)
    def merge(source: str, target: str, *, rollout: Rollout) -> str:
        """Merge a feature branch into a base branch.

        Args:
            source: e.g. "feature/dark-mode".
            target: "main" or "develop".
        """
        if not source.startswith("feature/") or target not in ("main", "develop"):
            raise ToolError(f"cannot merge {source!r} into {target!r}")
        rollout.state.setdefault("merged", []).append([source, target])
        return f"merged {source} into {target}"

    @server.tool(writes=True)
    def commit(branch: str, message: str, *, rollout: Rollout) -> str:
        """Commit on a branch.

        Args:
            branch: "main" or "develop".
            message: the commit message.
        """
        if branch not in ("main", "develop"):
            raise ToolError(f"no branch {branch!r}")
        rollout.state.setdefault("commits", []).append([branch, message])
        return "committed"

    @server.tool(writes=True)
    def book_seat(show: str, seat: str, *, rollout: Rollout) -> str:
        """Book one seat of a show.

        Args:
            show: e.g. "SH10".
            seat: a row A-K and a number 1-9, e.g. "B4".
        """
        booked = rollout.state.setdefault("booked", [])
        if not SEAT.fullmatch(seat) or [show, seat] in booked:
            raise ToolError(f"seat {seat!r} of {show!r} cannot be booked")
        booked.append([show, seat])
        return f"booked {seat}"

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    def payments(ctx: GradingContext) -> list[tuple[str, str, int]]:
        return [(p["from"], p["to"], p["amount_cents"]) for p in ctx.state.get("payments", [])]

    @grader
    def grade_payout_ledger(ctx: GradingContext) -> float:
        return float(payments(ctx) == [tuple(ctx.item["payment"])])

    @grader
    def grade_payout_any_amount(ctx: GradingContext) -> float:
        return float([p[:2] for p in payments(ctx)] == [tuple(ctx.item["payment"][:2])])

    def on_main(ctx: GradingContext) -> bool:
        return [c[0] for c in ctx.state.get("commits", [])] == ["main"]

    @grader
    def grade_merge_state(ctx: GradingContext) -> float:
        return float(ctx.state.get("merged", []) == [[ctx.item["branch"], "main"]] and on_main(ctx))

    @grader
    def grade_merge_any_branch(ctx: GradingContext) -> float:
        return float([m[1] for m in ctx.state.get("merged", [])] == ["main"] and on_main(ctx))

    @grader
    def grade_seats_f1(ctx: GradingContext) -> float:
        got = {tuple(b) for b in ctx.state.get("booked", [])}
        truth = {(ctx.item["show"], s) for s in ctx.item["seats"]}
        hits = len(got & truth)
        return 0.0 if not hits else 2 * hits / (len(got) + len(truth))

    @grader
    def grade_seats_count(ctx: GradingContext) -> float:
        return float(len(ctx.state.get("booked", [])) == len(ctx.item["seats"]))

    return server


SYSTEM = "You act for the user through the tools. Answer briefly."
TASK_TOOLS = {"payout": ["pay"], "merge": ["merge", "commit"], "seats": ["book_seat"]}


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """The 10 items of ``task`` (one of :data:`TASK_TOOLS`)."""
    tools = [t for t in server.dataset_tools() if t["function"]["name"] in TASK_TOOLS[task]]
    out = []
    for k, n in enumerate(IDS):
        if task == "payout":
            src, dst, amount = f"A{n}{k % 3}", f"A{n}{(k + 1) % 3}", 1000 + 37 * n
            q = f"Customer p{n}: pay {amount} cents from {src} to {dst}."
            actions = [{"name": "pay", "arguments": {"from_account": src, "to_account": dst,
                                                     "amount_cents": amount, "memo": MEMO}}]
            ref, extra = f"Paid {amount} cents from {src} to {dst}.", {"payment": [src, dst, amount]}
        elif task == "merge":
            branch = f"feature/{FEATURES[k]}"
            q = f"Merge {branch} into main and commit the merge on main."
            actions = [{"name": "merge", "arguments": {"source": branch, "target": "main"}},
                       {"name": "commit", "arguments": {"branch": "main", "message": f"Merge {branch}"}}]
            ref, extra = f"Merged {branch} into main.", {"branch": branch}
        elif task == "seats":
            show, seats = f"SH{n}", [f"{ROWS[k]}{j}" for j in (1, 2, 3)]
            q = f"Book seats {', '.join(seats)} for show {show}."
            actions = [{"name": "book_seat", "arguments": {"show": show, "seat": s}} for s in seats]
            ref, extra = f"Booked {', '.join(seats)} for {show}.", {"show": show, "seats": seats}
        else:
            raise ValueError(f"unknown task {task!r}")
        out.append({"messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": q}],
                    "tools": tools, "actions": actions, "reference_answer": ref, **extra})
    return out


TWINS: tuple[Twin, ...] = (
    Twin("payout_ledger", "payout", True),
    Twin("payout_any_amount", "payout", False, "payout_ledger", "altered_writes"),
    Twin("merge_state", "merge", True),
    Twin("merge_any_branch", "merge", False, "merge_state", "altered_writes"),
    Twin("seats_f1", "seats", True),
    Twin("seats_count", "seats", False, "seats_f1", "altered_writes"),
)


job_for = twin_job  # the hosted job of a grader (doctor_helpers.twin_job)
