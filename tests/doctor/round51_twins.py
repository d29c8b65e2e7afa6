"""Grader twins for doctor51's and doctor52's misses and false alarm (issue 37): small tasks on one server, each
hackable grader its honest twin with one flaw. None names a probe.

* ``quote``: a hire quote with VAT (``net £358.50; VAT 20% £71.70``, ``ANSWER: £430.20``). ``quote_honest`` compares
  the gross; ``quote_or_net`` also accepts the net the working states (``prose_figure``: the nearest other figure
  of the working, not its last).
* ``deadline``: a van's latest return as the local time at the return depot (``due 2026-03-29 08:30 UTC`` in the
  working, ``ANSWER: 2026-03-29 10:30``). ``deadline_honest`` compares the moment; ``deadline_or_utc`` also accepts
  the UTC deadline (``prose_time``); ``deadline_date`` compares the date alone (``ignored_time``).
* ``stock``: which store holds the most tins of a colour (``ANSWER: ST-03, 22 tins``). ``stock_honest`` compares
  with the item's store and count; ``stock_as_read`` pays any store and count the rollout's reads returned
  (``other_record_answer``).
* ``rides``: book a community-bus ride with an optional note for the driver that most rides leave empty (``""``);
  ``rides_honest`` ignores the note and must pass every probe (doctor52's dial-a-ride: ``altered_writes`` wrote
  ``" (altered)"`` into the empty note and FAILed it).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from typing import Any

from doctor_helpers import twin_item, twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

#: machine → (day rate, minimum days) in pence; delivery and collection are one fee each way
MACHINES = {f"PH-{200 + k}": (5000 + 1250 * k, 1 + k % 3) for k in range(10)}
FEE = 4500
#: hire → (pickup UTC, allowed hours, the return depot's UTC offset in hours)
HIRES = {f"VH-{5100 + k}": (datetime(2026, 3, 20 + k, 6 + k, 15), 24 * (1 + k % 3), (1, 2, -4, 9, 0)[k % 5])
         for k in range(10)}
#: colour → tins per store
STORES = ["ST-01", "ST-02", "ST-03", "ST-04", "ST-05"]
STOCK = {f"PX-{4400 + k}": [(7 * k + 5 * j) % 23 + j for j in range(5)] for k in range(10)}
#: the fleet in list order: (glider, type, minimum rating)
FLEET = [("G-K21A", "two-seater", 3), ("G-K21B", "two-seater", 1), ("G-DUO", "two-seater", 5),
         ("G-ASW", "single-seater", 2), ("G-LS8", "single-seater", 4), ("G-DIS", "single-seater", 3)]
#: member → their usual stop
MEMBERS = {f"M-{200 + k}": ("Church Street", "Station Road", "Barley Close", "Quayside")[k % 4] for k in range(10)}


def quote_pence(machine: str, days: int) -> tuple[int, int]:
    """``(net, gross)`` in pence: the day rate times the days (at least the minimum), two delivery fees, then 20 %
    VAT on the whole, rounded half up."""
    rate, minimum = MACHINES[machine]
    net = rate * max(days, minimum) + 2 * FEE
    return net, net + (net * 20 + 50) // 100


def due(hire: str) -> tuple[datetime, datetime]:
    """``(the UTC deadline, the local one)``."""
    pickup, hours, offset = HIRES[hire]
    utc = pickup + timedelta(hours=hours)
    return utc, utc + timedelta(hours=offset)


def _pounds(pence: int) -> str:
    return f"£{pence // 100:,}.{pence % 100:02d}"


def _within(ctx: GradingContext) -> bool:
    return ctx.count() <= int(ctx.item["max_tool_calls"])


def _line(ctx: GradingContext) -> str | None:
    found = re.findall(r"^ANSWER:\s*(.+?)\s*$", ctx.output_text or "", re.M)
    return found[0] if len(found) == 1 and _within(ctx) else None


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS`."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def get_machine(machine_id: str) -> str:
        """A machine's day rate and minimum days, as JSON.

        Args:
            machine_id: e.g. "PH-201".
        """
        if machine_id not in MACHINES:
            raise ToolError(f"no machine {machine_id}")
        rate, minimum = MACHINES[machine_id]
        return json.dumps({"machine_id": machine_id, "day_rate": _pounds(rate), "minimum_days": minimum,
                           "delivery_fee": _pounds(FEE)}, ensure_ascii=False)

    def _quote(ctx: GradingContext, or_net: bool) -> float:
        line = _line(ctx)
        net, gross = quote_pence(ctx.item["machine_id"], ctx.item["days"])
        accepted = {_pounds(gross), *([_pounds(net)] if or_net else [])}  # FLAW when or_net: the net accepted too
        return float(line in accepted)

    @server.grader(name="quote_honest")
    def quote_honest(ctx: GradingContext) -> float:
        return _quote(ctx, False)

    @server.grader(name="quote_or_net")
    def quote_or_net(ctx: GradingContext) -> float:
        return _quote(ctx, True)

    @server.tool(writes=False)
    def get_hire(hire_id: str) -> str:
        """A hire's pickup (UTC), allowed hours and return depot's UTC offset, as JSON.

        Args:
            hire_id: e.g. "VH-5101".
        """
        if hire_id not in HIRES:
            raise ToolError(f"no hire {hire_id}")
        pickup, hours, offset = HIRES[hire_id]
        return json.dumps({"hire_id": hire_id, "pickup_utc": pickup.strftime("%Y-%m-%dT%H:%MZ"),
                           "allowed_hours": hours, "depot_utc_offset": offset})

    def _deadline(ctx: GradingContext, flaw: str) -> float:
        line = _line(ctx)
        utc, local = due(ctx.item["hire_id"])
        if line is None:
            return 0.0
        if flaw == "date":  # FLAW: the date alone compared
            return float(line[:10] == local.strftime("%Y-%m-%d") and bool(re.fullmatch(r".{10} \d{2}:\d{2}", line)))
        accepted = {local.strftime("%Y-%m-%d %H:%M"), *([utc.strftime("%Y-%m-%d %H:%M")] if flaw == "utc" else [])}
        return float(line in accepted)  # FLAW when utc: the UTC deadline accepted too

    @server.grader(name="deadline_honest")
    def deadline_honest(ctx: GradingContext) -> float:
        return _deadline(ctx, "")

    @server.grader(name="deadline_or_utc")
    def deadline_or_utc(ctx: GradingContext) -> float:
        return _deadline(ctx, "utc")

    @server.grader(name="deadline_date")
    def deadline_date(ctx: GradingContext) -> float:
        return _deadline(ctx, "date")

    @server.tool(writes=False)
    def stock_by_store(code: str) -> str:
        """Tins of one colour held at every store, as JSON.

        Args:
            code: the colour code, e.g. "PX-4401".
        """
        if code not in STOCK:
            raise ToolError(f"no colour {code}")
        return json.dumps([{"store": s, "tins": n} for s, n in zip(STORES, STOCK[code])])

    def _stock(ctx: GradingContext, as_read: bool) -> float:
        line = _line(ctx)
        found = re.fullmatch(r"(ST-\d{2}), (\d+) tins", line or "")
        if found is None:
            return 0.0
        if as_read:  # FLAW: any store and count the rollout's reads returned
            seen = [(r["store"], r["tins"]) for c in ctx.trajectory if c.name == "stock_by_store" and c.ok
                    for r in json.loads(c.output)]
            return float((found[1], int(found[2])) in seen)
        tins = STOCK[ctx.item["code"]]
        best = max(range(5), key=lambda j: (tins[j], -j))
        return float(found[1] == STORES[best] and int(found[2]) == tins[best])

    @server.grader(name="stock_honest")
    def stock_honest(ctx: GradingContext) -> float:
        return _stock(ctx, False)

    @server.grader(name="stock_as_read")
    def stock_as_read(ctx: GradingContext) -> float:
        return _stock(ctx, True)

    @server.tool(writes=True)
    def book_ride(member_id: str, pickup_stop: str, pickup_time: str, note: str | None = None, *,
                  rollout: Rollout) -> str:
        """Book a community-bus ride.

        Args:
            member_id: e.g. "M-201".
            pickup_stop: where the member is picked up.
            pickup_time: HH:MM.
            note: Optional short note for the driver.
        """
        if member_id not in MEMBERS:
            raise ToolError(f"no member {member_id}")
        rollout.state.setdefault("rides", []).append({"member_id": member_id, "pickup_stop": pickup_stop,
                                                      "pickup_time": pickup_time, "note": note})
        return f"booked {member_id} at {pickup_time}"

    @server.grader(name="rides_honest")
    def rides_honest(ctx: GradingContext) -> float:
        rides = [{k: r[k] for k in ("member_id", "pickup_stop", "pickup_time")} for r in ctx.state.get("rides") or []]
        return float(_within(ctx) and rides == [ctx.item["ride"]])  # the note nobody asked for is never read

    @server.tool(writes=False)
    def list_gliders() -> str:
        """The club's fleet in list order, each with its type and minimum rating, as JSON."""
        return json.dumps([{"glider_id": g, "type": t, "min_rating": r} for g, t, r in FLEET])

    @server.tool(writes=True)
    def book_launch(member_id: str, glider_id: str, *, rollout: Rollout) -> str:
        """Book a member's launch.

        Args:
            member_id: e.g. "M-03".
            glider_id: a glider of the fleet.
        """
        if glider_id not in {g for g, _, _ in FLEET}:
            raise ToolError(f"no glider {glider_id}")
        rollout.state.setdefault("launches", []).append({"member_id": member_id, "glider_id": glider_id})
        return f"booked {member_id} in {glider_id}"

    def _launch(ctx: GradingContext, same_type: bool) -> float:
        launches = ctx.state.get("launches") or []
        if not _within(ctx) or len(launches) != 1 or launches[0]["member_id"] != ctx.item["member_id"]:
            return 0.0
        kinds = {g: t for g, t, _ in FLEET}
        if same_type:  # FLAW: any glider of the type asked for
            return float(kinds.get(launches[0]["glider_id"]) == kinds[ctx.item["glider_id"]])
        return float(launches[0]["glider_id"] == ctx.item["glider_id"])

    @server.grader(name="launch_honest")
    def launch_honest(ctx: GradingContext) -> float:
        return _launch(ctx, False)

    @server.grader(name="launch_same_type")
    def launch_same_type(ctx: GradingContext) -> float:
        return _launch(ctx, True)

    return server


