"""Every failure path of tool and grader calls, with respx-mocked endpoints (unit tests of client logic)."""

from __future__ import annotations

import json
import logging
import re
import time
from typing import Any

import anyio
import httpx
import pytest
import respx
from emu_helpers import FAST, GRADER_URL, TOOL_URL, make_item, make_job

from rft_sdk.emulator import (
    ClientSettings,
    EmulatorSession,
    EndpointClient,
    EndpointGrader,
    PolicyStep,
    ScriptedPolicy,
    run_rollouts,
    summarize,
)
from rft_sdk.testing import run_server

CALL = {"id": "fc_1", "call_id": "call_1", "name": "lookup", "arguments": '{"q": "puffer"}'}


def one_call_then_answer(answer: str = "done") -> ScriptedPolicy:
    return ScriptedPolicy([PolicyStep(tool_calls=[dict(CALL)]), PolicyStep(content=answer)])


def grader_ok(mock: respx.MockRouter, score: float = 1.0) -> respx.Route:
    return mock.post(GRADER_URL).mock(return_value=httpx.Response(200, json={"score": score}))


async def test_request_body_and_headers_are_exactly_the_spec() -> None:
    item = make_item(0, answer="x")
    job = make_job(["lookup"], headers={"Authorization": "Bearer tok", "X-Team": "a"})
    with respx.mock(assert_all_called=False) as mock:
        tool = mock.post(TOOL_URL.format(name="lookup")).mock(
            return_value=httpx.Response(200, json={"type": "function_call_output", "call_id": "call_1",
                                                   "id": "fc_1", "output": "3 results"}))
        grader = grader_ok(mock)
        [res] = await run_rollouts([item], one_call_then_answer(), job, samples_per_item=1, settings=FAST)
    req = tool.calls.last.request
    assert json.loads(req.content) == {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "lookup",
                                       "arguments": '{"q": "puffer"}', "trace_id": res.trace_id, "item": item}
    assert req.headers["authorization"] == "Bearer tok" and req.headers["x-team"] == "a"
    assert req.headers["content-type"] == "application/json"
    assert re.fullmatch(r"trace_[0-9a-f]{32}", res.trace_id)
    greq = grader.calls.last.request
    body = json.loads(greq.content)
    assert set(body) == {"sample", "item", "trace_id"}
    assert body["trace_id"] == res.trace_id and body["item"] == item
    assert body["sample"]["output_text"] == "done" and body["sample"]["output_tools"] == []
    assert body["sample"]["choices"][0]["message"]["content"] == "done"
    assert greq.headers["authorization"] == "Bearer tok"
    # the model saw the tool output
    assert res.messages[-2] == {"role": "tool", "tool_call_id": "call_1", "content": "3 results"}
    assert res.score == 1.0 and not res.discarded and res.tool_calls[0].ok


async def test_the_item_encoded_once_per_rollout_gives_the_same_bytes_as_encoding_each_body() -> None:
    """The rollout encodes its item once for all its calls and its grade; every body is byte for byte the
    compact JSON of the whole request (non-ASCII kept, floats and nesting as json.dumps writes them)."""
    item = make_item(0, answer="Zoë’s 3½ ☕", price=12.5, nested={"a": [1, None, True, {"b": "c\n"}]})
    with respx.mock(assert_all_called=False) as mock:
        tool = mock.post(TOOL_URL.format(name="lookup")).mock(return_value=httpx.Response(200, json={"output": "ok"}))
        grader = grader_ok(mock)
        policy = ScriptedPolicy([PolicyStep(tool_calls=[dict(CALL)]), PolicyStep(tool_calls=[dict(CALL)]),
                                 PolicyStep(content="done")])
        [res] = await run_rollouts([item], policy, make_job(["lookup"]), samples_per_item=1, settings=FAST)
    assert len(tool.calls) == 2 and res.score == 1.0

    def compact(payload: Any) -> bytes:
        return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()

    for call in tool.calls:
        assert call.request.content == compact(json.loads(call.request.content))
        assert json.loads(call.request.content)["item"] == item
    graded = json.loads(grader.calls.last.request.content)
    assert list(graded) == ["sample", "item", "trace_id"] and graded["item"] == item
    assert grader.calls.last.request.content == compact(graded)


