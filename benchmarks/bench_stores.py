"""Rollout stores side by side: memory, SQLite and Redis, measured in one run.

Every tool call carries the rollout's dataset item, as the hosted side sends
it: a real retail line (``examples/retail/data/retail_train.jsonl``, ~14 KB)
unless ``--item tiny``.

0. Per-call cost with the item: the same tool through the whole ``ToolServer``
   pipeline in process (an ASGI call, no socket), 8 calls per rollout
   interleaved over 64 rollouts, on memory, SQLite and Redis in rounds (the
   order rotates); wall µs per call, CPU µs of this process and of
   ``redis-server`` per call (``INFO cpu`` deltas), Redis round trips per call;
   ratio to memory, and Redis per call as a multiple of memory (both CPUs).
   ``--concurrency N`` keeps N rollouts in flight (one call of each at a time),
   as a batch of rollouts does: Redis then fsyncs once for the writes of many.
1. Throughput: ``wrk`` posts tool calls (a new ``call_id`` per request, 8 calls
   per rollout over 256 rollouts per thread) to ``rft serve`` with 1, 2 and 4
   worker processes sharing one Redis, against 1 process on the in-memory
   store (the baseline); req/s and p99 latency.
2. Growth: per-call latency of the 1st and the 1,000th call of one rollout
   (1 KB output per call) on each store, through the whole ``ToolServer``
   pipeline in process (ASGI transport); target: flat (ratio near 1).
3. Memory: RSS growth of a process after saving 10,000 rollouts of 100 KB to a
   ``MemoryStore`` with its default byte budget (512 MiB); target: within it.
   Redis ``used_memory`` and the SQLite files after the same load, too.

Usage::

    python3 benchmarks/bench_stores.py [--seconds 5] [--item retail|tiny] [--out benchmarks/results/stores.txt]
    python3 benchmarks/bench_stores.py --only per-call      # section 0 alone (or: throughput, growth, memory)
    python3 benchmarks/bench_stores.py --only per-call --appendfsync everysec   # Redis fsyncing once a second
    python3 benchmarks/bench_stores.py --only per-call --concurrency 16  # 16 rollouts in flight (fsyncs shared)
    python3 benchmarks/bench_stores.py --only per-call --redis-baseline ../main   # old RedisStore side by side
    python3 benchmarks/bench_stores.py --only per-call --floor   # + memory with one durable Redis SET per call

Needs ``redis-server`` on PATH, and ``wrk`` for section 1. Runtime: about 3 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
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
    sys.path.append(str(ROOT))  # after $PYTHONPATH: PYTHONPATH=DIR measures another checkout's rft_sdk

from rft_sdk import (  # noqa: E402
    MemoryStore,
    RedisStore,
    Rollout,
    SQLiteStore,
    StoredRollout,
    ToolCallRecord,
    ToolServer,
)
from rft_sdk.testing import redis_server, serve_process  # noqa: E402

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
local item = ITEM
function setup(thread) thread:set("tid", #threads); table.insert(threads, thread) end
function init(args) thread_id = tid end
function request()
  counter = counter + 1
  -- 8 calls per rollout, interleaved over 256 rollouts (then the next 256)
  local trace = "trace-" .. thread_id .. "-" .. ((counter % 256) + 256 * math.floor(counter / 2048))
  local body = '{"type":"function_call","id":"fc_' .. counter .. '","call_id":"call-' .. thread_id .. '-' ..
    counter .. '","name":"add","arguments":"{\\"qty\\": 1}","trace_id":"' .. trace .. '","item":' .. item .. '}'
  return wrk.format("POST", "/tools/add", {["Content-Type"] = "application/json"}, body)
end
function done(summary, latency, requests)
  io.write(string.format("RESULT %d %d %.1f %d\n", summary.requests, summary.duration,
    latency:percentile(99), summary.errors.status + summary.errors.connect + summary.errors.timeout))
end
'''


def wrk(url: str, seconds: int, script: Path) -> tuple[float, float, int]:
    """Run wrk (2 threads, 32 connections); return (req/s, p99 ms, errors)."""
    out = subprocess.run(["wrk", "-t2", "-c32", f"-d{seconds}s", "-s", str(script), url],
                         capture_output=True, text=True, check=True).stdout
    match = re.search(r"RESULT (\d+) (\d+) ([\d.]+) (\d+)", out)
    if match is None:
        raise RuntimeError(f"wrk printed no result: {out}")
    requests, duration_us, p99_us, errors = match.groups()
    return int(requests) / (int(duration_us) / 1e6), float(p99_us) / 1000, int(errors)


RETAIL = ROOT / "examples" / "retail" / "data" / "retail_train.jsonl"  # tau2-bench retail, MIT (LICENSE there)


def item_json(kind: str) -> bytes:
    """The item every call carries: the first retail line (~14 KB), or ``{"task_id": 7}``."""
    if kind == "tiny":
        return b'{"task_id":7}'
    with open(RETAIL, "rb") as f:
        return f.readline().strip()


def _lua_long_string(text: bytes) -> str:
    level = 1
    while f"]{'=' * level}]".encode() in text:
        level += 1
    return f"[{'=' * level}[" + text.decode("utf-8") + f"]{'=' * level}]"


async def _asgi_post(app, path: str, body: bytes) -> int:
    """One POST through the ASGI app, no socket (what the pipeline itself costs); returns the status."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": path, "raw_path": path.encode(), "root_path": "", "query_string": b"",
             "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 8000)}
    sent, status = False, 0

    async def receive():
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope, receive, send)
    return status


