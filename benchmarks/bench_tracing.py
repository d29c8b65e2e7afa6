"""Overhead of OpenTelemetry tracing on a ``ToolServer``: tracing off vs on, side by side in one run.

Targets (issue #15): < 10 % fewer requests/s with tracing on (exporting every
span over OTLP/HTTP to a receiver on 127.0.0.1); ~0 with tracing off.

Two measurements:

1. Throughput over real sockets: this module's ``app`` (one ``echo`` tool,
   per-rollout state) served by ``rft serve`` in a child process, loaded by
   ``wrk`` (one thread, ``--connections`` connections, unique ``call_id``s,
   8 calls per rollout). Configurations, interleaved ``--rounds`` times,
   median reported: *off* (no ``OTEL_*`` variables), *on* (``OTEL_EXPORTER_OTLP_ENDPOINT``
   pointing at an OTLP/HTTP receiver in another child process, which decodes
   every span with ``opentelemetry-proto``; its span count is printed) and
   *on, 10 % sampled* (``OTEL_TRACES_SAMPLER=traceidratio``, ``_ARG=0.1``:
   whole rollouts kept or dropped by their derived trace id). Besides wall-clock
   requests/s (noisy on a shared machine), the server's own CPU time per
   request (``time.process_time`` of the server process, all threads, read
   through a tool before and after each round) gives the capacity ratio
   independent of other load; the receiver's CPU is not counted (in production
   the collector runs elsewhere).
2. In-process cost of the per-call hook (``Metrics.record_call``: counters,
   tool histograms, the span), tracing off and on (spans built and handed to a
   batch processor with a no-op exporter), microseconds per call.

Run: ``python3 benchmarks/bench_tracing.py`` (about 1 minute on 2 cores);
``--quick`` for a smoke run. Needs ``wrk`` (apt) and ``rft-sdk[observe]`` +
``opentelemetry-proto``.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tests" / "observe"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from rft_sdk import Rollout, ToolServer  # noqa: E402
from rft_sdk.testing import serve_process  # noqa: E402

app = ToolServer(auth_env_var=None)


@app.tool
def echo(text: str, *, rollout: Rollout) -> str:
    """Echo the text and count calls in the rollout state.

    Args:
        text: anything.
    """
    rollout.state["n"] = rollout.state.get("n", 0) + 1
    return text


@app.tool
def cpu_seconds() -> str:
    """CPU time of this server process, all threads (the span export thread included), seconds."""
    return repr(time.process_time())


def __getattr__(name: str):  # the receiver app is built only when `rft serve` asks for it
    if name == "receiver":
        from otlp_receiver import receiver_app

        return receiver_app()[0]
    raise AttributeError(name)


WRK_SCRIPT = r"""
local counter = 0
local thread_id = 0
local next_id = 0
function setup(thread)
  next_id = next_id + 1
  thread:set("tid", next_id)
end
function init(args)
  thread_id = args[1] .. "_" .. tid
end
request = function()
  counter = counter + 1
  local trace = string.format("trace_%s_%d", thread_id, math.floor(counter / 8))
  local body = string.format('{"type":"function_call","call_id":"call_%s_%d","name":"echo",' ..
    '"arguments":"{\\"text\\":\\"hello %d\\"}","trace_id":"%s"}', thread_id, counter, counter, trace)
  return wrk.format("POST", "/tools/echo", {["Content-Type"] = "application/json"}, body)
