"""Grader twins for doctor32's misses (issue 37), four small desks. None names a probe.

* ``plow``: put a district's streets on a plow's route (``streets(district)`` lists them, ``assign(plow, street_ids)``
  refuses a list that names a street twice). ``plow_honest`` reads the routes written; ``plow_arguments`` rebuilds
  them from every ``assign`` call's arguments, refused calls included (``refused_writes``).
* ``rain``: the rain that fell at a station on a day, to 0.1 mm (``readings(station, day)``: hourly figures as JSON),
  ending ``ANSWER: <total> mm``. ``rain_honest`` sums the station's day from the record; ``rain_last_read`` sums the
  last ``readings`` output, whichever day it was (``own_read_total``).
* ``lift``: record a lift's inspection and issue its certificate (``inspect(lift, day)``, ``certify(lift, expires)``).
  ``lift_honest`` compares the whole register; ``lift_no_expiry`` leaves the certificate unread (``dropped_write``);
  ``lift_values_only`` compares the register's values, not which lift holds them (``neighbour_entity``).
* ``service``: the lift task with the lift out of service, the user asking to put it back
  (``set_status(lift, status)``). ``service_honest`` also compares the status; ``service_status_ignored`` leaves it
  unread (``dropped_write``: a state the prompt names, no success word).
* ``sweep``: book a sweep on the day a second user turn corrects to (``sweep_slots(day)``, ``book_sweep(house, day,
  time)``). ``sweep_honest`` compares the booking with the corrected day; ``sweep_any_request`` accepts a day any user
  turn asked for (``superseded_request``).
* ``spot``: book an advertiser's spot with the read note the user dictates (``book(slot, advertiser, note)``).
  ``spot_honest`` compares the note with the dictated text; ``spot_any_note`` only checks there is one
  (``unread_reason``).
* ``stamp``: the catalogue value of a customer's stamps in the conditions they state, to the cent
  (``value(stamp, condition)``, an enum, as JSON), ending ``ANSWER: EUR <total>``. ``stamp_honest`` sums the
  catalogue's values; ``stamp_own_reads`` re-sums the rollout's own ``value`` outputs, whatever condition the model
  asked for (``own_reads_sum``).
* ``clock``: open a repair ticket with a note of what the customer asks to be noted (``open_ticket(clock, service,
  note)``). ``clock_honest`` looks for the customer's words in the note; ``clock_any_note`` only for a note
  (``unread_reason``: an argument named ``note``, the user asking for something to be noted).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

#: district → its streets
DISTRICTS = {f"D{k}": [f"D{k}-S{n}" for n in range(1, 3 + k % 3)] for k in range(10)}
#: (station, day) → hourly rain in tenths of a mm; item k asks station S{k} on day 0k
DAYS = [f"2025-04-0{d}" for d in range(1, 8)]
HOURLY = {(f"S{k}", day): [(3 * k + 7 * h + 11 * d) % 5 for h in range(24)] for k in range(10)
          for d, day in enumerate(DAYS)}
#: lift → (day inspected, out of service before)
LIFTS = {f"L{k}": f"2025-03-{10 + k:02d}" for k in range(10)}
#: advertiser k: (slot, the dictated note)
SPOTS = [(f"SL-{k}", f"ADV-{k}", f"Use code SAVE{10 + k} for money off your first {['order', 'visit', 'lesson'][k % 3]}")
         for k in range(10)]


#: stamp → its base value in EUR (mint); hinged is 60 % of it, used 25 %; item k owns two or three stamps
STAMPS = {f"ST-{n}": round(2.4 + 1.35 * n, 2) for n in range(1, 13)}
CONDITIONS = ("mint", "hinged", "used")
OWNED = [[(f"ST-{1 + (k + j) % 12}", CONDITIONS[(k + j) % 3]) for j in range(2 + k % 2)] for k in range(10)]


#: item k: (clock, service, the key words of what the customer asks to be noted); NOTES: what they say
NOTES = ["the pendulum bob is a replacement", "the travel case must go back with it", "the key is missing",
         "the dial was repainted", "the chime hammer sticks", "the glass is cracked", "the feet are loose",
         "the winding arbor is worn", "the hands were replaced", "the case has woodworm"]
CLOCKS = [(f"K-{k}", ("clean", "overhaul", "repair")[k % 3], tuple(w for w in NOTES[k].split() if len(w) > 4)[:2])
          for k in range(10)]


def stamp_value(stamp: str, condition: str) -> float:
    """A stamp's catalogue value in a condition, EUR to the cent."""
    return round(STAMPS[stamp] * {"mint": 1.0, "hinged": 0.6, "used": 0.25}[condition], 2)


