"""The 16 retail tools as SQL over a DB-API connection (``rollout.db``).

What a service's own data-access code looks like: each function takes a
connection, reads and writes rows with SQL, checks the same preconditions as
the in-memory tools (``examples/retail/_tools.py``, rules from
``docs/retail-domain.md``) with the same messages, and returns the same
JSON. ``calculate`` and ``transfer_to_human_agents`` touch no data: they are
the in-memory functions themselves. Money is rounded to cents after every
change, in Python, exactly as the in-memory tools do.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from .. import _tools as memory
from .._tools import CANCEL_REASONS, RetailError
from ._schema import Sql, order_record, product_record, user_record, variant_record

__all__ = ["SQL_TOOLS"]

_ADDRESS_SET = "address1 = ?, address2 = ?, city = ?, state = ?, country = ?, zip = ?"


def _cents(x: float) -> float:
    return round(x + 0.0, 2)


def _order_row(db: Sql, order_id: str) -> tuple[str, str]:
    """``(status, user_id)`` of the order. Raises RetailError("Order not found")."""
    row = db.one("SELECT status, user_id FROM orders WHERE order_id = ?", (order_id,))
    if row is None:
        raise RetailError("Order not found")
    return row[0], row[1]


def _method(db: Sql, user_id: str, method_id: str) -> tuple[str, float | None] | None:
    """``(source, balance)`` of one of the user's payment methods, or ``None``."""
    return db.one("SELECT source, balance FROM payment_methods WHERE user_id = ? AND id = ?", (user_id, method_id))


def _user_method(db: Sql, user_id: str, method_id: str) -> tuple[str, float | None]:
    if db.one("SELECT 1 FROM users WHERE user_id = ?", (user_id,)) is None:
        raise RetailError("User not found")
    method = _method(db, user_id, method_id)
    if method is None:
        raise RetailError("Payment method not found")
    return method


def _move_gift_balance(db: Sql, user_id: str, method_id: str, delta: float) -> None:
    source, balance = _method(db, user_id, method_id)  # type: ignore[misc]
    if source != "gift_card":
        return
    db.run("UPDATE payment_methods SET balance = ? WHERE user_id = ? AND id = ?",
           (_cents(balance + delta), user_id, method_id))


def _history(db: Sql, order_id: str) -> list[tuple[str, float, str]]:
    return db.all("SELECT transaction_type, amount, payment_method_id FROM payment_history WHERE order_id = ? "
                  "ORDER BY line", (order_id,))


def _append_payment(db: Sql, order_id: str, kind: str, amount: float, method_id: str) -> None:
    (line,) = db.one("SELECT count(*) FROM payment_history WHERE order_id = ?", (order_id,))
    db.run("INSERT INTO payment_history VALUES (?, ?, ?, ?, ?)", (order_id, line, kind, amount, method_id))


def _lines(db: Sql, order_id: str) -> list[tuple[int, str, str, float]]:
    """``(line, item_id, product_id, price)`` of the order's items, in order."""
    return db.all("SELECT line, item_id, product_id, price FROM order_items WHERE order_id = ? ORDER BY line",
                  (order_id,))


def _check_items_present(lines: list[tuple[int, str, str, float]], item_ids: list[str]) -> None:
    have = Counter(line[1] for line in lines)
    for item_id, count in Counter(item_ids).items():
        if have[item_id] < count:
            raise RetailError(f"Item {item_id} not found in the order")


def _price_difference(db: Sql, lines: list[tuple[int, str, str, float]], item_ids: list[str],
                      new_item_ids: list[str], *, must_differ: bool) -> float:
    if len(item_ids) != len(new_item_ids):
        raise RetailError("The number of items to be exchanged should match")
    _check_items_present(lines, item_ids)
    by_item = {line[1]: line for line in lines}
    diff = 0.0
    for old_id, new_id in zip(item_ids, new_item_ids):
        if must_differ and old_id == new_id:
            raise RetailError("The new item id should be different from the old item id")
        variant = db.one("SELECT available, price FROM variants WHERE item_id = ? AND product_id = ?",
                         (new_id, by_item[old_id][2]))
        if variant is None or not variant[0]:
            raise RetailError(f"New item {new_id} not found or not available")
        diff += variant[1] - by_item[old_id][3]
    return _cents(diff)


