"""Store selection by URL: ``store_from_url`` and ``default_store`` (``RFT_STORE_URL``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from .._wire._redact import redact_url
from ._base import RolloutStore
from ._memory import MemoryStore

__all__ = ["STORE_URL_ENV", "default_store", "store_from_url"]

#: Environment variable naming the store when none is passed in code.
STORE_URL_ENV = "RFT_STORE_URL"

_NUMBERS: dict[str, Any] = {"ttl_s": float, "max_rollouts": int, "max_rollout_bytes": int, "max_total_bytes": int,
                            "lock_timeout_s": float, "lease_s": float, "persistence": str}


def _options(query: str, url: str) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for name, text in parse_qsl(query, keep_blank_values=True):
        if name not in _NUMBERS:
            raise ValueError(f"store URL {redact_url(url)!r}: unknown option {name!r}; known: {sorted(_NUMBERS)}")
        try:
            options[name] = _NUMBERS[name](text)
        except ValueError:
            raise ValueError(f"store URL {redact_url(url)!r}: option {name}={text!r} is not a number") from None
    return options


def store_from_url(url: str) -> RolloutStore:
    """Build the store a URL names.

    * ``memory://`` -- ``MemoryStore`` (one process).
    * ``sqlite:///abs/path.db`` or ``sqlite://rel/path.db`` -- ``SQLiteStore`` (processes of one host).
    * ``redis://[:password@]host:port/db`` or ``rediss://...`` (TLS) -- ``RedisStore`` (many hosts).

    Bounds go in the query string, e.g.
    ``redis://cache:6379/0?ttl_s=1800&max_total_bytes=1073741824`` (options:
    ``ttl_s``, ``max_rollouts``, ``max_rollout_bytes``, ``max_total_bytes``
    for every store; ``lock_timeout_s``, ``lease_s`` for SQLite and Redis;
    ``persistence=require|warn|off`` for Redis, see ``RedisStore``).
    For Redis, options other than these stay in the URL for the client
    (e.g. ``ssl_cert_reqs``, and the pool's ``max_connections`` and ``timeout``).

    Raises:
        ValueError: unknown scheme, missing path, unknown or non-numeric option, invalid bound.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "memory":
        options = _options(parts.query, url)
        for name in ("lock_timeout_s", "lease_s", "persistence"):
            options.pop(name, None)
        return MemoryStore(**options)
    if scheme == "sqlite":
        from ._sqlite import SQLiteStore

        path = parts.netloc + parts.path
        if not path or path == "/":
            raise ValueError(f"store URL {redact_url(url)!r}: sqlite needs a file path, e.g. sqlite:///var/lib/rft/rollouts.db")
        options = _options(parts.query, url)
        options.pop("persistence", None)
        return SQLiteStore(path, **options)
    if scheme in ("redis", "rediss"):
        from ._redis import RedisStore

        ours = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k in _NUMBERS]
        theirs = "&".join(f"{k}={v}" for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in _NUMBERS)
        options = _options("&".join(f"{k}={v}" for k, v in ours), url)
        return RedisStore(parts._replace(query=theirs).geturl(), **options)
    raise ValueError(f"store URL {redact_url(url)!r}: unknown scheme {parts.scheme!r}; use memory://, sqlite:///path, "
                     "redis://host:port/db or rediss://host:port/db")


def default_store(environ: Mapping[str, str] | None = None) -> RolloutStore:
    """The store for a ``ToolServer`` built without one: ``store_from_url($RFT_STORE_URL)``,
    or ``MemoryStore()`` when the variable is unset or empty.

    Raises:
        ValueError: ``RFT_STORE_URL`` is set but invalid (message names the variable).
    """
    url = (os.environ if environ is None else environ).get(STORE_URL_ENV, "").strip()
    if not url:
        return MemoryStore()
    try:
        return store_from_url(url)
    except ValueError as exc:
        raise ValueError(f"{STORE_URL_ENV}: {exc}") from exc
