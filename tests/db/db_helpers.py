"""Helpers of the rollout-database tests: backends over a real PostgreSQL and SQLite, and a tiny app."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import httpx

from rft_sdk import GradingContext, Rollout, ToolError
from rft_sdk._db import PostgresDatabase, PostgresSchemaDatabase, RolloutDatabase, SQLiteDatabase

ROOT = Path(__file__).resolve().parents[2]
#: ``postgres-schema``: PostgreSQL with a schema per rollout (``PostgresSchemaDatabase``).
BACKENDS = ("sqlite", "postgres", "postgres-schema")


def placeholder(conn: Any) -> str:
    """The DB-API parameter marker of ``conn``'s driver (``?`` for sqlite3, ``%s`` for psycopg)."""
    return "?" if isinstance(conn, __import__("sqlite3").Connection) else "%s"


def setup_sqlite(conn: Any) -> None:
    conn.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER NOT NULL)")
    conn.execute("CREATE TABLE log (n INTEGER NOT NULL)")
    conn.executemany("INSERT INTO kv VALUES (?, ?)", [("a", 1), ("b", 2)])


def setup_postgres(conn: Any) -> None:
    conn.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER NOT NULL)")
    conn.execute("CREATE TABLE log (n INTEGER NOT NULL)")
    conn.execute("INSERT INTO kv VALUES ('a', 1), ('b', 2)")


def make_db(backend: str, *, tmp_path: Path | None = None, pg_url: str | None = None, name: str | None = None,
            **options: Any) -> RolloutDatabase:
    """A backend over the kv template (``name`` defaults to a fresh one: tests never share databases)."""
    name = name or f"t{uuid.uuid4().hex[:10]}"
    options.setdefault("ttl_s", 600)
    if backend == "sqlite":
        assert tmp_path is not None
        return SQLiteDatabase(setup=setup_sqlite, dir=tmp_path / name, name=name, **options)
    assert pg_url is not None
    options.setdefault("pool_size", 0)
    if backend == "postgres-schema":
        return PostgresSchemaDatabase(pg_url, setup=setup_postgres, name=name, **options)
    return PostgresDatabase(pg_url, setup=setup_postgres, name=name, **options)


# -- the tools and grader every test serves ------------------------------------------------
def put(k: str, v: int, *, rollout: Rollout) -> str:
    """Set kv[k] = v (commits, then raises ToolError when v < 0: the whole call must roll back)."""
    q = placeholder(rollout.db)
    rollout.db.execute(f"DELETE FROM kv WHERE k = {q}", (k,))
    rollout.db.execute(f"INSERT INTO kv VALUES ({q}, {q})", (k, v))
    rollout.db.commit()
    if v < 0:
        raise ToolError("negative values are refused")
    return "ok"


def get(k: str, *, rollout: Rollout) -> str:
    """kv[k] and the number of rows, as JSON."""
    q = placeholder(rollout.db)
    row = rollout.db.execute(f"SELECT v FROM kv WHERE k = {q}", (k,)).fetchone()
    (count,) = rollout.db.execute("SELECT count(*) FROM kv").fetchone()
    return json.dumps({"v": row[0] if row else None, "rows": count})


def bump(*, rollout: Rollout) -> str:
    """Append one row to ``log``; returns how many rows it holds (counts executions)."""
    rollout.db.execute("INSERT INTO log VALUES (1)")
    return str(rollout.db.execute("SELECT count(*) FROM log").fetchone()[0])


def slow_put(k: str, v: int, seconds: float, *, rollout: Rollout) -> str:
    """Write, then sleep holding the transaction (a replica can be killed meanwhile)."""
    import time
    q = placeholder(rollout.db)
    rollout.db.execute(f"INSERT INTO kv VALUES ({q}, {q})", (k, v))
    time.sleep(seconds)
    return "ok"


async def end_state(ctx: GradingContext) -> float:
    """1.0 when the rollout's database ends as the item's gold ``actions`` leave it."""
    diff = await ctx.db.diff_gold(ctx.item.get("actions", []))
    return 0.0 if diff else 1.0


TOOLS = [put, get, bump, slow_put]


class Client:
    """Hosted-protocol calls to a server at ``base_url`` (httpx, async)."""

    def __init__(self, base_url: str) -> None:
        self.http = httpx.AsyncClient(base_url=base_url, timeout=60)

    async def call(self, trace_id: str, name: str, arguments: dict[str, Any], call_id: str | None = None,
                   item: dict[str, Any] | None = None) -> httpx.Response:
        body = {"type": "function_call", "call_id": call_id or f"call_{uuid.uuid4().hex[:12]}",
                "trace_id": trace_id, "name": name, "arguments": json.dumps(arguments), "item": item or {}}
        return await self.http.post(f"/tools/{name}", json=body)

    async def grade(self, trace_id: str, item: dict[str, Any] | None = None) -> httpx.Response:
        return await self.http.post("/grade", json={"sample": {"output_text": "done"}, "item": item or {},
                                                    "trace_id": trace_id})

    async def aclose(self) -> None:
        await self.http.aclose()


def env_db() -> RolloutDatabase:
    """The backend a replica subprocess serves, from ``RFT_TEST_DB_*`` variables."""
    backend = os.environ["RFT_TEST_DB_BACKEND"]
    options = json.loads(os.environ.get("RFT_TEST_DB_OPTIONS", "{}"))
    if backend == "sqlite":
        return SQLiteDatabase(setup=setup_sqlite, dir=os.environ["RFT_TEST_DB_DIR"],
                              name=os.environ["RFT_TEST_DB_NAME"], **options)
    cls = PostgresSchemaDatabase if backend == "postgres-schema" else PostgresDatabase
    return cls(os.environ["RFT_TEST_PG_URL"], setup=setup_postgres, name=os.environ["RFT_TEST_DB_NAME"], **options)