async def test_job_content_type_replaces_the_default_instead_of_doubling_it() -> None:
    job = make_job(["lookup"], headers={"Content-Type": "application/json; charset=utf-8"})
    with respx.mock(assert_all_called=False) as mock:
        tool = mock.post(TOOL_URL.format(name="lookup")).mock(return_value=httpx.Response(200, json={"output": "ok"}))
        grader = grader_ok(mock)
        await run_rollouts([make_item()], one_call_then_answer(), job, samples_per_item=1, settings=FAST)
    for req in (tool.calls.last.request, grader.calls.last.request):
        assert req.headers.get_list("content-type") == ["application/json; charset=utf-8"]


async def test_4xx_without_output_is_shown_to_the_model_and_rollout_continues() -> None:
    seen: list[list[dict]] = []

    def policy(messages, tools, *, item, trace_id):
        seen.append(list(messages))
        if len(seen) == 1:
            return PolicyStep(tool_calls=[dict(CALL)])
        return PolicyStep(content="corrected")

    with respx.mock(assert_all_called=False) as mock:
        mock.post(TOOL_URL.format(name="lookup")).mock(
            return_value=httpx.Response(422, json={"detail": "q must be an int"}))
        grader_ok(mock, 0.5)
        results = await run_rollouts([make_item()], ScriptedPolicy(policy), make_job(["lookup"]),
                                     samples_per_item=1, settings=FAST)
    [res] = results
    assert not res.discarded and res.score == 0.5
    tool_msg = seen[1][-1]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "call_1"
    assert json.loads(tool_msg["content"]) == {"error": {"detail": "q must be an int"}, "status_code": 422}
    assert res.tool_calls[0].status == 422 and res.tool_calls[0].attempts == 1
    assert summarize(results, pass_threshold=1.0)["tools"]["error_count"] == 1


async def test_4xx_with_output_shows_that_output() -> None:
    with respx.mock(assert_all_called=False) as mock:
        mock.post(TOOL_URL.format(name="lookup")).mock(return_value=httpx.Response(404, json={"output": "no such order"}))
        grader_ok(mock)
        [res] = await run_rollouts([make_item()], one_call_then_answer(), make_job(["lookup"]),
                                   samples_per_item=1, settings=FAST)
    assert res.messages[-2]["content"] == "no such order"
    assert res.tool_calls[0].error == "HTTP 404" and not res.discarded


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_5xx_is_retried_exactly_3_times_then_discarded(status: int) -> None:
    with respx.mock(assert_all_called=False) as mock:
        tool = mock.post(TOOL_URL.format(name="lookup")).mock(return_value=httpx.Response(status, text="boom"))
        grader = grader_ok(mock)
        results = await run_rollouts([make_item()], one_call_then_answer(), make_job(["lookup"]),
                                     samples_per_item=1, settings=FAST)
    [res] = results
    assert tool.call_count == 4  # the first try + exactly 3 retries
    assert grader.call_count == 0
    assert res.discarded and res.discard_reason == "tool_server_error" and res.score is None
    assert res.tool_calls[0].attempts == 4 and res.tool_calls[0].status == status
    s = summarize(results, pass_threshold=1.0)
    assert s["discards_by_reason"] == {"tool_server_error": 1} and s["graded"] == 0


async def test_5xx_then_success_is_kept() -> None:
    with respx.mock(assert_all_called=False) as mock:
        tool = mock.post(TOOL_URL.format(name="lookup"))
        tool.side_effect = [httpx.Response(503), httpx.Response(500), httpx.Response(200, json={"output": "ok"})]
        grader_ok(mock)
        [res] = await run_rollouts([make_item()], one_call_then_answer(), make_job(["lookup"]),
                                   samples_per_item=1, settings=FAST)
    assert tool.call_count == 3 and not res.discarded
    assert res.tool_calls[0].attempts == 3 and res.messages[-2]["content"] == "ok"


async def test_each_retry_is_logged_with_its_reason(caplog: pytest.LogCaptureFixture) -> None:
    """One DEBUG line per retry, its reason in ``retry_reason`` (bench_emulator.py --batch counts them)."""
    with respx.mock(assert_all_called=False) as mock:
        tool = mock.post(TOOL_URL.format(name="lookup"))
        tool.side_effect = [httpx.Response(503), httpx.ReadError("closed"), httpx.Response(200, json={"output": "ok"})]
        grader_ok(mock)
        with caplog.at_level(logging.DEBUG, logger="rft_sdk.emulator"):
            [res] = await run_rollouts([make_item()], one_call_then_answer(), make_job(["lookup"]),
                                       samples_per_item=1, settings=FAST)
    assert not res.discarded and res.tool_calls[0].attempts == 3
    reasons = [getattr(r, "retry_reason", None) for r in caplog.records if r.name == "rft_sdk.emulator"]
    assert reasons == ["server_error", "transport_error"]


