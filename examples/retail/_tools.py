"""The 15 retail tools (plus ``get_order_status``) as pure functions of a view.

Semantics and error conditions follow ``docs/retail-domain.md``;
the implementation and the wording of messages are this project's own. Every
function takes a :class:`~examples.retail._db.RetailView` first, returns the
string the model sees, and raises :class:`RetailError` (a model-visible error,
not a server failure) when a precondition fails. Writes go through
``view.writable`` so only the touched records are copied into the rollout's
overlay. Money is rounded to cents after every change.
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
import math
import operator
from collections import Counter
from collections.abc import Callable
from typing import Any

from ._db import RetailView

__all__ = ["READ_TOOLS", "TOOLS", "WRITE_TOOLS", "RetailError", "call_tool"]

CANCEL_REASONS = ("no longer needed", "ordered by mistake")


class RetailError(Exception):
    """A failed precondition of a retail tool; its message is shown to the model."""


def _dump(record: Any) -> str:
    return json.dumps(record)


def _cents(x: float) -> float:
    return round(x + 0.0, 2)


def _order(view: RetailView, order_id: str) -> dict[str, Any]:
    order = view.get("orders", order_id)
    if order is None:
        raise RetailError("Order not found")
    return order


def _user(view: RetailView, user_id: str) -> dict[str, Any]:
    user = view.get("users", user_id)
    if user is None:
        raise RetailError("User not found")
    return user


def _user_method(view: RetailView, user_id: str, method_id: str) -> dict[str, Any]:
    method = _user(view, user_id)["payment_methods"].get(method_id)
    if method is None:
        raise RetailError("Payment method not found")
    return method


def _move_gift_balance(view: RetailView, user_id: str, method_id: str, delta: float) -> None:
    """Add ``delta`` dollars to a gift card's balance (no-op for other sources)."""
    if view.get("users", user_id)["payment_methods"][method_id]["source"] != "gift_card":
        return
    method = view.writable("users", user_id)["payment_methods"][method_id]
    method["balance"] = _cents(method["balance"] + delta)


def _check_items_present(order: dict[str, Any], item_ids: list[str]) -> None:
    have = Counter(line["item_id"] for line in order["items"])
    for item_id, count in Counter(item_ids).items():
        if have[item_id] < count:
            raise RetailError(f"Item {item_id} not found in the order")


def _price_difference(view: RetailView, order: dict[str, Any], item_ids: list[str],
                      new_item_ids: list[str], *, must_differ: bool) -> float:
    """Sum of (new price - old price) over the pairs; validates each new variant."""
    if len(item_ids) != len(new_item_ids):
        raise RetailError("The number of items to be exchanged should match")
    _check_items_present(order, item_ids)
    lines = {line["item_id"]: line for line in order["items"]}
    diff = 0.0
    for old_id, new_id in zip(item_ids, new_item_ids):
        if must_differ and old_id == new_id:
            raise RetailError("The new item id should be different from the old item id")
        product = view.get("products", lines[old_id]["product_id"])
        variant = product["variants"].get(new_id) if product else None
        if variant is None or not variant["available"]:
            raise RetailError(f"New item {new_id} not found or not available")
        diff += variant["price"] - lines[old_id]["price"]
    return _cents(diff)


def _check_covers(view: RetailView, user_id: str, method_id: str, amount: float) -> None:
    method = _user_method(view, user_id, method_id)
    if method["source"] == "gift_card" and amount > 0 and method["balance"] < amount:
        raise RetailError("Insufficient gift card balance to pay for the price difference")


# ---- read tools -------------------------------------------------------------

def find_user_id_by_email(view: RetailView, email: str) -> str:
    for user in view.values("users"):
        if user["email"].lower() == email.lower():
            return user["user_id"]
    raise RetailError("User not found")


def find_user_id_by_name_zip(view: RetailView, first_name: str, last_name: str, zip: str) -> str:
    for user in view.values("users"):
        name = user["name"]
        if (name["first_name"].lower() == first_name.lower()
                and name["last_name"].lower() == last_name.lower()
                and user["address"]["zip"] == zip):
            return user["user_id"]
    raise RetailError("User not found")


def get_user_details(view: RetailView, user_id: str) -> str:
    return _dump(_user(view, user_id))


def get_order_details(view: RetailView, order_id: str) -> str:
    return _dump(_order(view, order_id))


def get_order_status(view: RetailView, order_id: str) -> str:
    return _order(view, order_id)["status"]


def get_product_details(view: RetailView, product_id: str) -> str:
    product = view.get("products", product_id)
    if product is None:
        raise RetailError("Product not found")
    return _dump(product)


