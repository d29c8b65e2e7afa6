"""``RedisStore`` on the tool-call path: one round trip per call on a rollout this process wrote last (``SAVE``
with the stamp of its cached copy), two otherwise (``LOCKLOAD``, then ``SAVE`` with the release); locks cost no
append-only-file write; the item's bytes sent once per rollout and process; and the exactly-once edges: a
one-round-trip save onto a copy another process changed, graded or locked writes nothing, a save whose lock was
taken over is not written, a save Redis ran but whose reply was lost is not written twice."""

from __future__ import annotations

import json
import re
import uuid

import httpx
import pytest
import redis
from store_helpers import ROOT, record

from rft_sdk import FakeClock, RedisStore, Rollout, StoredRollout, ToolServer
from rft_sdk._stores import _redis as redis_store_module
from rft_sdk.exceptions import StoreError

RETAIL = (ROOT / "examples" / "retail" / "data" / "retail_train.jsonl").read_bytes().splitlines()[0]


def _scripts_run(client: redis.Redis) -> int:
    """Scripts (EVALSHA/EVAL) the Redis server ran: one per round trip of the store."""
    stats = client.info("commandstats")
    return sum(int(v["calls"]) for k, v in stats.items() if k in ("cmdstat_evalsha", "cmdstat_eval"))


async def test_a_tool_call_is_one_round_trip_and_the_item_crosses_once(redis_url):
    store = RedisStore(redis_url, prefix=f"calls{uuid.uuid4().hex[:8]}:")
    server = ToolServer(auth_env_var=None, store=store)

    @server.tool
    async def bump(rollout: Rollout) -> str:
        """Count calls."""
        rollout.state["n"] = rollout.state.get("n", 0) + 1
        return str(rollout.state["n"])

    probe = redis.Redis.from_url(redis_url)
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as client:
            async def call(i: int) -> httpx.Response:
                content = (b'{"type":"function_call","call_id":"c%d","trace_id":"t1","name":"bump","arguments":"{}",'
                           b'"item":' % i) + RETAIL + b"}"
                return await client.post("/tools/bump", content=content, headers={"content-type": "application/json"})

            assert (await call(0)).json()["output"] == "1"  # the persistence check and the first write
            scripts, sent = _scripts_run(probe), int(probe.info("stats")["total_net_output_bytes"])
            for i in range(1, 6):
                assert (await call(i)).json()["output"] == str(i + 1)
            per_call = (_scripts_run(probe) - scripts) / 5
            out_per_call = (int(probe.info("stats")["total_net_output_bytes"]) - sent) / 5
        assert per_call == 1  # SAVE onto the copy this process wrote (was LOCKLOAD and SAVE; before, four)
        assert out_per_call < len(RETAIL) / 4  # Redis did not send the item back on each call
        fresh = RedisStore(redis_url, prefix=store.prefix)  # another process: it gets the item once
        loaded = await fresh.load("t1")
        assert loaded is not None and loaded.held_item_json == RETAIL and len(loaded.trajectory) == 6
        await fresh.aclose()
    finally:
        probe.close()
        await store.aclose()


async def test_a_save_whose_lock_was_taken_over_is_not_written(redis_url):
    clock = FakeClock()
    prefix = f"lost{uuid.uuid4().hex[:8]}:"
    holder = RedisStore(redis_url, prefix=prefix, clock=clock, lease_s=30)
    other = RedisStore(redis_url, prefix=prefix, clock=clock, lease_s=30, lock_timeout_s=5)
    try:
        await holder.save(StoredRollout(trace_id="t1", trajectory=[record("c0")], responses={"c0": [200, "{}"]}))
        held = holder.lock("t1")
        await held.__aenter__()
        rollout = await holder.load("t1")
        assert rollout is not None
        rollout.trajectory.append(record("late"))
        rollout.responses["late"] = [200, "{}"]
        await holder.save(rollout)  # pending: written when the block ends, with the release
        clock.advance(31)  # the holder stalled past its lease: another process takes the rollout over
        async with other.lock("t1"):
            taken = await other.load("t1")
            assert taken is not None
            taken.trajectory = [*taken.trajectory, record("c1")]
            taken.responses = {**taken.responses, "c1": [200, "{}"]}
            await other.save(taken)
        with pytest.raises(StoreError, match="taken over"):
            await held.__aexit__(None, None, None)
        final = await other.load("t1")
        assert final is not None and [r.call_id for r in final.trajectory] == ["c0", "c1"]  # "late" never landed
    finally:
        await holder.aclose()
        await other.aclose()