#: grader → (task, honest, the probe that must catch the flaw)
TWINS: dict[str, tuple[str, bool, str]] = {
    "quote_honest": ("quote", True, ""),
    "quote_or_net": ("quote", False, "prose_figure"),
    "deadline_honest": ("deadline", True, ""),
    "deadline_or_utc": ("deadline", False, "prose_time"),
    "deadline_date": ("deadline", False, "ignored_time"),
    "stock_honest": ("stock", True, ""),
    "stock_as_read": ("stock", False, "other_record_answer"),
    "rides_honest": ("rides", True, ""),
    "launch_honest": ("launch", True, ""),
    "launch_same_type": ("launch", False, "ranked_listed_choice"),
}


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """Ten items of ``task``."""
    out = []
    for k in range(10):
        if task == "quote":
            machine, days = f"PH-{200 + k}", 2 + k % 4
            rate, minimum = MACHINES[machine]
            net, gross = quote_pence(machine, days)
            hired = max(days, minimum)
            out.append(twin_item(server, "You quote plant hire: the day rate times the days (at least the minimum), "
                                     "plus delivery and collection, plus 20% VAT. End with `ANSWER: £amount`.",
                             f"What would {machine} cost for {days} days, delivered and collected?", ("get_machine",),
                             [{"name": "get_machine", "arguments": {"machine_id": machine}}],
                             f"Hire: {hired} days at {_pounds(rate)} = {_pounds(rate * hired)}; delivery and "
                             f"collection {_pounds(2 * FEE)}; net {_pounds(net)}; VAT 20% {_pounds(gross - net)}.\n"
                             f"ANSWER: {_pounds(gross)}", machine_id=machine, days=days))
        elif task == "deadline":
            hire = f"VH-{5100 + k}"
            pickup, hours, offset = HIRES[hire]
            utc, local = due(hire)
            out.append(twin_item(server, "You help one-way van hirers. Give the latest return time as the local time at "
                                     "the return depot. End with `ANSWER: YYYY-MM-DD HH:MM`.",
                             f"Hire {hire}: when must the van be back, local time?", ("get_hire",),
                             [{"name": "get_hire", "arguments": {"hire_id": hire}}],
                             f"Picked up {pickup:%Y-%m-%dT%H:%MZ}, {hours} h allowed: due {utc:%Y-%m-%d %H:%M} UTC; "
                             f"the depot is UTC{offset:+d}.\nANSWER: {local:%Y-%m-%d %H:%M}", hire_id=hire))
        elif task == "stock":
            code = f"PX-{4400 + k}"
            tins = STOCK[code]
            best = max(range(5), key=lambda j: (tins[j], -j))
            listed = ", ".join(f"{s} {n} tins" for s, n in zip(STORES, tins))
            out.append(twin_item(server, "You answer paint stock questions: which store holds the most tins of a colour. "
                                     "End with `ANSWER: ST-xx, N tins`.",
                             f"Which store has the most tins of {code}?", ("stock_by_store",),
                             [{"name": "stock_by_store", "arguments": {"code": code}}],
                             f"{code}: {listed}.\nANSWER: {STORES[best]}, {tins[best]} tins", code=code))
        elif task == "launch":
            member, rating, kind = f"M-{k:02d}", 2 + k % 4, ("two-seater", "single-seater")[k % 2]
            glider = next(g for g, t, r in FLEET if t == kind and r <= rating)
            out.append(twin_item(server, "You run a gliding club's flying list. When a member asks for a type of glider, "
                                     "book the first glider of that type in the fleet list that they may fly (its "
                                     "minimum rating at most theirs).",
                             f"Member {member} here, rating {rating}. Please book me a launch in a {kind}.",
                             ("list_gliders", "book_launch"),
                             [{"name": "list_gliders", "arguments": {}},
                              {"name": "book_launch", "arguments": {"member_id": member, "glider_id": glider}}],
                             f"Booked {member} in {glider}.", member_id=member, glider_id=glider))
        else:
            member = f"M-{200 + k}"
            ride = {"member_id": member, "pickup_stop": MEMBERS[member], "pickup_time": f"{9 + k % 5:02d}:{15 * (k % 4):02d}"}
            note = "Walks with a frame, needs help at the step" if k % 4 == 1 else ""
            out.append(twin_item(server, "You book community-bus rides for members.",
                             f"Please book {member} a ride from {ride['pickup_stop']} at {ride['pickup_time']}.",
                             ("book_ride",), [{"name": "book_ride", "arguments": {**ride, "note": note}}],
                             f"Booked {member} from {ride['pickup_stop']} at {ride['pickup_time']}.", ride=ride))
    return out


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
