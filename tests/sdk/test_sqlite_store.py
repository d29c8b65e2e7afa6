"""SQLiteStore: the RolloutStore contract (run against MemoryStore too), locks
exclusive across processes, and ``rft serve --workers 2`` on a shared store."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import sqlite3
import textwrap
import time

import anyio
import httpx
import pytest
import uvicorn
from sdk_helpers import ROOT

import rft_sdk
from rft_sdk import (
    GradeRecord,
    SQLiteStore,
    StoredRollout,
    StoreError,
    StoreLockTimeoutError,
    ToolCallRecord,
)
from rft_sdk.cli import main
from rft_sdk.testing import serve_process


def _record(call_id: str, output: str | None = "ok") -> ToolCallRecord:
    return ToolCallRecord(call_id=call_id, id=f"fc_{call_id}", name="add", arguments={"sku": "A", "qty": 2},
                          output=output, error=None if output else "boom", status=200 if output else 400,
                          started_at=1_700_000_000.25, latency_s=0.5)


# -- SQLiteStore specifics (the contract shared with the other stores: tests/stores) -------------------------------------------------------------------------
async def test_instances_share_the_file(tmp_path):
    one, two = SQLiteStore(tmp_path / "s.db"), SQLiteStore(tmp_path / "s.db")
    await one.save(StoredRollout(trace_id="t1", state_json='{"n": 1}'))
    assert (await two.load("t1")).state_json == '{"n": 1}'
    await two.release("t1")
    assert await one.load("t1") is None
    assert await one.astats() == await two.astats() == {"rollouts": 0, "evicted": 0, "expired": 0, "released": 1,
                                                        "bytes": 0}
    one.close()
    assert await one.load("t1") is None  # reopens after close


def test_invalid_arguments(tmp_path):
    with pytest.raises(ValueError, match="MemoryStore"):
        SQLiteStore(":memory:")
    with pytest.raises(ValueError, match="does not exist"):
        SQLiteStore(tmp_path / "missing" / "s.db")
    with pytest.raises(ValueError, match="lock_timeout_s"):
        SQLiteStore(tmp_path / "s.db", lock_timeout_s=0)
    assert issubclass(StoreLockTimeoutError, StoreError) and issubclass(StoreError, rft_sdk.RFTError)


async def test_corrupt_record_and_unreadable_file_raise_store_error(tmp_path):
    store = SQLiteStore(tmp_path / "s.db")
    await store.save(StoredRollout(trace_id="t1", trajectory=[_record("c1")]))
    with sqlite3.connect(tmp_path / "s.db") as conn:
        conn.execute("UPDATE rft_calls SET record = '{\"call_id\": \"c1\"}'")
    with pytest.raises(StoreError, match="corrupt record for 't1'.*ToolCallRecord"):
        await SQLiteStore(tmp_path / "s.db").load("t1")  # another process: nothing cached
    with sqlite3.connect(tmp_path / "s.db") as conn:
        conn.execute("UPDATE rft_rollouts SET item = '[1]'")
    with pytest.raises(StoreError, match="corrupt record for 't1'"):
        await store.load("t1")
    await store.save_grade(GradeRecord("t1", "exact", "f" * 64, 1.0, {}))
    for data, problem in (("[1]", "must be a JSON object"), ('{"exact": 1}', "JSON object of objects"),
                          ("{oops", "not valid JSON")):
        with sqlite3.connect(tmp_path / "s.db") as conn:
            conn.execute("UPDATE rft_grades SET data = ?", (data,))
        with pytest.raises(StoreError, match=f"corrupt record for 't1'.*{problem}"):
            await store.load_grades("t1")
    (tmp_path / "junk.db").write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="junk.db"):
        await SQLiteStore(tmp_path / "junk.db").load("t1")


def _count_in_process(path: str, trace_id: str, increments: int, barrier) -> None:
    """Worker process: read-modify-write a counter under ``lock`` ``increments`` times."""
    async def main() -> None:
        store = SQLiteStore(path, lock_timeout_s=30)
        barrier.wait()
        for _ in range(increments):
            async with store.lock(trace_id):
                rollout = await store.load(trace_id) or StoredRollout(trace_id=trace_id)
                state = json.loads(rollout.state_json)
                await anyio.sleep(0.001)  # widen the read-modify-write window
                rollout.state_json = json.dumps({"n": state.get("n", 0) + 1})
                await store.save(rollout)

    anyio.run(main)


def _die_holding_lock(path: str, trace_id: str) -> None:
    async def main() -> None:
        async with SQLiteStore(path).lock(trace_id):
            os._exit(0)  # a worker killed mid-call: its lock row stays behind

    anyio.run(main)


def test_lock_excludes_across_processes(tmp_path):
    path, processes, increments = str(tmp_path / "s.db"), 4, 25
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(processes)
    workers = [ctx.Process(target=_count_in_process, args=(path, "t1", increments, barrier))
               for _ in range(processes)]
    dying = ctx.Process(target=_die_holding_lock, args=(path, "t2"))
    for p in [*workers, dying]:
        p.start()
    for p in [*workers, dying]:
        p.join(timeout=60)
    assert [p.exitcode for p in [*workers, dying]] == [0] * (processes + 1)

    async def check() -> None:
        store = SQLiteStore(path, lock_timeout_s=3)
        assert json.loads((await store.load("t1")).state_json) == {"n": processes * increments}
        t0 = time.monotonic()
        # The dead owner's lock is taken over without waiting out its 660 s lease
        # (lock_timeout_s=3 would raise otherwise).
        async with store.lock("t2"):
            assert time.monotonic() - t0 < 3.0

    anyio.run(check)


# -- rft serve --workers ----------------------------------------------------------------------------
_SQLITE_APP = '''
import os
import anyio
from rft_sdk import Rollout, SQLiteStore, ToolServer

server = ToolServer(auth_env_var=None, store=SQLiteStore(os.environ["RFT_TEST_DB"], lock_timeout_s=30))


@server.tool
async def increment(*, rollout: Rollout) -> dict:
    """Increment this rollout's counter (yields mid-update)."""
    n = rollout.state.get("n", 0)
    await anyio.sleep(0.002)
    rollout.state["n"] = n + 1
    return {"n": n + 1, "pid": os.getpid()}
