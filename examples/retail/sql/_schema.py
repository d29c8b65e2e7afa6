"""The τ²-retail database as relational tables: schema, loader, and records read back.

The same DDL runs on SQLite and PostgreSQL. JSON-valued leaves (variant
options, tracking ids, item lists) are kept as JSON text; everything the tools
filter or change is a column. ``position``/``line`` columns keep the order of
the original JSON so a record read back (:func:`user_record`,
:func:`order_record`, :func:`product_record`) is the same JSON, key for key,
as the in-memory example's (tested): the two backends answer the model alike.

Source: ``examples/retail/data/db.json.gz`` (τ²-bench retail domain, MIT,
Sierra Research; see ``data/LICENSE``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["DDL", "Sql", "load", "order_record", "product_record", "setup", "user_record", "variant_record"]

DDL = """
CREATE TABLE products (product_id TEXT PRIMARY KEY, name TEXT NOT NULL, position INTEGER NOT NULL);
CREATE TABLE variants (item_id TEXT PRIMARY KEY, product_id TEXT NOT NULL REFERENCES products (product_id),
    position INTEGER NOT NULL, options TEXT NOT NULL, available BOOLEAN NOT NULL, price DOUBLE PRECISION NOT NULL);
CREATE TABLE users (user_id TEXT PRIMARY KEY, position INTEGER NOT NULL, first_name TEXT NOT NULL,
    last_name TEXT NOT NULL, address1 TEXT NOT NULL, address2 TEXT NOT NULL, city TEXT NOT NULL,
    country TEXT NOT NULL, state TEXT NOT NULL, zip TEXT NOT NULL, email TEXT NOT NULL);
CREATE INDEX users_email ON users (email);
CREATE TABLE payment_methods (user_id TEXT NOT NULL REFERENCES users (user_id), id TEXT NOT NULL,
    position INTEGER NOT NULL, source TEXT NOT NULL, brand TEXT, last_four TEXT, balance DOUBLE PRECISION,
    PRIMARY KEY (user_id, id));
CREATE TABLE orders (order_id TEXT PRIMARY KEY, position INTEGER NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (user_id), address1 TEXT NOT NULL, address2 TEXT NOT NULL,
    city TEXT NOT NULL, country TEXT NOT NULL, state TEXT NOT NULL, zip TEXT NOT NULL, status TEXT NOT NULL,
    cancel_reason TEXT, return_items TEXT, return_payment_method_id TEXT, exchange_items TEXT,
    exchange_new_items TEXT, exchange_payment_method_id TEXT, exchange_price_difference DOUBLE PRECISION);
CREATE TABLE user_orders (user_id TEXT NOT NULL REFERENCES users (user_id), line INTEGER NOT NULL,
    order_id TEXT NOT NULL, PRIMARY KEY (user_id, line));
CREATE TABLE order_items (order_id TEXT NOT NULL REFERENCES orders (order_id), line INTEGER NOT NULL,
    name TEXT NOT NULL, product_id TEXT NOT NULL, item_id TEXT NOT NULL, price DOUBLE PRECISION NOT NULL,
    options TEXT NOT NULL, PRIMARY KEY (order_id, line));
CREATE TABLE fulfillments (order_id TEXT NOT NULL REFERENCES orders (order_id), line INTEGER NOT NULL,
    tracking_id TEXT NOT NULL, item_ids TEXT NOT NULL, PRIMARY KEY (order_id, line));
CREATE TABLE payment_history (order_id TEXT NOT NULL REFERENCES orders (order_id), line INTEGER NOT NULL,
    transaction_type TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL, payment_method_id TEXT NOT NULL,
    PRIMARY KEY (order_id, line));