async def test_a_save_redis_ran_twice_is_written_once_and_releases(redis_url):
    """redis-py resends a script whose reply was lost (a broken connection): the second run must see the first."""
    store = RedisStore(redis_url, prefix=f"twice{uuid.uuid4().hex[:8]}:")
    real = store._run

    async def twice(name, args, keys=None):
        if name == "SAVE":
            await real(name, args, keys)  # ran, reply lost
        return await real(name, args, keys)

    try:
        await store.save(StoredRollout(trace_id="t1", item={"task": "x"}))
        store._run = twice  # type: ignore[method-assign]
        for call_id in ("c0", "c1"):
            async with store.lock("t1"):
                rollout, graded = await store.load_for_call("t1")
                assert rollout is not None and not graded
                rollout.trajectory.append(record(call_id))
                rollout.responses[call_id] = [200, json.dumps({"call": call_id})]
                rollout.state_json = json.dumps({"last": call_id})
                await store.save(rollout)
        store._run = real  # type: ignore[method-assign]
        other = RedisStore(redis_url, prefix=store.prefix, lock_timeout_s=0.5)
        async with other.lock("t1"):  # released by the first run: free at once
            loaded = await other.load("t1")
        assert loaded is not None and [r.call_id for r in loaded.trajectory] == ["c0", "c1"]
        assert loaded.item == {"task": "x"} and json.loads(loaded.state_json) == {"last": "c1"}
        await other.aclose()
    finally:
        await store.aclose()


async def _one_call(store: RedisStore, trace_id: str, call_id: str) -> StoredRollout:
    """What the server's tool path does with the store: read, append one call and its answer, save."""
    async with store.lock_for_call(trace_id):
        rollout, graded = await store.load_for_call(trace_id)
        assert not graded
        rollout = rollout or StoredRollout(trace_id=trace_id, item={"task": "x"})
        n = json.loads(rollout.state_json).get("n", 0) + 1
        rollout.trajectory.append(record(call_id))
        rollout.responses[call_id] = [200, json.dumps({"n": n})]
        rollout.state_json = json.dumps({"n": n})
        await store.save(rollout)
        return rollout


async def test_a_one_round_trip_save_onto_a_copy_another_process_changed_writes_nothing(redis_url):
    prefix = f"stale{uuid.uuid4().hex[:8]}:"
    one, two = RedisStore(redis_url, prefix=prefix), RedisStore(redis_url, prefix=prefix)
    probe = redis.Redis.from_url(redis_url)
    try:
        await _one_call(one, "t1", "c0")  # the lock first (nothing cached), then one round trip per call
        scripts = _scripts_run(probe)
        await _one_call(one, "t1", "c1")
        assert _scripts_run(probe) - scripts == 1
        await _one_call(two, "t1", "c2")  # another process appends: one's cached copy is stale now
        with pytest.raises(StoreError, match="changed in Redis"):
            await _one_call(one, "t1", "c3")  # ran on the stale copy: refused, nothing written
        stored = await two.load("t1")
        assert stored is not None and [r.call_id for r in stored.trajectory] == ["c0", "c1", "c2"]
        assert json.loads(stored.state_json) == {"n": 3}
        scripts = _scripts_run(probe)
        retried = await _one_call(one, "t1", "c3")  # the retry (as the server's 503 asks) takes the lock
        assert _scripts_run(probe) - scripts == 2 and json.loads(retried.state_json) == {"n": 4}
        scripts = _scripts_run(probe)
        await _one_call(one, "t1", "c4")  # another writer was seen: the lock first for SOLO_HOLDOFF_S
        assert _scripts_run(probe) - scripts == 2
        final = await two.load("t1")
        assert final is not None and [r.call_id for r in final.trajectory] == ["c0", "c1", "c2", "c3", "c4"]
        assert list(final.responses) == ["c0", "c1", "c2", "c3", "c4"]
    finally:
        probe.close()
        await one.aclose()
        await two.aclose()