def get_item_details(view: RetailView, item_id: str) -> str:
    product_id = view.base.item_to_product.get(item_id)
    if product_id is None:
        raise RetailError("Item not found")
    return _dump(view.get("products", product_id)["variants"][item_id])


def list_all_product_types(view: RetailView) -> str:
    names = {p["name"]: p["product_id"] for p in view.values("products")}
    return json.dumps(dict(sorted(names.items())))


_OPS: dict[type, Callable[..., float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.UAdd: operator.pos, ast.USub: operator.neg,
}


def _eval(node: ast.AST) -> float:
    """Evaluate in floats, never in arbitrary-precision ints (a product of huge
    literals would cost seconds); overflow shows as ``inf`` or ``OverflowError``."""
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.left), _eval(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.operand))
    raise RetailError("Invalid expression")


def calculate(view: RetailView, expression: str) -> str:
    if not expression.strip() or any(c not in "0123456789+-*/(). " for c in expression):
        raise RetailError("Invalid characters in expression")
    try:
        value = _eval(ast.parse(expression, mode="eval"))
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        # ValueError: a literal over Python's int-digit limit; RecursionError /
        # MemoryError: thousands of chained operators or nested parentheses
        raise RetailError("Invalid expression") from exc
    except ZeroDivisionError as exc:
        raise RetailError("Division by zero") from exc
    except OverflowError as exc:  # a literal too large for a float
        raise RetailError("Result out of range") from exc
    if not math.isfinite(value):
        raise RetailError("Result out of range")
    return str(round(value, 2))


def transfer_to_human_agents(view: RetailView, summary: str) -> str:
    return "Transfer successful"


# ---- write tools ------------------------------------------------------------

def cancel_pending_order(view: RetailView, order_id: str, reason: str) -> str:
    order = _order(view, order_id)
    if order["status"] != "pending":
        raise RetailError("Non-pending order cannot be cancelled")
    if reason not in CANCEL_REASONS:
        raise RetailError("Invalid reason: must be 'no longer needed' or 'ordered by mistake'")
    order = view.writable("orders", order_id)
    for entry in [e for e in order["payment_history"] if e["transaction_type"] == "payment"]:
        order["payment_history"].append({"transaction_type": "refund", "amount": entry["amount"],
                                         "payment_method_id": entry["payment_method_id"]})
        _move_gift_balance(view, order["user_id"], entry["payment_method_id"], entry["amount"])
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    return _dump(order)


def _address(address1: str, address2: str, city: str, state: str, country: str, zip: str) -> dict:
    return {"address1": address1, "address2": address2, "city": city,
            "country": country, "state": state, "zip": zip}


def modify_pending_order_address(view: RetailView, order_id: str, address1: str, address2: str,
                                 city: str, state: str, country: str, zip: str) -> str:
    if "pending" not in _order(view, order_id)["status"]:
        raise RetailError("Non-pending order cannot be modified")
    order = view.writable("orders", order_id)
    order["address"] = _address(address1, address2, city, state, country, zip)
    return _dump(order)


def modify_pending_order_payment(view: RetailView, order_id: str, payment_method_id: str) -> str:
    order = _order(view, order_id)
    if "pending" not in order["status"]:
        raise RetailError("Non-pending order cannot be modified")
    method = _user_method(view, order["user_id"], payment_method_id)
    history = order["payment_history"]
    if len(history) != 1 or history[0]["transaction_type"] != "payment":
        raise RetailError("There should be exactly one payment for a pending order")
    old_id, amount = history[0]["payment_method_id"], history[0]["amount"]
    if old_id == payment_method_id:
        raise RetailError("The new payment method should be different from the current one")
    if method["source"] == "gift_card" and method["balance"] < amount:
        raise RetailError("Insufficient gift card balance to pay for the order")
    order = view.writable("orders", order_id)
    order["payment_history"] += [
        {"transaction_type": "payment", "amount": amount, "payment_method_id": payment_method_id},
        {"transaction_type": "refund", "amount": amount, "payment_method_id": old_id},
    ]
    _move_gift_balance(view, order["user_id"], payment_method_id, -amount)
    _move_gift_balance(view, order["user_id"], old_id, amount)
    return _dump(order)


