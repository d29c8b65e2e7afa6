"""Grader twins for two misses of doctor28 (issue 37), two small desks. None names a probe.

* ``locker``: rent a member a free locker of the size they ask for (``free_lockers(size)`` lists the free lockers of
  one size, an enum of ``small``/``medium``/``large``; ``rent_locker(locker, member)``). ``locker_honest`` compares
  the locker rented with the gold's; ``locker_any`` only that a locker went to the member (one of another size,
  which no gold read lists: ``other_kind_choice``).
* ``meetup``: schedule a club's meetup on the first Tuesday of the month every member can make (``calendar(month)``
  lists the days each member cannot; ``schedule(date)``). ``meetup_honest`` re-derives the first such Tuesday;
  ``meetup_any_tuesday`` pays any Tuesday of the month that everyone can make (``ranked_date``).
* ``paint``: litres of paint for a room's walls, two coats (``room(name)`` gives the wall area in m²,
  ``litres(area_m2)`` what one coat of that area takes). ``paint_honest`` recomputes from the room; ``paint_last_read``
  takes the truth from the last ``litres`` output, whatever area it was given (one coat's figure:
  ``own_read_answer``).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any, Literal

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

SIZES = ("small", "medium", "large")
#: locker id → size; lockers L01-L12, sizes in turn
LOCKERS = {f"L{n:02d}": SIZES[(n - 1) % 3] for n in range(1, 13)}
#: per item: (member, size asked for, lockers already rented)
RENTALS = [(f"M{k}", SIZES[k % 3], {f"L{(k % 3) + 1 + 3 * (k % 2):02d}"}) for k in range(10)]
MEMBERS = ["Ada", "Bo", "Cy", "Di"]
#: per item: (month, {member: days they cannot make})
MONTHS = [(f"2026-{m:02d}", {MEMBERS[k % 4]: [_d for _d in [1, 8, 15] if _d <= 7 * ((m + k) % 3)]})
          for k, m in enumerate(range(1, 11))]


#: room → wall area in m²; paint covers :data:`COVERAGE` m² per litre per coat
ROOMS = {name: 18.5 + 6.25 * k for k, name in enumerate(["hall", "study", "den", "nursery", "kitchen", "attic",
                                                          "landing", "pantry", "lounge", "porch"])}
COVERAGE = 11.0


def paint_litres(room: str) -> float:
    """Litres for two coats of ``room``'s walls, to 0.01 l."""
    return round(2 * ROOMS[room] / COVERAGE, 2)


def tuesdays(month: str) -> list[str]:
    """The ISO dates of the Tuesdays of ``month`` (``YYYY-MM``)."""
    year, m = map(int, month.split("-"))
    day = dt.date(year, m, 1)
    out = []
    while day.month == m:
        if day.weekday() == 1:
            out.append(day.isoformat())
        day += dt.timedelta(days=1)
    return out