@pytest.mark.parametrize("change", ["graded", "locked", "released", "release-due", "expired"])
async def test_a_one_round_trip_save_refuses_a_graded_locked_released_or_expired_rollout(redis_url, change):
    clock = FakeClock()
    prefix = f"edge{uuid.uuid4().hex[:8]}:"
    one = RedisStore(redis_url, prefix=prefix, clock=clock, ttl_s=100)
    two = RedisStore(redis_url, prefix=prefix, clock=clock, ttl_s=100, lock_timeout_s=5)
    try:
        await _one_call(one, "t1", "c0")
        held = two.lock("t1")
        if change == "graded":
            await two.mark_graded("t1", "d" * 64, retention_s=600)
        elif change == "locked":
            await held.__aenter__()  # another process holds the rollout (its call or grade runs)
        elif change == "released":
            await two.release("t1")
        elif change == "release-due":
            await two.release("t1", after_s=1.0)  # released in 1 s: due by the time the save lands (below)
        else:
            clock.advance(98.5)  # 1.5 s left of its TTL: expired by the time the save lands (below)
        with pytest.raises(StoreError, match="changed in Redis"):
            async with one.lock_for_call("t1"):
                rollout, graded = await one.load_for_call("t1")  # this process's cached copy: no I/O
                assert rollout is not None and not graded
                rollout.trajectory.append(record("c1"))
                rollout.responses["c1"] = [200, "{}"]
                clock.advance(2.0)
                await one.save(rollout)
        if change == "locked":
            await held.__aexit__(None, None, None)
        stored = await two.load("t1")
        gone = change in ("released", "release-due", "expired")
        assert stored is None if gone else [r.call_id for r in stored.trajectory] == ["c0"]
        if change in ("release-due", "expired"):  # dropped by the save itself, counted as what it was
            stats = await two.astats()
            assert stats["released" if change == "release-due" else "expired"] == 1 and stats["rollouts"] == 0
        if change == "graded":  # the retry takes the lock and reads the tombstone: the server's 409
            async with one.lock_for_call("t1"):
                assert (await one.load_for_call("t1"))[1] is True
    finally:
        await one.aclose()
        await two.aclose()


async def test_a_one_round_trip_save_reads_the_expiry_when_it_may_have_passed_during_the_tool(redis_url, monkeypatch):
    """The stamp vouches for the copy's expiry only while it is over a second ahead of the save's clock: a copy that
    expired while the tool ran is dropped and counted by the save itself, even when no sweep is due."""
    monkeypatch.setattr(redis_store_module, "SWEEP_EVERY_S", 1e9)  # no sweep after the first save's
    clock = FakeClock()
    store = RedisStore(redis_url, prefix=f"ahead{uuid.uuid4().hex[:8]}:", clock=clock, ttl_s=100)
    try:
        await _one_call(store, "t1", "c0")
        clock.advance(50)
        await _one_call(store, "t1", "c1")  # one round trip, the expiry vouched for: 150 now
        clock.advance(98.5)  # 1.5 s left: the call starts in one round trip
        with pytest.raises(StoreError, match="changed in Redis"):
            async with store.lock_for_call("t1"):
                rollout, _ = await store.load_for_call("t1")
                assert rollout is not None
                rollout.trajectory.append(record("c2"))
                rollout.responses["c2"] = [200, "{}"]
                clock.advance(2.0)  # the tool ran 2 s: expired when the save lands
                await store.save(rollout)
        stats = await store.astats()
        assert stats["expired"] == 1 and stats["rollouts"] == 0 and await store.load("t1") is None
    finally:
        await store.aclose()


async def test_taking_and_releasing_a_lock_writes_nothing_to_the_append_only_file(redis_url):
    store = RedisStore(redis_url, prefix=f"aof{uuid.uuid4().hex[:8]}:")
    probe = redis.Redis.from_url(redis_url)
    try:
        def appended() -> int:  # bytes in the AOF, or in its buffer: Redis postpones the write (up to 2 s)
            info = probe.info("persistence")  # while a background fsync is slow (a busy disk)
            return int(info["aof_current_size"]) + int(info["aof_buffer_length"])

        await store.save(StoredRollout(trace_id="t1", item={"task": "x"}))
        before = appended()
        for _ in range(5):
            async with store.lock("t1"):  # LOCKLOAD, then UNLOCK: each was an fsync'd write before
                assert await store.load("t1") is not None
        assert appended() == before
        await _one_call(store, "t1", "c0")  # a call's one durable write
        assert appended() > before
    finally:
        probe.close()
        await store.aclose()


