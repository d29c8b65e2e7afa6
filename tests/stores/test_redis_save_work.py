"""What ``RedisStore``'s ``SAVE`` does on a steady tool call (issue 40: Redis per call within 3x memory): the
sweep of other due rollouts runs once per ``SWEEP_EVERY_S`` of the store's clock (and before any eviction), not
on every call, and the counters of drops are read with it; the rollout's own expiry and release are still checked
on every write; the count of stored calls comes from the rollout's hash, not a list length."""

from __future__ import annotations

import uuid

import httpx
import redis
from store_helpers import record

from rft_sdk import FakeClock, RedisStore, Rollout, StoredRollout, ToolServer
from rft_sdk._stores._redis import SWEEP_EVERY_S


def _commands(client: redis.Redis) -> dict[str, int]:
    """Commands the Redis server ran so far, by name (``INFO commandstats``; a script's own commands included)."""
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in client.info("commandstats").items()}


def _ran(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {name: n - before.get(name, 0) for name, n in after.items() if n != before.get(name, 0)}


async def test_a_steady_call_runs_fourteen_commands_and_sweeps_once_per_period(redis_url):
    clock = FakeClock()
    store = RedisStore(redis_url, prefix=f"work{uuid.uuid4().hex[:8]}:", clock=clock)
    server = ToolServer(auth_env_var=None, store=store)

    @server.tool
    async def bump(rollout: Rollout) -> str:
        """Count calls."""
        rollout.state["n"] = rollout.state.get("n", 0) + 1
        return str(rollout.state["n"])

    probe = redis.Redis.from_url(redis_url)
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as client:
            async def call(i: int) -> None:
                body = {"type": "function_call", "call_id": f"c{i}", "trace_id": "t1", "name": "bump",
                        "arguments": "{}", "item": {"task": 7}}
                assert (await client.post("/tools/bump", json=body)).json()["output"] == str(i + 1)

            await call(0)  # the persistence check, LOCKLOAD and the first SAVE (it sweeps: the first of this store)
            before = _commands(probe)
            for i in range(1, 6):
                await call(i)  # the clock stands still: no sweep is due
            ran = _ran(before, _commands(probe))
            clock.advance(SWEEP_EVERY_S)
            before = _commands(probe)
            await call(6)
            swept = _ran(before, _commands(probe))
    finally:
        probe.close()
        await store.aclose()
    ran.pop("info", None)
    assert ran.pop("evalsha") == 5  # one script per call
    assert "zrangebyscore" not in ran  # no sweep between two sweep periods (was 3 range reads per call)
    assert "llen" not in ran and ran.get("hmget") == 5  # the count of calls read with the hash's HMGET
    # the stamp vouches for the copy's expiry (read only for the release: one ZSCORE, was two), and the lock and
    # the tombstone are read with one MGET (was two GETs)
    assert ran.get("zscore") == 5 and ran.get("mget") == 5 and "get" not in ran
    assert sum(ran.values()) == 14 * 5  # was 21 per call, then 16
    assert swept.get("zrangebyscore") == 3  # the period passed: this call swept


async def test_a_write_between_sweeps_still_drops_its_own_expired_rollout_first(redis_url):
    clock = FakeClock()
    store = RedisStore(redis_url, prefix=f"due{uuid.uuid4().hex[:8]}:", clock=clock, ttl_s=0.5)
    try:
        await store.save(StoredRollout(trace_id="t1", trajectory=[record("c0")], responses={"c0": [200, "{}"]}))
        old = await store.load("t1")
        assert old is not None
        clock.advance(0.6)  # t1 expired; less than SWEEP_EVERY_S since the last sweep: this save does not sweep
        old.trajectory.append(record("c1"))
        old.responses["c1"] = [200, "{}"]
        await store.save(old)  # its own expiry is checked: dropped (counted), then written afresh in full
        stats = await store.astats()
        got = await store.load("t1")
    finally:
        await store.aclose()
    assert stats["expired"] == 1 and stats["rollouts"] == 1
    assert got is not None and [r.call_id for r in got.trajectory] == ["c0", "c1"]