"""

_ADDRESS = ("address1", "address2", "city", "country", "state", "zip")


class Sql:
    """A DB-API connection with ``?`` placeholders on both drivers (psycopg's are ``%s``)."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.pg = not isinstance(conn, sqlite3.Connection)

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.pg else sql

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return list(self.conn.execute(self._sql(sql), params).fetchall())

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.conn.execute(self._sql(sql), params).fetchone()

    def run(self, sql: str, params: Sequence[Any] = ()) -> None:
        self.conn.execute(self._sql(sql), params)

    def many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = list(rows)
        if not rows:
            return
        if self.pg:
            with self.conn.cursor() as cur:
                cur.executemany(self._sql(sql), rows)
        else:
            self.conn.executemany(sql, rows)


def _insert(table: str, n: int) -> str:
    return f"INSERT INTO {table} VALUES ({', '.join('?' * n)})"


def load(conn: Any, tables: dict[str, dict[str, Any]]) -> None:
    """Create the schema and insert ``tables`` (the ``db.json`` shape) through ``conn``."""
    db = Sql(conn)
    for statement in DDL.split(";"):
        if statement.strip():
            db.run(statement)
    products = tables["products"].values()
    db.many(_insert("products", 3), [(p["product_id"], p["name"], i) for i, p in enumerate(products)])
    db.many(_insert("variants", 6), [
        (v["item_id"], p["product_id"], j, json.dumps(v["options"]), bool(v["available"]), v["price"])
        for p in products for j, v in enumerate(p["variants"].values())])
    users = tables["users"].values()
    db.many(_insert("users", 11), [
        (u["user_id"], i, u["name"]["first_name"], u["name"]["last_name"], *(u["address"][k] for k in _ADDRESS),
         u["email"]) for i, u in enumerate(users)])
    db.many(_insert("payment_methods", 7), [
        (u["user_id"], m["id"], j, m["source"], m.get("brand"), m.get("last_four"), m.get("balance"))
        for u in users for j, m in enumerate(u["payment_methods"].values())])
    db.many(_insert("user_orders", 3), [(u["user_id"], j, o) for u in users for j, o in enumerate(u["orders"])])
    orders = tables["orders"].values()
    db.many(_insert("orders", 17), [
        (o["order_id"], i, o["user_id"], *(o["address"][k] for k in _ADDRESS), o["status"],
         o.get("cancel_reason"), _json_or_none(o.get("return_items")), o.get("return_payment_method_id"),
         _json_or_none(o.get("exchange_items")), _json_or_none(o.get("exchange_new_items")),
         o.get("exchange_payment_method_id"), o.get("exchange_price_difference"))
        for i, o in enumerate(orders)])
    db.many(_insert("order_items", 7), [
        (o["order_id"], j, x["name"], x["product_id"], x["item_id"], x["price"], json.dumps(x["options"]))
        for o in orders for j, x in enumerate(o["items"])])
    db.many(_insert("fulfillments", 4), [
        (o["order_id"], j, json.dumps(f["tracking_id"]), json.dumps(f["item_ids"]))
        for o in orders for j, f in enumerate(o["fulfillments"])])
    db.many(_insert("payment_history", 5), [
        (o["order_id"], j, h["transaction_type"], h["amount"], h["payment_method_id"])
        for o in orders for j, h in enumerate(o["payment_history"])])


def setup(conn: Any) -> None:
    """Template builder for ``SQLiteDatabase(setup=...)`` / ``PostgresDatabase(setup=...)``:
    the packaged retail data (``load_base_db``)."""
    from .._db import load_base_db
    load(conn, load_base_db().tables)


def _json_or_none(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def user_record(db: Sql, user_id: str) -> dict[str, Any] | None:
    """The user as in ``db.json`` (same keys, same order), or ``None``."""
    row = db.one("SELECT user_id, first_name, last_name, address1, address2, city, country, state, zip, email "
                 "FROM users WHERE user_id = ?", (user_id,))
    if row is None:
        return None
    methods = {}
    for mid, source, brand, last_four, balance in db.all(
            "SELECT id, source, brand, last_four, balance FROM payment_methods WHERE user_id = ? ORDER BY position",
            (user_id,)):
        method: dict[str, Any] = {"source": source, "id": mid}
        if brand is not None or last_four is not None:
            method.update(brand=brand, last_four=last_four)
        if balance is not None:
            method["balance"] = balance
        methods[mid] = method
    orders = [r[0] for r in db.all("SELECT order_id FROM user_orders WHERE user_id = ? ORDER BY line", (user_id,))]
    return {"user_id": row[0], "name": {"first_name": row[1], "last_name": row[2]},
            "address": dict(zip(_ADDRESS, row[3:9])), "email": row[9], "payment_methods": methods, "orders": orders}


def order_record(db: Sql, order_id: str) -> dict[str, Any] | None:
    """The order as in ``db.json`` plus the keys write tools add, in the order they add them; or ``None``."""
    row = db.one("SELECT order_id, user_id, address1, address2, city, country, state, zip, status, cancel_reason, "
                 "return_items, return_payment_method_id, exchange_items, exchange_new_items, "
                 "exchange_payment_method_id, exchange_price_difference FROM orders WHERE order_id = ?", (order_id,))
    if row is None:
        return None
    items = [{"name": n, "product_id": p, "item_id": i, "price": price, "options": json.loads(opts)}
             for n, p, i, price, opts in db.all("SELECT name, product_id, item_id, price, options FROM order_items "
                                                "WHERE order_id = ? ORDER BY line", (order_id,))]
    fulfillments = [{"tracking_id": json.loads(t), "item_ids": json.loads(i)}
                    for t, i in db.all("SELECT tracking_id, item_ids FROM fulfillments WHERE order_id = ? ORDER BY line",
                                       (order_id,))]
    history = [{"transaction_type": t, "amount": a, "payment_method_id": m}
               for t, a, m in db.all("SELECT transaction_type, amount, payment_method_id FROM payment_history "
                                     "WHERE order_id = ? ORDER BY line", (order_id,))]
    order: dict[str, Any] = {"order_id": row[0], "user_id": row[1], "address": dict(zip(_ADDRESS, row[2:8])),
                             "items": items, "status": row[8], "fulfillments": fulfillments,
                             "payment_history": history}
    extras = ("cancel_reason", "return_items", "return_payment_method_id", "exchange_items", "exchange_new_items",
              "exchange_payment_method_id", "exchange_price_difference")
    for key, value in zip(extras, row[9:]):
        if value is not None:
            order[key] = json.loads(value) if key in ("return_items", "exchange_items", "exchange_new_items") else value
    return order


def variant_record(row: Sequence[Any]) -> dict[str, Any]:
    """A variant ``{"item_id", "options", "available", "price"}`` from ``(item_id, options, available, price)``."""
    return {"item_id": row[0], "options": json.loads(row[1]), "available": bool(row[2]), "price": row[3]}


def product_record(db: Sql, product_id: str) -> dict[str, Any] | None:
    """The product with its variants as in ``db.json``, or ``None``."""
    row = db.one("SELECT name, product_id FROM products WHERE product_id = ?", (product_id,))
    if row is None:
        return None
    variants = {r[0]: variant_record(r) for r in db.all(
        "SELECT item_id, options, available, price FROM variants WHERE product_id = ? ORDER BY position", (product_id,))}
    return {"name": row[0], "product_id": row[1], "variants": variants}
