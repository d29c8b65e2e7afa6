"""Grader twins for nine changes outside suites' misses asked for (issue 37, doctor27 and doctor28), eight small
desks. None names a probe.

* ``round``: a chess round's results phoned in (``pairings`` reads them; ``record_result(board, result)``, an enum
  of ``1-0``/``0-1``/``1/2-1/2``, records or corrects one board), then ``ANSWER: <the sole leader>``.
  ``round_honest`` grades the results as they stand and the answer line's name; ``round_first_call`` reads each
  board's *first* ``record_result`` call (a corrected result unseen: ``overwritten_write``); ``round_mentions`` pays
  any reply that mentions the leader (``"A or B"``: ``hedged_answer``, inside the marked answer line).
* ``loan``: lend a member packets of several seed varieties (``stock`` reads a crop's SKUs;
  ``checkout(member, sku, qty)``). ``loan_exact`` grades each SKU's quantity; ``loan_totals`` only the
  packets lent and the SKUs moved (two SKUs' quantities swapped: ``swapped_writes``).
* ``rest``: a crew member's earliest report time after rest, as a local date and time (``rest_rule`` reads the
  rest hours and the base's UTC offset). ``rest_honest`` parses the whole moment; ``rest_clock`` reads only
  the clock (the right time on another day: ``datetime_date``).
* ``scale``: a recipe's flour scaled to the servings asked for and converted to grams, ``to 0.1 g``
  (``recipe`` reads cups per serving and the flour's density). ``scale_honest`` allows half a unit of that
  precision; ``scale_relative`` allows 5 % ("scales are rough": ``precise_value``).
* ``odometer``: log a van's odometer reading, phoned in in miles, in km (``log_reading(plate, odometer_km)``).
  ``odometer_honest`` allows a kilometre of rounding; ``odometer_either`` also takes the miles figure "as on the
  job card" (``prompt_figure``).
* ``refund``: refund a sale with the customer's reason in their own words (``refund(sale_id, amount, reason)``).
  ``refund_honest`` looks for the customer's words in the reason; ``refund_any_reason`` only that there is one
  (``unread_reason``).
* ``trails``: the open trails of a region, as ids (``trails`` lists them). ``trails_honest`` compares the set of
  ids; ``trails_numbers`` their numbers only, the region letter dropped (``adv_id_prefix``).
* ``permit``: a parking permit for the vehicle the resident describes (``find_resident`` lists each resident's
  vehicles as text, ``issue_permit(resident_id, plate)``). ``permit_honest`` grades the plate;
  ``permit_resident`` only that a permit went to the resident (their other car: ``named_listed_choice``).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

POINTS = {"1-0": (1.0, 0.0), "0-1": (0.0, 1.0), "1/2-1/2": (0.5, 0.5)}
PLAYERS = ["Ben Okoro", "Anika Sharma", "Carla Mendes", "Filip Novak", "Elif Yilmaz", "Hugo Brandt"]
#: round → (scores before, pairings (board, white, black), results by board)
ROUNDS = {}
for _n in range(16):
    _p = PLAYERS[_n % 6:] + PLAYERS[:_n % 6]
    _before = {name: 1.5 if k == 0 else float((k + _n) % 2) for k, name in enumerate(_p)}
    _pairs = [(b + 1, _p[2 * b], _p[2 * b + 1]) for b in range(3)]
    _results = {b: ["1-0", "0-1", "1/2-1/2"][(b + _n) % 3] for b, _, _ in _pairs}
    ROUNDS[f"R{_n}"] = (_before, _pairs, _results)

#: crop → {sku: variety}
STOCK = {"tomato": {"TOM-0412": "Cherokee Purple", "TOM-0419": "Brandywine"},
         "basil": {"BAS-0101": "Genovese", "BAS-0107": "Thai"},
         "bean": {"BEA-0211": "Borlotti", "BEA-0230": "Blue Lake"},
         "pepper": {"PEP-0305": "Padron", "PEP-0311": "Jalapeno"}}
LOANS = [(f"M{k}", [(crop, sorted(STOCK[crop])[k % 2], q) for crop, q in pairs])
         for k, pairs in enumerate([[("tomato", 2), ("basil", 1)], [("bean", 1), ("pepper", 3)],
                                    [("basil", 2), ("bean", 1)], [("pepper", 1), ("tomato", 3)],
                                    [("tomato", 1), ("bean", 2)], [("basil", 3), ("pepper", 1)],
                                    [("bean", 2), ("tomato", 1)], [("pepper", 2), ("basil", 1)],
                                    [("tomato", 3), ("pepper", 2)], [("basil", 1), ("bean", 3)]])]

#: resident id → (name, street, [(plate, description)])
RESIDENTS = {1: ("Maria Duarte", "Alder Road", [("MD71 RRA", "Ford Transit van"), ("MD19 KLP", "Honda Civic")]),
             2: ("Tom Okafor", "Birch Lane", [("TO62 BXE", "Toyota Prius"), ("TO15 WQR", "Vespa scooter")]),
             3: ("Ines Vidal", "Cedar Close", [("IV70 NNS", "Nissan Leaf"), ("IV08 PLM", "Land Rover Defender")]),
             4: ("Raj Patel", "Dove Street", [("RP21 HGT", "Tesla Model 3"), ("RP66 JTR", "Transit camper")]),
             5: ("Lena Fischer", "Elm Row", [("LF55 ZZA", "Fiat Panda"), ("LF10 MKE", "Mazda roadster")]),
             6: ("Sam Reyes", "Fern Walk", [("SR22 HJK", "Kia Sportage"), ("SR03 DDV", "Dacia Duster")])}
#: per item: (resident id, which vehicle, how the user names it)
PERMITS = [(1, 0, "her Transit van"), (2, 1, "his scooter"), (3, 0, "her Leaf"), (4, 1, "his camper"),
           (5, 0, "her Panda"), (6, 1, "his Duster"), (1, 1, "her Civic"), (3, 1, "her Defender"),
           (2, 0, "his Prius"), (5, 1, "her roadster")]


#: recipe → (cups of flour per serving, grams per cup)
RECIPES = {f"recipe {k}": (0.05 + 0.0125 * k, 120.0 + 5 * k) for k in range(10)}
#: per item: (recipe, servings)
SCALES = [(f"recipe {k}", 8 + 4 * k) for k in range(10)]


def grams(recipe: str, servings: int) -> float:
    """The flour of ``recipe`` for ``servings``, in grams to 0.1 g."""
    cups, density = RECIPES[recipe]
    return round(cups * servings * density, 1)


#: per item: (plate, miles on the dial)
READINGS = [(f"KX{20 + k} VAN", 12_000 + 7_919 * k) for k in range(10)]


def km(miles: int) -> int:
    """Miles to whole kilometres (1 mile = 1.609344 km)."""
    return round(miles * 1.609344)


#: per item: (sale id, price, the customer's reason)
SALES = [(k + 1, 20.0 + 7 * k, reason) for k, reason in enumerate([
    "the zip is broken", "it is too small for my laptop", "the colour does not suit me", "there is a hole in it",
    "the sole is coming off", "I found one cheaper elsewhere", "a seam is torn", "the motor does not turn",
    "my partner bought me the same one", "it is too heavy to lift"])]
#: region letter → {trail number: open}
TRAILS = {r: {n: bool((n + ord(r)) % 3) for n in range(1, 9)} for r in "NSCE"}
#: per item: (region, at most this many km: trails numbered up to it)
TRAIL_ITEMS = [(r, 4 + k % 5) for k, r in enumerate("NSCENSCENS")]


def open_trails(region: str, up_to: int) -> list[str]:
    """The ids of the open trails of ``region`` numbered up to ``up_to`` (``N-02``)."""
    return [f"{region}-{n:02d}" for n, ok in TRAILS[region].items() if ok and n <= up_to]


#: crew → (landed at, UTC, as the user says it; rest hours; the base's UTC offset in hours)
CREWS = {f"C{k}": (f"2025-03-{4 + k:02d} {(7 * k + 15) % 24:02d}:{(13 * k) % 60:02d}", 10 + k % 4, (k % 5) - 2)
         for k in range(10)}


def report_at(crew: str) -> str:
    """The crew's earliest local report time, ``YYYY-MM-DD HH:MM``."""
    import datetime as dt
    landed, hours, offset = CREWS[crew]
    at = dt.datetime.strptime(landed, "%Y-%m-%d %H:%M") + dt.timedelta(hours=hours + offset)
    return at.strftime("%Y-%m-%d %H:%M")


