"""Fixtures of the observability tests: an OTLP/HTTP receiver on 127.0.0.1."""

from __future__ import annotations

import pytest
from otlp_receiver import receiver_app

from rft_sdk.testing import run_server


@pytest.fixture
def otlp_receiver():
    """``(base_url, spans)`` of a running OTLP/HTTP receiver (spans: list of flat span dicts)."""
    app, spans = receiver_app()
    with run_server(app) as url:
        yield url, spans
