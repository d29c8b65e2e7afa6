"""The RolloutStore contract, run unchanged against MemoryStore, SQLiteStore and RedisStore.

Time moves with a ``FakeClock`` (no sleeps), except where a test waits on a
real lock timeout (fractions of a second).
"""

from __future__ import annotations

import json
import time

import anyio
import pytest
from store_helpers import record

from rft_sdk import (
    GradeRecord,
    RolloutEvictedError,
    RolloutTooLargeError,
    StoredRollout,
    StoreError,
    StoreLockTimeoutError,
)


def _rollout(trace_id: str, calls: int = 0, *, payload: str = "ok") -> StoredRollout:
    r = StoredRollout(trace_id=trace_id, item={"task": trace_id}, created_at=12.5)
    for i in range(calls):
        r.trajectory = [*r.trajectory, record(f"c{i}", output=payload)]
        r.responses = {**r.responses, f"c{i}": [200, json.dumps({"output": payload})]}
    return r


async def test_round_trip(stores):
    store = stores.make()
    rollout = StoredRollout(trace_id="t1", item={"task": "x", "n": [1, 2]}, state_json='{"cart": {"A": 2}}',
                            trajectory=[record("c1"), record("c2", output=None)],
                            responses={"c1": [200, '{"output": "ok"}'], "c2": [400, '{"type": "error"}']},
                            created_at=12.5)
    expected = StoredRollout.from_json(rollout.to_json())
    await store.save(rollout)
    assert await store.load("t1") == expected
    assert await store.load("unknown") is None
    rollout.state_json = '{"cart": {}}'
    await store.save(rollout)
    assert (await store.load("t1")).state_json == '{"cart": {}}'
    assert (await store.astats())["rollouts"] == 1


async def test_append_only_calls_and_rewrites(stores):
    store = stores.make()
    rollout = StoredRollout(trace_id="t1")
    for i in range(30):  # the server's pattern: load, append one call, save
        loaded = await store.load("t1") or rollout
        loaded.trajectory = [*loaded.trajectory, record(f"c{i}")]
        loaded.responses = {**loaded.responses, f"c{i}": [200, f'{{"n": {i}}}']}
        loaded.state_json = json.dumps({"n": i + 1})
        await store.save(loaded)
    got = await store.load("t1")
    assert [r.call_id for r in got.trajectory] == [f"c{i}" for i in range(30)]
    assert got.responses["c29"] == [200, '{"n": 29}'] and len(got.responses) == 30
    assert json.loads(got.state_json) == {"n": 30}
    got.trajectory = [record("x")]  # persisted prefix replaced, not appended to: written in full
    got.responses = {"x": [200, "{}"]}
    await store.save(got)
    again = await store.load("t1")
    assert [r.call_id for r in again.trajectory] == ["x"] and again.responses == {"x": [200, "{}"]}


async def _state(store, trace_id: str) -> str:
    """``"live"``, ``"gone"`` (never stored, expired, released) or ``"evicted"`` (lost in progress: refused)."""
    try:
        return "gone" if await store.load(trace_id) is None else "live"
    except RolloutEvictedError:
        return "evicted"


async def test_capacity_ttl_and_release(stores):
    store = stores.make(ttl_s=40, max_rollouts=3)
    for i in range(5):
        await store.save(StoredRollout(trace_id=f"t{i}"))
    assert [await _state(store, f"t{i}") for i in range(5)] == ["evicted", "evicted", "live", "live", "live"]
    await store.save(StoredRollout(trace_id="t2"))  # t2 becomes the most recently saved
    await store.save(StoredRollout(trace_id="t5"))  # evicts t3, the least recently saved
    assert [await _state(store, f"t{i}") for i in (2, 3, 4, 5)] == ["live", "evicted", "live", "live"]
    assert (await store.astats())["evicted"] == 3
    await store.release("t2")
    await store.release("t4", after_s=10)
    assert await store.load("t2") is None and await store.load("t4") is not None
    stores.clock.advance(15)
    assert await store.load("t4") is None
    stores.clock.advance(40)
    assert await store.load("t5") is None  # expired by TTL
    stats = await store.astats()
    assert {k: stats[k] for k in ("rollouts", "evicted", "expired", "released")} == \
        {"rollouts": 0, "evicted": 3, "expired": 1, "released": 2}
    assert stats["bytes"] == 0
    await store.save(StoredRollout(trace_id="t6"))  # a write sweeps; counters stay the same
    assert {k: store.stats()[k] for k in ("rollouts", "evicted", "expired", "released")} == \
        {"rollouts": 1, "evicted": 3, "expired": 1, "released": 2}
    assert await _state(store, "t0") == "gone"  # the eviction mark is kept ttl_s (40 s), then forgotten
    with pytest.raises(ValueError):
        stores.make(ttl_s=0)
    with pytest.raises(ValueError):
        stores.make(max_rollouts=0)