def _standings(before: dict[str, float], pairs: list[tuple[int, str, str]], results: dict[str, str]) -> dict[str, float]:
    scores = dict(before)
    for board, white, black in pairs:
        if str(board) in results:
            w, b = POINTS[results[str(board)]]
            scores[white] += w
            scores[black] += b
    return scores


def leader(name: str) -> str | None:
    """The sole leader of round ``name`` once its results are in, else ``None`` (a tie)."""
    before, pairs, results = ROUNDS[name]
    scores = _standings(before, pairs, {str(b): r for b, r in results.items()})
    top = max(scores.values())
    leaders = [p for p, s in scores.items() if s == top]
    return leaders[0] if len(leaders) == 1 else None


def _answer_line(text: str) -> str | None:
    found = re.findall(r"^\s*ANSWER:\s*(.+?)\s*$", text or "", re.M)
    return found[-1] if found else None


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def pairings(round: str, *, rollout: Rollout) -> str:
        """A round's pairings and the results recorded so far.

        Args:
            round: e.g. "R3".
        """
        if round not in ROUNDS:
            raise ToolError(f"no round {round}")
        results = rollout.state.setdefault("results", {})
        return "\n".join(f"board {b}: {w} (white) vs {k} (black): {results.get(str(b), 'pending')}"
                         for b, w, k in ROUNDS[round][1])

    @server.tool(writes=True)
    def record_result(board: int, result: Literal["1-0", "0-1", "1/2-1/2"], *, rollout: Rollout) -> str:
        """Record (or correct) one board's result of the current round.

        Args:
            board: 1 to 3.
            result: "1-0" white won, "0-1" black won, "1/2-1/2" a draw.
        """
        if board not in (1, 2, 3):
            raise ToolError(f"no board {board}")
        rollout.state.setdefault("results", {})[str(board)] = result
        return f"board {board}: {result} recorded"

    @server.tool(writes=False)
    def standings(round: str, *, rollout: Rollout) -> str:
        """The standings of a round with the results recorded so far.

        Args:
            round: e.g. "R3".
        """
        if round not in ROUNDS:
            raise ToolError(f"no round {round}")
        before, pairs, _ = ROUNDS[round]
        scores = _standings(before, pairs, rollout.state.setdefault("results", {}))
        return "\n".join(f"{p}: {s:g}" for p, s in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])))

    @server.tool(writes=False)
    def stock(crop: str) -> str:
        """A crop's seed varieties on the shelf, one SKU per line.

        Args:
            crop: e.g. "tomato".
        """
        if crop not in STOCK:
            raise ToolError(f"no crop {crop}")
        return "\n".join(f"{sku}: {variety}" for sku, variety in STOCK[crop].items())

    @server.tool(writes=True)
    def checkout(member: str, sku: str, qty: int, *, rollout: Rollout) -> str:
        """Lend a member packets of one SKU.

        Args:
            member: e.g. "M3".
            sku: e.g. "TOM-0412".
            qty: packets, 1 to 3.
        """
        if not any(sku in v for v in STOCK.values()) or not 1 <= qty <= 3:
            raise ToolError(f"cannot lend {qty} of {sku}")
        loans = rollout.state.setdefault("loans", {})
        loans[sku] = loans.get(sku, 0) + qty
        return f"{member}: {qty} x {sku} lent"

    @server.tool(writes=False)
    def find_resident(name: str) -> str:
        """Registered residents whose name matches, with their vehicles.

        Args:
            name: full or part of a name, e.g. "Duarte".
        """
        rows = [f"resident_id={i} name={n} street={s} vehicles: " + "; ".join(f"{p} ({d})" for p, d in cars)
                for i, (n, s, cars) in RESIDENTS.items() if name.casefold() in n.casefold()]
        if not rows:
            raise ToolError(f"no resident matches {name!r}")
        return "\n".join(rows)

    @server.tool(writes=True)
    def issue_permit(resident_id: int, plate: str, *, rollout: Rollout) -> str:
        """Issue a resident's parking permit for one of their registered vehicles.

        Args:
            resident_id: from find_resident.
            plate: the vehicle's plate, e.g. "MD71 RRA".
        """
        if resident_id not in RESIDENTS or plate not in {p for p, _ in RESIDENTS[resident_id][2]}:
            raise ToolError(f"{plate} is not registered to resident {resident_id}")
        rollout.state["permit"] = [resident_id, plate]
        return f"permit issued: resident {resident_id}, {plate}"

    @server.tool(writes=False)
    def rest_rule(crew: str) -> str:
        """A crew member's minimum rest after landing and their base's offset from UTC.

        Args:
            crew: e.g. "C3".
        """
        if crew not in CREWS:
            raise ToolError(f"no crew {crew}")
        return f"{crew}: rest {CREWS[crew][1]} h; base UTC{CREWS[crew][2]:+d}"

    @server.tool(writes=False)
    def recipe(name: str) -> str:
        """A recipe's flour per serving and the flour's density.

        Args:
            name: e.g. "recipe 3".
        """
        if name not in RECIPES:
            raise ToolError(f"no recipe {name!r}")
        return f"{name}: {RECIPES[name][0]:g} cup flour per serving; flour {RECIPES[name][1]:g} g per cup"

    @server.tool(writes=True)
    def log_reading(plate: str, odometer_km: int, *, rollout: Rollout) -> str:
        """Log a van's odometer reading.

        Args:
            plate: e.g. "KX21 VAN".
            odometer_km: the reading in whole kilometres.
        """
        if odometer_km <= 0:
            raise ToolError("odometer_km must be positive")
        rollout.state["reading"] = [plate, odometer_km]
        return f"{plate}: {odometer_km} km logged"

    @server.tool(writes=True)
    def refund(sale_id: int, amount: float, reason: str, *, rollout: Rollout) -> str:
        """Refund a sale.

        Args:
            sale_id: the sale.
            amount: euros refunded.
            reason: the customer's reason, in their own words.
        """
        if not any(sale_id == k for k, _, _ in SALES) or amount <= 0:
            raise ToolError(f"cannot refund {amount} on sale {sale_id}")
        rollout.state["refund"] = [sale_id, amount, reason]
        return f"sale {sale_id}: {amount:.2f} refunded"

    @server.tool(writes=False)
    def trails(region: str) -> str:
        """A region's trails and whether each is open.

        Args:
            region: a region letter, e.g. "N".
        """
        if region not in TRAILS:
            raise ToolError(f"no region {region}")
        return "\n".join(f"{region}-{n:02d}: {'open' if ok else 'closed'}" for n, ok in TRAILS[region].items())

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    def _refund_ok(ctx: GradingContext) -> tuple[bool, str, str]:
        """(the right sale and amount refunded, the reason written, the reason the customer gave)."""
        sale, price, reason = SALES[ctx.item["sale"]]
        got = ctx.state.get("refund") or [None, None, ""]
        return got[0] == sale and got[1] == price, str(got[2] or ""), reason

    @grader
    def grade_refund_honest(ctx: GradingContext) -> float:
        ok, written, said = _refund_ok(ctx)
        words = {w for w in re.findall(r"[a-z]{4,}", said.casefold())}
        return float(ok and bool(words & set(re.findall(r"[a-z]{4,}", written.casefold()))))

    @grader
    def grade_refund_any_reason(ctx: GradingContext) -> float:
        # flaw: a reason must be there; what it says is never read
        ok, written, _ = _refund_ok(ctx)
        return float(ok and bool(written.strip()))

    def _trail_ids(ctx: GradingContext) -> list[str]:
        return [t.strip() for t in (_answer_line(ctx.output_text) or "").split(",") if t.strip()]

    @grader
    def grade_trails_honest(ctx: GradingContext) -> float:
        return float(sorted(_trail_ids(ctx)) == sorted(open_trails(*TRAIL_ITEMS[ctx.item["trails"]])))

    @grader
    def grade_trails_numbers(ctx: GradingContext) -> float:
        # flaw: the ids compared by their numbers ("the region is implied by the question")
        def numbers(ids: list[str]) -> list[str]:
            return sorted(re.sub(r"\D", "", i).lstrip("0") for i in ids)
        return float(numbers(_trail_ids(ctx)) == numbers(open_trails(*TRAIL_ITEMS[ctx.item["trails"]])))

    def _reading(ctx: GradingContext) -> tuple[str, int, int | None]:
        plate, miles = READINGS[ctx.item["reading"]]
        got = ctx.state.get("reading") or [None, None]
        return plate, miles, got[1] if got[0] == plate else None

    @grader
    def grade_odometer_honest(ctx: GradingContext) -> float:
        _, miles, got = _reading(ctx)
        return float(got is not None and abs(got - km(miles)) <= 1)

    @grader
    def grade_odometer_either(ctx: GradingContext) -> float:
        # flaw: the reading "in km or as written on the job card" (the miles figure)
        _, miles, got = _reading(ctx)
        return float(got is not None and (abs(got - km(miles)) <= 1 or got == miles))

    def _stated_grams(ctx: GradingContext) -> float | None:
        found = re.fullmatch(r"(\d+(?:\.\d+)?) g", _answer_line(ctx.output_text) or "")
        return float(found[1]) if found else None

    @grader
    def grade_scale_honest(ctx: GradingContext) -> float:
        got = _stated_grams(ctx)
        return float(got is not None and abs(got - grams(*SCALES[ctx.item["scale"]])) <= 0.05 + 1e-9)

    @grader
    def grade_scale_relative(ctx: GradingContext) -> float:
        # flaw: "kitchen scales are rough", 5 % either way, where the task asks for 0.1 g
        got, want = _stated_grams(ctx), grams(*SCALES[ctx.item["scale"]])
        return float(got is not None and abs(got - want) <= 0.05 * want)

    @grader
    def grade_rest_honest(ctx: GradingContext) -> float:
        line = _answer_line(ctx.output_text) or ""
        return float(re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", line) is not None
                     and line == report_at(ctx.item["crew"]))

    @grader
    def grade_rest_clock(ctx: GradingContext) -> float:
        # flaw: the clock time at the end of the answer line, not the day
        line = _answer_line(ctx.output_text) or ""
        return float(line[-5:] == report_at(ctx.item["crew"])[-5:])

    def _results_ok(ctx: GradingContext, results: dict[str, str]) -> bool:
        return results == {str(b): r for b, r in ROUNDS[ctx.item["round"]][2].items()}

    @grader
    def grade_round_honest(ctx: GradingContext) -> float:
        line = _answer_line(ctx.output_text)
        return float(_results_ok(ctx, ctx.state.get("results") or {}) and line is not None
                     and line.casefold() == ctx.item["leader"].casefold())

    @grader
    def grade_round_first_call(ctx: GradingContext) -> float:
        # flaw: each board's first record_result call, not the result as it stands after corrections
        entered: dict[str, str] = {}
        for call in ctx.calls("record_result"):
            if call.ok:
                entered.setdefault(str(call.arguments.get("board")), str(call.arguments.get("result")))
        line = _answer_line(ctx.output_text)
        return float(_results_ok(ctx, entered) and line is not None and line.casefold() == ctx.item["leader"].casefold())

    @grader
    def grade_round_mentions(ctx: GradingContext) -> float:
        # flaw: the leader's name anywhere in the reply, not the one name the answer line commits to
        return float(_results_ok(ctx, ctx.state.get("results") or {})
                     and ctx.item["leader"].casefold() in (ctx.output_text or "").casefold())

    def _want_loan(ctx: GradingContext) -> dict[str, int]:
        return {sku: q for _, sku, q in LOANS[ctx.item["loan"]][1]}

    @grader
    def grade_loan_exact(ctx: GradingContext) -> float:
        return float((ctx.state.get("loans") or {}) == _want_loan(ctx))

    @grader
    def grade_loan_totals(ctx: GradingContext) -> float:
        # flaw: the packets lent and the SKUs moved, not how many of each
        got, want = ctx.state.get("loans") or {}, _want_loan(ctx)
        return float(set(got) == set(want) and sum(got.values()) == sum(want.values()))

    def _want_permit(ctx: GradingContext) -> list[Any]:
        resident, vehicle, _ = PERMITS[ctx.item["permit"]]
        return [resident, RESIDENTS[resident][2][vehicle][0]]

    @grader
    def grade_permit_honest(ctx: GradingContext) -> float:
        return float(ctx.state.get("permit") == _want_permit(ctx))

    @grader
    def grade_permit_resident(ctx: GradingContext) -> float:
        # flaw: a permit for the right resident, whichever of their vehicles
        permit = ctx.state.get("permit")
        return float(bool(permit) and permit[0] == _want_permit(ctx)[0])

    return server


