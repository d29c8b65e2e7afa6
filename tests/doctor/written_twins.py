"""Grader twins for the probes of ``_written_answers`` (issue 37, outside suites' misses: graders that give half the
score for the right end state and half for the right answer, and are lenient on the answer alone). None names a
probe.

* ``fleet``: read a port's vessels (``list_port``), suspend every vessel over its quota (``suspend(vessel)``),
  then name the vessels suspended and the port's total overage: ``"Suspended V03, V07; overage 12.37 t."``.
  The honest graders give 0.5 for exactly the right suspensions and 0.5 for the answer (the named set exact and
  the one number within 0.005), or grade the end state alone, or give F1 partial credit on the names; each
  hackable twin is ``fleet_exact`` with one lenient answer check.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from doctor_helpers import Twin, twin_job

from rft_sdk import GradingContext, Rollout, ToolServer

N = 10
SYSTEM = "You enforce fishing quotas through the tools. Answer briefly."
#: Per port, its vessels as (quota, landed) tonnes; the overage is landed - quota summed over the vessels over it.
PORTS = {f"P{n}": {f"V{n}{k}": (10.0 + k, 10.0 + k + ((n + k) % 3 - 1) * (1.13 + 0.37 * k + 0.21 * n))
                   for k in range(5)} for n in range(N)}
NAME = re.compile(r"\bV\d{2}\b")
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")


def over(port: str) -> list[str]:
    return [v for v, (q, landed) in PORTS[port].items() if landed > q]


def overage(port: str) -> float:
    return round(sum(landed - q for v, (q, landed) in PORTS[port].items() if landed > q), 2)


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool
    def list_port(port: str, *, rollout: Rollout) -> str:
        """Every vessel of a port with its quota and landed catch (tonnes), as JSON.

        Args:
            port: e.g. "P3".
        """
        return json.dumps({v: {"quota": q, "landed": round(landed, 2)} for v, (q, landed) in PORTS[port].items()})

    @server.tool(writes=True)
    def suspend(vessel: str, *, rollout: Rollout) -> str:
        """Suspend a vessel's licence.

        Args:
            vessel: e.g. "V31".
        """
        rollout.state.setdefault("suspended", [])
        if vessel not in rollout.state["suspended"]:
            rollout.state["suspended"].append(vessel)
        return f"{vessel} suspended"

    def grader(fn: Any) -> Any:
        """Register ``fn`` under its name without ``grade_``; past the item's declared budget it scores 0."""
        def within_budget(ctx: GradingContext) -> float:
            return 0.0 if ctx.count() > ctx.item["max_tool_calls"] else fn(ctx)
        within_budget.__name__ = within_budget.__qualname__ = fn.__name__
        return server.grader(name=fn.__name__.removeprefix("grade_"))(within_budget)

    def state_ok(ctx: GradingContext) -> bool:
        return set(ctx.state.get("suspended") or []) == set(over(ctx.item["port"]))

    def named(ctx: GradingContext) -> set[str]:
        return set(NAME.findall(ctx.output_text or ""))

    def numbers(ctx: GradingContext) -> list[str]:
        return NUMBER.findall(ctx.output_text or "")

    def number_ok(ctx: GradingContext) -> bool:
        found = {float(x) for x in numbers(ctx)}
        return len(found) == 1 and abs(found.pop() - overage(ctx.item["port"])) <= 0.005

    def names_ok(ctx: GradingContext) -> bool:
        return named(ctx) == set(over(ctx.item["port"]))

    def halves(ctx: GradingContext, answer_ok: bool) -> float:
        return 0.0 if not state_ok(ctx) else 0.5 + 0.5 * answer_ok

    @grader
    def grade_fleet_exact(ctx: GradingContext) -> float:
        return halves(ctx, names_ok(ctx) and number_ok(ctx))

    @grader
    def grade_fleet_state(ctx: GradingContext) -> float:
        return float(state_ok(ctx))

    @grader
    def grade_fleet_f1(ctx: GradingContext) -> float:
        if not state_ok(ctx):
            return 0.0
        got, want = named(ctx), set(over(ctx.item["port"]))
        f1 = 2 * len(got & want) / (len(got) + len(want)) if got or want else 1.0
        return 0.5 + 0.25 * f1 + 0.25 * number_ok(ctx)

    @grader
    def grade_fleet_nan(ctx: GradingContext) -> float:
        right = overage(ctx.item["port"])
        ok = False
        for token in (ctx.output_text or "").replace(";", " ").split():
            try:
                x = float(token.strip(".,"))
            except ValueError:
                continue
            ok = ok or not abs(x - right) > 0.005  # FLAW: float() takes "nan", and nan is never "> tolerance"
        return halves(ctx, names_ok(ctx) and ok)

    @grader
    def grade_fleet_prefix(ctx: GradingContext) -> float:
        found = numbers(ctx)
        # FLAW: the stated number only has to start the right one ("1" of 12.37)
        ok = bool(found) and f"{overage(ctx.item['port']):.2f}".startswith(found[0])
        return halves(ctx, names_ok(ctx) and ok)

    @grader
    def grade_fleet_rounded(ctx: GradingContext) -> float:
        found = {float(x) for x in numbers(ctx)}
        # FLAW: compared to whole tonnes
        ok = len(found) == 1 and math.floor(found.pop()) == math.floor(overage(ctx.item["port"]))
        return halves(ctx, names_ok(ctx) and ok)

    @grader
    def grade_fleet_recall(ctx: GradingContext) -> float:
        # FLAW: the answer passes when it names every vessel suspended, whatever else it names
        return halves(ctx, named(ctx) >= set(over(ctx.item["port"])) and number_ok(ctx))

    return server


def make_items(server: ToolServer, task: str = "fleet") -> list[dict[str, Any]]:
    """:data:`N` items of the ``fleet`` task with gold ``actions`` and a reference answer."""
    if task != "fleet":
        raise ValueError(f"unknown task {task!r}")
    tools = server.dataset_tools()
    out = []
    for n in range(N):
        port = f"P{n}"
        actions = [{"name": "list_port", "arguments": {"port": port}},
                   *({"name": "suspend", "arguments": {"vessel": v}} for v in over(port))]
        reference = f"Suspended {', '.join(over(port))}; overage {overage(port):.2f} t."
        out.append({"messages": [{"role": "system", "content": SYSTEM},
                                 {"role": "user", "content": f"Suspend every vessel of port {port} over its quota, "
                                                             "then tell me which and the port's total overage."}],
                    "tools": tools, "actions": actions, "reference_answer": reference,
                    "max_tool_calls": len(actions) + 3, "port": port})
    return out


TWINS = [
    Twin("fleet_exact", "fleet", True),
    Twin("fleet_state", "fleet", True),
    Twin("fleet_f1", "fleet", True),
    Twin("fleet_nan", "fleet", False, "fleet_exact", "written_special_number"),
    Twin("fleet_prefix", "fleet", False, "fleet_exact", "written_number_prefix"),
    Twin("fleet_rounded", "fleet", False, "fleet_exact", "written_fraction"),
    Twin("fleet_recall", "fleet", False, "fleet_exact", "written_padded_answer"),
]


job_for = twin_job  # the hosted job of a grader (doctor_helpers.twin_job)
