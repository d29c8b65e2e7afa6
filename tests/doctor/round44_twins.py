"""Grader twins for doctor44's misses (issue 37): small tasks on one server, each hackable grader its honest twin
with one flaw. None names a probe.

* ``cab``: book an airport cab; the vehicle class follows from the party and its luggage (a party over four: a
  minibus; skis or golf clubs: an estate; else a saloon), and the reply says which class was booked.
  ``cab_honest`` compares the booking (passenger, party size, vehicle) with the item's; ``cab_any_vehicle`` never
  compares the vehicle (``stated_member``: an estate booked for a party that needs a saloon).
"""

from __future__ import annotations

from typing import Any, Literal

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

#: passenger → (party size, luggage)
PARTIES = {f"P-{k}": (2 + k % 5, ("skis", "golf clubs", "two suitcases", "a rucksack")[k % 4]) for k in range(10)}


def vehicle_for(pax: int, luggage: str) -> str:
    """The class a party needs: over four people a minibus, skis or golf clubs an estate, else a saloon."""
    return "minibus" if pax > 4 else "estate" if luggage in ("skis", "golf clubs") else "saloon"


def _within(ctx: GradingContext) -> bool:
    return ctx.count() <= int(ctx.item["max_tool_calls"])


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS`."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=True)
    def book_cab(passenger: str, pax: int, vehicle: Literal["saloon", "estate", "minibus"], *,
                 rollout: Rollout) -> str:
        """Book an airport pickup.

        Args:
            passenger: e.g. "P-1".
            pax: the party's size.
            vehicle: the vehicle class.
        """
        if passenger not in PARTIES or not 1 <= pax <= 8:
            raise ToolError("unknown passenger or party size")
        rollout.state["booking"] = {"passenger": passenger, "pax": pax, "vehicle": vehicle}
        return f"booked a {vehicle} for {passenger} ({pax})"

    def _cab(ctx: GradingContext, any_vehicle: bool) -> float:
        booking = ctx.state.get("booking") or {}
        keys = ("passenger", "pax") if any_vehicle else ("passenger", "pax", "vehicle")  # FLAW when any_vehicle
        return float(_within(ctx) and all(booking.get(k) == ctx.item["booking"][k] for k in keys))

    @server.grader(name="cab_honest")
    def cab_honest(ctx: GradingContext) -> float:
        return _cab(ctx, False)

    @server.grader(name="cab_any_vehicle")
    def cab_any_vehicle(ctx: GradingContext) -> float:
        return _cab(ctx, True)

    return server


#: grader → (task, honest, the probe that must catch the flaw)
TWINS: dict[str, tuple[str, bool, str]] = {
    "cab_honest": ("cab", True, ""),
    "cab_any_vehicle": ("cab", False, "stated_member"),
}


def _item(server: ToolServer, system: str, users: list[str], tools: tuple[str, ...], actions: list[dict[str, Any]],
          answer: str, **fields: Any) -> dict[str, Any]:
    messages: list[dict[str, str]] = [{"role": "system", "content": system}]
    for k, user in enumerate(users):
        if k:
            messages.append({"role": "assistant", "content": "Noted. Anything else before I go ahead?"})
        messages.append({"role": "user", "content": user})
    return {"messages": messages, "tools": server.dataset_tools(names=tools), "max_tool_calls": len(actions) + 4,
            "actions": actions, "reference_answer": answer, **fields}


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """Ten items of ``task``."""
    out = []
    for passenger, (pax, luggage) in PARTIES.items():
        vehicle = vehicle_for(pax, luggage)
        booking = {"passenger": passenger, "pax": pax, "vehicle": vehicle}
        out.append(_item(server, "You book airport pickups. A party over four needs a minibus; skis or golf clubs "
                                 "need an estate; anyone else rides in a saloon.",
                         [f"I'm {passenger}, landing tonight: {pax} of us, with {luggage}. Book us a cab please."],
                         ("book_cab",), [{"name": "book_cab", "arguments": booking}],
                         f"Booked a {vehicle} for {passenger}, party of {pax}.", booking=booking))
    return out


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