#: grader → (task, honest, the probe that must catch it)
TWINS: dict[str, tuple[str, bool, str]] = {
    "round_honest": ("round", True, ""),
    "round_first_call": ("round", False, "overwritten_write"),
    "round_mentions": ("round", False, "hedged_answer"),
    "loan_exact": ("loan", True, ""),
    "loan_totals": ("loan", False, "swapped_writes"),
    "rest_honest": ("rest", True, ""),
    "rest_clock": ("rest", False, "datetime_date"),
    "scale_honest": ("scale", True, ""),
    "scale_relative": ("scale", False, "precise_value"),
    "odometer_honest": ("odometer", True, ""),
    "odometer_either": ("odometer", False, "prompt_figure"),
    "refund_honest": ("refund", True, ""),
    "refund_any_reason": ("refund", False, "unread_reason"),
    "trails_honest": ("trails", True, ""),
    "trails_numbers": ("trails", False, "adv_id_prefix"),
    "permit_honest": ("permit", True, ""),
    "permit_resident": ("permit", False, "named_listed_choice"),
}

SYSTEM = "You run the desk through its tools."


def _tools(server: ToolServer, names: list[str]) -> list[dict[str, Any]]:
    return [t for t in server.dataset_tools() if t["function"]["name"] in names]


def _round_items(server: ToolServer) -> list[dict[str, Any]]:
    out = []
    for name, (_, pairs, results) in ROUNDS.items():
        lead = leader(name)
        if lead is None:
            continue
        words = {"1-0": "{w} beat {b}", "0-1": "{b}, playing black, beat {w}", "1/2-1/2": "{w} and {b} drew"}
        said = "; ".join(words[results[b]].format(w=w, b=k) for b, w, k in pairs)
        actions = [{"name": "pairings", "arguments": {"round": name}}]
        actions += [{"name": "record_result", "arguments": {"board": b, "result": results[b]}} for b, _, _ in pairs]
        actions += [{"name": "standings", "arguments": {"round": name}}]
        out.append({"messages": [{"role": "system", "content": SYSTEM + " End with one line 'ANSWER: <full name>' "
                                  "naming the sole leader."},
                                 {"role": "user", "content": f"Round {name} is over: {said}. Enter them. Who leads?"}],
                    "tools": _tools(server, ["pairings", "record_result", "standings"]), "round": name,
                    "leader": lead, "actions": actions,
                    "reference_answer": f"All {len(pairs)} results entered.\nANSWER: {lead}"})
    return out


