"""An outside-style reliability run of ``rft serve`` (issue 26), bounded in count and time, loopback only.

Each scenario starts its own ``rft serve benchmarks.reliability_app:server`` child process (one worker)
and, where it needs one, its own ``redis-server`` in a temporary directory, then prints one row of the
table in docs/reliability.md:

* ``fuzz``: N requests (byte edits of hosted tool-call and grading bodies: raw-encoded surrogates,
  invalid UTF-8, control bytes, truncation, wrong types; unknown routes and methods) over keep-alive
  connections -> count of 5xx (must be 0) and of non-JSON answers (must be 0);
* ``slow-headers``: K sockets send a partial request header and stop -> seconds until the server closed
  them all (the header timeout is 10 s), and what a well-behaved client got meanwhile;
* ``redis-restart``: rollouts running while Redis (``--appendonly yes --appendfsync always``, what the
  templates must set) is SIGKILLed and restarted -> answered calls missing from the graded trajectory,
  writes applied twice, late calls after a grade not refused;
* ``load``: an open-loop 300 requests/s (50 rollouts/s of 6 calls) on one worker with Redis ->
  errors, latency p50/p99/max, answers per second in the steady state (between 1 s in and the end of
  the schedule) and over the whole run (which also counts the last rollouts' tail);
* ``hung-tools``: 50 calls of a blocking tool that hangs, then calls of a 1 s-timeout tool in other
  rollouts -> ``tool_timeout`` answers among them (must be 0);
* ``cost``: CPU milliseconds per call of the server, Redis and the client (memory and Redis stores):
  a figure the other jobs of a shared machine do not inflate, and one worker's capacity from it;
* ``surface-fuzz``, ``healthz-while-grading``, ``ws-episode``, ``db-refused``, ``sandbox-memory``: the same
  attacks on every surface, the rollout database and the sandbox (issue 39; ``benchmarks/reliability_attacks.py``).

Usage::

    python benchmarks/reliability_run.py all            # every scenario, the default sizes
    python benchmarks/reliability_run.py fuzz --requests 20000
    python benchmarks/reliability_run.py load --rate 300 --load-seconds 30
    python benchmarks/reliability_run.py surface-fuzz --requests 20000 --seconds 600
    python benchmarks/reliability_run.py ws-episode --duration-s 600
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import socket
import statistics
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.reliability_attacks import ATTACKS, mutate  # noqa: E402  # issue 39: surfaces, database, sandbox
from rft_sdk.emulator._session import ROLLOUTS_PER_CLIENT  # noqa: E402
from rft_sdk.protocol import TOOL_TIMEOUT_S  # noqa: E402
from rft_sdk.testing import RedisServer, free_port, serve_process  # noqa: E402
from rft_sdk.testing import redis_server as testing_redis_server  # noqa: E402

APP = "benchmarks.reliability_app:server"
RAW_SURROGATE = b"\xed\xa0\x80"


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def call(name: str, arguments: dict[str, Any] | None = None, *, trace_id: str, call_id: str | None = None) -> dict:
    return {"type": "function_call", "id": "fc_1", "call_id": call_id or f"call_{uuid.uuid4().hex[:12]}",
            "name": name, "arguments": json.dumps(arguments or {}), "trace_id": trace_id,
            "item": {"task": "retail", "order": "#W2378156"}}


# -- Redis -------------------------------------------------------------------------------------------
def redis_server() -> contextlib.AbstractContextManager[RedisServer]:
    """A ``redis-server`` as production runs it (``--appendonly yes --appendfsync always``), killable and
    restartable over the same data."""
    return testing_redis_server(appendfsync="always")


async def post(client: httpx.AsyncClient, path: str, payload: dict, retry_s: float = 0.0) -> httpx.Response:
    """POST; with ``retry_s`` > 0 resend the same body on a 5xx or a broken connection, like the hosted side."""
    deadline = time.monotonic() + retry_s
    while True:
        try:
            answer = await client.post(path, json=payload)
            if answer.status_code < 500 or time.monotonic() > deadline:
                return answer
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.1)


def _run_fast(coro: Any) -> Any:
    """Run ``coro`` on uvloop when installed: the load generator shares the machine's cores with the
    server and Redis, and asyncio's own loop costs it more CPU per request."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


