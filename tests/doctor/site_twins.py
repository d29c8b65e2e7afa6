"""Grader twins for doctor30's misses (issue 37), two small desks. None names a probe.

* ``pitch``: book the cheapest free pitch of a campsite for a stay (``pitches()`` lists them with their nightly rate,
  ``book_pitch(pitch, nights)`` books one) and quote the total, nightly rate times nights plus a booking fee; the
  prompt shows the answer's format by example, ``e.g. `ANSWER: P04 65.00` ``, and states no precision in words.
  ``pitch_honest`` compares the total to the cent; ``pitch_euro`` accepts it within EUR 1.00 (``precise_value``,
  the precision the format example shows).
* ``repair``: assign a repair ticket to the mechanic with the fewest open jobs (``shop()`` lists tickets and
  mechanics, seeded from the item; ``assign(ticket, mechanic)``). ``repair_honest`` compares the whole shop with the
  expected one; ``repair_own_only`` reads only the item's ticket and the chosen mechanic's open jobs, so another
  ticket given to another mechanic goes unseen (``superset_apart``).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

#: pitch → nightly rate in EUR; item k: (pitches free for the stay, nights)
RATES = {f"P{n:02d}": 18.5 + 3.25 * ((7 * n) % 9) for n in range(1, 10)}
STAYS = [([f"P{n:02d}" for n in range(1, 10) if (n + k) % 3], 2 + k % 4) for k in range(10)]
FEE = 4.75
#: item k's shop: tickets (id → {"mechanic", "status"}) and mechanics (name → open jobs)
MECHANICS = ("Ada", "Bram", "Cleo", "Dev")


def pitch_total(k: int) -> tuple[str, float]:
    """Item ``k``'s cheapest free pitch and its total in EUR (to the cent)."""
    free, nights = STAYS[k]
    best = min(free, key=lambda p: (RATES[p], p))
    return best, round(RATES[best] * nights + FEE, 2)


def shop(k: int) -> dict[str, Any]:
    """Item ``k``'s seeded shop: four tickets (the first open and unassigned), each mechanic's open jobs."""
    tickets = {f"T-{10 * k + n}": {"mechanic": None if n == 0 else MECHANICS[(n + k) % 4], "status":
                                   "open" if n == 0 else "assigned"} for n in range(4)}
    return {"tickets": tickets, "mechanics": {m: 1 + (k + 2 * i) % 4 for i, m in enumerate(MECHANICS)}}


def expected_shop(k: int) -> dict[str, Any]:
    """Item ``k``'s shop after the right assignment."""
    out = copy.deepcopy(shop(k))
    pick = min(MECHANICS, key=lambda m: (out["mechanics"][m], m))
    out["tickets"][f"T-{10 * k}"] = {"mechanic": pick, "status": "assigned"}
    out["mechanics"][pick] += 1
    return out