def _check_covers(db: Sql, user_id: str, method_id: str, amount: float) -> None:
    source, balance = _user_method(db, user_id, method_id)
    if source == "gift_card" and amount > 0 and balance < amount:  # type: ignore[operator]
        raise RetailError("Insufficient gift card balance to pay for the price difference")


def _order_json(db: Sql, order_id: str) -> str:
    return json.dumps(order_record(db, order_id))


# ---- read tools -------------------------------------------------------------

def find_user_id_by_email(db: Sql, email: str) -> str:
    row = db.one("SELECT user_id FROM users WHERE lower(email) = lower(?) ORDER BY position LIMIT 1", (email,))
    if row is None:
        raise RetailError("User not found")
    return str(row[0])


def find_user_id_by_name_zip(db: Sql, first_name: str, last_name: str, zip: str) -> str:
    row = db.one("SELECT user_id FROM users WHERE lower(first_name) = lower(?) AND lower(last_name) = lower(?) "
                 "AND zip = ? ORDER BY position LIMIT 1", (first_name, last_name, zip))
    if row is None:
        raise RetailError("User not found")
    return str(row[0])


def get_user_details(db: Sql, user_id: str) -> str:
    user = user_record(db, user_id)
    if user is None:
        raise RetailError("User not found")
    return json.dumps(user)


def get_order_details(db: Sql, order_id: str) -> str:
    _order_row(db, order_id)
    return _order_json(db, order_id)


def get_order_status(db: Sql, order_id: str) -> str:
    return _order_row(db, order_id)[0]


def get_product_details(db: Sql, product_id: str) -> str:
    product = product_record(db, product_id)
    if product is None:
        raise RetailError("Product not found")
    return json.dumps(product)


def get_item_details(db: Sql, item_id: str) -> str:
    row = db.one("SELECT item_id, options, available, price FROM variants WHERE item_id = ?", (item_id,))
    if row is None:
        raise RetailError("Item not found")
    return json.dumps(variant_record(row))


def list_all_product_types(db: Sql) -> str:
    names = {name: pid for name, pid in db.all("SELECT name, product_id FROM products ORDER BY position")}
    return json.dumps(dict(sorted(names.items())))


def calculate(db: Sql, expression: str) -> str:
    return memory.calculate(None, expression)  # type: ignore[arg-type]  # no data involved


def transfer_to_human_agents(db: Sql, summary: str) -> str:
    return memory.transfer_to_human_agents(None, summary)  # type: ignore[arg-type]


# ---- write tools ------------------------------------------------------------

def cancel_pending_order(db: Sql, order_id: str, reason: str) -> str:
    status, user_id = _order_row(db, order_id)
    if status != "pending":
        raise RetailError("Non-pending order cannot be cancelled")
    if reason not in CANCEL_REASONS:
        raise RetailError("Invalid reason: must be 'no longer needed' or 'ordered by mistake'")
    for kind, amount, method_id in _history(db, order_id):
        if kind == "payment":
            _append_payment(db, order_id, "refund", amount, method_id)
            _move_gift_balance(db, user_id, method_id, amount)
    db.run("UPDATE orders SET status = 'cancelled', cancel_reason = ? WHERE order_id = ?", (reason, order_id))
    return _order_json(db, order_id)


def modify_pending_order_address(db: Sql, order_id: str, address1: str, address2: str, city: str, state: str,
                                 country: str, zip: str) -> str:
    if "pending" not in _order_row(db, order_id)[0]:
        raise RetailError("Non-pending order cannot be modified")
    db.run(f"UPDATE orders SET {_ADDRESS_SET} WHERE order_id = ?",
           (address1, address2, city, state, country, zip, order_id))
    return _order_json(db, order_id)


def modify_pending_order_payment(db: Sql, order_id: str, payment_method_id: str) -> str:
    status, user_id = _order_row(db, order_id)
    if "pending" not in status:
        raise RetailError("Non-pending order cannot be modified")
    source, balance = _user_method(db, user_id, payment_method_id)
    history = _history(db, order_id)
    if len(history) != 1 or history[0][0] != "payment":
        raise RetailError("There should be exactly one payment for a pending order")
    amount, old_id = history[0][1], history[0][2]
    if old_id == payment_method_id:
        raise RetailError("The new payment method should be different from the current one")
    if source == "gift_card" and balance < amount:  # type: ignore[operator]
        raise RetailError("Insufficient gift card balance to pay for the order")
    _append_payment(db, order_id, "payment", amount, payment_method_id)
    _append_payment(db, order_id, "refund", amount, old_id)
    _move_gift_balance(db, user_id, payment_method_id, -amount)
    _move_gift_balance(db, user_id, old_id, amount)
    return _order_json(db, order_id)