class Clients:
    """``httpx.AsyncClient`` shards for a load generator: ``client(i)`` is request or rollout ``i``'s.

    httpcore's pool does work proportional to its connections times its queued requests at every event
    (encode/httpcore#1035), so one client with hundreds of requests in flight spends more CPU than the
    server it measures (300 instant calls at once: 3-7 s, the generator at 100 % of a core, the server at
    5 %). The emulator shards its clients for the same reason, as many rollouts per client.
    """

    def __init__(self, url: str, in_flight: int, *, timeout: float, per_client: int = ROLLOUTS_PER_CLIENT) -> None:
        shards = max(1, -(-in_flight // per_client))
        ssl_context = httpx.create_ssl_context()  # once: loading the CA bundle costs ~30 ms per client
        limits = httpx.Limits(max_connections=4 * per_client, max_keepalive_connections=4 * per_client,
                              keepalive_expiry=2.0)  # under uvicorn's 5 s: no close-vs-reuse race
        self.clients = [httpx.AsyncClient(base_url=url, timeout=timeout, limits=limits, verify=ssl_context)
                        for _ in range(shards)]

    def client(self, i: int) -> httpx.AsyncClient:
        return self.clients[i % len(self.clients)]

    async def __aenter__(self) -> Clients:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for client in self.clients:
            await client.aclose()


# -- scenarios ---------------------------------------------------------------------------------------
#: The byte-edit fuzz's hostile pieces (``reliability_attacks.PIECES`` less its 5,000-digit and deep ones).
_PIECES = [RAW_SURROGATE, b"\xff", b"\xc3", b"\x00", b"\x1b", b'"', b"\\", b"\\ud800", b"\\udfff", b"{", b"}",
           b"[", b"]", b",", b":", b"1e999", b"NaN", b"null", b"true", b"99999999999999999999999", b""]


def _mutate(rng: random.Random, good: bytes) -> bytes:
    return mutate(rng, good, _PIECES)


def fuzz(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    statuses: Counter[int] = Counter()
    not_json = 0
    with serve_process(APP, cwd=ROOT) as url:
        async def run() -> None:
            nonlocal not_json
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                async def one(i: int) -> None:
                    nonlocal not_json
                    trace = f"trace_{i % 500}"
                    kind = rng.random()
                    if kind < 0.55:
                        good = json.dumps(call(rng.choice(["write", "quick"]), {"sku": "A"}, trace_id=trace),
                                          ensure_ascii=False).encode()
                        path, method, content = rng.choice(["/tools/write", "/tools/quick", "/tools"]), "POST", \
                            _mutate(rng, good)
                    elif kind < 0.85:
                        good = json.dumps({"sample": {"output_text": "x"}, "item": {"a": 1}, "trace_id": trace}).encode()
                        path, method, content = "/grade", "POST", _mutate(rng, good)
                    else:
                        path = rng.choice(["/nope", "/tools/unknown", "/grade/nope", "/tools/write/x", "/healthz",
                                           "/tools", "/metrics"])
                        method, content = rng.choice(["GET", "POST", "PUT", "DELETE"]), b"{}"
                    answer = await client.request(method, path, content=content,
                                                  headers={"content-type": "application/json"})
                    statuses[answer.status_code] += 1
                    if answer.status_code != 200 and "json" not in answer.headers.get("content-type", ""):
                        not_json += 1

                sem = asyncio.Semaphore(8)

                async def bounded(i: int) -> None:
                    async with sem:
                        await one(i)

                deadline = time.monotonic() + args.seconds
                batch = 500
                for start in range(0, args.requests, batch):
                    if time.monotonic() > deadline:
                        break
                    await asyncio.gather(*(bounded(i) for i in range(start, min(start + batch, args.requests))))

        t0 = time.monotonic()
        asyncio.run(run())
        elapsed = time.monotonic() - t0
    fives = sum(n for s, n in statuses.items() if s >= 500)
    return {"scenario": "fuzz", "requests": sum(statuses.values()), "seconds": round(elapsed, 1),
            "5xx": fives, "non_json_errors": not_json, "statuses": dict(sorted(statuses.items()))}


def slow_headers(args: argparse.Namespace) -> dict[str, Any]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, args.sockets * 2 + 256)), hard))
    with serve_process(APP, "--header-timeout-s", str(args.header_timeout_s), cwd=ROOT) as url:
        host, port = url.removeprefix("http://").split(":")
        socks = []
        for _ in range(args.sockets):
            sock = socket.create_connection((host, int(port)), timeout=10)
            sock.sendall(b"POST /tools/write HTTP/1.1\r\nHost: a\r\nContent-Type: appl")
            sock.setblocking(False)
            socks.append(sock)
        t0 = time.monotonic()
        during = httpx.post(url + "/tools/quick", json=call("quick", trace_id="t-during"), timeout=30).status_code
        open_socks, closed_at = set(range(len(socks))), []
        deadline = t0 + args.header_timeout_s * 3 + 10
        while open_socks and time.monotonic() < deadline:
            for i in list(open_socks):
                try:
                    if socks[i].recv(1) == b"":
                        open_socks.discard(i)
                        closed_at.append(time.monotonic() - t0)
                except BlockingIOError:
                    pass
                except OSError:
                    open_socks.discard(i)
                    closed_at.append(time.monotonic() - t0)
            time.sleep(0.05)
        after = httpx.post(url + "/tools/quick", json=call("quick", trace_id="t-after"), timeout=30).status_code
        for sock in socks:
            sock.close()
    return {"scenario": "slow-headers", "sockets": args.sockets, "header_timeout_s": args.header_timeout_s,
            "closed": len(closed_at), "still_open": len(open_socks),
            "last_closed_after_s": round(max(closed_at), 2) if closed_at else None,
            "client_during": during, "client_after": after}


