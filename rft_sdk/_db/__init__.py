"""A database per rollout, cloned from a template: ``rollout.db`` and ``ctx.db``.

One concept per module: ``_base`` (``RolloutDatabase``: lifecycle, bound,
sweep, per-call transaction), ``_sqlite`` (``SQLiteDatabase``), ``_postgres``
(``PostgresDatabase``), ``_pgschema`` (``PostgresSchemaDatabase``: a schema
per rollout), ``_call`` (``run_call``: one tool call inside its database, the
request path's one visit of this package), ``_pool`` (``PoolSizer``: the warm pool's size from the start
rate), ``_connection`` (the connections tools get),
``_clone`` (file clone: reflink, copy_file_range, backup API), ``_diff``
(row-level snapshots and diffs), ``_view`` (``GradingDatabase``, what a
grader sees), ``_metrics`` (``/metrics`` figures), ``_sqlalchemy`` (optional
SQLAlchemy engine/session over ``rollout.db``), ``_pgserver`` (a throwaway
PostgreSQL server for tests). Nothing here imports psycopg or SQLAlchemy
until a backend or helper that needs it is used. Guide: docs/database.md.
"""

from ._base import CALLS_TABLE, CallScope, DatabaseLimitError, RolloutDatabase, ToolRunner
from ._diff import DatabaseDiff, RowChange, TableInfo
from ._pgschema import PostgresSchemaDatabase
from ._pgserver import postgres_server
from ._pool import PoolSizer
from ._postgres import PostgresDatabase
from ._sqlalchemy import sqlalchemy_engine, sqlalchemy_session
from ._sqlite import SQLiteDatabase
from ._view import GradingDatabase, open_grading_view

__all__ = [
    "CALLS_TABLE",
    "CallScope",
    "DatabaseDiff",
    "DatabaseLimitError",
    "GradingDatabase",
    "PoolSizer",
    "PostgresDatabase",
    "PostgresSchemaDatabase",
    "RolloutDatabase",
    "RowChange",
    "SQLiteDatabase",
    "TableInfo",
    "ToolRunner",
    "open_grading_view",
    "postgres_server",
    "sqlalchemy_engine",
    "sqlalchemy_session",
]