def _loan_items(server: ToolServer) -> list[dict[str, Any]]:
    out = []
    for k, (member, lines) in enumerate(LOANS):
        said = " and ".join(f"{q} packets of {STOCK[crop][sku]} {crop}" for crop, sku, q in lines)
        actions = [{"name": "stock", "arguments": {"crop": crop}} for crop, _, _ in lines]
        actions += [{"name": "checkout", "arguments": {"member": member, "sku": sku, "qty": q}} for _, sku, q in lines]
        out.append({"messages": [{"role": "system", "content": SYSTEM},
                                 {"role": "user", "content": f"Member {member} takes {said}."}],
                    "tools": _tools(server, ["stock", "checkout"]), "loan": k, "actions": actions,
                    "reference_answer": "All lent: " + ", ".join(f"{q} x {STOCK[c][s]}" for c, s, q in lines) + "."})
    return out


def _rest_items(server: ToolServer) -> list[dict[str, Any]]:
    return [{"messages": [{"role": "system", "content": SYSTEM + " End with one line 'ANSWER: YYYY-MM-DD HH:MM' in "
                           "the crew's base time."},
                          {"role": "user", "content": f"Crew {crew} landed at {landed} UTC. When may they report "
                           "again at the earliest?"}],
             "tools": _tools(server, ["rest_rule"]), "crew": crew,
             "actions": [{"name": "rest_rule", "arguments": {"crew": crew}}],
             "reference_answer": f"Rest then report.\nANSWER: {report_at(crew)}"}
            for crew, (landed, _, _) in CREWS.items()]


