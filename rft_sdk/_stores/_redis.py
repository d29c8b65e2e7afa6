"""``RedisStore``: a ``RolloutStore`` in Redis, shared by replicas on many hosts.

Append-only layout and atomic Lua scripts (see ``_redis_scripts``): a call
appends its record to the rollout's list, adds its response to a hash and
rewrites only the small state key, so its cost does not grow with the
rollout. TTL, capacity and byte budgets follow ``MemoryStore`` and are kept
by the scripts (a write sweeps due rollouts once per ``SWEEP_EVERY_S``, at most 100 of a kind
at a time, and checks its own rollout every time). ``lock(trace_id)`` is a Redis
key ``owner|deadline`` set atomically, polled with jittered backoff, and
renewed by its holder; a lock whose lease deadline passed (its holder died or
lost Redis), or whose owner is a dead process of this host, is taken over.
Locks live in Redis's memory only (not in its append-only file: no fsync per
lock; every write under a lock checks it is still held, so one lost with a
restart writes nothing). A tool call (``lock_for_call``) on a rollout this
process wrote last is one round trip: no lock, its save checks the stored copy
is still the one it read (``_redis_scripts.SAVE``'s stamp); else two. The
scripts of concurrent calls travel to Redis together (``_redis_batch``).

Needs one Redis primary (Redis >= 6.2 or a managed equivalent; not Redis
Cluster: the scripts touch keys of several slots). Hosts must keep their
clocks NTP-synchronised: deadlines written by one replica are compared with
another's clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar, cast

import anyio

from .._wire._json import orjson
from .._wire._redact import redact_text, redact_url, url_secrets
from ..exceptions import StoreError
from . import _redis_scripts as lua
from ._base import RolloutStore
from ._bounds import DEFAULT_MAX_ROLLOUT_BYTES, DEFAULT_MAX_TOTAL_BYTES, STATS_KEYS, Bounds
from ._cache import DEFAULT_CACHE_BYTES, CachedCalls, CallCache, hold_item
from ._clock import Clock, system_clock
from ._errors import RolloutEvictedError, RolloutTooLargeError
from ._leases import new_owner, owner_dead, wait_for_lock
from ._locks import KeyedLocks
from ._records import Delta, GradeRecord, StoredRollout, decode_record, decode_response, new_generation
from ._redis_batch import ScriptBatcher

__all__ = ["COMMAND_TIMEOUT_S", "DEFAULT_MAX_CONNECTIONS", "DEFAULT_POOL_TIMEOUT_S", "PERSISTENCE_ENV",
           "PERSISTENCE_MODES", "SOLO_HOLDOFF_S", "SWEEP_EVERY_S", "RedisStore"]

if sys.version_info >= (3, 11):
    from asyncio import timeout as _timeout
else:  # pragma: no cover  (redis-py depends on async-timeout below Python 3.11.3)
    from async_timeout import timeout as _timeout

_T = TypeVar("_T")
logger = logging.getLogger("rft_sdk")
#: Connections one process keeps at most (redis-py URL parameter ``max_connections``). A call awaits one
#: Redis command at a time, so a pool as large as the calls in flight never waits; a smaller one queues.
DEFAULT_MAX_CONNECTIONS = 64
#: Seconds a command waits for a free pooled connection (redis-py URL parameter ``timeout``) before the
#: call answers 503 ``store_unavailable`` (retried): a burst queues instead of failing at once.
DEFAULT_POOL_TIMEOUT_S = 10.0
#: Seconds one Redis command may take once it has a connection (redis-py's own ``socket_timeout``
#: default), kept by this store around the whole command: the pool's connections get no ``socket_timeout``
#: (unless the URL gives one), since redis-py keeps that one with a task per write and a timer per read
#: (~15 µs of CPU per command). Past the bound the call answers 503 ``store_unavailable`` (retried).
COMMAND_TIMEOUT_S = 5.0
#: What ``RedisStore`` does on a Redis without an append-only file: refuse (``require``), log a warning
#: (``warn``) or nothing (``off``); ``rft serve --redis-persistence`` sets this variable.
PERSISTENCE_ENV = "RFT_REDIS_PERSISTENCE"
PERSISTENCE_MODES = ("require", "warn", "off")
#: Seconds a store object makes its tool calls in two round trips (the lock first) after it last saw another
#: writer of its rollouts (another process's write or lock): one round trip reads this process's cached copy
#: and would find it stale when other processes write the same rollouts.
SOLO_HOLDOFF_S = 60.0
#: Seconds of the store's clock between two sweeps of every due rollout by one store object's writes (``SAVE``
#: sweeps when this much has passed since its last sweep, and before any eviction; ``RELEASE`` and ``astats``
#: always). Every write still checks its own rollout's expiry and release; what waits is only the removal of
#: other rollouts already due (unreadable either way: ``LOAD`` checks expiry itself) and the counters of drops
#: that ``stats()`` answers, which a write reads with its sweep: three range reads and a hash read per call fewer.
SWEEP_EVERY_S = 1.0


def _header(*values: Any) -> str | bytes:
    """Script arguments packed as one JSON array of strings (``_redis_scripts``: read with ``cjson.decode``)."""
    return _header_of([v if isinstance(v, str) else repr(v) for v in values])


def _header_of(texts: list[str]) -> str | bytes:
    """``texts`` packed as one JSON array (``_header``, for arguments already text)."""
    if orjson is not None:
        try:
            return bytes(orjson.dumps(texts))
        except TypeError:  # a lone surrogate in a trace_id: the stdlib's text (redis-py encodes it as it can)
            pass
    return json.dumps(texts, ensure_ascii=False, separators=(",", ":"))


@dataclasses.dataclass
class Hold:
    """One ``async with RedisStore.lock(trace_id)`` block: its lock and what it has not written yet."""

    trace_id: str
    key: str  # the Redis key of the lock
    owner: str  # host|pid|token (rft_sdk._stores._leases.new_owner)
    prefetched: tuple[CachedCalls | None, Any] | None = None  # LOCKLOAD's read (the cache entry it named, reply)
    pending: StoredRollout | None = None  # saved in the block, written at its end (or before its next read)
    renewer: asyncio.Task[None] | None = None
    ended: bool = False
    # a call in one round trip (lock_for_call): no lock in Redis; the cached copy it reads, and the stamp
    # ``generation|version|calls`` its save expects to find stored ("" until read)
    fast: CachedCalls | None = None
    expect: str = ""


class RedisStore(RolloutStore):
    """Rollout store in Redis, safe to share between processes and hosts.

    Args:
        url: ``redis://[:password@]host:port/db`` or ``rediss://...`` (TLS),
            as ``redis.asyncio.from_url`` reads it.
        ttl_s, max_rollouts, max_rollout_bytes, max_total_bytes: as for
            ``MemoryStore`` (byte budgets count the JSON stored in Redis).
        lock_timeout_s: seconds ``lock`` waits for a rollout held elsewhere
            before raising ``StoreLockTimeoutError`` (default 600).
        lease_s: seconds a lock stays valid unless renewed (default 30); the
            holder renews it every ``lease_s / 3`` while its call runs, so a
            holder that died on another host is taken over within ``lease_s``,
            a dead process of this host at once. Needs an asyncio event loop.
        prefix: key prefix, so several servers can share one database.
        clock: time source in seconds (default ``time.time``).
        client: an existing ``redis.asyncio.Redis`` (``decode_responses=True``)
            to use instead of ``url``.
        cache_bytes: bound of this process's cache of decoded calls (default
            64 MiB), so a load fetches only the calls appended since; 0 disables it.
        persistence: ``"require"`` (default, or ``$RFT_REDIS_PERSISTENCE``):
            refuse to work on a Redis that keeps no append-only file (``INFO
            persistence`` says ``aof_enabled:0``): a restart of it would lose
            rollouts, tombstones and locks silently (calls run twice, late calls
            accepted, grades on partial trajectories; docs/reliability.md).
            Checked once, at server start (``startup``) or on first use; the
            refusal is a ``StoreError`` (503, and ``rft serve`` does not start).
            ``"warn"``: log a loud warning and go on; ``"off"``: no check (a
            managed Redis whose durability is configured elsewhere).

    Connections: the scripts (every command of the tool path) go over two
    connections of the store object's own (up to ``max_connections`` in a burst), those that
    concurrent calls start while both are busy together as the next batch
    (``_redis_batch``); the
    other commands (grade reads, tombstones, the start-up check) use a
    ``redis.asyncio.BlockingConnectionPool`` of ``max_connections`` (default
    64 per process) where a command waits up to ``timeout`` seconds (default
    10) for a free connection, then raises (503, retried): both are redis-py
    URL parameters, e.g. ``redis://host:6379/0?max_connections=128&timeout=5``,
    and the scripts' connections are made by that pool (same address,
    credentials, TLS and database). A command that has not answered within
    the pool's ``timeout`` plus ``COMMAND_TIMEOUT_S`` (5 s) raises (503,
    retried). Every script is safe to run twice (a batch whose connection
    broke is sent again on a new one, as the pool's ``retry`` says).
    The URL's password never appears in an error, a log line or ``repr``.

    Requires the ``redis`` package (``pip install "rft-sdk[redis]"``).

    Raises:
        ValueError: invalid bounds.
        ImportError: ``redis`` is not installed.
        StoreError: (from the methods) Redis is unreachable or answers an
            error, a record is corrupt, or a lock's lease ended while held.
        StoreLockTimeoutError: ``lock`` waited longer than ``lock_timeout_s``.
        RolloutTooLargeError: (from ``save``) over ``max_rollout_bytes``.
        RolloutEvictedError: (from ``load``) the rollout was evicted in progress.
    """

    multiprocess_safe = True

    def __init__(self, url: str = "redis://127.0.0.1:6379/0", ttl_s: float = 3600.0, max_rollouts: int = 10_000, *,
                 max_rollout_bytes: int = DEFAULT_MAX_ROLLOUT_BYTES, max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
                 lock_timeout_s: float = 600.0, lease_s: float = 30.0, prefix: str = "rft:",
                 clock: Clock = system_clock, client: Any = None, cache_bytes: int = DEFAULT_CACHE_BYTES,
                 persistence: str | None = None) -> None:
        import redis.asyncio

        self.bounds = Bounds(ttl_s, max_rollouts, max_rollout_bytes, max_total_bytes)
        self.ttl_s, self.max_rollouts = self.bounds.ttl_s, self.bounds.max_rollouts
        for name, value in (("lock_timeout_s", lock_timeout_s), ("lease_s", lease_s)):
            if not value > 0:
                raise ValueError(f"{name} must be > 0 seconds, got {value!r}")
        self.lock_timeout_s, self.lease_s = float(lock_timeout_s), float(lease_s)
        self.url, self.prefix, self.clock = url, prefix, clock
        self._label, self._secrets = f"RedisStore {redact_url(url)!r}", url_secrets(url)
        persistence = persistence or os.environ.get(PERSISTENCE_ENV, "").strip().lower() or "require"
        if persistence not in PERSISTENCE_MODES:
            raise ValueError(f"persistence must be one of {PERSISTENCE_MODES}, got {persistence!r}")
        self.persistence, self._checked = persistence, persistence == "off"
        self._check_lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self._redis_errors: tuple[type[BaseException], ...] = (redis.RedisError,)
        if client is None:
            from redis.asyncio.retry import Retry
            from redis.backoff import ExponentialWithJitterBackoff

            # a broken connection (Redis restarted) is retried on a new one: every script is safe to run twice
            retry = Retry(ExponentialWithJitterBackoff(base=0.05, cap=1.0), retries=3)
            pool = redis.asyncio.BlockingConnectionPool.from_url(
                url, decode_responses=True, max_connections=DEFAULT_MAX_CONNECTIONS, timeout=DEFAULT_POOL_TIMEOUT_S,
                retry=retry, socket_timeout=None, socket_connect_timeout=COMMAND_TIMEOUT_S)
            client = redis.asyncio.Redis.from_pool(pool)  # the URL's max_connections / timeout / socket_timeout win
        self.client = client
        # a command's bound: its wait for a pooled connection, then COMMAND_TIMEOUT_S for the answer
        self._command_s = float(getattr(client.connection_pool, "timeout", None) or 0.0) + COMMAND_TIMEOUT_S
        self._scripts = {name: self.client.register_script(getattr(lua, name))
                         for name in ("SAVE", "LOAD", "LOCKLOAD", "RELEASE", "GRADE", "STATS", "LOCK", "UNLOCK",
                                      "RENEW")}
        self._batcher = ScriptBatcher(self.client)  # the scripts of concurrent calls go to Redis together
        self._gc_ms = int((2 * self.ttl_s + 60) * 1000)  # Redis-side garbage collection of unswept keys
        # SAVE's header fields that never change, as text (``_write``; once, not per call)
        self._save_constants = (repr(self.ttl_s), str(self._gc_ms), str(self.max_rollouts),
                                str(self.bounds.max_total_bytes))
        self._local = KeyedLocks()
        # this task's holds of rollout locks (inside ``async with lock``), by trace_id
        self._holds: contextvars.ContextVar[dict[str, Hold] | None] = contextvars.ContextVar(
            f"rft_redis_holds_{id(self)}", default=None)
        self._orphans: dict[str, str] = {}  # trace_id -> owner of a lock this process failed to unlock
        self._counters_reply: list[Any] = ["", 0, 0, 0, 0, 0]  # the last write script's counters (``_keep``)
        self._cache = CallCache(cache_bytes)
        self._writer = new_owner()  # names this store object's writes (the rollout hash's ``w``)
        self._alone_from = float("-inf")  # clock time from which no other writer was seen for SOLO_HOLDOFF_S
        self._swept_at = float("-inf")  # clock time of this object's last write that swept (SWEEP_EVERY_S)

    def __repr__(self) -> str:
        return f"RedisStore({redact_url(self.url)!r}, ttl_s={self.ttl_s}, max_rollouts={self.max_rollouts})"

    async def aclose(self) -> None:
        await self._batcher.aclose()
        await self.client.aclose()

    def _error(self, exc: BaseException, what: str = "") -> StoreError:
        """A ``StoreError`` naming this store by its redacted URL (the password never leaves)."""
        detail = redact_text(f"{type(exc).__name__}: {exc}", self._secrets)
        return StoreError(f"{self._label}: {what}{detail}")

    async def startup(self) -> None:
        """Check the Redis's persistence now (see ``persistence``); called once when the server starts.

        Raises:
            StoreError: ``persistence="require"`` and Redis keeps no append-only
                file, or Redis cannot be reached.
        """
        await self._check_persistence()

    async def _check_persistence(self) -> None:
        """``INFO persistence`` once: refuse / warn on ``aof_enabled:0`` as ``persistence`` says (the first
        calls of a burst wait for one check, not one each)."""
        if self._checked:
            return
        loop = asyncio.get_running_loop()
        if self._check_lock is None or self._check_lock[0] is not loop:
            self._check_lock = (loop, asyncio.Lock())
        async with self._check_lock[1]:
            if not self._checked:  # (a failed check is tried again by the next call)
                await self._check_persistence_now()

    async def _check_persistence_now(self) -> None:
        try:
            info = await self.client.info("persistence")
        except self._redis_errors as exc:
            raise self._error(exc) from exc
        fsync = None
        if str(info.get("aof_enabled", "0")) == "1":
            with contextlib.suppress(*self._redis_errors):  # CONFIG is disabled on some managed Redis
                fsync = (await self.client.config_get("appendfsync")).get("appendfsync")
            self._checked = True
            if fsync not in (None, "always"):
                logger.warning("%s: appendonly yes with appendfsync %s: a crash of the Redis host (not a clean "
                               "restart) may lose the last second of writes; appendfsync always loses nothing "
                               "(docs/reliability.md)", self._label, fsync)
            return
        problem = (f"{self._label} keeps no append-only file (INFO persistence: aof_enabled:0): a restart of "
                   "Redis would silently lose rollouts, grade tombstones and locks (calls run twice, late calls "
                   "accepted, grades on partial trajectories). Run Redis with --appendonly yes --appendfsync "
                   "always (docs/reliability.md), or accept the risk with RedisStore(persistence='warn'), "
                   f"?persistence=warn in the store URL, or rft serve --redis-persistence warn")
        if self.persistence == "require":
            raise StoreError(problem)
        logger.warning("WARNING: %s", problem)
        self._checked = True

    async def _run(self, name: str, args: list[Any], keys: list[str] | None = None) -> Any:
        if not self._checked:
            await self._check_persistence()
        return await self._command(self._batcher.run, self._scripts[name], keys or [], args)

    async def _command(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``await method(*args, **kwargs)`` (a redis-py command) within the command bound (``COMMAND_TIMEOUT_S``
        after the pool's wait).

        Raises:
            StoreError: Redis answered an error, could not be reached, or did not answer in time.
        """
        try:
            async with _timeout(self._command_s):
                return await method(*args, **kwargs)
        except self._redis_errors as exc:
            raise self._error(exc) from exc
        except asyncio.TimeoutError as exc:
            raise self._error(exc, f"no answer within {self._command_s:g} s: ") from exc

    def _keep(self, reply: list[Any]) -> str:
        """Keep the counters a write script answered (decoded when ``stats`` asks); return its status. A ``SAVE``
        that did not sweep answers -1 for the counters of drops (not read): the last ones read are kept."""
        if len(reply) > 5 and reply[2] == -1:
            kept = self._counters_reply
            reply = [reply[0], reply[1], kept[2], kept[3], kept[4], reply[5]]
        self._counters_reply = reply
        return str(reply[0])

    # -- locks: two round trips per tool call (LOCKLOAD at enter, SAVE with release at exit) ----------
    @contextlib.asynccontextmanager
    async def lock(self, trace_id: str) -> AsyncIterator[None]:
        """Hold ``trace_id``'s lock (this process's tasks queue on a local lock first, so one Redis lock per
        rollout per process is ever asked for).

        Taken with ``LOCKLOAD``, which also reads the rollout and its tombstone: the first ``load`` or
        ``load_for_call`` of ``trace_id`` inside the block answers from that read. A ``save`` inside the
        block is written when the block ends, together with the release (``SAVE`` with the lock's owner:
        written only while the lock is still held); anything else on ``trace_id`` inside the block writes it
        first. The lease is renewed every ``lease_s / 3`` while the block runs.

        Raises:
            StoreLockTimeoutError: held elsewhere longer than ``lock_timeout_s``.
            StoreError: Redis failed, or the lease ended and another holder took the lock over while this
                block ran (a pending save is then not written: the call is not recorded).
        """
        async with self._local.hold(trace_id), self._redis_lock(trace_id):
            yield

    @contextlib.asynccontextmanager
    async def lock_for_call(self, trace_id: str) -> AsyncIterator[None]:
        """``lock`` for one tool call (``RolloutStore.lock_for_call``): in one round trip when this process
        wrote ``trace_id`` last and saw no other writer for ``SOLO_HOLDOFF_S`` seconds.

        Then no lock is taken in Redis: ``load_for_call`` answers from this process's cached copy (no I/O)
        and ``save`` writes at once with ``SAVE`` given the copy's stamp, which writes only if the stored copy
        is still that one, live, not graded and not locked by another process. Otherwise as ``lock``.

        Raises:
            StoreError: (from ``save``) the stored copy changed since (another process wrote, locked, graded
                or dropped the rollout): nothing was written, the call answers 503 and its retry takes the lock.
            As ``lock`` otherwise.
        """
        async with self._local.hold(trace_id):
            cached = self._cache.get(trace_id)
            if (cached is None or not cached.stamp or cached.state_json is None or cached.item_json is None
                    or not cached.intact() or self.clock() < self._alone_from
                    or self.clock() >= cached.expires_at - 1.0):
                async with self._redis_lock(trace_id):
                    yield
                return
            hold = Hold(trace_id, f"{self.prefix}l:{trace_id}", self._writer, fast=cached)
            holds = self._holds.get()
            token = self._holds.set({**holds, trace_id: hold} if holds else {trace_id: hold})
            try:
                yield
            finally:
                self._holds.reset(token)

    def _other_writer(self) -> None:
        """Another process writes this store's rollouts: tool calls take the lock for ``SOLO_HOLDOFF_S``."""
        self._alone_from = self.clock() + SOLO_HOLDOFF_S

    @contextlib.asynccontextmanager
    async def _redis_lock(self, trace_id: str) -> AsyncIterator[None]:
        """The Redis half of ``lock`` (the caller holds the local lock)."""
        hold = Hold(trace_id, f"{self.prefix}l:{trace_id}", new_owner())
        await self._acquire(hold)
        holds = self._holds.get()
        token = self._holds.set({**holds, trace_id: hold} if holds else {trace_id: hold})
        timer = asyncio.get_running_loop().call_later(self.lease_s / 3, self._start_renewing, hold)
        try:
            yield
        finally:
            self._holds.reset(token)
            timer.cancel()
            with anyio.CancelScope(shield=True):
                await self._end(hold)

    def _start_renewing(self, hold: Hold) -> None:
        """(Timer callback) start renewing ``hold``'s lease: its block has run for ``lease_s / 3``."""
        if not hold.ended:
            hold.renewer = asyncio.get_running_loop().create_task(self._renew(hold.key, hold.owner))

    async def _end(self, hold: Hold) -> None:
        """At the end of a lock's block: stop renewing, write the pending save and release the lock (one
        ``SAVE``), or only release it (``UNLOCK``).

        Raises:
            StoreError: Redis failed (this process takes the lock over at its next ask), or the lock was
                taken over while held (nothing pending was written)."""
        hold.ended = True
        if hold.renewer is not None:
            hold.renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await hold.renewer
        try:
            if hold.pending is not None:
                rollout, hold.pending = hold.pending, None
                kept = await self._write(rollout, Delta.of(rollout, binary=True), hold, release=True)
            else:
                kept = bool(await self._run("UNLOCK", [hold.owner], [hold.key]))
        except StoreError:  # Redis unreachable: this process takes its own lock over next time
            self._orphans[hold.trace_id] = hold.owner  # (not after lease_s), under the local lock still held
            raise
        if not kept:
            raise StoreError(f"{self._label}: the lock of rollout {hold.trace_id!r} was taken over after its lease "
                             f"of {self.lease_s:g} s ended while this call still held it (raise lease_s); "
                             "what it had not written yet was not written")

    async def _renew(self, key: str, owner: str) -> None:
        """Extend the lease every ``lease_s / 3`` seconds while the lock is held (stops once lost)."""
        gc_ms = int((self.lease_s + 60) * 1000)
        while True:
            try:
                if not await self._run("RENEW", [owner, self.clock(), self.lease_s, gc_ms], [key]):
                    return
            except StoreError:  # Redis unreachable for now: try again next period
                pass
            await asyncio.sleep(self.lease_s / 3)

    async def _acquire(self, hold: Hold) -> None:
        """Take ``hold``'s lock with ``LOCKLOAD`` (keeping the read in ``hold.prefetched``), polling with
        jittered backoff while another live owner holds it; a dead process's lock, or this process's own
        left by a failed release, is taken over at once."""
        gc_ms = int((self.lease_s + 60) * 1000)

        async def attempt() -> bool:
            args, read = self._load_args(hold.trace_id)
            reply = await self._run("LOCKLOAD", [_header(hold.owner, self.clock(), self.lease_s, gc_ms, "", *args)],
                                    [hold.key])
            if reply[0] == "locked":
                holder = str(reply[1]).rpartition("|")[0]
                if holder.rpartition("|")[0] != self._writer.rpartition("|")[0]:  # another process's
                    self._other_writer()
                if not (owner_dead(holder) or self._orphans.get(hold.trace_id) == holder):
                    return False
                self._orphans.pop(hold.trace_id, None)  # a dead process, or ours left by a failed UNLOCK
                reply = await self._run("LOCKLOAD", [_header(hold.owner, self.clock(), self.lease_s, gc_ms,
                                                             reply[1], *args)], [hold.key])
                if reply[0] == "locked":
                    return False
            hold.prefetched = (read, reply)
            return True

        if not await attempt():  # free most of the time: the polling machinery only when it is held
            await wait_for_lock(attempt, self.lock_timeout_s, f"RedisStore: rollout {hold.trace_id!r}")

    def _held(self, trace_id: str) -> Hold | None:
        """This task's hold of ``trace_id``'s lock (inside its ``async with lock``), else ``None``."""
        holds = self._holds.get()
        return holds.get(trace_id) if holds else None

    async def _flush(self, trace_id: str) -> None:
        """Write the save pending in this task's hold of ``trace_id`` (before anything else touches it)."""
        hold = self._held(trace_id)
        if hold is not None:
            hold.prefetched = None
            if hold.pending is not None:
                rollout, hold.pending = hold.pending, None
                if not await self._write(rollout, Delta.of(rollout, binary=True), hold, release=False):
                    raise StoreError(f"{self._label}: the lock of rollout {trace_id!r} was taken over after its "
                                     f"lease of {self.lease_s:g} s ended (raise lease_s); nothing was written")

    # -- rollouts ----------------------------------------------------------------------
    async def load(self, trace_id: str) -> StoredRollout | None:
        return (await self._load(trace_id))[0]

    async def load_for_call(self, trace_id: str) -> tuple[StoredRollout | None, bool]:
        """The rollout and whether it was graded, in one script (inside ``lock``: no round trip at all, the
        lock's own ``LOCKLOAD`` read them)."""
        rollout, tombstone = await self._load(trace_id)
        return rollout, self._tombstone_digest(tombstone) is not None

    def _load_args(self, trace_id: str) -> tuple[list[Any], CachedCalls | None]:
        """``LOAD``'s ARGV for ``trace_id`` given this process's cache, and the cache entry they name."""
        cached = self._cache.get(trace_id)
        if cached is not None and not cached.intact():  # a call changed its shared lists and did not save
            self._cache.drop(trace_id)
            cached = None
        if cached is None:
            return [self.prefix, trace_id, self.clock(), "", 0, 0, ""], None
        cached = cached.snapshot()  # (a one-round-trip call of this rollout may append while the read awaits)
        return [self.prefix, trace_id, self.clock(), cached.generation, len(cached.records), len(cached.responses),
                cached.item_version if cached.item_json is not None else ""], cached

    async def _load(self, trace_id: str) -> tuple[StoredRollout | None, str]:
        """``(rollout or None, raw tombstone value or "")``; see ``_redis_scripts.LOAD``."""
        hold = self._held(trace_id)
        if hold is not None and hold.fast is not None and not hold.expect:
            return self._from_cache(hold, hold.fast), ""
        if hold is not None and hold.prefetched is not None and hold.pending is None:
            (cached, reply), hold.prefetched = hold.prefetched, None
        else:
            await self._flush(trace_id)
            args, cached = self._load_args(trace_id)
            reply = await self._run("LOAD", args)
        status, tombstone = reply[0], str(reply[1])
        if status != "ok":
            self._cache.drop(trace_id)
            if status == "evicted":
                raise RolloutEvictedError(trace_id, "RedisStore")
            return None, tombstone
        meta, records, responses, first, _ = reply[2:]
        generation, item_json, state, created, calls_bytes, item_version, version, writer, expires, count = meta
        if writer and writer != self._writer:
            self._other_writer()
        old = cached if cached is not None and int(first) > 0 else None

        def build() -> StoredRollout:
            return StoredRollout(
                trace_id=trace_id, state_json=state,
                trajectory=[*(old.records if old else ()), *(decode_record(r) for r in records)],
                responses={**(old.responses if old else {}), **dict(decode_response(r) for r in responses)},
                created_at=float(created))

        rollout = self._decode(build, trace_id)
        if item_json == "" and cached is not None and cached.item_json is not None:  # the version we hold
            rollout.set_item_json(cached.item_json)
        else:
            hold_item(rollout, item_json, cached, self._decode)
        Delta.loaded(rollout, generation, int(calls_bytes), rollout.item_json)
        self._cache.put(trace_id, generation, rollout.trajectory, rollout.responses, int(calls_bytes),
                        rollout.held_item_json, item_version, state_json=state, created_at=rollout.created_at,
                        expires_at=float(expires), stamp=f"{generation}|{version}|{count}" if version else "")
        return rollout, tombstone

    def _from_cache(self, hold: Hold, cached: CachedCalls) -> StoredRollout:
        """The rollout as this process last wrote or read it (a one-round-trip call's read: no I/O, and O(1):
        the rollout gets the cached list and dict themselves, which its save hands back to the cache; one
        changed and not saved is no longer ``intact``, so no later call or load uses it)."""
        rollout = StoredRollout(trace_id=hold.trace_id, state_json=cast("str", cached.state_json),
                                trajectory=cached.records, responses=cached.responses,
                                created_at=cached.created_at)
        item_json = cast("bytes", cached.item_json)
        rollout.set_item_json(item_json)  # checked when it was first read or written
        Delta.loaded(rollout, cached.generation, cached.nbytes, item_json)
        hold.expect = cached.stamp
        return rollout

    async def save(self, rollout: StoredRollout) -> None:
        """Write ``rollout``'s new calls, state and item (see ``RolloutStore.save``); inside ``lock`` the write
        happens when the block ends, with the release (one round trip), or before the block's next read; inside
        a one-round-trip ``lock_for_call``, now, onto the copy it read.

        Raises:
            RolloutTooLargeError: over ``max_rollout_bytes`` (checked now; nothing is written).
            StoreError: Redis failed, or (in a one-round-trip ``lock_for_call``) the stored copy changed since
                it was read (nothing written).
        """
        delta = Delta.of(rollout, binary=True)
        if delta.nbytes > self.bounds.max_rollout_bytes:
            raise RolloutTooLargeError(rollout.trace_id, delta.nbytes, self.bounds.max_rollout_bytes)
        hold = self._held(rollout.trace_id)
        if hold is not None and hold.fast is not None:  # a one-round-trip call: written now, if nothing changed
            try:
                written = await self._write(rollout, delta, hold, release=False)
            except StoreError:  # Redis unreachable: the write may have landed, the cached stamp is unsure
                self._cache.drop(rollout.trace_id)
                raise
            if not written:
                self._cache.drop(rollout.trace_id)
                self._other_writer()
                raise StoreError(f"{self._label}: rollout {rollout.trace_id!r} changed in Redis since this process "
                                 "last wrote it (another process wrote, locked, graded or dropped it): nothing was "
                                 "written; retry the call")
            return
        if hold is not None:
            await self._flush(rollout.trace_id)
            hold.pending = rollout
            return
        await self._write(rollout, delta, None, release=False)

    async def _write(self, rollout: StoredRollout, delta: Delta, hold: Hold | None, *, release: bool) -> bool:
        """Run ``SAVE`` for ``delta`` (again in full when the stored copy is another generation); with a
        ``hold``, only while its lock is still held, and ``release`` it after; with a one-round-trip ``hold``
        (``fast``), only onto the stored copy of its stamp. Returns ``False`` when the lock was lost or the
        stamp's copy is no longer the stored one (nothing written).

        Raises:
            RolloutTooLargeError: the full rewrite is over ``max_rollout_bytes``.
        """
        for _ in range(2):
            if delta.nbytes > self.bounds.max_rollout_bytes:
                raise RolloutTooLargeError(rollout.trace_id, delta.nbytes, self.bounds.max_rollout_bytes)
            written_item = delta.rewrite or delta.item_changed
            version = new_generation() if written_item else ""
            fast = hold is not None and hold.fast is not None
            now = self.clock()
            # the copy's expiry is over a second ahead: SAVE need not read it (its stamp vouches for it)
            ahead = hold is not None and hold.fast is not None and now < hold.fast.expires_at - 1.0
            sweep = not self._swept_at <= now < self._swept_at + SWEEP_EVERY_S  # (a clock that went back: sweep)
            if sweep:
                self._swept_at = now
            ttl, gc_ms, max_rollouts, max_total_bytes = self._save_constants
            header = _header_of([
                self.prefix, rollout.trace_id, repr(now), ttl, gc_ms, max_rollouts, max_total_bytes, delta.generation,
                "1" if delta.rewrite else "0", "", "", repr(rollout.created_at), str(len(rollout.trajectory)),
                str(delta.calls_bytes), str(delta.nbytes), version, hold.owner if hold is not None and not fast else "",
                "1" if release else "0", str(len(delta.records)), hold.expect if hold is not None and fast else "",
                self._writer, "1" if sweep else "0", "1" if ahead else "0"])
            args: list[Any] = [header, delta.item_json if written_item else "", rollout.state_json, *delta.records]
            args += [text for _, text in delta.responses]
            reply = await self._run("SAVE", args)
            status = self._keep(reply)
            if status in ("LOST", "STALE"):
                return False
            if status == "OK":
                delta.committed(rollout)
                if not written_item:  # the stored item is the one loaded: keep the version this process knows
                    cached = self._cache.get(rollout.trace_id)
                    if cached is not None and cached.item_json is not None and cached.item_json == delta.item_json:
                        version = cached.item_version
                stamp = f"{delta.generation}|{reply[6]}|{len(rollout.trajectory)}"
                self._cache.put(rollout.trace_id, delta.generation, rollout.trajectory, rollout.responses,
                                delta.calls_bytes, delta.item_json, version, state_json=rollout.state_json,
                                created_at=rollout.created_at, expires_at=now + self.ttl_s, stamp=stamp,
                                share=fast)  # (a one-round-trip call's lists came from the cache: back to it)
                if hold is not None and fast:
                    hold.expect = stamp  # a second save in the block writes onto this one
                return True
            if fast:  # REWRITE: the stored copy is another generation
                return False
            delta = Delta.of(rollout, full=True, binary=True)  # the stored copy is gone or another one: write it all
        raise StoreError(f"{self._label}: rollout {rollout.trace_id!r} could not be written")  # pragma: no cover

    async def release(self, trace_id: str, after_s: float = 0.0) -> None:
        await self._flush(trace_id)
        self._cache.drop(trace_id)  # its next call (a late one) reads Redis, under the lock
        self._keep(await self._run("RELEASE", [self.prefix, trace_id, self.clock(), after_s]))

    # -- grades and tombstones ---------------------------------------------------------
    async def save_grade(self, record: GradeRecord) -> None:
        await self._flush(record.trace_id)
        await self._run("GRADE", [self.prefix, record.trace_id, self.clock(), self.ttl_s, self._gc_ms,
                                  self.max_rollouts, record.grader, record.to_json()])

    async def load_grades(self, trace_id: str) -> dict[str, GradeRecord]:
        deadline = await self._command(self.client.zscore, f"{self.prefix}gidx", trace_id)
        if deadline is None or float(deadline) <= self.clock():
            return {}
        flat = cast("dict[str, str]", await self._command(self.client.hgetall, f"{self.prefix}g:{trace_id}"))
        return self._decode(lambda: {name: GradeRecord.from_json(text) for name, text in flat.items()}, trace_id)

    async def mark_graded(self, trace_id: str, digest: str, retention_s: float) -> None:
        await self._flush(trace_id)
        self._cache.drop(trace_id)  # a late call reads the tombstone, under the lock
        deadline = self.clock() + retention_s
        await self._command(self.client.set, f"{self.prefix}t:{trace_id}", f"{digest}|{deadline!r}",
                            px=max(1, int((retention_s + 60) * 1000)))

    async def graded_digest(self, trace_id: str) -> str | None:
        value = cast("str | None", await self._command(self.client.get, f"{self.prefix}t:{trace_id}"))
        return self._tombstone_digest(value or "")

    def _tombstone_digest(self, value: str) -> str | None:
        """The digest of a tombstone value ``digest|deadline`` while its deadline lasts, else ``None``."""
        if not value:
            return None
        digest, _, deadline = value.rpartition("|")
        return digest if float(deadline) > self.clock() else None

    # -- counters ----------------------------------------------------------------------
    def stats(self) -> dict[str, int]:
        """Counters over all replicas (no I/O): ``rollouts`` as of this process's last write; ``evicted``,
        ``expired`` and ``released`` as of its last write that swept (one per ``SWEEP_EVERY_S`` of its clock)
        or evicted, or its last ``release`` / ``astats``."""
        return dict(zip(STATS_KEYS, (int(v) for v in self._counters_reply[1:5])))

    async def astats(self) -> dict[str, int]:
        """Counters read afresh (due rollouts swept first), plus ``bytes`` held by live rollouts."""
        self._keep(await self._run("STATS", [self.prefix, self.clock()]))
        return {**self.stats(), "bytes": int(self._counters_reply[5])}

    def _decode(self, build: Callable[[], _T], trace_id: str) -> _T:
        try:
            return build()
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise self._error(exc, f"corrupt record for {trace_id!r}: ") from exc
