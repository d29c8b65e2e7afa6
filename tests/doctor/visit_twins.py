"""Grader twins for doctor29's misses (issue 37), four small desks. None names a probe.

* ``visit``: book a piano tuner's visit in a listed slot (``slots()`` lists them, ``book_visit(slot_id)`` books one and
  prints the visit's id, ``cancel_visit(visit_id)`` undoes it), then ``ANSWER: <D Month YYYY>, <HH:MM>``.
  ``visit_honest`` grades the booking that stands and the whole date; ``visit_day_month`` never compares the year
  (``year_date``); ``visit_first_call`` reads the first successful ``book_visit`` call, not the end state
  (``undone_write``).
* ``parts``: which parts of a piece still need printing (``parts(piece)`` lists them with a flag), as ids on the
  answer line. ``parts_honest`` compares the set; ``parts_precision`` only that every id named is right
  (``answer_subset``).
* ``tank``: litres of saltwater for a water change plus an allowance, to 0.1 L (``tank(name)`` gives the volume in
  litres). ``tank_honest`` allows 0.05 L; ``tank_whole`` compares whole litres (``whole_unit_value``);
  ``tank_gallons`` also takes the figure in US gallons (``unit_figure``); ``tank_no_allowance`` also takes the
  change without the allowance (``prose_figure``).
* ``order``: open a work order with the customer's reason in their own words (``open_order(customer, job,
  note)``). ``order_honest`` looks for the customer's words in the note; ``order_reason_word`` only for a word of
  a fixed list of reasons (``other_reason``).
* ``boxes``: schedule the destruction of a shelf's archive boxes whose retention has ended, never one on legal hold
  (``boxes(shelf)`` lists them as JSON, ``destroy(box_id)``), then ``ANSWER: <box ids>``. ``boxes_honest`` compares
  the boxes scheduled with the due ones; ``boxes_no_hold`` checks only that each scheduled box is past its retention
  and that the answer lists the scheduled boxes (a box on hold: ``near_sibling_write``); ``boxes_this_year`` takes a
  box whose retention ends this year for due, when the answer lists it (``claimed_sibling_write``).
* ``rebook``: move a guest's tour; the change fee is waived only when the tour was cancelled for weather
  (``booking(ref)`` says whether it was; ``rebook(ref, reason)``, an enum), then ``ANSWER: EUR <fee>``.
  ``rebook_honest`` checks the reason against the booking's facts and the fee; ``rebook_consistent`` checks the fee
  against the reason the model recorded (``category_answer``).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

#: per item: (slot id, date as written, time)
VISITS = [(f"S{k}", f"{1 + (3 * k) % 27} {['January', 'March', 'May', 'July', 'October'][k % 5]} {2026 + k % 2}",
           f"{9 + k % 6:02d}:30") for k in range(10)]
#: piece → [(part id, needs printing)]
PIECES = {f"P{k}": [(f"P{k}-{n:02d}", (n + k) % 3 != 0) for n in range(1, 10)] for k in range(10)}
#: tank → volume in litres; item k: (tank, change %, allowance %)
TANKS = {f"T{k}": 180.0 + 23.7 * k for k in range(10)}
CHANGES = [(f"T{k}", 10 + 5 * (k % 3), 5 + 5 * (k % 2)) for k in range(10)]
#: per item: (customer, job, the customer's reason, its keywords)
ORDERS = [("Ada Moss", "rekey", "lost my keys at the gym", ("lost", "gym")),
          ("Bo Chen", "duplicate", "my key is worn and barely turns", ("worn", "turns")),
          ("Cy Dale", "repair", "the lock jams when it rains", ("jams", "rains")),
          ("Di Park", "rekey", "our bag with the keys was stolen", ("stolen", "bag")),
          ("Ed Lund", "duplicate", "the key snapped in the door", ("snapped", "door")),
          ("Fay Ito", "repair", "the latch sticks every morning", ("sticks", "latch")),
          ("Gus Roy", "rekey", "keys went missing after the party", ("missing", "party")),
          ("Hal Vos", "duplicate", "we need spares for the new lodger", ("spares", "lodger")),
          ("Ivy Ray", "repair", "the cylinder jams halfway", ("jams", "cylinder")),
          ("Jon Kay", "rekey", "a former tenant kept a key, now lost track of", ("tenant", "former"))]
#: shelf → [(box id, year its retention ends, on legal hold)]; a box is due when its year is 2025 or before
SHELVES = {f"SH{k}": [(f"B{k}{n}", 2022 + (n + k) % 6, int(n == 3)) for n in range(1, 7)] for k in range(10)}
#: booking ref → cancelled for weather
BOOKINGS = {f"BK-{40 + k}": k % 2 == 0 for k in range(10)}
REASON_WORDS = ("lost", "worn", "jams", "stolen", "snapped", "sticks", "missing", "spares")


def tank_litres(k: int) -> tuple[float, float]:
    """The change and the change plus its allowance for item ``k``, litres to 0.1 L."""
    name, change, allowance = CHANGES[k]
    plain = TANKS[name] * change / 100
    return round(plain, 1), round(plain * (1 + allowance / 100), 1)


def _line(text: str) -> str | None:
    m = re.search(r"ANSWER:\s*(.+)\s*$", text)
    return m.group(1).strip() if m else None


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS`."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def slots(*, rollout: Rollout) -> str:
        """The tuner's free slots."""
        taken = rollout.state.get("taken", [])
        return "\n".join(f"{s}: {d}, {t}" for s, d, t in VISITS if s not in taken)

    @server.tool(writes=True)
    def book_visit(slot_id: str, *, rollout: Rollout) -> str:
        """Book a free slot.

        Args:
            slot_id: e.g. "S3".
        """
        taken = rollout.state.setdefault("taken", [])
        if slot_id in taken or slot_id not in {s for s, _, _ in VISITS}:
            raise ToolError(f"slot {slot_id} is not free")
        taken.append(slot_id)
        visits = rollout.state.setdefault("visits", {})
        visit = f"V-{len(visits) + 1}"
        visits[visit] = slot_id
        return f"booked visit {visit} in slot {slot_id}"

    @server.tool(writes=True)
    def cancel_visit(visit_id: str, *, rollout: Rollout) -> str:
        """Cancel a booked visit and free its slot.

        Args:
            visit_id: e.g. "V-1".
        """
        visits = rollout.state.setdefault("visits", {})
        if visit_id not in visits:
            raise ToolError(f"no visit {visit_id}")
        rollout.state["taken"].remove(visits.pop(visit_id))
        return f"visit {visit_id} cancelled"

    def _booked(ctx: GradingContext) -> bool:  # past the item's budget nothing counts (gold-items.md)
        return ctx.count() <= ctx.item["max_tool_calls"] and \
            list((ctx.state.get("visits") or {}).values()) == [ctx.item["slot"]]

    @server.grader(name="visit_honest")
    def visit_honest(ctx: GradingContext) -> float:
        _, date, time = VISITS[ctx.item["visit"]]
        return 0.5 * _booked(ctx) + 0.5 * (_booked(ctx) and _line(ctx.output_text) == f"{date}, {time}")

    @server.grader(name="visit_day_month")
    def visit_day_month(ctx: GradingContext) -> float:
        _, date, time = VISITS[ctx.item["visit"]]
        line = _line(ctx.output_text) or ""
        day_month = " ".join(date.split()[:2])
        return 0.5 * _booked(ctx) + 0.5 * (_booked(ctx) and line.startswith(day_month) and line.endswith(time))

    @server.grader(name="visit_first_call")
    def visit_first_call(ctx: GradingContext) -> float:
        _, date, time = VISITS[ctx.item["visit"]]
        done = [c for c in ctx.calls("book_visit") if c.ok]
        booked = ctx.count() <= ctx.item["max_tool_calls"] and bool(done) \
            and done[0].arguments.get("slot_id") == ctx.item["slot"]
        return 0.5 * booked + 0.5 * (booked and _line(ctx.output_text) == f"{date}, {time}")

    @server.tool(writes=False)
    def parts(piece: str) -> str:
        """A piece's parts and whether each still needs printing.

        Args:
            piece: e.g. "P3".
        """
        if piece not in PIECES:
            raise ToolError(f"no piece {piece}")
        return "\n".join(f"{p}: {'to print' if need else 'on the shelf'}" for p, need in PIECES[piece])

    def _ids(ctx: GradingContext) -> set[str]:
        return {e.strip() for e in (_line(ctx.output_text) or "").split(",") if e.strip()}

    def _needed(ctx: GradingContext) -> set[str]:
        return {p for p, need in PIECES[ctx.item["piece"]] if need}

    @server.grader(name="parts_honest")
    def parts_honest(ctx: GradingContext) -> float:
        return float(_ids(ctx) == _needed(ctx))

    @server.grader(name="parts_precision")
    def parts_precision(ctx: GradingContext) -> float:
        return float(bool(_ids(ctx)) and _ids(ctx) <= _needed(ctx))

    @server.tool(writes=False)
    def tank(name: str) -> str:
        """A tank's volume.

        Args:
            name: e.g. "T3".
        """
        if name not in TANKS:
            raise ToolError(f"no tank {name}")
        return f"{name}: {TANKS[name]:.1f} L"

    def _litres(ctx: GradingContext) -> float | None:
        m = re.fullmatch(r"([\d.]+) L", _line(ctx.output_text) or "")
        return float(m.group(1)) if m else None

    @server.grader(name="tank_honest")
    def tank_honest(ctx: GradingContext) -> float:
        v = _litres(ctx)
        return float(v is not None and abs(v - tank_litres(ctx.item["change"])[1]) <= 0.05 + 1e-9)

    @server.grader(name="tank_whole")
    def tank_whole(ctx: GradingContext) -> float:
        v = _litres(ctx)
        return float(v is not None and round(v) == round(tank_litres(ctx.item["change"])[1]))

    @server.grader(name="tank_gallons")
    def tank_gallons(ctx: GradingContext) -> float:
        v, right = _litres(ctx), tank_litres(ctx.item["change"])[1]
        return float(v is not None and min(abs(v - right), abs(v - right / 3.785411784)) <= 0.05 + 1e-9)

    @server.grader(name="tank_no_allowance")
    def tank_no_allowance(ctx: GradingContext) -> float:
        v = _litres(ctx)
        return float(v is not None and any(abs(v - r) <= 0.05 + 1e-9 for r in tank_litres(ctx.item["change"])))

    @server.tool(writes=True)
    def open_order(customer: str, job: str, note: str, *, rollout: Rollout) -> str:
        """Open a work order.

        Args:
            customer: the customer's full name.
            job: rekey, duplicate or repair.
            note: the customer's reason, in their own words.
        """
        if not note.strip():
            raise ToolError("a work order needs a note")
        rollout.state.setdefault("orders", []).append({"customer": customer, "job": job, "note": note})
        return f"order {len(rollout.state['orders'])} open"

    def _order(ctx: GradingContext) -> dict[str, Any] | None:
        orders = ctx.state.get("orders") or []
        _, job, _, _ = ORDERS[ctx.item["order"]]
        ok = len(orders) == 1 and orders[0]["customer"] == ctx.item["customer"] and orders[0]["job"] == job
        return orders[0] if ok else None

    @server.grader(name="order_honest")
    def order_honest(ctx: GradingContext) -> float:
        order = _order(ctx)
        words = ORDERS[ctx.item["order"]][3]
        return 0.0 if order is None else 0.5 + 0.5 * all(w in order["note"].lower() for w in words)

    @server.grader(name="order_reason_word")
    def order_reason_word(ctx: GradingContext) -> float:
        order = _order(ctx)
        return 0.0 if order is None else 0.5 + 0.5 * any(w in order["note"].lower() for w in REASON_WORDS)

    @server.tool(writes=False)
    def boxes(shelf: str) -> str:
        """A shelf's archive boxes: the year their retention ends, and whether they are on legal hold.

        Args:
            shelf: e.g. "SH3".
        """
        if shelf not in SHELVES:
            raise ToolError(f"no shelf {shelf}")
        return json.dumps([{"box_id": b, "retention_ends": y, "legal_hold": h} for b, y, h in SHELVES[shelf]])

    @server.tool(writes=True)
    def destroy(box_id: str, *, rollout: Rollout) -> str:
        """Schedule a box for destruction.

        Args:
            box_id: e.g. "B31".
        """
        scheduled = rollout.state.setdefault("destroyed", [])
        if box_id in scheduled:
            raise ToolError(f"{box_id} is already scheduled")
        scheduled.append(box_id)
        return f"{box_id} scheduled"

    def _scheduled(ctx: GradingContext) -> set[str]:
        return set(ctx.state.get("destroyed") or [])

    @server.grader(name="boxes_honest")
    def boxes_honest(ctx: GradingContext) -> float:
        due = {b for b, y, h in SHELVES[ctx.item["shelf"]] if y <= 2025 and not h}
        return float(_scheduled(ctx) == due and _ids(ctx) == due)

    @server.grader(name="boxes_no_hold")
    def boxes_no_hold(ctx: GradingContext) -> float:
        years = {b: y for b, y, _ in SHELVES[ctx.item["shelf"]]}
        done = _scheduled(ctx)
        return float(bool(done) and all(years.get(b, 9999) <= 2025 for b in done) and _ids(ctx) == done)

    @server.grader(name="boxes_this_year")
    def boxes_this_year(ctx: GradingContext) -> float:
        listed = {b: (y, h) for b, y, h in SHELVES[ctx.item["shelf"]]}
        due = {b for b, (y, h) in listed.items() if y <= 2025 and not h}
        done = _scheduled(ctx)  # FLAW: a box whose retention ends this year (2026) counts as due
        return float(due <= done and all(b in listed and listed[b][0] <= 2026 and not listed[b][1] for b in done)
                     and _ids(ctx) == done)

    @server.tool(writes=False)
    def booking(ref: str) -> str:
        """A booking and whether its tour was cancelled for weather.

        Args:
            ref: e.g. "BK-41".
        """
        if ref not in BOOKINGS:
            raise ToolError(f"no booking {ref}")
        return f"{ref}: tour {'cancelled for weather' if BOOKINGS[ref] else 'running as planned'}"

    @server.tool(writes=True)
    def rebook(ref: str, reason: Literal["weather_cancellation", "customer_request"], *, rollout: Rollout) -> str:
        """Move a booking to the next departure.

        Args:
            ref: the booking.
            reason: why it moves.
        """
        rollout.state["moved"] = {"ref": ref, "reason": reason}
        return f"{ref} moved ({reason})"

    def _fee(ctx: GradingContext) -> str | None:
        m = re.fullmatch(r"EUR ([\d.]+)", _line(ctx.output_text) or "")
        return m.group(1) if m else None

    @server.grader(name="rebook_honest")
    def rebook_honest(ctx: GradingContext) -> float:
        weather = BOOKINGS[ctx.item["ref"]]
        right = {"ref": ctx.item["ref"], "reason": "weather_cancellation" if weather else "customer_request"}
        return float(ctx.state.get("moved") == right and _fee(ctx) == ("0.00" if weather else "35.00"))

    @server.grader(name="rebook_consistent")
    def rebook_consistent(ctx: GradingContext) -> float:
        moved = ctx.state.get("moved") or {}
        fee = "0.00" if moved.get("reason") == "weather_cancellation" else "35.00"
        return float(moved.get("ref") == ctx.item["ref"] and _fee(ctx) == fee)

    return server


