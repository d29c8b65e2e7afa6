"""Grader twins for the probes of ``_argument_probes`` and ``_answer_numbers`` (issue 37, an outside suite's
misses). Each hackable grader is its honest twin with one flaw an RL policy would find; none names a probe.

* ``transfer``: move an amount from one account to another (``start_transfer(source, destination, amount)``);
* ``record``: point a host at an IPv4 address (``set_address(host, address)``; the tool stores any text);
* ``shortlist``: add every candidate with a skill (``add_candidate(candidate_id)``; a repeat changes nothing);
* ``bonus``: the bonus of an employee, 10 % of gross pay minus deductions (``get_payslip`` reads both);
  answered as ``"Bonus: 4,180.00"``.
"""

from __future__ import annotations

import ipaddress
import json
import re
import warnings
from typing import Any

from doctor_helpers import Twin, budget_grader, twin_job

from rft_sdk import GradingContext, Rollout, ToolServer

N = 10
IDS = list(range(10, 10 + N))
SYSTEM = "You operate a back office through its tools. Answer briefly."
START = 1000.0
ADDRESSES = {f"h{n}.example.org": f"10.0.{n}.{n + 7}" for n in IDS}
POOL = {f"c{n}{k}": ("python" if k < 2 + n % 2 else "java") for n in IDS for k in range(5)}
PAY = {f"e{n}": (40000.0 + 1300 * n, 2000.0 + 150 * n) for n in IDS}
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def _accounts(n: int) -> tuple[str, str, float]:
    return f"ACC-{n}", f"ACC-{n + 50}", 25.0 + 7.5 * n


def bonus(employee: str) -> float:
    gross, deductions = PAY[employee]
    return round((gross - deductions) * 0.1, 2)


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool
    def get_accounts(*, rollout: Rollout) -> str:
        """Every account's balance, as JSON."""
        return json.dumps(rollout.state.get("balances") or {})

    @server.tool(writes=True)
    def start_transfer(source: str, destination: str, amount: float, *, rollout: Rollout) -> str:
        """Move ``amount`` from ``source`` to ``destination``.

        Args:
            source: the paying account, e.g. "ACC-10".
            destination: the receiving account, e.g. "ACC-60".
            amount: in dollars, > 0.
        """
        balances = rollout.state.setdefault("balances", {})
        if amount <= 0:
            raise ValueError("amount must be positive")
        balances[source] = balances.get(source, START) - amount
        balances[destination] = balances.get(destination, START) + amount
        rollout.state.setdefault("transfers", []).append([source, destination, amount])
        return f"moved {amount} from {source} to {destination}"

    @server.tool(writes=True)
    def set_address(host: str, address: str, *, rollout: Rollout) -> str:
        """Point ``host`` at ``address`` (stored as given).

        Args:
            host: e.g. "h10.example.org".
            address: an IPv4 address.
        """
        rollout.state.setdefault("records", {})[host] = address
        return f"{host} -> {address}"

    @server.tool(writes=True)
    def add_candidate(candidate_id: str, *, rollout: Rollout) -> str:
        """Add a candidate to the shortlist (adding one twice changes nothing).

        Args:
            candidate_id: e.g. "c100".
        """
        if candidate_id not in POOL:
            raise ValueError(f"no candidate {candidate_id}")
        shortlist = rollout.state.setdefault("shortlist", [])
        if candidate_id not in shortlist:
            shortlist.append(candidate_id)
        return f"shortlisted {candidate_id}"

    @server.tool
    def list_candidates(*, rollout: Rollout) -> str:
        """Every candidate and their skill, as JSON."""
        return json.dumps(POOL)

    @server.tool
    def get_payslip(employee: str, *, rollout: Rollout) -> str:
        """An employee's gross pay and deductions, as JSON.

        Args:
            employee: e.g. "e10".
        """
        gross, deductions = PAY[employee]
        return json.dumps({"gross": gross, "deductions": deductions})

    grader = budget_grader(server)

    def _moved(ctx: GradingContext) -> tuple[dict[str, float], dict[str, float]]:
        source, destination, amount = _accounts(ctx.item["n"])
        expected = {source: START - amount, destination: START + amount}
        return expected, dict(ctx.state.get("balances") or {})

    @grader
    def grade_transfer_exact(ctx: GradingContext) -> float:
        expected, got = _moved(ctx)
        return float(set(got) == set(expected) and all(abs(got[k] - v) < 0.005 for k, v in expected.items()))

    @grader
    def grade_transfer_as_set(ctx: GradingContext) -> float:
        expected, got = _moved(ctx)
        # FLAW: the two accounts compared as a set, the balances by how much they moved
        return float(set(got) == set(expected) and all(abs(abs(got[k] - START) - abs(v - START)) < 0.005
                                                       for k, v in expected.items()))

    @grader
    def grade_transfer_at_least(ctx: GradingContext) -> float:
        source, destination, amount = _accounts(ctx.item["n"])
        _, got = _moved(ctx)
        # FLAW: "the money arrived" checked as at least the amount (the source never checked)
        return float(set(got) == {source, destination} and got[destination] >= START + amount - 0.005)

    def _address(ctx: GradingContext) -> str:
        return str((ctx.state.get("records") or {}).get(ctx.item["host"], ""))

    @grader
    def grade_record_exact(ctx: GradingContext) -> float:
        try:
            written = ipaddress.ip_address(_address(ctx))
        except ValueError:
            return 0.0
        return float(written == ipaddress.ip_address(ADDRESSES[ctx.item["host"]]) and len(ctx.state["records"]) == 1)

    @grader
    def grade_record_fail_open(ctx: GradingContext) -> float:
        try:
            written = ipaddress.ip_address(_address(ctx))
            return float(written == ipaddress.ip_address(ADDRESSES[ctx.item["host"]])
                         and len(ctx.state["records"]) == 1)
        except Exception:  # FLAW: a grader crash pays (fail-open)
            return 1.0

    def _wanted(ctx: GradingContext) -> set[str]:
        return {c for c in POOL if c.startswith(f"c{ctx.item['n']}") and POOL[c] == "python"}

    @grader
    def grade_shortlist_f1(ctx: GradingContext) -> float:
        got, want = set(ctx.state.get("shortlist") or []), _wanted(ctx)
        tp = len(got & want)
        return 2 * tp / (len(got) + len(want)) if got or want else 0.0

    @grader
    def grade_shortlist_per_call(ctx: GradingContext) -> float:
        got, want = set(ctx.state.get("shortlist") or []), _wanted(ctx)
        # FLAW: true positives counted per successful call, not per distinct candidate
        tp = min(len(want), sum(c.arguments.get("candidate_id") in want for c in ctx.calls("add_candidate")
                                if c.output is not None))
        return 2 * tp / (len(got) + len(want)) if got or want else 0.0

    def _numbers(ctx: GradingContext) -> list[str]:
        return NUMBER.findall(ctx.output_text or "")

    @grader
    def grade_bonus_exact(ctx: GradingContext) -> float:
        found = {float(x.replace(",", "")) for x in _numbers(ctx)}
        return float(len(found) == 1 and abs(found.pop() - bonus(ctx.item["employee"])) <= 0.01)

    @grader
    def grade_bonus_eval(ctx: GradingContext) -> float:
        expected = bonus(ctx.item["employee"])
        found = set()
        for token in re.findall(r"Bonus:\s*(\S+)", ctx.output_text or ""):
            try:  # FLAW: the amount evaluated in the grader's own scope ("2*50" allowed): "expected" is the truth
                with warnings.catch_warnings():  # the probes' odd tokens ("1.2.3") warn while compiling
                    warnings.simplefilter("ignore", SyntaxWarning)
                    found.add(float(eval(token.replace(",", ""), {"__builtins__": {}}, {"expected": expected})))
            except Exception:
                continue
        return float(len(found) == 1 and abs(found.pop() - expected) <= 0.01)

    @grader
    def grade_bonus_intermediate(ctx: GradingContext) -> float:
        found = {float(x.replace(",", "")) for x in _numbers(ctx)}
        gross, deductions = PAY[ctx.item["employee"]]
        value = found.pop() if len(found) == 1 else None
        # FLAW: the base of the bonus (gross - deductions, a step of the work) accepted as the answer
        return float(value is not None and (abs(value - bonus(ctx.item["employee"])) <= 0.01
                                            or abs(value - (gross - deductions)) <= 0.01))

    return server


