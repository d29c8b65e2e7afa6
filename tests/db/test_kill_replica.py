"""A replica (a real ``rft serve`` process) killed with SIGKILL mid-rollout leaves no database
behind once the TTL has passed and another replica sweeps."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid

import httpx
import pytest
from db_helpers import ROOT, Client, make_db

from rft_sdk.testing import free_port

pytestmark = pytest.mark.slow  # a long file: the scheduler starts it first (tests/conftest.py)


def start_replica(env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "rft_sdk", "serve", "tests.db.db_replica_app:server",
                             "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                            cwd=ROOT, env={**os.environ, **env, "PYTHONPATH": str(ROOT / "tests" / "db")})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return proc, url
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("replica did not start")
        time.sleep(0.1)


def leftovers(backend: str, survivor, pg_url: str | None) -> list[str]:
    """Every per-rollout or scratch database of the survivor's name still present."""
    if backend == "sqlite":
        return sorted(p.name for p in survivor.dir.iterdir() if p.name.startswith(("r-", "gold-", ".tmp-")))
    import psycopg
    catalogue = "SELECT datname FROM pg_database WHERE datname LIKE %s" if backend == "postgres" else \
        "SELECT nspname FROM pg_namespace WHERE nspname LIKE %s"  # postgres-schema: a schema per rollout
    with psycopg.connect(pg_url, autocommit=True) as conn:
        names = [r[0] for r in conn.execute(catalogue, (survivor.name + "\\_%",)).fetchall()]
        rows = conn.execute("SELECT name FROM rft_rollout_databases WHERE prefix = %s", (survivor.name,)).fetchall()
    return sorted({n for n in names if n not in (survivor.template_name, survivor.ref_name)} | {r[0] for r in rows})


async def test_kill_9_of_a_replica_leaves_no_database_after_the_ttl_sweep(backend, tmp_path, request):
    pg_url = request.getfixturevalue("pg_url") if backend.startswith("postgres") else None
    name = f"k{uuid.uuid4().hex[:10]}"
    ttl_s = 8.0  # generous: the first sweep must come within the TTL on a loaded machine
    env = {"RFT_TEST_DB_BACKEND": backend, "RFT_TEST_DB_NAME": name, "RFT_TEST_DB_DIR": str(tmp_path / name),
           "RFT_TEST_PG_URL": pg_url or "", "RFT_TEST_DB_OPTIONS": json.dumps({"ttl_s": ttl_s, "sweep_interval_s": 3600})}
    survivor = make_db(backend, tmp_path=tmp_path, pg_url=pg_url, name=name, ttl_s=ttl_s, sweep_interval_s=3600)
    proc, url = start_replica(env)
    try:
        client = Client(url)
        for trace in ("a", "b"):
            assert (await client.call(trace, "put", {"k": "x", "v": 1})).status_code == 200
        in_flight = asyncio.ensure_future(client.call("c", "slow_put", {"k": "y", "v": 2, "seconds": 60}))
        await asyncio.sleep(1.0)  # the call holds an open transaction on c's database
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert isinstance((await asyncio.gather(in_flight, return_exceptions=True))[0], httpx.TransportError)
        await client.aclose()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    try:
        databases = [n for n in leftovers(backend, survivor, pg_url) if n.startswith(("r-", f"{name}_r_"))
                     and not n.endswith(("-journal", "-wal", "-shm"))]
        assert len(databases) == 3  # a, b and the killed call's c (its hot journal too, on SQLite; the
        # replica's warm pool on PostgreSQL, which no living replica keeps fresh: it expires as well)
        assert await survivor.sweep() == 0  # within the TTL nothing is reaped
        await asyncio.sleep(ttl_s + 0.5)
        assert await survivor.sweep() == 3
        assert leftovers(backend, survivor, pg_url) == []
    finally:
        survivor.close()
        survivor.drop_all()
        survivor.close()