def _redis_counts(client) -> tuple[int, float]:
    """(round trips: commands sent by clients, CPU seconds used) of the Redis server so far.

    A script's own ``redis.call``\\ s are counted apart from the ``EVALSHA`` that ran it: the round trips
    are every command but those inside scripts, i.e. all calls minus the script-internal ones, which
    ``INFO commandstats`` cannot tell apart; so they are counted as ``EVALSHA``/``EVAL`` plus the plain
    commands the store sends outside scripts (``GET``/``SET`` of tombstones, ``ZSCORE``/``HGETALL`` of grades,
    ``INFO``/``CONFIG`` of its start-up check), which the tool path does not use."""
    stats, cpu = client.info("commandstats"), client.info("cpu")
    trips = sum(int(v["calls"]) for k, v in stats.items() if k in ("cmdstat_evalsha", "cmdstat_eval"))
    return trips, float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])


def _redis_work(client) -> tuple[int, int, int]:
    """(commands run, bytes received, bytes sent) by the Redis server so far; ``INFO`` commands are not
    counted (the probe's own), their bytes are (``growth`` subtracts them, measured with no call between)."""
    stats, commands = client.info("stats"), client.info("commandstats")
    run = sum(int(v["calls"]) for k, v in commands.items() if not k.startswith("cmdstat_info"))
    return run, int(stats["total_net_input_bytes"]), int(stats["total_net_output_bytes"])


async def _client(app, name: str, bodies: list[bytes], rollouts: int, concurrency: int, first: int) -> None:
    """Post the calls of rollouts ``first``, ``first + concurrency``, ... in order (each rollout's one at a time)."""
    for i, body in enumerate(bodies):
        if i % rollouts % concurrency == first:
            status = await _asgi_post(app, "/tools/add", body)
            if status != 200:
                raise RuntimeError(f"{name}: status {status}")


def baseline_redis_store(checkout: Path) -> type:
    """``RedisStore`` of another checkout: its ``rft_sdk/_stores/_redis*.py`` and ``_records.py`` loaded under
    other module names, on this checkout's pipeline and helpers (so old and new code run side by side, in one
    process, against one Redis)."""
    import types

    import rft_sdk._stores as package

    names = ("_records", "_redis_scripts", "_redis_batch", "_redis")
    for name in names:
        path = checkout / "rft_sdk" / "_stores" / f"{name}.py"
        if not path.exists():
            continue  # (a checkout before the module existed)
        source = path.read_text()
        for dep in names[:-1]:
            source = source.replace(f"from .{dep} import", f"from .{dep}_baseline import")
            source = source.replace(f"from . import {dep} as", f"from . import {dep}_baseline as")
        module = types.ModuleType(f"rft_sdk._stores.{name}_baseline")
        module.__package__, module.__file__ = "rft_sdk._stores", str(path)
        sys.modules[module.__name__] = module
        setattr(package, f"{name}_baseline", module)
        exec(compile(source, str(path), "exec"), module.__dict__)
    return sys.modules["rft_sdk._stores._redis_baseline"].RedisStore


