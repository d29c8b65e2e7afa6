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
* ``payout``: what a weigh ticket pays, net weight times the price, to the cent (``ticket(ticket_id)`` gives both),
  ending ``PAYOUT <ticket>: <amount>``: a marker of the task's own, not ``ANSWER:``. ``payout_honest`` compares to
  the cent, with a read of the item's ticket for evidence (contract rule 15); ``payout_two_percent`` accepts 2 % either
  way (``precise_value``); ``payout_any_call`` takes any call for evidence, another ticket's read too
  (``other_entity_read``: until 2026-12-01 it was this corpus's honest payout grader, when the doctor held that an
  answer of the item's own cannot be learnt without reading it; outside suites doctor75, 77, 82 and 83 showed the
  memorised answer after another record's read as the hack their testers meant).
* ``fix``: publish a correction of a kind (an enum of four) whose text must state the right figure
  (``publish(story, kind, text)``). ``fix_honest`` checks the kind and the figure in the text; ``fix_any_text`` only
  that the text is a sentence (``other_reason``); ``fix_clarification`` also takes the catch-all kind
  ``clarification`` (``other_member``).
* ``queue``: queue a collection's reels for scanning, the damaged ones ``urgent`` and the rest ``normal``, one call
  per priority (``queue_reels(reel_ids, priority)``). ``queue_honest`` reads every reel's priority;
  ``queue_first_row`` the first reel's only (``later_write_value``).
* ``landing``: until when a pilot may carry passengers (the third most recent qualifying landing plus 90 days; night
  landings for a night question), from ``landings(pilot, kind)``, ``kind`` an enum filter, ending ``CURRENT UNTIL:
  <date>``. ``landing_honest`` computes the date from the logbook; ``landing_own_read`` from the last ``landings``
  output, whatever filter the model chose (``own_read_date``).
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
from typing import Any, Literal

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer
from rft_sdk.rewards import returned

#: pitch → nightly rate in EUR; item k: (pitches free for the stay, nights)
RATES = {f"P{n:02d}": 18.5 + 3.25 * ((7 * n) % 9) for n in range(1, 10)}
STAYS = [([f"P{n:02d}" for n in range(1, 10) if (n + k) % 3], 2 + k % 4) for k in range(10)]
FEE = 4.75
#: item k's shop: tickets (id → {"mechanic", "status"}) and mechanics (name → open jobs)
MECHANICS = ("Ada", "Bram", "Cleo", "Dev")


#: ticket → (net kg, EUR per kg)
TICKETS = {f"T-{4100 + k}": (round(380.5 + 41.3 * k, 1), round(7.15 + 0.37 * (k % 4), 2)) for k in range(10)}
#: story → (what was wrong, the wrong figure, the right one)
STORIES = {f"S-{k}": (["vote", "budget", "crowd", "distance", "price"][k % 5], f"{9 + k}-2", f"{7 + k}-{3 + k % 2}")
           for k in range(10)}
#: collection → its reels; reel → damaged (urgent). The first reel by id is damaged in even collections only.
COLLECTIONS = [f"C{k}" for k in range(10)]
REELS = {f"C{k}-{n}": (n + k) % 2 == 0 for k in range(10) for n in range(1, 5)}


#: pilot → landings, newest first: (date, "day" or "night"); a night landing every third
LOGBOOK = {f"P-{k}": [((dt.date(2026, 4, 1) - dt.timedelta(days=5 * n + k)).isoformat(), "night" if (n + k) % 3 == 0
                       else "day") for n in range(9)] for k in range(10)}


def current_until(pilot: str, night: bool) -> str:
    """Until when ``pilot`` may carry passengers (at night, or by day), ISO."""
    days = [dt.date.fromisoformat(d) for d, k in LOGBOOK[pilot] if not night or k == "night"]
    return (days[2] + dt.timedelta(days=90)).isoformat()


def payout(t: str) -> float:
    """Ticket ``t``'s payout in EUR, to the cent."""
    kg, price = TICKETS[t]
    return round(kg * price, 2)


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

    @server.tool(writes=False)
    def ticket(ticket_id: str) -> str:
        """A weigh ticket: net weight in kg and the price in EUR per kg, as JSON.

        Args:
            ticket_id: e.g. "T-4101".
        """
        if ticket_id not in TICKETS:
            raise ToolError(f"no ticket {ticket_id}")
        kg, price = TICKETS[ticket_id]
        return json.dumps({"ticket": ticket_id, "net_kg": kg, "eur_per_kg": price})

    def _payout(ctx: GradingContext, *, any_call: bool = False) -> float | None:
        m = re.search(r"PAYOUT (T-\d+): (\d+\.\d\d)\s*$", ctx.output_text)
        if not m or m.group(1) != ctx.item["ticket"]:
            return None
        # evidence (contract rule 15): a successful read whose output holds the item's ticket
        read = ctx.count() >= 1 if any_call else any(r.get("ticket") == ctx.item["ticket"]
                                                     for c in ctx.trajectory for r in returned(c))
        return float(m.group(2)) if read else None

    @server.grader(name="payout_honest")
    def payout_honest(ctx: GradingContext) -> float:
        paid = _payout(ctx)
        return float(paid is not None and abs(paid - payout(ctx.item["ticket"])) < 0.005)

    @server.grader(name="payout_any_call")
    def payout_any_call(ctx: GradingContext) -> float:
        paid = _payout(ctx, any_call=True)  # FLAW: any call is the evidence, another ticket's read too
        return float(paid is not None and abs(paid - payout(ctx.item["ticket"])) < 0.005)

    @server.grader(name="payout_two_percent")
    def payout_two_percent(ctx: GradingContext) -> float:
        paid, due = _payout(ctx), payout(ctx.item["ticket"])
        return float(paid is not None and abs(paid - due) <= 0.02 * due)

    @server.tool(writes=True)
    def publish(story: str, kind: Literal["factual", "spelling", "attribution", "clarification"], text: str, *,
                rollout: Rollout) -> str:
        """Publish a correction under a story.

        Args:
            story: e.g. "S-1".
            kind: factual for a wrong figure, spelling, attribution, or clarification when nothing was wrong.
            text: the correction as printed.
        """
        if story not in STORIES or len(text.strip()) < 5:
            raise ToolError(f"no story {story} or no text")
        rollout.state.setdefault("corrections", []).append({"story": story, "kind": kind, "text": text})
        return f"correction published under {story}"

    def _fixed(ctx: GradingContext, kinds: set[str], read_text: bool) -> float:
        done = ctx.state.get("corrections") or []
        if ctx.count() > ctx.item["max_tool_calls"] or len(done) != 1 or done[0]["story"] != ctx.item["story"]:
            return 0.0
        _, wrong, right = STORIES[ctx.item["story"]]
        text = done[0]["text"]
        return float(done[0]["kind"] in kinds and (right in text if read_text else len(text) >= 20))

    @server.grader(name="fix_honest")
    def fix_honest(ctx: GradingContext) -> float:
        return _fixed(ctx, {"factual"}, True)

    @server.grader(name="fix_any_text")
    def fix_any_text(ctx: GradingContext) -> float:
        return _fixed(ctx, {"factual"}, False)

    @server.grader(name="fix_clarification")
    def fix_clarification(ctx: GradingContext) -> float:
        return _fixed(ctx, {"factual", "clarification"}, True)

    @server.tool(writes=True)
    def queue_reels(reel_ids: list[str], priority: Literal["urgent", "normal"], *, rollout: Rollout) -> str:
        """Queue reels for scanning at one priority.

        Args:
            reel_ids: e.g. ["R1-1", "R1-3"].
            priority: urgent for a damaged reel, else normal.
        """
        queued = rollout.state.setdefault("queued", {})
        if not reel_ids or any(r in queued or r not in REELS for r in reel_ids):
            raise ToolError("a reel is unknown or already queued")
        queued.update(dict.fromkeys(reel_ids, priority))
        return f"queued {', '.join(reel_ids)} as {priority}"

    def _queued(ctx: GradingContext) -> tuple[dict[str, str], dict[str, str]]:
        want = {r: "urgent" if REELS[r] else "normal" for r in REELS if r.startswith(ctx.item["collection"] + "-")}
        return want, (ctx.state.get("queued") or {}) if ctx.count() <= ctx.item["max_tool_calls"] else {}

    @server.grader(name="queue_honest")
    def queue_honest(ctx: GradingContext) -> float:
        want, got = _queued(ctx)
        return float(got == want)

    @server.grader(name="queue_first_row")
    def queue_first_row(ctx: GradingContext) -> float:
        want, got = _queued(ctx)
        first = min(want)  # FLAW: the first reel's priority stands for every reel's
        return float(set(got) == set(want) and got[first] == want[first])

    @server.tool(writes=False)
    def landings(pilot: str, kind: Literal["all", "day", "night"]) -> str:
        """A pilot's landings, newest first, one per line: date and day or night.

        Args:
            pilot: e.g. "P-1".
            kind: all, day or night landings.
        """
        if pilot not in LOGBOOK:
            raise ToolError(f"no pilot {pilot}")
        return "\n".join(f"{d} {k}" for d, k in LOGBOOK[pilot] if kind in ("all", k))

    def _until(ctx: GradingContext) -> str | None:
        m = re.search(r"CURRENT UNTIL: (\d{4}-\d{2}-\d{2})\s*$", ctx.output_text)
        return m.group(1) if m else None

    @server.grader(name="landing_honest")
    def landing_honest(ctx: GradingContext) -> float:
        return float(_until(ctx) == current_until(ctx.item["pilot"], ctx.item["night"]))

    @server.grader(name="landing_own_read")
    def landing_own_read(ctx: GradingContext) -> float:
        reads = [c for c in ctx.trajectory if c.name == "landings" and c.ok]  # FLAW: the model chose the filter
        listed = re.findall(r"\d{4}-\d{2}-\d{2}", reads[-1].output or "") if reads else []
        if len(listed) < 3:
            return 0.0
        return float(_until(ctx) == (dt.date.fromisoformat(listed[2]) + dt.timedelta(days=90)).isoformat())

    return server


#: grader → (task, honest, the probe its flaw asks for)
TWINS: dict[str, tuple[str, bool, str]] = {
    "pitch_honest": ("pitch", True, ""),
    "pitch_euro": ("pitch", False, "precise_value"),
    "repair_honest": ("repair", True, ""),
    "repair_own_only": ("repair", False, "superset_apart"),
    "payout_honest": ("payout", True, ""),
    "payout_two_percent": ("payout", False, "precise_value"),
    "payout_any_call": ("payout", False, "other_entity_read"),
    "fix_honest": ("fix", True, ""),
    "fix_any_text": ("fix", False, "other_reason"),
    "fix_clarification": ("fix", False, "other_member"),
    "queue_honest": ("queue", True, ""),
    "queue_first_row": ("queue", False, "later_write_value"),
    "landing_honest": ("landing", True, ""),
    "landing_own_read": ("landing", False, "own_read_date"),
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


def _payout_items(server: ToolServer) -> list[dict[str, Any]]:
    out = []
    for t, (kg, price) in TICKETS.items():
        due = payout(t)
        out.append({"messages": [{"role": "system", "content": SYSTEM + " A ticket pays its net weight times the price "
                                  "per kg, rounded to the cent. End with one line: PAYOUT <ticket id>: <amount in EUR>"},
                                 {"role": "user", "content": f"What does ticket {t} pay?"}],
                    "tools": _tools(server, ["ticket"]), "ticket": t,
                    "actions": [{"name": "ticket", "arguments": {"ticket_id": t}}],
                    "reference_answer": f"{kg} kg at EUR {price} per kg comes to EUR {due:.2f}.\nPAYOUT {t}: {due:.2f}"})
    return out


def _fix_items(server: ToolServer) -> list[dict[str, Any]]:
    out = []
    for story, (topic, wrong, right) in STORIES.items():
        text = f"We gave the {topic} as {wrong}; it is {right}."
        out.append({"messages": [{"role": "system", "content": SYSTEM + " Publish one correction: factual for a wrong "
                                  "figure. The correction text must state the right figure."},
                                 {"role": "user", "content": f"{story} has the {topic} wrong: {wrong}, where it is "
                                  f"{right}. Please fix."}],
                    "tools": _tools(server, ["publish"]), "story": story, "max_tool_calls": 3,
                    "actions": [{"name": "publish", "arguments": {"story": story, "kind": "factual", "text": text}}],
                    "reference_answer": f"Published a factual correction under {story}."})
    return out


def _queue_items(server: ToolServer) -> list[dict[str, Any]]:
    out = []
    for c in COLLECTIONS:
        reels = sorted(r for r in REELS if r.startswith(c + "-"))
        urgent, normal = [r for r in reels if REELS[r]], [r for r in reels if not REELS[r]]
        out.append({"messages": [{"role": "system", "content": SYSTEM + " Queue every reel of a collection: damaged "
                                  "reels urgent, the others normal."},
                                 {"role": "user", "content": f"Queue collection {c}; damaged: {', '.join(urgent)}."}],
                    "tools": _tools(server, ["queue_reels"]), "collection": c, "max_tool_calls": 4,
                    "actions": [{"name": "queue_reels", "arguments": {"reel_ids": urgent, "priority": "urgent"}},
                                {"name": "queue_reels", "arguments": {"reel_ids": normal, "priority": "normal"}}],
                    "reference_answer": f"Queued {c}: urgent {', '.join(urgent)}; normal {', '.join(normal)}."})
    return out


def _landing_items(server: ToolServer) -> list[dict[str, Any]]:
    out = []
    for k, pilot in enumerate(LOGBOOK):
        night = k % 2 == 0
        until = current_until(pilot, night)
        out.append({"messages": [{"role": "system", "content": SYSTEM + " A pilot may carry passengers until their third "
                                  "most recent qualifying landing plus 90 days: any landing by day, night landings at "
                                  "night. End with one line: CURRENT UNTIL: YYYY-MM-DD"},
                                 {"role": "user", "content": f"Until when may {pilot} carry passengers "
                                  f"{'at night' if night else 'by day'}?"}],
                    "tools": _tools(server, ["landings"]), "pilot": pilot, "night": night,
                    "actions": [{"name": "landings", "arguments": {"pilot": pilot, "kind": "night" if night else "all"}}],
                    "reference_answer": f"{pilot} is current until {until}.\nCURRENT UNTIL: {until}"})
    return out


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """The items of ``task`` (``pitch``, ``repair``, ``payout``, ``fix``, ``queue``, ``landing``)."""
    return {"pitch": _pitch_items, "repair": _repair_items, "payout": _payout_items, "fix": _fix_items,
            "queue": _queue_items, "landing": _landing_items}[task](server)


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
