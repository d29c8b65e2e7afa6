"""The connections a tool gets as ``rollout.db``: real driver connections whose
transaction the SDK owns for the length of one tool call.

Each class subclasses the driver's own connection class (``isinstance`` checks
of libraries such as pandas or SQLAlchemy hold) and changes three things while
a call is running:

* ``commit()`` keeps the work done so far *within this call*: it releases the
  savepoint ``rft_user`` and opens it again. The SDK commits for real when the
  tool returns, so a tool that commits and then raises still leaves the
  database unchanged (hosted protocol: the model sees the error, the rollout
  goes on from the state before the call).
* ``rollback()`` undoes back to the last ``commit()`` of this call
  (``ROLLBACK TO SAVEPOINT rft_user``): what the user's code expects of it.
* ``close()`` and ``with conn:`` do not close: the SDK owns the connection.

SQL text that issues ``COMMIT`` itself is not intercepted (documented in
docs/database.md). Outside a call (the SDK's own use) the classes behave as
their drivers do.
"""

from __future__ import annotations

import sqlite3
from types import TracebackType
from typing import Any, Literal

__all__ = ["SAVEPOINT", "SQLiteConnection", "pg_classes"]

#: Name of the savepoint that marks the last ``commit()`` inside a tool call.
SAVEPOINT = "rft_user"


class SQLiteConnection(sqlite3.Connection):
    """``sqlite3.Connection`` opened with ``isolation_level=None``; the SDK issues ``BEGIN`` itself."""

    rft_owned = False

    def rft_begin(self) -> None:
        """Start the call's transaction (``BEGIN IMMEDIATE``: the writer lock is taken up front)."""
        super().execute("BEGIN IMMEDIATE")
        super().execute(f"SAVEPOINT {SAVEPOINT}")
        self.rft_owned = True

    def rft_end(self, commit: bool) -> None:
        """Commit or roll back the whole call; the connection is the driver's again."""
        self.rft_owned = False
        if self.in_transaction:
            super().execute("COMMIT" if commit else "ROLLBACK")

    def commit(self) -> None:
        if not self.rft_owned:
            super().commit()
            return
        super().execute(f"RELEASE {SAVEPOINT}")
        super().execute(f"SAVEPOINT {SAVEPOINT}")

    def rollback(self) -> None:
        if not self.rft_owned:
            super().rollback()
            return
        super().execute(f"ROLLBACK TO {SAVEPOINT}")

    def close(self) -> None:
        if not self.rft_owned:
            super().close()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        if not self.rft_owned:
            return super().__exit__(exc_type, exc, tb)
        if exc_type is None:
            self.commit()
        else:
            self.rollback()
        return False


_PG_CLASSES: tuple[type[Any], type[Any]] | None = None


def pg_classes() -> tuple[type[Any], type[Any]]:
    """``(PostgresConnection, AsyncPostgresConnection)``: subclasses of ``psycopg.Connection``
    and ``psycopg.AsyncConnection`` with the behaviour of the module docstring (built on first use,
    so that importing ``rft_sdk`` never imports psycopg).

    Raises:
        ImportError: psycopg is not installed (``pip install "rft-sdk[postgres]"``).
    """
    global _PG_CLASSES
    if _PG_CLASSES is not None:
        return _PG_CLASSES
    import psycopg

    class PostgresConnection(psycopg.Connection[Any]):
        """``psycopg.Connection`` (not autocommit) whose transaction the SDK owns during a call."""

        rft_owned = False

        def rft_begin(self, setup: str = "") -> None:
            """Open the call's savepoint; ``setup``: SQL statements (no parameters) sent before it in the same
            round trip (simple query protocol)."""
            super().execute(f"{setup}; SAVEPOINT {SAVEPOINT}" if setup else f"SAVEPOINT {SAVEPOINT}")  # after BEGIN
            self.rft_owned = True

        def rft_end(self, commit: bool) -> None:
            self.rft_owned = False
            super().commit() if commit else super().rollback()

        def commit(self) -> None:
            if not self.rft_owned:
                super().commit()
                return
            self.execute(f"RELEASE SAVEPOINT {SAVEPOINT}")
            self.execute(f"SAVEPOINT {SAVEPOINT}")

        def rollback(self) -> None:
            if not self.rft_owned:
                super().rollback()
                return
            self.execute(f"ROLLBACK TO SAVEPOINT {SAVEPOINT}")

        def close(self) -> None:
            if not self.rft_owned:
                super().close()

        def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                     tb: TracebackType | None) -> None:
            if not self.rft_owned:
                super().__exit__(exc_type, exc, tb)
            elif exc_type is None:
                self.commit()
            else:
                self.rollback()

    class AsyncPostgresConnection(psycopg.AsyncConnection[Any]):
        """``psycopg.AsyncConnection``, same behaviour, for ``async def`` tools."""

        rft_owned = False

        async def rft_begin(self) -> None:
            await super().execute(f"SAVEPOINT {SAVEPOINT}")
            self.rft_owned = True

        async def rft_end(self, commit: bool) -> None:
            self.rft_owned = False
            await (super().commit() if commit else super().rollback())

        async def commit(self) -> None:
            if not self.rft_owned:
                await super().commit()
                return
            await self.execute(f"RELEASE SAVEPOINT {SAVEPOINT}")
            await self.execute(f"SAVEPOINT {SAVEPOINT}")

        async def rollback(self) -> None:
            if not self.rft_owned:
                await super().rollback()
                return
            await self.execute(f"ROLLBACK TO SAVEPOINT {SAVEPOINT}")

        async def close(self) -> None:
            if not self.rft_owned:
                await super().close()

        async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                            tb: TracebackType | None) -> None:
            if not self.rft_owned:
                await super().__aexit__(exc_type, exc, tb)
            elif exc_type is None:
                await self.commit()
            else:
                await self.rollback()

    _PG_CLASSES = (PostgresConnection, AsyncPostgresConnection)
    return _PG_CLASSES