class DurableWriteFloor(MemoryStore):
    """``MemoryStore`` plus, per save, the least a durable Redis write costs: one ``EVALSHA`` of a script that
    sets one small key (``SET``), over the same kind of connection and packer as ``RedisStore``'s scripts
    (``ScriptBatcher``: hiredis-packed, one write, one read). With ``appendfsync always`` Redis fsyncs it before
    answering, so this row is what any store that makes each call durable in Redis before answering pays at
    least: the round trip, the wait on the fsync (and the wake-up after it), Redis's fsync. ``redis`` minus this
    row is what ``RedisStore``'s own logic costs (``--floor``)."""

    def __init__(self, redis_url: str) -> None:
        import redis.asyncio

        from rft_sdk._stores._redis_batch import ScriptBatcher

        super().__init__()
        self.client = redis.asyncio.Redis.from_url(redis_url, decode_responses=True)
        self.script = self.client.register_script("redis.call('SET', KEYS[1], ARGV[1]) return 1")
        self.batcher = ScriptBatcher(self.client)

    async def save(self, rollout: StoredRollout) -> None:
        await super().save(rollout)
        await self.batcher.run(self.script, ["floor:" + rollout.trace_id], [str(len(rollout.trajectory))])

    async def aclose(self) -> None:
        await self.batcher.aclose()
        await self.client.aclose()


