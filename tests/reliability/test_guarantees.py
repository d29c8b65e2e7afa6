"""Guarantees kept for their documented time (issue 26).

Before: ``MemoryStore`` kept at most ``max_rollouts`` (10,000) grade tombstones whatever the documented
one-hour ``graded_tombstone_s``: after 10,050 other grades a late call of a graded rollout answered 200
and started a fresh, recorded rollout. A rollout evicted in progress by the byte budget was silently
restarted: its next call got 200 on empty state and its grade saw 1 of its 10 calls (score 0.01).
"""

from __future__ import annotations

import asyncio
import logging
import uuid

import httpx
import pytest
from rel_helpers import body

from rft_sdk import FakeClock, GradingContext, MemoryStore, Rollout, ToolServer


def _server(store: MemoryStore) -> ToolServer:
    server = ToolServer(store=store, auth_env_var=None)

    @server.tool
    def write(rollout: Rollout) -> str:
        """Count a write in the rollout's state."""
        rollout.state["n"] = rollout.state.get("n", 0) + 1
        return str(rollout.state["n"])

    @server.grader
    def calls(ctx: GradingContext) -> float:
        """The share of 10 calls the rollout made."""
        return len(ctx.trajectory) / 10

    return server


async def test_tombstones_outlive_ten_thousand_other_grades():
    store = MemoryStore()  # the defaults: max_rollouts=10,000, one-hour tombstones
    server = _server(store)
    transport = httpx.ASGITransport(app=server)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        first = f"trace_{uuid.uuid4().hex}"
        await client.post("/tools/write", json=body("write", trace_id=first))
        assert (await client.post("/grade", json={"sample": {"output_text": "x"}, "trace_id": first})).status_code == 200
    for i in range(10_050):  # other rollouts graded since (the store's own calls: fast)
        await store.mark_graded(f"other-{i}", "d" * 64, 3600.0)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        late = await client.post("/tools/write", json=body("write", trace_id=first))
    assert late.status_code == 409 and late.json()["error"]["code"] == "already_graded"
    assert store.stats()["marks_dropped"] == 0


async def test_marks_over_their_byte_budget_are_dropped_counted_and_logged(caplog):
    clock = FakeClock()
    store = MemoryStore(max_mark_bytes=10 * 300, clock=clock)
    with caplog.at_level(logging.WARNING, logger="rft_sdk"):
        for i in range(20):
            await store.mark_graded(f"t{i}", "d" * 64, 3600.0)
    assert await store.graded_digest("t0") is None and await store.graded_digest("t19") == "d" * 64
    stats = await store.astats()
    assert stats["marks_dropped"] > 0 and stats["mark_bytes"] <= 3000
    assert "dropped before their time" in caplog.text
    clock.advance(3601)  # kept their whole retention otherwise, then swept
    assert await store.graded_digest("t19") is None and (await store.astats())["mark_bytes"] == 0


async def test_mixed_retentions_are_each_kept_their_own_time():
    clock = FakeClock()
    store = MemoryStore(clock=clock)
    await store.mark_graded("long", "a", 100.0)
    await store.mark_graded("short", "b", 10.0)
    clock.advance(11)
    assert await store.graded_digest("short") is None and await store.graded_digest("long") == "a"
    clock.advance(90)
    assert await store.graded_digest("long") is None


async def test_a_rollout_evicted_in_progress_is_refused_not_restarted():
    store = MemoryStore(max_rollouts=2)
    server = _server(store)
    lost = f"trace_{uuid.uuid4().hex}"
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as client:
        for _ in range(3):
            assert (await client.post("/tools/write", json=body("write", trace_id=lost))).status_code == 200
        for _ in range(2):  # two other rollouts push it out of the store
            await client.post("/tools/write", json=body("write"))
        answers = [await client.post("/tools/write", json=body("write", trace_id=lost, call_id="call_next"))
                   for _ in range(2)]  # the hosted side retries a 503 with the same call_id
        grade = await client.post("/grade", json={"sample": {"output_text": "x"}, "trace_id": lost})
    for answer in answers:
        assert answer.status_code == 503 and answer.json()["error"]["code"] == "rollout_evicted"
        assert "max_rollouts" in answer.json()["error"]["message"]
    assert grade.status_code == 503 and grade.json()["error"]["code"] == "rollout_evicted"  # never a 0.3 score
    assert server.metrics["counters"]["rollouts_evicted"] == 3


async def test_a_graded_rollout_evicted_while_awaiting_its_release_is_still_409():
    store = MemoryStore(max_rollouts=1)
    server = ToolServer(store=store, auth_env_var=None, grade_retention_s=60)
    server.add_tool(_server(store).tools["write"].fn)
    server.add_grader(_server(store).graders["calls"].fn)
    trace = f"trace_{uuid.uuid4().hex}"
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as client:
        await client.post("/tools/write", json=body("write", trace_id=trace))
        await client.post("/grade", json={"sample": {"output_text": "x"}, "trace_id": trace})
        await client.post("/tools/write", json=body("write"))  # evicts the graded rollout
        late = await client.post("/tools/write", json=body("write", trace_id=trace))
    assert late.status_code == 409


def test_sqlite_refuses_an_evicted_rollout_across_processes(tmp_path):
    from rft_sdk import RolloutEvictedError, SQLiteStore, StoredRollout

    async def scenario() -> None:
        one, two = SQLiteStore(tmp_path / "r.db", max_rollouts=1), SQLiteStore(tmp_path / "r.db", max_rollouts=1)
        await one.save(StoredRollout(trace_id="a"))
        await one.save(StoredRollout(trace_id="b"))  # evicts a
        with pytest.raises(RolloutEvictedError):
            await two.load("a")  # another worker of the host sees it too

    asyncio.run(scenario())
