"""Rollout stores: the ``RolloutStore`` interface, its records, and the stores.

One concept per module: ``_records`` (``StoredRollout``, ``GradeRecord``,
JSON codec, append-only ``Delta``), ``_bounds`` (limits), ``_locks``
(in-process per-key locks), ``_leases`` (cross-process lock owners and
waiting), ``_cache`` (per-process cache of decoded calls), ``_clock``
(injectable time), ``_errors``, ``_base`` (the interface), ``_memory``,
``_sqlite`` (+ ``_sqlite_db`` connections, ``_sqlite_lock``), ``_redis`` (+
``_redis_scripts``), ``_url`` (selection by URL). ``RedisStore`` imports the
``redis`` package only when built.
"""

from ._base import RolloutStore
from ._bounds import DEFAULT_MAX_ROLLOUT_BYTES, DEFAULT_MAX_TOTAL_BYTES, STATS_KEYS, Bounds, check_bounds
from ._clock import Clock, FakeClock, system_clock
from ._errors import RolloutEvictedError, RolloutTooLargeError
from ._locks import KeyedLocks
from ._memory import MemoryStore
from ._records import Delta, GradeRecord, StoredRollout
from ._redis import RedisStore
from ._sqlite import SQLiteStore
from ._url import STORE_URL_ENV, default_store, store_from_url

__all__ = [
    "DEFAULT_MAX_ROLLOUT_BYTES",
    "DEFAULT_MAX_TOTAL_BYTES",
    "STATS_KEYS",
    "STORE_URL_ENV",
    "Bounds",
    "Clock",
    "Delta",
    "FakeClock",
    "GradeRecord",
    "KeyedLocks",
    "MemoryStore",
    "RedisStore",
    "RolloutEvictedError",
    "RolloutStore",
    "RolloutTooLargeError",
    "SQLiteStore",
    "StoredRollout",
    "check_bounds",
    "default_store",
    "store_from_url",
    "system_clock",
]