async def per_call(redis_url: str, tmp: Path, item: bytes, rounds: int = 3, rollouts: int = 64,
                   calls: int = 8, loop: str = "asyncio", appendfsync: str = "always",
                   concurrency: int = 1, baseline: Path | None = None, floor: bool = False) -> list[str]:
    """Per-call cost of each store with ``item`` in every call (see the module docstring, section 0)."""
    import redis

    probe = redis.Redis.from_url(redis_url)
    stores = {"memory": MemoryStore(), "sqlite": SQLiteStore(tmp / "per_call.db"),
              "redis": RedisStore(redis_url, prefix="percall:")}
    if baseline is not None:
        stores["redis-base"] = baseline_redis_store(baseline)(redis_url, prefix="percall-base:")
    if floor:
        stores["redis-floor"] = DurableWriteFloor(redis_url)
    servers = {}
    for name, store in stores.items():
        server = ToolServer(auth_env_var=None, store=store)

        @server.tool
        async def add(qty: int, *, rollout: Rollout) -> str:
            """Add ``qty`` to this rollout's counter."""
            rollout.state["n"] = rollout.state.get("n", 0) + qty
            return str(rollout.state["n"])

        servers[name] = server
    wall: dict[str, list[float]] = {name: [] for name in stores}
    cpu: dict[str, list[float]] = {name: [] for name in stores}
    redis_cpu: dict[str, list[float]] = {name: [] for name in stores}
    commands: dict[str, list[float]] = {name: [] for name in stores}
    # CPU µs (this process + redis-server) per call at each position in the rollout, one list per round
    by_call: dict[str, list[list[float]]] = {name: [] for name in stores}
    n = rollouts * calls
    for r in range(-1, rounds):  # round -1 warms every store up
        order = list(stores)[r % len(stores):] + list(stores)[:r % len(stores)]
        bodies = {name: [(b'{"type":"function_call","call_id":"c%d-%d","trace_id":"%s-r%d-t%d","name":"add",'
                          b'"arguments":"{\\"qty\\": 1}","item":' % (r, i, name.encode(), r, i % rollouts)) + item
                         + b"}" for i in range(n)] for name in stores}
        totals = {name: [0.0, 0.0, 0.0, 0.0] for name in stores}  # wall, CPU, Redis CPU, round trips
        positions: dict[str, list[float]] = {name: [] for name in stores}
        for position in range(calls):  # the stores take turns every call of each rollout (load hits all alike)
            block = slice(position * rollouts, (position + 1) * rollouts)
            for name in order:
                before = _redis_counts(probe)
                t0, c0 = time.perf_counter(), time.process_time()
                await asyncio.gather(*(_client(servers[name], name, bodies[name][block], rollouts, concurrency, first)
                                       for first in range(concurrency)))
                spent = (time.perf_counter() - t0, time.process_time() - c0)
                after = _redis_counts(probe) if name.startswith("redis") else before
                totals[name][0] += spent[0]
                totals[name][1] += spent[1]
                totals[name][2] += after[1] - before[1]
                totals[name][3] += after[0] - before[0]
                positions[name].append((spent[1] + after[1] - before[1]) / rollouts * 1e6)
        if r < 0:
            continue
        for name in stores:
            wall[name].append(totals[name][0] / n * 1e6)
            cpu[name].append(totals[name][1] / n * 1e6)
            by_call[name].append(positions[name])
            if name.startswith("redis"):
                redis_cpu[name].append(totals[name][2] / n * 1e6)
                commands[name].append(totals[name][3] / n)
    lanes = [lane.conn for lane in stores["redis"]._batcher._lanes if lane.conn is not None]
    parser = type(lanes[0]._parser).__name__ if lanes else "-"  # what reads the store's replies
    for store in stores.values():
        await store.aclose()
    probe.close()
    med = statistics.median
    base_wall, base_cpu = med(wall["memory"]), med(cpu["memory"])
    rows = []
    for name in stores:
        extra = med(redis_cpu[name]) if redis_cpu[name] else 0.0
        trips = f"{med(commands[name]):.2f}" if commands[name] else "-"
        rows.append(f"{name:<10} {med(wall[name]):>10.0f} {med(cpu[name]):>10.0f} {extra:>10.0f} "
                    f"{trips:>11} {med(wall[name]) / base_wall:>9.2f} {(med(cpu[name]) + extra) / base_cpu:>9.2f}")
    ratio = (med(cpu["redis"]) + med(redis_cpu["redis"])) / base_cpu
    also = ""
    if baseline is not None:
        also = (f"; the baseline's ({baseline}): "
                f"{(med(cpu['redis-base']) + med(redis_cpu['redis-base'])) / base_cpu:.2f}x CPU, "
                f"{med(wall['redis-base']) / base_wall:.2f}x wall")
    if floor:
        also += (f"; the floor (memory + one durable SET per call, row redis-floor): "
                 f"{(med(cpu['redis-floor']) + med(redis_cpu['redis-floor'])) / base_cpu:.2f}x CPU")
    setting = {"always": "the setting the SDK's deployment templates ship (docs/reliability.md)",
               "everysec": "Redis's own fsync policy once its AOF is on (its default is no AOF at all); a host "
                           "crash may lose the last second of writes"}[appendfsync]
    return [f"per-call cost with a {len(item):,}-byte item (in-process ToolServer, async tool, {loop} loop, {calls} calls "
            f"per rollout over {rollouts} rollouts, {concurrency} in flight, {rounds} rounds x {n} calls, medians; "
            f"Redis appendfsync "
            f"{appendfsync}, redis-py {redis.__version__}, hiredis {'yes' if _hiredis() else 'no'}, the store's "
            f"replies read by {parser})",
            f"{'store':<10} {'wall µs':>10} {'CPU µs':>10} {'Redis µs':>10} {'round trips':>11} {'x memory':>9} "
            f"{'x mem CPU':>9}", *rows,
            "(wall µs: time per call, waits included (Redis's fsync with appendfsync always); CPU µs: this "
            "process, worker threads and kernel time included; Redis µs: redis-server's CPU per call (INFO cpu: "
            "user + sys of all its threads; time blocked on the disk is not CPU); x memory: wall over memory's; "
            "x mem CPU: the two CPUs summed, over memory's; round trips: scripts run per call)",
            f"Redis per call: {ratio:.2f}x memory in CPU (this process plus redis-server; issue 40 asks <= 3x), "
            f"{med(wall['redis']) / base_wall:.2f}x in wall time, {concurrency} in flight, appendfsync "
            f"{appendfsync}: {setting}{also}",
            "CPU µs per call (this process + redis-server) by the call's place in its rollout, medians of the "
            "rounds: " + "; ".join(
                f"{name} " + ", ".join(f"#{k + 1} {med(rnd[k] for rnd in by_call[name]):.0f}"
                                       for k in sorted({0, 1, calls // 2, calls - 1}))
                for name in stores)]


def _hiredis() -> bool:
    """Whether redis-py parses replies with hiredis (the C parser the ``redis`` extra installs)."""
    from redis.utils import HIREDIS_AVAILABLE

    return bool(HIREDIS_AVAILABLE)


def throughput(redis_url: str, seconds: int, tmp: Path, item: bytes) -> list[str]:
    (tmp / "bench_store_app.py").write_text(textwrap.dedent(_APP))
    script = tmp / "calls.lua"
    script.write_text(_WRK_LUA.replace("ITEM", _lua_long_string(item), 1))
    rows, baseline = [], None
    for label, url, workers in [("memory, 1 process", "memory://", 1), ("redis, 1 process", redis_url, 1),
                                ("redis, 2 processes", redis_url, 2), ("redis, 4 processes", redis_url, 4)]:
        first = os.environ.get("PYTHONPATH")  # PYTHONPATH=DIR: the workers run DIR's rft_sdk
        env = {"PYTHONPATH": os.pathsep.join(p for p in (first, str(ROOT), str(tmp)) if p), "RFT_STORE_URL": url}
        with serve_process("bench_store_app:server", "--workers", str(workers), cwd=tmp, env=env) as base:
            time.sleep(1.0 if workers > 1 else 0.2)  # let every worker start accepting
            rps, p99, errors = wrk(base, seconds, script)
        baseline = baseline or rps
        rows.append(f"{label:<22} {rps:>9.0f} {p99:>9.1f} {rps / baseline:>9.2f} {errors:>7}")
    return [f"req/s and p99 (wrk -t2 -c32, a {len(item):,}-byte item in every call, 8 calls per rollout over 256 "
            f"rollouts per thread, a new call_id per request; {os.cpu_count()} CPUs shared by wrk, the workers and "
            "Redis)",
            f"{'server':<22} {'req/s':>9} {'p99 ms':>9} {'x memory':>9} {'errors':>7}", *rows]


async def growth(redis_url: str, tmp: Path) -> list[str]:
    """Latency and CPU per call early and late in one rollout of 1,000 calls, on each store."""
    import redis

    probe = redis.Redis.from_url(redis_url)
    early, late = range(1, 21), range(980, 1000)  # calls 2-21 (call 1 creates the rollout) and 981-1000
    stores = {"memory": MemoryStore(), "sqlite": SQLiteStore(tmp / "growth.db"),
              "redis": RedisStore(redis_url, prefix="growth:")}
    rows: list[str] = []
    notes: list[str] = []
    for name, store in stores.items():
        server = ToolServer(auth_env_var=None, store=store)

        @server.tool
        def fetch(page: int) -> str:
            """Return a 1 KB page."""
            return f"page {page}: " + "x" * 1000

        times, cpu, redis_cpu = [], [], {}
        sent: dict[int, tuple[float, ...]] = {}
        calibrate = _redis_work(probe)  # the probe's own bytes over one block's readings, no call between
        _redis_counts(probe)
        probe_bytes = tuple(b - a for a, b in zip(calibrate, _redis_work(probe)))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as client:
            for i in range(1000):
                body = {"type": "function_call", "id": f"fc_{i}", "call_id": f"c{i}", "name": "fetch",
                        "arguments": json.dumps({"page": i}), "trace_id": f"growth-{name}", "item": {}}
                if name == "redis" and i in (early[0], late[0]):
                    redis_cpu[i] = _redis_counts(probe)[1]
                    sent[i] = _redis_work(probe)
                t0, c0 = time.perf_counter(), time.process_time()
                response = await client.post("/tools/fetch", json=body)
                times.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
                if name == "redis" and i in (early[-1], late[-1]):
                    first = early[0] if i == early[-1] else late[0]
                    redis_cpu[first] = (_redis_counts(probe)[1] - redis_cpu[first]) / len(early) * 1e6
                    sent[first] = tuple((b - a - o) / len(early)
                                        for a, b, o in zip(sent[first], _redis_work(probe), (0, *probe_bytes[1:])))
                assert response.status_code == 200, response.text
        first, last = statistics.median(times[:10]) * 1000, statistics.median(times[-10:]) * 1000
        cpu_early = statistics.mean(cpu[early[0]:early[-1] + 1]) * 1e6 + redis_cpu.get(early[0], 0.0)
        cpu_late = statistics.mean(cpu[late[0]:late[-1] + 1]) * 1e6 + redis_cpu.get(late[0], 0.0)
        rows.append(f"{name:<8} {times[0] * 1000:>10.2f} {first:>12.2f} {last:>14.2f} {last / first:>8.2f} "
                    f"{cpu_early:>12.0f} {cpu_late:>14.0f} {cpu_late / cpu_early:>8.2f}")
        if sent:
            work = [f"{label} {sent[k][0]:.2f} commands, {sent[k][1]:.0f} bytes in, {sent[k][2]:.0f} bytes out"
                    for label, k in (("calls 2-21:", early[0]), ("calls 981-1000:", late[0]))]
            notes.append(f"{name} per call (INFO commandstats and stats; the probe's own INFO excluded): "
                         + "; ".join(work))
        await store.aclose()
    probe.close()
    return ["per call in one rollout of 1,000 calls (1 KB outputs; in-process ToolServer): latency in ms, and CPU "
            "µs per call (this process plus, for Redis, redis-server's, from INFO around each block of 20 calls)",
            f"{'store':<8} {'1st call':>10} {'calls 1-10':>12} {'calls 991-1000':>14} {'ratio':>8} "
            f"{'CPU 2-21':>12} {'CPU 981-1000':>14} {'ratio':>8}", *rows, *notes]


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
    parser.add_argument("--item", choices=["retail", "tiny"], default="retail",
                        help="the dataset item every call carries (default: a real ~14 KB retail line)")
    parser.add_argument("--only", choices=["per-call", "throughput", "growth", "memory"], default=None,
                        help="run one section")
    parser.add_argument("--rounds", type=int, default=3, help="per-call: interleaved rounds (default 3)")
    parser.add_argument("--loop", choices=["asyncio", "uvloop"], default="uvloop",
                        help="per-call: the event loop (default uvloop, what rft serve --loop auto picks)")
    parser.add_argument("--calls", type=int, default=8,
                        help="per-call: calls per rollout (default 8; 64 rollouts), e.g. 20 to see call 1 vs call 20")
    parser.add_argument("--concurrency", type=int, default=1, choices=[1, 2, 4, 8, 16, 32, 64],
                        help="per-call: rollouts in flight at once (default 1: one call at a time)")
    parser.add_argument("--redis-baseline", type=Path, default=None, metavar="CHECKOUT",
                        help="per-call: also measure the RedisStore of another checkout (e.g. a git worktree of "
                             "main), side by side in the same rounds (row redis-base)")
    parser.add_argument("--floor", action="store_true",
                        help="per-call: also measure memory plus one durable Redis SET per call (row redis-floor): "
                             "the least any store that makes each call durable in Redis pays")
    parser.add_argument("--appendfsync", choices=["always", "everysec"], default="always",
                        help="Redis's fsync policy (default always, what production must run: docs/reliability.md)")
    args = parser.parse_args()
    item = item_json(args.item)
    for tool in ("redis-server", "wrk") if args.only in (None, "throughput") else ("redis-server",):
        if shutil.which(tool) is None:
            print(f"bench_stores: {tool} is not installed", file=sys.stderr)
            return 2
    t0 = time.monotonic()
    # Redis as production must run it by default (an append-only file, fsync on every write: docs/reliability.md)
    with redis_server(appendfsync=args.appendfsync) as redis_proc, tempfile.TemporaryDirectory() as tmp_dir:
        redis_url = redis_proc.url
        tmp = Path(tmp_dir)
        lines = [f"# python benchmarks/bench_stores.py {' '.join(sys.argv[1:])}",
                 f"bench_stores: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
                 f"{subprocess.run(['redis-server', '--version'], capture_output=True, text=True).stdout.split()[2]}"
                 f"; load average at start {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
                 ""]
        if args.only in (None, "per-call"):
            factory = None
            if args.loop == "uvloop":
                import uvloop
                factory = uvloop.new_event_loop
            with asyncio.Runner(loop_factory=factory) as runner:
                lines += runner.run(per_call(redis_url, tmp, item, rounds=args.rounds, loop=args.loop, calls=args.calls,
                                              appendfsync=args.appendfsync, concurrency=args.concurrency,
                                              baseline=args.redis_baseline, floor=args.floor)) + [""]
        if args.only in (None, "throughput"):
            lines += throughput(redis_url, args.seconds, tmp, item) + [""]
        if args.only in (None, "growth"):
            lines += asyncio.run(growth(redis_url, tmp)) + [""]
        if args.only in (None, "memory"):
            lines += asyncio.run(memory_use(redis_url, tmp))
        lines += [f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}"]
        lines += ["", f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB; "
                  f"run took {time.monotonic() - t0:.0f} s"]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
