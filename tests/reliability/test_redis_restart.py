"""What a restart of Redis can and cannot lose, with real ``redis-server`` processes killed and restarted.

Before: with Redis run as ``server_templates/kubernetes/redis.yaml`` ran it (``--save ""``, no AOF), a
restart lost rollouts silently: 4/80 graded 0.0 with 25 answered calls missing, a write executed twice,
37/40 late calls after a grade answered 200 instead of 409. Now ``RedisStore`` refuses such a Redis
(``persistence="require"``, the default), and with ``--appendonly yes --appendfsync always`` a SIGKILL
of Redis mid-run loses nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from rel_helpers import body
from store_helpers import redis_binary

from rft_sdk import GradingContext, RedisStore, Rollout, StoreError, ToolServer
from rft_sdk.testing import RedisServer, free_port, run_server

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def redis_at(tmp_path: Path, *, aof: bool) -> Iterator[RedisServer]:
    redis_binary()  # skip locally, fail under CI, when it is missing
    with RedisServer(tmp_path, appendonly=aof, appendfsync="always") as server:
        yield server


def _server(url: str, **store_options) -> ToolServer:
    server = ToolServer(store=RedisStore(url, prefix=f"r{uuid.uuid4().hex[:8]}:", **store_options),
                        auth_env_var=None)
    server.executions = Counter()

    @server.tool
    def write(sku: str, rollout: Rollout) -> str:
        """A write: one unit of ``sku`` into the rollout's state.

        Args:
            sku: product.
        """
        server.executions[(rollout.trace_id, rollout.call_id)] += 1
        rollout.state["n"] = rollout.state.get("n", 0) + 1
        return str(rollout.state["n"])

    @server.grader
    def grade(ctx: GradingContext) -> float:
        """Calls recorded (the score), checked against the state's count."""
        assert ctx.state.get("n", 0) == len(ctx.trajectory)
        return float(len(ctx.trajectory))

    return server


async def _call(client: httpx.AsyncClient, payload: dict, give_up_s: float = 30.0) -> httpx.Response:
    """POST like the hosted side: the same call_id again on a 5xx or a broken connection."""
    deadline = time.monotonic() + give_up_s
    while True:
        try:
            answer = await client.post(f"/tools/{payload['name']}", json=payload)
            if answer.status_code < 500:
                return answer
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"no answer for {payload['call_id']} within {give_up_s} s")
        await asyncio.sleep(0.1)


def test_sigkill_of_a_redis_with_aof_always_loses_nothing(tmp_path):
    rollouts, calls = 16, 6
    with redis_at(tmp_path, aof=True) as redis_proc:
        server = _server(redis_proc.url)
        with run_server(server) as url:
            def restart() -> None:
                time.sleep(0.6)
                redis_proc.kill()
                time.sleep(0.5)
                redis_proc.start()

            async def scenario() -> tuple[list[str], dict[str, list[int]], list[int]]:
                traces = [f"trace_{uuid.uuid4().hex}" for _ in range(rollouts)]
                answered: dict[str, list[int]] = {t: [] for t in traces}

                async def rollout(client: httpx.AsyncClient, trace: str) -> None:
                    for i in range(calls):
                        answer = await _call(client, body("write", {"sku": "A"}, trace_id=trace, call_id=f"call_{i}"))
                        assert answer.status_code == 200, answer.text
                        answered[trace].append(int(answer.json()["output"]))
                        await asyncio.sleep(0.15)

                async with httpx.AsyncClient(base_url=url, timeout=60) as client:
                    restarter = threading.Thread(target=restart)
                    restarter.start()
                    await asyncio.gather(*(rollout(client, t) for t in traces))
                    restarter.join()
                    scores = []
                    for trace in traces:
                        grade = {"sample": {"output_text": "x"}, "item": {}, "trace_id": trace}
                        for _ in range(100):
                            answer = await client.post("/grade", json=grade)
                            if answer.status_code == 200:
                                break
                            await asyncio.sleep(0.1)
                        scores.append(answer.json()["score"])
                    return traces, answered, scores

            traces, answered, scores = asyncio.run(scenario())
            assert all(answered[t] == list(range(1, calls + 1)) for t in traces)  # no answer lost, none doubled
            assert scores == [float(calls)] * rollouts  # every answered call is in the graded trajectory

            redis_proc.kill()  # a restart after the grades: the tombstones survive it too
            redis_proc.start()

            async def late() -> list[int]:
                async with httpx.AsyncClient(base_url=url, timeout=60) as client:
                    return [(await _call(client, body("write", {"sku": "A"}, trace_id=t))).status_code
                            for t in traces]

            assert asyncio.run(late()) == [409] * rollouts
    executed_again = sum(n - 1 for n in server.executions.values())
    # a call whose save failed while Redis was down ran again on the retry, on the state before it: the state
    # shows each write once (checked above); only effects outside the store could be repeated
    assert executed_again <= rollouts


def test_a_redis_without_aof_is_refused_at_startup_and_the_refusal_names_the_fix(tmp_path):
    with redis_at(tmp_path, aof=False) as redis_proc:
        async def refusals() -> None:
            with pytest.raises(StoreError, match="aof_enabled:0"):
                await _server(redis_proc.url).store.startup()  # what the ASGI lifespan runs first
            with pytest.raises(StoreError, match="aof_enabled:0"):  # mounted without a lifespan: refused on use
                await _server(redis_proc.url).store.load("t")

        asyncio.run(refusals())
        proc = subprocess.run([sys.executable, "-m", "rft_sdk", "serve", "tests.reliability.apps:slow_app",
                               "--port", str(free_port()), "--store", redis_proc.url], cwd=ROOT, capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode != 0
        assert "aof_enabled:0" in proc.stderr and "--appendonly yes" in proc.stderr


def test_warn_mode_starts_and_says_so_loudly_and_shows_what_a_restart_loses(tmp_path, caplog):
    """The defect itself, reproduced where the user opted out: a restart without AOF loses the rollout."""
    with redis_at(tmp_path, aof=False) as redis_proc, caplog.at_level(logging.WARNING, logger="rft_sdk"):
        server = _server(redis_proc.url, persistence="warn")
        with run_server(server) as url:
            assert "WARNING" in caplog.text and "aof_enabled:0" in caplog.text
            trace = f"trace_{uuid.uuid4().hex}"
            for i in range(3):
                assert httpx.post(url + "/tools/write", json=body("write", {"sku": "A"}, trace_id=trace,
                                                                  call_id=f"c{i}")).json()["output"] == str(i + 1)
            redis_proc.kill()
            redis_proc.start()

            async def after() -> httpx.Response:
                async with httpx.AsyncClient(base_url=url, timeout=60) as client:
                    return await _call(client, body("write", {"sku": "A"}, trace_id=trace, call_id="c3"))

            assert asyncio.run(after()).json()["output"] == "1"  # a silent fresh start: what "require" prevents


def test_a_small_pool_waits_instead_of_failing(tmp_path):
    """redis-py's default async pool fails fast past its size; the store's BlockingConnectionPool waits."""
    with redis_at(tmp_path, aof=True) as redis_proc:
        server = _server(redis_proc.url + "?max_connections=2&timeout=30")
        assert server.store.client.connection_pool.max_connections == 2
        with run_server(server) as url:
            async def burst() -> list[int]:
                limits = httpx.Limits(max_connections=100)
                async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
                    answers = await asyncio.gather(*(client.post("/tools/write", json=body("write", {"sku": "A"}))
                                                     for _ in range(100)))
                return [a.status_code for a in answers]

            assert asyncio.run(burst()) == [200] * 100
