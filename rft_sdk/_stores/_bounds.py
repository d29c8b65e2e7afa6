"""Validated limits shared by every store: TTL, capacity in rollouts, and byte budgets."""

from __future__ import annotations

import dataclasses

__all__ = ["DEFAULT_MAX_ROLLOUT_BYTES", "DEFAULT_MAX_TOTAL_BYTES", "STATS_KEYS", "Bounds", "check_bounds"]

#: Default per-rollout budget: 16 MiB of JSON (records, responses, state, item).
DEFAULT_MAX_ROLLOUT_BYTES = 16 * 1024 * 1024
#: Default budget of all rollouts of one store: 512 MiB of JSON.
DEFAULT_MAX_TOTAL_BYTES = 512 * 1024 * 1024

#: Keys of ``stats()``: live rollouts, rollouts dropped by capacity or byte
#: budget (``evicted``), TTL (``expired``) and after grading (``released``),
#: ``astats()`` adds ``bytes``, the bytes held by live rollouts.
STATS_KEYS = ("rollouts", "evicted", "expired", "released")


def check_bounds(ttl_s: float, max_rollouts: int) -> tuple[float, int]:
    """Validate a store's TTL (seconds) and capacity (rollouts); return them as ``(float, int)``.

    Raises:
        ValueError: ``ttl_s <= 0`` (or NaN) or ``max_rollouts < 1``.
    """
    if not ttl_s > 0:
        raise ValueError(f"ttl_s must be > 0 seconds, got {ttl_s!r}")
    if int(max_rollouts) < 1:
        raise ValueError(f"max_rollouts must be >= 1, got {max_rollouts!r}")
    return float(ttl_s), int(max_rollouts)


@dataclasses.dataclass(frozen=True)
class Bounds:
    """A store's limits.

    Attributes:
        ttl_s: seconds after its last save at which a rollout expires (grade
            records use the same TTL).
        max_rollouts: rollouts kept at most; beyond it the least recently
            saved is evicted (grade records are bounded the same way).
        max_rollout_bytes: bytes one rollout may hold (JSON of its records,
            responses, state and item); a save beyond it raises
            ``RolloutTooLargeError``.
        max_total_bytes: bytes all rollouts may hold together; beyond it the
            least recently saved rollouts are evicted.

    Raises:
        ValueError: a limit is not positive, or ``max_rollout_bytes > max_total_bytes``.
    """

    ttl_s: float = 3600.0
    max_rollouts: int = 10_000
    max_rollout_bytes: int = DEFAULT_MAX_ROLLOUT_BYTES
    max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES

    def __post_init__(self) -> None:
        ttl_s, max_rollouts = check_bounds(self.ttl_s, self.max_rollouts)
        object.__setattr__(self, "ttl_s", ttl_s)
        object.__setattr__(self, "max_rollouts", max_rollouts)
        for name in ("max_rollout_bytes", "max_total_bytes"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1 byte, got {getattr(self, name)!r}")
            object.__setattr__(self, name, int(getattr(self, name)))
        if self.max_rollout_bytes > self.max_total_bytes:
            raise ValueError(f"max_rollout_bytes ({self.max_rollout_bytes}) must not exceed max_total_bytes "
                             f"({self.max_total_bytes})")
