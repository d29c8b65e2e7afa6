"""Helpers of the store conformance suite: a real ``redis-server`` and a store factory."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rft_sdk import FakeClock, MemoryStore, RedisStore, RolloutStore, SQLiteStore, ToolCallRecord
from rft_sdk.testing import RedisServer

KINDS = ("memory", "sqlite", "redis")
ROOT = Path(__file__).resolve().parents[2]


def redis_binary() -> str:
    """Path of ``redis-server``; skips the test locally, fails it when ``CI`` is set (never a silent skip)."""
    binary = shutil.which("redis-server")
    if binary is None:
        message = "redis-server is not installed (apt-get install redis-server); the Redis store tests need it"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return binary


@contextlib.contextmanager
def redis_server(*, appendfsync: str = "everysec", directory: Path | None = None,
                 port: int | None = None) -> Iterator[str]:
    """Run a throwaway ``redis-server`` on a free 127.0.0.1 port with an append-only file (what
    ``RedisStore(persistence="require")`` asks for) in ``directory`` (a temporary one by default); yield its URL.
    The same ``directory`` and ``port`` again restart a server over the same data."""
    redis_binary()  # skip locally, fail under CI, when it is missing
    with contextlib.ExitStack() as stack:
        if directory is None:
            directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="rft-redis-")))
        with RedisServer(directory, port=port, appendfsync=appendfsync) as server:
            yield server.url


class Harness:
    """Builds stores of one kind over one backing storage, all reading ``clock``.

    ``make()`` twice gives two objects over the same data (like two workers or
    a restart), except for ``memory`` where each object is its own store.
    """

    def __init__(self, kind: str, tmp_path: Path, redis_url: str | None) -> None:
        self.kind, self.clock = kind, FakeClock()
        self.path = tmp_path / "rollouts.db"
        self.redis_url, self.prefix = redis_url, f"t{uuid.uuid4().hex[:12]}:"
        self.made: list[RolloutStore] = []

    @property
    def shared(self) -> bool:
        return self.kind != "memory"

    def make(self, **kwargs: Any) -> RolloutStore:
        kwargs.setdefault("clock", self.clock)
        store: RolloutStore
        if self.kind == "memory":
            for name in ("lock_timeout_s", "lease_s"):
                kwargs.pop(name, None)
            store = MemoryStore(**kwargs)
        elif self.kind == "sqlite":
            store = SQLiteStore(self.path, **kwargs)
        else:
            assert self.redis_url is not None
            store = RedisStore(self.redis_url, prefix=self.prefix, **kwargs)
        self.made.append(store)
        return store


def record(call_id: str, output: str | None = "ok") -> ToolCallRecord:
    """A recorded call with a deterministic body."""
    return ToolCallRecord(call_id=call_id, id=f"fc_{call_id}", name="add", arguments={"sku": "A", "qty": 2},
                          output=output, error=None if output else "boom", status=200 if output else 400,
                          started_at=1_700_000_000.25, latency_s=0.5)
