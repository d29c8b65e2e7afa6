"""``PostgresDatabase``: one PostgreSQL database per rollout, ``CREATE DATABASE ... TEMPLATE``.

Every replica, on any host, points at the same server. What exists is recorded
in one registry table in the database of the URL (``rft_rollout_databases``:
``name, prefix, kind, trace_id, created_at, expires_at``), next to the
databases it describes, so the two never disagree for longer than one step:

* a row is written *before* its ``CREATE DATABASE`` (which cannot run in a
  transaction), so a replica killed mid-clone leaves a row the sweep finds;
* a rollout's database is named after its ``trace_id``
  (``{name}_r_{sha256[:24]}``), so any replica connects to it directly;
* the warm pool holds clones named ``{name}_p_{uuid}``; a rollout claims one
  with ``ALTER DATABASE ... RENAME`` in the same transaction that updates its
  row (``FOR UPDATE`` under the admission lock: two replicas never claim the same clone, and a clone
  whose row the maintenance thread is touching that instant, e.g. its expiry refresh, is waited for, not
  skipped: skipping it sent a batch's rollouts to cold clones while warm ones sat in the pool);
* admission takes a transaction-level advisory lock, counts the live rows
  and inserts, so ``max_live`` holds across replicas; the new rollouts of a
  process that wait at the same moment are admitted in one such transaction
  (``_combine.Combiner``: a batch's renames and registry rows in one round
  trip), not one transaction each;
* the sweep (every replica's maintenance thread) drops each database whose
  ``expires_at`` passed, ``WITH (FORCE)`` (connections of other replicas are
  ended), then deletes its row. Every tool call pushes ``expires_at`` to
  ``now() + ttl_s`` (at most once per ``ttl_s / 8`` per replica).

The template is private: ``{name}_template``, built once from the user's
``template`` database (cloned) or ``setup`` function, plus the SDK's
``_rft_calls`` table; ``{name}_ref`` is a clone of it graders read (a template
cannot be cloned while someone is connected to it).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import os
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..exceptions import RFTError
from ._base import CALLS_DDL, CALLS_TABLE, DatabaseLimitError, RolloutDatabase
from ._combine import Combiner
from ._connection import pg_classes
from ._diff import TableInfo
from ._source import same_source, seed_file_paths, seed_label, setup_digest, stale_reason, template_source

__all__ = ["REGISTRY_TABLE", "PostgresDatabase"]

logger = logging.getLogger("rft_sdk")

#: The registry table, in the database of the server URL.
REGISTRY_TABLE = "rft_rollout_databases"
#: The digest of what built each template (``setup``'s file), beside the registry: a table of its own, not the
#: template's COMMENT, so that a replica of an older rft-sdk still reads the COMMENT it wrote (the source alone).
DIGEST_TABLE = "rft_template_digests"
_REGISTRY_DDL = f"""
CREATE TABLE IF NOT EXISTS {REGISTRY_TABLE} (
    name text PRIMARY KEY,
    prefix text NOT NULL,
    kind text NOT NULL,          -- creating | rollout | pool_creating | pool | scratch
    trace_id text,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS {REGISTRY_TABLE}_prefix_kind ON {REGISTRY_TABLE} (prefix, kind);
CREATE TABLE IF NOT EXISTS {DIGEST_TABLE} (
    template text PRIMARY KEY,   -- {{name}}_template or {{name}}_tpl
    digest text NOT NULL,        -- setup_digest(setup) when it was built
    built_at timestamptz NOT NULL DEFAULT now()
)
"""


#: Seconds a call waits for a connection of a busy admin pool (psycopg_pool's own default).
_POOL_WAIT_S = 30.0
#: Connections of the admin pool (registry, admission, clones, drops) per process.
_ADMIN_CONNECTIONS = 8


def _lock_key(text: str) -> int:
    """A signed 64-bit advisory-lock key for ``text``."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big", signed=True)


