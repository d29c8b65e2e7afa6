"""``RedisStore``'s scripts travel over two connections of its own, those of concurrent calls as batches
(``rft_sdk._stores._redis_batch``): every call still recorded exactly once, a script Redis forgot (its
script cache emptied by a restart) loaded again, a caller that gave up before its batch left never sent;
and the garbage collector's expiry of a rollout's keys kept although ``SAVE`` no longer renews it on every
call."""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
import redis
from store_helpers import record

from rft_sdk import RedisStore, Rollout, StoredRollout, ToolServer


def _named_clients(probe: redis.Redis, name: str) -> int:
    """Connections Redis holds open whose client name is ``name``."""
    return sum(1 for client in probe.client_list() if client.get("name") == name)


def _bump_server(store: RedisStore) -> ToolServer:
    server = ToolServer(auth_env_var=None, store=store)

    @server.tool
    async def bump(rollout: Rollout) -> str:
        """Count calls."""
        rollout.state["n"] = rollout.state.get("n", 0) + 1
        return str(rollout.state["n"])

    return server


async def _calls_in_flight(server: ToolServer, rollouts: int, calls: int, tag: str) -> None:
    """``rollouts`` rollouts at once, each making ``calls`` calls one after the other; checks every answer."""
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as client:
        async def rollout(r: int) -> None:
            for i in range(calls):
                body = {"type": "function_call", "call_id": f"{tag}-c{i}", "trace_id": f"{tag}-t{r}", "name": "bump",
                        "arguments": "{}", "item": {"task": r}}
                answer = await client.post("/tools/bump", json=body)
                assert answer.status_code == 200, answer.text
                assert answer.json()["output"] == str(i + 1)

        await asyncio.gather(*(rollout(r) for r in range(rollouts)))


async def test_concurrent_calls_share_one_connection_and_each_is_recorded_once(redis_url):
    name = f"batch{uuid.uuid4().hex[:8]}"
    store = RedisStore(f"{redis_url}?client_name={name}", prefix=f"{name}:")
    probe = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        await _calls_in_flight(_bump_server(store), rollouts=16, calls=4, tag="a")
        # the scripts' two connections, and one pooled connection for the start-up persistence check; one
        # connection per call in flight before (16 here)
        assert _named_clients(probe, name) <= 3
        fresh = RedisStore(redis_url, prefix=store.prefix)  # what another process reads back
        for r in range(16):
            loaded = await fresh.load(f"a-t{r}")
            assert loaded is not None and [c.call_id for c in loaded.trajectory] == [f"a-c{i}" for i in range(4)]
            assert json.loads(loaded.state_json) == {"n": 4}
        await fresh.aclose()
    finally:
        probe.close()
        await store.aclose()


async def test_a_script_redis_forgot_is_loaded_again(redis_url):
    store = RedisStore(redis_url, prefix=f"noscript{uuid.uuid4().hex[:8]}:")
    probe = redis.Redis.from_url(redis_url)
    server = _bump_server(store)
    try:
        await _calls_in_flight(server, rollouts=4, calls=2, tag="before")
        probe.script_flush()  # what a restart of Redis does to its script cache
        await _calls_in_flight(server, rollouts=8, calls=3, tag="after")  # one script alone, then batches
        loaded = await store.load("after-t7")
        assert loaded is not None and [c.call_id for c in loaded.trajectory] == ["after-c0", "after-c1", "after-c2"]
    finally:
        probe.close()
        await store.aclose()


async def test_a_script_whose_caller_gave_up_before_its_batch_left_is_never_sent(redis_url):
    store = RedisStore(redis_url, prefix=f"gaveup{uuid.uuid4().hex[:8]}:")
    key = f"{store.prefix}counter"
    slow = store.client.register_script(  # holds the connection ~100 ms, so the next script waits for a batch
        "local t = redis.call('TIME') local s = t[1] * 1e6 + t[2] "
        "repeat t = redis.call('TIME') until t[1] * 1e6 + t[2] - s > 100000 return redis.call('INCR', KEYS[1])")
    incr = store.client.register_script("return redis.call('INCR', KEYS[1])")
    try:
        in_flight = [asyncio.create_task(store._batcher.run(slow, [key], [])) for _ in range(2)]  # both lanes
        await asyncio.sleep(0)  # their scripts are written
        queued = asyncio.create_task(store._batcher.run(incr, [key], []))
        await asyncio.sleep(0)  # in the queue for the next batch
        queued.cancel()  # e.g. the store's command bound ran out
        assert sorted(await asyncio.gather(*in_flight)) == [1, 2]
        assert await store._batcher.run(incr, [key], []) == 3  # the cancelled INCR never ran
        assert queued.cancelled()
    finally:
        await store.client.delete(key)
        await store.aclose()