def redis_restart(args: argparse.Namespace) -> dict[str, Any]:
    with redis_server() as redis_proc, serve_process(APP, "--store", redis_proc.url, cwd=ROOT) as url:
        traces = [f"trace_{uuid.uuid4().hex}" for _ in range(args.rollouts)]
        answered: dict[str, list[str]] = {t: [] for t in traces}

        async def run() -> tuple[list[httpx.Response], list[int]]:
            limits = httpx.Limits(max_connections=args.rollouts)
            async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
                async def rollout(trace: str) -> None:
                    for i in range(args.calls):
                        answer = await post(client, "/tools/write", call("write", {"sku": "A"}, trace_id=trace,
                                                                         call_id=f"call_{i}"), retry_s=60)
                        if answer.status_code == 200:
                            answered[trace].append(answer.json()["output"])
                        await asyncio.sleep(0.1)

                async def restarter() -> None:
                    await asyncio.sleep(args.calls * 0.1 / 2)
                    redis_proc.kill()  # SIGKILL mid-run
                    await asyncio.sleep(1.0)
                    await asyncio.to_thread(redis_proc.start)

                await asyncio.gather(restarter(), *(rollout(t) for t in traces))
                grades = [await post(client, "/grade", {"sample": {"output_text": "x"}, "item": {}, "trace_id": t},
                                     retry_s=60) for t in traces]
                redis_proc.kill()  # and once more after the grades: tombstones must survive it
                await asyncio.to_thread(redis_proc.start)
                late = [(await post(client, "/tools/write", call("write", {"sku": "A"}, trace_id=t), retry_s=60))
                        .status_code for t in traces]
                return grades, late

        grades, late = asyncio.run(run())
    missing = sum(max(0, len(answered[t]) - int(g.json().get("score", 0))) for t, g in zip(traces, grades))
    doubled = 0
    for t, g in zip(traces, grades):
        details = json.loads(g.headers.get("x-rft-grade-details", "{}"))
        doubled += int(details.get("subscores", {}).get("writes", 0)) - len(answered[t])
    return {"scenario": "redis-restart", "rollouts": args.rollouts, "calls_answered": sum(map(len, answered.values())),
            "grades_ok": sum(g.status_code == 200 for g in grades), "answered_calls_missing": missing,
            "writes_applied_twice": doubled, "late_calls_not_409": sum(s != 409 for s in late)}


