"""Rollout stores side by side: memory, SQLite and Redis, measured in one run.

1. Throughput: ``wrk`` posts tool calls (a Lua script gives every request a
   new ``call_id`` over 1,000 rotating ``trace_id``\\s) to ``rft serve`` with
   1, 2 and 4 worker processes sharing one Redis, against 1 process on the
   in-memory store (the baseline); req/s and p99 latency.
2. Growth: per-call latency of the 1st and the 1,000th call of one rollout
   (1 KB output per call) on each store, through the whole ``ToolServer``
   pipeline in process (ASGI transport); target: flat (ratio near 1).
3. Memory: RSS growth of a process after saving 10,000 rollouts of 100 KB to a
   ``MemoryStore`` with its default byte budget (512 MiB); target: within it.
   Redis ``used_memory`` and the SQLite files after the same load, too.

Usage::

    python3 benchmarks/bench_stores.py [--seconds 5] [--out benchmarks/results/stores.txt]

Needs ``redis-server`` and ``wrk`` on PATH. Runtime: about 3 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rft_sdk import MemoryStore, RedisStore, SQLiteStore, StoredRollout, ToolCallRecord, ToolServer  # noqa: E402
from rft_sdk.testing import free_port, serve_process  # noqa: E402

_APP = '''
import os
from rft_sdk import Rollout, ToolServer, store_from_url

server = ToolServer(auth_env_var=None, store=store_from_url(os.environ["RFT_STORE_URL"]))


@server.tool
def add(qty: int, *, rollout: Rollout) -> str:
    """Add ``qty`` to this rollout's counter."""
    rollout.state["n"] = rollout.state.get("n", 0) + qty
    return str(rollout.state["n"])
