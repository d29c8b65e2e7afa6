"""Rollout loop behaviour over an in-process ASGI app: concurrency, rate limit, policies, real timeouts."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
import respx
from emu_helpers import FAST, GRADER_URL, make_item, make_job
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from rft_sdk.emulator import (
    ClientSettings,
    PerturbedReplayPolicy,
    PolicyError,
    PolicyStep,
    RateLimiter,
    ReferenceReplayPolicy,
    ScriptedPolicy,
    run_rollouts,
)


class Recorder:
    """A Starlette tool server + grader that records what it saw."""

    def __init__(self, tool_delay_s: float = 0.0, barrier: int = 0) -> None:
        self.calls: list[dict] = []
        self.grades: list[tuple[float, dict]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.tool_delay_s = tool_delay_s
        self.barrier = barrier
        self._arrived = 0
        self._all_here = asyncio.Event()
        self.app = Starlette(routes=[Route("/tools/{name}", self.tool, methods=["POST"]),
                                     Route("/grade", self.grade, methods=["POST"])])

    async def tool(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.calls.append(body)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.barrier:
                self._arrived += 1
                if self._arrived >= self.barrier:
                    self._all_here.set()
                try:
                    await asyncio.wait_for(self._all_here.wait(), timeout=2.0)
                except TimeoutError:
                    return JSONResponse({"detail": "calls were not concurrent"}, status_code=400)
            if self.tool_delay_s:
                await asyncio.sleep(self.tool_delay_s)
            return JSONResponse({"type": "function_call_output", "call_id": body["call_id"], "id": body["id"],
                                 "output": f"{body['name']}:{body['arguments']}"})
        finally:
            self.in_flight -= 1

    async def grade(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.grades.append((time.monotonic(), body))
        item = body["item"]
        return JSONResponse({"score": 1.0 if body["sample"]["output_text"] == item.get("reference_answer") else 0.0})


async def test_parallel_tool_calls_of_one_step_are_concurrent() -> None:
    rec = Recorder(barrier=3)
    step = PolicyStep(tool_calls=[{"name": "a", "arguments": {"i": i}} for i in range(3)])
    policy = ScriptedPolicy([step, PolicyStep(content="x")])
    [res] = await run_rollouts([make_item()], policy, make_job(["a"]), samples_per_item=1, settings=FAST,
                               transport=httpx.ASGITransport(rec.app))
    assert [c.status for c in res.tool_calls] == [200, 200, 200]  # 400 would mean they ran one by one
    # tool messages follow call order, whatever order the answers came in
    assert [m["content"] for m in res.messages[2:5]] == [f'a:{{"i":{i}}}' for i in range(3)]
    assert [m["tool_call_id"] for m in res.messages[2:5]] == [c["id"] for c in res.messages[1]["tool_calls"]]


async def test_concurrency_is_bounded() -> None:
    rec = Recorder(tool_delay_s=0.02)
    policy = ScriptedPolicy([PolicyStep(tool_calls=[{"name": "a", "arguments": {}}]), PolicyStep(content="x")])
    results = await run_rollouts([make_item(i) for i in range(4)], policy, make_job(["a"]), samples_per_item=3,
                                 max_concurrency=5, settings=FAST, transport=httpx.ASGITransport(rec.app))
    assert len(results) == 12 and len(rec.calls) == 12
    assert rec.max_in_flight == 5


async def test_grader_rate_limit_spaces_requests() -> None:
    rec = Recorder()
    policy = ScriptedPolicy([PolicyStep(content="x")])
    await run_rollouts([make_item(i) for i in range(6)], policy, make_job([], rate_limit=20.0),
                       samples_per_item=1, max_concurrency=6, settings=FAST, transport=httpx.ASGITransport(rec.app))
    times = sorted(t for t, _ in rec.grades)
    # 1 / 20 rps = 50 ms between starts: the 6th starts >= 250 ms after the 1st (50 ms slack for arrival jitter)
    assert len(times) == 6 and times[-1] - times[0] >= 0.2


async def test_rate_limiter_spaces_acquires() -> None:
    limiter = RateLimiter(50.0)
    stamps = []

    async def one() -> None:
        await limiter.acquire()
        stamps.append(time.monotonic())

    await asyncio.gather(*(one() for _ in range(5)))
    # slots at 0, 20, 40, 60, 80 ms; a sleeper never wakes before its slot (wake-up jitter only adds)
    assert stamps[-1] - stamps[0] >= 0.08 - 0.002
    with pytest.raises(ValueError):
        RateLimiter(0)


async def test_compute_multiplier_sets_samples_per_item() -> None:
    rec = Recorder()
    results = await run_rollouts([make_item(i) for i in range(3)], ScriptedPolicy([PolicyStep(content="x")]),
                                 make_job([], compute_multiplier=0.5), settings=FAST,
                                 transport=httpx.ASGITransport(rec.app))
    assert len(results) == 6  # 4 * 0.5 = 2 per item


async def test_real_timeout_is_retried_then_discarded() -> None:
    rec = Recorder(tool_delay_s=5.0)
    settings = ClientSettings(timeout_s=0.05, backoff_initial_s=0.001, backoff_max_s=0.001)
    policy = ScriptedPolicy([PolicyStep(tool_calls=[{"name": "a", "arguments": {}}]), PolicyStep(content="x")])
    t0 = time.perf_counter()
    [res] = await run_rollouts([make_item()], policy, make_job(["a"]), samples_per_item=1, settings=settings,
                               transport=httpx.ASGITransport(rec.app))
    assert res.discarded and res.discard_reason == "tool_timeout"
    assert len(rec.calls) == 4 and res.tool_calls[0].attempts == 4
    assert time.perf_counter() - t0 < 4.0  # 4 tries x 0.05 s; never waited for the 5 s answer


def replay_item(i: int = 0) -> dict:
    return make_item(i, actions=[{"name": "find", "arguments": {"q": "x"}},
                                 {"name": "cancel", "arguments": {"id": 1}},
                                 {"name": "refund", "arguments": {"id": 1}}],
                     reference_answer="cancelled and refunded")


async def test_reference_replay_issues_gold_calls_then_answer() -> None:
    rec = Recorder()
    [res] = await run_rollouts([replay_item()], ReferenceReplayPolicy(), make_job(["find", "cancel", "refund"]),
                               samples_per_item=1, settings=FAST, transport=httpx.ASGITransport(rec.app))
    assert [(c["name"], json.loads(c["arguments"])) for c in rec.calls] == [
        ("find", {"q": "x"}), ("cancel", {"id": 1}), ("refund", {"id": 1})]
    assert len(res.steps) == 4 and res.score == 1.0 and res.sample["output_text"] == "cancelled and refunded"


async def test_perturbed_replay_drops_one_write_call_and_records_it() -> None:
    rec = Recorder()
    policy = PerturbedReplayPolicy({"cancel", "refund"}, seed=3)
    results = await run_rollouts([replay_item()], policy, make_job(["find", "cancel", "refund"]),
                                 samples_per_item=8, settings=FAST, transport=httpx.ASGITransport(rec.app))
    for r in results:
        names = [c.name for c in r.tool_calls]
        assert len(names) == 2 and names[0] == "find"
        dropped = ({"cancel", "refund"} - set(names)).pop()
        assert r.perturbation == f"dropped {dropped}"
    assert policy._plans == {}  # end_rollout forgot every plan


async def test_custom_perturbation_callback() -> None:
    def alter(actions, rng):
        out = [dict(a) for a in actions]
        out[1] = {"name": "cancel", "arguments": {"id": 2}}
        return out, "cancel wrong order"

    rec = Recorder()
    [res] = await run_rollouts([replay_item()], PerturbedReplayPolicy({"cancel"}, perturb=alter),
                               make_job(["find", "cancel", "refund"]), samples_per_item=1, settings=FAST,
                               transport=httpx.ASGITransport(rec.app))
    assert json.loads(res.tool_calls[1].arguments) == {"id": 2} and res.perturbation == "cancel wrong order"


async def test_replay_without_fields_is_a_policy_error() -> None:
    with pytest.raises(PolicyError, match="'actions'"):
        await ReferenceReplayPolicy().act([], [], item=make_item(), trace_id="trace_x")
    with respx.mock(assert_all_called=False) as mock:
        grader = mock.post(GRADER_URL).mock(return_value=httpx.Response(200, json={"score": 1}))
        [res] = await run_rollouts([make_item()], ReferenceReplayPolicy(), make_job([]), samples_per_item=1,
                                   settings=FAST)
    assert res.discard_reason == "policy_error" and grader.call_count == 0


async def test_policy_bug_propagates() -> None:
    def broken(messages, tools, *, item, trace_id):
        raise ZeroDivisionError("bug in policy")

    with pytest.raises(ZeroDivisionError, match="bug in policy"):
        await run_rollouts([make_item()], ScriptedPolicy(broken), make_job([]), samples_per_item=2, settings=FAST,
                           transport=httpx.ASGITransport(Recorder().app))


async def test_items_without_messages_are_rejected() -> None:
    with pytest.raises(ValueError, match=r"items\[1\]"):
        await run_rollouts([make_item(), {"prompt": "x"}], ScriptedPolicy([]), make_job([]), settings=FAST)


async def test_step_extra_is_kept_for_the_trainer() -> None:
    policy = ScriptedPolicy([PolicyStep(content="x", extra={"logprobs": [-0.1, -0.2]})])
    [res] = await run_rollouts([make_item()], policy, make_job([]), samples_per_item=1, settings=FAST,
                               transport=httpx.ASGITransport(Recorder().app))
    assert res.steps[0].extra == {"logprobs": [-0.1, -0.2]}
    assert res.to_dict(include_extra=True)["steps"][0]["extra"] == {"logprobs": [-0.1, -0.2]}
    assert res.to_dict()["steps"][0]["extra"] is None


async def test_perturbed_replay_is_reproducible_across_random_trace_ids():
    """Same seed, same items, fresh random trace_ids: the same perturbations per item."""
    import uuid
    from collections import Counter

    items = [{"actions": [{"name": "read", "arguments": {}}] +
              [{"name": "write", "arguments": {"k": k}} for k in range(5)],
              "reference_answer": f"done {i}"} for i in range(3)]

    async def plan(seed: int) -> Counter:
        policy = PerturbedReplayPolicy(write_tools={"write"}, seed=seed)
        seen: Counter = Counter()
        for index, item in enumerate(items):
            for _ in range(4):
                trace_id = "trace_" + uuid.uuid4().hex
                calls = []
                messages = [{"role": "user", "content": "go"}]
                while True:
                    step = await policy.act(messages, [], item=item, trace_id=trace_id)
                    if not step.tool_calls:
                        break
                    call = step.tool_calls[0]
                    calls.append(json.loads(call["arguments"]).get("k"))
                    messages += [{"role": "assistant", "tool_calls": [{"id": call["call_id"], "type": "function",
                                  "function": {"name": call["name"], "arguments": call["arguments"]}}]},
                                 {"role": "tool", "tool_call_id": call["call_id"], "content": "ok"}]
                policy.end_rollout(trace_id)
                seen[(index, tuple(calls))] += 1
        return seen

    first, second = await plan(seed=7), await plan(seed=7)
    assert first == second
    # every rollout dropped exactly one of the five writes (the read stays)
    assert all(len(calls) == 1 + 4 for _, calls in first)
