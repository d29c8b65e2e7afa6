"""The typed seam and the long-lived session: ToolCall coercion, one set of HTTP clients across runs."""

from __future__ import annotations

import json

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from rft_sdk.emulator import (
    EmulatorSession,
    PolicyStep,
    ScriptedPolicy,
    StepRecord,
    ToolCall,
    check_step,
    make_tool_call,
    run_rollouts,
)
from rft_sdk.testing import run_server


class PortRecorder:
    """A real tool server + grader that records the client (host, port) of every request."""

    def __init__(self) -> None:
        self.peers: list[tuple[str, int]] = []
        self.app = Starlette(routes=[Route("/tools/{name}", self.tool, methods=["POST"]),
                                     Route("/grade", self.grade, methods=["POST"])])

    def _seen(self, request: Request) -> None:
        assert request.client is not None
        self.peers.append((request.client.host, request.client.port))

    async def tool(self, request: Request) -> JSONResponse:
        self._seen(request)
        body = await request.json()
        return JSONResponse({"type": "function_call_output", "call_id": body["call_id"], "id": body["id"],
                             "output": "ok"})

    async def grade(self, request: Request) -> JSONResponse:
        self._seen(request)
        return JSONResponse({"score": 1.0})


def _job(base: str) -> dict:
    return {"tools": [{"name": "a", "server_url": f"{base}/tools/a"}],
            "grader": {"type": "endpoint", "url": f"{base}/grade", "rate_limit": 1000.0},
            "max_episode_steps": 3}


def _policy() -> ScriptedPolicy:
    return ScriptedPolicy([PolicyStep(tool_calls=[{"name": "a", "arguments": {"k": 1}}]), PolicyStep(content="x")])


def test_dict_tool_calls_are_coerced_to_tool_calls() -> None:
    step = check_step(PolicyStep(tool_calls=[{"name": "a", "arguments": {"k": 1}},
                                             make_tool_call("b", "{}", call_id="call_x")]))
    first, second = step.tool_calls
    assert isinstance(first, ToolCall) and first.name == "a" and json.loads(first.arguments) == {"k": 1}
    assert first.id.startswith("fc_") and first.call_id.startswith("call_")
    assert isinstance(second, ToolCall) and second.call_id == "call_x"
    assert first["name"] == "a" and second["call_id"] == "call_x"  # dict-style reads still work
    with pytest.raises(KeyError):
        first["function"]
    assert first.to_chat() == {"id": first.call_id, "type": "function",
                               "function": {"name": "a", "arguments": first.arguments}}


async def test_one_session_keeps_its_clients_and_connections_across_runs() -> None:
    rec = PortRecorder()
    items = [{"messages": [{"role": "user", "content": f"q{i}"}]} for i in range(4)]
    with run_server(rec.app) as base:
        async with EmulatorSession(_job(base), max_concurrency=4) as session:
            first = await session.run(items, _policy(), samples_per_item=2)
            clients = session.http_clients
            ports_first = {p for _, p in rec.peers}
            rec.peers.clear()
            second = await session.run(items, _policy(), samples_per_item=2)
            ports_second = {p for _, p in rec.peers}
            assert session.http_clients == clients and not any(c.is_closed for c in clients)
        assert all(c.is_closed for c in clients)  # closed with the session
        with pytest.raises(RuntimeError, match="closed"):
            await session.run(items, _policy(), samples_per_item=1)

        # the one-shot form opens fresh clients (so fresh connections) every call
        rec.peers.clear()
        await run_rollouts(items, _policy(), _job(base), samples_per_item=2, max_concurrency=4)
        ports_oneshot = {p for _, p in rec.peers}

    for results in (first, second):
        assert len(results) == 8 and all(r.score == 1.0 for r in results)
        assert all(isinstance(s, StepRecord) and all(isinstance(c, ToolCall) for c in s.tool_calls)
                   for r in results for s in r.steps)
    assert ports_second <= ports_first  # the second run reused the first run's keep-alive connections
    assert not ports_oneshot & (ports_first | ports_second)


async def test_session_validates_counts_and_items() -> None:
    with pytest.raises(ValueError, match="max_concurrency"):
        EmulatorSession(_job("http://127.0.0.1:9"), max_concurrency=0)
    async with EmulatorSession(_job("http://127.0.0.1:9")) as session:
        with pytest.raises(ValueError, match="samples_per_item"):
            await session.run([{"messages": []}], _policy(), samples_per_item=0)
        with pytest.raises(ValueError, match="messages"):
            await session.run([{"no": "messages"}], _policy(), samples_per_item=1)
