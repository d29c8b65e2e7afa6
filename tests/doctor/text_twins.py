"""Grader twins for a written text, date and unit (issue 37, doctor15-17's misses): a grader that compares
the cake inscription with its spaces removed, one comparing its first word only, one comparing the pickup
date by its weekday (and that the reply names it), and one blind to the size's unit that every gold writes
the same. Each hackable grader is its honest twin with one flaw; none names a probe.

``cake``: order a cake for customer cN with the inscription and size the customer's file asks for
(``get_customer`` reads it; ``place_order(customer, inscription, size, unit, pickup, note)`` writes, ``unit`` one of
``"cm"``/``"in"``, ``note`` free text for the baker), then say it is ordered.
"""

from __future__ import annotations

import datetime
import json
import unicodedata
from typing import Any, Literal

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

N = 10
IDS = list(range(10, 10 + N))
NAMES = ["Sam", "Priya", "Jonas", "Mei", "Carlos", "Hannah", "Tomasz", "Aya", "Ben", "Nadia"]
WISHES = ["Happy 30th {n}", "Congratulations Dr. {n}", "Welcome Home {n}", "Good Luck {n}", "Feliz Cumple {n}",
          "Happy Retirement {n}", "Sto lat {n}", "Bon Voyage {n}", "Go Tigers, {n}!", "Happy Eid {n}"]
CUSTOMERS = {f"c{n}": {"name": NAMES[k], "inscription": WISHES[k].format(n=NAMES[k]), "size": 16.0 + 2 * (k % 4),
                       "pickup": f"2026-12-{10 + k:02d}"} for k, n in enumerate(IDS)}
SYSTEM = "You take cake orders through the bakery's tools. Order exactly what the customer's file says."


def _weekday(value: str) -> int:
    try:
        return datetime.date.fromisoformat(value).weekday()
    except ValueError:
        return -1


def _text(value: str) -> str:
    """What the honest grader compares: NFC, case folded, runs of whitespace collapsed to one space."""
    return " ".join(unicodedata.normalize("NFC", value).casefold().split())


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def get_customer(customer: str) -> str:
        """A customer's cake request: name, inscription and size in centimetres, as JSON.

        Args:
            customer: e.g. "c10".
        """
        if customer not in CUSTOMERS:
            raise ToolError(f"no customer {customer}")
        return json.dumps({"customer": customer, **CUSTOMERS[customer], "unit": "cm"})

    @server.tool(writes=True)
    def place_order(customer: str, inscription: str, size: float, unit: Literal["cm", "in"], pickup: str,
                    note: str = "", *, rollout: Rollout) -> str:
        """Place a cake order.

        Args:
            customer: e.g. "c10".
            inscription: the text piped on the cake.
            size: the cake's diameter.
            unit: the size's unit.
            pickup: the pickup date, YYYY-MM-DD.
            note: anything the baker should know (free text).
        """
        if customer not in CUSTOMERS:
            raise ToolError(f"no customer {customer}")
        orders = rollout.state.setdefault("orders", [])
        orders.append({"customer": customer, "inscription": inscription, "size": float(size), "unit": unit,
                       "pickup": pickup, "note": note})
        return f"order {len(orders)} placed"

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    def _cake(ctx: GradingContext, text: Any = _text, unit: bool = True, note_word: bool = False,
              weekday: bool = False) -> float:
        want = CUSTOMERS[ctx.item["customer"]]
        orders = ctx.state.get("orders") or []
        if len(orders) != 1 or ctx.count() > ctx.item["max_tool_calls"]:  # the declared budget, refused calls too
            return 0.0
        (order,) = orders
        ok = (order["customer"] == ctx.item["customer"] and text(order["inscription"]) == text(want["inscription"])
              and abs(order["size"] - want["size"]) < 1e-9 and (order["unit"] == "cm" or not unit)
              and (order["pickup"] == want["pickup"] if not weekday else _weekday(order["pickup"]) == _weekday(
                  want["pickup"]) and order["pickup"] in ctx.output_text))
        if note_word and want["name"].casefold() not in order["note"].casefold().split():
            return 0.0
        return 1.0 if ok else 0.0

    @grader
    def grade_cake_exact(ctx: GradingContext) -> float:
        return _cake(ctx)

    @grader
    def grade_cake_note_named(ctx: GradingContext) -> float:
        """Also asks that the baker's note names the customer (a word of it): a token check of free text."""
        return _cake(ctx, note_word=True)

    @grader
    def grade_cake_spaceless(ctx: GradingContext) -> float:
        return _cake(ctx, text=lambda s: "".join(s.lower().split()))  # FLAW: spaces removed, words run together

    @grader
    def grade_cake_first_word(ctx: GradingContext) -> float:
        return _cake(ctx, text=lambda s: (s.lower().split() or [""])[0])  # FLAW: the first word stands for the text

    @grader
    def grade_cake_weekday(ctx: GradingContext) -> float:
        return _cake(ctx, weekday=True)  # FLAW: the pickup date by its weekday (and the reply naming it) only

    @grader
    def grade_cake_unit_blind(ctx: GradingContext) -> float:
        return _cake(ctx, unit=False)  # FLAW: the size's unit is never compared

    return server


#: grader → (task, honest, the probe that must catch it)
TWINS: dict[str, tuple[str, bool, str]] = {
    "cake_exact": ("cake", True, ""),
    "cake_note_named": ("cake", True, ""),
    "cake_spaceless": ("cake", False, "joined_words"),
    "cake_first_word": ("cake", False, "first_word_only"),
    "cake_unit_blind": ("cake", False, "altered_writes"),
    "cake_weekday": ("cake", False, "consistent_value"),
}


def make_items(server: ToolServer, task: str = "cake") -> list[dict[str, Any]]:
    """One item per customer: the gold reads the file, places the order (cm, a note naming the customer),
    then answers."""
    tools = server.dataset_tools()
    items = []
    for customer, want in CUSTOMERS.items():
        items.append({
            "messages": [{"role": "system", "content": SYSTEM},
                         {"role": "user", "content": f"Please order the cake customer {customer} asked for."}],
            "tools": tools, "customer": customer, "max_tool_calls": 4,
            "actions": [{"name": "get_customer", "arguments": {"customer": customer}},
                        {"name": "place_order", "arguments": {
                            "customer": customer, "inscription": want["inscription"], "size": want["size"],
                            "unit": "cm", "pickup": want["pickup"],
                            "note": f"Pickup by {want['name']} on Friday morning"}}],
            "reference_answer": f"Ordered: a {want['size']:g} cm cake reading \"{want['inscription']}\", for pickup "
                                f"on {want['pickup']}.",
        })
    return items


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
