"""``GradingDatabase``: what a grader sees of a rollout's database (``ctx.db``).

Read-only: the connection is opened read-only (SQLite ``mode=ro``,
PostgreSQL ``default_transaction_read_only``), and the database is dropped
after the grade anyway. A rollout that made no tool call has no database of
its own; its end state is the template's, and ``ctx.db`` reads that.

The diff helpers are coroutines (a gold replay runs the server's tools):

* ``await ctx.db.diff()``: what the rollout changed against the template;
* ``await ctx.db.gold(actions)``: what the gold actions change (a scratch
  clone, replayed once per action list and cached);
* ``await ctx.db.diff_gold(actions)``: rows whose end value differs between
  the rollout and the gold end state (falsy when "the database ends as the
  gold one does").

Cost per grade: one full read of the rollout's database (every user table);
the template is read once per process and the gold replay once per distinct
action list (docs/database.md, "What it costs").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import anyio.to_thread

from ._base import RolloutDatabase
from ._diff import Changes, DatabaseDiff, Snapshot, diff_end_states

__all__ = ["GradingDatabase", "open_grading_view"]


class GradingDatabase:
    """A rollout's database as its grader sees it (``GradingContext.db``).

    Attributes:
        trace_id: the graded rollout.
        db_id: its database's name, or the template's when the rollout made no call.
        has_own: whether the rollout has a database of its own (it made a tool call).
    """

    def __init__(self, owner: RolloutDatabase, trace_id: str, item: dict[str, Any], own: str | None) -> None:
        self.owner, self.trace_id, self.item = owner, trace_id, item
        self.has_own = own is not None
        self.db_id = own if own is not None else owner._template_id()
        self._conn: Any = None
        self._snapshot: Snapshot | None = None
        self._changes: Changes | None = None

    @property
    def connection(self) -> Any:
        """A read-only DB-API connection to the rollout's end state (opened on first use, blocking:
        in an ``async def`` grader heavy reads belong in ``anyio.to_thread.run_sync``)."""
        if self._conn is None:
            self._conn = self.owner.connect(self.db_id, read_only=True)
        return self._conn

    async def snapshot(self) -> Snapshot:
        """Every row of the rollout's end state (read once per grade)."""
        if self._snapshot is None:
            if self.has_own:
                self._snapshot = await anyio.to_thread.run_sync(self.owner.snapshot_of, self.db_id)
            else:
                self._snapshot = await anyio.to_thread.run_sync(self.owner.template_snapshot)
        return self._snapshot

    async def changes(self) -> Changes:
        """``{(table, key): final row or None}`` of every row the rollout changed (read once per grade)."""
        if self._changes is None:
            await anyio.to_thread.run_sync(self.owner.template_snapshot)
            self._changes = (await anyio.to_thread.run_sync(self.owner.changes_of, self.db_id)
                             if self.has_own else {})
        return self._changes

    async def diff(self) -> DatabaseDiff:
        """What the rollout changed: template (``before``) against its end state (``after``)."""
        template = await anyio.to_thread.run_sync(self.owner.template_snapshot)
        return diff_end_states(template, {}, await self.changes())

    async def gold(self, actions: Sequence[Mapping[str, Any]]) -> DatabaseDiff:
        """What the gold ``actions`` change: template (``before``) against the gold end state (``after``).

        Raises:
            RFTError: an action names no registered tool, or the database is not served.
        """
        template = await anyio.to_thread.run_sync(self.owner.template_snapshot)
        gold, _ = await self.owner.gold_changes(actions, self.item)
        return diff_end_states(template, {}, gold)

    async def diff_gold(self, actions: Sequence[Mapping[str, Any]]) -> DatabaseDiff:
        """Rows whose end value differs: gold end state (``before``) against the rollout's (``after``).

        Empty (falsy) exactly when the rollout's database ends as the gold actions leave it. Each
        :class:`RowChange` is ``"missing"`` (a gold row the rollout lacks, e.g. an insert it never
        made), ``"extra"`` (a row only the rollout has) or ``"update"``.

        Raises:
            RFTError: an action names no registered tool, or the database is not served.
        """
        template = await anyio.to_thread.run_sync(self.owner.template_snapshot)
        gold, _ = await self.owner.gold_changes(actions, self.item)
        return diff_end_states(template, gold, await self.changes(), reference_name="gold")

    async def aclose(self) -> None:
        """Close the read connection (the server calls this after the grader returns)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            await anyio.to_thread.run_sync(conn.close)

    def __repr__(self) -> str:
        return f"GradingDatabase(trace_id={self.trace_id!r}, db_id={self.db_id!r}, has_own={self.has_own})"


async def open_grading_view(owner: RolloutDatabase, trace_id: str, item: dict[str, Any]) -> GradingDatabase:
    """The :class:`GradingDatabase` of ``trace_id`` (looks up whether it has a database of its own).

    Raises:
        EndpointError: 503 ``database_unavailable`` (retryable) when the database does not answer.
    """
    try:
        await owner.astart()
        own = await anyio.to_thread.run_sync(owner._exists, trace_id) if trace_id else None
    except owner.unavailable_errors as exc:
        raise owner.unavailable(exc) from exc
    return GradingDatabase(owner, trace_id, item, own)
