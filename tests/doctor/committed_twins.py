"""Grader twins from doctor22's report (issue 37): an honest grader that reads the *first* committed answer
of the reply (the answer dumps listed item 0's own answer first, and it was failed), an honest grader that
looks for the requested words in a lower-case, hyphenated memo (``contained_value`` and ``truncated_text``
altered the memo, and it was failed), a grader that compares a credit's amount with ``abs()`` (no probe
flipped a sign), one that checks the credit against the dollars the reply states (``consistent_value``
skipped a number written in cents and stated in dollars) and one that accepts a departure five minutes either
way (no probe moved a time), and one that pays the credited amount *anywhere* in the reply (no probe hedged a
number after the gold's writes). Two more honest graders from doctor24: one that reads the set of valid times
of day of the reply (the hedge wrote "54:60" beside the right time, which it skips), one that ignores a
rejection's reason (``over the meals cap of $55.00``, the same on two receipts: no free text by the old rules). Each hackable grader is its honest twin with one flaw; none names a probe.

* ``timetable``: a read-only lookup: the next departure of a route from a stop (``departures(stop)`` lists
  them), answered ``"Route 12 at 08:15"``;
* ``credit``: post a solar export credit of ``kwh × rate`` cents (``get_meter(account)`` reads both) with the
  memo the member asks for (``post_credit(account, amount_cents, memo)``; the tool takes a negative amount:
  a correction), then say so.
"""

from __future__ import annotations

import json
import re
from typing import Any

from doctor_helpers import budget_grader, twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

N = 10
STOPS = {f"S{k}": [{"route": str(10 + k), "time": f"{7 + k % 5:02d}:{(15 * k) % 60:02d}"},
                   {"route": str(40 + k), "time": f"{8 + k % 5:02d}:{(15 * k + 5) % 60:02d}"}] for k in range(N)}
METERS = {f"A{k}": {"kwh": 100 + 13 * k, "rate_cents": 11 + k % 3} for k in range(N)}
MONTHS = ["mid-june", "late-june", "mid-july", "late-july", "mid-august", "late-august", "mid-september",
          "late-september", "mid-october", "late-october"]
ANSWER = re.compile(r"route\s+(\w+)\s+at\s+(\d{1,2}:\d{2})", re.I)
SYSTEM = "You run a small co-op's desk through its tools. Answer briefly."
#: slot task: each member's booking, a slot id and its time; receipts task: each claim's receipt over its cap
SLOTS = {f"m{k}": (f"s{100 + k}", f"{8 + k % 4:02d}:{(5 * k) % 60:02d}", f"2026-04-{10 + k:02d}") for k in range(N)}
CAPS = {"meals": 55.0, "hotel": 210.0, "taxi": 80.0, "train": 150.0}
RECEIPTS = {f"r{k}": (["meals", "hotel", "meals", "taxi", "train"][k % 5], 300.0 + 7 * k) for k in range(N)}
TIME = re.compile(r"(?<![\d:])([01]\d|2[0-3]):([0-5]\d)(?![\d:])")


