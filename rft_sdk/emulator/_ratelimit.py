"""Request spacing for the grader's ``rate_limit`` (requests per second).

Source: ``docs/hosted-protocol.md`` section 1 (``grader.rate_limit``).
The emulator starts at most ``rate`` requests in any one-second window by
spacing request starts ``1 / rate`` seconds apart (no bursts), which is the
strictest reading of the limit.
"""

from __future__ import annotations

import time

import anyio

__all__ = ["RateLimiter"]


class RateLimiter:
    """Space request starts at least ``1 / rate`` seconds apart.

    Args:
        rate: requests per second; must be > 0.

    Raises:
        ValueError: ``rate <= 0``.
    """

    def __init__(self, rate: float) -> None:
        if not rate > 0:
            raise ValueError(f"rate must be > 0 requests/second, got {rate}")
        self.interval_s = 1.0 / rate
        self._next = 0.0

    async def acquire(self) -> None:
        """Wait for this request's slot (slots are handed out in call order)."""
        now = time.monotonic()
        slot = max(now, self._next)
        self._next = slot + self.interval_s
        if slot > now:
            await anyio.sleep(slot - now)
