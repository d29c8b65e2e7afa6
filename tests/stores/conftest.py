"""Fixtures of the store conformance suite: every test runs on memory, SQLite and a real Redis."""

from __future__ import annotations

import pytest
from store_helpers import KINDS, Harness, redis_server


@pytest.fixture(scope="session")
def redis_url():
    """URL of a ``redis-server`` started for the session (skipped locally / failed in CI if absent)."""
    with redis_server() as url:
        yield url


@pytest.fixture(params=KINDS)
async def stores(request, tmp_path):
    """A ``Harness`` for the store kind under test (closed after the test)."""
    url = request.getfixturevalue("redis_url") if request.param == "redis" else None
    harness = Harness(request.param, tmp_path, url)
    yield harness
    for store in harness.made:
        await store.aclose()
