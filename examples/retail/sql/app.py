"""The retail tool server on SQL: ``rft serve examples.retail.sql.app:server``.

The same 16 tools and graders as ``examples.retail.app`` (same names,
signatures and descriptions: the model cannot tell them apart), but every
tool reads and writes ``rollout.db``, the rollout's own clone of the retail
database, with SQL (``_tools``), and the default grader judges the end state
with the SDK's row-level diff against the gold actions replayed in a scratch
clone (``_grading``).

Backend, from the environment:

* ``RETAIL_DB=sqlite`` (default): files under ``$RETAIL_DB_DIR/<name>`` (default: a
  folder in the temp dir shared by the workers of one host);
* ``RETAIL_DB=postgres``: ``$RETAIL_PG_URL`` (a server where the role may
  ``CREATE DATABASE``), ``$RETAIL_DB_POOL`` warm clones (default 8).

``$RETAIL_DB_NAME`` names the template (default ``retail``),
``$RETAIL_DB_MAX_LIVE`` bounds live databases (default 512).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

from rft_sdk import PostgresDatabase, RolloutDatabase, SQLiteDatabase, ToolError, ToolServer
from rft_sdk import Rollout as Rollout  # resolves the served tools' annotations

from .. import _server_tools
from .._tools import RetailError
from ..app import order_status
from . import _schema
from ._grading import retail
from ._tools import call_sql_tool

__all__ = ["make_db", "server"]


def make_db() -> RolloutDatabase:
    """The rollout database the environment asks for (see the module docstring).

    Raises:
        ValueError: an unknown ``$RETAIL_DB``, or postgres without ``$RETAIL_PG_URL``.
    """
    kind = os.environ.get("RETAIL_DB", "sqlite")
    name = os.environ.get("RETAIL_DB_NAME", "retail")
    max_live = int(os.environ.get("RETAIL_DB_MAX_LIVE", "512"))
    if kind == "sqlite":
        return SQLiteDatabase(setup=_schema.setup, dir=os.environ.get("RETAIL_DB_DIR"), name=name, max_live=max_live)
    if kind == "postgres":
        url = os.environ.get("RETAIL_PG_URL")
        if not url:
            raise ValueError("RETAIL_DB=postgres needs RETAIL_PG_URL, e.g. postgresql://postgres@127.0.0.1:5432/postgres")
        return PostgresDatabase(url, setup=_schema.setup, name=name, max_live=max_live,
                                pool_size=int(os.environ.get("RETAIL_DB_POOL", "8")))
    raise ValueError(f"RETAIL_DB must be 'sqlite' or 'postgres', got {kind!r}")


def _on_sql(served: Callable[..., Any]) -> Callable[..., str]:
    """A sync tool with ``served``'s signature and description, running its SQL on ``rollout.db``."""
    name = served.__name__

    @functools.wraps(served)
    def tool(*, rollout: Rollout, **arguments: Any) -> str:
        try:
            return call_sql_tool(rollout.db, name, arguments)
        except RetailError as exc:
            raise ToolError(str(exc)) from exc

    return tool


TOOLS = [_on_sql(t) for t in (*_server_tools.SERVED_TOOLS, _server_tools.get_order_status)]
server = ToolServer(tools=TOOLS, graders=[retail, order_status], db=make_db())
