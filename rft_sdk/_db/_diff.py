"""Row-level snapshots and diffs of a database: ``RowChange``, ``DatabaseDiff``.

A snapshot reads every user table (all tables except the SDK's own ``_rft_*``
and the engine's internal ones) keyed by primary key; a table without one is
keyed by whole rows (duplicates counted). Two snapshots of databases cloned
from one template compare row by row: a row present only after is an insert,
only before a delete, in both with other values an update.

Comparing a rollout with a gold end state needs no second full snapshot: the
changes of each against the (cached) template are small, and two end states
are equal exactly when every row either one changed has the same final value
in both (:func:`diff_end_states`).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["Changes", "DatabaseDiff", "RowChange", "Snapshot", "TableInfo", "changes_between",
           "diff_end_states", "diff_snapshots", "quote", "read_snapshot"]


def quote(identifier: str) -> str:
    """``identifier`` as an SQL-standard quoted identifier (``"a""b"``); SQLite and PostgreSQL both read it."""
    return '"' + identifier.replace('"', '""') + '"'


@dataclasses.dataclass(frozen=True)
class TableInfo:
    """A user table: ``name``, its ``columns`` in order, and the positions of its primary
    key columns in ``columns`` (empty: no primary key, rows are keyed by their whole value)."""

    name: str
    columns: tuple[str, ...]
    key: tuple[int, ...]


#: ``{table: (TableInfo, {key tuple: row tuple})}``; for a table without a primary key
#: ``{row tuple: count}``.
Snapshot = dict[str, tuple[TableInfo, dict[tuple[Any, ...], Any]]]
#: ``{(table, key): final row tuple, or None when deleted}``: what differs from a reference.
Changes = dict[tuple[str, tuple[Any, ...]], Any]


def read_snapshot(conn: Any, tables: Sequence[TableInfo]) -> Snapshot:
    """Read every row of ``tables`` through the DB-API connection ``conn``.

    Cost: one full scan per table (O(database size) time and memory).
    """
    snap: Snapshot = {}
    for table in tables:
        cur = conn.cursor()
        cur.execute(f"SELECT {', '.join(quote(c) for c in table.columns)} FROM {quote(table.name)}")
        rows: dict[tuple[Any, ...], Any]
        if table.key:
            key = table.key
            rows = {tuple(row[i] for i in key): tuple(row) for row in cur.fetchall()}
        else:
            rows = dict(Counter(tuple(row) for row in cur.fetchall()))
        cur.close()
        snap[table.name] = (table, rows)
    return snap


@dataclasses.dataclass(frozen=True)
class RowChange:
    """One row that differs.

    Attributes:
        table: table name.
        key: primary key values (the whole row for a table without one).
        before: the row as ``{column: value}`` on the reference side, ``None`` when absent
            there: the template's (``ctx.db.diff()``, ``ctx.db.gold()``), or the gold end
            state's (``ctx.db.diff_gold()``).
        after: the row on the compared side, ``None`` when absent there: the rollout's
            (``diff()``, ``diff_gold()``), or the gold end state's (``gold()``).
        reference: what ``before`` is: ``"template"`` (a change the rollout made, or with
            ``gold()`` the gold made) or ``"gold"`` (a difference from the gold end state,
            ``ctx.db.diff_gold``).
    """

    table: str
    key: tuple[Any, ...]
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    reference: str = "template"

    @property
    def kind(self) -> str:
        """Against the template: ``"insert"`` (only after), ``"delete"`` (only before) or ``"update"``.
        Against the gold end state: ``"missing"`` (the gold has the row, the rollout not: a gold
        insert the rollout never made, or a row it deleted that the gold kept), ``"extra"`` (the
        rollout has a row the gold does not) or ``"update"``."""
        gold = self.reference == "gold"
        if self.before is None:
            return "extra" if gold else "insert"
        if self.after is None:
            return "missing" if gold else "delete"
        return "update"

    @property
    def columns(self) -> list[str]:
        """Columns whose values differ (every column for an insert, delete, missing or extra row)."""
        if self.before is None or self.after is None:
            return list((self.before or self.after or {}).keys())
        return [c for c in self.after if self.before.get(c) != self.after.get(c)]

    def label(self) -> str:
        """``"table/key"`` (key values joined by ``/``), e.g. ``"orders/#W2611340"``."""
        return f"{self.table}/{'/'.join(str(v) for v in self.key)}"


@dataclasses.dataclass(frozen=True)
class DatabaseDiff:
    """The rows that differ between two database states, sorted by table and key label.

    Falsy when the states are equal: ``if not await ctx.db.diff_gold(actions)`` reads
    "the database ends as the gold one does".
    """

    changes: tuple[RowChange, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.changes)

    def __len__(self) -> int:
        return len(self.changes)

    def __iter__(self) -> Iterator[RowChange]:
        return iter(self.changes)

    def tables(self) -> list[str]:
        """Names of the tables with a differing row, sorted."""
        return sorted({c.table for c in self.changes})

    def labels(self) -> list[str]:
        """``"table/key"`` of every differing row, sorted."""
        return sorted(c.label() for c in self.changes)

    def summary(self, limit: int = 5) -> str:
        """One line naming up to ``limit`` rows and what changed, e.g.
        ``"orders/#W1 update (status), users/u1 insert"`` (``"loans/7 missing"`` against the gold);
        ``""`` when equal."""
        parts = []
        for change in self.changes[:limit]:
            detail = f" ({', '.join(change.columns)})" if change.kind == "update" else ""
            parts.append(f"{change.label()} {change.kind}{detail}")
        if len(self.changes) > limit:
            parts.append(f"and {len(self.changes) - limit} more")
        return ", ".join(parts)

    def to_dict(self) -> list[dict[str, Any]]:
        """JSON-ready ``[{"table", "key", "kind", "before", "after"}]`` (values as read from the driver)."""
        return [{"table": c.table, "key": list(c.key), "kind": c.kind, "before": c.before, "after": c.after}
                for c in self.changes]


def _row(table: TableInfo, value: Any, key: tuple[Any, ...]) -> dict[str, Any] | None:
    if value is None:
        return None
    row = value if table.key else key
    out = dict(zip(table.columns, row))
    if not table.key:
        out["_count"] = value
    return out


def _sorted(changes: list[RowChange]) -> DatabaseDiff:
    return DatabaseDiff(tuple(sorted(changes, key=lambda c: (c.table, repr(c.key)))))


def changes_between(before: Snapshot, after: Snapshot) -> Changes:
    """``{(table, key): row in after or None}`` for every row that differs from ``before``."""
    out: Changes = {}
    for name in before.keys() | after.keys():
        rows_a = before[name][1] if name in before else {}
        rows_b = after[name][1] if name in after else {}
        for key in rows_a.keys() | rows_b.keys():
            value = rows_b.get(key)
            if rows_a.get(key) != value:
                out[(name, key)] = value
    return out


def diff_snapshots(before: Snapshot, after: Snapshot) -> DatabaseDiff:
    """Every row that differs from ``before`` to ``after``."""
    infos = {name: info for name, (info, _) in (*before.items(), *after.items())}
    changes = []
    for (name, key), value in changes_between(before, after).items():
        info = infos[name]
        old = before[name][1].get(key) if name in before else None
        changes.append(RowChange(name, key, _row(info, old, key), _row(info, value, key)))
    return _sorted(changes)


def diff_end_states(template: Snapshot, reference: Mapping[tuple[str, tuple[Any, ...]], Any],
                    compared: Mapping[tuple[str, tuple[Any, ...]], Any], *,
                    reference_name: str = "template") -> DatabaseDiff:
    """Rows whose final value differs between two end states given as changes of one template.

    Args:
        template: snapshot of the template both states were cloned from.
        reference: :data:`Changes` of the reference end state (e.g. the gold one).
        compared: :data:`Changes` of the compared end state (e.g. the rollout's).
        reference_name: :attr:`RowChange.reference` of each change: ``"gold"`` names rows
            ``missing``/``extra`` instead of ``delete``/``insert``.

    Cost: O(rows changed by either), not O(database).
    """
    changes = []
    for name, key in reference.keys() | compared.keys():
        info, base = template[name] if name in template else (None, {})
        ref = reference[(name, key)] if (name, key) in reference else base.get(key)
        got = compared[(name, key)] if (name, key) in compared else base.get(key)
        if ref != got and info is not None:
            changes.append(RowChange(name, key, _row(info, ref, key), _row(info, got, key), reference_name))
    return _sorted(changes)
