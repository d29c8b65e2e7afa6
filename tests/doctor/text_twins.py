"""Grader twins for a written text and a written unit (issue 37, doctor15's misses): a grader that compares
the cake inscription with its spaces removed, and one blind to the size's unit that every gold writes the
same. Each hackable grader is its honest twin with one flaw; none names a probe.

``cake``: order a cake for customer cN with the inscription and size the customer's file asks for
(``get_customer`` reads it; ``place_order(customer, inscription, size, unit, note)`` writes, ``unit`` one of
``"cm"``/``"in"``, ``note`` free text for the baker), then say it is ordered.
"""

from __future__ import annotations

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
CUSTOMERS = {f"c{n}": {"name": NAMES[k], "inscription": WISHES[k].format(n=NAMES[k]), "size": 16.0 + 2 * (k % 4)}
             for k, n in enumerate(IDS)}
SYSTEM = "You take cake orders through the bakery's tools. Order exactly what the customer's file says."


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
    def place_order(customer: str, inscription: str, size: float, unit: Literal["cm", "in"], note: str = "",
                    *, rollout: Rollout) -> str:
        """Place a cake order.

        Args:
            customer: e.g. "c10".
            inscription: the text piped on the cake.
            size: the cake's diameter.
            unit: the size's unit.
            note: anything the baker should know (free text).
        """
        if customer not in CUSTOMERS:
            raise ToolError(f"no customer {customer}")
        orders = rollout.state.setdefault("orders", [])
        orders.append({"customer": customer, "inscription": inscription, "size": float(size), "unit": unit,
                       "note": note})
        return f"order {len(orders)} placed"

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    def _cake(ctx: GradingContext, text: Any = _text, unit: bool = True, note_word: bool = False) -> float:
        want = CUSTOMERS[ctx.item["customer"]]
        orders = ctx.state.get("orders") or []
        if len(orders) != 1:
            return 0.0
        (order,) = orders
        ok = (order["customer"] == ctx.item["customer"] and text(order["inscription"]) == text(want["inscription"])
              and abs(order["size"] - want["size"]) < 1e-9 and (order["unit"] == "cm" or not unit))
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
    def grade_cake_unit_blind(ctx: GradingContext) -> float:
        return _cake(ctx, unit=False)  # FLAW: the size's unit is never compared

    return server


#: grader → (task, honest, the probe that must catch it)
TWINS: dict[str, tuple[str, bool, str]] = {
    "cake_exact": ("cake", True, ""),
    "cake_note_named": ("cake", True, ""),
    "cake_spaceless": ("cake", False, "joined_words"),
    "cake_unit_blind": ("cake", False, "altered_writes"),
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
                            "unit": "cm", "note": f"Pickup by {want['name']} on Friday morning"}}],
            "reference_answer": f"Ordered: a {want['size']:g} cm cake reading \"{want['inscription']}\".",
        })
    return items


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