async def test_retry_count_is_configurable() -> None:
    with respx.mock(assert_all_called=False) as mock:
        tool = mock.post(TOOL_URL.format(name="lookup")).mock(return_value=httpx.Response(500))
        grader_ok(mock)
        settings = ClientSettings(retries=1, backoff_initial_s=0.001, backoff_max_s=0.001)
        [res] = await run_rollouts([make_item()], one_call_then_answer(), make_job(["lookup"]),
                                   samples_per_item=1, settings=settings)
    assert tool.call_count == 2 and res.discarded


async def test_response_over_limit_reaches_the_model_as_413() -> None:
    big = "x" * 1_100_000  # over the default 1 MB limit
    with respx.mock(assert_all_called=False) as mock:
        mock.post(TOOL_URL.format(name="lookup")).mock(return_value=httpx.Response(200, json={"output": big}))
        grader_ok(mock)
        [res] = await run_rollouts([make_item()], one_call_then_answer(), make_job(["lookup"]),
                                   samples_per_item=1, settings=FAST)
    call = res.tool_calls[0]
    assert call.status == 413 and not call.ok
    shown = json.loads(res.messages[-2]["content"])
    assert shown["status_code"] == 413 and "1000000 bytes" in shown["error"]
    assert not res.discarded and res.score == 1.0


async def test_streamed_response_without_content_length_is_cut_at_limit() -> None:
    chunks = [b'{"output": "', b"y" * 600, b"y" * 600, b'"}']

    async def stream():
        for c in chunks:
            yield c

    settings = ClientSettings(backoff_initial_s=0.001, max_response_bytes=1000)
    with respx.mock(assert_all_called=False) as mock:
        mock.post(TOOL_URL.format(name="lookup")).mock(return_value=httpx.Response(200, content=stream()))
        grader_ok(mock)
        [res] = await run_rollouts([make_item()], one_call_then_answer(), make_job(["lookup"]),
                                   samples_per_item=1, settings=settings)
    assert res.tool_calls[0].status == 413


@pytest.mark.parametrize(("error", "reason"), [(httpx.ReadTimeout("slow"), "tool_timeout"),
                                               (httpx.ConnectError("refused"), "tool_transport_error")])
async def test_timeouts_and_transport_errors_are_retried_then_discarded(error: Exception, reason: str) -> None:
    with respx.mock(assert_all_called=False) as mock:
        tool = mock.post(TOOL_URL.format(name="lookup")).mock(side_effect=error)
        grader = grader_ok(mock)
        [res] = await run_rollouts([make_item()], one_call_then_answer(), make_job(["lookup"]),
                                   samples_per_item=1, settings=FAST)
    assert tool.call_count == 4 and grader.call_count == 0
    assert res.discarded and res.discard_reason == reason and res.tool_calls[0].status is None


@pytest.mark.parametrize(("response", "calls", "reason"), [
    (httpx.Response(500), 4, "grader_server_error"),
    (httpx.Response(400, json={"detail": "bad"}), 1, "grader_client_error"),
    (httpx.Response(200, json={"reward": 1}), 1, "grader_invalid_response"),
    (httpx.Response(200, json={"score": "high"}), 1, "grader_invalid_response"),
    (httpx.Response(200, text="not json"), 1, "grader_invalid_response"),
])
async def test_grader_failures_discard(response: httpx.Response, calls: int, reason: str) -> None:
    with respx.mock(assert_all_called=False) as mock:
        mock.post(TOOL_URL.format(name="lookup")).mock(return_value=httpx.Response(200, json={"output": "ok"}))
        grader = mock.post(GRADER_URL).mock(return_value=response)
        results = await run_rollouts([make_item()], one_call_then_answer(), make_job(["lookup"]),
                                     samples_per_item=1, settings=FAST)
    [res] = results
    assert grader.call_count == calls
    assert res.discarded and res.discard_reason == reason and res.score is None
    assert summarize(results, pass_threshold=1.0)["discards_by_reason"] == {reason: 1}


