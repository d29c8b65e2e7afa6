"""``PoolSizer``: how many warm clones the pool should hold, from the observed start rate.

A trainer starts a whole batch of rollouts at once (a GRPO step of 256-1,024
prompts x samples), then trains, then starts the next batch. Every rollout's
first call needs its database; a clone claimed from the warm pool costs a
rename, a cold one a full copy. So the pool is sized from what was observed:

``target = clamp(ceil(peak_rate_per_s x lead_s), pool_size, max_pool)``

* ``peak_rate_per_s``: the most rollouts that *asked* for a new database
  (arrival time: when admission began, so a batch the server needs seconds to
  serve still counts as one batch) within any ``window_s`` seconds, divided by
  ``window_s``. Arrivals of the last ``horizon_s`` seconds count in full;
  older peaks decay (an exponentially weighted moving average with fast attack,
  half-life ``half_life_s``: ``peak x 0.5 ** (age / half_life_s)``). A batch is
  remembered across the training time between two steps and forgotten after a
  few half-lives without starts.
* ``lead_s``: the starts the pool must cover before a refill can catch up:
  the longer of ``window_s`` and the time one preparation (a clone) takes,
  itself a moving average (weight 0.2) of the measured clone times.
* ``pool_size`` is the floor (kept ready even when nothing starts) and
  ``max_pool`` the ceiling (disk: one template copy per clone).

A batch of 1,024 rollouts arriving within one second gives a peak of 1,024/s
and a target of 1,024 (``window_s = 1``, ``max_pool >= 1024``): the next batch
finds them ready. Pure arithmetic over an injected clock; the backend's
maintenance thread asks :meth:`PoolSizer.target` after each start and clones
in the background until the pool holds that many.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

__all__ = ["PoolSizer"]


class PoolSizer:
    """The warm pool's target size from the observed start rate (rule in the module docstring).

    Args:
        floor: ``pool_size``, the fewest clones kept ready.
        ceiling: ``max_pool``, the most (``>= floor``).
        window_s: seconds of the window in which arrivals are counted (> 0).
        half_life_s: seconds for a remembered peak rate to halve (> 0).
        clock: seconds, monotonic (tests pass their own).

    Raises:
        ValueError: ``ceiling < floor``, a negative floor, or a non-positive window or half-life.
    """

    #: Weight of the newest clone time in the moving average of one preparation's seconds.
    PREP_WEIGHT = 0.2
    #: Arrivals younger than this many windows (at least 60 s) are kept one by one; older ones are folded
    #: into the decaying peak.
    HORIZON_WINDOWS = 10

    def __init__(self, floor: int, ceiling: int, *, window_s: float = 5.0, half_life_s: float = 300.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if floor < 0 or ceiling < floor:
            raise ValueError(f"need 0 <= pool_size <= max_pool, got pool_size={floor}, max_pool={ceiling}")
        if not window_s > 0 or not half_life_s > 0:
            raise ValueError(f"window_s and half_life_s must be > 0 seconds, got {window_s!r}, {half_life_s!r}")
        self.floor, self.ceiling = int(floor), int(ceiling)
        self.window_s, self.half_life_s = float(window_s), float(half_life_s)
        self.horizon_s = max(60.0, self.HORIZON_WINDOWS * self.window_s)
        self.clock = clock
        self.prep_s = 0.0  # moving average of one preparation's seconds (0 until one was measured)
        self._lock = threading.Lock()
        self._arrivals: list[float] = []  # arrival times younger than horizon_s (unsorted)
        self._peak, self._peak_at = 0.0, 0.0  # folded older peak (starts/s) and when it was seen
        self._recent: tuple[int, float, float] | None = None  # cache: (arrivals, rate, at)

    def started(self, n: int = 1, *, at: float | None = None) -> None:
        """``n`` rollouts asked for a new database at ``at`` (default: now; the clock's seconds)."""
        when = self.clock() if at is None else at
        with self._lock:
            self._arrivals.extend([when] * n)

    def prepared(self, seconds: float) -> None:
        """One clone took ``seconds`` (feeds the moving average of ``lead_s``)."""
        with self._lock:
            self.prep_s = seconds if self.prep_s == 0 else \
                (1 - self.PREP_WEIGHT) * self.prep_s + self.PREP_WEIGHT * seconds

    def _densest(self, times: list[float]) -> tuple[float, float]:
        """``(rate, at)``: the most arrivals within any ``window_s`` of ``times`` (sorted), per second,
        and the time of the window's last arrival."""
        best, at, lo = 0, 0.0, 0
        for hi, t in enumerate(times):
            while t - times[lo] >= self.window_s:
                lo += 1
            if hi - lo + 1 > best:
                best, at = hi - lo + 1, t
        return best / self.window_s, at

    def _decayed(self, rate: float, at: float, now: float) -> float:
        return float(rate * 0.5 ** (max(0.0, now - at) / self.half_life_s))

    def peak_rate(self) -> float:
        """The peak start rate now, starts per second (the rule's ``peak_rate_per_s``)."""
        with self._lock:
            now = self.clock()
            if self._arrivals and min(self._arrivals) < now - self.horizon_s:
                self._arrivals.sort()
                cut = next(i for i, t in enumerate(self._arrivals) if t >= now - self.horizon_s) \
                    if self._arrivals[-1] >= now - self.horizon_s else len(self._arrivals)
                old, self._arrivals = self._arrivals[:cut], self._arrivals[cut:]
                rate, at = self._densest(old)
                if self._decayed(rate, at, now) > self._decayed(self._peak, self._peak_at, now):
                    self._peak, self._peak_at = rate, at
                self._recent = None
            if self._recent is None or self._recent[0] != len(self._arrivals):
                self._arrivals.sort()
                self._recent = (len(self._arrivals), *self._densest(self._arrivals))
            _, recent, _ = self._recent
            return max(recent, self._decayed(self._peak, self._peak_at, now))

    def target(self) -> int:
        """Clones the pool should hold now: ``clamp(ceil(peak_rate_per_s x lead_s), floor, ceiling)``."""
        rate = self.peak_rate()
        lead = max(self.window_s, self.prep_s)
        return max(self.floor, min(self.ceiling, math.ceil(rate * lead - 1e-9)))
