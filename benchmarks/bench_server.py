"""Tool server vs a FastAPI twin and bare Starlette, side by side, driven by ``wrk``.

Every app serves the same trivial stateful tool (add ``by`` to a per-trace
counter, answer the hosted ``function_call_output``) on the hosted body
``{"type": "function_call", "call_id", "trace_id", "name", "arguments", "item"}``.
The hosted side sends the rollout's whole dataset line as ``item`` with every
call, so the body carries one: ``--item retail`` (a real line of
``examples/retail/data/retail_train.jsonl``, ~14 KB: messages, tool schemas,
gold actions), ``--item-bytes N`` (a synthetic line of about N bytes, 1 KB to
512 KB) or ``--item tiny`` (``{"task_id": 7}``, the default). Each rollout
(``trace_id``) gets ``--calls-per-rollout`` calls (8), interleaved over 256
rollouts in flight, as a trainer sends them:

* ``rft_sync`` / ``rft_async``: a ``ToolServer`` with a ``def`` / ``async def`` tool
  (the sync one runs in a worker thread, the safe default);
* ``rft_nonblocking``: the sync tool marked ``@tool(blocking=False)`` (run on the loop);
* ``rft_sqlite``: the async tool on a ``SQLiteStore`` (``--stores``);
* ``fastapi_sync`` / ``fastapi_async``: FastAPI, pydantic body (``item: dict[str, Any]``, so
  it parses the same body), a ``dict`` of counters keyed by trace_id;
* ``starlette``: a bare Starlette route doing the same with ``request.json()``.

Each app runs in its own uvicorn process (1 worker, no access log) under the
same flags: ``h11`` (asyncio loop + h11) and ``uvloop`` (uvloop + httptools).
``wrk`` (one thread, a Lua script giving every request a new call_id and the
trace_id of its rollout) drives it at c = 1, 8, 64; runs are interleaved (app order rotates
each repeat) and the medians are printed with the ratio to the FastAPI twin
of the same flavour (sync tool vs ``def`` endpoint, async vs ``async def``).
The generator's CPU share is measured per run and printed (it must stay well
under a core, else the table is flagged). ``--before DIR`` adds the apps
built from another checkout of ``rft_sdk`` (e.g. ``git worktree``/``git
archive`` of the base commit) to the same interleaved runs.

Usage::

    python benchmarks/bench_server.py                    # full table (tiny item)
    python benchmarks/bench_server.py --item retail --save benchmarks/results/server_retail.txt
    python benchmarks/bench_server.py --item-bytes 131072 --save benchmarks/results/server_128k.txt
    python benchmarks/bench_server.py --quick --item retail   # smoke run (short, c=8, one repeat)
    python benchmarks/bench_server.py --inprocess --item retail   # µs/request with that item vs a tiny one
    python benchmarks/bench_server.py --inprocess --item-bytes 14000 --before DIR   # vs another checkout
    python benchmarks/bench_server.py --inprocess --profile rft_sync   # cProfile of one app
    python benchmarks/bench_server.py --gc               # GC pauses with 10,000 live rollouts
    python benchmarks/bench_server.py --gc --before DIR  # the same for DIR's rft_sdk, then this one

Load average and versions are printed with every table.

(No ``from __future__ import annotations`` here: FastAPI must see the twin's
body model as a class, not a string, to read it from the body.)
"""



import argparse
import contextlib
import json
import os
import platform
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__" and str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # after $PYTHONPATH, so --before DIR (or PYTHONPATH=DIR) picks the rft_sdk measured