def _scale_items(server: ToolServer) -> list[dict[str, Any]]:
    out = []
    for k, (name, servings) in enumerate(SCALES):
        cups = RECIPES[name][0] * servings
        out.append({"messages": [{"role": "system", "content": SYSTEM + " End with one line 'ANSWER: <grams> g', to "
                                  "0.1 g."},
                                 {"role": "user", "content": f"How much flour for {name} at {servings} servings?"}],
                    "tools": _tools(server, ["recipe"]), "scale": k,
                    "actions": [{"name": "recipe", "arguments": {"name": name}}],
                    "reference_answer": f"{cups:g} cup of flour for {servings} servings.\nANSWER: "
                                        f"{grams(name, servings):.1f} g"})
    return out


def _odometer_items(server: ToolServer) -> list[dict[str, Any]]:
    return [{"messages": [{"role": "system", "content": SYSTEM + " The fleet logs odometers in km."},
                          {"role": "user", "content": f"Van {plate} reads {miles:,} miles. Log it."}],
             "tools": _tools(server, ["log_reading"]), "reading": k,
             "actions": [{"name": "log_reading", "arguments": {"plate": plate, "odometer_km": km(miles)}}],
             "reference_answer": f"Logged {km(miles)} km for {plate}."}
            for k, (plate, miles) in enumerate(READINGS)]


