"""Injectable clocks for the rollout stores.

Every store reads time through a ``Clock``: a zero-argument callable that
returns the current time in seconds (unix epoch for the default, so deadlines
stored in SQLite or Redis mean the same thing on every host of a deployment).
Tests pass a ``FakeClock`` and call ``advance`` instead of sleeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["Clock", "FakeClock", "system_clock"]

#: A callable returning "now" in seconds; stores compare it with stored deadlines.
Clock = Callable[[], float]


def system_clock() -> float:
    """Wall-clock unix time in seconds (``time.time``), the default clock of every store.

    Stores shared by several hosts (Redis) compare deadlines written by one
    host with the clock of another, so keep hosts NTP-synchronised.
    """
    return time.time()


class FakeClock:
    """A manual clock for tests: time moves only when ``advance`` is called.

    Args:
        start: initial reading in seconds (default 1,700,000,000, a plausible unix time).
    """

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = float(start)

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds`` (>= 0).

        Raises:
            ValueError: ``seconds`` is negative (clocks never go back).
        """
        if not seconds >= 0:
            raise ValueError(f"FakeClock.advance needs seconds >= 0, got {seconds!r}")
        self.now += float(seconds)

    def __repr__(self) -> str:
        return f"FakeClock({self.now!r})"
