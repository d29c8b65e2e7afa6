"""Store selection by URL (``store_from_url``) and by ``RFT_STORE_URL`` (``default_store``)."""

from __future__ import annotations

import pytest
import redis.asyncio

from rft_sdk import MemoryStore, RedisStore, SQLiteStore, StoredRollout, default_store, store_from_url


def test_memory_and_sqlite_urls(tmp_path):
    memory = store_from_url("memory://?ttl_s=60&max_rollouts=5&max_total_bytes=1000000&max_rollout_bytes=1000")
    assert isinstance(memory, MemoryStore) and (memory.ttl_s, memory.max_rollouts) == (60.0, 5)
    assert memory.bounds.max_rollout_bytes == 1000 and memory.bounds.max_total_bytes == 1_000_000
    sqlite = store_from_url(f"sqlite://{tmp_path}/r.db?lease_s=30&lock_timeout_s=5")
    assert isinstance(sqlite, SQLiteStore) and sqlite.path == tmp_path / "r.db"
    assert (sqlite.lease_s, sqlite.lock_timeout_s, sqlite.ttl_s) == (30.0, 5.0, 3600.0)
    assert sqlite.multiprocess_safe and not memory.multiprocess_safe


def test_redis_and_tls_urls():
    plain = store_from_url("redis://cache.internal:6380/2?ttl_s=900")
    assert isinstance(plain, RedisStore) and plain.ttl_s == 900.0 and plain.url == "redis://cache.internal:6380/2"
    kwargs = plain.client.connection_pool.connection_kwargs
    assert (kwargs["host"], kwargs["port"], kwargs["db"]) == ("cache.internal", 6380, 2)
    tls = store_from_url("rediss://:s3cret@cache.internal:6380/0?ssl_cert_reqs=required&max_rollouts=7")
    assert tls.max_rollouts == 7 and tls.url.endswith("?ssl_cert_reqs=required")
    assert issubclass(tls.client.connection_pool.connection_class, redis.asyncio.SSLConnection)
    assert tls.client.connection_pool.connection_kwargs["password"] == "s3cret"


@pytest.mark.parametrize(("url", "problem"), [
    ("ftp://x", "unknown scheme 'ftp'"),
    ("sqlite://", "sqlite needs a file path"),
    ("memory://?ttl=5", "unknown option 'ttl'"),
    ("memory://?ttl_s=abc", "not a number"),
    ("memory://?ttl_s=0", "ttl_s must be > 0"),
])
def test_bad_urls_name_the_problem(url, problem):
    with pytest.raises(ValueError, match=problem):
        store_from_url(url)


def test_default_store_reads_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("RFT_STORE_URL", raising=False)
    assert isinstance(default_store(), MemoryStore)
    assert isinstance(default_store({"RFT_STORE_URL": "  "}), MemoryStore)
    monkeypatch.setenv("RFT_STORE_URL", f"sqlite://{tmp_path}/env.db")
    assert isinstance(default_store(), SQLiteStore)
    with pytest.raises(ValueError, match="RFT_STORE_URL: .*unknown scheme"):
        default_store({"RFT_STORE_URL": "postgres://db/x"})


async def test_url_store_round_trip_on_real_redis(redis_url):
    store = store_from_url(redis_url.replace("/0", "/3") + "?ttl_s=30")
    try:
        await store.save(StoredRollout(trace_id="url-t1", state_json='{"a": 1}'))
        assert (await store.load("url-t1")).state_json == '{"a": 1}'
    finally:
        await store.aclose()