def modify_pending_order_items(db: Sql, order_id: str, item_ids: list[str], new_item_ids: list[str],
                               payment_method_id: str) -> str:
    status, user_id = _order_row(db, order_id)
    if status != "pending":
        raise RetailError("Non-pending order cannot be modified")
    lines = _lines(db, order_id)
    diff = _price_difference(db, lines, item_ids, new_item_ids, must_differ=True)
    _check_covers(db, user_id, payment_method_id, diff)
    _append_payment(db, order_id, "payment" if diff > 0 else "refund", abs(diff), payment_method_id)
    _move_gift_balance(db, user_id, payment_method_id, -diff)
    replaced: set[int] = set()
    for old_id, new_id in zip(item_ids, new_item_ids):
        line = next(x for x in lines if x[1] == old_id and x[0] not in replaced)
        replaced.add(line[0])
        options, price = db.one("SELECT options, price FROM variants WHERE item_id = ?", (new_id,))
        db.run("UPDATE order_items SET item_id = ?, price = ?, options = ? WHERE order_id = ? AND line = ?",
               (new_id, price, options, order_id, line[0]))
    db.run("UPDATE orders SET status = 'pending (item modified)' WHERE order_id = ?", (order_id,))
    return _order_json(db, order_id)


def modify_user_address(db: Sql, user_id: str, address1: str, address2: str, city: str, state: str,
                        country: str, zip: str) -> str:
    if db.one("SELECT 1 FROM users WHERE user_id = ?", (user_id,)) is None:
        raise RetailError("User not found")
    db.run(f"UPDATE users SET {_ADDRESS_SET} WHERE user_id = ?", (address1, address2, city, state, country, zip, user_id))
    return json.dumps(user_record(db, user_id))


def return_delivered_order_items(db: Sql, order_id: str, item_ids: list[str], payment_method_id: str) -> str:
    status, user_id = _order_row(db, order_id)
    if status != "delivered":
        raise RetailError("Non-delivered order cannot be returned")
    if db.one("SELECT 1 FROM users WHERE user_id = ?", (user_id,)) is None:
        raise RetailError("User not found")
    method = _method(db, user_id, payment_method_id)
    original = _history(db, order_id)[0][2]
    if payment_method_id != original and (method is None or method[0] != "gift_card"):
        raise RetailError("Payment method should be the original payment method or a gift card")
    _check_items_present(_lines(db, order_id), item_ids)
    db.run("UPDATE orders SET status = 'return requested', return_items = ?, return_payment_method_id = ? "
           "WHERE order_id = ?", (json.dumps(sorted(item_ids)), payment_method_id, order_id))
    return _order_json(db, order_id)


def exchange_delivered_order_items(db: Sql, order_id: str, item_ids: list[str], new_item_ids: list[str],
                                   payment_method_id: str) -> str:
    status, user_id = _order_row(db, order_id)
    if status != "delivered":
        raise RetailError("Non-delivered order cannot be exchanged")
    diff = _price_difference(db, _lines(db, order_id), item_ids, new_item_ids, must_differ=False)
    _check_covers(db, user_id, payment_method_id, diff)
    db.run("UPDATE orders SET status = 'exchange requested', exchange_items = ?, exchange_new_items = ?, "
           "exchange_payment_method_id = ?, exchange_price_difference = ? WHERE order_id = ?",
           (json.dumps(sorted(item_ids)), json.dumps(sorted(new_item_ids)), payment_method_id, diff, order_id))
    return _order_json(db, order_id)


SQL_TOOLS: dict[str, Callable[..., str]] = {name: globals()[name] for name in memory.TOOLS}


def call_sql_tool(conn: Any, name: str, arguments: dict[str, Any]) -> str:
    """Run SQL tool ``name`` with keyword ``arguments`` on connection ``conn``.

    Raises:
        RetailError: unknown tool or a failed precondition.
    """
    func = SQL_TOOLS.get(name)
    if func is None:
        raise RetailError(f"Unknown tool {name!r}")
    return func(Sql(conn), **arguments)