end
"""


def _cpu(url: str) -> float:
    body = {"call_id": "cpu_" + os.urandom(6).hex(), "trace_id": "bench_cpu", "arguments": "{}"}
    return float(httpx.post(url + "/tools/cpu_seconds", json=body).json()["output"])


def _wrk(url: str, seconds: float, connections: int, script: str) -> tuple[float, float]:
    """``(requests/s, server CPU seconds per request)`` of one wrk run; call ids are unique across
    runs (a fresh prefix each time)."""
    prefix = os.urandom(4).hex()
    cpu0 = _cpu(url)
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", "-s", script, url, "--", prefix],
                         capture_output=True, text=True, check=True).stdout
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if non2xx:
        raise RuntimeError(f"{non2xx.group(1)} failed requests:\n{out}")
    cpu = _cpu(url) - cpu0
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)), cpu / requests


def _clean_env() -> dict[str, str]:
    return {k: "" for k in os.environ if k.startswith("OTEL_")} | {"PYTHONPATH": str(ROOT)}


def throughput(seconds: float, connections: int, rounds: int) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as fh:
        fh.write(WRK_SCRIPT)
    env = _clean_env()
    configs = ("off", "on", "on, 10 % sampled")
    rps: dict[str, list[float]] = {name: [] for name in configs}
    cpu: dict[str, list[float]] = {name: [] for name in configs}
    with serve_process("benchmarks.bench_tracing:receiver", cwd=ROOT, env=env) as receiver:
        on_env = env | {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver, "OTEL_SERVICE_NAME": "bench-tracing"}
        sampled_env = on_env | {"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.1"}
        with serve_process("benchmarks.bench_tracing:app", cwd=ROOT, env=env) as off, \
                serve_process("benchmarks.bench_tracing:app", cwd=ROOT, env=on_env) as on, \
                serve_process("benchmarks.bench_tracing:app", cwd=ROOT, env=sampled_env) as sampled:
            urls = dict(zip(configs, (off, on, sampled)))
            for url in urls.values():
                _wrk(url, 1, connections, fh.name)  # warm-up
            for _ in range(rounds):
                for name, url in urls.items():
                    r, c = _wrk(url, seconds, connections, fh.name)
                    rps[name].append(r)
                    cpu[name].append(c * 1e6)
            served = {name: httpx.get(url + "/metrics?format=json").json()["counters"]["tool_calls"]
                      for name, url in urls.items()}
            deadline = time.monotonic() + 10  # the batch processor exports every 5 s or 512 spans
            while httpx.get(receiver + "/count").json()["spans"] < served["on"] and time.monotonic() < deadline:
                time.sleep(0.2)
        spans = httpx.get(receiver + "/count").json()["spans"]
    os.unlink(fh.name)
    median = {name: statistics.median(v) for name, v in rps.items()}
    cpu_med = {name: statistics.median(v) for name, v in cpu.items()}
    print(f"throughput: wrk 1 thread, {connections} connections, {seconds:g} s x {rounds} rounds interleaved "
          f"(median), rft serve 1 worker on 127.0.0.1, {os.cpu_count()} CPUs")
    print(f"{'':>28}" + "".join(f"{name:>18}" for name in configs))
    print(f"{'requests/s (wall clock)':>28}" + "".join(f"{median[name]:>18.1f}" for name in configs))
    print(f"{'  vs off':>28}" + "".join(f"{median[name] / median['off']:>18.3f}" for name in configs))
    print(f"{'server CPU µs per request':>28}" + "".join(f"{cpu_med[name]:>18.1f}" for name in configs))
    print(f"{'  capacity vs off (CPU)':>28}" + "".join(f"{cpu_med['off'] / cpu_med[name]:>18.3f}" for name in configs))
    for name in configs:
        print(f"  {name}: req/s per round {' '.join(f'{x:.0f}' for x in rps[name])}; "
              f"CPU µs/request {' '.join(f'{x:.0f}' for x in cpu[name])}")
    print(f"spans received by the OTLP/HTTP receiver: {spans} (tool calls served: on {served['on']}, "
          f"10 % sampled {served['on, 10 % sampled']}; expected ~{served['on'] + served['on, 10 % sampled'] // 10})")


def hook_cost(n: int) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    from rft_sdk._server._calls import CallOutcome
    from rft_sdk._server._metrics import Metrics
    from rft_sdk._server._tracing import Tracing

    class Discard(SpanExporter):
        def export(self, spans):
            return SpanExportResult.SUCCESS

    provider = TracerProvider(id_generator=Tracing.id_generator())
    provider.add_span_processor(BatchSpanProcessor(Discard()))
    body = {"call_id": "call_1", "trace_id": "trace_bench", "arguments": '{"text": "hello"}'}
    outcome = CallOutcome()
    outcome.status, outcome.events, outcome.tool_s, outcome.output_bytes = 200, ("tool_calls",), 0.0001, 5
    outcome.body = b'{"type":"function_call_output","call_id":"call_1","output":"hello"}'
    results = {}
    for name, metrics in (("off", Metrics(tracing=None)), ("on", Metrics(tracing=Tracing(provider)))):
        t0 = time.perf_counter()
        for _ in range(n):
            metrics.record_call("echo", body, time.perf_counter(), outcome)
        results[name] = (time.perf_counter() - t0) / n * 1e6
    provider.shutdown()
    print(f"per-call hook (record_call: counters, tool histograms, span), {n} calls in-process: "
          f"tracing off {results['off']:.1f} µs, tracing on {results['on']:.1f} µs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="wrk duration per round")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="1 s x 1 round, 2,000 hook calls")
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.rounds = 1.0, 1
    hook_cost(2_000 if args.quick else 20_000)
    throughput(args.seconds, args.connections, args.rounds)


if __name__ == "__main__":
    main()
