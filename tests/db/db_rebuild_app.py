"""An app whose SQLite template depends on ``RFT_TEST_SEED`` (tests/db/test_template_rebuild.py).

``setup`` seeds ten members, ``m0``..``m9`` for seed 0 and ``m90``..``m99`` for seed 1; the database has
``rebuild=True`` and a warm pool, in ``RFT_TEST_DB_DIR``. ``rft validate data.jsonl --app db_rebuild_app:server``.
"""

from __future__ import annotations

import os
import sqlite3

from rft_sdk import GradingContext, Rollout, SQLiteDatabase, ToolServer

POOL_SIZE = 10


def setup(conn: sqlite3.Connection) -> None:
    """Ten members whose ids depend on the seed (read when the template is built)."""
    seed = int(os.environ["RFT_TEST_SEED"])
    conn.execute("CREATE TABLE members (id TEXT PRIMARY KEY, note TEXT NOT NULL)")
    conn.executemany("INSERT INTO members VALUES (?, '')", [(f"m{seed * 90 + i}",) for i in range(10)])


def make_database() -> SQLiteDatabase:
    return SQLiteDatabase(setup=setup, dir=os.environ["RFT_TEST_DB_DIR"], name="rebuild", rebuild=True,
                          pool_size=POOL_SIZE, ttl_s=600)


def make_server() -> ToolServer:
    server = ToolServer(db=make_database())

    @server.tool
    def set_note(member_id: str, note: str, *, rollout: Rollout) -> str:
        """Set a member's note (no error for an unknown member: the grade's diff tells)."""
        rollout.db.execute("UPDATE members SET note = ? WHERE id = ?", (note, member_id))
        return "ok"

    @server.grader
    async def end_state(ctx: GradingContext) -> float:
        """1.0 when the rollout's database ends as the gold actions leave a fresh clone of the template."""
        return 0.0 if await ctx.db.diff_gold(ctx.item.get("actions", [])) else 1.0

    return server


def dataset_lines(seed: int) -> list[dict]:
    """Ten gold lines, one per member of ``seed``'s template."""
    tools = make_server().dataset_tools()
    return [{"messages": [{"role": "user", "content": f"Mark member m{seed * 90 + i} as vip."}], "tools": tools,
             "task_id": f"vip-{i}", "actions": [{"name": "set_note",
                                                  "arguments": {"member_id": f"m{seed * 90 + i}", "note": "vip"}}],
             "reference_answer": "Done."} for i in range(10)]


server = make_server() if "RFT_TEST_DB_DIR" in os.environ else None
