"""Admission (rft_sdk._server._admission, issue #40): a burst queues instead of being refused; in-flight rollouts
first, clients in turn, 503 with Retry-After only past the wait bound or a client's quota."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from rft_sdk import Admission, ToolServer
from rft_sdk._server._connections import FD_RESERVE, connection_limit, raise_open_file_limit
from rft_sdk.emulator import ClientSettings, EndpointClient, EndpointFailure, JobTool, ToolCall, ToolCallResult
from rft_sdk.emulator._client import retry_after_s
from rft_sdk.emulator._metrics import server_load
from rft_sdk.protocol import QUEUE_WAIT_HEADER


async def _hold(admission: Admission, client: str, in_flight: bool, order: list[str], name: str,
                release: asyncio.Event) -> None:
    async with admission.slot(lambda: (client, in_flight)):
        order.append(name)
        await release.wait()


async def test_free_slot_admits_at_once_and_counts_back():
    admission = Admission(max_active=2)
    async with admission.slot(lambda: pytest.fail("who() is asked only when the request must wait")):
        assert admission.active == 1
    assert admission.stats() == {"active": 0, "waiting": 0, "queued_total": 0, "refused": 0,
                                 "finish_rate_per_s": 0.0}


async def test_in_flight_rollouts_go_before_new_ones_and_clients_take_turns():
    admission = Admission(max_active=1)
    order: list[str] = []
    gates = {name: asyncio.Event() for name in ("first", "a-new1", "a-new2", "b-new1", "a-inflight", "b-inflight")}
    tasks = [asyncio.create_task(_hold(admission, "a", False, order, "first", gates["first"]))]
    await asyncio.sleep(0)
    # arrival order: new requests of client a (two) and b, then in-flight ones of a and b
    for name, client, in_flight in (("a-new1", "a", False), ("a-new2", "a", False), ("b-new1", "b", False),
                                    ("a-inflight", "a", True), ("b-inflight", "b", True)):
        tasks.append(asyncio.create_task(_hold(admission, client, in_flight, order, name, gates[name])))
        await asyncio.sleep(0)
    assert admission.waiting == 5 and admission.active == 1
    for name in ("first", "a-inflight", "b-inflight", "a-new1", "b-new1", "a-new2"):
        await asyncio.sleep(0.01)
        gates[name].set()
    await asyncio.gather(*tasks)
    # in-flight class first (a, then b in turn), then the new class with a and b alternating
    assert order == ["first", "a-inflight", "b-inflight", "a-new1", "b-new1", "a-new2"]
    assert admission.active == 0 and admission.waiting == 0 and admission.queued_total == 5


async def test_client_quota_refuses_with_retry_after_and_leaves_others_alone():
    admission = Admission(max_active=1, max_queued_per_client=1)
    release = asyncio.Event()
    order: list[str] = []
    busy = asyncio.create_task(_hold(admission, "a", False, order, "busy", release))
    await asyncio.sleep(0)
    queued = asyncio.create_task(_hold(admission, "a", False, order, "a2", release))
    await asyncio.sleep(0)
    with pytest.raises(Exception) as refused:
        async with admission.slot(lambda: ("a", False)):
            pytest.fail("over its quota: must not run")
    assert refused.value.status == 503 and refused.value.code == "server_busy"  # type: ignore[attr-defined]
    assert int(refused.value.headers["Retry-After"]) >= 1  # type: ignore[attr-defined]
    other = asyncio.create_task(_hold(admission, "b", False, order, "b1", release))  # another client still queues
    await asyncio.sleep(0)
    assert admission.waiting == 2 and admission.refused == 1
    release.set()
    await asyncio.gather(busy, queued, other)
    assert order == ["busy", "a2", "b1"]


async def test_wait_past_the_bound_is_refused_with_retry_after_within_bound_is_queued():
    admission = Admission(max_active=1, max_wait_s=0.5, rate_window_s=0.05)
    release = asyncio.Event()
    order: list[str] = []

    async def quick(name: str) -> None:
        async with admission.slot(lambda: ("a", False)):
            order.append(name)
            await asyncio.sleep(0.02)  # about 50 requests per second

    holder = asyncio.create_task(_hold(admission, "a", False, order, "holder", release))
    await asyncio.sleep(0)
    waiting = [asyncio.create_task(quick(f"q{i}")) for i in range(10)]
    await asyncio.sleep(0)
    release.set()
    await asyncio.sleep(0.12)  # a few finish: the rate is measured (about 50/s)
    assert admission.stats()["finish_rate_per_s"] > 0
    # 10 ahead at ~50/s is within 0.5 s: still queued; 200 more would be ~4 s ahead: refused
    more = [asyncio.create_task(quick(f"m{i}")) for i in range(40)]
    results = await asyncio.gather(*waiting, *more, holder, return_exceptions=True)
    refusals = [r for r in results if isinstance(r, Exception)]
    assert refusals, "a request estimated past the bound must be answered 503"
    assert all(r.status == 503 and int(r.headers["Retry-After"]) >= 1 for r in refusals)  # type: ignore[attr-defined]
    assert all(f"q{i}" in order for i in range(10))  # queued ones are never refused later
    assert admission.active == 0 and admission.waiting == 0


async def test_cancelled_waiter_leaves_the_queue_and_a_handed_slot_passes_on():
    admission = Admission(max_active=1)
    release = asyncio.Event()
    order: list[str] = []
    holder = asyncio.create_task(_hold(admission, "a", False, order, "holder", release))
    await asyncio.sleep(0)
    gone = asyncio.create_task(_hold(admission, "a", False, order, "gone", release))
    last = asyncio.create_task(_hold(admission, "b", False, order, "last", release))
    await asyncio.sleep(0)
    gone.cancel()
    await asyncio.sleep(0)
    assert admission.waiting == 1
    release.set()
    await asyncio.gather(holder, last)
    assert order == ["holder", "last"] and admission.active == 0


def test_bad_bounds_are_refused():
    for kwargs in ({"max_active": 0}, {"max_wait_s": 0}, {"max_queued_per_client": 0}, {"rate_window_s": 0}):
        with pytest.raises(ValueError, match="admission bounds"):
            Admission(**kwargs)


async def test_server_queues_a_burst_past_max_active_and_answers_every_call():
    """2 slots, 40 calls of a tool that awaits: all answered 200 (none refused), never more than 2 at once."""
    running = peak = 0

    async def slow(x: int) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return str(x)

    server = ToolServer(admission=Admission(max_active=2))
    server.tool(slow)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as client:
        async def call(i: int) -> httpx.Response:
            body = {"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i}", "name": "slow",
                    "arguments": json.dumps({"x": i}), "trace_id": f"trace_{i % 5}", "item": {"k": i % 5}}
            return await client.post("/tools/slow", json=body)

        answers = await asyncio.gather(*(call(i) for i in range(40)))
    assert [a.status_code for a in answers] == [200] * 40
    assert sorted(int(a.json()["output"]) for a in answers) == list(range(40))
    assert peak == 2 and server.admission.queued_total > 0 and server.admission.refused == 0
    waited = [a for a in answers if QUEUE_WAIT_HEADER in a.headers]
    assert len(waited) == server.admission.queued_total  # each queued answer says how long it waited
    assert all(float(a.headers[QUEUE_WAIT_HEADER]) > 0 for a in waited)
    assert QUEUE_WAIT_HEADER not in answers[0].headers  # the first ones found a free slot


def test_summary_says_when_the_server_was_the_bottleneck():
    calm = [ToolCallResult("a", "c", "t", "{}", status=200, attempts=1)]
    assert server_load(calm) == {"calls_queued": 0, "queue_wait_s": {"mean": None, "max": None},
                                 "calls_retried": 0, "bottleneck": False}
    busy = calm + [ToolCallResult("b", "d", "t", "{}", status=200, attempts=1, queued_s=0.5),
                   ToolCallResult("e", "f", "t", "{}", status=200, attempts=2, queued_s=1.5)]
    assert server_load(busy) == {"calls_queued": 2, "queue_wait_s": {"mean": 1.0, "max": 1.5},
                                 "calls_retried": 1, "bottleneck": True}


def test_retry_after_header_values():
    assert retry_after_s("3") == 3.0 and retry_after_s(" 0.5 ") == 0.5
    for bad in (None, "", "soon", "-1", "inf", "Wed, 21 Oct 2015 07:28:00 GMT"):
        assert retry_after_s(bad) is None


async def test_emulator_waits_retry_after_before_retrying():
    """A 503 with Retry-After: 0.4 is retried after about 0.4 s (plus jitter), not the 0.01 s backoff."""
    times: list[float] = []

    async def app(scope, receive, send):
        assert scope["type"] == "http"
        await receive()
        times.append(asyncio.get_running_loop().time())
        busy = len(times) == 1
        body = b'{"type":"error","error":{"code":"server_busy"}}' if busy else b'{"output":"ok"}'
        headers = [(b"content-type", b"application/json")] + ([(b"retry-after", b"0.4")] if busy else [])
        await send({"type": "http.response.start", "status": 503 if busy else 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    settings = ClientSettings(backoff_initial_s=0.01, backoff_max_s=0.01, jitter=0.25)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app)) as http:
        client = EndpointClient(http, settings)
        tool = JobTool(name="t", server_url="http://t/tools/t")
        result = await client.call_tool(tool, ToolCall(id="fc_1", call_id="c1", name="t", arguments="{}"),
                                        trace_id="trace_1", item={})
    assert result.ok and result.attempts == 2
    # at least the 0.4 s asked (the backoff alone is 0.01 s); the upper bound only tells it from a retry that
    # ignored the header's value for a longer one, with room for a loaded machine's late timer
    assert 0.4 <= times[1] - times[0] < 0.4 * 1.25 + 1.5


async def test_emulator_without_retry_after_still_gives_up_after_the_hosted_retries():
    async def app(scope, receive, send):
        await receive()
        await send({"type": "http.response.start", "status": 503, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    settings = ClientSettings(backoff_initial_s=0.001, backoff_max_s=0.001)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app)) as http:
        with pytest.raises(EndpointFailure) as failed:
            await EndpointClient(http, settings).call_tool(
                JobTool(name="t", server_url="http://t/tools/t"),
                ToolCall(id="fc_1", call_id="c1", name="t", arguments="{}"), trace_id="trace_1", item={})
    assert failed.value.attempts == 4 and failed.value.reason == "server_error"


def test_open_file_limit_is_raised_to_the_hard_limit():
    import resource

    soft, hard = raise_open_file_limit()
    now_soft, now_hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert now_soft == now_hard  # raised to the hard limit
    assert soft == (-1 if now_soft == resource.RLIM_INFINITY else now_soft)
    assert connection_limit(20000, 1000) == 20000 - FD_RESERVE
    assert connection_limit(1024, 1000) == 1000  # never below the floor
    assert connection_limit(-1, 1000) == 65536


@pytest.mark.parametrize("option", [["--timeout-keep-alive", "0"], ["--limit-concurrency", "-1"],
                                    ["--header-timeout-s", "-1"]])
def test_serve_refuses_bad_connection_options_before_loading_the_app(option, capsys):
    from rft_sdk.cli import main

    assert main(["serve", "no_such_module:server", *option]) == 2
    err = capsys.readouterr().err
    assert "must be >= 0" in err and "cannot load" not in err
