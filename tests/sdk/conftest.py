"""Fixtures for rft_sdk tests (helpers live in ``sdk_helpers`` to avoid conftest name clashes)."""

from __future__ import annotations

import httpx
import pytest
from sdk_helpers import make_server


@pytest.fixture
def server():
    return make_server()


@pytest.fixture
async def client(server):
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as c:
        yield c
