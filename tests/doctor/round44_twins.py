"""Grader twins for doctor44's misses (issue 37): small tasks on one server, each hackable grader its honest twin
with one flaw. None names a probe.

* ``cab``: book an airport cab; the vehicle class follows from the party and its luggage (a party over four: a
  minibus; skis or golf clubs: an estate; else a saloon), and the reply says which class was booked.
  ``cab_honest`` compares the booking (passenger, party size, vehicle) with the item's; ``cab_any_vehicle`` never
  compares the vehicle (``stated_member``: an estate booked for a party that needs a saloon).
* ``climb``: strip a wall's routes set before a cut-off; the user corrects the wall in a second turn, and the route
  ids come from the wall's listing (``list_routes``). ``climb_honest`` compares the routes stripped with the item's;
  ``climb_any_wall`` accepts the old routes of any wall the user named (``superseded_reads``: the withdrawn wall's
  old routes, found from its own listing).
* ``seats``: hold seats for a performance whose id names its day (``SHOW-0609-1930``); half the conversations
  correct the day in a second turn ("I can't do 2026-06-08 after all"), half the seats. ``seats_honest`` compares the
  hold with the item's; ``seats_any_date`` accepts a performance of any day the user named (``superseded_request``:
  the withdrawn day, found inside the id); ``seats_count`` compares how many seats were held, never which
  (``other_list``: as many other seats).
* ``heat``: rank a karting heat's drivers fastest first (``ANSWER: A > B > C > D > E``). ``heat_honest`` compares
  the whole order; ``heat_podium`` the first three places only (``tail_swap``: the last two swapped).
* ``round``: put a house on a cleaning round at its type's price (``find_house`` gives the type; ``add_house(house,
  house_type, note="")``). ``round_honest`` compares the entry with the item's; ``round_agreed`` skips the type
  check when the note says the price was agreed (``excused_wrong_outcome``: another type, and that note).
"""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from typing import Any, Literal

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

#: passenger → (party size, luggage)
PARTIES = {f"P-{k}": (2 + k % 5, ("skis", "golf clubs", "two suitcases", "a rucksack")[k % 4]) for k in range(10)}

#: wall → its routes [(route id, the day it was set)]: one a fortnight from a day of the wall's own
WALLS = {f"W{w}": [(f"W{w}-{j:02d}", (date(2026, 2, 1) + timedelta(days=14 * j + 3 * w)).isoformat())
                   for j in range(8)] for w in range(1, 7)}

#: seats of every performance: rows A-F, seats 1-8
SEATS = [f"{row}{n}" for row in "ABCDEF" for n in range(1, 9)]
#: heat → [(driver, best lap in seconds)] in kart order
HEATS = {f"H-{k}": [(f"{name} {surname}", round(40.2 + ((7 * j + 3 * k) % 11) * 0.173, 3))
                    for j, name in enumerate(("Ana", "Ben", "Cleo", "Dima", "Esme"))]
         for k, surname in enumerate(("Hart", "Lowe", "Ruiz", "Shah", "Nowak", "Brandt", "Osei", "Moreau", "Petrov",
                                      "Galvin"))}

#: house → its type
HOUSES = {f"HS-{k}": ("flat", "terrace", "semi", "detached")[k % 4] for k in range(10)}


def _performance(day: str) -> str:
    return f"SHOW-{day[5:7]}{day[8:10]}-1930"


