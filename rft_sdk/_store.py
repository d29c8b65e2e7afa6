"""Compatibility re-export: the store layer lives in ``rft_sdk._stores`` (one concept per module)."""

from ._stores import (
    STATS_KEYS,
    GradeRecord,
    KeyedLocks,
    MemoryStore,
    RolloutStore,
    RolloutTooLargeError,
    StoredRollout,
    check_bounds,
    default_store,
    store_from_url,
)

__all__ = ["STATS_KEYS", "GradeRecord", "KeyedLocks", "MemoryStore", "RolloutStore", "RolloutTooLargeError",
           "StoredRollout", "check_bounds", "default_store", "store_from_url"]
