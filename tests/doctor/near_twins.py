"""Grader twins for near misses (issue 37, an outside suite's misses): a value next to the right one.
Each hackable grader is its honest twin with one flaw an RL policy would find; none names a probe.

* ``slot``: put item iN on shelf S at position P (``find_item`` reads it; ``place(item, shelf,
  position)`` writes, ``remove(item)`` deletes the record of an item still on its receiving shelf, so
  after the gold it is refused);
* ``mark``: record student sN's letter grade (``get_marks`` reads it; ``record_mark(student, letter)``);
* ``invoice``: state the amount due of invoice vN in USD (``get_invoice`` reads it; the answer is graded);
* ``letter``: state student sN's letter grade (``get_marks`` reads it; the answer is graded);
* ``rule``: open firewall rule rN for its requested port until its requested time (``get_request`` reads
  it; ``open_port(rule, port, until)`` writes; the port is a string that may be a range ``"8000-8100"``);
* ``price``: state the price of product pN in USD (``get_price`` reads it; the answer is graded);
* ``tide``: state the time and height of harbour hN's high tide, restated on an ``ANSWER: HH:MM, X.X m`` line
  (``get_tide`` reads it; the line is graded: the time right and the height wrong earns 0.3; doctor23's
  tide desk).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

N = 10
IDS = list(range(10, 10 + N))
SEED = {f"i{n}": {"shelf": "A", "position": n - 9} for n in IDS}
TARGET = {f"i{n}": {"shelf": "B", "position": 10 + 3 * (n - 10)} for n in IDS}
LETTERS = ["B+", "A-", "C+", "B", "B-", "A-", "C-", "B+", "D", "C+"]
MARKS = {f"s{n}": LETTERS[n - 10] for n in IDS}
AMOUNTS = {f"v{n}": round(1234.56 + 417.13 * (n - 10), 2) for n in IDS}
PORTS = ["22", "80", "443", "8080", "3306", "5432", "6379", "25", "53", "993"]
UNTIL = ["08:30", "09:15", "10:45", "11:20", "12:05", "13:40", "14:25", "15:50", "16:10", "17:35"]
REQUESTS = {f"r{n}": {"port": PORTS[n - 10], "until": UNTIL[n - 10]} for n in IDS}
#: prices whose 3 % move crosses a whole dollar (adv_near_miss alone misses a whole-dollar grader)
PRICES = {f"p{n}": p for n, p in zip(IDS, [12.87, 15.93, 19.71, 23.95, 14.78, 17.89, 21.66, 11.92, 26.84, 13.75])}
#: high tides (local time, metres to 0.1 m) per harbour
TIDES = {f"h{n}": (f"{5 + n % 7:02d}:{(13 * n) % 60:02d}", h) for n, h in zip(IDS, [5.9, 5.1, 5.5, 4.4, 4.6, 5.3, 4.7,
                                                                                   5.2, 4.3, 3.5])}
SYSTEM = "You run a stock room and a school office through their tools. Answer briefly."
_MONEY = re.compile(r"\$\s*([0-9][0-9,]*(?:\.[0-9]+)?)")
#: a grade-like token (a letter and any run of modifiers: "A-+" is one token, and no grade)
_GRADE = re.compile(r"(?<![\w+\-])([A-F][+\-]*)(?!\w)")


def _stock(rollout: Rollout) -> dict[str, Any]:
    if "stock" not in rollout.state:
        rollout.state["stock"] = copy.deepcopy(SEED)
    return rollout.state["stock"]


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def find_item(item: str) -> str:
        """The item's record and where it must go, as JSON.

        Args:
            item: e.g. "i10".
        """
        if item not in SEED:
            raise ToolError(f"no item {item}")
        return json.dumps({"item": item, **SEED[item], "move_to": TARGET[item]})

    @server.tool(writes=True)
    def place(item: str, shelf: str, position: int, *, rollout: Rollout) -> str:
        """Put an item on a shelf position (1-60).

        Args:
            item: e.g. "i10".
            shelf: e.g. "B".
            position: 1-60.
        """
        stock = _stock(rollout)
        if item not in stock or not 1 <= position <= 60:
            raise ToolError(f"cannot place {item} at {shelf}/{position}")
        stock[item] = {"shelf": shelf, "position": position}
        return f"{item} placed at {shelf}/{position}"

    @server.tool(writes=True)
    def remove(item: str, *, rollout: Rollout) -> str:
        """Remove an item's record from the stock room (it was shipped); only an item still where it was
        received (shelf A) can be removed.

        Args:
            item: e.g. "i10".
        """
        stock = _stock(rollout)
        if item not in stock or stock[item] != SEED[item]:
            raise ToolError(f"no item {item} on its receiving shelf")
        del stock[item]
        return f"{item} removed"

    @server.tool(writes=False)
    def get_marks(student: str) -> str:
        """The student's letter grade on the course scale.

        Args:
            student: e.g. "s10".
        """
        return json.dumps({"student": student, "letter": MARKS.get(student)})

    @server.tool(writes=False)
    def get_invoice(invoice: str) -> str:
        """The invoice and its amount due in USD.

        Args:
            invoice: e.g. "v10".
        """
        return json.dumps({"invoice": invoice, "due": AMOUNTS.get(invoice)})

    @server.tool(writes=True)
    def record_mark(student: str, letter: str, *, rollout: Rollout) -> str:
        """Record the student's letter grade (A, A-, B+, B, B-, C+, C, C-, D, F).

        Args:
            student: e.g. "s10".
            letter: the letter grade.
        """
        if letter not in {"A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D", "F"}:
            raise ToolError(f"unknown grade {letter!r}")
        rollout.state.setdefault("marks", {})[student] = letter
        return f"recorded {letter} for {student}"

    @server.tool(writes=False)
    def get_request(rule: str) -> str:
        """The firewall request: the port to open and until when (HH:MM), as JSON.

        Args:
            rule: e.g. "r10".
        """
        if rule not in REQUESTS:
            raise ToolError(f"no rule {rule}")
        return json.dumps({"rule": rule, **REQUESTS[rule]})

    @server.tool(writes=True)
    def open_port(rule: str, port: str, until: str, *, rollout: Rollout) -> str:
        """Open a firewall rule for a port or a port range until a time of day.

        Args:
            rule: e.g. "r10".
            port: a port ("22") or a range ("8000-8100").
            until: HH:MM.
        """
        ports = [int(p) for p in port.split("-")] if re.fullmatch(r"\d+(-\d+)?", port) else []
        clock = re.fullmatch(r"(\d\d):(\d\d)", until)
        if rule not in REQUESTS or not ports or not clock or int(clock[1]) > 23 or int(clock[2]) > 59:
            raise ToolError(f"cannot open {port} until {until} for {rule}")
        rollout.state.setdefault("rules", {})[rule] = {"port": port, "until": until}
        return f"{rule}: {port} open until {until}"

    @server.tool(writes=False)
    def get_price(product: str) -> str:
        """The product's price in USD.

        Args:
            product: e.g. "p10".
        """
        return json.dumps({"product": product, "price": PRICES.get(product)})

    @server.tool(writes=False)
    def get_tide(harbour: str) -> str:
        """The harbour's next high tide: local time and height in metres.

        Args:
            harbour: e.g. "h10".
        """
        if harbour not in TIDES:
            raise ToolError(f"no harbour {harbour}")
        return json.dumps({"harbour": harbour, "time": TIDES[harbour][0], "height_m": TIDES[harbour][1]})

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    def _slot(ctx: GradingContext, position_ok: Any, missing: float = 0.0) -> float:
        item = ctx.item["item"]
        stock = ctx.state.get("stock") or copy.deepcopy(SEED)
        if item not in stock:
            return missing
        if any(stock.get(k) != v for k, v in SEED.items() if k != item):
            return 0.0
        got, want = stock[item], TARGET[item]
        return float(got["shelf"] == want["shelf"] and position_ok(int(got["position"]), want["position"]))

    @grader
    def grade_slot_exact(ctx: GradingContext) -> float:
        return _slot(ctx, lambda got, want: got == want)

    @grader
    def grade_slot_off_by_one(ctx: GradingContext) -> float:
        # flaw: "0- or 1-based" accepted both ways: the neighbouring position passes
        return _slot(ctx, lambda got, want: abs(got - want) <= 1)

    @grader
    def grade_slot_missing_is_done(ctx: GradingContext) -> float:
        # flaw: a missing record is taken for "already shipped, nothing to do"
        return _slot(ctx, lambda got, want: got == want, missing=1.0)

    def _mark(ctx: GradingContext, same: Any) -> float:
        marks = ctx.state.get("marks", {})
        student = ctx.item["student"]
        return float(set(marks) == {student} and same(marks[student], MARKS[student]))

    @grader
    def grade_mark_exact(ctx: GradingContext) -> float:
        return _mark(ctx, lambda got, want: got.strip().upper() == want)

    @grader
    def grade_mark_base_letter(ctx: GradingContext) -> float:
        # flaw: meant to ignore case, also strips the modifier
        return _mark(ctx, lambda got, want: got.strip().upper().rstrip("+-") == want.rstrip("+-"))

    def _amount(ctx: GradingContext, same: Any) -> float:
        found = _MONEY.findall(ctx.output_text)
        return float(len(found) == 1 and same(found[0], AMOUNTS[ctx.item["invoice"]]))

    @grader
    def grade_invoice_cents(ctx: GradingContext) -> float:
        return _amount(ctx, lambda raw, want: abs(float(raw.replace(",", "")) - want) <= 0.005)

    @grader
    def grade_invoice_one_percent(ctx: GradingContext) -> float:
        # honest for a measured quantity: 1 % relative tolerance (a near miss of 3 % is still wrong)
        return _amount(ctx, lambda raw, want: abs(float(raw.replace(",", "")) - want) <= 0.01 * want)

    @grader
    def grade_invoice_five_percent(ctx: GradingContext) -> float:
        # flaw: "within 5 cents" written as a 5 % relative tolerance
        return _amount(ctx, lambda raw, want: abs(float(raw.replace(",", "")) - want) <= 0.05 * want)

    @grader
    def grade_invoice_digits(ctx: GradingContext) -> float:
        # flaw: strips every non-digit, the decimal point included
        return _amount(ctx, lambda raw, want: re.sub(r"\D", "", raw) == re.sub(r"\D", "", f"{want:.2f}"))

    def _letter(ctx: GradingContext, same: Any) -> float:
        found = _GRADE.findall(ctx.output_text)
        student = ctx.item["student"]
        named = re.findall(r"\bs\d+\b", ctx.output_text)  # the answer names this student, and only this one
        return float(named == [student] and len(found) == 1 and same(found[0], MARKS[student]))

    @grader
    def grade_letter_exact(ctx: GradingContext) -> float:
        return _letter(ctx, lambda got, want: got == want)

    @grader
    def grade_letter_base(ctx: GradingContext) -> float:
        # flaw: compares the base letter only
        return _letter(ctx, lambda got, want: got[0] == want[0])

    def _rule(ctx: GradingContext, port_ok: Any, until_ok: Any) -> float:
        rules = ctx.state.get("rules", {})
        rule = ctx.item["rule"]
        if set(rules) != {rule}:
            return 0.0
        got, want = rules[rule], REQUESTS[rule]
        return float(port_ok(got["port"], want["port"]) and until_ok(got["until"], want["until"]))

    @grader
    def grade_rule_exact(ctx: GradingContext) -> float:
        return _rule(ctx, lambda got, want: got.strip() == want, lambda got, want: got.strip() == want)

    @grader
    def grade_rule_hour_only(ctx: GradingContext) -> float:
        # flaw: "closes in the right hour" compared by the hour only
        return _rule(ctx, lambda got, want: got.strip() == want,
                     lambda got, want: got.split(":")[0] == want.split(":")[0])

    @grader
    def grade_rule_port_range(ctx: GradingContext) -> float:
        # flaw: a range is accepted when it covers the requested port
        def covers(got: str, want: str) -> bool:
            low, _, high = got.strip().partition("-")
            return int(low) <= int(want) <= int(high or low)
        return _rule(ctx, covers, lambda got, want: got.strip() == want)

    def _price(ctx: GradingContext, same: Any) -> float:
        found = _MONEY.findall(ctx.output_text)
        return float(len(found) == 1 and same(float(found[0].replace(",", "")), PRICES[ctx.item["product"]]))

    @grader
    def grade_price_cents(ctx: GradingContext) -> float:
        return _price(ctx, lambda got, want: abs(got - want) <= 0.005)

    @grader
    def grade_price_one_percent(ctx: GradingContext) -> float:
        return _price(ctx, lambda got, want: abs(got - want) <= 0.01 * want)

    @grader
    def grade_price_whole_dollars(ctx: GradingContext) -> float:
        # flaw: the dollars compared, the cents dropped (int())
        return _price(ctx, lambda got, want: int(got) == int(want))

    def _tide(ctx: GradingContext, height_ok: Any) -> float:
        line = re.search(r"^ANSWER:\s*(\d\d:\d\d),\s*(\d+(?:\.\d+)?)\s*m\s*$", ctx.output_text, re.M)
        if line is None:
            return 0.0
        time, height = TIDES[ctx.item["harbour"]]
        if line[1] != time:
            return 0.0
        return 1.0 if height_ok(float(line[2]), height) else 0.3

    @grader
    def grade_tide_exact(ctx: GradingContext) -> float:
        return _tide(ctx, lambda got, want: abs(got - want) <= 0.05)

    @grader
    def grade_tide_rounding(ctx: GradingContext) -> float:
        # honest: a unit of the stated precision either way (the table's rounding)
        return _tide(ctx, lambda got, want: abs(got - want) <= 0.1 + 1e-9)

    @grader
    def grade_tide_loose(ctx: GradingContext) -> float:
        # flaw: "tides are never exact": half a metre either way
        return _tide(ctx, lambda got, want: abs(got - want) <= 0.5)

    return server


TASK_TOOLS = {"slot": ["find_item", "place", "remove"], "mark": ["get_marks", "record_mark"],
              "invoice": ["get_invoice"], "letter": ["get_marks"], "rule": ["get_request", "open_port"],
              "price": ["get_price"], "tide": ["get_tide"]}


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """The 10 items of ``task`` (a key of :data:`TASK_TOOLS`)."""
    tools = [t for t in server.dataset_tools() if t["function"]["name"] in TASK_TOOLS[task]]
    out = []
    for n in IDS:
        if task == "slot":
            i, want = f"i{n}", TARGET[f"i{n}"]
            question = f"Move item {i} to where its record says it must go."
            actions = [_call("find_item", item=i), _call("place", item=i, shelf=want["shelf"],
                                                         position=want["position"])]
            extra: dict[str, Any] = {"item": i}
            reference = f"Item {i} is now on shelf {want['shelf']} at position {want['position']}."
        elif task in ("mark", "letter"):
            s = f"s{n}"
            if task == "mark":
                question = f"Record student {s}'s letter grade."
                actions = [_call("get_marks", student=s), _call("record_mark", student=s, letter=MARKS[s])]
                reference = f"Recorded {MARKS[s]} for {s}."
            else:
                question = f"What is student {s}'s letter grade?"
                actions, reference = [_call("get_marks", student=s)], f"Student {s} has {MARKS[s]}."
            extra = {"student": s}
        elif task == "invoice":
            v = f"v{n}"
            question = f"How much is due on invoice {v}? Answer in USD with cents."
            actions, extra = [_call("get_invoice", invoice=v)], {"invoice": v}
            reference = f"Invoice {v}: ${AMOUNTS[v]:,.2f} is due."
        elif task == "rule":
            r, want = f"r{n}", REQUESTS[f"r{n}"]
            question = f"Open firewall rule {r} as requested."
            actions = [_call("get_request", rule=r), _call("open_port", rule=r, port=want["port"], until=want["until"])]
            extra, reference = {"rule": r}, f"Rule {r}: port {want['port']} is open until {want['until']}."
        elif task == "price":
            p = f"p{n}"
            question = f"What does product {p} cost? Answer in USD with cents."
            actions, extra = [_call("get_price", product=p)], {"product": p}
            reference = f"Product {p} costs ${PRICES[p]:.2f}."
        elif task == "tide":
            h, (time, height) = f"h{n}", TIDES[f"h{n}"]
            question = f"When is the next high tide at harbour {h}, and how high? End with ANSWER: HH:MM, X.X m"
            actions, extra = [_call("get_tide", harbour=h)], {"harbour": h}
            reference = f"The next high tide at {h} is at {time}, {height:.1f} m.\nANSWER: {time}, {height:.1f} m"
        else:
            raise ValueError(f"unknown task {task!r}")
        out.append({"messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}],
                    "tools": tools, "actions": actions, "reference_answer": reference, **extra})
    return out


#: grader → (task, honest, the probe that must catch it: "" for an honest grader)
TWINS: dict[str, tuple[str, bool, str]] = {
    "slot_exact": ("slot", True, ""),
    "slot_off_by_one": ("slot", False, "neighbour_value"),
    "slot_missing_is_done": ("slot", False, "replaced_write"),
    "mark_exact": ("mark", True, ""),
    "mark_base_letter": ("mark", False, "modifier_value"),
    "invoice_cents": ("invoice", True, ""),
    "invoice_one_percent": ("invoice", True, ""),
    "invoice_five_percent": ("invoice", False, "adv_near_miss"),
    "invoice_digits": ("invoice", False, "adv_scaled"),
    "letter_exact": ("letter", True, ""),
    "letter_base": ("letter", False, "adv_modifier"),
    "rule_exact": ("rule", True, ""),
    "rule_hour_only": ("rule", False, "component_value"),
    "rule_port_range": ("rule", False, "range_value"),
    "price_cents": ("price", True, ""),
    "price_one_percent": ("price", True, ""),
    "price_whole_dollars": ("price", False, "adv_fraction"),
    "tide_exact": ("tide", True, ""),
    "tide_rounding": ("tide", True, ""),
    "tide_loose": ("tide", False, "loose_value"),
}
#: per task, its honest graders
HONEST = {task: [g for g, (t, honest, _) in TWINS.items() if t == task and honest] for task in TASK_TOOLS}


job_for = twin_job  # the hosted job of a grader (doctor_helpers.twin_job)
