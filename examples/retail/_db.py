"""The retail database: one read-only base shared by all rollouts, plus a
copy-on-write overlay per rollout.

Data: the retail domain of τ²-bench (MIT licence, Sierra Research; see
``data/LICENSE``), stored gzipped as ``data/db.json.gz``. Its shape (from
``docs/retail-domain.md``)::

    {"products": {product_id: {"name", "product_id",
                               "variants": {item_id: {"item_id", "options", "available", "price"}}}},
     "users":    {user_id: {"user_id", "name", "address", "email",
                            "payment_methods": {id: {...}}, "orders": [order_id]}},
     "orders":   {order_id: {"order_id", "user_id", "address", "items": [...], "status",
                             "fulfillments", "payment_history": [...]}}}

A rollout's writes never touch the base: :meth:`RetailView.writable` deep-copies
the one record being changed into the overlay (``{table: {key: record}}``, a
plain JSON-serialisable dict that lives in ``rollout.state``) and every later
read of that key sees the overlay's copy. Memory per rollout is therefore the
size of the records it changed, not of the database.
"""

from __future__ import annotations

import copy
import functools
import gzip
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = ["DATA_DIR", "TABLES", "BaseDB", "RetailView", "load_base_db", "overlay_size_bytes"]

DATA_DIR = Path(__file__).resolve().parent / "data"
TABLES = ("products", "users", "orders")


class BaseDB:
    """The immutable-by-convention base database and its derived indexes.

    Attributes:
        tables: ``{"products": {...}, "users": {...}, "orders": {...}}`` as in
            ``db.json``. Never mutate it: every rollout shares it.
        item_to_product: ``{item_id: product_id}`` over all variants.
    """

    def __init__(self, tables: dict[str, dict[str, Any]]) -> None:
        for table in TABLES:
            if not isinstance(tables.get(table), dict):
                raise ValueError(f"retail database lacks the {table!r} table")
        self.tables = tables
        self.item_to_product = {
            item_id: product_id
            for product_id, product in tables["products"].items()
            for item_id in product["variants"]
        }
        self.gold_cache: dict[str, dict[str, Any]] = {}  # actions JSON -> gold overlay (see _grading)

    def view(self, overlay: dict[str, Any] | None = None) -> RetailView:
        """A view of this base with ``overlay`` (created empty when ``None``)."""
        return RetailView(self, {} if overlay is None else overlay)


@functools.lru_cache(maxsize=4)
def load_base_db(path: str | None = None) -> BaseDB:
    """Load ``db.json.gz`` (or a plain ``.json``) once per process and cache it.

    Args:
        path: file to load; default ``examples/retail/data/db.json.gz``.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: the file is not a retail database.
    """
    file = Path(path) if path else DATA_DIR / "db.json.gz"
    opener = gzip.open if file.suffix == ".gz" else open
    with opener(file, "rt", encoding="utf-8") as fh:
        return BaseDB(json.load(fh))


class RetailView:
    """Base database + one rollout's overlay.

    Args:
        base: the shared :class:`BaseDB`.
        overlay: ``{table: {key: record}}`` holding the records this rollout
            changed; mutated in place by :meth:`writable`.

    Records returned by :meth:`get` may belong to the shared base: treat them
    as read-only and call :meth:`writable` before changing anything.
    """

    def __init__(self, base: BaseDB, overlay: dict[str, Any]) -> None:
        if not isinstance(overlay, dict):
            raise TypeError(f"overlay must be a dict, got {type(overlay).__name__}")
        unknown = set(overlay) - set(TABLES)
        if unknown:
            raise ValueError(f"overlay has unknown tables {sorted(unknown)}")
        self.base = base
        self.overlay = overlay

    def get(self, table: str, key: str) -> dict[str, Any] | None:
        """The current record ``table[key]`` (read-only), or ``None``."""
        changed = self.overlay.get(table)
        if changed is not None and key in changed:
            return changed[key]
        return self.base.tables[table].get(key)

    def writable(self, table: str, key: str) -> dict[str, Any]:
        """The record ``table[key]`` copied into the overlay, ready to mutate.

        Raises:
            KeyError: no such record.
        """
        changed = self.overlay.setdefault(table, {})
        if key not in changed:
            record = self.base.tables[table].get(key)
            if record is None:
                raise KeyError(f"{table}[{key!r}]")
            changed[key] = copy.deepcopy(record)
        return changed[key]

    def values(self, table: str) -> Iterator[dict[str, Any]]:
        """Current records of ``table`` in base order (overlay copies win)."""
        for key in self.base.tables[table]:
            yield self.get(table, key)  # type: ignore[misc]

    def changed_keys(self) -> set[tuple[str, str]]:
        """``{(table, key)}`` of every record this view's overlay holds."""
        return {(table, key) for table, rows in self.overlay.items() for key in rows}

    def diff(self, other: RetailView) -> list[str]:
        """Keys whose final records differ between two views of the same base.

        Only records present in either overlay can differ, so this costs
        O(changed records), not O(database). Returns sorted ``"table/key"``.
        """
        if other.base is not self.base:
            raise ValueError("cannot compare views of different base databases")
        keys = self.changed_keys() | other.changed_keys()
        return sorted(f"{t}/{k}" for t, k in keys if self.get(t, k) != other.get(t, k))


def overlay_size_bytes(overlay: Mapping[str, Any]) -> int:
    """Bytes of ``json.dumps(overlay)``: what a rollout's state costs to store."""
    return len(json.dumps(overlay, separators=(",", ":")))
