"""Thread isolation of tools (issues 26 and 27), over real uvicorn servers.

Before: every sync tool shared anyio's 40 worker threads. 50 hung calls of one tool without
``timeout_s`` took them all, and a 0-second tool with ``timeout_s=1`` in *other* rollouts answered
400 ``tool_timeout`` on 43 % of calls without ever starting (the wait counted toward ``timeout_s``),
recorded in their trajectories, i.e. trained on. ``max_concurrency`` slots were freed at the timeout
while the abandoned thread kept running, so ``max_concurrency=1`` ran two threads at once.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid

import httpx
import pytest
from rel_helpers import body

from rft_sdk import Rollout, ToolServer
from rft_sdk.testing import run_server


class Gauge:
    """Counts calls running at once (thread-safe) and the peak."""

    def __init__(self) -> None:
        self.lock, self.running, self.peak, self.started = threading.Lock(), 0, 0, 0

    def __enter__(self) -> Gauge:
        with self.lock:
            self.running += 1
            self.started += 1
            self.peak = max(self.peak, self.running)
        return self

    def __exit__(self, *exc: object) -> None:
        with self.lock:
            self.running -= 1


async def _burst(url: str, calls: list[tuple[str, dict]]) -> list[httpx.Response]:
    limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        return list(await asyncio.gather(*(client.post(path, json=b) for path, b in calls)))


def test_fifty_hung_calls_of_one_tool_never_time_out_another_tool():
    server = ToolServer(auth_env_var=None)
    release = threading.Event()
    hung = Gauge()

    @server.tool
    def hang() -> str:
        """A backend that does not answer (no timeout_s)."""
        with hung:
            release.wait(30)
        return "late"

    # 10 s: far below the 30 s a call queued behind the hung tool's threads would wait (so the test still
    # fails if it did), far above what an instant call needs on a loaded 2-core machine (1 s flaked there)
    @server.tool(timeout_s=10)
    def quick(rollout: Rollout) -> str:
        """Instant, with a 10 s timeout."""
        rollout.state["n"] = rollout.state.get("n", 0) + 1
        return "ok"

    with run_server(server) as url:
        async def scenario() -> list[httpx.Response]:
            limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
            async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
                hangs = [asyncio.ensure_future(client.post("/tools/hang", json=body("hang"))) for _ in range(50)]
                while hung.running < 40:  # the hung tool holds all its own 40 threads
                    await asyncio.sleep(0.02)
                quick = await asyncio.gather(*(client.post("/tools/quick", json=body("quick")) for _ in range(60)))
                release.set()
                await asyncio.gather(*hangs)
                return list(quick)

        answers = asyncio.run(scenario())
    assert [a.status_code for a in answers] == [200] * 60
    assert server.metrics["counters"].get("tool_timeouts", 0) == 0
    assert hung.peak == 40  # one tool's backlog queued behind itself


def test_max_concurrency_holds_the_slot_until_the_abandoned_thread_really_ends():
    server = ToolServer(auth_env_var=None)
    gauge = Gauge()

    @server.tool(timeout_s=0.3, max_concurrency=1)
    def slow() -> str:
        """Always slower than its timeout."""
        with gauge:
            time.sleep(0.6)
        return "late"

    with run_server(server) as url:
        answers = asyncio.run(_burst(url, [("/tools/slow", body("slow")) for _ in range(4)]))
        deadline = time.monotonic() + 10
        while gauge.running and time.monotonic() < deadline:
            time.sleep(0.05)
    codes = [a.json()["error"]["code"] for a in answers]
    assert codes == ["tool_timeout"] * 4
    assert gauge.peak == 1  # never two threads at once, across timeouts
    assert gauge.started == 4  # every timeout is of a call that ran (the wait for the slot did not count)


def test_a_queue_wait_past_queue_timeout_s_is_a_retryable_503_never_recorded():
    server = ToolServer(auth_env_var=None)
    gate, started = threading.Event(), threading.Event()

    @server.tool(max_concurrency=1, queue_timeout_s=0.3)
    def narrow(rollout: Rollout) -> str:
        """Takes the one slot until released."""
        started.set()
        gate.wait(10)
        rollout.state["done"] = rollout.state.get("done", 0) + 1
        return "ok"

    @server.tool
    def calls(rollout: Rollout) -> str:
        """The rollout's recorded call ids."""
        return ",".join(r.call_id for r in rollout.trajectory)

    trace = f"trace_{uuid.uuid4().hex}"
    with run_server(server) as url:
        async def scenario() -> tuple[httpx.Response, httpx.Response]:
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                holder = asyncio.ensure_future(client.post("/tools/narrow", json=body("narrow")))
                while not started.is_set():  # the first call holds the slot
                    await asyncio.sleep(0.01)
                waiting = await client.post("/tools/narrow", json=body("narrow", trace_id=trace, call_id="call_w"))
                gate.set()
                return await holder, waiting

        holder, waiting = asyncio.run(scenario())
        assert holder.status_code == 200
        assert waiting.status_code == 503 and waiting.json()["error"]["code"] == "tool_busy"
        assert "queue_timeout_s" in waiting.json()["error"]["message"] and "output" not in waiting.json()
        # the hosted retry with the same call_id now runs it: the 503 was not recorded
        retry = httpx.post(url + "/tools/narrow", json=body("narrow", trace_id=trace, call_id="call_w"))
        assert retry.status_code == 200
        listed = httpx.post(url + "/tools/calls", json=body("calls", trace_id=trace)).json()["output"]
    assert listed == "call_w"
    assert server.metrics["counters"]["tool_queue_timeouts"] == 1


def test_a_nonblocking_tool_that_holds_the_loop_is_moved_to_a_thread(caplog):
    server = ToolServer(auth_env_var=None)

    @server.tool(blocking=False)
    def sleepy() -> str:
        """Declared non-blocking, but sleeps (a broken promise)."""
        time.sleep(1.5)
        return "slept"

    @server.tool
    async def fast() -> str:
        """Instant."""
        return "fast"

    definition = server.tools["sleepy"]
    assert definition.on_loop
    with caplog.at_level(logging.WARNING, logger="rft_sdk"), run_server(server) as url:
        assert httpx.post(url + "/tools/sleepy", json=body("sleepy")).json()["output"] == "slept"
        assert not definition.on_loop and "held the event loop" in caplog.text

        async def scenario() -> float:
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                slow = asyncio.ensure_future(client.post("/tools/sleepy", json=body("sleepy")))
                await asyncio.sleep(0.2)
                t0 = time.perf_counter()
                await client.post("/tools/fast", json=body("fast"))
                elapsed = time.perf_counter() - t0
                await slow
                return elapsed

        assert asyncio.run(scenario()) < 1.0  # served while the sleepy call (1.5 s) runs, in a thread now
    assert caplog.text.count("held the event loop") == 1


@pytest.mark.parametrize("value", [0, -1, "5", True])
def test_queue_timeout_must_be_positive_seconds(value):
    from rft_sdk import ToolDefinitionError, tool

    def f() -> str:
        """Nothing."""
        return ""

    with pytest.raises(ToolDefinitionError, match="queue_timeout_s must be a positive number"):
        tool(queue_timeout_s=value)(f)
