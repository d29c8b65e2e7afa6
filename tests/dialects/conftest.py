"""Dialect test setup: the repo root on sys.path, and one real server speaking both dialects."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from dialect_helpers import catalog_server  # noqa: E402

from rft_sdk.testing import run_server  # noqa: E402


@pytest.fixture(scope="module")
def live():
    """``(server, base_url)``: the catalog server with a token and a grader secret, on real uvicorn."""
    server = catalog_server()
    with run_server(server) as url:
        yield server, url
