"""SQLAlchemy over ``rollout.db``: ``sqlalchemy_engine(rollout)``, ``sqlalchemy_session(rollout)``.

For a service whose code takes an ``Engine``, a ``Connection`` or an ORM
``Session``. The engine wraps the very connection the SDK handed the tool
(one ``StaticPool`` connection), so everything runs in the call's transaction:
``session.commit()`` keeps the work within the call, the SDK commits it when
the tool returns and rolls the whole call back when it raises. Needs
``pip install "rft-sdk[sqlalchemy]"``; imported only when called.
"""

from __future__ import annotations

from typing import Any

from ..exceptions import RFTError

__all__ = ["sqlalchemy_engine", "sqlalchemy_session"]


def sqlalchemy_engine(rollout: Any) -> Any:
    """A ``sqlalchemy.Engine`` whose one connection is ``rollout.db`` (valid during this tool call).

    Raises:
        RFTError: SQLAlchemy is not installed, or the server has no database.
    """
    try:
        from sqlalchemy import create_engine
        from sqlalchemy.pool import StaticPool
    except ImportError as exc:
        raise RFTError(f'sqlalchemy_engine needs SQLAlchemy ({exc}): pip install "rft-sdk[sqlalchemy]"') from exc
    conn = rollout.db
    module = type(conn).__mro__[1].__module__
    url = "sqlite://" if module.startswith("sqlite3") else "postgresql+psycopg://"
    return create_engine(url, creator=lambda: conn, poolclass=StaticPool)


def sqlalchemy_session(rollout: Any, **options: Any) -> Any:
    """A ``sqlalchemy.orm.Session`` on :func:`sqlalchemy_engine` (``options`` go to ``Session``).

    Raises:
        RFTError: SQLAlchemy is not installed, or the server has no database.
    """
    engine = sqlalchemy_engine(rollout)
    from sqlalchemy.orm import Session
    return Session(engine, **options)