async def test_grader_429_is_retried_then_scored_or_discarded() -> None:
    policy = ScriptedPolicy([PolicyStep(content="a")])
    with respx.mock(assert_all_called=False) as mock:
        grader = mock.post(GRADER_URL)
        grader.side_effect = [httpx.Response(429), httpx.Response(200, json={"score": 0.75})]
        [res] = await run_rollouts([make_item()], policy, make_job([]), samples_per_item=1, settings=FAST)
    assert grader.call_count == 2 and res.score == 0.75 and not res.discarded
    with respx.mock(assert_all_called=False) as mock:
        grader = mock.post(GRADER_URL).mock(return_value=httpx.Response(429))
        [res] = await run_rollouts([make_item()], policy, make_job([]), samples_per_item=1, settings=FAST)
    assert grader.call_count == 4 and res.discarded and res.discard_reason == "grader_rate_limited"


async def test_tool_429_without_output_is_shown_to_the_model_not_retried() -> None:
    with respx.mock(assert_all_called=False) as mock:
        tool = mock.post(TOOL_URL.format(name="lookup")).mock(return_value=httpx.Response(429, json={"detail": "slow"}))
        grader_ok(mock)
        [res] = await run_rollouts([make_item()], one_call_then_answer(), make_job(["lookup"]),
                                   samples_per_item=1, settings=FAST)
    assert tool.call_count == 1 and not res.discarded
    assert json.loads(res.messages[-2]["content"]) == {"error": {"detail": "slow"}, "status_code": 429}


async def test_grade_details_header_is_read() -> None:
    details = {"subscores": {"db": 1.0, "answer": 0.0}, "reasons": ["wrong refund"]}
    with respx.mock(assert_all_called=False) as mock:
        mock.post(GRADER_URL).mock(return_value=httpx.Response(
            200, json={"score": 0.5}, headers={"x-rft-grade-details": json.dumps(details)}))
        [res] = await run_rollouts([make_item()], ScriptedPolicy([PolicyStep(content="a")]), make_job([]),
                                   samples_per_item=1, settings=FAST)
    assert res.score == 0.5 and res.grade_details == details


@pytest.mark.parametrize("bad", [
    "just a string",
    PolicyStep(tool_calls=[{"arguments": "{}"}]),                 # no name
    PolicyStep(tool_calls=[{"name": "lookup", "arguments": 42}]),  # arguments not str/dict
    PolicyStep(tool_calls="lookup"),                               # not a list
    PolicyStep(content=123),                                       # content not str
])
async def test_malformed_policy_output_discards(bad) -> None:
    with respx.mock(assert_all_called=False) as mock:
        tool = mock.post(TOOL_URL.format(name="lookup")).mock(return_value=httpx.Response(200, json={"output": "ok"}))
        grader = grader_ok(mock)
        [res] = await run_rollouts([make_item()], ScriptedPolicy([bad]), make_job(["lookup"]),
                                   samples_per_item=1, settings=FAST)
    assert res.discarded and res.discard_reason == "policy_error"
    assert tool.call_count == 0 and grader.call_count == 0


async def test_unknown_tool_name_is_an_error_shown_to_the_model() -> None:
    policy = ScriptedPolicy([PolicyStep(tool_calls=[{"name": "nope", "arguments": {}}]), PolicyStep(content="ok")])
    with respx.mock(assert_all_called=False) as mock:
        grader_ok(mock)
        [res] = await run_rollouts([make_item()], policy, make_job(["lookup"]), samples_per_item=1, settings=FAST)
    assert not res.discarded and res.tool_calls[0].error == "unknown tool"
    assert "unknown tool 'nope'" in res.messages[-2]["content"]


async def test_max_episode_steps_stops_and_grades_last_turn() -> None:
    def always_call(messages, tools, *, item, trace_id):
        return PolicyStep(content="thinking", tool_calls=[{"name": "lookup", "arguments": {"q": "a"}}])

    with respx.mock(assert_all_called=False) as mock:
        tool = mock.post(TOOL_URL.format(name="lookup")).mock(return_value=httpx.Response(200, json={"output": "ok"}))
        grader = grader_ok(mock, 0.0)
        [res] = await run_rollouts([make_item()], ScriptedPolicy(always_call), make_job(["lookup"], max_episode_steps=3),
                                   samples_per_item=1, settings=FAST)
    assert res.truncated and len(res.steps) == 3 and tool.call_count == 3
    sample = json.loads(grader.calls.last.request.content)["sample"]
    assert sample["output_text"] == "thinking" and sample["output_tools"][0]["function"]["name"] == "lookup"
    assert sample["choices"][0]["finish_reason"] == "tool_calls"


