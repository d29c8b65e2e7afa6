"""A database per rollout, measured side by side in one run: SQLite and PostgreSQL against the
in-memory overlay of the retail example (the baseline).

1. Clone latency p50 / p99 of the retail database per backend: a cold clone
   (SQLite: the file copy the filesystem allows; PostgreSQL:
   ``CREATE DATABASE ... TEMPLATE``) against a claim from the warm pool
   (a rename), for the retail data and for 10x the retail data.
2. Per-call overhead against the in-memory overlay: one tool call
   (``get_order_details``, a read, and ``modify_pending_order_address``, a
   write) as the server runs it (open the rollout's database, BEGIN, replay
   check, the SQL tool, commit with the call_id, close) against the in-memory
   tool on a ``RetailView`` plus the JSON dump of its overlay into the
   store's state; 1x and 10x data.
3. Grade: reading the rollout's end state and comparing it with the template
   (``changes_of``), 1x and 10x.
4. Rollouts in flight (16, 64, 256; ``--in-flight 256,1024``): that many new
   rollouts at once, each getting its database and making one call through the
   server's request path (``execute_tool_call``: store, item check, database,
   tool, answer recorded; HTTP left out); p50 / p99 of the time to the first
   answer, the burst's wall time and this process's CPU seconds (when they are
   close, the server's Python bounds it), first the floor (the same call on the
   in-memory retail server, no database), then per pool
   mode: ``cold`` (no pool), ``ahead`` (the pool filled to the burst
   beforehand, no refill during it: the path before the adaptive pool) and
   ``adaptive`` (a trainer's second step: the first burst's arrivals size the
   pool, the maintenance thread refills it in the background, the second
   burst is timed).

Backends: ``sqlite``, ``postgres`` (a database per rollout) and
``postgres-schema`` (``PostgresSchemaDatabase``, a schema per rollout).

Usage::

    python benchmarks/bench_rollout_db.py [--quick] [--postgres-url URL] [--out FILE]
    python benchmarks/bench_rollout_db.py --sections 4 --in-flight 256,1024 --backends sqlite,postgres-schema
    python benchmarks/bench_rollout_db.py --sections 4 --in-flight 1024 --backends sqlite --modes ahead --workers 2
    git worktree add /tmp/rft-main main   # or: mkdir /tmp/rft-main && git archive main | tar -x -C /tmp/rft-main
    python benchmarks/bench_rollout_db.py --sections 4 --in-flight 1024 --backends postgres-schema --modes ahead \
        --baseline /tmp/rft-main --repeat 3

``--baseline DIR``: old and new side by side, interleaved: each of ``--repeat`` rounds runs this script once
against the checkout ``DIR`` ("old") and once against this one ("new"), one after the other, on one
PostgreSQL server, each run's load average printed before it.

Without ``--postgres-url`` a throwaway PostgreSQL (durable settings: fsync on) is
started (``rft_sdk.testing.postgres_server``). ``--quick``: fewer repetitions and
in-flight levels 16 and 64 only (about 2 minutes on 2 cores). ``postgres`` (a
database per rollout: a connection per rollout database) at 1,024 in flight ran
the throwaway server (``max_connections=600``) out of connections ("too many
clients") on the 2-core machine; ``postgres-schema`` shares its connections.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: The checkout whose ``rft_sdk`` is measured: this one, or ``$RFT_BENCH_ROOT`` (``--baseline`` runs this same
#: script against another checkout that way).
ROOT = Path(os.environ.get("RFT_BENCH_ROOT") or Path(__file__).resolve().parents[1])
sys.path.insert(0, str(ROOT))

from examples.retail import call_tool, load_base_db  # noqa: E402
from examples.retail.sql import _schema  # noqa: E402
from examples.retail.sql._tools import call_sql_tool  # noqa: E402
from rft_sdk import PostgresDatabase, PostgresSchemaDatabase, RolloutDatabase, SQLiteDatabase  # noqa: E402
from rft_sdk._db._pool import PoolSizer  # noqa: E402
from rft_sdk.testing import postgres_server  # noqa: E402

ORDER = "#W2611340"  # a processed order of the retail data
PENDING = "#W5918442"  # a pending order
ADDRESS = {"address1": "1 Main St", "address2": "", "city": "Austin", "state": "TX", "country": "USA", "zip": "78701"}


def scaled(tables: dict[str, Any], copies: int) -> dict[str, Any]:
    """The retail tables repeated ``copies`` times (ids suffixed ``~k``): a bigger database of the same shape."""
    if copies == 1:
        return tables
    out: dict[str, dict[str, Any]] = {"products": {}, "users": {}, "orders": {}}
    for k in range(copies):
        tag = "" if k == 0 else f"~{k}"
        for pid, p in tables["products"].items():
            q = copy.deepcopy(p)
            q["product_id"] = pid + tag
            q["variants"] = {i + tag: {**v, "item_id": i + tag} for i, v in p["variants"].items()}
            out["products"][pid + tag] = q
        for uid, u in tables["users"].items():
            v = copy.deepcopy(u)
            v["user_id"], v["email"] = uid + tag, u["email"].replace("@", f"{tag}@")
            v["orders"] = [o + tag for o in u["orders"]]
            out["users"][uid + tag] = v
        for oid, o in tables["orders"].items():
            p = copy.deepcopy(o)
            p["order_id"], p["user_id"] = oid + tag, o["user_id"] + tag
            for line in p["items"]:
                line["product_id"] += tag
                line["item_id"] += tag
            out["orders"][oid + tag] = p
    return out


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def ms(values: list[float]) -> str:
    return f"{1e3 * statistics.median(values):8.2f} / {1e3 * pct(values, 0.99):8.2f}"


def server_cpu_reader(db: RolloutDatabase | None) -> Callable[[], tuple[float, float]] | None:
    """``read() -> (CPU seconds, of which the client backends')`` the PostgreSQL server of ``db`` has used so
    far (its processes alive now plus the ones the postmaster reaped: ``/proc``; the rest is its background
    processes: checkpointer, WAL writer, autovacuum, ...), or ``None`` (SQLite, or a server not on this machine)."""
    if not isinstance(db, PostgresDatabase):
        return None
    import psycopg
    try:
        with psycopg.connect(db.url) as conn:
            backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        postmaster = int(Path(f"/proc/{backend}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, psycopg.Error):
        return None
    tick = os.sysconf("SC_CLK_TCK")

    def fields(pid: int) -> list[str] | None:
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended
            return None

    def read() -> tuple[float, float]:
        head = fields(postmaster)
        if head is None:
            return float("nan"), float("nan")
        ticks = sum(int(x) for x in head[11:15])  # utime, stime, cutime, cstime (children it reaped)
        backends = 0
        for entry in os.scandir("/proc"):
            if entry.name.isdigit() and int(entry.name) != postmaster:
                f = fields(int(entry.name))
                if f is not None and int(f[1]) == postmaster:
                    ticks += int(f[11]) + int(f[12])
                    with contextlib.suppress(OSError):  # a client backend's title names its client's address
                        if "(" in Path(f"/proc/{entry.name}/cmdline").read_text():
                            backends += int(f[11]) + int(f[12])
        return ticks / tick, backends / tick
    return read


BACKENDS = ("sqlite", "postgres", "postgres-schema")
MODES = ("cold", "ahead", "adaptive")


def _load_tables(tables: Any, conn: Any) -> None:
    """The benchmark's template (``functools.partial(_load_tables, tables)``; a worker process passes
    ``partial(_load_tables, None)``: the template exists, and this names the same source)."""
    _schema.load(conn, tables)


def make(backend: str, copies: int, root: Path, pg_url: str | None, pool: int) -> RolloutDatabase:
    tables = scaled(load_base_db().tables, copies)
    name = f"b{copies}x{uuid.uuid4().hex[:6]}"
    setup: Callable[[Any], None] = functools.partial(_load_tables, tables)
    common = dict(name=name, pool_size=pool, max_pool=pool, max_live=4096, sweep_interval_s=3600, admission_timeout_s=60)
    if backend == "sqlite":
        return SQLiteDatabase(setup=setup, dir=root, **common)  # files in root/name
    assert pg_url
    if backend == "postgres-schema":
        return PostgresSchemaDatabase(pg_url, setup=setup, max_connections=64, **common)
    return PostgresDatabase(pg_url, setup=setup, max_connections=300, **common)


async def clone_latency(db: RolloutDatabase, n: int) -> tuple[list[float], list[float]]:
    """``(cold, warm)`` seconds to give ``n`` new rollouts their database, one after the other."""
    cold, warm = [], []
    for i in range(n):
        t0 = time.perf_counter()
        await asyncio.to_thread(db._ensure, f"cold-{uuid.uuid4().hex}-{i}")
        cold.append(time.perf_counter() - t0)
    db.pool_size = n
    await asyncio.to_thread(db.maintain_once)  # fill the pool (not timed)
    for i in range(n):
        t0 = time.perf_counter()
        _, source = await asyncio.to_thread(db._ensure, f"warm-{uuid.uuid4().hex}-{i}")
        warm.append(time.perf_counter() - t0)
        assert source == "pool", source
    db.max_pool = 0
    return cold, warm


async def sql_call(db: RolloutDatabase, trace_id: str, name: str, arguments: dict[str, Any]) -> str:
    scope = await db.open_call(trace_id, f"call_{uuid.uuid4().hex}", is_async=False)
    try:
        output = await asyncio.to_thread(call_sql_tool, scope.connection, name, arguments)
        await scope.stage(f"call_{uuid.uuid4().hex}", output, {"arguments": arguments, "started_at": 0.0})
        await scope.commit()
        return output
    finally:
        await scope.close()


async def per_call(db: RolloutDatabase, copies: int, n: int) -> dict[str, list[float]]:
    tag = "" if copies == 1 else "~1"
    read, write = ("get_order_details", {"order_id": ORDER + tag}), \
        ("modify_pending_order_address", {"order_id": PENDING + tag, **ADDRESS})
    out: dict[str, list[float]] = {"sql read": [], "sql write": []}
    trace = f"calls-{uuid.uuid4().hex}"
    await sql_call(db, trace, *read)  # the clone is not part of the per-call cost
    for _ in range(n):
        for label, (name, args) in (("sql read", read), ("sql write", write)):
            t0 = time.perf_counter()
            await sql_call(db, trace, name, args)
            out[label].append(time.perf_counter() - t0)
    return out


async def memory_call(copies: int, n: int) -> dict[str, list[float]]:
    """The baseline: the in-memory tool on a view of the shared base + the overlay's JSON (the store's state)."""
    from examples.retail._db import BaseDB
    base = load_base_db() if copies == 1 else BaseDB(scaled(load_base_db().tables, copies))
    tag = "" if copies == 1 else "~1"
    overlay: dict[str, Any] = {}
    out: dict[str, list[float]] = {"memory read": [], "memory write": []}
    for _ in range(n):
        for label, name, args in (("memory read", "get_order_details", {"order_id": ORDER + tag}),
                                  ("memory write", "modify_pending_order_address", {"order_id": PENDING + tag, **ADDRESS})):
            t0 = time.perf_counter()
            state = {"db": json.loads(json.dumps(overlay))}
            await asyncio.to_thread(call_tool, base.view(state["db"]), name, args)
            overlay = state["db"]
            json.dumps(state)
            out[label].append(time.perf_counter() - t0)
    return out


async def grade_cost(db: RolloutDatabase, n: int) -> list[float]:
    trace = f"grade-{uuid.uuid4().hex}"
    await sql_call(db, trace, "modify_user_address", {"user_id": "noah_brown_6181", **ADDRESS})
    db_id = db.db_id_for(trace)
    await asyncio.to_thread(db.template_snapshot)
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        await asyncio.to_thread(db.changes_of, db_id)
        times.append(time.perf_counter() - t0)
    return times


def served_call(db: RolloutDatabase | None) -> Callable[[str], Any]:
    """``call(trace_id)``: one first call of ``get_order_details`` as the server answers it
    (``execute_tool_call``: the store's lock and load, the item check, the rollout's database, the tool, the
    answer recorded; HTTP left out), on the SQL retail tools with ``db``, else on the in-memory retail
    server (the floor: the same call without a database). Raises when the answer is not a 200."""
    from examples.retail import app as memory_app
    from examples.retail.sql.app import TOOLS
    from rft_sdk import MemoryStore, ToolServer
    from rft_sdk._server._calls import CallOutcome, execute_tool_call
    from rft_sdk.protocol import ToolCallRequest

    server = memory_app.server if db is None else ToolServer(tools=TOOLS, db=db, auth_env_var=None)
    definition = server._tools["get_order_details"]
    store = MemoryStore()
    arguments = json.dumps({"order_id": ORDER})

    async def call(trace_id: str) -> None:
        outcome = CallOutcome()
        request = ToolCallRequest(call_id="call_0", trace_id=trace_id, name=definition.name, arguments=arguments,
                                  item={"task": "first call"})
        await execute_tool_call(definition, request, store, outcome, db=db)
        if outcome.status != 200:
            raise RuntimeError(f"first call of {trace_id} answered {outcome.status}: {outcome.body[:300]!r}")
    return call


async def burst(db: RolloutDatabase | None, k: int) -> tuple[list[float], float, float, tuple[float, float]]:
    """``k`` new rollouts at once, each getting its database and making one call through the server's request
    path (:func:`served_call`; ``db=None``: the in-memory floor): ``(seconds to each first answer, wall seconds,
    this process's CPU seconds, the PostgreSQL server's CPU seconds and its client backends' share, or NaN)``;
    released after (not timed).

    Every call is awaited before anything else happens, failed or not (a failure is raised after): a
    release while calls are still in their transactions waits for their locks (``DROP SCHEMA``).
    """
    tag = uuid.uuid4().hex[:8]
    call = served_call(db)

    async def one(i: int) -> float:
        t0 = time.perf_counter()
        await call(f"flight-{tag}-{i}")
        return time.perf_counter() - t0

    server = server_cpu_reader(db)
    s0 = server() if server is not None else (float("nan"), float("nan"))
    c0, w0 = time.process_time(), time.perf_counter()
    results = await asyncio.gather(*(one(i) for i in range(k)), return_exceptions=True)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    s1 = server() if server is not None else s0
    server_s = (s1[0] - s0[0], s1[1] - s0[1])
    for i in range(k):
        if db is not None:
            await db.release(f"flight-{tag}-{i}")
    failed = [r for r in results if isinstance(r, BaseException)]
    if failed:
        raise RuntimeError(f"{len(failed)} of {k} first calls failed; the first: {failed[0]!r}") from failed[0]
    return [float(r) for r in results], wall, cpu, server_s  # type: ignore[arg-type]


def _worker_burst(folder: str, name: str, share: int, tag: str, barrier: Any, out: Any) -> None:
    """One worker process of ``--workers N`` (SQLite): the same ``dir``, name and setup as the benchmark's
    database, ``share`` first calls once every worker is ready; puts ``(seconds to each first answer, wall s,
    CPU s)``."""
    async def run() -> None:
        db = SQLiteDatabase(setup=functools.partial(_load_tables, None), dir=folder, name=name, pool_size=0,
                            max_pool=0, max_live=4096, sweep_interval_s=3600, admission_timeout_s=60)
        await db.astart()
        call = served_call(db)
        try:
            await asyncio.to_thread(barrier.wait)

            async def one(i: int) -> float:
                t0 = time.perf_counter()
                await call(f"flight-{tag}-{i}")
                return time.perf_counter() - t0

            c0, w0 = time.process_time(), time.perf_counter()
            times = await asyncio.gather(*(one(i) for i in range(share)))
            out.put((list(times), time.perf_counter() - w0, time.process_time() - c0))
        finally:
            db.close()

    asyncio.run(run())


async def burst_workers(db: SQLiteDatabase, k: int, workers: int) -> tuple[list[float], float, float]:
    """:func:`burst` split over ``workers`` processes sharing the folder (as ``rft serve --workers N`` with
    one ``RFT_DB_DIR``): started together (a barrier after each built its backend); the CPU is all workers'."""
    import multiprocessing
    ctx = multiprocessing.get_context("spawn")
    barrier, out = ctx.Barrier(workers), ctx.Queue()
    shares = [k // workers + (1 if w < k % workers else 0) for w in range(workers)]
    tags = [f"w{w}-{uuid.uuid4().hex[:6]}" for w in range(workers)]
    procs = [ctx.Process(target=_worker_burst, args=(str(db.parent_dir), db.name, share, tag,
                                                        barrier, out))
             for tag, share in zip(tags, shares, strict=True)]
    for proc in procs:
        proc.start()
    results = [await asyncio.to_thread(out.get, True, 600) for _ in procs]
    for proc in procs:
        await asyncio.to_thread(proc.join)
        if proc.exitcode:
            raise RuntimeError(f"a benchmark worker exited with {proc.exitcode}")
    for tag, share in zip(tags, shares, strict=True):
        for i in range(share):
            await db.release(f"flight-{tag}-{i}")
    return ([t for r in results for t in r[0]], max(r[1] for r in results), sum(r[2] for r in results))


async def refilled(db: RolloutDatabase, timeout_s: float = 900.0) -> tuple[int, float]:
    """Wait for the maintenance thread to bring the pool to its target: ``(target, seconds)``."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout_s:
        db.pool_filled.clear()
        db._wake.set()
        await asyncio.to_thread(db.pool_filled.wait, 60)
        if (await db.counts())["pool"] >= db.pool_target():
            break
    return db.pool_target(), time.perf_counter() - t0


async def in_flight(db: RolloutDatabase, k: int, mode: str, workers: int = 1
                    ) -> tuple[list[float], float, float, tuple[float, float], str]:
    """One burst of ``k`` in ``mode``: ``cold`` (no pool), ``ahead`` (the pool filled to ``k`` beforehand,
    no refill during the burst: the old path), ``adaptive`` (a trainer's second step: the first burst's
    arrivals size the pool, the maintenance thread refills it in the background, the second burst is timed)."""
    db.sizer = PoolSizer(0, 0 if mode == "cold" else k)
    note = ""
    if mode == "ahead":
        db.pool_size = k
        await asyncio.to_thread(db.refill_once)
        db.max_pool = 0
    elif mode == "adaptive":
        if workers > 1:
            raise SystemExit("--workers: the modes cold and ahead only (each worker's sizer sees its share)")
        await burst(db, k)  # step 1: cold, seen by the sizer
        target, took = await refilled(db)
        note = f"target {target}, refilled in {took:.1f} s"
    if workers > 1:
        assert isinstance(db, SQLiteDatabase)
        times, wall, cpu = await burst_workers(db, k, workers)
        server = (float("nan"), float("nan"))
        note = f"{workers} worker processes"
    else:
        times, wall, cpu, server = await burst(db, k)
    db.sizer = PoolSizer(0, 0)
    return times, wall, cpu, server, note


async def main(args: argparse.Namespace) -> str:
    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    reps = 15 if args.quick else 60
    calls = 100 if args.quick else 400
    flights = args.in_flight or ((16, 64) if args.quick else (16, 64, 256))
    sections = set(args.sections.split(","))
    say(f"# bench_rollout_db  python {platform.python_version()}  {platform.machine()}  cpus={os.cpu_count()}  "
        f"load={os.getloadavg()[0]:.2f}  quick={args.quick}  loop={type(asyncio.get_running_loop()).__module__.split('.')[0]}")
    with contextlib.ExitStack() as stack:
        pg_url = args.postgres_url or stack.enter_context(postgres_server(durable=True, max_connections=600))
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="rft-bench-db-")))
        made: list[RolloutDatabase] = []
        stack.callback(lambda: [(d.close(), d.drop_all(), d.close()) for d in made])
        dbs: dict[tuple[str, int], RolloutDatabase] = {}
        for copies in (1, 10) if sections != {"4"} else (1,):
            for backend in args.backends:
                db = make(backend, copies, root, pg_url, 0)
                t0 = time.perf_counter()
                await db.astart()
                made.append(db)
                dbs[(backend, copies)] = db
                size = (db.template_path.stat().st_size if isinstance(db, SQLiteDatabase) else 0)
                say(f"template {backend:8s} {copies:2d}x built in {time.perf_counter() - t0:6.2f} s"
                    + (f"  ({size / 1e6:.1f} MB file)" if size else ""))
        if "1" in sections:
            await section_clone(dbs, reps, say)
        if "2" in sections:
            await section_calls(dbs, calls, say)
        if "3" in sections:
            await section_grade(dbs, reps, say)
        if "4" in sections:
            await section_flight(dbs, flights, say, args.modes, args.workers)
    return "\n".join(lines) + "\n"


async def section_clone(dbs: dict[tuple[str, int], RolloutDatabase], reps: int, say: Callable[..., None]) -> None:
    say()
    say("## 1. clone latency, ms p50 / p99 (one new rollout at a time)")
    say(f"{'backend':10s} {'data':>5s} {'cold clone':>19s} {'warm pool claim':>19s} {'cold/warm':>10s}")
    for (backend, copies), db in dbs.items():
        cold, warm = await clone_latency(db, reps)
        extra = f"  ({db.clone_method})" if isinstance(db, SQLiteDatabase) else ""
        say(f"{backend:10s} {copies:4d}x {ms(cold)} {ms(warm)} {statistics.median(cold) / statistics.median(warm):9.1f}x"
            + extra)


async def section_calls(dbs: dict[tuple[str, int], RolloutDatabase], calls: int, say: Callable[..., None]) -> None:
    say()
    say("## 2. per-call cost, ms p50 / p99 (open + SQL tool + commit + close, vs in-memory tool + state JSON)")
    say(f"{'path':14s} {'data':>5s} {'read':>19s} {'write':>19s} {'read vs mem':>12s} {'write vs mem':>13s}")
    for copies in (1, 10):
        mem = await memory_call(copies, calls)
        say(f"{'memory':14s} {copies:4d}x {ms(mem['memory read'])} {ms(mem['memory write'])} {'1.0x':>12s} {'1.0x':>13s}")
        for backend in [b for (b, c) in dbs if c == copies]:
            got = await per_call(dbs[(backend, copies)], copies, calls)
            r = statistics.median(got["sql read"]) / statistics.median(mem["memory read"])
            w = statistics.median(got["sql write"]) / statistics.median(mem["memory write"])
            say(f"{backend:14s} {copies:4d}x {ms(got['sql read'])} {ms(got['sql write'])} {r:11.1f}x {w:12.1f}x")


async def section_grade(dbs: dict[tuple[str, int], RolloutDatabase], reps: int, say: Callable[..., None]) -> None:
    say()
    say("## 3. grade: end state vs template (changes_of), ms p50 / p99")
    for copies in (1, 10):
        for backend in [b for (b, c) in dbs if c == copies]:
            say(f"{backend:10s} {copies:4d}x {ms(await grade_cost(dbs[(backend, copies)], max(5, reps // 3)))}")


async def section_flight(dbs: dict[tuple[str, int], RolloutDatabase], flights: tuple[int, ...],
                         say: Callable[..., None], modes: tuple[str, ...], workers: int = 1) -> None:
    say()
    say("## 4. rollouts in flight: time to the first answer (database + one call), ms p50 / p99, retail 1x")
    say("   cold: no pool; ahead: pool filled to the burst beforehand (the old path); adaptive: a trainer's second")
    say("   step, the pool sized from the first step's arrivals and refilled in the background")
    say(f"{'backend':16s} {'in flight':>9s} {'mode':>9s} {'p50 / p99 ms':>19s} {'wall s':>7s} {'client CPU s':>12s}  note")
    for k in flights:  # the floor: the same first call without a database (the in-memory retail tool)
        times, wall, cpu, _ = await burst(None, k)
        say(f"{'memory (floor)':16s} {k:9d} {'-':>9s} {ms(times)} {wall:7.2f} {cpu:12.2f}  "
            f"{1e3 * cpu / k:.2f} ms CPU per first answer")
    for (backend, copies), db in dbs.items():
        if copies != 1:
            continue
        for k in flights:
            for mode in modes:
                times, wall, cpu, server, note = await in_flight(db, k, mode, workers if backend == "sqlite" else 1)
                per = f"{1e3 * cpu / k:.2f} ms client CPU per first answer"
                if server[0] == server[0]:  # not NaN: the PostgreSQL server's processes, read from /proc
                    per += (f", server {1e3 * server[0] / k:.2f} ms ({server[0]:.2f} s, of which its connections "
                            f"{server[1]:.2f} s)")
                say(f"{backend:16s} {k:9d} {mode:>9s} {ms(times)} {wall:7.2f} {cpu:12.2f}  {per}; {note}")


def side_by_side(args: argparse.Namespace) -> str:
    """``--baseline``: ``--repeat`` rounds of (old, new), each a run of this script in a subprocess whose
    ``rft_sdk`` comes from the baseline checkout or from this one; the transcript."""
    passed, skip = [], False
    for arg in sys.argv[1:]:  # this run's arguments, less the ones naming the comparison and its output
        if skip:
            skip = False
            continue
        if arg in ("--baseline", "--repeat", "--out", "--postgres-url"):
            skip = True
            continue
        if not arg.startswith(("--baseline=", "--repeat=", "--out=", "--postgres-url=")):
            passed.append(arg)
    lines: list[str] = []
    with contextlib.ExitStack() as stack:
        pg_url = args.postgres_url or stack.enter_context(postgres_server(durable=True, max_connections=600))
        for round_ in range(1, args.repeat + 1):
            for label, root in (("old", args.baseline.resolve()), ("new", ROOT)):
                head = (f"=== {label} (round {round_}, {root}) {time.strftime('%H:%M:%S', time.gmtime())} UTC "
                        f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
                print(head, flush=True)
                lines.append(head)
                env = {**os.environ, "RFT_BENCH_ROOT": str(root), "PYTHONPATH": str(root)}
                run = subprocess.run([sys.executable, str(Path(__file__).resolve()), *passed, "--postgres-url", pg_url],
                                     env=env, capture_output=True, text=True, check=False)
                print(run.stdout, end="", flush=True)
                lines.append(run.stdout.rstrip("\n"))
                if run.returncode:
                    raise SystemExit(f"the {label} run exited with {run.returncode}:\n{run.stderr[-3000:]}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (about 2 minutes)")
    parser.add_argument("--postgres-url", help="use this server instead of a throwaway one")
    parser.add_argument("--in-flight", type=lambda t: tuple(int(x) for x in t.split(",")), default=(),
                        help="comma-separated rollouts-in-flight levels of section 4 (e.g. 256,1024)")
    parser.add_argument("--backends", type=lambda t: tuple(t.split(",")), default=BACKENDS,
                        help=f"comma-separated, of {','.join(BACKENDS)}")
    parser.add_argument("--modes", type=lambda t: tuple(t.split(",")), default=MODES,
                        help=f"section 4's pool modes, of {','.join(MODES)}")
    parser.add_argument("--sections", default="1,2,3,4", help="which sections to run (e.g. 4)")
    parser.add_argument("--workers", type=int, default=1,
                        help="section 4, SQLite: split each burst over this many processes sharing the folder "
                             "(modes cold and ahead)")
    parser.add_argument("--loop", choices=["asyncio", "uvloop"], default="asyncio",
                        help="the event loop (rft serve's default --loop auto is uvloop when installed; the "
                             "--workers processes run asyncio)")
    parser.add_argument("--out", type=Path, help="also write the table here")
    parser.add_argument("--baseline", type=Path,
                        help="a checkout of the old code (e.g. main): measure it and this one side by side")
    parser.add_argument("--repeat", type=int, default=1, help="with --baseline: rounds of (old, new)")
    ns = parser.parse_args()
    if ns.baseline is not None and not (ns.baseline / "rft_sdk").is_dir():
        parser.error(f"--baseline {ns.baseline}: no rft_sdk package there (give a checkout of the repository)")
    if ns.baseline is not None:
        text = side_by_side(ns)
    elif ns.loop == "uvloop":
        import uvloop
        text = uvloop.run(main(ns))
    else:
        text = asyncio.run(main(ns))
    if ns.out:
        ns.out.write_text(text, encoding="utf-8")