def load(args: argparse.Namespace) -> dict[str, Any]:
    latencies: list[float] = []
    finished: list[float] = []  # when each answer came (perf_counter)
    statuses: Counter[int] = Counter()
    with redis_server() as redis_proc, serve_process(APP, "--store", redis_proc.url, "--log-level", "warning",
                                                     cwd=ROOT) as url:
        async def run() -> tuple[float, float]:
            async with Clients(url, int(args.rate), timeout=TOOL_TIMEOUT_S) as clients:
                async def timed(client: httpx.AsyncClient, payload: dict, path: str) -> None:
                    t0 = time.perf_counter()
                    try:
                        answer = await client.post(path, json=payload)
                        statuses[answer.status_code] += 1
                    except httpx.TransportError as exc:  # counted by kind (a status of 0 would hide which)
                        statuses[type(exc).__name__] += 1  # type: ignore[index]
                    latencies.append(time.perf_counter() - t0)
                    finished.append(time.perf_counter())

                async def rollout(i: int) -> None:
                    trace, client = f"trace_{uuid.uuid4().hex}", clients.client(i)
                    for _ in range(args.calls - 1):
                        await timed(client, call("write", {"sku": "A"}, trace_id=trace), "/tools/write")
                        await asyncio.sleep(1.0 / args.calls)  # a rollout's calls spread over ~1 s
                    await timed(client, {"sample": {"output_text": "x"}, "item": {}, "trace_id": trace}, "/grade")

                tasks, start = [], time.perf_counter()
                per_s = args.rate / args.calls  # rollouts started per second
                n = int(per_s * args.load_seconds)
                for i in range(n):  # open loop: a rollout starts on schedule whatever the answers take
                    delay = start + i / per_s - time.perf_counter()
                    if delay > 0:
                        await asyncio.sleep(delay)
                    tasks.append(asyncio.ensure_future(rollout(i)))
                await asyncio.gather(*tasks)
                return start, time.perf_counter() - start

        start, elapsed = _run_fast(run())
    done = sum(statuses.values())
    quantiles = statistics.quantiles(latencies, n=100) if len(latencies) > 100 else [float("nan")] * 99
    # steady state: answers that came between 1 s in (the first rollouts' calls spread over their first
    # second) and the end of the schedule; the whole run's figure also counts the last rollouts' tail
    window = max(args.load_seconds - 1.0, 1e-9)
    steady = sum(1 for t in finished if 1.0 <= t - start <= args.load_seconds)
    return {"scenario": "load", "target_rps": args.rate, "steady_rps": round(steady / window, 1),
            "achieved_rps": round(done / elapsed, 1),
            "requests": done, "errors": done - statuses[200], "statuses": dict(statuses),
            "p50_ms": round(quantiles[49] * 1e3, 2), "p99_ms": round(quantiles[98] * 1e3, 2),
            "max_ms": round(max(latencies) * 1e3, 2)}


