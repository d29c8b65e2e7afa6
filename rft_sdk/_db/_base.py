"""``RolloutDatabase``: the lifecycle every per-rollout database backend shares.

One database per ``trace_id``, cloned from a template the user declares:

* **created lazily** on the rollout's first tool call (:meth:`open_call`), from
  the warm pool when one is ready, else by a cold clone;
* **bounded**: at most ``max_live`` per-rollout databases exist at once across
  every process sharing the backend; a new rollout over the bound waits up to
  ``admission_timeout_s`` for one to free, then gets a retryable 503
  ``database_limit`` (with ``Retry-After``), nothing recorded, nothing lost;
  a database server or file that does not answer (:attr:`RolloutDatabase.unavailable_errors`)
  is a retryable 503 ``database_unavailable`` too, never an unhandled 500;
* **dropped** when the rollout is graded (:meth:`release`) or, when it is left
  unused for ``ttl_s`` seconds (a replica killed mid-rollout, a grade that
  never came), by the sweep that every process runs every
  ``sweep_interval_s`` seconds in a maintenance thread.

The name of a rollout's database is a function of its ``trace_id`` (a SHA-256
prefix), so any replica finds it without a lookup, and the backend's own
catalogue (the registry table next to the databases, or the folder of files)
is the one record of what exists: a crash between two steps never leaves an
untracked database behind.

Backends implement the blocking primitives (``_prepare``, ``_ensure``,
``_connect``, ...); this class runs them in worker threads and owns the
per-call transaction (:class:`CallScope`).
"""

from __future__ import annotations

import abc
import functools
import hashlib
import json
import logging
import re
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, NoReturn, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread

from .._wire._endpoint import EndpointError
from ..exceptions import RFTError
from ._diff import Changes, Snapshot, TableInfo, changes_between, read_snapshot
from ._metrics import DatabaseMetrics
from ._pool import PoolSizer

__all__ = ["CALLS_TABLE", "CallScope", "DatabaseLimitError", "RolloutDatabase", "ToolRunner"]

logger = logging.getLogger("rft_sdk")
T = TypeVar("T")
_NAME_RE = re.compile(r"[a-z][a-z0-9_]{0,19}")

#: The SDK's table in every clone: one row per committed tool call, written in the call's own
#: transaction, so a call_id retried after a crash between the commit and the store's save is
#: answered from here instead of running its SQL again.
CALLS_TABLE = "_rft_calls"
CALLS_DDL = f"CREATE TABLE IF NOT EXISTS {CALLS_TABLE} (call_id TEXT PRIMARY KEY, output TEXT NOT NULL, record TEXT NOT NULL)"

#: ``(name, arguments, rollout_db_connection, item, state) -> output``: how gold actions are replayed
#: (the server passes one that runs its registered tools through the normal validation path).
ToolRunner = Callable[[str, dict[str, Any], Any, dict[str, Any], dict[str, Any]], Awaitable[str]]


#: Default byte budget of one rollout's database (``max_db_bytes``): its whole size, template included.
DEFAULT_MAX_DB_BYTES = 256 * 2**20


class DatabaseLimitError(RFTError):
    """``max_live`` per-rollout databases exist; a new rollout must wait for one to be released."""