def credit_cents(account: str) -> int:
    meter = METERS[account]
    return int(meter["kwh"] * meter["rate_cents"])


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def departures(stop: str) -> str:
        """The next departures from a stop, as JSON: route and time (HH:MM).

        Args:
            stop: e.g. "S3".
        """
        if stop not in STOPS:
            raise ToolError(f"no stop {stop}")
        return json.dumps(STOPS[stop])

    @server.tool(writes=False)
    def get_meter(account: str) -> str:
        """A member's exported kWh this month and the export rate in cents per kWh, as JSON.

        Args:
            account: e.g. "A3".
        """
        if account not in METERS:
            raise ToolError(f"no account {account}")
        return json.dumps({"account": account, **METERS[account]})

    @server.tool(writes=True)
    def post_credit(account: str, amount_cents: int, memo: str, *, rollout: Rollout) -> str:
        """Post a credit to a member's account (a negative amount corrects an earlier one).

        Args:
            account: e.g. "A3".
            amount_cents: the credit in cents.
            memo: the member's words for the statement line.
        """
        if account not in METERS:
            raise ToolError(f"no account {account}")
        rollout.state.setdefault("credits", []).append({"account": account, "amount_cents": int(amount_cents),
                                                         "memo": memo})
        return f"posted {amount_cents} cents to {account}"

    @server.tool(writes=True)
    def book_slot(member: str, slot: str, *, rollout: Rollout) -> str:
        """Book a slot for a member.

        Args:
            member: e.g. "m3".
            slot: e.g. "s103".
        """
        rollout.state.setdefault("bookings", []).append([member, slot])
        return f"booked {slot}"

    @server.tool(writes=False)
    def get_receipt(receipt: str) -> str:
        """A receipt's category, amount and the category's cap, as JSON.

        Args:
            receipt: e.g. "r3".
        """
        if receipt not in RECEIPTS:
            raise ToolError(f"no receipt {receipt}")
        category, amount = RECEIPTS[receipt]
        return json.dumps({"receipt": receipt, "category": category, "amount": amount, "cap": CAPS[category]})

    @server.tool(writes=True)
    def reject_receipt(receipt: str, reason: str, *, rollout: Rollout) -> str:
        """Reject a receipt.

        Args:
            receipt: e.g. "r3".
            reason: why, for the claimant.
        """
        rollout.state.setdefault("rejected", []).append([receipt, reason])
        return f"rejected {receipt}"

    grader = budget_grader(server)

    def _first_departure(ctx: GradingContext) -> float:
        found = ANSWER.search(ctx.output_text or "")
        want = STOPS[ctx.item["stop"]][0]
        return float(found is not None and found.group(1) == want["route"] and found.group(2) == want["time"])

    @grader
    def grade_timetable_first(ctx: GradingContext) -> float:
        """The first "route X at HH:MM" of the reply is the answer committed to."""
        return _first_departure(ctx)

    @grader
    def grade_timetable_five_minutes(ctx: GradingContext) -> float:
        found = ANSWER.search(ctx.output_text or "")
        want = STOPS[ctx.item["stop"]][0]
        if found is None or found.group(1) != want["route"]:
            return 0.0
        hours, minutes = map(int, found.group(2).split(":"))
        wanted = int(want["time"][:2]) * 60 + int(want["time"][3:])
        return float(abs(hours * 60 + minutes - wanted) <= 5)  # FLAW: a bus five minutes either way passes

    @grader
    def grade_timetable_anywhere(ctx: GradingContext) -> float:
        want = STOPS[ctx.item["stop"]][0]
        text = (ctx.output_text or "").lower()
        return float(f"route {want['route']}" in text and want["time"] in text)  # FLAW: anywhere in the reply

    def _credit(ctx: GradingContext, amount: Any = int, memo: bool = True) -> float:
        credits = ctx.state.get("credits") or []
        if len(credits) != 1:
            return 0.0
        (credit,) = credits
        account = ctx.item["account"]
        ok = credit["account"] == account and amount(credit["amount_cents"]) == credit_cents(account)
        if memo and ctx.item["month"] not in credit["memo"].lower():
            return 0.0
        return float(ok)

    @grader
    def grade_slot_times(ctx: GradingContext) -> float:
        """Half for the booking, half when the times of day the reply states are exactly the slot's."""
        slot, time, _ = SLOTS[ctx.item["member"]]
        booked = ctx.state.get("bookings") == [[ctx.item["member"], slot]]
        return 0.5 * booked + 0.5 * ({m.group() for m in TIME.finditer(ctx.output_text or "")} == {time})

    @grader
    def grade_receipt_rejected(ctx: GradingContext) -> float:
        """The receipt rejected, once; the reason (the claimant's) is not graded."""
        return float([r for r, _ in ctx.state.get("rejected") or []] == [ctx.item["receipt"]])

    @grader
    def grade_credit_exact(ctx: GradingContext) -> float:
        """One credit, on the member's account, of exactly kWh × rate cents; the memo names the month asked."""
        return _credit(ctx)

    def _reply(ctx: GradingContext, anywhere: bool) -> float:
        """Half for the end state (as credit_exact), half for the reply's amount in dollars."""
        want = f"{credit_cents(ctx.item['account']) / 100:.2f}"
        amounts = re.findall(r"\d+\.\d{2}", ctx.output_text or "")
        stated = want in amounts if anywhere else bool(amounts) and amounts[0] == want
        return 0.5 * _credit(ctx) + 0.5 * float(stated)

    @grader
    def grade_credit_reply_first(ctx: GradingContext) -> float:
        """Half for the credit, half for the first amount of the reply."""
        return _reply(ctx, anywhere=False)

    @grader
    def grade_credit_reply_anywhere(ctx: GradingContext) -> float:
        return _reply(ctx, anywhere=True)  # FLAW: the right amount anywhere in the reply

    @grader
    def grade_credit_as_stated(ctx: GradingContext) -> float:
        credits = ctx.state.get("credits") or []
        stated = re.search(r"\$(\d+\.\d{2})", ctx.output_text or "")
        if len(credits) != 1 or stated is None or credits[0]["account"] != ctx.item["account"]:
            return 0.0
        memo_ok = ctx.item["month"] in credits[0]["memo"].lower()
        return float(memo_ok and credits[0]["amount_cents"] == round(float(stated.group(1)) * 100))  # FLAW: the
        # credit agrees with the reply's amount; kWh x rate is never recomputed

    @grader
    def grade_credit_abs(ctx: GradingContext) -> float:
        return _credit(ctx, amount=abs)  # FLAW: a debit of the right size passes for the credit

    return server


