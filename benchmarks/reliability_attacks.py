"""The issue-39 scenarios of ``benchmarks/reliability_run.py``: the same attacks on every surface, the rollout
database and the sandbox (docs/reliability.md, "Under attack").

* ``surface-fuzz``: ``--requests`` mutated requests per surface (hosted, MCP, OpenEnv HTTP, OpenEnv WebSocket
  frames, NeMo Gym, Eval Protocol ``/init``) against ``rft serve examples.retail.app:server --surfaces
  hosted,mcp,openenv,nemo_gym`` with a token -> per surface the count of 5xx (must be 0), of non-JSON error
  answers, and of WebSocket connections that ended without a close frame or with 1011; then a gold rollout of
  the retail example through the hosted wire must still score 1.0. ``/init`` runs in ``.venv-eco2`` (Eval
  Protocol's venv); without it that surface is reported as skipped.
* ``healthz-while-grading``: one 0.95 MB answer graded by the retail grader while ``/healthz`` is polled ->
  the grade's seconds and the slowest ``/healthz`` (must stay under 100 ms).
* ``ws-episode``: one OpenEnv WebSocket episode of ``--duration-s`` seconds of steady steps (a tool call and a
  ``state`` each second) with the header deadline at 10 s -> whether it stayed open to the end.
* ``db-refused``: calls the store refuses (413 ``rollout_too_large``) and calls past the rollout database's
  byte budget (413 ``database_too_large``), on SQLite and on a throwaway PostgreSQL -> rows they committed
  (must be 0).
* ``sandbox-memory``: a command of 4 processes touching 150 MiB each under ``memory_bytes`` = 256 MiB -> how
  many lived (at most 1 with a memory cgroup) and the bound this host enforces.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

ROOT = Path(__file__).resolve().parent.parent
DATASET = ROOT / "examples" / "retail" / "data" / "retail_test.jsonl"
RETAIL = "examples.retail.app:server"
TOKEN = "reliability-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PIECES = [b"\xed\xa0\x80", b"\xff", b"\xc3", b"\x00", b"\x1b", b'"', b"\\", b"\\ud800", b"\\udfff", b"{", b"}", b"[",
          b"]", b",", b":", b"1e999", b"NaN", b"null", b"true", b"9" * 5000, b"[" * 3000, b"99999999999999999999999",
          b""]


def _items() -> list[dict[str, Any]]:
    return [json.loads(line) for line in DATASET.read_text(encoding="utf-8").splitlines() if line.strip()]


def mutate(rng: random.Random, good: bytes, pieces: list[bytes] = PIECES) -> bytes:
    """``good`` with 1-4 edits: inserted hostile ``pieces`` (by default surrogates, invalid UTF-8, huge
    numbers, deep nesting, ``1e999``), cut bytes or a truncation."""
    out = good
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(out))
        kind = rng.random()
        if kind < 0.6:
            out = out[:at] + rng.choice(pieces) + out[at:]
        elif kind < 0.8:
            out = out[:at] + out[at + rng.randint(1, 8):]
        else:
            out = out[:at]
    return out


class Tally:
    """Answers of one surface: status counts, non-JSON error answers, WebSocket ends without a close code."""

    def __init__(self) -> None:
        self.statuses: Counter[int] = Counter()
        self.codes_5xx: Counter[str] = Counter()
        self.not_json = 0
        self.transport_errors = 0
        self.bad_closes: Counter[str] = Counter()

    def http(self, answer: httpx.Response) -> None:
        self.statuses[answer.status_code] += 1
        if answer.status_code >= 400 and "json" not in answer.headers.get("content-type", ""):
            self.not_json += 1
        if answer.status_code >= 500:
            try:
                self.codes_5xx[str(answer.json()["error"]["code"])] += 1
            except (ValueError, KeyError, TypeError):
                self.codes_5xx["?"] += 1

    def row(self, seconds: float) -> dict[str, Any]:
        """``5xx``: every 5xx; ``unhandled_5xx``: those not a documented retryable or grader answer
        (``grader_error``: the retail grader refusing an item whose gold ``actions`` the fuzz broke;
        ``capacity_reached``: ``max_sessions`` sessions open, the fuzz never closes the ones it creates)."""
        handled = {"grader_error", "retryable", "tool_busy", "store_unavailable", "database_unavailable",
                   "capacity_reached"}
        return {"requests": sum(self.statuses.values()), "seconds": round(seconds, 1),
                "5xx": sum(n for s, n in self.statuses.items() if s >= 500),
                "unhandled_5xx": sum(n for c, n in self.codes_5xx.items() if c not in handled),
                "5xx_codes": dict(self.codes_5xx), "non_json_errors": self.not_json,
                "transport_errors": self.transport_errors, "bad_ws_closes": dict(self.bad_closes),
                "statuses": dict(sorted(self.statuses.items()))}


def _retail_call(rng: random.Random, items: list[dict[str, Any]], trace: str) -> tuple[str, bytes]:
    item = rng.choice(items[:20])
    action = rng.choice(item["actions"]) if item.get("actions") else {"name": "get_order_status",
                                                                      "arguments": {"order_id": "#W1"}}
    body = {"type": "function_call", "call_id": f"c{rng.random()}", "trace_id": trace, "name": action["name"],
            "arguments": json.dumps(action["arguments"]), "item": item}
    return f"/tools/{action['name']}", json.dumps(body).encode()


def _requests(surface: str, rng: random.Random, items: list[dict[str, Any]], i: int,
              cookie: str) -> tuple[str, str, bytes, dict[str, str]]:
    """``(method, path, body, headers)`` of the ``i``-th fuzzed request of ``surface``."""
    headers = {**AUTH, "content-type": "application/json"}
    trace = f"trace_fuzz_{i % 300}"
    if surface == "hosted":
        if rng.random() < 0.6:
            path, good = _retail_call(rng, items, trace)
        else:
            path, good = "/grade", json.dumps({"sample": {"output_text": "x"}, "item": rng.choice(items[:5]),
                                               "trace_id": trace}).encode()
        return "POST", path, mutate(rng, good), headers
    if surface == "mcp":
        headers["accept"] = "application/json, text/event-stream"
        good = json.dumps(rng.choice([
            {"jsonrpc": "2.0", "id": i, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": i, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}},
            {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
                "name": "get_order_status", "arguments": {"order_id": "#W1"}}}])).encode()
        return "POST", "/mcp", mutate(rng, good), headers
    if surface == "openenv-http":
        if rng.random() < 0.5:
            good = json.dumps({"jsonrpc": "2.0", "id": i, "method": rng.choice(
                ["tools/list", "openenv/session/create", "tools/call", "openenv/session/close"]),
                "params": {"name": "get_order_status", "session_id": "x", "arguments": {"order_id": "#W1"}}}).encode()
            return "POST", "/openenv/mcp", mutate(rng, good), headers
        return "POST", "/openenv/reset", mutate(rng, json.dumps({"index": i % 5, "seed": i}).encode()), headers
    if surface == "nemo_gym":
        headers["cookie"] = f"rft_nemo_gym_session={cookie}"
        kind = rng.random()
        if kind < 0.3:
            good = json.dumps({"rft_item": rng.choice(items[:5]), "responses_create_params": {"input": []}}).encode()
            return "POST", "/seed_session", mutate(rng, good), headers
        if kind < 0.6:
            return "POST", "/get_order_status", mutate(rng, b'{"order_id": "#W1"}'), headers
        if kind < 0.8:
            good = json.dumps({"responses_create_params": {"input": []}, "response": {"output": [
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}]}}).encode()
            return "POST", "/verify", mutate(rng, good), headers
        good = json.dumps({"verify_responses": [{"reward": 1.0, "reward_components": {"a": 1}},
                                                {"reward": 0.0, "_ng_task_index": 1}]}).encode()
        return "POST", "/aggregate_metrics", mutate(rng, good), headers
    raise ValueError(surface)


async def _fuzz_http(url: str, surface: str, args: argparse.Namespace, items: list[dict[str, Any]]) -> Tally:
    rng, tally = random.Random(f"{args.seed}-{surface}"), Tally()
    deadline = time.monotonic() + args.seconds
    limits = httpx.Limits(keepalive_expiry=2.0)  # under uvicorn's 5 s keep-alive: no close-vs-reuse race
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        seeded = await client.post("/seed_session", headers=AUTH, json={"rft_item": items[0]})
        cookie = seeded.cookies.get("rft_nemo_gym_session", "")
        sem = asyncio.Semaphore(8)

        async def one(i: int) -> None:
            method, path, body, headers = _requests(surface, rng, items, i, cookie)
            if rng.random() < 0.05:  # the probe routes with the wrong method, unknown routes
                method, path = rng.choice(["POST", "PUT", "DELETE"]), rng.choice(["/readyz", "/healthz", "/metrics",
                                                                                 "/nope", "/tools/nope"])
            async with sem:
                try:
                    tally.http(await client.request(method, path, content=body, headers=headers))
                except httpx.TransportError:  # the server closed the connection (a 408/413 with Connection: close)
                    tally.transport_errors += 1

        for start in range(0, args.requests, 400):
            if time.monotonic() > deadline:
                break
            await asyncio.gather(*(one(i) for i in range(start, min(start + 400, args.requests))))
    return tally


async def _fuzz_ws(url: str, args: argparse.Namespace) -> Tally:
    """Frames over WebSocket sessions: mutated reset/step/state frames, binary and huge frames."""
    rng, tally = random.Random(f"{args.seed}-ws"), Tally()
    deadline = time.monotonic() + args.seconds
    goods = [b'{"type": "reset", "data": {"index": 0}}', b'{"type": "state"}',
             b'{"type": "step", "data": {"type": "call_tool", "tool_name": "get_order_status", '
             b'"arguments": {"order_id": "#W1"}}}']
    sent = 0

    async def session(frames: int) -> None:
        nonlocal sent
        async with ws_connect(url.replace("http", "ws", 1) + "/openenv/ws", additional_headers=AUTH,
                              max_size=2**24) as ws:
            try:
                for _ in range(frames):
                    kind = rng.random()
                    # a text frame is UTF-8 by RFC 6455 (a client cannot send invalid bytes as text): replaced
                    frame: bytes | str = mutate(rng, rng.choice(goods)).decode("utf-8", "replace")
                    if kind < 0.02:
                        frame = b"\x00binary"
                    elif kind < 0.03:
                        frame = "x" * 1_100_000
                    await ws.send(frame)
                    sent += 1
                    await asyncio.wait_for(ws.recv(), 30)
                    tally.statuses[200] += 1
            except ConnectionClosed as exc:
                code = exc.rcvd.code if exc.rcvd is not None else None
                tally.statuses[200] += 1
                if code is None or code == 1011:
                    tally.bad_closes[str(code)] += 1

    while sent < args.requests and time.monotonic() < deadline:
        await asyncio.gather(*(session(50) for _ in range(4)))
    return tally


def _gold_score(url: str, item: dict[str, Any]) -> float:
    trace = f"trace_gold_{time.monotonic_ns()}"
    with httpx.Client(base_url=url, headers=AUTH, timeout=60) as client:
        for n, action in enumerate(item["actions"]):
            client.post(f"/tools/{action['name']}", json={"call_id": f"g{n}", "trace_id": trace, "item": item,
                                                          "arguments": json.dumps(action["arguments"])})
        answer = client.post("/grade", json={"sample": {"output_text": item["reference_answer"]}, "item": item,
                                             "trace_id": trace})
    return float(answer.json()["score"])


def _fuzz_init(args: argparse.Namespace, tools_url: str) -> dict[str, Any]:
    """The ``/init`` server in ``.venv-eco2`` (Eval Protocol's venv), fuzzed with mutated ``InitRequest`` s."""
    python = ROOT / ".venv-eco2" / "bin" / "python"
    if not python.exists():
        return {"skipped": ".venv-eco2 (Eval Protocol) missing: make eco2"}
    from rft_sdk.testing import free_port

    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "RFT_INIT_AUTH_TOKENS": TOKEN, "RFT_INIT_MODEL_URLS": "http://127.0.0.1:9/v1"}
    proc = subprocess.Popen([str(python), "-m", "rft_sdk.integrations.eval_protocol", "--url", tools_url, "--dataset",
                             str(DATASET), "--port", str(port)], env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # uvicorn's access log: one line per request
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                httpx.get(url + "/status", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.2)
        rng, tally = random.Random(f"{args.seed}-init"), Tally()
        good = json.dumps({"completion_params": {"model": "m"}, "messages": [{"role": "user", "content": "hi"}],
                           "model_base_url": "http://127.0.0.1:9/v1", "metadata": {
                               "invocation_id": "i", "experiment_id": "e", "rollout_id": "r", "run_id": "u",
                               "row_id": "nope"}}).encode()
        t0 = time.monotonic()

        async def run() -> None:
            async with httpx.AsyncClient(base_url=url, timeout=60) as client:
                sem = asyncio.Semaphore(8)

                async def one(i: int) -> None:
                    headers = {**AUTH, "content-type": "application/json"} if rng.random() < 0.9 else {}
                    async with sem:
                        try:
                            tally.http(await client.post("/init", content=mutate(rng, good), headers=headers))
                        except httpx.TransportError:
                            tally.transport_errors += 1

                for start in range(0, args.requests, 400):
                    if time.monotonic() - t0 > args.seconds:
                        break
                    await asyncio.gather(*(one(i) for i in range(start, min(start + 400, args.requests))))

        asyncio.run(run())
        return tally.row(time.monotonic() - t0)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def surface_fuzz(args: argparse.Namespace) -> dict[str, Any]:
    from rft_sdk.testing import serve_process

    items = _items()
    out: dict[str, Any] = {"scenario": "surface-fuzz"}
    env = {"RFT_AUTH_TOKENS": TOKEN, "RFT_OPENENV_DATASET": str(DATASET), "RFT_OPENENV_MAX_SESSIONS": "64"}
    with serve_process(RETAIL, "--surfaces", "hosted,mcp,openenv,nemo_gym", cwd=ROOT, env=env) as url:
        for surface in ("hosted", "mcp", "openenv-http", "nemo_gym"):
            t0 = time.monotonic()
            out[surface] = asyncio.run(_fuzz_http(url, surface, args, items)).row(time.monotonic() - t0)
            print(json.dumps({surface: out[surface]}), flush=True)
        t0 = time.monotonic()
        out["openenv-ws"] = asyncio.run(_fuzz_ws(url, args)).row(time.monotonic() - t0)
        print(json.dumps({"openenv-ws": out["openenv-ws"]}), flush=True)
        out["init"] = _fuzz_init(args, url)
        out["gold_score_after"] = _gold_score(url, items[0])
    return out


def healthz_while_grading(args: argparse.Namespace) -> dict[str, Any]:
    from rft_sdk.testing import serve_process

    item = _items()[0]
    answer = "abcdefghij" * 95_000 + " " + item["reference_answer"]
    result: dict[str, Any] = {}
    with serve_process(RETAIL, cwd=ROOT) as url:
        def grade() -> None:
            t0 = time.monotonic()
            response = httpx.post(url + "/grade", timeout=120, json={
                "sample": {"output_text": answer}, "item": item, "trace_id": "trace_big"})
            result.update(status=response.status_code, grade_s=round(time.monotonic() - t0, 3))

        idle = []
        with httpx.Client(base_url=url) as client:  # the same probe with nothing graded: this host's baseline
            for _ in range(20):
                t0 = time.perf_counter()
                client.get("/healthz")
                idle.append(time.perf_counter() - t0)
                time.sleep(0.02)
        worker = threading.Thread(target=grade)
        worker.start()
        latencies = []
        with httpx.Client(base_url=url) as client:
            while worker.is_alive():
                t0 = time.perf_counter()
                client.get("/healthz")
                latencies.append(time.perf_counter() - t0)
                time.sleep(0.005)
        worker.join()
    return {"scenario": "healthz-while-grading", "answer_bytes": len(answer), **result, "healthz_probes": len(latencies),
            "healthz_max_ms": round(1000 * max(latencies), 1),
            "healthz_p50_ms": round(1000 * sorted(latencies)[len(latencies) // 2], 1),
            "idle_healthz_max_ms": round(1000 * max(idle), 1), "idle_healthz_p50_ms": round(1000 * sorted(idle)[10], 1)}


def ws_episode(args: argparse.Namespace) -> dict[str, Any]:
    from rft_sdk.testing import serve_process

    env = {"RFT_AUTH_TOKENS": TOKEN, "RFT_OPENENV_DATASET": str(DATASET), "RFT_OPENENV_MAX_STEPS": "100000"}
    steps, closed = 0, None
    with serve_process(RETAIL, "--surfaces", "hosted,openenv", "--header-timeout-s", "10", cwd=ROOT, env=env) as url:
        async def run() -> None:
            nonlocal steps, closed
            async with ws_connect(url.replace("http", "ws", 1) + "/openenv/ws", additional_headers=AUTH) as ws:
                await ws.send(json.dumps({"type": "reset", "data": {"index": 0}}))
                await ws.recv()
                end = time.monotonic() + args.duration_s
                try:
                    while time.monotonic() < end:
                        await ws.send(json.dumps({"type": "step", "data": {
                            "type": "call_tool", "tool_name": "get_order_status", "arguments": {"order_id": "#W1"}}}))
                        await ws.recv()
                        await ws.send(json.dumps({"type": "state"}))
                        await ws.recv()
                        steps += 1
                        await asyncio.sleep(1.0)
                except ConnectionClosed as exc:
                    closed = exc.rcvd.code if exc.rcvd is not None else "no close frame"

        t0 = time.monotonic()
        asyncio.run(run())
        elapsed = time.monotonic() - t0
    return {"scenario": "ws-episode", "duration_s": args.duration_s, "open_s": round(elapsed, 1), "steps": steps,
            "stayed_open": closed is None, "closed": closed}


def db_refused(args: argparse.Namespace) -> dict[str, Any]:
    import contextlib

    from rft_sdk import MemoryStore, Rollout, SQLiteDatabase, ToolServer
    from rft_sdk._db import PostgresDatabase, postgres_server
    from rft_sdk.testing import run_server

    def note(text: str, *, rollout: Rollout) -> str:
        """One row into log; answers ``text``.

        Args:
            text: the answer.
        """
        rollout.db.execute("INSERT INTO log VALUES (1)")
        return text

    def count(*, rollout: Rollout) -> str:
        """Rows in log."""
        return str(rollout.db.execute("SELECT count(*) FROM log").fetchone()[0])

    def setup(conn: Any) -> None:
        conn.execute("CREATE TABLE log (n INTEGER NOT NULL)")

    out: dict[str, Any] = {"scenario": "db-refused"}
    with contextlib.ExitStack() as stack:
        import tempfile

        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        backends = {"sqlite": SQLiteDatabase(setup=setup, dir=tmp / "db", name="refused")}
        try:
            backends["postgres"] = PostgresDatabase(stack.enter_context(postgres_server()), setup=setup,
                                                    name="refused", pool_size=0)
        except Exception as exc:  # no PostgreSQL binaries here: reported, the SQLite row still runs
            out["postgres"] = f"skipped: {type(exc).__name__}: {exc}"
        for name, db in backends.items():
            server = ToolServer(tools=[note, count], db=db, store=MemoryStore(max_rollout_bytes=50_000), auth_env_var=None)
            refused = 0
            with run_server(server) as url, httpx.Client(base_url=url, timeout=60) as client:
                for i in range(args.rollouts):
                    trace = f"trace_db_{i}"
                    body = {"trace_id": trace, "item": {}, "call_id": "ok", "arguments": json.dumps({"text": "ok"})}
                    client.post("/tools/note", json=body)
                    big = {**body, "call_id": "big", "arguments": json.dumps({"text": "x" * 60_000})}
                    refused += client.post("/tools/note", json=big).status_code == 413
                rows = sum(int(client.post("/tools/count", json={"trace_id": f"trace_db_{i}", "item": {}, "call_id": "n",
                                                                 "arguments": "{}"}).json()["output"])
                           for i in range(args.rollouts))
            out[name] = {"rollouts": args.rollouts, "refused_413": refused, "rows": rows,
                         "rows_of_refused_calls": rows - args.rollouts}
            db.close()
            db.drop_all()
    return out


def sandbox_memory(args: argparse.Namespace) -> dict[str, Any]:
    import tempfile

    from rft_sdk.sandbox import LocalBackend, SandboxLimits, SandboxPool

    code = ("import subprocess, sys\nchild = \"b = bytearray(150 * 2**20); b[::4096] = b'x' * len(b[::4096]); "
            "import time; time.sleep(2); print('ok')\"\nkids = [subprocess.Popen([sys.executable, '-c', child], "
            "stdout=subprocess.PIPE) for _ in range(4)]\nprint(sum(k.communicate()[0].strip() == b'ok' for k in kids))")
    with tempfile.TemporaryDirectory() as tmp:
        pool = SandboxPool(Path(tmp) / "b", limits=SandboxLimits(timeout_s=60, memory_bytes=256 * 2**20,
                                                                 max_processes=32))
        try:
            res = pool.create("mem").run([sys.executable, "-c", code])
        finally:
            pool.close()
    words = res.stdout.split()
    return {"scenario": "sandbox-memory", "bound": LocalBackend().isolation.memory, "memory_bytes": 256 * 2**20,
            "children_of_150_MiB": 4, "lived": int(words[0]) if words else 0}


ATTACKS = {"surface-fuzz": surface_fuzz, "healthz-while-grading": healthz_while_grading, "ws-episode": ws_episode,
           "db-refused": db_refused, "sandbox-memory": sandbox_memory}
