"""The injectable clock and the per-process cache of decoded calls."""

from __future__ import annotations

import pytest
from store_helpers import record

from rft_sdk import FakeClock
from rft_sdk._stores._cache import CallCache


def test_fake_clock_moves_only_forward_when_told():
    clock = FakeClock(100.0)
    assert clock() == 100.0 == clock()
    clock.advance(2.5)
    assert clock() == 102.5
    with pytest.raises(ValueError, match="seconds >= 0"):
        clock.advance(-1)


def test_call_cache_is_bounded_by_bytes_least_recently_used_first():
    cache = CallCache(max_bytes=250)
    for name in ("a", "b"):
        cache.put(name, "g1", [record("c0")], {"c0": [200, "{}"]}, 100)
    assert cache.get("a") is not None  # a is now the most recently used
    cache.put("c", "g1", [record("c0")], {}, 100)  # 300 bytes > 250: b goes
    assert cache.get("b") is None and cache.get("a") is not None and cache.bytes == 200
    cache.put("huge", "g1", [], {}, 251)  # larger than the whole cache: not kept
    assert cache.get("huge") is None and len(cache) == 2
    records = [record("c0")]
    cache.put("a", "g2", records, {}, 50)
    records.append(record("c1"))  # the cache keeps its own list
    assert [r.call_id for r in cache.get("a").records] == ["c0"] and cache.get("a").generation == "g2"
    assert cache.bytes == 150
    assert CallCache(max_bytes=0).get("a") is None