LUA = r"""
local n = 0
local run = tostring(math.random(1, 1000000000))
local rollouts, calls = ROLLOUTS, CALLS
local tail = '"name":"bump","arguments":"{\\"by\\":1}"' .. ITEM .. '}'
request = function()
  n = n + 1
  -- rollout r gets calls n = r, r + rollouts, ... (CALLS of them), then the next window of rollouts starts
  local trace = (n % rollouts) + rollouts * math.floor(n / (rollouts * calls))
  local body = '{"type":"function_call","call_id":"c' .. run .. '-' .. n .. '","trace_id":"t' .. run .. '-'
    .. trace .. '",' .. tail
  return wrk.format("POST", "/tools/bump", {["Content-Type"] = "application/json"}, body)
end
done = function(summary, latency, requests)
  io.write(string.format('RESULT {"requests":%d,"duration_us":%d,"non2xx":%d,"errors":%d,'
    .. '"p50":%d,"p99":%d,"p999":%d,"max":%d}\n', summary.requests, summary.duration, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9), latency.max))
end
"""

# -- the apps (built in the server subprocess) ------------------------------------------------------


def build_app(name: str) -> Any:
    """The ASGI app called ``name`` (see the module docstring)."""
    if name.startswith("rft"):
        from rft_sdk import Rollout, ToolServer, tool

        def bump(by: int, rollout: Rollout) -> str:
            """Add ``by`` to this rollout's counter; return the new value."""
            rollout.state["n"] = rollout.state.get("n", 0) + by
            return str(rollout.state["n"])

        async def bump_async(by: int, rollout: Rollout) -> str:
            """Add ``by`` to this rollout's counter; return the new value."""
            rollout.state["n"] = rollout.state.get("n", 0) + by
            return str(rollout.state["n"])

        if name == "rft_nonblocking":
            try:
                fn = tool(name="bump", blocking=False)(bump)  # type: ignore[call-arg]
            except TypeError:  # a checkout without the flag: the default
                fn = tool(name="bump")(bump)
        else:
            fn = tool(name="bump")(bump if name == "rft_sync" else bump_async)
        store = None
        if name == "rft_sqlite":
            from rft_sdk import SQLiteStore
            store = SQLiteStore(os.path.join(tempfile.mkdtemp(), "bench.db"))
        return ToolServer([fn], store=store, auth_env_var=None, body_timeout_s=None)
    if name.startswith("fastapi"):
        from fastapi import FastAPI
        from pydantic import BaseModel

        class Call(BaseModel):
            type: str | None = None
            call_id: str
            trace_id: str
            id: str | None = None
            name: str | None = None
            arguments: str = "{}"
            item: dict[str, Any] | None = None  # the dataset line every hosted call carries

        fapp = FastAPI()
        counters: dict[str, int] = {}

        def answer(call: Call) -> dict[str, Any]:
            n = counters[call.trace_id] = counters.get(call.trace_id, 0) + json.loads(call.arguments)["by"]
            return {"type": "function_call_output", "call_id": call.call_id, "id": call.id, "output": str(n)}

        if name == "fastapi_sync":
            @fapp.post("/tools/bump")
            def bump_sync(call: Call) -> dict[str, Any]:
                return answer(call)
        else:
            @fapp.post("/tools/bump")
            async def bump_async_(call: Call) -> dict[str, Any]:
                return answer(call)
        return fapp
    if name == "starlette":
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        seen: dict[str, int] = {}

        async def bump_bare(request: Request) -> JSONResponse:
            data = await request.json()
            n = seen[data["trace_id"]] = seen.get(data["trace_id"], 0) + json.loads(data["arguments"])["by"]
            return JSONResponse({"type": "function_call_output", "call_id": data["call_id"], "id": data.get("id"),
                                 "output": str(n)})

        async def health(request: Request) -> JSONResponse:
            return JSONResponse({"status": "ok"})

        return Starlette(routes=[Route("/tools/bump", bump_bare, methods=["POST"]),
                                 Route("/healthz", health, methods=["GET"])])
    raise SystemExit(f"unknown app {name!r}")