def modify_pending_order_items(view: RetailView, order_id: str, item_ids: list[str],
                               new_item_ids: list[str], payment_method_id: str) -> str:
    order = _order(view, order_id)
    if order["status"] != "pending":
        raise RetailError("Non-pending order cannot be modified")
    diff = _price_difference(view, order, item_ids, new_item_ids, must_differ=True)
    _check_covers(view, order["user_id"], payment_method_id, diff)
    order = view.writable("orders", order_id)
    order["payment_history"].append({
        "transaction_type": "payment" if diff > 0 else "refund",
        "amount": abs(diff), "payment_method_id": payment_method_id})
    _move_gift_balance(view, order["user_id"], payment_method_id, -diff)
    replaced: set[int] = set()
    for old_id, new_id in zip(item_ids, new_item_ids):
        index = next(i for i, line in enumerate(order["items"])
                     if line["item_id"] == old_id and i not in replaced)
        replaced.add(index)
        line = order["items"][index]
        variant = view.get("products", line["product_id"])["variants"][new_id]
        line.update(item_id=new_id, price=variant["price"], options=copy_options(variant))
    order["status"] = "pending (item modified)"
    return _dump(order)


def copy_options(variant: dict[str, Any]) -> dict[str, Any]:
    """A fresh copy of a variant's options (so no overlay aliases the base)."""
    return dict(variant["options"])


def modify_user_address(view: RetailView, user_id: str, address1: str, address2: str,
                        city: str, state: str, country: str, zip: str) -> str:
    _user(view, user_id)
    user = view.writable("users", user_id)
    user["address"] = _address(address1, address2, city, state, country, zip)
    return _dump(user)


def return_delivered_order_items(view: RetailView, order_id: str, item_ids: list[str],
                                 payment_method_id: str) -> str:
    order = _order(view, order_id)
    if order["status"] != "delivered":
        raise RetailError("Non-delivered order cannot be returned")
    method = _user(view, order["user_id"])["payment_methods"].get(payment_method_id)
    original = order["payment_history"][0]["payment_method_id"]
    if payment_method_id != original and (method is None or method["source"] != "gift_card"):
        raise RetailError("Payment method should be the original payment method or a gift card")
    _check_items_present(order, item_ids)
    order = view.writable("orders", order_id)
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_payment_method_id"] = payment_method_id
    return _dump(order)


def exchange_delivered_order_items(view: RetailView, order_id: str, item_ids: list[str],
                                   new_item_ids: list[str], payment_method_id: str) -> str:
    order = _order(view, order_id)
    if order["status"] != "delivered":
        raise RetailError("Non-delivered order cannot be exchanged")
    diff = _price_difference(view, order, item_ids, new_item_ids, must_differ=False)
    _check_covers(view, order["user_id"], payment_method_id, diff)
    order = view.writable("orders", order_id)
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = diff
    return _dump(order)


READ_TOOLS: tuple[str, ...] = (
    "calculate", "find_user_id_by_email", "find_user_id_by_name_zip", "get_item_details",
    "get_order_details", "get_product_details", "get_user_details", "list_all_product_types",
    "transfer_to_human_agents",
)
WRITE_TOOLS: tuple[str, ...] = (
    "cancel_pending_order", "exchange_delivered_order_items", "modify_pending_order_address",
    "modify_pending_order_items", "modify_pending_order_payment", "modify_user_address",
    "return_delivered_order_items",
)
TOOLS: dict[str, Callable[..., str]] = {
    name: globals()[name] for name in (*READ_TOOLS, *WRITE_TOOLS, "get_order_status")
}


@functools.cache
def _signature(name: str) -> inspect.Signature:
    """The signature of tool ``name``, computed once (``call_tool`` runs per tool call)."""
    return inspect.signature(TOOLS[name])


def call_tool(view: RetailView, name: str, arguments: dict[str, Any]) -> str:
    """Run tool ``name`` with keyword ``arguments`` on ``view``.

    Returns:
        The output string shown to the model.

    Raises:
        RetailError: unknown tool, bad arguments or a failed precondition.
    """
    func = TOOLS.get(name)
    if func is None:
        raise RetailError(f"Unknown tool {name!r}")
    if not isinstance(arguments, dict):
        raise RetailError(f"Arguments for {name} must be a JSON object")
    signature = _signature(name)
    try:
        signature.bind(view, **arguments)
    except TypeError as exc:
        raise RetailError(f"Bad arguments for {name}: {exc}") from exc
    for key, value in arguments.items():
        kind = signature.parameters[key].annotation
        ok = (isinstance(value, str) if kind == "str" else
              isinstance(value, list) and all(isinstance(v, str) for v in value))
        if not ok:
            raise RetailError(f"Bad arguments for {name}: {key} must be {kind}")
    return func(view, **arguments)