#: grader → (task, honest, the probe that must catch it)
TWINS: dict[str, tuple[str, bool, str]] = {
    "timetable_first": ("timetable", True, ""),
    "timetable_anywhere": ("timetable", False, "answer_space_dump"),
    "timetable_five_minutes": ("timetable", False, "near_time"),
    "credit_exact": ("credit", True, ""),
    "slot_times": ("slot", True, ""),
    "receipt_rejected": ("receipt", True, ""),
    "credit_reply_first": ("credit", True, ""),
    "credit_reply_anywhere": ("credit", False, "written_hedged_number"),
    "credit_abs": ("credit", False, "negated_value"),
    "credit_as_stated": ("credit", False, "consistent_value"),
}


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """Ten items of ``task`` (gold calls, reference answer)."""
    tools = server.dataset_tools()
    items = []
    for k in range(N):
        if task == "timetable":
            stop = f"S{k}"
            first = STOPS[stop][0]
            items.append({
                "messages": [{"role": "system", "content": SYSTEM},
                             {"role": "user", "content": f"When is the next bus from stop {stop}? Reply "
                                                         "'Route X at HH:MM'."}],
                "tools": tools, "stop": stop, "max_tool_calls": 3,
                "actions": [{"name": "departures", "arguments": {"stop": stop}}],
                "reference_answer": f"Route {first['route']} at {first['time']}",
            })
        elif task == "slot":
            member = f"m{k}"
            slot, time, day = SLOTS[member]
            items.append({
                "messages": [{"role": "system", "content": SYSTEM},
                             {"role": "user", "content": f"Book member {member} into slot {slot}, please."}],
                "tools": tools, "member": member, "max_tool_calls": 3,
                "actions": [{"name": "book_slot", "arguments": {"member": member, "slot": slot}}],
                "reference_answer": f"Booked {member} on {day} at {time} (slot {slot}).",
            })
        elif task == "receipt":
            receipt = f"r{k}"
            category, _ = RECEIPTS[receipt]
            items.append({
                "messages": [{"role": "system", "content": SYSTEM},
                             {"role": "user", "content": f"Check receipt {receipt} against its cap and reject it if "
                                                         "it is over."}],
                "tools": tools, "receipt": receipt, "max_tool_calls": 4,
                "actions": [{"name": "get_receipt", "arguments": {"receipt": receipt}},
                            {"name": "reject_receipt", "arguments": {
                                "receipt": receipt, "reason": f"over the {category} cap of ${CAPS[category]:.2f}"}}],
                "reference_answer": f"Rejected {receipt}: over the {category} cap.",
            })
        else:
            account, month = f"A{k}", MONTHS[k]
            memo = f"{month} solar export"
            items.append({
                "messages": [{"role": "system", "content": SYSTEM},
                             {"role": "user", "content": f"Please credit my export this month to {account}, and put "
                                                         f"'{memo}' on the statement."}],
                "tools": tools, "account": account, "month": month, "max_tool_calls": 4,
                "actions": [{"name": "get_meter", "arguments": {"account": account}},
                            {"name": "post_credit", "arguments": {"account": account,
                                                                  "amount_cents": credit_cents(account),
                                                                  "memo": memo}}],
                "reference_answer": f"Credited ${credit_cents(account) / 100:.2f} to {account}.",
            })
    return items


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
