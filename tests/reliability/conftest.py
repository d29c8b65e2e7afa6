"""Fixtures of the reliability suite (issue 26): real servers, real sockets, real Redis restarts."""

from __future__ import annotations

import sys
from pathlib import Path

# the Redis helpers of the store suite (a throwaway redis-server on a free port, restartable on its data)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "stores"))

from hypothesis import settings

# no example database written into the repository; derandomized, so a run is reproducible
settings.register_profile("rft", database=None, derandomize=True)
settings.load_profile("rft")