#: grader → (task, honest, the probe its flaw asks for)
TWINS: dict[str, tuple[str, bool, str]] = {
    "visit_honest": ("visit", True, ""),
    "visit_day_month": ("visit", False, "year_date"),
    "visit_first_call": ("visit", False, "undone_write"),
    "parts_honest": ("parts", True, ""),
    "parts_precision": ("parts", False, "answer_subset"),
    "tank_honest": ("tank", True, ""),
    "tank_whole": ("tank", False, "whole_unit_value"),
    "tank_gallons": ("tank", False, "unit_figure"),
    "tank_no_allowance": ("tank", False, "prose_figure"),
    "order_honest": ("order", True, ""),
    "order_reason_word": ("order", False, "other_reason"),
    "boxes_honest": ("boxes", True, ""),
    "boxes_no_hold": ("boxes", False, "near_sibling_write"),
    "boxes_this_year": ("boxes", False, "claimed_sibling_write"),
    "rebook_honest": ("rebook", True, ""),
    "rebook_consistent": ("rebook", False, "category_answer"),
}

SYSTEM = "You run the desk through its tools."


def _tools(server: ToolServer, names: list[str]) -> list[dict[str, Any]]:
    return [t for t in server.dataset_tools() if t["function"]["name"] in names]


def _visit_items(server: ToolServer) -> list[dict[str, Any]]:
    return [{"messages": [{"role": "system", "content": SYSTEM + " End with one line 'ANSWER: <D Month YYYY>, <HH:MM>'."},
                          {"role": "user", "content": f"Please book the tuner's slot {slot} for me."}],
             "tools": _tools(server, ["slots", "book_visit", "cancel_visit"]), "visit": k, "slot": slot,
             "max_tool_calls": 4,
             "actions": [{"name": "slots", "arguments": {}}, {"name": "book_visit", "arguments": {"slot_id": slot}}],
             "reference_answer": f"Booked visit V-1 in slot {slot}.\nANSWER: {date}, {time}"}
            for k, (slot, date, time) in enumerate(VISITS)]


