"""Per-tool ``timeout_s`` and ``max_concurrency`` (``@tool`` / ``@server.tool``), over real uvicorn:
a hung tool costs the model one 400 ``tool_timeout`` answer, not its rollout, and never stalls
other calls; a tool limited to N concurrent calls never runs more than N at once."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid

import httpx
import pytest

from rft_sdk import Rollout, ToolDefinitionError, ToolServer, tool
from rft_sdk.testing import run_server


def _body(name: str, trace_id: str, call_id: str) -> dict:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}", "trace_id": trace_id}


def _server() -> tuple[ToolServer, dict]:
    server = ToolServer(auth_env_var=None)
    seen = {"running": 0, "peak": 0}
    lock = threading.Lock()
    release = threading.Event()  # set by the test once it has its answer: the sync tool is still running until then

    @server.tool(timeout_s=0.2)
    async def hang(*, rollout: Rollout) -> str:
        """Write state, then never answer in time."""
        rollout.state["hung"] = True
        await asyncio.sleep(30)
        return "late"

    @server.tool(timeout_s=0.2)
    def hang_sync(*, rollout: Rollout) -> str:
        """A blocking backend that answers too late."""
        rollout.state["hung_sync"] = True
        release.wait(30)
        return "late"

    @server.tool(max_concurrency=2)
    def narrow() -> str:
        """A backend that takes two connections at most."""
        with lock:
            seen["running"] += 1
            seen["peak"] = max(seen["peak"], seen["running"])
        time.sleep(0.05)
        with lock:
            seen["running"] -= 1
        return "ok"

    @server.tool
    def state(*, rollout: Rollout) -> str:
        """The rollout's state keys."""
        return ",".join(sorted(rollout.state)) or "-"

    seen["release"] = release
    return server, seen


def test_timeout_answers_400_keeps_state_clean_and_the_server_serving():
    server, seen = _server()
    trace = "trace_" + uuid.uuid4().hex
    # Both tools run 30 s unless released (the test releases the sync one only after its answer): an answer within
    # the client's 20 s is the timeout's, whatever the machine's load (was a 0.9 s bound on a 1 s tool).
    with run_server(server) as url, httpx.Client(base_url=url, timeout=20) as client:
        for name in ("hang", "hang_sync"):
            r = client.post(f"/tools/{name}", json=_body(name, trace, f"c-{name}"))
            assert r.status_code == 400 and r.json()["error"]["code"] == "tool_timeout", r.text
            assert "0.2 s" in r.json()["error"]["message"] and "output" not in r.json()
            # replay of the same call_id: the recorded answer
            assert client.post(f"/tools/{name}", json=_body(name, trace, f"c-{name}")).json() == r.json()
        assert client.post("/tools/state", json=_body("state", trace, "c-state")).json()["output"] == "-"
        seen["release"].set()
    assert server.metrics["counters"]["tool_timeouts"] == 2


def test_max_concurrency_bounds_parallel_calls_of_one_tool():
    server, seen = _server()

    async def burst(url: str) -> list[int]:
        async with httpx.AsyncClient(base_url=url, timeout=10) as client:
            calls = [client.post("/tools/narrow", json=_body("narrow", f"trace_{i}", f"c{i}")) for i in range(8)]
            return [r.status_code for r in await asyncio.gather(*calls)]

    with run_server(server) as url:
        assert asyncio.run(burst(url)) == [200] * 8
    assert seen["peak"] == 2


@pytest.mark.parametrize(("options", "culprit"), [({"timeout_s": 0}, "timeout_s"), ({"timeout_s": "1"}, "timeout_s"),
                                                  ({"max_concurrency": 0}, "max_concurrency")])
def test_bad_limits_fail_at_decoration_naming_the_option(options, culprit):
    def f() -> str:
        """Nothing."""
        return ""

    with pytest.raises(ToolDefinitionError, match=rf"tool .*f: {culprit} must be"):
        tool(**options)(f)