def name_like(name: str) -> str:
    """A database name that follows the rule (:data:`_NAME_RE`) and resembles ``name``: lower-cased, every other
    character made ``_``, ``db_`` put before a first character that is not a letter (``"Auction-3F9A"`` ->
    ``"auction_3f9a"``); one longer than 20 characters keeps its first 13 and ends with ``_`` and 6 hex digits of
    the whole name's SHA-256, so two long names that share a start get two names (``"window_cleaning_twin_a"`` and
    ``"window_cleaning_twin_c"``: each database name is a folder of its own)."""
    fixed = re.sub(r"[^a-z0-9_]", "_", name.lower())
    if not fixed[:1].isalpha():
        fixed = "db_" + fixed
    return fixed if len(fixed) <= 20 else f"{fixed[:13]}_{_digest(name)[:6]}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CallScope:
    """One tool call's hold on its rollout's database: the connection (``rollout.db``) in a
    transaction the SDK commits when the tool returns and rolls back when it raises.

    Attributes:
        connection: the driver connection handed to the tool.
        replay: ``(output, record fields)`` when this ``call_id`` was committed before
            (the store lost the answer in a crash): answer it, do not run the tool.
    """

    def __init__(self, owner: RolloutDatabase, db_id: str, connection: Any, is_async: bool,
                 replay: tuple[str, dict[str, Any]] | None, slot: anyio.Semaphore | None = None) -> None:
        self.owner, self.db_id, self.connection, self.is_async = owner, db_id, connection, is_async
        self.replay = replay
        self._open = True
        self._slot = slot  # the process's connection slot this call holds (PostgreSQL), released by close()

    async def stage(self, call_id: str, output: str, record: Mapping[str, Any]) -> None:
        """Record ``call_id`` in the call's open transaction and check the database's byte budget
        (``max_db_bytes``); nothing is committed yet (:meth:`commit` does, once the call's answer is
        recorded in the store: a call the store refuses is rolled back here, never committed).

        Raises:
            EndpointError: 413 ``database_too_large`` (the call's writes take the rollout's database past
                ``max_db_bytes``: rolled back, as the store answers ``rollout_too_large``); 400
                ``tool_error`` when the database refused the statements; 503 ``database_unavailable``.
        """
        params = (call_id, output, json.dumps(record, separators=(",", ":")))
        insert, size_sql = self.owner.calls_insert_sql, self.owner.size_sql
        try:
            if self.is_async:
                await self.connection.execute(insert, params)
                size = (await (await self.connection.execute(size_sql)).fetchone())[0] * self.owner.size_unit
            else:
                size = await anyio.to_thread.run_sync(self._stage_sync, insert, params, size_sql)
        except Exception as exc:
            await self._failed(exc)
        if int(size) > self.owner.max_db_bytes:
            await self.rollback()
            try:  # the refused writes' space back (PostgreSQL keeps a rolled-back insert's pages until VACUUM)
                await anyio.to_thread.run_sync(self.owner.reclaim, self.db_id)
            except self.owner.unavailable_errors as exc:
                logger.warning("reclaiming the space of %s after a refused call failed: %s", self.db_id, exc)
            raise self._too_large(int(size))

    def _too_large(self, size: int) -> EndpointError:
        self.owner.metrics.event("database_too_large")
        return EndpointError(413, "database_too_large", f"this call's writes would take the rollout's database to "
                             f"{size} bytes, over its budget of {self.owner.max_db_bytes} bytes "
                             "(max_db_bytes): refused and rolled back", counter="rollouts_too_large")

    def _stage_sync(self, insert: str, params: tuple[str, str, str], size_sql: str) -> int:
        return self.owner.stage_and_measure(self.connection, params)

    def stage_sync(self, call_id: str, output: str, record: Mapping[str, Any]) -> EndpointError | None:
        """:meth:`stage` for a sync connection, in the worker thread that holds it (``rft_sdk._db._call``):
        ``None`` when staged, else the refusal :meth:`stage` raises (413 ``database_too_large``, 400
        ``tool_error``, 503 ``database_unavailable``), returned after the rollback, never raised."""
        params = (call_id, output, json.dumps(record, separators=(",", ":")))
        try:
            size = self._stage_sync(self.owner.calls_insert_sql, params, self.owner.size_sql)
        except Exception as exc:
            self.rollback_sync()
            error = self._failure(exc)
            error.__cause__ = exc
            return error
        if size <= self.owner.max_db_bytes:
            return None
        self.rollback_sync()
        try:
            self.owner.reclaim(self.db_id)
        except self.owner.unavailable_errors as exc:
            logger.warning("reclaiming the space of %s after a refused call failed: %s", self.db_id, exc)
        return self._too_large(size)

    @property
    def open(self) -> bool:
        """Whether the call's transaction is still open (neither committed nor rolled back)."""
        return self._open

    async def commit(self) -> None:
        """Commit the call's transaction (after :meth:`stage`); a sync connection is handed back with it
        (:meth:`close` then has nothing left to do).

        Raises:
            EndpointError: 400 ``tool_error`` when the database refused the commit (e.g. the tool left the
                transaction failed), 503 ``database_unavailable`` when it stopped answering: nothing was kept.
        """
        try:
            if self.is_async:
                await self.connection.rft_end(True)
            else:  # committed and handed back on the loop where that never waits, else in one worker-thread hop
                if not self.owner.commit_nowait(self.db_id, self.connection):
                    await anyio.to_thread.run_sync(self._commit_sync)
                self._open, self.connection = False, None
                return
        except Exception as exc:
            await self._failed(exc)
        self._open = False

    def _commit_sync(self) -> None:
        self.connection.rft_end(True)
        self.owner.checkin(self.db_id, self.connection)

    async def _failed(self, exc: Exception) -> NoReturn:
        await self.rollback()
        raise self._failure(exc) from exc

    def _failure(self, exc: Exception) -> EndpointError:
        """The answer to a driver error while staging or committing: 503 ``database_unavailable`` when the
        database does not answer, else 400 ``tool_error``."""
        if isinstance(exc, self.owner.unavailable_errors) and not self.owner.is_statement_error(exc):
            return self.owner.unavailable(exc)
        self.owner.metrics.event("commit_failed")
        return EndpointError(400, "tool_error", f"the tool's database transaction failed to commit: "
                             f"{type(exc).__name__}: {exc}")

    async def rollback(self) -> None:
        """Undo the call's changes (idempotent; errors are logged, the connection is discarded)."""
        if not self._open:
            return
        self._open = False
        try:
            if self.is_async:
                await self.connection.rft_end(False)
            else:
                await anyio.to_thread.run_sync(self.connection.rft_end, False)
        except Exception:
            logger.warning("rollback of %s failed; connection discarded", self.db_id, exc_info=True)
            self.connection = None

    def rollback_sync(self) -> None:
        """:meth:`rollback` of a sync connection, in the worker thread that holds it."""
        if not self._open:
            return
        self._open = False
        try:
            self.connection.rft_end(False)
        except Exception:
            logger.warning("rollback of %s failed; connection discarded", self.db_id, exc_info=True)
            self.connection = None

    def close_sync(self) -> None:
        """:meth:`close` of a sync connection without a connection slot, in the worker thread that holds it."""
        self.rollback_sync()
        conn, self.connection = self.connection, None
        if conn is not None:
            self.owner.checkin(self.db_id, conn)

    async def close(self) -> None:
        """Roll back anything still open, hand the connection back and free the call's connection slot."""
        try:
            await self.rollback()
            conn, self.connection = self.connection, None
            if conn is None:
                return
            if self.is_async:
                await self.owner.acheckin(self.db_id, conn)
            else:
                await anyio.to_thread.run_sync(self.owner.checkin, self.db_id, conn)
        finally:
            slot, self._slot = self._slot, None
            if slot is not None:
                self.owner._release_slot(slot)