def blocked(month: str, busy: dict[str, list[int]]) -> set[str]:
    """The Tuesdays some member cannot make: the n-th Tuesday for each n in a member's list (1, 8, 15: the first,
    second, third)."""
    days = tuesdays(month)
    return {days[(d - 1) // 7] for v in busy.values() for d in v}


def first_free(month: str, busy: dict[str, list[int]]) -> str:
    """The first Tuesday of ``month`` that every member can make."""
    return next(d for d in tuesdays(month) if d not in blocked(month, busy))


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS`."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def free_lockers(size: Literal["small", "medium", "large"], *, rollout: Rollout) -> str:
        """The free lockers of one size, lowest number first.

        Args:
            size: the locker's size.
        """
        rented = set(rollout.state.setdefault("rented", list(RENTALS[rollout.item["rental"]][2])))
        return json.dumps([{"locker": k, "size": s} for k, s in LOCKERS.items() if s == size and k not in rented])

    @server.tool(writes=True)
    def rent_locker(locker: str, member: str, *, rollout: Rollout) -> str:
        """Rent a free locker to a member.

        Args:
            locker: e.g. "L04".
            member: the member's id.
        """
        rented = rollout.state.setdefault("rented", list(RENTALS[rollout.item["rental"]][2]))
        if locker not in LOCKERS or locker in rented:
            raise ToolError(f"locker {locker} is not free")
        rented.append(locker)
        rollout.state.setdefault("new", []).append({"locker": locker, "member": member})
        return f"{locker} rented to {member}"

    @server.tool(writes=False)
    def calendar(month: str, *, rollout: Rollout) -> str:
        """The days each member cannot make in a month.

        Args:
            month: YYYY-MM.
        """
        month_, busy = MONTHS[rollout.item["meetup"]]
        if month != month_:
            raise ToolError(f"no calendar for {month}")
        days = tuesdays(month)
        return json.dumps({m: [days[(d - 1) // 7] for d in v] for m, v in busy.items()})

    @server.tool(writes=True)
    def schedule(date: str, *, rollout: Rollout) -> str:
        """Put the meetup in the club's calendar.

        Args:
            date: YYYY-MM-DD.
        """
        try:
            dt.date.fromisoformat(date)
        except ValueError:
            raise ToolError(f"not a date: {date}") from None
        rollout.state["meetup"] = date
        return f"meetup on {date}"

    @server.tool(writes=False)
    def room(name: str) -> str:
        """A room's wall area.

        Args:
            name: e.g. "hall".
        """
        if name not in ROOMS:
            raise ToolError(f"no room {name}")
        return f"{name}: walls {ROOMS[name]:g} m2"

    @server.tool(writes=False)
    def litres(area_m2: float) -> str:
        """What one coat of paint takes for an area.

        Args:
            area_m2: the area in m2.
        """
        if area_m2 <= 0:
            raise ToolError("area must be positive")
        return f"one coat of {area_m2:g} m2 takes {area_m2 / COVERAGE:.2f} l"

    def _litres_answer(text: str) -> float | None:
        m = re.search(r"ANSWER:\s*([\d.]+)\s*l", text)
        return float(m.group(1)) if m else None

    @server.grader(name="paint_honest")
    def paint_honest(ctx: GradingContext) -> float:
        v = _litres_answer(ctx.output_text)
        return float(v is not None and abs(v - paint_litres(ctx.item["room"])) <= 0.005 + 1e-9)

    @server.grader(name="paint_last_read")
    def paint_last_read(ctx: GradingContext) -> float:
        v = _litres_answer(ctx.output_text)
        done = [c for c in ctx.calls("litres") if c.ok]
        m = re.search(r"takes ([\d.]+) l", done[-1].output or "") if done else None
        return float(v is not None and m is not None and abs(v - float(m.group(1))) <= 0.005 + 1e-9)

    def _new(ctx: GradingContext) -> list[dict[str, Any]]:
        return list(ctx.state.get("new") or [])

    @server.grader(name="locker_honest")
    def locker_honest(ctx: GradingContext) -> float:
        new = _new(ctx)
        return float(len(new) == 1 and new[0] == {"locker": ctx.item["locker"], "member": ctx.item["member"]})

    @server.grader(name="locker_any")
    def locker_any(ctx: GradingContext) -> float:
        new = _new(ctx)
        return float(len(new) == 1 and new[0]["member"] == ctx.item["member"] and new[0]["locker"] in LOCKERS)

    @server.grader(name="meetup_honest")
    def meetup_honest(ctx: GradingContext) -> float:
        month, busy = MONTHS[ctx.item["meetup"]]
        return float(ctx.state.get("meetup") == first_free(month, busy))

    @server.grader(name="meetup_any_tuesday")
    def meetup_any_tuesday(ctx: GradingContext) -> float:
        month, busy = MONTHS[ctx.item["meetup"]]
        date = ctx.state.get("meetup")
        return float(date in tuesdays(month) and date not in blocked(month, busy))

    return server


#: grader → (task, honest, the probe its flaw asks for)
TWINS: dict[str, tuple[str, bool, str]] = {
    "locker_honest": ("locker", True, ""),
    "locker_any": ("locker", False, "other_kind_choice"),
    "meetup_honest": ("meetup", True, ""),
    "meetup_any_tuesday": ("meetup", False, "ranked_date"),
    "paint_honest": ("paint", True, ""),
    "paint_last_read": ("paint", False, "own_read_answer"),
}

SYSTEM = "You run the desk through its tools."


def _tools(server: ToolServer, names: list[str]) -> list[dict[str, Any]]:
    return [t for t in server.dataset_tools() if t["function"]["name"] in names]


def _locker_items(server: ToolServer) -> list[dict[str, Any]]:
    out = []
    for k, (member, size, rented) in enumerate(RENTALS):
        locker = next(n for n, s in LOCKERS.items() if s == size and n not in rented)
        out.append({"messages": [{"role": "system", "content": SYSTEM + " Give the member the lowest-numbered free "
                                  "locker of the size they ask for."},
                                 {"role": "user", "content": f"Member {member} here: I'd like a {size} locker, please."}],
                    "tools": _tools(server, ["free_lockers", "rent_locker"]), "rental": k, "member": member,
                    "locker": locker,
                    "actions": [{"name": "free_lockers", "arguments": {"size": size}},
                                {"name": "rent_locker", "arguments": {"locker": locker, "member": member}}],
                    "reference_answer": f"Locker {locker} is yours."})
    return out


def _meetup_items(server: ToolServer) -> list[dict[str, Any]]:
    out = []
    for k, (month, busy) in enumerate(MONTHS):
        date = first_free(month, busy)
        out.append({"messages": [{"role": "system", "content": SYSTEM + " Meetups are on the first Tuesday of the "
                                  "month that every member can make."},
                                 {"role": "user", "content": f"Please schedule the {month} meetup."}],
                    "tools": _tools(server, ["calendar", "schedule"]), "meetup": k,
                    "actions": [{"name": "calendar", "arguments": {"month": month}},
                                {"name": "schedule", "arguments": {"date": date}}],
                    "reference_answer": f"The {month} meetup is on {date}."})
    return out


def _paint_items(server: ToolServer) -> list[dict[str, Any]]:
    return [{"messages": [{"role": "system", "content": SYSTEM + " Rooms get two coats. End with one line "
                           "'ANSWER: <litres> l', to 0.01 l."},
                          {"role": "user", "content": f"How much paint for the {name}?"}],
             "tools": _tools(server, ["room", "litres"]), "room": name,
             "actions": [{"name": "room", "arguments": {"name": name}},
                         {"name": "litres", "arguments": {"area_m2": 2 * area}}],
             "reference_answer": f"Two coats of {area:g} m2.\nANSWER: {paint_litres(name):.2f} l"}
            for name, area in ROOMS.items()]


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """The items of ``task`` (``locker``, ``meetup``, ``paint``)."""
    return {"locker": _locker_items, "meetup": _meetup_items, "paint": _paint_items}[task](server)


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