class PostgresDatabase(RolloutDatabase):
    """A database per rollout on a PostgreSQL server shared by every replica.

    Args:
        url: libpq URL of the server and of the database that holds the registry
            table, e.g. ``"postgresql://rft@db:5432/postgres"``. The role needs
            ``CREATEDB``.
        template: name of an existing database with the schema and seed data
            (cloned once into the private template; nobody may be connected to it
            at that moment), or ``None`` with ``setup``.
        setup: ``setup(conn: psycopg.Connection)`` creating the schema and seed rows
            in an empty database, run once (the SDK commits).
        strategy: ``CREATE DATABASE ... STRATEGY`` (``"wal_log"``, the default of
            PostgreSQL 15+, or ``"file_copy"``); ``None``: the server's default.
        max_connections: connections this process has open to rollout databases: at most this many
            calls hold one at once (a call beyond waits for one, first come first served, up to
            ``connection_wait_s`` = 30 s, then 503 ``database_unavailable``), and idle ones are kept only
            while in-use plus idle stay within it (least recently used closed first). Keep the sum over
            every replica under the server's ``max_connections``.
        rebuild: rebuild the private template even when it exists (also one built from another source). Not
            needed after an edit of ``setup``'s file (any change to it, a seed constant included: its SHA-256
            is recorded in the table ``rft_template_digests`` beside the registry): the template is then
            rebuilt at start, by one replica, with a warning naming the source. Needed after a change the
            digest cannot see: data ``setup`` reads from another file, a changed ``template=`` database
            (never digested). A ``setup=`` template built by an rft-sdk without the digest is rebuilt once.
        seed_files: with ``setup``, the files it reads (fixtures, ``.sql`` scripts, a module it imports), as a
            list of ``str`` or ``os.PathLike`` (a relative path resolved against the current directory now).
            Their bytes join the digest beside ``setup``'s file (read whole when the database is constructed),
            so an edit of one rebuilds the template at the next start. Default ``()``: ``setup``'s file alone.
        unavailable_timeout_s: the longest a call, grade or release waits for the server (a new
            connection's ``connect_timeout``, a pooled one's wait) before its 503
            ``database_unavailable`` (default 5 s; a server in crash recovery refuses connections, and
            the pool would otherwise retry for 30 s).
        **options: keyword arguments of :class:`RolloutDatabase`: ``name`` (default ``"rft"``: names the
            template and the clones on the server; give each task its own), ``max_live``, ``ttl_s``, ``pool_size``, ``max_pool``, ``pool_window_s``,
            ``pool_half_life_s``, ``sweep_interval_s``, ``admission_timeout_s``, ``max_db_bytes``.

    ``rollout.db`` is a ``psycopg.Connection`` (``async def`` tools: a
    ``psycopg.AsyncConnection``), not in autocommit mode.

    Raises:
        ValueError: neither or both of ``template`` and ``setup``; a bad ``strategy``; ``seed_files`` with
            ``template``, or naming something that is not a file.
        TypeError: ``seed_files`` one path instead of a list of them.
        RFTError: psycopg is not installed (``pip install "rft-sdk[postgres]"``); at start, the server's
            ``{name}_template`` was built from another ``setup``/``template`` (two tasks share one ``name``
            on one server; its COMMENT records the source).
    """

    backend = "postgres"
    #: SQL reading the COMMENT that records what built the template (``%s``: its name) and the object kind
    #: of the ``COMMENT ON`` that writes it.
    source_comment_sql = "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s"
    source_comment_kind = "DATABASE"
    #: ``"database"`` (a database per rollout) or ``"schema"`` (:class:`PostgresSchemaDatabase`).
    isolation = "database"
    supports_async = True
    calls_insert_sql = f"INSERT INTO {CALLS_TABLE} (call_id, output, record) VALUES (%s, %s, %s)"
    calls_select_sql = f"SELECT output, record FROM {CALLS_TABLE} WHERE call_id = %s"
    size_sql = "SELECT pg_database_size(current_database())"
    #: The most new rollouts one admission transaction claims (:meth:`_claim_batch`), and so the worker threads
    #: admissions may occupy at once (they wait for their batch holding no connection).
    claim_batch = 128

    def __init__(self, url: str, *, template: str | None = None,
                 setup: Callable[[Any], None] | None = None, strategy: str | None = None,
                 max_connections: int = 64, rebuild: bool = False, unavailable_timeout_s: float = 5.0,
                 seed_files: Iterable[str | os.PathLike[str]] = (), **options: Any) -> None:
        options.setdefault("pool_size", 4)
        super().__init__(**options)
        try:
            import psycopg
            import psycopg_pool  # noqa: F401
        except ImportError as exc:
            raise RFTError(f'PostgresDatabase needs psycopg and psycopg_pool ({exc}): pip install "rft-sdk[postgres]"'
                           ) from exc
        self.unavailable_errors = (psycopg.OperationalError,)  # server down, refused, pool timeout
        if (template is None) == (setup is None):
            raise ValueError("PostgresDatabase needs exactly one of template= (a database name) or setup= (a function)")
        self.seed_files = seed_file_paths(seed_files, type(self).__name__)
        if self.seed_files and template is not None:
            raise ValueError(f"{type(self).__name__}(seed_files=...) goes with setup=: a template= database is never "
                             "digested (pass rebuild=True after changing it)")
        if strategy is not None and strategy.lower() not in ("wal_log", "file_copy"):
            raise ValueError(f"strategy must be 'wal_log' or 'file_copy', got {strategy!r}")
        self.url = url
        if not unavailable_timeout_s > 0:
            raise ValueError(f"unavailable_timeout_s must be > 0 seconds, got {unavailable_timeout_s!r}")
        self.unavailable_timeout_s = float(unavailable_timeout_s)
        self.source, self.setup, self.strategy = template, setup, strategy
        self.max_connections = int(max_connections)
        if self.max_connections < 1:
            raise ValueError(f"max_connections must be >= 1, got {max_connections!r}")
        self.connection_slots = self.max_connections
        # admissions wait in the batch of claims (no admin connection held): the threads are the batch's size
        self.admission_threads = self.claim_batch
        self.rebuild = rebuild
        self.template_name = f"{self.name}_template"
        self.ref_name = f"{self.name}_ref"
        self.source_id = template_source(template, setup)  # recorded as the template's COMMENT
        # setup's file read now, next to the import that loaded the code setup() will run; a template= database
        # has none (nothing tells cheaply that a database changed: rebuild=True after changing it)
        self.digest = setup_digest(setup, self.seed_files) if setup is not None else ""
        self._admin: Any = None
        self._admin_errors_ok = 0  # the admin pool's failed connection attempts at its last good one
        self._idle: OrderedDict[str, Any] = OrderedDict()
        self._idle_lock = threading.Lock()
        self._touched: dict[str, float] = {}
        # bytes a clone this process made measured at its creation (an upper bound of its size until its first
        # call: see PostgresSchemaDatabase.stage_and_measure), by clone name, then by the rollout that claimed it
        self._clone_bytes: dict[str, int] = {}
        self._first_bytes: dict[str, int] = {}
        self._claims = Combiner(self._claim_batch, self.claim_batch)
        # cold clones (and waits for another replica's) hold an admin connection for seconds: at most as many
        # at once as the admin pool has, the others queue here (no timeout), not in the pool's 30 s wait
        self._cold_slots = threading.BoundedSemaphore(_ADMIN_CONNECTIONS)

    # -- plumbing --------------------------------------------------------------------------
    def _conninfo(self, dbname: str, **extra: Any) -> str:
        from psycopg.conninfo import make_conninfo
        extra.setdefault("connect_timeout", max(2, math.ceil(self.unavailable_timeout_s)))  # libpq: whole seconds >= 2
        return str(make_conninfo(self.url, dbname=dbname, **extra))

    @contextlib.contextmanager
    def _admin_conn(self) -> Iterator[Any]:
        if self._admin is None:
            from psycopg_pool import ConnectionPool
            self._admin = ConnectionPool(self._admin_conninfo(), min_size=1, max_size=_ADMIN_CONNECTIONS,
                                         kwargs={"autocommit": True}, open=True, name=f"rft-db-{self.name}",
                                         configure=self._admin_connected)
        # A pool with connections is busy, not down: its queue keeps psycopg_pool's 30 s wait. An empty pool,
        # or one whose connection attempts failed since its last good one, means the server stopped answering
        # (its connections were lost, reconnects fail): a short wait, then 503.
        stats = self._admin.get_stats()
        down = stats.get("pool_size", 0) == 0 or stats.get("connections_errors", 0) > self._admin_errors_ok
        wait = self.unavailable_timeout_s if down else _POOL_WAIT_S
        with self._admin.connection(timeout=wait) as conn:
            yield conn

    def _admin_connected(self, conn: Any) -> None:
        """The admin pool made a connection: the failed attempts so far are history."""
        pool = self._admin
        self._admin_errors_ok = pool.get_stats().get("connections_errors", 0) if pool is not None else 0

    def _admin_conninfo(self) -> str:
        from psycopg.conninfo import make_conninfo
        return str(make_conninfo(self.url, connect_timeout=max(2, math.ceil(self.unavailable_timeout_s))))

    def _ident(self, name: str) -> Any:
        from psycopg import sql
        return sql.Identifier(name)

    def _create(self, conn: Any, name: str, template: str) -> None:
        from psycopg import sql
        query = sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(self._ident(name), self._ident(template))
        if self.strategy:
            query = sql.SQL("{} STRATEGY {}").format(query, sql.SQL(self.strategy.upper()))
        conn.execute(query)

    def _drop_db(self, conn: Any, name: str) -> None:
        from psycopg import sql
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(self._ident(name)))

    def _rename_sql(self, old: str, new: str) -> Any:
        """The statement renaming a clone (a pool claim), a ``psycopg.sql.Composed``."""
        from psycopg import sql
        return sql.SQL("ALTER DATABASE {} RENAME TO {}").format(self._ident(old), self._ident(new))

    def _rename(self, conn: Any, old: str, new: str) -> None:
        """Rename a clone, inside the caller's transaction."""
        conn.execute(self._rename_sql(old, new))

    def _db_exists(self, conn: Any, name: str) -> bool:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None

    # -- template --------------------------------------------------------------------------
    def _prepare(self) -> None:
        with self._admin_conn() as conn:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key("rft-registry"),))
                conn.execute(_REGISTRY_DDL)
            with conn.transaction():  # one replica builds; the others wait here, then find it built
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(f"rft-template-{self.name}"),))
                if self._fresh_template(conn, log=False):
                    return
        self._build_template()
        self.rebuild = False

    def _fresh_template(self, conn: Any, *, log: bool) -> bool:
        """Whether the template exists, was built from this source and its recorded digest is this one's (its
        template lock held; ``rebuild=True``: never), so that it is reused. A template of another source raises
        (:meth:`_check_source`). Called again under the build's lock before building: a replica that found it
        stale or missing builds only when no other replica did so meanwhile (``log``: then say why it rebuilds).
        """
        if self.rebuild or not (self._db_exists(conn, self.template_name) and self._db_exists(conn, self.ref_name)):
            return False
        self._check_source(conn)
        row = conn.execute(f"SELECT digest FROM {DIGEST_TABLE} WHERE template = %s", (self.template_name,)).fetchone()
        stale = stale_reason(row[0] if row is not None else None, self.digest,
                             seed_label(self.source_id, self.seed_files))
        if stale is not None and log:
            logger.warning("rebuilding the template %s on %s: %s", self.template_name, self._redacted(), stale)
        return stale is None

    def _record_digest(self, conn: Any) -> None:
        """Write :attr:`digest` as the template's row of :data:`DIGEST_TABLE` (none when it is unknown)."""
        if self.digest:
            conn.execute(f"INSERT INTO {DIGEST_TABLE} (template, digest) VALUES (%s, %s) ON CONFLICT (template) "
                         "DO UPDATE SET digest = EXCLUDED.digest, built_at = now()", (self.template_name, self.digest))
        else:
            conn.execute(f"DELETE FROM {DIGEST_TABLE} WHERE template = %s", (self.template_name,))

    def _record_source(self, conn: Any) -> None:
        """Write :attr:`source_id` as the template's COMMENT."""
        from psycopg import sql
        conn.execute(sql.SQL("COMMENT ON {} {} IS {}").format(
            sql.SQL(self.source_comment_kind), self._ident(self.template_name), sql.Literal(self.source_id)))

    def _check_source(self, conn: Any) -> None:
        """The existing template was built from this database's ``setup``/``template`` (its template lock held);
        one without a COMMENT (built by an older version) is adopted.

        Raises:
            RFTError: its COMMENT names another source: two tasks share this ``name`` on this server.
        """
        row = conn.execute(self.source_comment_sql, (self.template_name,)).fetchone()
        recorded = row[0] if row is not None else None
        if recorded is not None and same_source(recorded, self.source_id):
            if recorded != self.source_id:
                self._record_source(conn)
            return
        if recorded is None:
            self._record_source(conn)
            return
        raise RFTError(
            f"the template {self.template_name!r} on {self._redacted()} was built from {recorded}, not from "
            f"{self.source_id}: two different databases share name={self.name!r} on one server. Give each its own "
            "name=; if this is the same task with its setup renamed, pass rebuild=True once")

    def _build_template(self) -> None:
        from psycopg import sql
        building = f"{self.name}_b_{uuid.uuid4().hex[:12]}"
        with self._admin_conn() as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (_lock_key(f"rft-template-{self.name}"),))
            try:
                if self._fresh_template(conn, log=True):  # another replica built it since _prepare looked
                    return
                if self.source is not None:
                    if not self._db_exists(conn, self.source):
                        raise RFTError(f"template database {self.source!r} does not exist on {self._redacted()}")
                    self._create(conn, building, self.source)
                else:
                    conn.execute(sql.SQL("CREATE DATABASE {}").format(self._ident(building)))
                import psycopg
                with psycopg.connect(self._conninfo(building)) as target:
                    if self.setup is not None:
                        self.setup(target)
                    target.execute(CALLS_DDL)
                    target.commit()
                for old in (self.ref_name, self.template_name):
                    self._drop_db(conn, old)
                conn.execute(sql.SQL("ALTER DATABASE {} RENAME TO {}").format(self._ident(building),
                                                                              self._ident(self.template_name)))
                self._record_source(conn)
                self._record_digest(conn)
                self._create(conn, self.ref_name, self.template_name)
                # the pool was cloned from the old template: drop it
                for (name,) in conn.execute(f"SELECT name FROM {REGISTRY_TABLE} WHERE prefix = %s AND kind = 'pool'",
                                            (self.name,)).fetchall():
                    self._drop_db(conn, name)
                    conn.execute(f"DELETE FROM {REGISTRY_TABLE} WHERE name = %s", (name,))
            except BaseException:
                self._drop_db(conn, building)
                raise
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (_lock_key(f"rft-template-{self.name}"),))

    def _redacted(self) -> str:
        from psycopg.conninfo import conninfo_to_dict
        info = conninfo_to_dict(self.url)
        return f"{info.get('host', 'localhost')}:{info.get('port', 5432)}"

    # -- per rollout -----------------------------------------------------------------------
    def _exists(self, trace_id: str) -> str | None:
        db_id = self.db_id_for(trace_id)
        with self._admin_conn() as conn:
            row = conn.execute(f"SELECT kind FROM {REGISTRY_TABLE} WHERE name = %s", (db_id,)).fetchone()
        return db_id if row is not None and row[0] == "rollout" else None

    def _fresh(self, db_id: str) -> bool:
        """Whether this process touched ``db_id``'s registry row less than ``ttl_s / 8`` seconds ago."""
        last = self._touched.get(db_id)
        return last is not None and time.monotonic() - last < self.ttl_s / 8

    def _ensure(self, trace_id: str) -> tuple[str, str | None]:
        """The rollout's database, claimed together with every other admission of this process waiting at the
        same moment (:meth:`_claim_batch`: one transaction for the batch); a cold clone or another replica's
        clone is then awaited by this thread alone."""
        db_id = self.db_id_for(trace_id)
        if self._fresh(db_id):
            return db_id, None
        outcome = self._claims.claim(trace_id)
        if isinstance(outcome, BaseException):
            raise outcome
        if outcome == "creating":
            with self._cold_slots:
                return self._create_cold(db_id), "cold"
        if outcome == "wait":
            with self._cold_slots, self._admin_conn() as conn:
                return self._wait_ready(conn, db_id), None
        return db_id, ("pool" if outcome == "pool" else None)

    def _claim_batch(self, trace_ids: list[str]) -> list[str | BaseException]:
        """Admit ``trace_ids`` (new rollouts of this process) in one transaction under the admission lock:
        per trace id ``"rollout"`` (its database exists; its expiry pushed), ``"pool"`` (a pool clone renamed
        to it), ``"creating"`` (its registry row inserted: the caller clones cold), ``"wait"`` (another
        replica, or another call of this batch, is creating it) or a :class:`DatabaseLimitError` (``max_live``
        reached). Round trips per batch, not per rollout: at a batch's start every admission queued on the
        lock, one at a time, 6 round trips each (9.6 s first-answer p99 for 1,024 rollouts on 2 cores).
        """
        from psycopg import sql
        ttl = f"{self.ttl_s} seconds"
        ids = [self.db_id_for(t) for t in trace_ids]
        out: dict[str, str] = {}
        with self._admin_conn() as conn:
            for name, kind in conn.execute(f"UPDATE {REGISTRY_TABLE} SET expires_at = now() + %s::interval "
                                           "WHERE name = ANY(%s) RETURNING name, kind", (ttl, ids)).fetchall():
                out[name] = "rollout" if kind == "rollout" else "wait"
            new: dict[str, str] = {}  # db_id -> trace_id, in arrival order; a second call of one rollout waits
            for db_id, trace_id in zip(ids, trace_ids, strict=True):
                if db_id not in out and db_id not in new:
                    new[db_id] = trace_id
            refused = 0
            if new:
                with conn.transaction():
                    # one admission at a time across replicas; no WAL flush for it (safe: the rollout's first
                    # durable commit comes later in the WAL, so a crash that loses this claim loses its calls too)
                    conn.execute("SELECT set_config('synchronous_commit', 'off', true), pg_advisory_xact_lock(%s)",
                                 (_lock_key(f"rft-admit-{self.name}"),))
                    live, present = conn.execute(
                        f"SELECT (SELECT count(*) FROM {REGISTRY_TABLE} WHERE prefix = %s "
                        "AND kind IN ('rollout', 'creating')), "
                        f"array(SELECT name FROM {REGISTRY_TABLE} WHERE name = ANY(%s))",
                        (self.name, list(new))).fetchone()
                    for name in present:  # admitted by another replica since the UPDATE above
                        out[name] = "wait"
                        del new[name]
                    admitted = list(new)[:max(0, self.max_live - live)]
                    refused = len(new) - len(admitted)
                    if refused:
                        self.metrics.set_counts({"live": live, "pool": self.metrics.counts.get("pool", 0)})
                    pooled = [r[0] for r in conn.execute(
                        f"SELECT name FROM {REGISTRY_TABLE} WHERE prefix = %s AND kind = 'pool' "
                        "ORDER BY created_at LIMIT %s FOR UPDATE", (self.name, len(admitted))).fetchall()]
                    claims, cold = list(zip(pooled, admitted, strict=False)), admitted[len(pooled):]
                    parts = [self._rename_sql(old, db_id) for old, db_id in claims]
                    if claims:
                        parts.append(sql.SQL(
                            "UPDATE {reg} AS r SET name = v.new, kind = 'rollout', trace_id = v.trace_id, "
                            "expires_at = now() + {ttl}::interval FROM (VALUES {rows}) AS v(old, new, trace_id) "
                            "WHERE r.name = v.old").format(
                                reg=sql.Identifier(REGISTRY_TABLE), ttl=sql.Literal(ttl),
                                rows=sql.SQL(", ").join(sql.SQL("({}, {}, {})").format(
                                    sql.Literal(old), sql.Literal(db_id), sql.Literal(new[db_id]))
                                    for old, db_id in claims)))
                    if cold:
                        parts.append(sql.SQL(
                            "INSERT INTO {reg} (name, prefix, kind, trace_id, expires_at) "
                            "SELECT v.name, {prefix}, 'creating', v.trace_id, now() + {ttl}::interval "
                            "FROM (VALUES {rows}) AS v(name, trace_id)").format(
                                reg=sql.Identifier(REGISTRY_TABLE), prefix=sql.Literal(self.name),
                                ttl=sql.Literal(ttl), rows=sql.SQL(", ").join(
                                    sql.SQL("({}, {})").format(sql.Literal(db_id), sql.Literal(new[db_id]))
                                    for db_id in cold)))
                    if parts:  # one round trip: the renames and the registry rows (simple query protocol)
                        conn.execute(sql.SQL("; ").join(parts))
                now = time.monotonic()
                for old, db_id in claims:
                    out[db_id] = "pool"
                    self._touched[db_id] = now
                    self._claimed(old, db_id)
                for db_id in cold:
                    out[db_id] = "creating"
        for db_id in out:
            if out[db_id] == "rollout":
                self._touched[db_id] = time.monotonic()
        limit = DatabaseLimitError(f"{self.max_live} rollout databases are alive (max_live={self.max_live})")
        result: list[str | BaseException] = []
        given: set[str] = set()
        for db_id in ids:
            outcome = out.get(db_id)
            if db_id in given:  # the same rollout twice in one batch: the first one's database
                outcome = "wait" if outcome == "creating" else "rollout"
            given.add(db_id)
            result.append(limit if outcome is None else outcome)
        return result

    def _create_cold(self, db_id: str) -> str:
        """Clone ``db_id`` from the template (its ``creating`` row is in the registry); the row is deleted
        when the clone fails."""
        with self._admin_conn() as conn:
            try:
                self._create(conn, db_id, self.template_name)
            except BaseException:
                conn.execute(f"DELETE FROM {REGISTRY_TABLE} WHERE name = %s", (db_id,))
                raise
            conn.execute(f"UPDATE {REGISTRY_TABLE} SET kind = 'rollout' WHERE name = %s", (db_id,))
        self._touched[db_id] = time.monotonic()
        self._claimed(db_id, db_id)
        return db_id

    def _claimed(self, clone: str, db_id: str) -> None:
        """The clone ``clone`` (made by this process or not) is now rollout ``db_id``'s database."""
        size = self._clone_bytes.pop(clone, None)
        if size is not None:
            self._first_bytes[db_id] = size

    def _wait_ready(self, conn: Any, db_id: str, timeout_s: float = 60.0) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            row = conn.execute(f"SELECT kind FROM {REGISTRY_TABLE} WHERE name = %s", (db_id,)).fetchone()
            if row is not None and row[0] == "rollout":
                return db_id
            if row is None:
                break
            time.sleep(0.05)
        raise RFTError(f"rollout database {db_id} was not created by the replica creating it")

    def connect(self, db_id: str, *, read_only: bool = False) -> Any:
        sync_cls, _ = pg_classes()
        if read_only:
            return sync_cls.connect(self._conninfo(db_id, options="-c default_transaction_read_only=on"))
        with self._idle_lock:
            conn = self._idle.pop(db_id, None)
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        return sync_cls.connect(self._conninfo(db_id))

    def reclaim(self, db_id: str) -> None:
        """``VACUUM`` the rollout's database: the heap pages a refused (rolled-back) call appended are cut
        off its tables' ends, so its size falls back under ``max_db_bytes`` (index pages stay, reusable)."""
        import psycopg

        with psycopg.connect(self._conninfo(db_id), autocommit=True) as conn:
            conn.execute("VACUUM")

    def checkin(self, db_id: str, conn: Any) -> None:
        if conn.closed or conn.broken:
            return
        evicted = []
        with self._idle_lock:
            old = self._idle.pop(db_id, None)
            if old is not None:
                evicted.append(old)
            self._idle[db_id] = conn
            while len(self._idle) > self._idle_room():
                evicted.append(self._idle.popitem(last=False)[1])
        for extra in evicted:
            extra.close()

    async def aconnect(self, db_id: str) -> Any:
        _, async_cls = pg_classes()
        return await async_cls.connect(self._conninfo(db_id))

    def _idle_room(self) -> int:
        """Idle connections this process may keep now: ``max_connections`` less those in use (the calls
        holding a slot; the one handing its connection back still counts, so one more)."""
        return max(0, self.max_connections - self.slots_held + 1)

    def _forget(self, db_id: str) -> None:
        self._touched.pop(db_id, None)
        with self._idle_lock:
            conn = self._idle.pop(db_id, None)
        if conn is not None:
            conn.close()

    def _drop(self, db_id: str) -> bool:
        self._forget(db_id)
        with self._admin_conn() as conn:
            existed = conn.execute(f"SELECT 1 FROM {REGISTRY_TABLE} WHERE name = %s", (db_id,)).fetchone()
            self._drop_db(conn, db_id)
            conn.execute(f"DELETE FROM {REGISTRY_TABLE} WHERE name = %s", (db_id,))
        return existed is not None

    def _expire_later(self, db_id: str, after_s: float) -> None:
        self._forget(db_id)
        with self._admin_conn() as conn:
            conn.execute(f"UPDATE {REGISTRY_TABLE} SET expires_at = now() + %s::interval WHERE name = %s",
                         (f"{after_s} seconds", db_id))

    def _sweep(self) -> int:
        dropped = 0
        with self._admin_conn() as conn:
            rows = conn.execute(f"SELECT name, kind FROM {REGISTRY_TABLE} WHERE prefix = %s AND expires_at < now()",
                                (self.name,)).fetchall()
            for name, kind in rows:
                self._forget(name)
                try:
                    self._drop_db(conn, name)
                except self._lock_busy_errors() as exc:  # a straggler's open transaction: next sweep
                    logger.warning("rollout database %s is still in use (%s); the next sweep drops it", name, exc)
                    continue
                conn.execute(f"DELETE FROM {REGISTRY_TABLE} WHERE name = %s AND expires_at < now()", (name,))
                dropped += int(kind in ("rollout", "creating"))
        return dropped

    def _lock_busy_errors(self) -> tuple[type[Exception], ...]:
        """The errors of a drop that waited ``lock_timeout`` for another connection's locks (none for a
        database: ``DROP DATABASE ... WITH (FORCE)`` ends the other connections)."""
        return ()

    def _fill_pool(self) -> int:
        ttl = f"{self.ttl_s} seconds"
        cloned = 0
        template_key = _lock_key(f"rft-template-{self.name}")
        with self._admin_conn() as conn:
            conn.execute(f"UPDATE {REGISTRY_TABLE} SET expires_at = now() + %s::interval "
                         "WHERE prefix = %s AND kind = 'pool'", (ttl, self.name))  # still wanted
            while not self._stop.is_set() and self.refill_may_run():
                name = f"{self.name}_p_{uuid.uuid4().hex[:24]}"
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(f"rft-pool-{self.name}"),))
                    (have,) = conn.execute(f"SELECT count(*) FROM {REGISTRY_TABLE} WHERE prefix = %s "
                                           "AND kind IN ('pool', 'pool_creating')", (self.name,)).fetchone()
                    if have >= self.pool_target():
                        break
                    conn.execute(f"INSERT INTO {REGISTRY_TABLE} (name, prefix, kind, expires_at) "
                                 "VALUES (%s, %s, 'pool_creating', now() + %s::interval)", (name, self.name, ttl))
                # cloned and entered into the pool under the template lock, shared: a rebuild (which holds it
                # exclusively, then drops the pool) waits for this clone, or this clone for the rebuild, so a
                # clone of an old template never enters the pool after the rebuild dropped it
                conn.execute("SELECT pg_advisory_lock_shared(%s)", (template_key,))
                try:
                    try:
                        t0 = time.perf_counter()
                        self._create(conn, name, self.template_name)
                        self.sizer.prepared(time.perf_counter() - t0)
                    except BaseException:
                        conn.execute(f"DELETE FROM {REGISTRY_TABLE} WHERE name = %s", (name,))
                        raise
                    conn.execute(f"UPDATE {REGISTRY_TABLE} SET kind = 'pool' WHERE name = %s", (name,))
                finally:
                    conn.execute("SELECT pg_advisory_unlock_shared(%s)", (template_key,))
                cloned += 1
        return cloned

    def _counts(self) -> dict[str, int]:
        with self._admin_conn() as conn:
            rows = conn.execute(f"SELECT kind, count(*) FROM {REGISTRY_TABLE} WHERE prefix = %s GROUP BY kind",
                                (self.name,)).fetchall()
        kinds = dict(rows)
        return {"live": int(kinds.get("rollout", 0) + kinds.get("creating", 0)), "pool": int(kinds.get("pool", 0))}

    def _scratch(self) -> str:
        name = f"{self.name}_s_{uuid.uuid4().hex[:24]}"
        with self._admin_conn() as conn:
            conn.execute(f"INSERT INTO {REGISTRY_TABLE} (name, prefix, kind, expires_at) "
                         "VALUES (%s, %s, 'scratch', now() + %s::interval)", (name, self.name, f"{self.ttl_s} seconds"))
            self._create(conn, name, self.template_name)
        return name

    def _template_id(self) -> str:
        return self.ref_name

    #: SQL naming the schema of the user's tables (a schema per rollout: ``current_schema()``).
    user_schema_sql = "'public'"

    def table_info(self, conn: Any) -> list[TableInfo]:
        schema = self.user_schema_sql
        rows = conn.execute(
            "SELECT c.table_name, c.column_name FROM information_schema.columns c "
            "JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name "
            f"WHERE c.table_schema = {schema} AND t.table_type = 'BASE TABLE' "
            "ORDER BY c.table_name, c.ordinal_position").fetchall()
        keys = conn.execute(
            "SELECT k.table_name, k.column_name FROM information_schema.table_constraints tc "
            "JOIN information_schema.key_column_usage k ON k.constraint_name = tc.constraint_name "
            "AND k.table_schema = tc.table_schema AND k.table_name = tc.table_name "
            f"WHERE tc.table_schema = {schema} AND tc.constraint_type = 'PRIMARY KEY' "
            "ORDER BY k.table_name, k.ordinal_position").fetchall()
        if not conn.info.transaction_status == 0:  # read-only views: end the catalogue read
            conn.rollback()
        columns: dict[str, list[str]] = {}
        for table, column in rows:
            columns.setdefault(table, []).append(column)
        pks: dict[str, list[str]] = {}
        for table, column in keys:
            pks.setdefault(table, []).append(column)
        return [TableInfo(t, tuple(cols), tuple(cols.index(c) for c in pks.get(t, ())))
                for t, cols in sorted(columns.items()) if not t.startswith("_rft_")]

    def _own_objects(self) -> list[str]:
        """What this backend made besides the registered rollouts: the reference and template databases."""
        return [self.ref_name, self.template_name]

    def drop_all(self) -> int:
        self._close_idle()
        dropped = 0
        with self._admin_conn() as conn:
            names = [r[0] for r in conn.execute(f"SELECT name FROM {REGISTRY_TABLE} WHERE prefix = %s",
                                                (self.name,)).fetchall()]
            for name in [*names, *self._own_objects()]:
                self._drop_db(conn, name)
                dropped += 1
            conn.execute(f"DELETE FROM {REGISTRY_TABLE} WHERE prefix = %s", (self.name,))
            if conn.execute("SELECT to_regclass(%s)", (DIGEST_TABLE,)).fetchone()[0] is not None:
                conn.execute(f"DELETE FROM {DIGEST_TABLE} WHERE template = %s", (self.template_name,))
        return dropped

    def _close_idle(self) -> None:
        with self._idle_lock:
            idle, self._idle = list(self._idle.values()), OrderedDict()
        for conn in idle:
            conn.close()
        self._touched.clear()

    def _close(self) -> None:
        self._close_idle()
        if self._admin is not None:
            self._admin.close()
            self._admin = None