class RolloutDatabase(abc.ABC):
    """Base of :class:`SQLiteDatabase` and :class:`PostgresDatabase` (see the module docstring).

    Args:
        name: names this template's databases (a prefix: lower-case letters,
            digits, ``_``; at most 20 characters). Two servers with different
            templates on one backend need different names.
        max_live: most per-rollout databases alive at once (all processes together).
        ttl_s: seconds a rollout's database lives after its last tool call; keep
            it at least the rollout store's TTL.
        pool_size: the fewest clones kept ready so a rollout's first call does not pay the clone
            (the floor of the warm pool).
        max_pool: the most clones the warm pool may hold (its ceiling; default
            ``max(pool_size, min(max_live, 256))``). Between the two, the pool's size follows the observed
            start rate (:class:`~rft_sdk._db._pool.PoolSizer`: ``ceil(peak starts/s x lead time)``), and a
            background thread refills it after each claim, ahead of the next batch.
        pool_window_s: seconds within which arrivals count as one batch (default 5).
        pool_half_life_s: seconds for the remembered peak start rate to halve once starts slow (default 300).
        sweep_interval_s: seconds between two sweeps of expired databases
            (default ``min(60, ttl_s / 4)``).
        admission_timeout_s: seconds a new rollout over ``max_live`` waits for a
            free slot before the retryable 503.
        max_db_bytes: the byte budget of one rollout's database (its file, or
            ``pg_database_size``; default :data:`DEFAULT_MAX_DB_BYTES` = 256 MiB, template included): a call whose
            writes take it past the budget is rolled back and answered 413 ``database_too_large``.

    Raises:
        ValueError: a bad name or a non-positive bound.
    """

    backend = "abstract"
    supports_async = False
    #: The driver's errors that mean the database does not answer (server down, file locked or
    #: unreadable): a tool call opening its database answers 503 ``database_unavailable`` (retried).
    unavailable_errors: tuple[type[Exception], ...] = ()
    #: Tool connections this process may hold at once (``None``: no bound; the PostgreSQL backends set
    #: their ``max_connections``): a call beyond it waits, first come first served, for one to be handed
    #: back, at most :attr:`connection_wait_s` seconds, then answers the retryable 503 ``database_unavailable``.
    #: Without the bound a batch of 1,024 new rollouts opened 1,024 server connections at once and ran
    #: the server out of them (``too many clients``), admission included.
    connection_slots: int | None = None
    #: Seconds a call waits for a connection slot (psycopg_pool's own default wait).
    connection_wait_s = 30.0
    #: Worker threads admissions of new rollouts may occupy at once (``None``: anyio's default limiter,
    #: shared with every other hop). The PostgreSQL backends admit through their admin pool and give
    #: admissions that many threads of their own, so that a batch of new rollouts waiting for a clone
    #: never takes the threads the calls already admitted need to finish (tool, stage, commit).
    admission_threads: int | None = None
    #: Seconds a sync tool may spend off the CPU (blocked on I/O, a lock, a sleep) in the shared admission hop
    #: before its later calls run on threads of their own (``rft_sdk._db._call``; ``None``: only
    #: ``SHARED_HOP_S`` of wall time counts). Set where that hop is a single thread (SQLite).
    shared_hop_wait_s: float | None = None

    def __init__(self, *, name: str = "rft", max_live: int = 1024, ttl_s: float = 3600.0, pool_size: int = 0,
                 sweep_interval_s: float | None = None, admission_timeout_s: float = 5.0,
                 max_db_bytes: int = DEFAULT_MAX_DB_BYTES, max_pool: int | None = None,
                 pool_window_s: float = 5.0, pool_half_life_s: float = 300.0) -> None:
        if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
            raise ValueError(f"database name {name!r} must be 1-20 lower-case letters, digits or '_', starting with "
                             f"a letter: e.g. name={name_like(str(name))!r}")
        if max_live < 1 or ttl_s <= 0 or pool_size < 0 or max_db_bytes < 1:
            raise ValueError("max_live must be >= 1, ttl_s > 0, pool_size >= 0 and max_db_bytes >= 1")
        self.max_db_bytes = int(max_db_bytes)
        self.name = name
        self.max_live = int(max_live)
        self.ttl_s = float(ttl_s)
        ceiling = max(int(pool_size), min(self.max_live, 256)) if max_pool is None else int(max_pool)
        self.sizer = PoolSizer(int(pool_size), ceiling, window_s=pool_window_s, half_life_s=pool_half_life_s)
        self.sweep_interval_s = float(sweep_interval_s if sweep_interval_s is not None else min(60.0, ttl_s / 4))
        self.admission_timeout_s = float(admission_timeout_s)
        self.metrics = DatabaseMetrics(self.backend)
        self.runner: ToolRunner | None = None
        self.tool_is_async: Callable[[str], bool] = lambda name: False
        self._start_lock = threading.Lock()
        self._maintain_lock = threading.Lock()
        self._started = False
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._sweep_now = threading.Event()
        #: Set by the maintenance thread each time one of its passes (a refill, or a sweep and refill)
        #: ends; tests and benchmarks clear it, wake the thread and wait on it instead of sleeping.
        self.pool_filled = threading.Event()
        self._thread: threading.Thread | None = None
        self._slots_var: anyio.lowlevel.RunVar[anyio.Semaphore] = anyio.lowlevel.RunVar(f"rft-db-slots-{name}")
        self._admit_var: anyio.lowlevel.RunVar[anyio.CapacityLimiter] = anyio.lowlevel.RunVar(f"rft-db-admit-{name}")
        self.slots_held = 0  # connection slots held by calls now (this process, every event loop)
        self._last_start = float("-inf")  # time.monotonic(): when the last new rollout got its database
        self._refill_asked = float("-inf")  # time.monotonic(): when a claim first asked for the pending refill
        self._template_snapshot: Snapshot | None = None
        self._tables: tuple[TableInfo, ...] | None = None
        self._gold: dict[str, tuple[Changes, list[str | None]]] = {}
        self._gold_lock = threading.Lock()

    # -- what a backend implements (blocking; called in worker threads) ------------------
    calls_insert_sql = f"INSERT INTO {CALLS_TABLE} (call_id, output, record) VALUES (?, ?, ?)"
    calls_select_sql = f"SELECT output, record FROM {CALLS_TABLE} WHERE call_id = ?"
    #: The size of the connection's database in bytes, as the open transaction sees it.
    size_sql = "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()"
    #: Bytes per unit :attr:`size_sql` answers in (SQLite: its page size, so that the query is one pragma).
    size_unit = 1

    def stage_and_measure(self, conn: Any, params: tuple[str, str, str]) -> int:
        """Insert a call's ``_rft_calls`` row ``(call_id, output, record)`` on ``conn`` (sync, in the call's
        transaction) and return the database's size in bytes after it, for ``max_db_bytes``: measured
        (:attr:`size_sql`), or an upper bound where the backend can prove one that stays within the budget
        (a refusal is always decided by a measurement). Raises the driver's errors."""
        conn.execute(self.calls_insert_sql, params)
        return int(conn.execute(self.size_sql).fetchone()[0]) * self.size_unit

    def reclaim(self, db_id: str) -> None:
        """Give back the space of writes rolled back in ``db_id`` (after a ``database_too_large`` refusal;
        default: nothing to do, a rolled-back SQLite transaction leaves the file as it was)."""
        return None

    def is_statement_error(self, exc: BaseException) -> bool:
        """Whether a driver error of :attr:`unavailable_errors` is about the statement (a tool's SQL), not
        the database answering (default: never; SQLite's ``OperationalError`` covers both)."""
        return False

    @abc.abstractmethod
    def _prepare(self) -> None:
        """Build (or find) the private template; idempotent, safe across processes."""

    @abc.abstractmethod
    def _ensure(self, trace_id: str) -> tuple[str, str | None]:
        """The rollout's database id, created when missing: ``(db_id, "pool" | "cold" | None)``.

        Raises:
            DatabaseLimitError: ``max_live`` reached.
        """

    @abc.abstractmethod
    def _exists(self, trace_id: str) -> str | None:
        """The rollout's database id when it exists, else ``None``."""

    @abc.abstractmethod
    def connect(self, db_id: str, *, read_only: bool = False) -> Any:
        """A sync connection to ``db_id`` (the SDK's connection class; ``read_only`` for graders)."""

    @abc.abstractmethod
    def _drop(self, db_id: str) -> bool:
        """Drop ``db_id`` now; ``True`` if it existed."""

    @abc.abstractmethod
    def _expire_later(self, db_id: str, after_s: float) -> None:
        """Let ``db_id`` expire ``after_s`` seconds from now (the sweep drops it then)."""

    @abc.abstractmethod
    def _sweep(self) -> int:
        """Drop every database of this template whose time is up; the number dropped."""

    @abc.abstractmethod
    def _fill_pool(self) -> int:
        """Clone until :meth:`pool_target` are ready (feeding each clone's seconds to
        ``self.sizer.prepared``); the number cloned."""

    @abc.abstractmethod
    def _counts(self) -> dict[str, int]:
        """``{"live": per-rollout databases, "pool": ready clones}`` as the backend sees them now."""

    @abc.abstractmethod
    def _scratch(self) -> str:
        """A fresh clone owned by no rollout (gold replays); swept like the others if left behind."""

    @abc.abstractmethod
    def _template_id(self) -> str:
        """A database id holding the template's content that graders may read."""

    @abc.abstractmethod
    def table_info(self, conn: Any) -> list[TableInfo]:
        """The user tables of the database behind ``conn`` (never the ``_rft_*`` ones)."""

    @abc.abstractmethod
    def drop_all(self) -> int:
        """Drop every database of this template (rollouts, pool, scratch, template): tests and teardown."""

    async def aconnect(self, db_id: str) -> Any:
        """An async connection to ``db_id`` (backends with an async driver)."""
        raise NotImplementedError

    def commit_nowait(self, db_id: str, conn: Any) -> bool:
        """Commit a sync connection's call transaction and hand the connection back on the event loop, only
        where that cannot wait (a backend whose commit is a local write): ``True`` when done; ``False`` (the
        default: never tried) leaves the transaction open for the worker-thread commit.

        Raises:
            the driver's errors of a commit that failed (the caller rolls back).
        """
        return False

    def checkin(self, db_id: str, conn: Any) -> None:
        """Hand back a sync connection after a call (default: close it)."""
        conn.close()

    async def acheckin(self, db_id: str, conn: Any) -> None:
        """Hand back an async connection after a call (default: close it)."""
        await conn.close()

    def _forget(self, db_id: str) -> None:  # noqa: B027 - optional hook
        """Close what this process holds open on ``db_id`` before it is dropped (default: nothing)."""

    def _close(self) -> None:  # noqa: B027 - optional hook
        """Release this process's connections and pools (default: nothing)."""

    # -- the warm pool ---------------------------------------------------------------------
    @property
    def pool_size(self) -> int:
        """The warm pool's floor (setting it above ``max_pool`` raises ``max_pool`` too)."""
        return self.sizer.floor

    @pool_size.setter
    def pool_size(self, value: int) -> None:
        if value < 0:
            raise ValueError(f"pool_size must be >= 0, got {value}")
        self.sizer.floor = int(value)
        self.sizer.ceiling = max(self.sizer.ceiling, int(value))

    @property
    def max_pool(self) -> int:
        """The warm pool's ceiling (setting it below ``pool_size`` lowers ``pool_size`` too)."""
        return self.sizer.ceiling

    @max_pool.setter
    def max_pool(self, value: int) -> None:
        if value < 0:
            raise ValueError(f"max_pool must be >= 0, got {value}")
        self.sizer.ceiling = int(value)
        self.sizer.floor = min(self.sizer.floor, int(value))

    def pool_target(self) -> int:
        """Clones the warm pool should hold now (:class:`~rft_sdk._db._pool.PoolSizer`'s rule)."""
        return self.sizer.target()

    #: Seconds without a new rollout before the background refill clones (a batch's first answers come
    #: first: clones made during a burst take the CPU and the admission lock from the rollouts waiting).
    REFILL_QUIET_S = 0.1

    def refill_may_run(self, now: float | None = None) -> bool:
        """Whether the background refill may clone now (``now``: ``time.monotonic()``): when no new rollout got
        its database for :attr:`REFILL_QUIET_S` seconds, or when the refill was asked for at least
        ``pool_window_s`` seconds ago (a steady stream of starts still gets its pool refilled). Always
        ``True`` outside the maintenance thread (an explicit :meth:`refill_once` or :meth:`sweep` fills now)."""
        if now is None and threading.current_thread() is not self._thread:
            return True
        now = time.monotonic() if now is None else now
        return now - self._last_start >= self.REFILL_QUIET_S or now - self._refill_asked >= self.sizer.window_s

    def refill_once(self) -> int:
        """Clone until the pool holds :meth:`pool_target` (what the maintenance thread runs after each
        claim); the number cloned. Blocking."""
        with self._maintain_lock:
            self._refill_asked = float("inf")
            cloned = self._fill_pool() if self.pool_target() and not self._stop.is_set() else 0
            counts = self._counts()
            self.metrics.set_counts(counts)
            if counts["pool"] < self.pool_target():  # paused by new starts: still asked for
                self._refill_asked = time.monotonic()
            return cloned

    # -- lifecycle -------------------------------------------------------------------------
    def db_id_for(self, trace_id: str) -> str:
        """The name of ``trace_id``'s database: ``{name}_r_{first 24 hex digits of SHA-256(trace_id)}``."""
        return f"{self.name}_r_{_digest(trace_id)[:24]}"

    def start(self) -> None:
        """Prepare the template and start the maintenance thread (sweep, pool); idempotent, blocking.

        Raises:
            RFTError (or the driver's error): the template could not be built.
        """
        with self._start_lock:
            if self._started:
                return
            self._prepare()
            self._stop.clear()
            self._thread = threading.Thread(target=self._maintain, name=f"rft-db-{self.name}", daemon=True)
            self._thread.start()
            self._started = True

    def ping(self) -> None:
        """One real read of the template (``SELECT 1`` on a read-only connection); blocking.

        Raises:
            the driver's error (one of :attr:`unavailable_errors` when the server or file does not answer).
        """
        conn = self.connect(self._template_id(), read_only=True)
        try:
            cur = conn.cursor()
            cur.execute("SELECT 1")
            cur.fetchall()
            cur.close()
        finally:
            conn.close()

    async def aping(self) -> None:
        """The ``database`` check of ``GET /readyz``: starts the database if needed, then :meth:`ping`
        in a worker thread. Raises what they raise."""
        await self.astart()
        await anyio.to_thread.run_sync(self.ping)

    def startup_hint(self) -> str:
        """What to check when :meth:`start` failed (the server's one-line start-up error ends with it)."""
        return "check that the database server answers and that its URL and credentials are right"

    async def astart(self) -> None:
        """:meth:`start` in a worker thread (what the server's lifespan and the first call await)."""
        if not self._started:
            await anyio.to_thread.run_sync(self.start)

    def close(self) -> None:
        """Stop the maintenance thread and release this process's connections. Databases stay
        (other replicas may serve them; the TTL sweep reaps them)."""
        with self._start_lock:
            self._stop.set()
            self._wake.set()
            if self._thread is not None:
                self._thread.join(timeout=30)
            self._thread = None
            self._started = False
            self._close()

    async def aclose(self) -> None:
        """:meth:`close` in a worker thread."""
        await anyio.to_thread.run_sync(self.close)

    def _maintain(self) -> None:
        """The maintenance thread: a sweep and refill every ``sweep_interval_s`` (or when admission asks
        for one), and a refill alone whenever a claim woke it, once new rollouts pause
        (:meth:`refill_may_run`)."""
        next_sweep = 0.0
        while not self._stop.is_set():
            try:
                if time.monotonic() >= next_sweep or self._sweep_now.is_set():
                    self._sweep_now.clear()
                    next_sweep = time.monotonic() + self.sweep_interval_s
                    self.maintain_once()
                else:
                    while not self._stop.is_set() and not self.refill_may_run():
                        self._stop.wait(self.REFILL_QUIET_S)  # the burst's first answers first
                    self.refill_once()
                self.pool_filled.set()
            except Exception:  # a sweep that fails is retried at the next interval
                logger.warning("rollout database maintenance of %r failed", self.name, exc_info=True)
            if (self.pool_target() > self.metrics.counts.get("pool", 0) and not self.refill_may_run()
                    and not self._stop.is_set()):
                continue  # a refill paused by new starts: resume once they pause
            self._wake.wait(max(0.0, next_sweep - time.monotonic()))
            self._wake.clear()

    def maintain_once(self) -> dict[str, int]:
        """One sweep and pool refill now (what the maintenance thread runs every interval);
        returns ``{"dropped", "cloned", "live", "pool"}``."""
        with self._maintain_lock:
            return self._maintain_locked()

    def _maintain_locked(self) -> dict[str, int]:
        dropped = self._sweep()
        if dropped:
            self.metrics.event("dropped_expired", dropped)
        cloned = self._fill_pool() if self.pool_target() and not self._stop.is_set() else 0
        counts = self._counts()
        self.metrics.set_counts(counts)
        return {"dropped": dropped, "cloned": cloned, **counts}

    # -- the request path ------------------------------------------------------------------
    async def open_call(self, trace_id: str, call_id: str, *, is_async: bool) -> CallScope:
        """Open ``trace_id``'s database for one call (creating it on the rollout's first call).

        Returns a :class:`CallScope` whose transaction is open; ``scope.replay`` is set when
        ``call_id`` was committed before.

        Raises:
            EndpointError: 503 ``database_limit`` or ``database_unavailable`` (retryable; nothing
                created or recorded).
        """
        t0 = time.perf_counter()
        scope = await self._open_call(trace_id, call_id, is_async)
        self.metrics.open_latency.observe(time.perf_counter() - t0)
        return scope

    async def _acquire_slot(self) -> anyio.Semaphore | None:
        """One of :attr:`connection_slots` for this event loop (``None`` when unbounded).

        Raises:
            EndpointError: 503 ``database_unavailable`` after :attr:`connection_wait_s` seconds without one.
        """
        if self.connection_slots is None:
            return None
        slot = self._slots_var.get(None)
        if slot is None:
            slot = anyio.Semaphore(self.connection_slots)
            self._slots_var.set(slot)
        with anyio.move_on_after(self.connection_wait_s):
            await slot.acquire()
            self.slots_held += 1
            return slot
        self.metrics.event("unavailable")
        raise EndpointError(503, "database_unavailable", f"all {self.connection_slots} connections of this process "
                            f"to the rollout databases ({self.backend}) stayed in use for {self.connection_wait_s:g} s "
                            "(max_connections); retry later", counter="database_unavailable",
                            headers={"Retry-After": "1"})

    def _admission_limiter(self) -> anyio.CapacityLimiter | None:
        """This event loop's limiter of :attr:`admission_threads` (``None``: anyio's default)."""
        if self.admission_threads is None:
            return None
        limiter = self._admit_var.get(None)
        if limiter is None:
            limiter = anyio.CapacityLimiter(self.admission_threads)
            self._admit_var.set(limiter)
        return limiter

    def _release_slot(self, slot: anyio.Semaphore) -> None:
        self.slots_held -= 1
        slot.release()

    async def _open_call(self, trace_id: str, call_id: str, is_async: bool) -> CallScope:
        slot: anyio.Semaphore | None = None
        try:
            await self.astart()
            use_async = is_async and self.supports_async
            if self.connection_slots is None and not use_async:  # admission and open in one worker-thread hop
                db_id, _, opened = await self._admit(trace_id, call_id)
                assert opened is not None
                conn, row = opened
            else:  # admitted first (its own connections), then a tool connection once a slot is free
                db_id, source, _ = await self._admit(trace_id)
                slot = await self._acquire_slot()
                if use_async:
                    conn = await self.aconnect(db_id)
                    try:
                        await conn.rft_begin()
                        cur = await conn.execute(self.calls_select_sql, (call_id,))
                        row = await cur.fetchone()
                    except BaseException:
                        await conn.rft_end(False)
                        await self.acheckin(db_id, conn)
                        raise
                else:
                    conn, row = await anyio.to_thread.run_sync(self._open_sync, db_id, call_id, source is not None)
        except BaseException as exc:
            if slot is not None:
                self._release_slot(slot)
            if isinstance(exc, self.unavailable_errors):
                raise self.unavailable(exc) from exc
            raise
        replay = (row[0], json.loads(row[1])) if row is not None else None
        if replay is not None:
            self.metrics.event("replayed_from_database")
        return CallScope(self, db_id, conn, use_async, replay, slot)

    def _open_sync(self, db_id: str, call_id: str, fresh: bool = False) -> tuple[Any, Any]:
        """A connection to ``db_id`` in the call's transaction and the replay row of ``call_id`` (``None``
        without a lookup when the database was ``fresh``ly made for this call: it holds no call yet)."""
        return self._begin_call(db_id, call_id, fresh, self.connect(db_id))

    def _begin_call(self, db_id: str, call_id: str, fresh: bool, conn: Any,
                    setup: Callable[[Any], str] | None = None) -> tuple[Any, Any]:
        """Open the call's transaction on ``conn`` (``setup(conn)``: SQL sent in the same round trip, backends
        that take it) and read the replay row of ``call_id`` (none when ``fresh``); on any failure the transaction
        is rolled back and ``conn`` handed back before the error propagates."""
        try:
            conn.rft_begin(setup(conn)) if setup else conn.rft_begin()
            row = None if fresh else conn.execute(self.calls_select_sql, (call_id,)).fetchone()
        except BaseException:
            try:
                conn.rft_end(False)
            finally:
                self.checkin(db_id, conn)
            raise
        return conn, row

    def _ensure_and_open(self, trace_id: str, call_id: str | None,
                         then: Callable[[str, Any, Any], Any] | None = None) -> tuple[str, str | None, float, Any]:
        """:meth:`_ensure`, then (with ``call_id``) :meth:`_open_sync`: ``(db_id, source, seconds the
        ensure took, (connection, replay row) or None)``; with ``then``, the last item is
        ``then(db_id, connection, replay row)`` (which owns the connection from then on)."""
        t0 = time.perf_counter()
        db_id, source = self._ensure(trace_id)
        took = time.perf_counter() - t0
        opened = self._open_sync(db_id, call_id, fresh=source is not None) if call_id is not None else None
        if then is not None and opened is not None:
            return db_id, source, took, then(db_id, *opened)
        return db_id, source, took, opened

    async def admit_and_run(self, trace_id: str, call_id: str, then: Callable[[str, Any, Any], T],
                            hop: Callable[[Callable[[], Any]], Awaitable[Any]]) -> T:
        """Admit ``trace_id`` (creating its database), open it for ``call_id`` and return
        ``then(db_id, connection, replay row)``, all in the one worker-thread call ``hop`` makes
        (``rft_sdk._db._call``; a backend without connection slots and a sync connection).

        Raises:
            EndpointError: 503 ``database_limit``; what ``then`` raises; the driver's errors.
        """
        await self.astart()
        _, _, ran = await self._admit(trace_id, call_id, then, hop)
        result: T = ran
        return result

    async def open_and_run(self, trace_id: str, call_id: str, then: Callable[[str, Any, Any, Any], T],
                           hop: Callable[[Callable[[], Any]], Awaitable[Any]]) -> T:
        """Admit ``trace_id`` (its own hop: admissions are batched), take a connection slot, then open the
        database for ``call_id`` and return ``then(db_id, connection, replay row, slot)`` in the one worker-thread
        call ``hop`` makes (``rft_sdk._db._call``; a backend with connection slots and a sync connection).
        ``then`` owns the connection and the slot once called (a :class:`CallScope` frees the slot on
        :meth:`CallScope.close`); when anything before or in it raises, the slot is freed here.

        Raises:
            EndpointError: 503 ``database_limit`` / ``database_unavailable``; what ``then`` raises; the driver's
                errors.
        """
        await self.astart()
        db_id, source, _ = await self._admit(trace_id)
        slot = await self._acquire_slot()

        def run() -> T:
            return then(db_id, *self._open_sync(db_id, call_id, source is not None), slot)

        try:
            result: T = await hop(run)
        except BaseException:
            if slot is not None:
                self._release_slot(slot)
            raise
        return result

    def unavailable(self, exc: BaseException) -> EndpointError:
        """The retryable 503 ``database_unavailable`` answering a driver error of :attr:`unavailable_errors`
        (its first line only: the type and what failed, never the connection string)."""
        self.metrics.event("unavailable")
        detail = (str(exc).strip().splitlines() or [""])[0][:300]
        return EndpointError(503, "database_unavailable", f"the rollout database ({self.backend}) does not answer: "
                             f"{type(exc).__name__}: {detail}; retry later", counter="database_unavailable",
                             headers={"Retry-After": "1"})

    async def _admit(self, trace_id: str, call_id: str | None = None, then: Callable[[str, Any, Any], Any] | None = None,
                     hop: Callable[[Callable[[], Any]], Awaitable[Any]] | None = None) -> tuple[str, str | None, Any]:
        """The rollout's database (created when missing, waiting up to ``admission_timeout_s`` at
        ``max_live``); with ``call_id`` also opened for that call in the same worker-thread hop:
        ``(db_id, source, (connection, replay row) or None)`` (with ``then``: ``then``'s result in place of the
        pair; ``source``: ``"pool"``/``"cold"`` when the database was made for this call, else ``None``).
        ``hop`` runs the worker-thread call (default: in a thread of :attr:`admission_threads`)."""
        arrived = self.sizer.clock()  # the pool is sized by when rollouts asked, not when they were served
        deadline = time.monotonic() + self.admission_timeout_s
        delay = 0.05
        run = functools.partial(self._ensure_and_open, trace_id, call_id, then)
        while True:
            try:
                db_id, source, took, opened = await (
                    hop(run) if hop is not None else anyio.to_thread.run_sync(run, limiter=self._admission_limiter()))
            except DatabaseLimitError as exc:
                if time.monotonic() + delay > deadline:
                    self.metrics.event("refused_limit")
                    raise EndpointError(503, "database_limit", f"{exc}; retry later", counter="database_limit",
                                        headers={"Retry-After": "1"}) from exc
                self._sweep_now.set()  # a sweep may free a slot
                self._wake.set()
                await anyio.sleep(delay)
                delay = min(delay * 2, 1.0)
                continue
            if source is not None:
                self.metrics.clone_latency.labels(source).observe(took)
                self.metrics.event(f"created_{source}")
                self.sizer.started(at=arrived)
                self._last_start = time.monotonic()
                self._refill_asked = min(self._refill_asked, self._last_start)
                self._wake.set()  # refill in the background (once starts pause), to the target the start rate asks
            return db_id, source, opened

    async def release(self, trace_id: str, after_s: float = 0.0) -> None:
        """Drop ``trace_id``'s database now (``after_s <= 0``) or let it expire ``after_s`` seconds
        from now (a grade kept for regrading). No-op when it has none.

        Raises:
            EndpointError: 503 ``database_unavailable`` (retryable) when the database does not answer.
        """
        try:
            db_id = await anyio.to_thread.run_sync(self._exists, trace_id)
            if db_id is None:
                return
            if after_s > 0:
                await anyio.to_thread.run_sync(self._expire_later, db_id, after_s)
                return
            if await anyio.to_thread.run_sync(self._drop, db_id):
                self.metrics.event("dropped_graded")
        except self.unavailable_errors as exc:
            raise self.unavailable(exc) from exc

    async def sweep(self) -> int:
        """Drop every expired database now (the maintenance thread does this every interval)."""
        await self.astart()
        return int((await anyio.to_thread.run_sync(self.maintain_once))["dropped"])

    def stats(self) -> dict[str, int]:
        """This process's last view of ``{"live", "pool"}`` (no I/O; :meth:`counts` reads the backend)."""
        return dict(self.metrics.counts)

    async def counts(self) -> dict[str, int]:
        """``{"live", "pool"}`` read from the backend now."""
        await self.astart()
        counts = await anyio.to_thread.run_sync(self._counts)
        self.metrics.set_counts(counts)
        return counts

    # -- grading ---------------------------------------------------------------------------
    def attach(self, runner: ToolRunner, tool_is_async: Callable[[str], bool], registry: Any | None) -> None:
        """Called by the server: how to replay gold actions, and the Prometheus registry for figures."""
        self.runner = runner
        self.tool_is_async = tool_is_async
        if registry is not None:
            self.metrics.register(registry)

    def tables(self) -> tuple[TableInfo, ...]:
        """The template's user tables (read once)."""
        if self._tables is None:
            self.template_snapshot()
        assert self._tables is not None  # set by template_snapshot
        return self._tables

    def template_snapshot(self) -> Snapshot:
        """Every row of the template, read once per process and kept (O(template size) memory)."""
        if self._template_snapshot is None:
            conn = self.connect(self._template_id(), read_only=True)
            try:
                tables = tuple(self.table_info(conn))
                snap = read_snapshot(conn, tables)
            finally:
                _close_quietly(conn)
            self._tables, self._template_snapshot = tables, snap
        return self._template_snapshot

    def snapshot_of(self, db_id: str) -> Snapshot:
        """Every row of ``db_id`` (blocking; O(database size))."""
        conn = self.connect(db_id, read_only=True)
        try:
            return read_snapshot(conn, self.table_info(conn))
        finally:
            _close_quietly(conn)

    def changes_of(self, db_id: str) -> Changes:
        """``{(table, key): final row or None}`` of every row of ``db_id`` that differs from the template
        (blocking). Default: a full snapshot compared in Python (O(database size)); backends that can
        compare inside the engine override it."""
        return changes_between(self.template_snapshot(), self.snapshot_of(db_id))

    async def gold_changes(self, actions: Sequence[Mapping[str, Any]], item: dict[str, Any]
                           ) -> tuple[Changes, list[str | None]]:
        """Replay ``actions`` (``[{"name", "arguments": dict | JSON text}]``) in a scratch clone,
        return ``(changes against the template, per-action error or None)``; cached per
        action list and item in this process (every sample of an item shares it; a tool that reads
        ``rollout.item`` gets each item's own replay).

        Raises:
            RFTError: no tool runner attached (the database is not served by a ``ToolServer``),
                or an action names no registered tool.
        """
        key = _digest(json.dumps([actions, item], sort_keys=True, default=str))
        cached = self._gold.get(key)
        if cached is not None:
            return cached
        if self.runner is None:
            raise RFTError("gold replay needs the database attached to a ToolServer(db=...)")
        await self.astart()
        await anyio.to_thread.run_sync(self.template_snapshot)
        db_id = await anyio.to_thread.run_sync(self._scratch)
        errors: list[str | None] = []
        try:
            state: dict[str, Any] = {}
            for action in actions:
                errors.append(await self._replay_one(db_id, action, item, state))
            changes = await anyio.to_thread.run_sync(self.changes_of, db_id)
        finally:
            await anyio.to_thread.run_sync(self._drop, db_id)
        result = (changes, errors)
        with self._gold_lock:
            if len(self._gold) >= 1024:
                self._gold.clear()
            self._gold[key] = result
        return result

    async def _replay_one(self, db_id: str, action: Mapping[str, Any], item: dict[str, Any],
                          state: dict[str, Any]) -> str | None:
        name, arguments = action.get("name"), action.get("arguments") or {}
        if isinstance(arguments, str):
            arguments = json.loads(arguments) if arguments.strip() else {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise RFTError(f"bad gold action {action!r}: need {{'name': str, 'arguments': dict}}")
        runner = self.runner
        assert runner is not None
        use_async = self.tool_is_async(name) and self.supports_async
        conn = await self.aconnect(db_id) if use_async else await anyio.to_thread.run_sync(self.connect, db_id)
        scope = CallScope(self, db_id, conn, use_async, None)
        try:
            if use_async:
                await conn.rft_begin()
            else:
                await anyio.to_thread.run_sync(conn.rft_begin)
            try:
                await runner(name, arguments, conn, item, state)
            except EndpointError as exc:
                if exc.status == 404:
                    raise RFTError(f"gold action names no registered tool: {name!r}") from exc
                await scope.rollback()
                return exc.message
            await scope.stage(f"gold:{len(state)}:{time.monotonic_ns()}", "", {})
            await scope.commit()
            return None
        finally:
            await scope.close()


def _close_quietly(conn: Any) -> None:
    try:
        conn.close()
    except Exception:  # closing a read connection cannot lose anything
        logger.debug("closing a read connection failed", exc_info=True)
