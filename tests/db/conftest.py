"""Fixtures of the rollout-database tests: a real PostgreSQL server for the session, and backends."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # db_helpers, also for the replica subprocess

from db_helpers import BACKENDS, make_db

from rft_sdk._db import postgres_server
from rft_sdk._db._pgserver import find_pg_bindir
from rft_sdk.exceptions import RFTError


@pytest.fixture(scope="session")
def pg_url():
    """URL of a throwaway PostgreSQL server (initdb in a temp dir, free port; skipped locally /
    failed in CI when the server binaries are absent: `make test` installs them)."""
    try:
        find_pg_bindir()
    except RFTError as exc:
        if os.environ.get("CI"):
            pytest.fail(str(exc))
        pytest.skip(str(exc))
    with postgres_server() as url:
        yield url


@pytest.fixture(params=BACKENDS)
def backend(request):
    """The backend under test: ``"sqlite"``, ``"postgres"`` or ``"postgres-schema"``."""
    return request.param


@pytest.fixture
def make(backend, tmp_path, request):
    """``make(**options)`` builds a backend of the kind under test; all are dropped after the test."""
    made = []
    pg = request.getfixturevalue("pg_url") if backend.startswith("postgres") else None

    def factory(**options):
        db = make_db(backend, tmp_path=tmp_path, pg_url=pg, **options)
        made.append(db)
        return db

    yield factory
    for db in made:
        db.close()
        db.drop_all()
        db.close()
