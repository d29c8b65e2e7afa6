"""MemoryStore's GC-friendly layout (docs/performance.md) and the per-key locks every store uses.

The layout: a rollout at rest is one tuple of bytearrays, atoms and a dict of
atoms, none tracked by the cyclic GC; ``load`` hands out lazy views (nothing
decoded or copied), and ``save`` of such a view encodes only the calls added.
"""

from __future__ import annotations

import gc
import json

import anyio
import pytest
from store_helpers import record

from rft_sdk import MemoryStore, RolloutTooLargeError, StoredRollout, ToolCallRecord
from rft_sdk._stores import KeyedLocks, _lazy


async def _filled(store: MemoryStore, trace_id: str, calls: int) -> StoredRollout:
    rollout = StoredRollout(trace_id=trace_id, item={"task": {"id": 7, "tags": ["a", "b"]}}, created_at=1.0)
    await store.save(rollout)
    for i in range(calls):  # the server's own path: load, append in place, save
        loaded = await store.load(trace_id)
        assert loaded is not None
        loaded.trajectory.append(record(f"c{i}"))
        loaded.responses[f"c{i}"] = [200, f'{{"n": {i}}}']
        loaded.state_json = f'{{"n": {i}}}'
        await store.save(loaded)
    got = await store.load(trace_id)
    assert got is not None
    return got


async def test_a_rollout_at_rest_is_not_tracked_by_the_gc():
    store = MemoryStore()
    await _filled(store, "t1", 5)
    gc.collect()
    (entry,) = store._rollouts.values()
    assert not gc.is_tracked(entry) and not any(gc.is_tracked(part) for part in entry)
    assert not gc.is_tracked(store._answers["t1"])
    # the dataclass layout it replaced: every record and its arguments stayed tracked
    assert gc.is_tracked(record("c0"))


async def test_load_decodes_nothing_and_save_encodes_only_the_added_call(monkeypatch):
    store = MemoryStore()
    await _filled(store, "t1", 50)
    decoded: list[bytes] = []
    encoded: list[ToolCallRecord] = []
    real_decode = _lazy.decode_record
    monkeypatch.setattr(_lazy, "decode_record", lambda text: decoded.append(text) or real_decode(text))
    import rft_sdk._stores._memory as memory
    real_encode = memory.encode_record_bytes
    monkeypatch.setattr(memory, "encode_record_bytes", lambda r: encoded.append(r) or real_encode(r))
    loaded = await store.load("t1")
    assert loaded is not None and len(loaded.trajectory) == 50 and len(loaded.responses) == 50
    loaded.trajectory.append(record("c50"))
    loaded.responses["c50"] = [200, "{}"]
    await store.save(loaded)
    assert decoded == [] and [r.call_id for r in encoded] == ["c50"]
    again = await store.load("t1")
    assert again is not None and again.trajectory[-1] == record("c50") and again.trajectory[7] == record("c7")
    assert len(decoded) == 2


async def test_views_read_like_a_list_and_a_dict():
    store = MemoryStore()
    got = await _filled(store, "t1", 3)
    expected = [record("c0"), record("c1"), record("c2")]
    assert got.trajectory == expected and list(got.trajectory) == expected and got.trajectory != expected[:2]
    assert got.trajectory[-1] == expected[-1] and got.trajectory[1:] == expected[1:]
    with pytest.raises(IndexError):
        got.trajectory[3]
    assert got.item == {"task": {"id": 7, "tags": ["a", "b"]}} and got.state_json == '{"n": 2}'
    assert got.responses["c1"] == [200, '{"n": 1}'] and got.responses.get("zz") is None and "c2" in got.responses
    assert list(got.responses) == ["c0", "c1", "c2"] and len(got.responses) == 3
    with pytest.raises(TypeError, match="append-only"):
        del got.responses["c0"]
    with pytest.raises(KeyError):
        got.responses["zz"]
    assert StoredRollout.from_json(got.to_json()) == got  # the views serialise like the list and dict


async def test_saving_the_same_object_twice_appends_once_each_time():
    store = MemoryStore()
    rollout = await _filled(store, "t1", 1)
    rollout.trajectory.append(record("c1"))
    rollout.responses["c1"] = [200, "{}"]
    await store.save(rollout)
    rollout.trajectory.append(record("c2"))
    rollout.responses["c2"] = [200, "{}"]
    await store.save(rollout)
    got = await store.load("t1")
    assert got is not None and [r.call_id for r in got.trajectory] == ["c0", "c1", "c2"]
    assert list(got.responses) == ["c0", "c1", "c2"]