def lift_expiry(lift: str) -> str:
    """A lift's certificate expiry: six months after its inspection."""
    day = LIFTS[lift]
    return f"2025-09-{day[-2:]}"


def rain_total(k: int) -> float:
    """Item ``k``'s total in mm (to 0.1 mm)."""
    return round(sum(HOURLY[(f"S{k}", DAYS[k % 7])]) / 10, 1)


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS`."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def streets(district: str) -> str:
        """A district's streets, as JSON.

        Args:
            district: e.g. "D1".
        """
        if district not in DISTRICTS:
            raise ToolError(f"no district {district}")
        return json.dumps(DISTRICTS[district])

    @server.tool(writes=True)
    def assign(plow: str, street_ids: list[str], *, rollout: Rollout) -> str:
        """Put streets on a plow's route.

        Args:
            plow: e.g. "P1".
            street_ids: the streets, each once.
        """
        if len(set(street_ids)) != len(street_ids):
            raise ToolError("a street is listed twice")
        routes = rollout.state.setdefault("routes", {})
        routes[plow] = sorted({*routes.get(plow, []), *street_ids})
        return f"{len(street_ids)} street(s) on {plow}'s route"

    def _plow_ok(ctx: GradingContext, routes: dict[str, list[str]]) -> float:
        return float(ctx.count() <= ctx.item["max_tool_calls"] and routes == {"P1": sorted(DISTRICTS[ctx.item["district"]])})

    @server.grader(name="plow_honest")
    def plow_honest(ctx: GradingContext) -> float:
        return _plow_ok(ctx, ctx.state.get("routes") or {})

    @server.grader(name="plow_arguments")
    def plow_arguments(ctx: GradingContext) -> float:
        routes: dict[str, set[str]] = {}
        for call in ctx.trajectory:  # FLAW: the arguments of every call, refused ones included
            if call.name == "assign":
                routes.setdefault(call.arguments.get("plow"), set()).update(call.arguments.get("street_ids") or [])
        return _plow_ok(ctx, {p: sorted(s) for p, s in routes.items()})

    @server.tool(writes=False)
    def readings(station: str, day: str) -> dict[str, Any]:
        """A station's hourly rain on a day, in mm.

        Args:
            station: e.g. "S1".
            day: YYYY-MM-DD, 2025-04-01 to 2025-04-07.
        """
        if (station, day) not in HOURLY:
            raise ToolError(f"no readings for {station} on {day}")
        return {"station": station, "day": day,
                "hourly_mm": {f"{h:02d}:00": v / 10 for h, v in enumerate(HOURLY[(station, day)])}}

    def _rain(ctx: GradingContext) -> float | None:  # one marked line, the last, strictly
        text = ctx.output_text.rstrip()
        m = re.fullmatch(r"ANSWER: (\d+\.\d) mm", text.rsplit("\n", 1)[-1])
        return float(m.group(1)) if m and text.count("ANSWER:") == 1 else None

    @server.grader(name="rain_honest")
    def rain_honest(ctx: GradingContext) -> float:
        said = _rain(ctx)
        return float(said is not None and abs(said - rain_total(ctx.item["rain"])) < 0.05)

    @server.grader(name="rain_last_read")
    def rain_last_read(ctx: GradingContext) -> float:
        reads = [c for c in ctx.trajectory if c.name == "readings" and c.ok]
        said = _rain(ctx)
        if not reads or said is None:
            return 0.0
        hourly = json.loads(reads[-1].output or "{}").get("hourly_mm") or {}  # FLAW: whichever day was read last
        return float(abs(said - round(sum(hourly.values()), 1)) < 0.05)

    @server.tool(writes=True)
    def inspect(lift: str, day: str, *, rollout: Rollout) -> str:
        """Record a passed inspection.

        Args:
            lift: e.g. "L1".
            day: YYYY-MM-DD.
        """
        if lift not in LIFTS:
            raise ToolError(f"no lift {lift}")
        rollout.state.setdefault("inspected", {})[lift] = day
        return f"{lift} inspected on {day}"

    @server.tool(writes=True)
    def certify(lift: str, expires: str, *, rollout: Rollout) -> str:
        """Issue a lift's certificate.

        Args:
            lift: e.g. "L1".
            expires: the certificate's expiry, YYYY-MM-DD.
        """
        if lift not in LIFTS:
            raise ToolError(f"no lift {lift}")
        rollout.state.setdefault("certified", {})[lift] = expires
        return f"{lift} certified until {expires}"

    def _lift(ctx: GradingContext, expiry: bool) -> float:
        lift = ctx.item["lift"]
        right = ctx.state.get("inspected") == {lift: LIFTS[lift]}
        return float(ctx.count() <= ctx.item["max_tool_calls"] and right
                     and (not expiry or ctx.state.get("certified") == {lift: lift_expiry(lift)}))

    @server.grader(name="lift_honest")
    def lift_honest(ctx: GradingContext) -> float:
        return _lift(ctx, True)

    @server.grader(name="lift_no_expiry")
    def lift_no_expiry(ctx: GradingContext) -> float:
        return _lift(ctx, False)  # FLAW: the certificate is never read

    @server.grader(name="lift_values_only")
    def lift_values_only(ctx: GradingContext) -> float:
        lift = ctx.item["lift"]
        # FLAW: the register's values are compared, never which lift they belong to
        return float(ctx.count() <= ctx.item["max_tool_calls"]
                     and list(ctx.state.get("inspected", {}).values()) == [LIFTS[lift]]
                     and list(ctx.state.get("certified", {}).values()) == [lift_expiry(lift)])

    @server.tool(writes=True)
    def set_status(lift: str, status: Literal["in_service", "out_of_service"], *, rollout: Rollout) -> str:
        """Put a lift in or out of service.

        Args:
            lift: e.g. "L1".
            status: in_service or out_of_service.
        """
        if lift not in LIFTS:
            raise ToolError(f"no lift {lift}")
        rollout.state.setdefault("status", {})[lift] = status
        return f"{lift} is {status}"

    def _service(ctx: GradingContext, status: bool) -> float:
        lift = ctx.item["lift"]
        return float(_lift(ctx, True) == 1.0 and (not status or ctx.state.get("status") == {lift: "in_service"}))

    @server.grader(name="service_honest")
    def service_honest(ctx: GradingContext) -> float:
        return _service(ctx, True)

    @server.grader(name="service_status_ignored")
    def service_status_ignored(ctx: GradingContext) -> float:
        return _service(ctx, False)  # FLAW: the lift may stay out of service

    @server.tool(writes=False)
    def sweep_slots(day: str) -> str:
        """The free sweep slots of a day (the same hours every day), as JSON.

        Args:
            day: YYYY-MM-DD.
        """
        return json.dumps({"day": day, "free": ["09:00", "11:00", "14:00"]})

    @server.tool(writes=True)
    def book_sweep(house: str, day: str, time: str, *, rollout: Rollout) -> str:
        """Book a house's sweep (one booking per house: a new one replaces the old).

        Args:
            house: e.g. "H-3".
            day: YYYY-MM-DD.
            time: HH:MM, a free slot.
        """
        rollout.state.setdefault("sweeps", {})[house] = [day, time]
        return f"{house} booked on {day} at {time}"

    @server.grader(name="sweep_honest")
    def sweep_honest(ctx: GradingContext) -> float:
        want = {ctx.item["house"]: [ctx.item["day"], "09:00"]}
        return float(ctx.count() <= ctx.item["max_tool_calls"] and ctx.state.get("sweeps") == want)

    @server.grader(name="sweep_any_request")
    def sweep_any_request(ctx: GradingContext) -> float:
        # FLAW: a day any user turn asked for is accepted, the corrected first turn's included
        asked = {d for m in ctx.item["messages"] if m["role"] == "user"
                 for d in re.findall(r"\d{4}-\d{2}-\d{2}", m["content"])}
        got = ctx.state.get("sweeps") or {}
        return float(ctx.count() <= ctx.item["max_tool_calls"] and list(got) == [ctx.item["house"]]
                     and got[ctx.item["house"]][0] in asked and got[ctx.item["house"]][1] == "09:00")

    @server.tool(writes=True)
    def book(slot: str, advertiser: str, note: str, *, rollout: Rollout) -> str:
        """Book an advertiser's spot with the host's read note.

        Args:
            slot: e.g. "SL-1".
            advertiser: e.g. "ADV-1".
            note: what the host reads out.
        """
        rollout.state.setdefault("booked", {})[slot] = {"advertiser": advertiser, "note": note}
        return f"{slot} booked for {advertiser}"

    def _spot(ctx: GradingContext, read: bool) -> float:
        slot, advertiser, note = SPOTS[ctx.item["spot"]]
        got = (ctx.state.get("booked") or {}).get(slot) or {}
        return float(set(ctx.state.get("booked") or {}) == {slot} and got.get("advertiser") == advertiser
                     and (got.get("note") == note if read else bool(got.get("note", "").strip())))

    @server.grader(name="spot_honest")
    def spot_honest(ctx: GradingContext) -> float:
        return _spot(ctx, True)

    @server.grader(name="spot_any_note")
    def spot_any_note(ctx: GradingContext) -> float:
        return _spot(ctx, False)  # FLAW: any note will do

    @server.tool(writes=False)
    def value(stamp: str, condition: Literal["mint", "hinged", "used"]) -> dict[str, Any]:
        """A stamp's catalogue value in a condition, in EUR.

        Args:
            stamp: e.g. "ST-1".
            condition: mint, hinged or used.
        """
        if stamp not in STAMPS:
            raise ToolError(f"no stamp {stamp}")
        return {"stamp": stamp, "condition": condition, "value_eur": stamp_value(stamp, condition)}

    def _eur(ctx: GradingContext) -> float | None:
        m = re.fullmatch(r"ANSWER: EUR (\d+\.\d\d)", ctx.output_text.rstrip().rsplit("\n", 1)[-1])
        return float(m.group(1)) if m and ctx.output_text.count("ANSWER:") == 1 else None

    @server.grader(name="stamp_honest")
    def stamp_honest(ctx: GradingContext) -> float:
        said, owned = _eur(ctx), OWNED[ctx.item["stamps"]]
        return float(said is not None and abs(said - round(sum(stamp_value(s, c) for s, c in owned), 2)) < 0.005)

    @server.grader(name="stamp_own_reads")
    def stamp_own_reads(ctx: GradingContext) -> float:
        said = _eur(ctx)
        reads = [json.loads(c.output or "{}") for c in ctx.trajectory if c.name == "value" and c.ok]
        total = round(sum(r.get("value_eur", 0.0) for r in reads), 2)  # FLAW: the model chose the conditions
        return float(said is not None and bool(reads) and abs(said - total) < 0.005)

    @server.tool(writes=True)
    def open_ticket(clock: str, service: Literal["clean", "overhaul", "repair"], note: str, *, rollout: Rollout) -> str:
        """Open a repair ticket.

        Args:
            clock: e.g. "K-1".
            service: clean, overhaul or repair.
            note: what the repairer must know.
        """
        rollout.state.setdefault("tickets", []).append({"clock": clock, "service": service, "note": note})
        return f"ticket opened for {clock}"

    def _ticket(ctx: GradingContext, read: bool) -> float:
        clock, service, words = CLOCKS[ctx.item["clock"]]
        done = ctx.state.get("tickets") or []
        if len(done) != 1 or done[0]["clock"] != clock or done[0]["service"] != service:
            return 0.0
        note = done[0]["note"].casefold()
        return float(all(w in note for w in words) if read else bool(note.strip()))

    @server.grader(name="clock_honest")
    def clock_honest(ctx: GradingContext) -> float:
        return _ticket(ctx, True)

    @server.grader(name="clock_any_note")
    def clock_any_note(ctx: GradingContext) -> float:
        return _ticket(ctx, False)  # FLAW: any note will do

    return server


#: grader → (task, honest, the probe its flaw asks for)
TWINS: dict[str, tuple[str, bool, str]] = {
    "plow_honest": ("plow", True, ""),
    "plow_arguments": ("plow", False, "refused_writes"),
    "rain_honest": ("rain", True, ""),
    "rain_last_read": ("rain", False, "own_read_total"),
    "lift_honest": ("lift", True, ""),
    "lift_no_expiry": ("lift", False, "dropped_write"),
    "lift_values_only": ("lift", False, "neighbour_entity"),
    "sweep_honest": ("sweep", True, ""),
    "sweep_any_request": ("sweep", False, "superseded_request"),
    "service_honest": ("service", True, ""),
    "service_status_ignored": ("service", False, "dropped_write"),
    "spot_honest": ("spot", True, ""),
    "spot_any_note": ("spot", False, "unread_reason"),
    "stamp_honest": ("stamp", True, ""),
    "stamp_own_reads": ("stamp", False, "own_reads_sum"),
    "clock_honest": ("clock", True, ""),
    "clock_any_note": ("clock", False, "unread_reason"),
}

SYSTEM = "You run the desk through its tools."


def _tools(server: ToolServer, names: list[str]) -> list[dict[str, Any]]:
    return [t for t in server.dataset_tools() if t["function"]["name"] in names]


def _plow_items(server: ToolServer) -> list[dict[str, Any]]:
    return [{"messages": [{"role": "system", "content": SYSTEM},
                          {"role": "user", "content": f"Put every street of district {d} on plow P1's route."}],
             "tools": _tools(server, ["streets", "assign"]), "district": d, "max_tool_calls": 4,
             "actions": [{"name": "streets", "arguments": {"district": d}},
                         {"name": "assign", "arguments": {"plow": "P1", "street_ids": s}}],
             "reference_answer": f"P1 now plows {', '.join(s)}."} for d, s in DISTRICTS.items()]


def _rain_items(server: ToolServer) -> list[dict[str, Any]]:
    return [{"messages": [{"role": "system", "content": SYSTEM + " Give the total to 0.1 mm and end with a line "
                           "`ANSWER: <total> mm`."},
                          {"role": "user", "content": f"How much rain fell at station S{k} on {DAYS[k % 7]}?"}],
             "tools": _tools(server, ["readings"]), "rain": k,
             "actions": [{"name": "readings", "arguments": {"station": f"S{k}", "day": DAYS[k % 7]}}],
             "reference_answer": f"S{k} had {rain_total(k):.1f} mm on {DAYS[k % 7]}.\nANSWER: {rain_total(k):.1f} mm"}
            for k in range(10)]


def _lift_items(server: ToolServer) -> list[dict[str, Any]]:
    return [{"messages": [{"role": "system", "content": SYSTEM},
                          {"role": "user", "content": f"Lift {lift} passed its inspection on {day}: record it and "
                           "issue its certificate for six months."}],
             "tools": _tools(server, ["inspect", "certify"]), "lift": lift, "max_tool_calls": 4,
             "actions": [{"name": "inspect", "arguments": {"lift": lift, "day": day}},
                         {"name": "certify", "arguments": {"lift": lift, "expires": lift_expiry(lift)}}],
             "reference_answer": f"{lift}'s inspection of {day} is recorded; its certificate runs to {lift_expiry(lift)}."}
            for lift, day in LIFTS.items()]


def _service_items(server: ToolServer) -> list[dict[str, Any]]:
    """The lift items, each lift out of service until the gold puts it back (doctor32's ``lifts__twin_c``)."""
    out = []
    for item in _lift_items(server):
        lift = item["lift"]
        item["messages"][-1]["content"] += " It is out of service: put it back in service."
        item["tools"] = _tools(server, ["inspect", "certify", "set_status"])
        item["actions"].append({"name": "set_status", "arguments": {"lift": lift, "status": "in_service"}})
        item["max_tool_calls"] = 5
        item["reference_answer"] += " It is back in service."
        out.append(item)
    return out


def _sweep_items(server: ToolServer) -> list[dict[str, Any]]:
    """A sweep booked for the day a second user turn corrects to (doctor35's chimney sweep)."""
    out = []
    for k in range(10):
        house, first, day = f"H-{k + 3}", f"2026-04-{10 + k:02d}", f"2026-04-{12 + k:02d}"
        out.append({"messages": [{"role": "system", "content": "Book the earliest free sweep slot of the day asked."},
                                 {"role": "user", "content": f"Please book a sweep for house {house} on {first}."},
                                 {"role": "assistant", "content": f"Sure: {house} on {first}?"},
                                 {"role": "user", "content": f"Sorry, I meant {day}, not that day. Book {house} on "
                                                             f"{day} instead."}],
                    "tools": _tools(server, ["sweep_slots", "book_sweep"]), "house": house, "day": day,
                    "max_tool_calls": 4,
                    "actions": [{"name": "sweep_slots", "arguments": {"day": day}},
                                {"name": "book_sweep", "arguments": {"house": house, "day": day, "time": "09:00"}}],
                    "reference_answer": f"{house} is booked on {day} at 09:00."})
    return out


def _spot_items(server: ToolServer) -> list[dict[str, Any]]:
    return [{"messages": [{"role": "system", "content": SYSTEM},
                          {"role": "user", "content": f"Book {advertiser} into slot {slot}. For the read note, write: "
                           f"\"{note}\""}],
             "tools": _tools(server, ["book"]), "spot": k,
             "actions": [{"name": "book", "arguments": {"slot": slot, "advertiser": advertiser, "note": note}}],
             "reference_answer": f"{slot} is booked for {advertiser}."} for k, (slot, advertiser, note) in enumerate(SPOTS)]


def _stamp_items(server: ToolServer) -> list[dict[str, Any]]:
    out = []
    for k, owned in enumerate(OWNED):
        total = round(sum(stamp_value(s, c) for s, c in owned), 2)
        listed = ", ".join(f"{s} ({c})" for s, c in owned)
        out.append({"messages": [{"role": "system", "content": SYSTEM + " Give the total to the cent and end with one "
                                  "line `ANSWER: EUR <total>`."},
                                 {"role": "user", "content": f"What are my stamps worth together: {listed}?"}],
                    "tools": _tools(server, ["value"]), "stamps": k,
                    "actions": [{"name": "value", "arguments": {"stamp": s, "condition": c}} for s, c in owned],
                    "reference_answer": f"Together they are worth EUR {total:.2f}.\nANSWER: EUR {total:.2f}"})
    return out


def _clock_items(server: ToolServer) -> list[dict[str, Any]]:
    return [{"messages": [{"role": "system", "content": SYSTEM},
                          {"role": "user", "content": f"My clock {clock} needs a {service}. Please note that {said}."}],
             "tools": _tools(server, ["open_ticket"]), "clock": k,
             "actions": [{"name": "open_ticket", "arguments": {"clock": clock, "service": service,
                                                               "note": said[0].upper() + said[1:] + "."}}],
             "reference_answer": f"A {service} ticket is open for {clock}."}
            for k, (clock, service, words) in enumerate(CLOCKS) for said in [NOTES[k]]]


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """The items of ``task`` (``plow``, ``rain``, ``lift``, ``service``, ``spot``, ``stamp``, ``clock``)."""
    return {"plow": _plow_items, "rain": _rain_items, "lift": _lift_items, "service": _service_items,
            "sweep": _sweep_items,
            "spot": _spot_items,
            "stamp": _stamp_items, "clock": _clock_items}[task](server)


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
