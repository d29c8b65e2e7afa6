"""``/readyz`` follows the store (a real redis-server stopped and started), ``rft serve`` refuses a dead store,
and the exposure warning comes from the bind address at startup (plain uvicorn, first request local)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from preflight_helpers import TOKEN, write_app

from rft_sdk import RedisStore, ToolServer
from rft_sdk.testing import RedisServer, free_port, run_server, serve_process


@pytest.fixture
def redis(tmp_path) -> Iterator[RedisServer]:
    if shutil.which("redis-server") is None:
        message = "redis-server is not installed (apt-get install redis-server)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    with RedisServer(tmp_path) as server:  # stopped and started again by the test
        yield server


def _call(trace: str) -> dict:
    return {"type": "function_call", "id": "fc_1", "call_id": "call_" + trace, "name": "ping",
            "arguments": '{"x": 1}', "trace_id": trace, "item": {}}


def test_readyz_is_503_while_redis_is_down_and_200_once_it_is_back(redis):
    server = ToolServer(store=RedisStore(redis.url, prefix="readyz:"), auth_tokens=[TOKEN], auth_env_var=None)

    @server.tool
    def ping(x: int) -> int:
        return x

    auth = {"Authorization": f"Bearer {TOKEN}"}
    with run_server(server) as url, httpx.Client(base_url=url, timeout=10) as client:
        up = client.get("/readyz")  # open, like /healthz: probes carry no token
        assert up.status_code == 200 and up.json() == {"status": "ready", "checks": {"store": "ok"}}
        assert client.post("/tools/ping", json=_call("trace_a"), headers=auth).status_code == 200
        redis.stop()
        down = client.get("/readyz")
        assert down.status_code == 503 and down.json() == {"status": "unavailable", "checks": {"store": "failed"}}
        assert "redis" not in down.text.lower()  # the reason (hosts, passwords in URLs) is logged, not served
        assert client.get("/healthz").status_code == 200  # liveness: the process still answers
        refused = client.post("/tools/ping", json=_call("trace_b"), headers=auth)
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "store_unavailable"
        redis.start()
        deadline = time.monotonic() + 20
        while (back := client.get("/readyz")).status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert back.status_code == 200 and back.json()["checks"] == {"store": "ok"}
        assert client.post("/tools/ping", json=_call("trace_c"), headers=auth).status_code == 200


def test_user_checks_count_sync_async_failing_and_hanging(tmp_path):
    server = ToolServer(auth_env_var=None)
    state = {"db": True}

    @server.readiness_check
    def db() -> bool:
        return state["db"]

    @server.readiness_check(name="search_index")
    async def index() -> None:
        if state.get("index_down"):
            raise ConnectionError("index unreachable")

    with pytest.raises(ValueError, match="already exists"):
        server.readiness_check(lambda: True, name="store")
    server.readiness.timeout_s = 0.2
    with run_server(server) as url:
        assert httpx.get(f"{url}/readyz").json() == {"status": "ready", "checks": {
            "store": "ok", "db": "ok", "search_index": "ok"}}
        state["db"] = False
        r = httpx.get(f"{url}/readyz")
        assert r.status_code == 503 and r.json()["checks"] == {"store": "ok", "db": "failed", "search_index": "ok"}
        state.update(db=True, index_down=True)
        assert httpx.get(f"{url}/readyz").json()["checks"]["search_index"] == "failed"
        state["index_down"] = False

        @server.readiness_check
        async def slow() -> None:
            import asyncio

            await asyncio.sleep(5)

        t0 = time.monotonic()
        r = httpx.get(f"{url}/readyz", timeout=10)
        assert r.status_code == 503 and r.json()["checks"]["slow"] == "failed" and time.monotonic() - t0 < 3


def test_rft_serve_fails_fast_when_the_store_does_not_answer(tmp_path, redis):
    app = write_app(tmp_path)
    dead = f"redis://:pw-{'x' * 20}@127.0.0.1:{free_port()}/0"
    for workers in ("1", "2"):
        t0 = time.monotonic()
        result = subprocess.run([sys.executable, "-m", "rft_sdk", "serve", app, "--port", str(free_port()),
                                 "--store", dead, "--workers", workers], cwd=tmp_path, capture_output=True,
                                text=True, timeout=60)
        assert result.returncode != 0 and time.monotonic() - t0 < 30
        assert "the rollout store RedisStore does not answer" in result.stderr and "RFT_STORE_URL" in result.stderr
        assert "Traceback" not in result.stderr and "x" * 20 not in result.stderr  # one line, password masked
    with serve_process(app, "--store", redis.url, cwd=tmp_path, health_path="/readyz") as url:
        assert httpx.get(f"{url}/readyz").json()["checks"] == {"store": "ok"}


def _serve_and_stop(cmd: list[str], port: int, cwd: Path) -> str:
    """Start a server, make one request from 127.0.0.1, stop it; return its stderr."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={k: v for k, v in os.environ.items() if k != "RFT_AUTH_TOKENS"})
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            assert proc.poll() is None and time.monotonic() < deadline, "server did not start"
            time.sleep(0.1)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    return err


@pytest.mark.parametrize("host, warned", [("0.0.0.0", True), ("127.0.0.1", False)])
def test_exposure_warning_under_plain_uvicorn_from_the_bind_address(tmp_path, host, warned):
    app = write_app(tmp_path)  # no token configured
    port = free_port()
    err = _serve_and_stop([sys.executable, "-m", "uvicorn", app, "--host", host, "--port", str(port)], port, tmp_path)
    assert ("WITHOUT authentication" in err) is warned, err
    if warned:
        assert f"on {host}" in err and err.count("WITHOUT authentication") == 1
        # logged during startup, before any request (the first one came from 127.0.0.1 and changed nothing)
        assert err.index("WITHOUT authentication") < err.index("Application startup complete")


def test_rft_serve_warns_once_on_a_public_bind(tmp_path):
    app = write_app(tmp_path)
    port = free_port()
    err = _serve_and_stop([sys.executable, "-m", "rft_sdk", "serve", app, "--host", "0.0.0.0", "--port", str(port)],
                          port, tmp_path)
    assert err.count("WITHOUT authentication") == 1, err