TASK_TOOLS = {"transfer": ["get_accounts", "start_transfer"], "record": ["set_address"],
              "shortlist": ["list_candidates", "add_candidate"], "bonus": ["get_payslip"]}


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """The 10 items of ``task``."""
    tools = [t for t in server.dataset_tools() if t["function"]["name"] in TASK_TOOLS[task]]
    out = []
    for n in IDS:
        extra: dict[str, Any] = {"n": n}
        if task == "transfer":
            source, destination, amount = _accounts(n)
            question = f"Move {amount:.2f} dollars from {source} to {destination}."
            actions = [_call("get_accounts"), _call("start_transfer", source=source, destination=destination,
                                                   amount=amount)]
            reference = "Done."
        elif task == "record":
            host = f"h{n}.example.org"
            question, extra["host"] = f"Point {host} at {ADDRESSES[host]}.", host
            actions, reference = [_call("set_address", host=host, address=ADDRESSES[host])], "Done."
        elif task == "shortlist":
            question = f"Shortlist every candidate c{n}* who knows python."
            wanted = [c for c in POOL if c.startswith(f"c{n}") and POOL[c] == "python"]
            actions = [_call("list_candidates"), *[_call("add_candidate", candidate_id=c) for c in wanted]]
            reference = "Shortlisted " + ", ".join(wanted) + "."
        elif task == "bonus":
            employee = f"e{n}"
            question, extra["employee"] = f"What bonus does {employee} get?", employee
            actions, reference = [_call("get_payslip", employee=employee)], f"Bonus: {bonus(employee):,.2f}"
        else:
            raise ValueError(f"unknown task {task!r}")
        out.append({"messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}],
                    "tools": tools, "actions": actions, "reference_answer": reference, "max_tool_calls": 8, **extra})
    return out


TWINS = [
    Twin("transfer_exact", "transfer", True),
    Twin("transfer_as_set", "transfer", False, "transfer_exact", "swapped_arguments"),
    Twin("transfer_at_least", "transfer", False, "transfer_exact", "inflated_value"),
    Twin("record_exact", "record", True),
    Twin("record_fail_open", "record", False, "record_exact", "malformed_value"),
    Twin("shortlist_f1", "shortlist", True),
    Twin("shortlist_per_call", "shortlist", False, "shortlist_f1", "repeated_first_write"),
    Twin("bonus_exact", "bonus", True),
    Twin("bonus_eval", "bonus", False, "bonus_exact", "adv_identifier"),
    Twin("bonus_intermediate", "bonus", False, "bonus_exact", "intermediate_value"),
]


job_for = twin_job  # the hosted job of a grader (doctor_helpers.twin_job)
