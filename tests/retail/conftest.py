"""Fixtures for the retail example tests (real τ²-bench data)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from examples.retail import load_base_db  # noqa: E402
from examples.retail.build_dataset import load_tasks  # noqa: E402


@pytest.fixture(scope="session")
def base():
    return load_base_db()


@pytest.fixture(scope="session")
def tasks():
    return load_tasks()[0]


@pytest.fixture(scope="session")
def splits():
    return load_tasks()[1]


def _materialize(base, overlay):
    """The full database as plain dicts: base with the overlay's records substituted."""
    return {table: {key: overlay.get(table, {}).get(key, rec) for key, rec in rows.items()}
            for table, rows in base.tables.items()}


@pytest.fixture(scope="session")
def materialize():
    return _materialize