'''

_WRK_LUA = r'''
local counter, thread_id = 0, 0
local threads = {}
function setup(thread) thread:set("tid", #threads); table.insert(threads, thread) end
function init(args) thread_id = tid end
function request()
  counter = counter + 1
  local trace = "trace-" .. thread_id .. "-" .. (counter % 250)
  local body = '{"type":"function_call","id":"fc_' .. counter .. '","call_id":"call-' .. thread_id .. '-' ..
    counter .. '","name":"add","arguments":"{\\"qty\\": 1}","trace_id":"' .. trace .. '","item":{}}'
  return wrk.format("POST", "/tools/add", {["Content-Type"] = "application/json"}, body)
end
function done(summary, latency, requests)
  io.write(string.format("RESULT %d %d %.1f %d\n", summary.requests, summary.duration,
    latency:percentile(99), summary.errors.status + summary.errors.connect + summary.errors.timeout))
end
'''


def redis_server() -> tuple[subprocess.Popen[bytes], str]:
    """Start a throwaway ``redis-server`` on a free loopback port, configured as production must run it
    (``--appendonly yes --appendfsync always`` in a temporary directory: ``RedisStore`` refuses a Redis
    without an append-only file, docs/reliability.md); return it and its URL."""
    import redis

    port = free_port()
    directory = tempfile.mkdtemp(prefix="rft-bench-redis-")
    atexit.register(shutil.rmtree, directory, True)
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--dir", directory, "--appendonly", "yes", "--appendfsync", "always"],
                            stdout=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    for _ in range(100):
        try:
            redis.Redis.from_url(url).ping()
            return proc, url
        except redis.ConnectionError:
            time.sleep(0.05)
    raise RuntimeError("redis-server did not start")


def wrk(url: str, seconds: int, script: Path) -> tuple[float, float, int]:
    """Run wrk (2 threads, 32 connections); return (req/s, p99 ms, errors)."""
    out = subprocess.run(["wrk", "-t2", "-c32", f"-d{seconds}s", "-s", str(script), url],
                         capture_output=True, text=True, check=True).stdout
    match = re.search(r"RESULT (\d+) (\d+) ([\d.]+) (\d+)", out)
    if match is None:
        raise RuntimeError(f"wrk printed no result: {out}")
    requests, duration_us, p99_us, errors = match.groups()
    return int(requests) / (int(duration_us) / 1e6), float(p99_us) / 1000, int(errors)


def throughput(redis_url: str, seconds: int, tmp: Path) -> list[str]:
    (tmp / "bench_store_app.py").write_text(textwrap.dedent(_APP))
    script = tmp / "calls.lua"
    script.write_text(_WRK_LUA)
    rows, baseline = [], None
    for label, url, workers in [("memory, 1 process", "memory://", 1), ("redis, 1 process", redis_url, 1),
                                ("redis, 2 processes", redis_url, 2), ("redis, 4 processes", redis_url, 4)]:
        env = {"PYTHONPATH": f"{ROOT}{os.pathsep}{tmp}", "RFT_STORE_URL": url}
        with serve_process("bench_store_app:server", "--workers", str(workers), cwd=tmp, env=env) as base:
            time.sleep(1.0 if workers > 1 else 0.2)  # let every worker start accepting
            rps, p99, errors = wrk(base, seconds, script)
        baseline = baseline or rps
        rows.append(f"{label:<22} {rps:>9.0f} {p99:>9.1f} {rps / baseline:>9.2f} {errors:>7}")
    return ["req/s and p99 (wrk -t2 -c32, 250 rollouts per thread, a new call_id per request)",
            f"{'server':<22} {'req/s':>9} {'p99 ms':>9} {'x memory':>9} {'errors':>7}", *rows]


async def growth(redis_url: str, tmp: Path) -> list[str]:
    stores = {"memory": MemoryStore(), "sqlite": SQLiteStore(tmp / "growth.db"),
              "redis": RedisStore(redis_url, prefix="growth:")}
    rows = []
    for name, store in stores.items():
        server = ToolServer(auth_env_var=None, store=store)

        @server.tool
        def fetch(page: int) -> str:
            """Return a 1 KB page."""
            return f"page {page}: " + "x" * 1000

        times = []
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as client:
            for i in range(1000):
                body = {"type": "function_call", "id": f"fc_{i}", "call_id": f"c{i}", "name": "fetch",
                        "arguments": json.dumps({"page": i}), "trace_id": f"growth-{name}", "item": {}}
                t0 = time.perf_counter()
                response = await client.post("/tools/fetch", json=body)
                times.append(time.perf_counter() - t0)
                assert response.status_code == 200, response.text
        first, last = statistics.median(times[:10]) * 1000, statistics.median(times[-10:]) * 1000
        rows.append(f"{name:<8} {times[0] * 1000:>10.2f} {first:>12.2f} {last:>14.2f} {last / first:>8.2f}")
        await store.aclose()
    return ["per-call latency in one rollout (1 KB outputs; in-process ToolServer, ms)",
            f"{'store':<8} {'1st call':>10} {'calls 1-10':>12} {'calls 991-1000':>14} {'ratio':>8}", *rows]


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) / 1024


async def _fill(store, n: int = 10_000, size: int = 100_000) -> None:
    for i in range(n):
        record = ToolCallRecord(call_id="c0", id="fc_0", name="fetch", arguments={}, output="x" * size, error=None,
                                status=200, started_at=0.0, latency_s=0.0)
        await store.save(StoredRollout(trace_id=f"rss-{i}", trajectory=[record], responses={"c0": [200, "{}"]}))


async def memory_use(redis_url: str, tmp: Path) -> list[str]:
    import redis.asyncio

    rows = []
    before = _rss_mb()
    store = MemoryStore()
    await _fill(store)
    stats = await store.astats()
    budget = store.bounds.max_total_bytes / 2**20
    rows.append(f"{'memory (RSS growth)':<24} {_rss_mb() - before:>10.0f} {budget:>10.0f} {stats['bytes'] / 2**20:>10.0f} "
                f"{stats['evicted']:>8}")
    del store
    sq = SQLiteStore(tmp / "rss.db")
    await _fill(sq)
    stats = await sq.astats()
    on_disk = sum(p.stat().st_size for p in tmp.glob("rss.db*")) / 2**20
    rows.append(f"{'sqlite (db+wal files)':<24} {on_disk:>10.0f} {budget:>10.0f} {stats['bytes'] / 2**20:>10.0f} "
                f"{stats['evicted']:>8}")
    rd = RedisStore(redis_url, prefix="rss:")
    client = redis.asyncio.from_url(redis_url)
    base = (await client.info("memory"))["used_memory"]
    await _fill(rd)
    used = ((await client.info("memory"))["used_memory"] - base) / 2**20
    stats = await rd.astats()
    rows.append(f"{'redis (used_memory)':<24} {used:>10.0f} {budget:>10.0f} {stats['bytes'] / 2**20:>10.0f} "
                f"{stats['evicted']:>8}")
    await client.aclose()
    await rd.aclose()
    return ["memory after 10,000 rollouts of 100 KB (1 GB offered; default budget 512 MiB)",
            f"{'store':<24} {'MiB used':>10} {'budget':>10} {'counted':>10} {'evicted':>8}", *rows]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=5, help="wrk duration per server (default 5)")
    parser.add_argument("--out", type=Path, default=None, help="also write the table to this file")
    args = parser.parse_args()
    for tool in ("redis-server", "wrk"):
        if shutil.which(tool) is None:
            print(f"bench_stores: {tool} is not installed", file=sys.stderr)
            return 2
    proc, redis_url = redis_server()
    t0 = time.monotonic()
    try:
        with tempfile.TemporaryDirectory() as tmp_dir:
            tmp = Path(tmp_dir)
            lines = [f"bench_stores: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
                     f"{subprocess.run(['redis-server', '--version'], capture_output=True, text=True).stdout.split()[2]}",
                     ""]
            lines += throughput(redis_url, args.seconds, tmp) + [""]
            lines += asyncio.run(growth(redis_url, tmp)) + [""]
            lines += asyncio.run(memory_use(redis_url, tmp))
            lines += ["", f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB; "
                      f"run took {time.monotonic() - t0:.0f} s"]
    finally:
        proc.terminate()
        proc.wait()
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