def serve(name: str, port: int, flavour: str) -> None:
    """Run app ``name`` under uvicorn in this process (the benchmark's child)."""
    import uvicorn
    loop, http = ("uvloop", "httptools") if flavour == "uvloop" else ("asyncio", "h11")
    app = build_app(name)
    if name.startswith("fastapi"):
        app.add_api_route("/healthz", lambda: {"status": "ok"}, methods=["GET"])
    uvicorn.run(app, host="127.0.0.1", port=port, loop=loop, http=http, access_log=False, log_level="warning")


# -- driving with wrk --------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def running(app: str, flavour: str, pythonpath: str) -> Iterator[str]:
    """A child process serving ``app``; yields its base URL once ``/healthz`` answers."""
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": pythonpath}
    proc = subprocess.Popen([sys.executable, __file__, "--serve", app.split("@")[0], "--port", str(port),
                             "--flavour", flavour], env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{app} did not start") from None
                time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def wrk(url: str, connections: int, duration_s: int, script: str) -> dict[str, Any]:
    """One ``wrk`` run; its result plus ``cpu``: the generator's CPU seconds per wall second."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{int(duration_s)}s", "--timeout", "10s", "-s", script,
                          url], capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = next(li for li in out.splitlines() if li.startswith("RESULT "))
    result: dict[str, Any] = json.loads(line[len("RESULT "):])
    result["rps"] = result["requests"] / (result["duration_us"] / 1e6)
    result["cpu"] = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / wall
    return result


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def versions() -> str:
    import fastapi
    import orjson
    import starlette
    import uvicorn
    wrk_v = subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout.split("[")[0].strip()
    return (f"Python {platform.python_version()}, uvicorn {uvicorn.__version__}, starlette {starlette.__version__}, "
            f"fastapi {fastapi.__version__}, orjson {orjson.__version__}, {wrk_v}; {platform.machine()} "
            f"{os.cpu_count()} CPUs ({platform.processor() or platform.platform()})")


def _twin(app: str) -> str:
    """The FastAPI app ``app`` is compared with: a ``def`` endpoint for sync tools, else ``async def``."""
    base = app.split("@")[0]
    return "fastapi_sync" if base in ("rft_sync", "rft_nonblocking", "fastapi_sync") else "fastapi_async"


def run_wrk(args: argparse.Namespace) -> int:
    if shutil.which("wrk") is None:
        print("wrk not found: apt-get install wrk", file=sys.stderr)
        return 2
    apps = list(args.apps)
    if args.stores:
        apps.append("rft_sqlite")
    here = os.environ.get("PYTHONPATH", "")
    paths = {app: f"{ROOT}{os.pathsep}{here}" for app in apps}
    if args.before:
        older = [a for a in apps if a in ("rft_sync", "rft_async")]  # rft_nonblocking is rft_sync there
        for app in older:
            paths[app + "@before"] = f"{args.before}{os.pathsep}{here}"
        apps += [a + "@before" for a in older]
    results: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    loads = [loadavg()]
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(lua_script(_ITEM, args.calls_per_rollout))
        script = f.name
    for rep in range(args.repeats):
        order = apps[rep % len(apps):] + apps[:rep % len(apps)]  # interleaved: rotate the order each repeat
        for flavour in args.flavours:
            for app in order:
                with running(app, flavour, paths[app]) as url:
                    wrk(url, 8, 1, script)  # warm-up
                    for c in args.connections:
                        r = wrk(url, c, args.duration, script)
                        results.setdefault((app, flavour, c), []).append(r)
                        if r["non2xx"] or r["errors"]:
                            print(f"  ! {app} {flavour} c={c}: {r['non2xx']} non-2xx, {r['errors']} socket errors",
                                  file=sys.stderr)
        loads.append(loadavg())
        print(f"repeat {rep + 1}/{args.repeats} done, load average {loads[-1]}", file=sys.stderr)
    os.unlink(script)
    print_table(results, apps, args, loads)
    return 0


def print_table(results: dict[tuple[str, str, int], list[dict[str, Any]]], apps: list[str],
                args: argparse.Namespace, loads: list[str]) -> None:
    def med(app: str, flavour: str, c: int, key: str) -> float:
        return statistics.median(r[key] for r in results[(app, flavour, c)])

    what = (f"synthetic item of {args.item_bytes:,} B" if args.item_bytes
            else "retail item (examples/retail/data/retail_train.jsonl, line 1)" if args.item == "retail"
            else "tiny item")
    lines = [f"# python benchmarks/bench_server.py {' '.join(sys.argv[1:])}",
             f"# bench_server.py: {args.repeats} interleaved repeat(s) x {args.duration} s per point, medians; "
             "1 uvicorn worker, no access log; wrk -t1",
             f"# body: {len(_body(0, 0)):,} bytes with the {what}; {_CALLS} calls per rollout, interleaved over "
             f"{ROLLOUTS:,} rollouts",
             f"# {versions()}",
             f"# load average (1/5/15 min) before and after each repeat: {' | '.join(loads)}",
             "| app | flavour | c | req/s | x FastAPI twin | p50 ms | p99 ms | p99.9 ms | max ms | p99 x twin "
             "| wrk CPU |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    worst_cpu = 0.0
    for flavour in args.flavours:
        for c in args.connections:
            for app in apps:
                twin = _twin(app)
                rps, p99 = med(app, flavour, c, "rps"), med(app, flavour, c, "p99")
                ratio = rps / med(twin, flavour, c, "rps") if twin in apps else float("nan")
                p99_ratio = p99 / med(twin, flavour, c, "p99") if twin in apps else float("nan")
                cpu = med(app, flavour, c, "cpu")
                worst_cpu = max(worst_cpu, cpu)
                lines.append(f"| {app} | {flavour} | {c} | {rps:,.0f} | {ratio:.2f} | {med(app, flavour, c, 'p50') / 1e3:.2f}"
                             f" | {p99 / 1e3:.2f} | {med(app, flavour, c, 'p999') / 1e3:.2f} | "
                             f"{med(app, flavour, c, 'max') / 1e3:.1f} | {p99_ratio:.2f} | {cpu:.0%} |")
    verdict = "not the bottleneck" if worst_cpu < 0.6 else "MAY BE THE BOTTLENECK (figures are a lower bound)"
    lines.append(f"# load generator: wrk used at most {worst_cpu:.0%} of a core: {verdict}")
    text = "\n".join(lines)
    print(text)
    if args.save:
        Path(args.save).write_text(text + "\n")


# -- in-process modes --------------------------------------------------------------------------------


RETAIL = ROOT / "examples" / "retail" / "data" / "retail_train.jsonl"  # tau2-bench retail, MIT (see LICENSE there)
TINY_ITEM = b'{"task_id":7}'
ROLLOUTS = 256  # rollouts in flight (> the connections); each gets --calls-per-rollout calls, interleaved
_ITEM = b',"item":' + TINY_ITEM  # ',"item":{...}': what every call of the run carries
_CALLS = 8


def retail_item() -> bytes:
    """A real dataset line of the retail example (the first of ``retail_train.jsonl``, ~14 KB: system
    prompt, tool schemas, user scenario, gold actions), as the hosted side sends it in ``item``."""
    with open(RETAIL, "rb") as f:
        return f.readline().strip()


def synthetic_item(nbytes: int) -> bytes:
    """A dataset-line-like JSON object of about ``nbytes`` bytes: chat messages of prose, a list of tool
    schemas, gold actions (nested objects and arrays, strings with escapes, numbers)."""
    words = ("the order #W2378156 ships to 1234 Elm Street, Springfield; customer asks \"where is it?\" about a "
             "refund for the blue jacket and wants the tracking number.\n")
    tool = {"type": "function", "function": {"name": "get_order_details", "description": "Look up an order.",
                                             "parameters": {"type": "object", "properties": {
                                                 "order_id": {"type": "string", "description": "e.g. #W2378156"}},
                                                 "required": ["order_id"]}}}
    item: dict[str, Any] = {"task_id": 7, "messages": [{"role": "system", "content": "You are a retail agent."}],
                            "tools": [tool] * 4, "actions": [{"name": "get_order_details",
                                                              "arguments": {"order_id": "#W2378156"}}] * 3,
                            "answer": "delivered", "reward": 1.0}
    base = len(json.dumps(item).encode())
    turn = 0
    while base < nbytes:
        text = (words * (1 + min(nbytes - base, 4000) // len(words)))[: max(16, min(nbytes - base - 40, 4000))]
        item["messages"].append({"role": "user" if turn % 2 == 0 else "assistant", "content": text})
        base += len(json.dumps(item["messages"][-1]).encode()) + 2
        turn += 1
    return json.dumps(item).encode()


def item_of(args: argparse.Namespace) -> bytes:
    """The item JSON every call of this run carries (``--item`` / ``--item-bytes``)."""
    if args.item_bytes:
        return synthetic_item(args.item_bytes)
    return retail_item() if args.item == "retail" else TINY_ITEM


def lua_script(item_member: bytes, calls: int) -> str:
    """``LUA`` with the item (a Lua long string, whatever the JSON holds) and the rollout layout."""
    level = 1
    while f"]{'=' * level}]".encode() in item_member:
        level += 1
    literal = f"[{'=' * level}[" + item_member.decode("utf-8") + f"]{'=' * level}]"
    return LUA.replace("ROLLOUTS", str(ROLLOUTS)).replace("CALLS", str(calls)).replace("ITEM", literal, 1)


def _body(run: int, n: int, rollouts: int = ROLLOUTS, item: bytes | None = None) -> bytes:
    """Call ``n`` of run ``run``: rollout ``n % rollouts`` of window ``n // (rollouts * calls)`` (as ``LUA``)."""
    trace = n % rollouts + rollouts * (n // (rollouts * _CALLS))
    return (f'{{"type":"function_call","call_id":"c{run}-{n}","trace_id":"t{run}-{trace}",'
            f'"name":"bump","arguments":"{{\\"by\\":1}}"').encode() + (_ITEM if item is None else item) + b"}"


async def _call(app: Any, body: bytes) -> int:
    """One POST /tools/bump through the ASGI app, no socket; returns the status."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": "/tools/bump", "raw_path": b"/tools/bump", "root_path": "", "query_string": b"",
             "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 8000)}
    sent = False
    status = 0

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope, receive, send)
    return status


async def _timed(app: Any, name: str, run: int, member: bytes, requests: int) -> tuple[float, float]:
    """``requests`` calls (after 200 to warm up) of run ``run`` carrying ``member``; µs per request: wall, and
    CPU of the whole process (worker threads included: what other jobs on the machine do not inflate)."""
    for i in range(200):
        await _call(app, _body(run + 1000, i, item=member))
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(requests):
        status = await _call(app, _body(run, i, item=member))
        if status != 200:
            raise RuntimeError(f"{name}: status {status}")
    return (time.perf_counter() - t0) / requests * 1e6, (time.process_time() - c0) / requests * 1e6


def run_inprocess(args: argparse.Namespace) -> int:
    """µs per request with the ASGI app called directly (no socket, no uvicorn): the pipeline's own cost,
    with this run's item and with a tiny one, interleaved (the ratio is the item's cost; target: <= 1.5)."""
    import asyncio
    item = b',"item":' + item_of(args)
    tiny = b',"item":' + TINY_ITEM
    kinds = {"tiny": tiny} if item == tiny or args.profile else {"tiny": tiny, "item": item}
    if args.profile:
        kinds = {"item": item}
    print(f"# in-process µs/request (median of {args.repeats} x {args.requests:,} requests, "
          f"{args.calls_per_rollout} calls per rollout): body {len(_body(0, 0, item=tiny)):,} bytes (tiny item) "
          f"and {len(_body(0, 0, item=item)):,} bytes (this run's item); load average {loadavg()}")
    names = [args.profile] if args.profile else list(args.apps)
    for name in names:
        app = build_app(name)
        wall: dict[str, list[float]] = {kind: [] for kind in kinds}
        cpu: dict[str, list[float]] = {kind: [] for kind in kinds}
        for rep in range(args.repeats):
            for k, (kind, member) in enumerate(kinds.items()):  # interleaved: tiny, item, tiny, item, ...
                timed = _timed(app, name, 2 * rep + k, member, args.requests)
                if args.profile:
                    import cProfile
                    import pstats
                    prof = cProfile.Profile()
                    prof.enable()
                    wall_us, cpu_us = asyncio.run(timed)
                    prof.disable()
                    pstats.Stats(prof).sort_stats("tottime").print_stats(25)
                else:
                    wall_us, cpu_us = asyncio.run(timed)
                wall[kind].append(wall_us)
                cpu[kind].append(cpu_us)
            if args.profile:
                break
        cells = [f"{kind} {statistics.median(wall[kind]):7.1f} µs wall {statistics.median(cpu[kind]):7.1f} µs CPU"
                 for kind in kinds]
        if len(kinds) == 2:
            ratio = statistics.median(cpu["item"]) / statistics.median(cpu["tiny"])
            cells.append(f"item / tiny (CPU) {ratio:4.2f}")
        print(f"{name:>16}: " + " | ".join(cells), flush=True)
    return 0


def run_gc(args: argparse.Namespace) -> int:
    """GC pauses and request latency tail with ``args.rollouts`` live rollouts (in process), per
    ``rft serve --gc`` mode (``rft_sdk.cli.tune_gc``, applied after the app is built, as ``rft serve`` does)."""
    import asyncio
    import gc
    try:
        from rft_sdk.cli import GC_MODES, tune_gc
    except ImportError:  # a checkout without --gc
        GC_MODES, tune_gc = ("default",), lambda mode: None
    pauses: list[float] = []  # CPU seconds of each collection (thread time: other processes do not inflate it)
    start = [0.0]

    def timer(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            start[0] = time.thread_time()
        else:
            pauses.append(time.thread_time() - start[0])

    print(f"# GC with {args.rollouts:,} live rollouts x {args.calls} calls each, then {args.requests:,} timed "
          f"calls on {args.rollouts:,} more (the first ones evicted); load average {loadavg()}")
    threshold = gc.get_threshold()
    for mode in GC_MODES:
        gc.collect()
        app = build_app("rft_async")
        app.store.max_rollouts = max(app.store.max_rollouts, args.rollouts)
        tune_gc(mode)

        async def fill(app: Any = app) -> None:
            for i in range(args.rollouts * args.calls):
                await _call(app, _body(1, i, args.rollouts))

        asyncio.run(fill())
        pauses.clear()
        gc.callbacks.append(timer)
        lat: list[float] = []

        async def timed(app: Any = app, lat: list[float] = lat) -> None:
            for i in range(args.requests):
                t0 = time.perf_counter()
                await _call(app, _body(2, i, args.rollouts))
                lat.append(time.perf_counter() - t0)

        try:
            asyncio.run(timed())
            tracked = len(gc.get_objects())
            full_ms = []
            for _ in range(2):  # full collections with the rollouts live: the first, then one at rest
                t0 = time.thread_time()
                gc.collect()
                full_ms.append((time.thread_time() - t0) * 1e3)
        finally:
            gc.callbacks[:] = [cb for cb in gc.callbacks if getattr(cb, "__module__", "") != "rft_sdk.cli"
                               and cb is not timer]
            gc.unfreeze()
            gc.set_threshold(*threshold)
        lat.sort()

        def q(p: float, lat: list[float] = lat) -> float:
            return lat[min(len(lat) - 1, int(p * len(lat)))] * 1e6

        print(f"{mode:>12}: request p50 {q(.5):5.0f} µs  p99 {q(.99):5.0f} µs  p99.9 {q(.999):6.0f} µs  "
              f"max {lat[-1] * 1e3:5.1f} ms | {len(pauses) - 2} collections (+2 full), max pause "
              f"{max(pauses, default=0) * 1e3:5.1f} ms CPU, total {sum(pauses) * 1e3:5.0f} ms | "
              f"{tracked:,} objects tracked, full collections {full_ms[0]:4.1f} then {full_ms[1]:4.1f} ms CPU")
        del app
    return 0


def main(argv: list[str] | None = None) -> int:
    global _ITEM, _CALLS
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--apps", nargs="+", default=["rft_sync", "rft_nonblocking", "rft_async", "fastapi_sync",
                                                 "fastapi_async", "starlette"])
    p.add_argument("--stores", action="store_true", help="add rft_async on a SQLiteStore")
    p.add_argument("--flavours", nargs="+", default=["h11", "uvloop"], choices=["h11", "uvloop"])
    p.add_argument("--connections", "-c", nargs="+", type=int, default=[1, 8, 64])
    p.add_argument("--duration", type=int, default=3, help="seconds per wrk run (whole)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--before", default=None, metavar="DIR", help="also run the rft apps from this checkout")
    p.add_argument("--quick", action="store_true", help="smoke run: 1 repeat, c=8, 1 s")
    p.add_argument("--save", default=None, metavar="FILE", help="also write the table here")
    p.add_argument("--inprocess", action="store_true", help="µs/request, ASGI app called directly")
    p.add_argument("--profile", default=None, metavar="APP", help="with --inprocess: cProfile of one app")
    p.add_argument("--requests", type=int, default=5000, help="in-process/GC modes: timed requests")
    p.add_argument("--item", choices=["tiny", "retail"], default="tiny",
                   help="the dataset item every call carries (the hosted side sends one): tiny {\"task_id\": 7}, "
                        "or a real ~14 KB line of examples/retail/data/retail_train.jsonl")
    p.add_argument("--item-bytes", type=int, default=0, metavar="N",
                   help="instead of --item: a synthetic item of about N bytes (1 KB to 512 KB)")
    p.add_argument("--calls-per-rollout", type=int, default=_CALLS, metavar="K",
                   help="tool calls per rollout (trace_id), interleaved over 256 rollouts (default 8)")
    p.add_argument("--gc", action="store_true", help="GC pauses with --rollouts live rollouts")
    p.add_argument("--rollouts", type=int, default=10_000)
    p.add_argument("--calls", type=int, default=5, help="--gc: calls recorded per rollout before timing")
    p.add_argument("--serve", default=None, help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--flavour", default="h11", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.serve:
        serve(args.serve, args.port, args.flavour)
        return 0
    if args.quick:
        args.repeats, args.connections, args.duration = 1, [8], 1
    _ITEM, _CALLS = b',"item":' + item_of(args), max(1, args.calls_per_rollout)
    if args.gc:
        if args.before:  # the other checkout's layout first, in its own process, then this one
            print(f"## before ({args.before})", flush=True)
            env = {**os.environ, "PYTHONPATH": args.before}
            subprocess.run([sys.executable, __file__, *[a for a in (argv or sys.argv[1:]) if a != args.before
                                                        and a != "--before"]], env=env, check=True)
            print("## this checkout", flush=True)
        return run_gc(args)
    if args.inprocess:
        if args.before:  # alternate the two checkouts, each in its own process, so load changes hit both
            rest = [a for a in (argv or sys.argv[1:]) if a not in (args.before, "--before")]
            for label, env in ((f"before ({args.before})", {**os.environ, "PYTHONPATH": args.before}),
                               ("this checkout", dict(os.environ))) * 2:
                print(f"## {label}", flush=True)
                subprocess.run([sys.executable, __file__, *rest], env=env, check=True)
            return 0
        return run_inprocess(args)
    return run_wrk(args)


if __name__ == "__main__":
    raise SystemExit(main())