def hung_tools(args: argparse.Namespace) -> dict[str, Any]:
    with serve_process(APP, cwd=ROOT) as url:
        async def run() -> tuple[Counter[str], list[float]]:
            async with Clients(url, args.hung + args.quick, timeout=120) as clients:
                hung = [asyncio.ensure_future(clients.client(i).post("/tools/hang", json=call(
                    "hang", {"seconds": args.hang_s}, trace_id=f"hung_{i}"))) for i in range(args.hung)]
                await asyncio.sleep(1.0)
                codes: Counter[str] = Counter()
                times: list[float] = []

                async def quick(i: int) -> None:
                    t0 = time.perf_counter()
                    answer = await clients.client(args.hung + i).post("/tools/quick",
                                                                      json=call("quick", trace_id=f"other_{i}"))
                    times.append(time.perf_counter() - t0)
                    codes["ok" if answer.status_code == 200 else answer.json()["error"]["code"]] += 1

                await asyncio.gather(*(quick(i) for i in range(args.quick)))
                for task in hung:
                    task.cancel()
                return codes, times

        codes, times = asyncio.run(run())
    return {"scenario": "hung-tools", "hung_calls": args.hung, "other_calls": args.quick,
            "tool_timeout_in_other_rollouts": codes.get("tool_timeout", 0), "outcomes": dict(codes),
            "other_p99_ms": round(statistics.quantiles(times, n=100)[98] * 1e3, 1) if len(times) > 100 else None,
            "other_max_ms": round(max(times) * 1e3, 1)}


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) used so far by process ``pid`` (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cost(args: argparse.Namespace) -> dict[str, Any]:
    """CPU milliseconds per tool call of the server, Redis and this client (closed loop, 8 clients): a figure
    other processes on the machine do not inflate, from which one worker's capacity follows."""
    out: dict[str, Any] = {"scenario": "cost"}
    for store in ("memory", "redis"):
        with redis_server() as redis_proc:
            port = free_port()
            extra = ["--store", redis_proc.url] if store == "redis" else []
            proc = subprocess.Popen([sys.executable, "-m", "rft_sdk", "serve", APP, "--port", str(port),
                                     "--log-level", "warning", *extra], cwd=ROOT)
            url = f"http://127.0.0.1:{port}"
            try:
                deadline = time.monotonic() + 30
                while True:
                    try:
                        httpx.get(url + "/healthz")
                        break
                    except httpx.TransportError:
                        if time.monotonic() > deadline:
                            raise RuntimeError("server did not start") from None
                        time.sleep(0.1)

                async def run(url: str = url) -> int:
                    async with httpx.AsyncClient(base_url=url, timeout=TOOL_TIMEOUT_S) as client:
                        async def worker() -> None:
                            trace = ""
                            for i in range(args.calls_per_client):
                                trace = trace if i % 6 else f"trace_{uuid.uuid4().hex}"
                                await client.post("/tools/write", json=call("write", {"sku": "A"}, trace_id=trace))

                        await asyncio.gather(*(worker() for _ in range(8)))
                    return 8 * args.calls_per_client

                assert redis_proc.proc is not None
                server0, redis0, client0 = _cpu_s(proc.pid), _cpu_s(redis_proc.proc.pid), time.process_time()
                n = asyncio.run(run())
                out[store] = {"server_ms": round((_cpu_s(proc.pid) - server0) / n * 1e3, 2),
                              "redis_ms": round((_cpu_s(redis_proc.proc.pid) - redis0) / n * 1e3, 2),
                              "client_ms": round((time.process_time() - client0) / n * 1e3, 2)}
                out[store]["server_capacity_rps"] = round(1e3 / out[store]["server_ms"])
            finally:
                proc.terminate()
                proc.wait(timeout=30)
    return out


SCENARIOS = {"fuzz": fuzz, "slow-headers": slow_headers, "redis-restart": redis_restart, "load": load,
             "hung-tools": hung_tools, "cost": cost, **ATTACKS}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("scenario", choices=[*SCENARIOS, "all"])
    p.add_argument("--requests", type=int, default=20_000, help="fuzz: requests (bounded by --seconds too)")
    p.add_argument("--seconds", type=float, default=120.0, help="fuzz: time bound")
    p.add_argument("--load-seconds", type=float, default=30.0, help="load: duration")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sockets", type=int, default=3000, help="slow-headers: stalled sockets")
    p.add_argument("--header-timeout-s", type=float, default=10.0)
    p.add_argument("--rollouts", type=int, default=80, help="redis-restart: rollouts")
    p.add_argument("--calls", type=int, default=6, help="redis-restart, load: calls per rollout (grade included)")
    p.add_argument("--rate", type=float, default=300.0, help="load: requests per second")
    p.add_argument("--calls-per-client", type=int, default=300, help="cost: calls per client (8 clients)")
    p.add_argument("--hung", type=int, default=50, help="hung-tools: hung calls")
    p.add_argument("--hang-s", type=float, default=30.0, help="hung-tools: how long each hangs")
    p.add_argument("--quick", type=int, default=300, help="hung-tools: calls of the quick tool meanwhile")
    p.add_argument("--duration-s", type=float, default=600.0, help="ws-episode: seconds of steady steps")
    args = p.parse_args(argv)
    names = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    print(f"# reliability run, {os.cpu_count()} CPUs, load average {loadavg()}", flush=True)
    for name in names:
        result = SCENARIOS[name](args)
        print(json.dumps(result), flush=True)
    print(f"# load average after: {loadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