async def test_a_rollouts_keys_keep_their_garbage_collection_expiry(redis_url):
    """``SAVE`` renews the keys' expiry (2 * ttl_s + 60 s) once half of it passed, on a rewrite, and on a list it
    creates; Redis deletes what nobody sweeps (a prefix no server uses any more)."""
    store = RedisStore(redis_url, prefix=f"gc{uuid.uuid4().hex[:8]}:", ttl_s=100)
    probe = redis.Redis.from_url(redis_url)
    keys = [f"{store.prefix}{kind}:t1" for kind in ("r", "c", "s")]
    gc_ms = (2 * 100 + 60) * 1000
    try:
        rollout = StoredRollout(trace_id="t1", item={"task": "x"})
        await store.save(rollout)  # no calls yet: the hash alone
        assert probe.pttl(keys[0]) > gc_ms - 10_000 and not probe.exists(keys[1], keys[2])
        rollout.trajectory.append(record("c0"))
        rollout.responses["c0"] = [200, "{}"]
        await store.save(rollout)  # creates both lists: each gets the expiry
        assert all(probe.pttl(k) > gc_ms - 10_000 for k in keys)
        for k in keys:
            probe.pexpire(k, 5_000)  # as if most of the expiry had passed
        rollout.trajectory.append(record("c1"))
        rollout.responses["c1"] = [200, "{}"]
        await store.save(rollout)
        assert all(probe.pttl(k) > gc_ms - 10_000 for k in keys)  # renewed, all three
        rewritten = StoredRollout(trace_id="t1", item={"task": "x"}, trajectory=[record("z")],
                                  responses={"z": [200, "{}"]})
        await store.save(rewritten)  # another object: written in full under a new generation
        assert all(probe.pttl(k) > gc_ms - 10_000 for k in keys)
        loaded = await RedisStore(redis_url, prefix=store.prefix).load("t1")
        assert loaded is not None and [c.call_id for c in loaded.trajectory] == ["z"]
    finally:
        probe.close()
        await store.aclose()


async def test_without_hiredis_the_scripts_are_packed_by_redis_py(redis_url):
    """hiredis is optional (the ``redis`` extra installs it): without it the asyncio connection's own packer
    writes the same commands."""
    store = RedisStore(redis_url, prefix=f"nohiredis{uuid.uuid4().hex[:8]}:")
    store._batcher._hiredis_packer = False  # as when hiredis is not installed
    try:
        await _calls_in_flight(_bump_server(store), rollouts=4, calls=3, tag="p")  # alone, then in batches
        loaded = await RedisStore(redis_url, prefix=store.prefix).load("p-t3")
        assert loaded is not None and [c.call_id for c in loaded.trajectory] == ["p-c0", "p-c1", "p-c2"]
    finally:
        await store.aclose()


async def test_scripts_waiting_beyond_one_batch_open_more_connections(redis_url):
    """A batch carries at most ``BATCH_BYTES`` (Redis reads a connection 16 KiB per turn and, with ``appendfsync
    always``, fsyncs per turn): while more waits, more lanes open, up to the pool's ``max_connections``."""
    from rft_sdk._stores._redis_batch import BATCH_BYTES, MAX_LANES

    store = RedisStore(redis_url, prefix=f"lanes{uuid.uuid4().hex[:8]}:")
    slow = store.client.register_script(  # holds a lane ~100 ms
        "local t = redis.call('TIME') local s = t[1] * 1e6 + t[2] "
        "repeat t = redis.call('TIME') until t[1] * 1e6 + t[2] - s > 100000 return 0")
    length = store.client.register_script("return #ARGV[1]")
    big = "x" * (BATCH_BYTES // 2 - 200)
    try:
        busy = [asyncio.create_task(store._batcher.run(slow, [], [])) for _ in range(2)]  # both first lanes
        await asyncio.sleep(0)
        waiting = [asyncio.create_task(store._batcher.run(length, [], [big])) for _ in range(6)]
        await asyncio.sleep(0)  # queued: 6 x 8 KB, over one batch
        assert 2 < len(store._batcher._lanes) <= MAX_LANES  # sent on new lanes, not held for the first two
        assert await asyncio.gather(*waiting) == [len(big)] * 6
        await asyncio.gather(*busy)
    finally:
        await store.aclose()