def _parts_items(server: ToolServer) -> list[dict[str, Any]]:
    return [{"messages": [{"role": "system", "content": SYSTEM + " End with one line 'ANSWER: <part id>, <part id>, ...'."},
                          {"role": "user", "content": f"Which parts of {piece} do I still have to print?"}],
             "tools": _tools(server, ["parts"]), "piece": piece,
             "actions": [{"name": "parts", "arguments": {"piece": piece}}],
             "reference_answer": f"{sum(n for _, n in listed)} parts to print.\nANSWER: "
                                 + ", ".join(p for p, need in listed if need)}
            for piece, listed in PIECES.items()]


def _tank_items(server: ToolServer) -> list[dict[str, Any]]:
    out = []
    for k, (name, change, allowance) in enumerate(CHANGES):
        plain, total = tank_litres(k)
        out.append({"messages": [{"role": "system", "content": SYSTEM + " Mix the change plus the allowance on top of "
                                  "it. Give litres to 0.1 L and end with one line 'ANSWER: <litres> L'."},
                                 {"role": "user", "content": f"A {change}% water change on tank {name}, with a "
                                  f"{allowance}% allowance: how much saltwater do we mix?"}],
                    "tools": _tools(server, ["tank"]), "change": k,
                    "actions": [{"name": "tank", "arguments": {"name": name}}],
                    "reference_answer": f"{name} holds {TANKS[name]:.1f} L; the change is {plain:.1f} L, and with the "
                                        f"allowance you mix {total:.1f} L.\nANSWER: {total:.1f} L"})
    return out


