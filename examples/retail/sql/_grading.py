"""The retail grader on SQL: the end-state gate from the SDK's row-level diff.

``ctx.db.diff_gold(actions)`` compares the rollout's database with the gold
actions replayed in a scratch clone (cached per action list); each differing
row is named by the record it belongs to (an ``order_items`` row by its
order, a ``payment_methods`` row by its user, a variant by its product), so
the reasons read like the in-memory grader's. The rest of the rule
(``communicate_info``, the hardening against reward hacks) is the shared
:func:`examples.retail._grading.grade_end_state`.
"""

from __future__ import annotations

from rft_sdk import DatabaseDiff, Grade, GradingContext, RowChange, grader

from .._grading import grade_end_state

__all__ = ["record_labels", "retail"]

#: child table -> (record table, column of the record's key)
_PARENT = {"order_items": ("orders", "order_id"), "fulfillments": ("orders", "order_id"),
           "payment_history": ("orders", "order_id"), "payment_methods": ("users", "user_id"),
           "user_orders": ("users", "user_id"), "variants": ("products", "product_id")}


def _record(change: RowChange) -> str:
    if change.table not in _PARENT:
        return change.label()
    table, column = _PARENT[change.table]
    row = change.after if change.after is not None else change.before
    return f"{table}/{(row or {}).get(column)}"


def record_labels(diff: DatabaseDiff) -> list[str]:
    """Sorted ``"table/key"`` of the retail records (users, orders, products) the differing rows belong to."""
    return sorted({_record(change) for change in diff})


@grader(name="retail", default=True)
async def retail(ctx: GradingContext) -> Grade:
    """Grade a retail rollout by its final database and final answer (rule: ``examples.retail._grading``).

    Raises:
        ValueError: the item lacks gold ``actions`` (answered as a grader failure).
    """
    actions = ctx.item.get("actions")
    if not isinstance(actions, list):
        raise ValueError("retail item needs 'actions': a list of gold tool calls")
    differing = record_labels(await ctx.db.diff_gold(actions))
    changes_nothing = not await ctx.db.gold(actions)
    result = grade_end_state(ctx.item, differing, ctx.output_text, changes_nothing=changes_nothing,
                             calls=ctx.trajectory)
    return Grade(score=result.score, subscores=result.subscores, reasons=result.reasons)