async def test_grades(stores):
    store = stores.make(ttl_s=30, max_rollouts=2)
    a = GradeRecord("t1", "exact", "f" * 64, 0.5, {"subscores": {"x": 0.5}, "reasons": ["half"]})
    b = GradeRecord("t1", "judge", "e" * 64, 1.0, {"subscores": {}, "reasons": []})
    await store.save_grade(a)
    await store.save_grade(b)
    assert await store.load_grades("t1") == {"exact": a, "judge": b}
    a2 = GradeRecord("t1", "exact", "d" * 64, 0.25, {"subscores": {}, "reasons": []})
    await store.save_grade(a2)
    assert await store.load_grades("t1") == {"exact": a2, "judge": b}
    assert await store.load_grades("other") == {}
    await store.save_grade(GradeRecord("t2", "exact", "0", 0.0, {}))
    await store.save_grade(GradeRecord("t3", "exact", "0", 0.0, {}))  # capacity 2: t1 goes
    assert await store.load_grades("t1") == {} and len(await store.load_grades("t3")) == 1
    stores.clock.advance(31)
    assert await store.load_grades("t3") == {}


async def test_tombstones_after_grade(stores):
    store = stores.make()
    assert await store.graded_digest("t1") is None
    await store.mark_graded("t1", "a" * 64, retention_s=100)
    assert await store.graded_digest("t1") == "a" * 64 and await store.graded_digest("t2") is None
    if stores.shared:
        assert await stores.make().graded_digest("t1") == "a" * 64  # another worker sees it
    stores.clock.advance(101)
    assert await store.graded_digest("t1") is None


async def test_lock_orders_calls_of_one_rollout_only(stores):
    store = stores.make()
    order: list[str] = []
    holding = anyio.Event()

    async def first():
        async with store.lock("t1"):
            holding.set()
            order.append("first in")
            await anyio.sleep(0.2)
            order.append("first out")

    async def second():
        await holding.wait()
        async with store.lock("t1"):
            order.append("second in")

    async def other():
        await holding.wait()
        async with store.lock("t2"):  # not blocked by t1
            order.append("other")

    async with anyio.create_task_group() as tg:
        tg.start_soon(first)
        tg.start_soon(second)
        tg.start_soon(other)
    assert order == ["first in", "other", "first out", "second in"]


async def test_lock_makes_read_modify_write_exact(stores):
    """Tasks on two store objects (two workers when the store is shared) increment one counter."""
    workers = [stores.make(lock_timeout_s=30), stores.make(lock_timeout_s=30)] if stores.shared else [stores.make()]
    tasks, increments = 6, 5

    async def increment(store):
        for _ in range(increments):
            async with store.lock("t1"):
                rollout = await store.load("t1") or StoredRollout(trace_id="t1")
                n = json.loads(rollout.state_json).get("n", 0)
                await anyio.sleep(0.001)  # widen the read-modify-write window
                rollout.state_json = json.dumps({"n": n + 1})
                await store.save(rollout)

    async with anyio.create_task_group() as tg:
        for i in range(tasks):
            tg.start_soon(increment, workers[i % len(workers)])
    assert json.loads((await workers[0].load("t1")).state_json) == {"n": tasks * increments}


async def test_lease_of_a_dead_holder_expires(stores):
    if not stores.shared:
        pytest.skip("MemoryStore locks live in one process: its holder cannot die without the store")
    holder = stores.make(lease_s=30)
    waiter = stores.make(lock_timeout_s=0.2)
    held = holder.lock("t1")
    await held.__aenter__()  # a worker that hangs (or died on another host) while holding t1
    t0 = time.monotonic()
    with pytest.raises(StoreLockTimeoutError, match="'t1'"):
        async with waiter.lock("t1"):
            pytest.fail("acquired a held lock")
    assert time.monotonic() - t0 < 5  # waited its own timeout, not the 30 s lease
    async with waiter.lock("t2"):  # other rollouts are free
        pass
    stores.clock.advance(31)  # the lease is over: taken over at once
    async with waiter.lock("t1"):
        pass
    with pytest.raises(StoreError, match="taken over"):  # the late holder learns it lost the lock
        await held.__aexit__(None, None, None)