async def test_an_appended_call_over_the_budget_is_refused_and_nothing_kept():
    store = MemoryStore(max_rollout_bytes=4_000, max_total_bytes=8_000)
    loaded = await _filled(store, "t1", 2)
    before = store.bytes
    loaded.trajectory.append(record("huge", output="x" * 5_000))
    loaded.responses["huge"] = [200, "{}"]
    with pytest.raises(RolloutTooLargeError):
        await store.save(loaded)
    kept = await store.load("t1")
    assert kept is not None and [r.call_id for r in kept.trajectory] == ["c0", "c1"] and "huge" not in kept.responses
    assert store.bytes == before


async def test_records_round_trip_exactly_through_the_bytes():
    store = MemoryStore()
    odd = ToolCallRecord(call_id="c\u00e9", id=None, name="n", arguments={"big": 2**70, "s": "\u2603", "f": 0.1},
                         output=None, error="e\nrr", status=422, started_at=1.5e9 + 0.123456789, latency_s=1e-7)
    rollout = StoredRollout(trace_id="t1", trajectory=[odd], responses={"c\u00e9": [422, '{"e": "\\u2603"}']})
    await store.save(rollout)
    got = await store.load("t1")
    assert got is not None and got.trajectory[0] == odd and got.trajectory[0].arguments["big"] == 2**70
    assert got.responses["c\u00e9"] == [422, '{"e": "\\u2603"}']


async def test_keyed_locks_serialise_one_key_fifo_and_let_others_through():
    locks, order = KeyedLocks(), []

    async def worker(key: str, n: int, started: anyio.Event) -> None:
        started.set()
        async with locks.hold(key):
            order.append((key, n, "in"))
            await anyio.sleep(0.01)
            order.append((key, n, "out"))

    async with anyio.create_task_group() as tg:
        for n in range(3):
            started = anyio.Event()
            tg.start_soon(worker, "a", n, started)
            await started.wait()
        tg.start_soon(worker, "b", 0, anyio.Event())
    a = [step for step in order if step[0] == "a"]
    assert a == [("a", n, s) for n in range(3) for s in ("in", "out")]  # FIFO, never two inside
    assert order.index(("b", 0, "in")) < order.index(("a", 0, "out"))  # another key is not blocked
    assert len(locks) == 0  # dropped once free


async def test_keyed_locks_pass_the_key_on_past_cancelled_waiters():
    import asyncio

    locks, inside = KeyedLocks(), []

    async def waiter(name: str) -> None:
        async with locks.hold("k"):
            inside.append(name)

    held = locks.hold("k")
    await held.__aenter__()
    a, b, c = (asyncio.create_task(waiter(name)) for name in "abc")
    await asyncio.sleep(0.01)  # all three wait, in order
    a.cancel()  # cancelled while waiting: leaves the queue
    await asyncio.sleep(0.01)
    await held.__aexit__(None, None, None)  # hands the key to b ...
    b.cancel()  # ... cancelled before it could run: b passes it on to c
    await asyncio.gather(a, b, c, return_exceptions=True)
    assert a.cancelled() and b.cancelled() and inside == ["c"] and len(locks) == 0
    async with locks.hold("k"):  # still usable
        inside.append("after")
    assert inside == ["c", "after"] and len(locks) == 0


@pytest.mark.parametrize("arguments, output", [
    ({"sku": "A", "qty": 2}, "ok"),
    ({"note": "héllo ✓ \u2028", "nested": {"a": [1, 2.5, None, True]}}, None),
    ({"big": 2**70}, "beyond 64 bits: the stdlib's text"),
    ({"_raw": "\ud800 lone surrogate"}, "x"),
])
def test_a_record_encodes_to_the_same_bytes_by_orjson_and_the_stdlib(arguments, output):
    """``encode_record_bytes`` (orjson on the dataclass itself) writes what ``encode_record`` writes, and
    ``decode_record`` reads it back equal."""
    from rft_sdk._stores._records import decode_record, encode_record, encode_record_bytes

    rec = ToolCallRecord(call_id="c1", id="fc_1", name="add", arguments=arguments, output=output,
                         error=None if output else "boom", status=200 if output else 400, started_at=1_700_000_000.25,
                         latency_s=0.5)
    data = encode_record_bytes(rec)
    assert json.loads(data) == json.loads(encode_record(rec))
    assert decode_record(data) == rec