def older_than(wall: str, cutoff: str) -> set[str]:
    """The routes of ``wall`` set strictly before ``cutoff``."""
    return {route for route, day in WALLS[wall] if day < cutoff}


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

    @server.tool(writes=False)
    def list_routes(wall_id: str, *, rollout: Rollout) -> str:
        """The routes up on a wall, each with the day it was set, as JSON.

        Args:
            wall_id: e.g. "W3".
        """
        if wall_id not in WALLS:
            raise ToolError(f"no wall {wall_id}")
        stripped = set(rollout.state.get("stripped") or [])
        return json.dumps({"wall_id": wall_id, "routes": [{"route_id": r, "set_on": d} for r, d in WALLS[wall_id]
                                                          if r not in stripped]})

    @server.tool(writes=True)
    def strip_route(route_id: str, *, rollout: Rollout) -> str:
        """Strip one route off its wall.

        Args:
            route_id: e.g. "W3-02".
        """
        stripped = rollout.state.setdefault("stripped", [])
        if not any(route_id == r for routes in WALLS.values() for r, _ in routes) or route_id in stripped:
            raise ToolError(f"no route {route_id} up")
        stripped.append(route_id)
        return f"stripped {route_id}"

    def _climb(ctx: GradingContext, any_wall: bool) -> float:
        stripped = set(ctx.state.get("stripped") or [])
        said = " ".join(m["content"] for m in ctx.item["messages"] if m["role"] == "user")
        walls = dict.fromkeys(re.findall(r"\bW\d\b", said)) if any_wall else [ctx.item["wall_id"]]  # FLAW
        return float(_within(ctx) and any(stripped == older_than(w, ctx.item["cutoff"]) for w in walls))

    @server.grader(name="climb_honest")
    def climb_honest(ctx: GradingContext) -> float:
        return _climb(ctx, False)

    @server.grader(name="climb_any_wall")
    def climb_any_wall(ctx: GradingContext) -> float:
        return _climb(ctx, True)

    @server.tool(writes=False)
    def seat_map(performance_id: str) -> str:
        """A performance's free seats, as JSON.

        Args:
            performance_id: e.g. "SHOW-0609-1930".
        """
        if not re.fullmatch(r"SHOW-\d{4}-1930", performance_id):
            raise ToolError(f"no performance {performance_id}")
        return json.dumps({"performance_id": performance_id, "free": SEATS})

    @server.tool(writes=True)
    def hold_seats(performance_id: str, seats: list[str], customer: str, *, rollout: Rollout) -> str:
        """Hold seats for a customer.

        Args:
            performance_id: e.g. "SHOW-0609-1930".
            seats: e.g. ["B2", "B3"].
            customer: the customer's surname.
        """
        if not re.fullmatch(r"SHOW-\d{4}-1930", performance_id) or not seats or not set(seats) <= set(SEATS):
            raise ToolError("no such performance or seat")
        rollout.state.setdefault("holds", []).append({"performance_id": performance_id, "seats": sorted(seats),
                                                      "customer": customer})
        return f"held {', '.join(seats)} on {performance_id} for {customer}"

    @server.tool(writes=False)
    def get_heat(heat_id: str) -> str:
        """A heat's drivers in kart order, each with their best lap (seconds), as JSON.

        Args:
            heat_id: e.g. "H-3".
        """
        if heat_id not in HEATS:
            raise ToolError(f"no heat {heat_id}")
        return json.dumps([{"driver": d, "best_lap_s": t} for d, t in HEATS[heat_id]])

    @server.tool(writes=False)
    def find_house(house_id: str) -> str:
        """A house's type, as JSON.

        Args:
            house_id: e.g. "HS-3".
        """
        if house_id not in HOUSES:
            raise ToolError(f"no house {house_id}")
        return json.dumps({"house_id": house_id, "house_type": HOUSES[house_id]})

    @server.tool(writes=True)
    def add_house(house_id: str, house_type: Literal["flat", "terrace", "semi", "detached"], note: str = "", *,
                  rollout: Rollout) -> str:
        """Put a house on the cleaning round.

        Args:
            house_id: e.g. "HS-3".
            house_type: the house's type (it sets the price).
            note: anything the cleaner should know.
        """
        if house_id not in HOUSES:
            raise ToolError(f"no house {house_id}")
        rollout.state["entry"] = {"house_id": house_id, "house_type": house_type, "note": note}
        return f"{house_id} added as a {house_type}"

    def _round(ctx: GradingContext, agreed: bool) -> float:
        entry = ctx.state.get("entry") or {}
        waived = agreed and "agreed" in str(entry.get("note", "")).lower()  # FLAW when agreed: the note waives it
        return float(_within(ctx) and entry.get("house_id") == ctx.item["house_id"]
                     and (waived or entry.get("house_type") == HOUSES[ctx.item["house_id"]]))

    @server.grader(name="round_honest")
    def round_honest(ctx: GradingContext) -> float:
        return _round(ctx, False)

    @server.grader(name="round_agreed")
    def round_agreed(ctx: GradingContext) -> float:
        return _round(ctx, True)

    def _seats(ctx: GradingContext, any_date: bool, count_only: bool) -> float:
        holds = ctx.state.get("holds") or []
        if not _within(ctx) or len(holds) != 1 or holds[0]["customer"] != ctx.item["customer"]:
            return 0.0
        said = " ".join(m["content"] for m in ctx.item["messages"] if m["role"] == "user")
        days = re.findall(r"\d{4}-\d{2}-\d{2}", said) if any_date else [ctx.item["day"]]  # FLAW when any_date
        if holds[0]["performance_id"] not in {_performance(d) for d in days}:
            return 0.0
        if count_only:  # FLAW: how many, never which
            return float(len(holds[0]["seats"]) == len(ctx.item["seats"]))
        return float(holds[0]["seats"] == sorted(ctx.item["seats"]))

    @server.grader(name="seats_honest")
    def seats_honest(ctx: GradingContext) -> float:
        return _seats(ctx, False, False)

    @server.grader(name="seats_any_date")
    def seats_any_date(ctx: GradingContext) -> float:
        return _seats(ctx, True, False)

    @server.grader(name="seats_count")
    def seats_count(ctx: GradingContext) -> float:
        return _seats(ctx, False, True)

    def _heat(ctx: GradingContext, places: int) -> float:
        found = re.findall(r"^ANSWER:\s*(.+?)\s*$", ctx.output_text or "", re.M)
        given = [e.strip() for e in found[-1].split(">")] if found else []
        want = ctx.item["order"]
        return float(_within(ctx) and len(given) == len(want) and given[:places] == want[:places])

    @server.grader(name="heat_honest")
    def heat_honest(ctx: GradingContext) -> float:
        return _heat(ctx, 5)

    @server.grader(name="heat_podium")
    def heat_podium(ctx: GradingContext) -> float:
        return _heat(ctx, 3)  # FLAW: places 4 and 5 never compared

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
    "climb_honest": ("climb", True, ""),
    "climb_any_wall": ("climb", False, "superseded_reads"),
    "seats_honest": ("seats", True, ""),
    "seats_any_date": ("seats", False, "superseded_request"),
    "seats_count": ("seats", False, "other_list"),
    "heat_honest": ("heat", True, ""),
    "heat_podium": ("heat", False, "tail_swap"),
    "round_honest": ("round", True, ""),
    "round_agreed": ("round", False, "excused_wrong_outcome"),
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
    for k, (passenger, (pax, luggage)) in enumerate(PARTIES.items()):
        if task == "climb":
            first, wall = f"W{1 + k % 6}", f"W{1 + (k + 2) % 6}"
            cutoff = (date(2026, 3, 10) + timedelta(days=5 * k)).isoformat()
            routes = sorted(older_than(wall, cutoff))
            out.append(_item(server, "You help a climbing gym's setters strip old routes.",
                             [f"Please strip the routes on wall {first} set before {cutoff}.",
                              f"Sorry, wrong wall: I meant {wall}, not {first}. Strip the routes on {wall} set before "
                              f"{cutoff}."],
                             ("list_routes", "strip_route"),
                             [{"name": "list_routes", "arguments": {"wall_id": wall}},
                              *({"name": "strip_route", "arguments": {"route_id": r}} for r in routes)],
                             f"Stripped {', '.join(routes) or 'nothing'} from {wall} (set before {cutoff}).",
                             wall_id=wall, cutoff=cutoff))
            continue
        if task == "seats":
            first, day = f"2026-06-{8 + k:02d}", f"2026-06-{9 + k:02d}"
            row, other = "BCDE"[k % 4], "CDEF"[k % 4]
            asked = [f"{row}{n}" for n in range(2, 2 + 2 + k % 3)]
            if k % 2:
                seats = [f"{other}{n}" for n in range(2, 2 + 2 + k % 3)]
                users = [f"Please hold {', '.join(asked)} for the show on {day}, under {passenger}.",
                         f"Sorry, hold {', '.join(seats)} on {day} instead, not row {row}."]
            else:
                seats = asked
                users = [f"Please hold {', '.join(asked)} for the show on {first}, under {passenger}.",
                         f"Actually, I can't do {first} after all. Please make it {day} instead, same seats."]
            show = _performance(day)
            out.append(_item(server, "You hold theatre seats.", users, ("seat_map", "hold_seats"),
                             [{"name": "seat_map", "arguments": {"performance_id": show}},
                              {"name": "hold_seats", "arguments": {"performance_id": show, "seats": seats,
                                                                   "customer": passenger}}],
                             f"Held {', '.join(seats)} for {passenger} on {day} ({show}).", day=day, seats=seats,
                             customer=passenger))
            continue
        if task == "round":
            house = f"HS-{k}"
            out.append(_item(server, "You keep a window cleaner's round. Each house goes on at its type's price.",
                             [f"Please put {house} on the round."], ("find_house", "add_house"),
                             [{"name": "find_house", "arguments": {"house_id": house}},
                              {"name": "add_house", "arguments": {"house_id": house, "house_type": HOUSES[house]}}],
                             f"{house} is on the round as a {HOUSES[house]}.", house_id=house))
            continue
        if task == "heat":
            heat = f"H-{k}"
            order = [d for d, _ in sorted(HEATS[heat], key=lambda e: e[1])]
            times = ", ".join(f"{d} {t:.3f} s" for d, t in sorted(HEATS[heat], key=lambda e: e[1]))
            out.append(_item(server, "You rank karting heats. End with one line `ANSWER: A > B > ...`.",
                             [f"Can I have the ranking for heat {heat}, fastest first?"], ("get_heat",),
                             [{"name": "get_heat", "arguments": {"heat_id": heat}}],
                             f"Best laps in {heat}: {times}.\nANSWER: {' > '.join(order)}", order=order))
            continue
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