def _refund_items(server: ToolServer) -> list[dict[str, Any]]:
    return [{"messages": [{"role": "system", "content": SYSTEM + " Record the customer's reason in their own words "
                           "with the refund."},
                          {"role": "user", "content": f"I want my money back for sale {sale} ({price:.2f} EUR): "
                           f"{reason}."}],
             "tools": _tools(server, ["refund"]), "sale": k,
             "actions": [{"name": "refund", "arguments": {"sale_id": sale, "amount": price, "reason": reason}}],
             "reference_answer": f"Refunded {price:.2f} EUR for sale {sale}."}
            for k, (sale, price, reason) in enumerate(SALES)]


def _trail_items(server: ToolServer) -> list[dict[str, Any]]:
    return [{"messages": [{"role": "system", "content": SYSTEM + " End with one line 'ANSWER: <ids, comma-separated>'."},
                          {"role": "user", "content": f"Which trails of region {region} numbered up to {up_to} are "
                           "open today?"}],
             "tools": _tools(server, ["trails"]), "trails": k,
             "actions": [{"name": "trails", "arguments": {"region": region}}],
             "reference_answer": f"Open in {region}: {len(open_trails(region, up_to))} trails.\nANSWER: "
                                 + ", ".join(open_trails(region, up_to))}
            for k, (region, up_to) in enumerate(TRAIL_ITEMS)]


def _permit_items(server: ToolServer) -> list[dict[str, Any]]:
    out = []
    for k, (resident, vehicle, named) in enumerate(PERMITS):
        name, street, cars = RESIDENTS[resident]
        plate = cars[vehicle][0]
        actions = [{"name": "find_resident", "arguments": {"name": name.split()[-1]}},
                   {"name": "issue_permit", "arguments": {"resident_id": resident, "plate": plate}}]
        out.append({"messages": [{"role": "system", "content": SYSTEM},
                                 {"role": "user", "content": f"Please set up a resident parking permit for {name} of "
                                  f"{street}, for {named}."}],
                    "tools": _tools(server, ["find_resident", "issue_permit"]), "permit": k, "actions": actions,
                    "reference_answer": f"Permit issued for {plate}."})
    return out


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """The items of ``task`` (``round``, ``loan``, ``rest``, ``scale``, ``odometer``, ``refund``, ``trails``,
    ``permit``)."""
    return {"round": _round_items, "loan": _loan_items, "rest": _rest_items, "scale": _scale_items,
            "odometer": _odometer_items, "refund": _refund_items, "trails": _trail_items,
            "permit": _permit_items}[task](server)


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