async def test_a_write_by_a_replica_that_keeps_no_version_still_makes_the_copy_stale(redis_url):
    """A rolling upgrade: a replica of the previous version appends without bumping ``ver`` or naming itself."""
    prefix = f"old{uuid.uuid4().hex[:8]}:"
    one, two = RedisStore(redis_url, prefix=prefix), RedisStore(redis_url, prefix=prefix)
    probe = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        await _one_call(one, "t1", "c0")
        await _one_call(one, "t1", "c1")
        meta = f"{prefix}r:t1"
        writer, version = probe.hget(meta, "w"), probe.hget(meta, "ver")
        await _one_call(two, "t1", "c2")
        probe.hset(meta, mapping={"w": writer, "ver": version})  # as the previous version leaves them
        with pytest.raises(StoreError, match="changed in Redis"):
            await _one_call(one, "t1", "c3")
        stored = await two.load("t1")
        assert stored is not None and [r.call_id for r in stored.trajectory] == ["c0", "c1", "c2"]
    finally:
        probe.close()
        await one.aclose()
        await two.aclose()


async def test_a_one_round_trip_call_copies_nothing_that_grows_and_an_unsaved_change_is_not_reused(redis_url):
    """The cached calls are handed to the call and back with its save (O(1), not two copies of the trajectory
    per call); a shared list changed after its save and not saved again is not read back as stored."""
    prefix = f"share{uuid.uuid4().hex[:8]}:"
    store, other = RedisStore(redis_url, prefix=prefix), RedisStore(redis_url, prefix=prefix)
    probe = redis.Redis.from_url(redis_url)
    try:
        for i in range(20):
            saved = await _one_call(store, "t1", f"c{i}")
        cached = store._cache.get("t1")
        assert cached is not None and cached.records is saved.trajectory and cached.responses is saved.responses
        scripts = _scripts_run(probe)
        async with store.lock_for_call("t1"):
            rollout, _ = await store.load_for_call("t1")
            assert rollout is not None and rollout.trajectory is cached.records  # call 21 reads no copy
        saved.trajectory.append(record("ghost"))  # changed after its save, never saved
        saved.responses["ghost"] = [200, "{}"]
        after = await _one_call(store, "t1", "c20")  # not on the changed lists: the lock, Redis's copy
        assert _scripts_run(probe) - scripts == 2
        assert [r.call_id for r in after.trajectory] == [f"c{i}" for i in range(21)]
        assert "ghost" not in after.responses and json.loads(after.state_json) == {"n": 21}
        stored = await other.load("t1")
        assert stored is not None and [r.call_id for r in stored.trajectory] == [f"c{i}" for i in range(21)]
        assert list(stored.responses) == [f"c{i}" for i in range(21)]
    finally:
        probe.close()
        await store.aclose()
        await other.aclose()


async def test_the_store_reads_replies_and_packs_scripts_with_hiredis_when_installed(redis_url):
    """The ``redis`` extra installs hiredis; with it, the scripts' connections parse replies in C
    (``_AsyncHiredisParser``) and ``EVALSHA`` is packed by ``hiredis.pack_command``."""
    from redis._parsers import _AsyncHiredisParser

    extra = re.search(r"^redis = \[(.*)\]$", (ROOT / "pyproject.toml").read_text(), re.MULTILINE)
    assert extra is not None and '"hiredis' in extra.group(1)  # the extra's requirements
    hiredis = pytest.importorskip("hiredis")
    store = RedisStore(redis_url, prefix=f"hiredis{uuid.uuid4().hex[:8]}:")
    try:
        await _one_call(store, "t1", "c0")
        await _one_call(store, "t1", "c1")
        lanes = [lane.conn for lane in store._batcher._lanes if lane.conn is not None]
        assert lanes and all(isinstance(conn._parser, _AsyncHiredisParser) for conn in lanes)
        assert store._batcher._hiredis_packer is hiredis.pack_command
    finally:
        await store.aclose()