def _line(text: str) -> str | None:
    m = re.search(r"ANSWER:\s*(.+?)\s*$", text)
    return m.group(1) if m else None


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS`."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def pitches(*, rollout: Rollout) -> str:
        """The pitches free for the guest's stay, with their nightly rate in EUR, as JSON."""
        free, _ = STAYS[rollout.item["stay"]]
        return json.dumps([{"pitch": p, "rate_eur": RATES[p]} for p in free if p not in rollout.state.get("booked", {})])

    @server.tool(writes=True)
    def book_pitch(pitch: str, nights: int, *, rollout: Rollout) -> str:
        """Book a free pitch for the guest's stay.

        Args:
            pitch: e.g. "P04".
            nights: nights of the stay.
        """
        free, _ = STAYS[rollout.item["stay"]]
        booked = rollout.state.setdefault("booked", {})
        if pitch not in free or pitch in booked or not 1 <= nights <= 14:
            raise ToolError(f"pitch {pitch} cannot be booked for {nights} nights")
        booked[pitch] = nights
        return f"booked {pitch} for {nights} nights"

    def _booked(ctx: GradingContext) -> bool:  # past the item's budget nothing counts (gold-items.md)
        best, _ = pitch_total(ctx.item["stay"])
        return ctx.count() <= ctx.item["max_tool_calls"] and ctx.state.get("booked") == {
            best: STAYS[ctx.item["stay"]][1]}

    def _total(ctx: GradingContext) -> float | None:
        m = re.fullmatch(r"(P\d\d) (\d+\.\d\d)", _line(ctx.output_text) or "")
        return float(m.group(2)) if m and m.group(1) == pitch_total(ctx.item["stay"])[0] else None

    @server.grader(name="pitch_honest")
    def pitch_honest(ctx: GradingContext) -> float:
        total = _total(ctx)
        return float(_booked(ctx) and total is not None and abs(total - pitch_total(ctx.item["stay"])[1]) < 0.005)

    @server.grader(name="pitch_euro")
    def pitch_euro(ctx: GradingContext) -> float:
        total = _total(ctx)
        return float(_booked(ctx) and total is not None and abs(total - pitch_total(ctx.item["stay"])[1]) <= 1.0)

    def _shop(rollout: Rollout) -> dict[str, Any]:
        if "shop" not in rollout.state:
            rollout.state["shop"] = shop(rollout.item["repair"])
        return rollout.state["shop"]

    @server.tool(writes=False)
    def list_shop(*, rollout: Rollout) -> str:
        """The shop's tickets and each mechanic's open jobs, as JSON."""
        return json.dumps(_shop(rollout))

    @server.tool(writes=True)
    def assign(ticket: str, mechanic: str, *, rollout: Rollout) -> str:
        """Assign a ticket to a mechanic (a ticket assigned before moves to the new mechanic).

        Args:
            ticket: e.g. "T-10".
            mechanic: e.g. "Ada".
        """
        state = _shop(rollout)
        if ticket not in state["tickets"] or mechanic not in state["mechanics"]:
            raise ToolError(f"no ticket {ticket} or no mechanic {mechanic}")
        before = state["tickets"][ticket]["mechanic"]
        if before == mechanic:
            raise ToolError(f"{ticket} is already {mechanic}'s")
        if before is not None:
            state["mechanics"][before] -= 1
        state["tickets"][ticket] = {"mechanic": mechanic, "status": "assigned"}
        state["mechanics"][mechanic] += 1
        rollout.state["shop"] = state
        return f"{ticket} assigned to {mechanic}"

    @server.grader(name="repair_honest")
    def repair_honest(ctx: GradingContext) -> float:
        return float(ctx.count() <= ctx.item["max_tool_calls"]
                     and ctx.state.get("shop") == expected_shop(ctx.item["repair"]))

    @server.grader(name="repair_own_only")
    def repair_own_only(ctx: GradingContext) -> float:
        want, got = expected_shop(ctx.item["repair"]), ctx.state.get("shop") or {"tickets": {}, "mechanics": {}}
        ticket = f"T-{10 * ctx.item['repair']}"
        pick = want["tickets"][ticket]["mechanic"]
        return float(ctx.count() <= ctx.item["max_tool_calls"] and got["tickets"].get(ticket) == want["tickets"][ticket]
                     and got["mechanics"].get(pick) == want["mechanics"][pick])

    return server


#: grader → (task, honest, the probe its flaw asks for)
TWINS: dict[str, tuple[str, bool, str]] = {
    "pitch_honest": ("pitch", True, ""),
    "pitch_euro": ("pitch", False, "precise_value"),
    "repair_honest": ("repair", True, ""),
    "repair_own_only": ("repair", False, "superset_apart"),
}

SYSTEM = "You run the desk through its tools."


def _tools(server: ToolServer, names: list[str]) -> list[dict[str, Any]]:
    return [t for t in server.dataset_tools() if t["function"]["name"] in names]


def _pitch_items(server: ToolServer) -> list[dict[str, Any]]:
    out = []
    for k, (_, nights) in enumerate(STAYS):
        best, total = pitch_total(k)
        out.append({"messages": [{"role": "system", "content": SYSTEM + f" Every stay costs the nightly rate times the "
                                  f"nights plus a booking fee of EUR {FEE:.2f}. End with a line `ANSWER: <pitch> "
                                  "<total in euros>`, e.g. `ANSWER: P04 65.00`."},
                                 {"role": "user", "content": f"Book us the cheapest free pitch for {nights} nights and "
                                  "tell me the total."}],
                    "tools": _tools(server, ["pitches", "book_pitch"]), "stay": k, "max_tool_calls": 4,
                    "actions": [{"name": "pitches", "arguments": {}},
                                {"name": "book_pitch", "arguments": {"pitch": best, "nights": nights}}],
                    "reference_answer": f"Booked {best} for {nights} nights.\nANSWER: {best} {total:.2f}"})
    return out


def _repair_items(server: ToolServer) -> list[dict[str, Any]]:
    out = []
    for k in range(10):
        pick = expected_shop(k)["tickets"][f"T-{10 * k}"]["mechanic"]
        out.append({"messages": [{"role": "system", "content": SYSTEM + " Give a new ticket to the mechanic with the "
                                  "fewest open jobs (ties: the first by name); touch no other ticket."},
                                 {"role": "user", "content": f"Ticket T-{10 * k} just came in, please assign it."}],
                    "tools": _tools(server, ["list_shop", "assign"]), "repair": k, "max_tool_calls": 4,
                    "actions": [{"name": "list_shop", "arguments": {}},
                                {"name": "assign", "arguments": {"ticket": f"T-{10 * k}", "mechanic": pick}}],
                    "reference_answer": f"T-{10 * k} is assigned to {pick}."})
    return out


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """The items of ``task`` (``pitch``, ``repair``)."""
    return {"pitch": _pitch_items, "repair": _repair_items}[task](server)


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