async def test_trace_id_is_shared_within_a_rollout_and_unique_across() -> None:
    with respx.mock(assert_all_called=False) as mock:
        tool = mock.post(TOOL_URL.format(name="lookup")).mock(return_value=httpx.Response(200, json={"output": "ok"}))
        grader = grader_ok(mock)
        results = await run_rollouts([make_item(0), make_item(1)], one_call_then_answer(), make_job(["lookup"]),
                                     samples_per_item=3, settings=FAST)
    assert len(results) == 6 and len({r.trace_id for r in results}) == 6
    tool_traces = sorted(json.loads(c.request.content)["trace_id"] for c in tool.calls)
    grade_traces = sorted(json.loads(c.request.content)["trace_id"] for c in grader.calls)
    assert tool_traces == grade_traces == sorted(r.trace_id for r in results)
    assert [(r.item_index, r.sample_index) for r in results] == [(i, s) for i in range(2) for s in range(3)]


async def test_grade_latency_counts_from_the_send_not_from_the_wait_for_a_rate_limit_slot() -> None:
    """Twelve grades started at once at 20/s wait up to 0.55 s for their slots; that pacing is the emulator's,
    and the grader's latency (which the doctor reports as its p95) excludes it (an outside tester saw 0.64 s for
    every grader, however trivial)."""
    grader = EndpointGrader(name="g", url=GRADER_URL, rate_limit=20.0)
    latencies: list[float] = []
    with respx.mock(assert_all_called=False) as mock:
        grader_ok(mock)
        async with httpx.AsyncClient() as http:
            client = EndpointClient(http, FAST)

            async def one(i: int) -> None:
                g = await client.grade(grader, {"output_text": "x"}, item=make_item(i), trace_id=f"trace_{i:032x}")
                latencies.append(g.latency_s)

            t0 = time.perf_counter()
            async with anyio.create_task_group() as tg:
                for i in range(12):
                    tg.start_soon(one, i)
            elapsed = time.perf_counter() - t0
    assert elapsed >= 0.5  # the slots were 50 ms apart: the last one waited 0.55 s
    assert len(latencies) == 12 and max(latencies) < 0.25, latencies  # a mocked answer is immediate



def _counting_server(seen: list[int]) -> Any:
    """An ASGI app answering every tool call and grade after a short wait; ``seen``: requests in flight, per request."""
    state = {"now": 0}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        state["now"] += 1
        seen.append(state["now"])
        await anyio.sleep(0.02)
        state["now"] -= 1
        body = json.dumps({"score": 1.0} if scope["path"] == "/grade" else {"output": "ok"}).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})

    return app


def test_the_session_sends_at_most_its_pool_size_at_once_and_queues_the_rest_in_order() -> None:
    """Ten parallel tool calls of one rollout over a session sized for one rollout (4 connections): at most 4 in
    flight, all ten answered and recorded in the policy's order (the rest wait in the EndpointClient, not in
    httpcore's pool, whose queue scan cost ``make doctor``'s tool_spam twice the CPU); the same over a caller's
    own client, which the session does not limit, sends all ten at once."""
    calls = [{**CALL, "id": f"fc_{i}", "call_id": f"call_{i}"} for i in range(10)]
    seen: list[int] = []
    with run_server(_counting_server(seen)) as url:
        job = make_job(["lookup"])
        job["tools"][0]["server_url"], job["grader"]["url"] = f"{url}/tools/lookup", f"{url}/grade"

        def policy() -> ScriptedPolicy:
            return ScriptedPolicy([PolicyStep(tool_calls=calls), PolicyStep(content="x")])

        async def own() -> list[Any]:
            async with EmulatorSession(job, max_concurrency=1, settings=FAST) as session:
                out = await session.run([make_item(0)], policy(), samples_per_item=1)
                assert [c._in_flight.value for c in session._clients()] == [4]  # type: ignore[union-attr]  # all free again
                return out

        [r] = anyio.run(own)
        assert r.score == 1.0 and [c.call_id for c in r.tool_calls] == [c["call_id"] for c in calls]
        assert all(c.ok for c in r.tool_calls) and len(seen) == 11 and max(seen) == 4
        seen.clear()

        async def callers() -> list[Any]:
            async with httpx.AsyncClient() as http:
                return await run_rollouts([make_item(0)], policy(), job, samples_per_item=1, settings=FAST, client=http)

        [r] = anyio.run(callers)
        assert r.score == 1.0 and max(seen) == 10


def test_max_in_flight_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_in_flight"):
        EndpointClient(httpx.AsyncClient(), FAST, max_in_flight=0)