'''


def test_serve_two_workers_shares_rollout_state(tmp_path):
    (tmp_path / "tests_app.py").write_text(textwrap.dedent(_SQLITE_APP))
    env = {"PYTHONPATH": str(ROOT), "RFT_TEST_DB": str(tmp_path / "rollouts.db")}
    with serve_process("tests_app:server", "--workers", "2", cwd=tmp_path, env=env) as url:
        traces = [f"trace_{k}" for k in range(4)]
        plan = [(t, f"call_{i}") for t in traces for i in range(15)] + [(traces[0], "call_dup")] * 6

        def call(client, t, c):
            return client.post("/tools/increment", json={"type": "function_call", "id": f"fc_{c}", "call_id": c,
                                                         "name": "increment", "arguments": "{}",
                                                         "trace_id": t, "item": {}})

        async def warm_up() -> set[int]:
            # serve_process waits for one worker only: call until both answered (bounded), so the
            # load below meets two ready workers and "both served" does not depend on start-up timing.
            pids: set[int] = set()
            for i in range(200):  # fresh connections each round: a new worker can accept them
                async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                    batch = await asyncio.gather(*[call(client, f"warm_{i}_{j}", "c") for j in range(8)])
                pids |= {json.loads(r.json()["output"])["pid"] for r in batch}
                if len(pids) == 2:
                    break
                await asyncio.sleep(0.05)
            return pids

        async def run_calls():
            async with httpx.AsyncClient(base_url=url, timeout=30,
                                         limits=httpx.Limits(max_connections=len(plan))) as client:
                return await asyncio.gather(*[call(client, t, c) for t, c in plan])

        assert len(asyncio.run(warm_up())) == 2, "the second worker never answered"
        responses = asyncio.run(run_calls())
        assert [r.status_code for r in responses] == [200] * len(plan)
        outputs = [json.loads(r.json()["output"]) for r in responses]
        dup = [o for (t, c), o in zip(plan, outputs) if c == "call_dup"]
        assert all(o == dup[0] for o in dup)  # replayed, not re-run
        for trace in traces:
            unique = {c: o["n"] for (t, c), o in zip(plan, outputs) if t == trace}
            assert sorted(unique.values()) == list(range(1, len(unique) + 1))  # no lost update, no re-run

        async def stored():
            store = SQLiteStore(tmp_path / "rollouts.db")
            return {t: await store.load(t) for t in traces}

        for trace, rollout in asyncio.run(stored()).items():
            calls = 16 if trace == traces[0] else 15
            assert json.loads(rollout.state_json) == {"n": calls} and len(rollout.trajectory) == calls


def test_serve_two_workers_refuses_memory_store(tmp_path, monkeypatch, capsys):
    (tmp_path / "memory_app.py").write_text("from rft_sdk import MemoryStore, ToolServer\n"
                                            "server = ToolServer(auth_env_var=None, store=MemoryStore())\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("served despite the refusal"))
    assert main(["serve", "memory_app:server", "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert "--workers 2 refused" in err and "MemoryStore" in err and "SQLiteStore" in err


async def test_server_template_uses_the_store_url(monkeypatch, tmp_path):
    import importlib

    import server_templates.tool_server.app as tmpl

    monkeypatch.setenv("RFT_STORE_URL", f"sqlite://{tmp_path}/tmpl.db")
    monkeypatch.setenv("RFT_STORE_TTL_S", "60")
    monkeypatch.delenv("RFT_AUTH_TOKENS", raising=False)
    try:
        module = importlib.reload(tmpl)
        assert isinstance(module.server.store, SQLiteStore) and module.server.store.ttl_s == 60.0
        body = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "save_note",
                "arguments": json.dumps({"title": "a", "body": "x"}), "trace_id": "trace_t", "item": {}}
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=module.server), base_url="http://t") as c:
            assert (await c.post("/tools/save_note", json=body)).json()["output"] == "saved 'a' (1 notes)"
        reopened = SQLiteStore(tmp_path / "tmpl.db")
        assert json.loads((await reopened.load("trace_t")).state_json) == {"notes": {"a": "x"}}
    finally:
        monkeypatch.delenv("RFT_STORE_URL")
        importlib.reload(tmpl)
        monkeypatch.setenv("RFT_STORE_PATH", str(tmp_path / "old.db"))  # the older variable still works
        assert importlib.reload(tmpl).server.store.path == tmp_path / "old.db"
        monkeypatch.delenv("RFT_STORE_PATH")
        importlib.reload(tmpl)


async def test_calls_are_appended_not_rewritten(tmp_path):
    """A call inserts one row; the file stays near the data's size (was: whole rollout rewritten per call)."""
    store = SQLiteStore(tmp_path / "s.db")
    rollout = StoredRollout(trace_id="t1")
    for i in range(40):
        rollout.trajectory = [*rollout.trajectory, _record(f"c{i}", output="x" * 20_000)]
        rollout.responses = {**rollout.responses, f"c{i}": [200, "{}"]}
        await store.save(rollout)
    with sqlite3.connect(tmp_path / "s.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM rft_calls").fetchone()[0] == 40
    rewritten = sum(i * 20_000 for i in range(1, 41))  # what writing the whole rollout per call would write
    on_disk = sum(p.stat().st_size for p in tmp_path.glob("s.db*"))  # database + WAL
    assert on_disk < rewritten / 4, f"{on_disk} bytes on disk; rewriting would write {rewritten}"
    assert len((await store.load("t1")).trajectory) == 40


async def test_stats_does_no_io_and_store_threads_are_its_own(tmp_path, monkeypatch):
    store = SQLiteStore(tmp_path / "s.db")
    await store.save(StoredRollout(trace_id="t1"))
    monkeypatch.setattr(store._db, "read", lambda *a: pytest.fail("stats() read the database"))
    monkeypatch.setattr(store._db, "write", lambda *a: pytest.fail("stats() wrote the database"))
    assert store.stats() == {"rollouts": 1, "evicted": 0, "expired": 0, "released": 0}
    monkeypatch.undo()
    # Sync tools fill anyio's default thread pool: the store's I/O does not queue behind them.
    default = anyio.to_thread.current_default_thread_limiter()
    async with anyio.create_task_group() as tg:
        stop = anyio.Event()
        original = default.total_tokens
        default.total_tokens = 2
        try:
            for _ in range(2):
                tg.start_soon(anyio.to_thread.run_sync, stop_wait, stop)
            await anyio.sleep(0.05)
            assert default.borrowed_tokens == 2
            with anyio.fail_after(10):
                assert await store.load("t1") is not None
        finally:
            stop.set()
            default.total_tokens = original


def stop_wait(stop):
    """A slow sync tool: blocks its thread until ``stop`` is set."""
    while not stop.is_set():
        time.sleep(0.01)
