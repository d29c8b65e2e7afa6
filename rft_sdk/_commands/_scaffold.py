"""The files ``rft init`` writes: a small task that passes ``rft validate``, ``rft emulate`` and ``rft doctor``.

A lending-library service (two tables on SQLite), chosen because it has what a
real task has: a read tool and a write tool on ``rollout.db``, a refusal
(``ToolError``) that rolls the call back, and an end-state grader that compares
the rollout's database with the gold actions replayed in a scratch clone
(``ctx.db.diff_gold``). ``{slug}`` is the template's database name.
"""

from __future__ import annotations

__all__ = ["APP", "BOOKS", "GITIGNORE", "MEMBERS", "TEST"]

#: ``(id, title, copies)`` seed rows; also used to write the dataset.
BOOKS = [("b1", "Dune", 3), ("b2", "Emma", 1), ("b3", "Ulysses", 2), ("b4", "Beloved", 1), ("b5", "Middlemarch", 2)]
#: Members the dataset's requests name.
MEMBERS = ["ada", "grace", "alan", "edsger", "barbara"]

APP = '''"""A task scaffolded by `rft init`: a lending library with one read tool and one write tool.

Replace the schema, the tools and the grader with your own service's; keep the shapes:
tools take `rollout: Rollout` and use `rollout.db` (this rollout's own copy of the
database: a call that raises is rolled back), and the grader judges the end state.

    rft serve app:server --port {port}
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from rft_sdk import Grade, GradingContext, Rollout, SQLiteDatabase, ToolError, ToolServer

HERE = Path(__file__).resolve().parent
BOOKS = {books!r}


def setup(conn: sqlite3.Connection) -> None:
    """Schema and seed rows of the template every rollout's database is cloned from.

    The template is built once and rebuilt at the next start after any edit of this file; after changing
    data this function reads from another file, delete the database's folder (`.rft-db/{slug}/`, or
    `$RFT_DB_DIR/{slug}/`).
    """
    conn.executescript(
        """
        CREATE TABLE books (id TEXT PRIMARY KEY, title TEXT NOT NULL, copies INTEGER NOT NULL);
        CREATE TABLE loans (id INTEGER PRIMARY KEY AUTOINCREMENT,
                            book_id TEXT NOT NULL REFERENCES books(id), member TEXT NOT NULL);
        """
    )
    conn.executemany("INSERT INTO books VALUES (?, ?, ?)", BOOKS)


# Its files go to $RFT_DB_DIR/{slug}/ when RFT_DB_DIR is set (two servers started side by side with different
# RFT_DB_DIR keep apart), else to .rft-db/{slug}/ beside the code; name= keeps this task's template and
# rollout databases apart from other tasks' in the same folder.
DB_DIR = os.environ.get("RFT_DB_DIR") or HERE / ".rft-db"
server = ToolServer(db=SQLiteDatabase(setup=setup, name="{slug}", dir=DB_DIR))


@server.tool
def get_book(book_id: str, *, rollout: Rollout) -> dict[str, Any]:
    """Look up a book: its title and how many copies are left to lend.

    Args:
        book_id: the book's id, e.g. "b1".
    """
    row = rollout.db.execute("SELECT id, title, copies FROM books WHERE id = ?", (book_id,)).fetchone()
    if row is None:
        raise ToolError(f"no book with id {{book_id!r}}")
    return {{"id": row[0], "title": row[1], "copies": row[2]}}


@server.tool
def lend_book(book_id: str, member: str, *, rollout: Rollout) -> str:
    """Lend one copy of a book to a member.

    Args:
        book_id: the book's id, e.g. "b1".
        member: the member's name, e.g. "ada".
    """
    db = rollout.db
    row = db.execute("SELECT copies FROM books WHERE id = ?", (book_id,)).fetchone()
    if row is None:
        raise ToolError(f"no book with id {{book_id!r}}")
    if row[0] < 1:
        raise ToolError(f"no copy of {{book_id}} is left to lend")
    db.execute("UPDATE books SET copies = copies - 1 WHERE id = ?", (book_id,))
    loan = db.execute("INSERT INTO loans (book_id, member) VALUES (?, ?)", (book_id, member)).lastrowid
    return f"loan {{loan}}: {{book_id}} lent to {{member}}"


@server.grader
async def end_state(ctx: GradingContext) -> Grade:
    """1.0 when the rollout stayed within the item's tool-call budget and its database ends exactly as
    the item's gold actions leave it, else 0.0."""
    budget = ctx.item.get("max_tool_calls")
    if budget is not None and ctx.count() > budget:
        return Grade(0.0, reasons=[f"{{ctx.count()}} tool calls, over the budget of {{budget}}"])
    diff = await ctx.db.diff_gold(ctx.item["actions"])
    if diff:
        return Grade(0.0, reasons=[f"end state differs from the gold: {{diff.summary()}}"])
    return Grade(1.0, reasons=["end state matches the gold"])
'''

TEST = '''"""Tests of the task, in process (no server to start): `pytest -q`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from app import server

from rft_sdk.testing import TestClient

ITEMS = [json.loads(line) for line in (Path(__file__).parent / "train.jsonl").read_text().splitlines()]


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(server) as client:
        yield client


def test_lending_changes_the_book_and_adds_a_loan(client: TestClient) -> None:
    trace = client.new_trace_id()  # a fresh rollout: a fresh copy of the database
    call = client.call("lend_book", trace_id=trace, book_id="b2", member="ada")
    assert call.ok, call.model_text
    assert sorted(client.db_diff(trace).labels()) == ["books/b2", "loans/1"]
    assert client.query(trace, "SELECT copies FROM books WHERE id = ?", ["b2"]) == [(0,)]


def test_a_refused_call_changes_nothing(client: TestClient) -> None:
    trace = client.new_trace_id()
    assert client.call("lend_book", trace_id=trace, book_id="b2", member="ada").ok
    refused = client.call("lend_book", trace_id=trace, book_id="b2", member="alan")  # no copy left
    assert (refused.status, refused.error_code) == (400, "tool_error")
    assert [c.ok for c in client.trajectory(trace)] == [True, False]
    assert client.query(trace, "SELECT count(*) FROM loans") == [(1,)]


def test_every_gold_earns_the_full_score(client: TestClient) -> None:
    for item in ITEMS:
        run = client.replay(item)
        assert run.grade.score == 1.0, (item["task_id"], run.grade.reasons)


def test_skipping_the_write_scores_zero(client: TestClient) -> None:
    item = ITEMS[0]
    trace = client.new_trace_id()
    read = item["actions"][0]
    assert client.call(read["name"], trace_id=trace, item=item, **read["arguments"]).ok
    assert client.grade(trace, item["reference_answer"], item=item).score == 0.0
'''

GITIGNORE = """.rft-db/
runs/
__pycache__/
"""