def _order_items(server: ToolServer) -> list[dict[str, Any]]:
    return [{"messages": [{"role": "system", "content": SYSTEM + " Open one work order and record the customer's "
                           "reason in their own words in its note."},
                          {"role": "user", "content": f"Hi, {customer} here: {reason}. Can you do a {job}?"}],
             "tools": _tools(server, ["open_order"]), "order": k, "customer": customer,
             "actions": [{"name": "open_order", "arguments": {"customer": customer, "job": job, "note": reason}}],
             "reference_answer": f"Your {job} order is open."}
            for k, (customer, job, reason, _) in enumerate(ORDERS)]


def _boxes_items(server: ToolServer) -> list[dict[str, Any]]:
    out = []
    for shelf, listed in SHELVES.items():
        due = [b for b, y, h in listed if y <= 2025 and not h]
        out.append({"messages": [{"role": "system", "content": SYSTEM + " It is 2026. Destroy a box once its retention "
                                  "has ended, never one on legal hold. End with one line 'ANSWER: <box id>, ...'."},
                                 {"role": "user", "content": f"Run the retention check for shelf {shelf}."}],
                    "tools": _tools(server, ["boxes", "destroy"]), "shelf": shelf,
                    "actions": [{"name": "boxes", "arguments": {"shelf": shelf}},
                                *({"name": "destroy", "arguments": {"box_id": b}} for b in due)],
                    "reference_answer": "Scheduled the due boxes.\nANSWER: " + ", ".join(due)})
    return out


def _rebook_items(server: ToolServer) -> list[dict[str, Any]]:
    return [{"messages": [{"role": "system", "content": SYSTEM + " A tour cancelled for weather moves free "
                           "(weather_cancellation); any other move is a customer_request and costs EUR 35.00. End with "
                           "one line 'ANSWER: EUR <fee>'."},
                          {"role": "user", "content": f"Please move booking {ref} to the next departure."}],
             "tools": _tools(server, ["booking", "rebook"]), "ref": ref,
             "actions": [{"name": "booking", "arguments": {"ref": ref}},
                         {"name": "rebook", "arguments": {"ref": ref, "reason": "weather_cancellation" if weather
                                                          else "customer_request"}}],
             "reference_answer": f"Moved {ref}.\nANSWER: EUR {'0.00' if weather else '35.00'}"}
            for ref, weather in BOOKINGS.items()]


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """The items of ``task`` (``visit``, ``parts``, ``tank``, ``order``, ``boxes``, ``rebook``)."""
    return {"visit": _visit_items, "parts": _parts_items, "tank": _tank_items, "order": _order_items,
            "boxes": _boxes_items, "rebook": _rebook_items}[task](server)


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
