"""One OpenTelemetry trace per rollout, exported by a real ``rft serve`` to a real OTLP/HTTP receiver."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from rft_sdk.testing import serve_process

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
AUTH = {"Authorization": "Bearer observe-token"}
OTEL_VARS = [k for k in os.environ if k.startswith("OTEL_")]


def _derived(trace_id: str) -> tuple[str, str]:
    """The documented rule (docs/observability.md): SHA-256 bytes [0:16] and [16:24], as hex."""
    digest = hashlib.sha256(trace_id.encode()).digest()
    return digest[:16].hex(), digest[16:24].hex()


def _env(**extra: str) -> dict[str, str]:
    env = {k: "" for k in OTEL_VARS}  # nothing inherited from the developer's shell
    env.update(PYTHONPATH=str(ROOT), **extra)
    return env


async def _rollout(client: httpx.AsyncClient, trace_id: str) -> dict[str, dict]:
    """Three parallel lookups and one failing call, then a grade; returns the sent bodies by call_id."""
    bodies = {}
    for i, (tool, args) in enumerate([("lookup", {"key": "a"}), ("lookup", {"key": "bb"}),
                                      ("lookup", {"key": "ccc"}), ("fail", {"reason": "no such order"})]):
        call_id = f"call_{trace_id[-6:]}_{i}"
        bodies[call_id] = {"type": "function_call", "id": f"fc_{i}", "call_id": call_id, "name": tool,
                           "arguments": json.dumps(args), "trace_id": trace_id, "item": {"task": "t"}}
    answers = await asyncio.gather(*(client.post(f"/tools/{b['name']}", json=b) for b in bodies.values()))
    assert [r.status_code for r in answers] == [200, 200, 200, 400]
    grade = await client.post("/grade", json={"sample": {"output_text": "VALUE"}, "trace_id": trace_id})
    assert grade.status_code == 200 and grade.json() == {"score": 1.0}
    return bodies


def _wait_for(spans: list, n: int, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while len(spans) < n and time.monotonic() < deadline:
        time.sleep(0.05)


def test_one_trace_per_rollout_with_call_and_grade_spans(otlp_receiver) -> None:
    url, spans = otlp_receiver
    env = _env(OTEL_EXPORTER_OTLP_ENDPOINT=url, OTEL_SERVICE_NAME="observe-test", OTEL_BSP_SCHEDULE_DELAY="50")
    trace_ids = ["trace_observe_rollout_one", "trace_observe_rollout_two"]

    async def drive(base_url: str) -> list[dict[str, dict]]:
        async with httpx.AsyncClient(base_url=base_url, headers=AUTH) as client:
            return list(await asyncio.gather(*(_rollout(client, t) for t in trace_ids)))

    with serve_process("observe_app:server", cwd=HERE, env=env) as base_url:
        sent = asyncio.run(drive(base_url))
        _wait_for(spans, 12)
    assert len(spans) == 12, [s["name"] for s in spans]  # 2 x (4 calls + 1 grade + 1 rollout root)
    assert {s["resource"]["service.name"] for s in spans} == {"observe-test"}

    by_trace: dict[str, list[dict]] = {}
    for s in spans:
        by_trace.setdefault(s["trace_id"], []).append(s)
    assert sorted(by_trace) == sorted(_derived(t)[0] for t in trace_ids)  # one trace per rollout

    for trace_id, bodies in zip(trace_ids, sent):
        otel_trace, root_id = _derived(trace_id)
        trace = by_trace[otel_trace]
        assert all(s["attributes"]["rft.trace_id"] == trace_id for s in trace)
        (root,) = [s for s in trace if s["name"] == "rollout"]
        assert root["span_id"] == root_id and root["parent_span_id"] == ""
        assert root["attributes"]["rft.rollout.tool_calls"] == 4 and root["attributes"]["rft.grade.score"] == 1.0
        children = [s for s in trace if s is not root]
        assert all(s["parent_span_id"] == root_id for s in children)
        assert all(s["end_ns"] <= root["end_ns"] for s in children)
        # the root starts when the first recorded call started executing (after its store lock and load)
        assert min(s["start_ns"] for s in children) <= root["start_ns"] <= min(s["end_ns"] for s in children)

        calls = [s for s in children if s["name"].startswith("execute_tool ")]
        assert len(calls) == 4 and {s["attributes"]["gen_ai.tool.call.id"] for s in calls} == set(bodies)
        for s in calls:
            a, body = s["attributes"], bodies[s["attributes"]["gen_ai.tool.call.id"]]
            assert s["name"] == f"execute_tool {body['name']}" and s["kind"] == 2  # SPAN_KIND_SERVER
            assert a["gen_ai.operation.name"] == "execute_tool" and a["gen_ai.tool.name"] == body["name"]
            assert a["rft.tool.arguments_bytes"] == len(body["arguments"].encode())
            assert a["rft.store.duration_s"] >= 0 and "rft.replayed" not in a
            if body["name"] == "lookup":
                key = json.loads(body["arguments"])["key"]
                output = json.dumps({"key": key, "value": key.upper()}, separators=(",", ":"))
                assert a["http.response.status_code"] == 200 and "error.type" not in a
                assert a["rft.tool.output_bytes"] == len(output) and a["rft.tool.duration_s"] >= 0.018  # asyncio.sleep may wake up to one clock tick early
                assert s["status_code"] == 0  # STATUS_CODE_UNSET
            else:
                assert a["http.response.status_code"] == 400 and a["error.type"] == "tool_error"
                assert a["rft.tool.output_bytes"] == 0 and s["status_code"] == 2  # STATUS_CODE_ERROR

        (grade,) = [s for s in children if s["name"] == "grade judge"]
        a = grade["attributes"]
        assert a["http.response.status_code"] == 200 and a["rft.grade.score"] == 1.0
        assert a["rft.grade.subscore.answer"] == 1.0 and a["rft.grade.subscore.tool_use"] == 1.0
        assert a["rft.rollout.tool_calls"] == 4
        assert grade["start_ns"] >= max(s["end_ns"] for s in calls)  # graded after the calls


def test_spans_of_one_rollout_from_two_processes_share_one_trace(otlp_receiver) -> None:
    """Calls of one rollout served by two replicas land in one trace, under one parent: the ids are
    derived from the hosted trace_id alone, with no state shared between the processes."""
    url, spans = otlp_receiver
    trace_id = "trace_observe_two_replicas"
    body = {"type": "function_call", "call_id": "call_r1", "name": "fail", "arguments": '{"reason": "x"}',
            "trace_id": trace_id}
    env = _env(OTEL_TRACES_EXPORTER="otlp", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=url + "/v1/traces",
               OTEL_BSP_SCHEDULE_DELAY="50")
    with serve_process("observe_app:server", cwd=HERE, env=env) as one, \
            serve_process("observe_app:server", cwd=HERE, env=env) as two:
        assert httpx.post(one + "/tools/fail", json=body, headers=AUTH).status_code == 400
        assert httpx.post(two + "/tools/fail", json={**body, "call_id": "call_r2"}, headers=AUTH).status_code == 400
        _wait_for(spans, 2)
    assert len(spans) == 2 and {s["trace_id"] for s in spans} == {_derived(trace_id)[0]}
    assert {s["parent_span_id"] for s in spans} == {_derived(trace_id)[1]}


def test_tracing_off_imports_no_opentelemetry() -> None:
    """Without OTEL_* variables a server handles calls without importing opentelemetry at all."""
    code = ("import sys, httpx; from rft_sdk import ToolServer; s = ToolServer(auth_env_var=None)\n"
            "@s.tool\ndef echo(text: str) -> str:\n    '''Echo.\n\n    Args:\n        text: any.\n    '''\n"
            "    return text\n"
            "c = httpx.Client(transport=httpx.ASGITransport(app=s), base_url='http://t')\n"
            "import asyncio\n"
            "async def go():\n"
            "    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=s), base_url='http://t') as c:\n"
            "        r = await c.post('/tools/echo', json={'call_id': 'c1', 'trace_id': 't1', "
            "'arguments': '{\"text\": \"hi\"}'})\n"
            "        return r.status_code\n"
            "print(asyncio.run(go()), s.metrics_state.tracing, sorted(m for m in sys.modules if m.startswith('opentelemetry')))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PYTHONPATH"] = str(ROOT)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["200", "None", "[]"]
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**env, "OTEL_TRACES_EXPORTER": "console", "OTEL_BSP_SCHEDULE_DELAY": "10"})
    assert res.returncode == 0, res.stderr
    assert "opentelemetry.sdk.trace" in res.stdout and '"name": "execute_tool echo"' in res.stdout