async def test_rollout_over_its_byte_budget_is_refused_and_kept(stores):
    store = stores.make(max_rollout_bytes=5_000, max_total_bytes=100_000)
    rollout = _rollout("t1", calls=2)
    await store.save(rollout)
    big = await store.load("t1")
    big.trajectory = [*big.trajectory, record("huge", output="x" * 6_000)]
    big.responses = {**big.responses, "huge": [200, "{}"]}
    with pytest.raises(RolloutTooLargeError, match="'t1'.*5,000") as info:
        await store.save(big)
    assert info.value.limit_bytes == 5_000 and info.value.size_bytes > 6_000
    kept = await store.load("t1")
    assert [r.call_id for r in kept.trajectory] == ["c0", "c1"] and "huge" not in kept.responses
    with pytest.raises(ValueError, match="max_rollout_bytes"):
        stores.make(max_rollout_bytes=10, max_total_bytes=5)


async def test_total_byte_budget_evicts_least_recently_saved(stores):
    store = stores.make(max_rollout_bytes=20_000, max_total_bytes=50_000)
    for i in range(12):
        await store.save(_rollout(f"t{i}", calls=2, payload="p" * 2_000))  # ~9 KB each
    stats = await store.astats()
    assert stats["bytes"] <= 50_000 and stats["evicted"] >= 6
    assert await _state(store, "t11") == "live" and await _state(store, "t0") == "evicted"
    assert stats["rollouts"] == sum([await _state(store, f"t{i}") == "live" for i in range(12)])
    assert stats["evicted"] == sum([await _state(store, f"t{i}") == "evicted" for i in range(12)])


async def test_restart_sees_the_data(stores):
    if not stores.shared:
        pytest.skip("MemoryStore state ends with its process")
    first = stores.make()
    rollout = _rollout("t1", calls=3)
    await first.save(rollout)
    await first.save_grade(GradeRecord("t0", "exact", "f" * 64, 1.0, {}))
    await first.aclose()
    second = stores.make()  # a new process on the same file / Redis
    loaded = await second.load("t1")
    assert loaded == StoredRollout.from_json(rollout.to_json())
    loaded.trajectory = [*loaded.trajectory, record("c3")]
    loaded.responses = {**loaded.responses, "c3": [200, "{}"]}
    await second.save(loaded)
    assert [r.call_id for r in (await stores.make().load("t1")).trajectory] == ["c0", "c1", "c2", "c3"]
    assert (await second.load_grades("t0"))["exact"].score == 1.0


async def test_stale_copy_after_eviction_is_written_in_full(stores):
    store = stores.make(max_rollouts=1)
    rollout = _rollout("t1", calls=2)
    await store.save(rollout)
    await store.save(StoredRollout(trace_id="t2"))  # evicts t1
    assert await _state(store, "t1") == "evicted"
    rollout.trajectory = [*rollout.trajectory, record("c2")]
    rollout.responses = {**rollout.responses, "c2": [200, "{}"]}
    await store.save(rollout)  # its persisted copy is gone: everything is written again
    assert [r.call_id for r in (await store.load("t1")).trajectory] == ["c0", "c1", "c2"]


async def test_loads_see_calls_appended_and_rewrites_made_by_another_worker(stores):
    if not stores.shared:
        pytest.skip("one MemoryStore object is one store")
    one, two = stores.make(), stores.make()
    await one.save(_rollout("t1", calls=2))
    assert len((await one.load("t1")).trajectory) == 2  # one now caches the decoded calls
    other = await two.load("t1")
    other.trajectory = [*other.trajectory, record("c2")]
    other.responses = {**other.responses, "c2": [200, '{"by": "two"}']}
    await two.save(other)  # appended by another worker
    seen = await one.load("t1")
    assert [r.call_id for r in seen.trajectory] == ["c0", "c1", "c2"] and seen.responses["c2"] == [200, '{"by": "two"}']
    other.trajectory = [record("fresh")]  # rewritten by another worker: a new generation
    other.responses = {"fresh": [200, "{}"]}
    await two.save(other)
    seen = await one.load("t1")
    assert [r.call_id for r in seen.trajectory] == ["fresh"] and list(seen.responses) == ["fresh"]
    await two.release("t1")
    assert await one.load("t1") is None


async def test_redis_holder_renews_its_lease_while_the_call_runs(redis_url):
    from rft_sdk import RedisStore

    holder = RedisStore(redis_url, prefix="renew:", lease_s=0.3)  # real clock: renewed every 0.1 s
    waiter = RedisStore(redis_url, prefix="renew:", lock_timeout_s=0.6)
    try:
        async with holder.lock("t1"):
            with pytest.raises(StoreLockTimeoutError):  # 0.6 s > the 0.3 s lease: only renewal keeps it held
                async with waiter.lock("t1"):
                    pytest.fail("took over a lock whose holder is alive")
        async with waiter.lock("t1"):  # released normally
            pass
    finally:
        await holder.aclose()
        await waiter.aclose()
