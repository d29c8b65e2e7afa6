"""``PostgresSchemaDatabase``: one PostgreSQL *schema* per rollout, in one shared database.

:class:`PostgresDatabase` gives each rollout a database of its own. A database
is the strongest isolation PostgreSQL has, but every rollout then needs its own
server connection (a connection serves one database), and the first connection
to a fresh database builds its catalogue caches: with 256 rollouts starting at
once that is most of the first answer's time, and the server holds a backend
process per rollout.

Here every rollout lives in the database of the URL, in a schema named as the
database would be (``{name}_r_{sha256[:24]}``). Its tables are copied from the
template schema ``{name}_tpl`` (built once by ``setup`` with ``search_path``
set to it) by a prepared DDL script, read once per process from the catalogue:
``CREATE TABLE ... (LIKE {name}_tpl.t INCLUDING ALL)`` (columns, defaults,
``NOT NULL``/``CHECK``, primary keys, unique constraints and indexes, identity
columns), the rows (``INSERT ... SELECT``), sequences of ``serial`` columns
(created, ``setval`` to the template's value) and foreign keys (added after the
rows, ``NOT VALID``: the rows are the template's, already checked). A schema's
connection sets ``search_path`` to it, so tool code keeps its unqualified SQL;
tool connections are shared by every rollout (a small idle list), not one per
rollout. DDL is transactional in PostgreSQL: the clone, its registry row and a
pool claim (``ALTER SCHEMA ... RENAME``) commit together or not at all.
A rollout's first call whose tool wrote nothing is not measured for ``max_db_bytes`` (a measurement opens
every relation of the schema): the clone's size, measured when it was made, bounds it
(:meth:`PostgresSchemaDatabase.stage_and_measure`).

Isolation: a rollout's unqualified names resolve to its own schema only; its
role could still name another rollout's schema explicitly (all schemas belong
to the URL's role). Use :class:`PostgresDatabase` when tool SQL is not trusted
that far, or when the template needs what a schema copy cannot carry (views,
triggers, rules, row-level policies, sequences not owned by a column,
partitioned tables: refused when the template is built, with the list).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from typing import Any

from ..exceptions import RFTError
from ._base import CALLS_DDL, CALLS_TABLE
from ._connection import pg_classes
from ._postgres import _REGISTRY_DDL, REGISTRY_TABLE, PostgresDatabase, _lock_key

__all__ = ["PostgresSchemaDatabase"]

logger = logging.getLogger("rft_sdk")

#: A new clone's size as :attr:`PostgresSchemaDatabase.size_sql` counts it (its ``search_path`` set), its heaps
#: (tables and their TOAST tables) and the server's block size.
_CLONE_SIZE_SQL = (
    "SELECT coalesce(sum(pg_total_relation_size(d.objid)), 0), count(*) + count(*) FILTER (WHERE c.reltoastrelid <> 0), "
    "current_setting('block_size')::int FROM pg_depend d JOIN pg_class c ON c.oid = d.objid "
    "WHERE d.refclassid = 'pg_namespace'::regclass AND d.refobjid = current_schema()::regnamespace "
    "AND d.refobjsubid = 0 AND d.classid = 'pg_class'::regclass AND c.relkind = 'r'")
#: Set (transaction-local) when a call's transaction opens: a tool's own ``COMMIT`` in SQL text ends it.
_CALL_MARK = "rft.call"
#: A first call's ``_rft_calls`` row, inserted after checking (one statement, in this order) that nothing was
#: written in the call's transaction before it (no transaction id assigned: a row written, even in a savepoint
#: rolled back since, assigns one), that the transaction is still the one the SDK opened, and that no call of
#: the rollout committed before it; returns that check.
_FIRST_INSERT_SQL = (
    f"WITH pre AS MATERIALIZED (SELECT pg_current_xact_id_if_assigned() IS NULL "
    f"AND coalesce(current_setting('{_CALL_MARK}', true), '') = 'on' AND NOT EXISTS (SELECT 1 FROM {CALLS_TABLE}) "
    f"AS clean) INSERT INTO {CALLS_TABLE} (call_id, output, record) SELECT %s, %s, %s FROM pre "
    "RETURNING (SELECT clean FROM pre)")
#: Pages one ``_rft_calls`` row can add besides twice its bytes (TOAST chunks and their index entries): the
#: heap page, index page splits up to a new root, the free space maps an insert creates.
_ROW_PAGES = 32

#: Objects of a template schema that ``CREATE TABLE ... LIKE`` does not carry into a copy.
_UNSUPPORTED_SQL = """
SELECT 'view ' || c.relname FROM pg_class c WHERE c.relnamespace = %(s)s::regnamespace AND c.relkind IN ('v', 'm')
UNION ALL
SELECT 'partitioned table ' || c.relname FROM pg_class c
  WHERE c.relnamespace = %(s)s::regnamespace AND c.relkind = 'p'
UNION ALL
SELECT 'foreign table ' || c.relname FROM pg_class c WHERE c.relnamespace = %(s)s::regnamespace AND c.relkind = 'f'
UNION ALL
SELECT 'trigger ' || t.tgname || ' on ' || c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
  WHERE c.relnamespace = %(s)s::regnamespace AND NOT t.tgisinternal
UNION ALL
SELECT 'rule ' || r.rulename || ' on ' || c.relname FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class
  WHERE c.relnamespace = %(s)s::regnamespace AND c.relkind = 'r'
UNION ALL
SELECT 'policy ' || p.polname || ' on ' || c.relname FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid
  WHERE c.relnamespace = %(s)s::regnamespace
UNION ALL
SELECT 'sequence ' || c.relname || ' (owned by no column)' FROM pg_class c
  WHERE c.relnamespace = %(s)s::regnamespace AND c.relkind = 'S'
  AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = c.oid AND d.deptype IN ('a', 'i'))
"""


class PostgresSchemaDatabase(PostgresDatabase):
    """A schema per rollout in the database of ``url`` (see the module docstring).

    Measured up to 1,024 rollouts starting together (``benchmarks/bench_rollout_db.py``). A release
    waits at most ``unavailable_timeout_s`` for connections still in a transaction on the schema,
    then leaves it to the sweep.

    Args:
        url: libpq URL of the server and database that holds the registry table and every
            rollout's schema. The role needs ``CREATE`` on that database.
        setup: ``setup(conn: psycopg.Connection)`` creating the tables and seed rows with
            unqualified names (``search_path`` is the template schema), run once (the SDK commits).
        max_connections: tool connections (shared by every rollout) this process has open: at most this
            many calls hold one at once, a call beyond waits for one (as :class:`PostgresDatabase`).
        rebuild: rebuild the template schema even when it exists (also one built from another source); not
            needed after an edit of ``setup``'s file (see :class:`PostgresDatabase`).
        unavailable_timeout_s: as :class:`PostgresDatabase`.
        **options: ``seed_files`` (the files ``setup`` reads, whose bytes join the digest: as
            :class:`PostgresDatabase`), and keyword arguments of :class:`RolloutDatabase`: ``name`` (default ``"rft"``: names the
            template and the clones on the server; give each task its own), ``max_live``, ``ttl_s``, ``pool_size``, ``max_pool``, ``pool_window_s``,
            ``pool_half_life_s``, ``sweep_interval_s``,
            ``admission_timeout_s``, ``max_db_bytes`` (``max_db_bytes``
            counts the schema's tables, indexes and TOAST: ``pg_total_relation_size``).

    ``rollout.db`` is a ``psycopg.Connection`` (``async def`` tools: a ``psycopg.AsyncConnection``)
    whose ``search_path`` is the rollout's schema, not in autocommit mode.

    Raises:
        RFTError: psycopg missing; (at start) the template uses what a schema copy cannot carry, or the
            template schema ``{name}_tpl`` was built from another ``setup`` (its COMMENT records the source).
    """

    isolation = "schema"
    source_comment_sql = "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = %s"
    source_comment_kind = "SCHEMA"
    #: The schema's tables found through ``pg_depend`` (indexed on the schema: a table depends on its schema),
    #: not by filtering ``pg_class`` on ``relnamespace`` (no index: a scan of every schema's relations, 38 ms
    #: a call with 1,024 rollouts alive on the 2-core machine, and most of the server's CPU at a batch's start).
    size_sql = ("SELECT coalesce(sum(pg_total_relation_size(d.objid)), 0) FROM pg_depend d "
                "JOIN pg_class c ON c.oid = d.objid WHERE d.refclassid = 'pg_namespace'::regclass "
                "AND d.refobjid = current_schema()::regnamespace AND d.refobjsubid = 0 "
                "AND d.classid = 'pg_class'::regclass AND c.relkind = 'r'")
    user_schema_sql = "current_schema()"

    def __init__(self, url: str, *, setup: Callable[[Any], None], max_connections: int = 64,
                 rebuild: bool = False, unavailable_timeout_s: float = 5.0, **options: Any) -> None:
        super().__init__(url, setup=setup, max_connections=max_connections, rebuild=rebuild,
                         unavailable_timeout_s=unavailable_timeout_s, **options)
        self.template_name = self.ref_name = f"{self.name}_tpl"
        self._script: Any = None  # the clone's DDL, a psycopg.sql.SQL with {dst} and {tpl}
        self._pooled: list[Any] = []  # idle tool connections (any schema)
        self._pooled_lock = threading.Lock()
        self._handed_out = 0  # tool connections handed to calls and not yet handed back
        self._block_size = 8192  # the server's, read when this process makes a clone

    # -- clones are schemas ----------------------------------------------------------------
    def _create(self, conn: Any, name: str, template: str) -> None:
        from psycopg import sql
        if template != self.template_name:
            raise RFTError(f"a schema clone copies {self.template_name!r}, not {template!r}")
        if self._script is None:
            self._script = self._clone_script(conn)
        with conn.transaction():
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(self._ident(name)))
            conn.execute(sql.SQL("SET LOCAL search_path = {}; SET LOCAL synchronous_commit = off").format(
                self._ident(name)))  # a lost clone is cloned again: the registry row commits after it
            conn.execute(self._script)
            size, heaps, block = conn.execute(_CLONE_SIZE_SQL).fetchone()
        # what autovacuum may add to a clone nobody wrote to: each heap's visibility map and free space map
        # (1 + 3 pages, and one more of each per 32,672 and 4,069 heap pages: within 0.1 % of the size)
        self._clone_bytes[name] = int(size) + 5 * int(heaps) * int(block) + int(size) // 1000
        self._block_size = int(block)

    def _rename_sql(self, old: str, new: str) -> Any:
        from psycopg import sql
        return sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(self._ident(old), self._ident(new))

    def _drop_db(self, conn: Any, name: str) -> None:
        """``DROP SCHEMA ... CASCADE``, waiting at most ``unavailable_timeout_s`` for the locks of
        connections still in a transaction on it (unlike a database, a schema cannot end them).

        Raises:
            psycopg.errors.LockNotAvailable: the wait ran out; nothing dropped.
        """
        from psycopg import sql
        with conn.transaction():
            conn.execute("SELECT set_config('lock_timeout', %s, true)", (f"{int(self.unavailable_timeout_s * 1000)}ms",))
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(self._ident(name)))

    def _lock_busy_errors(self) -> tuple[type[Exception], ...]:
        import psycopg.errors
        return (psycopg.errors.LockNotAvailable,)

    def _drop(self, db_id: str) -> bool:
        """Drop the rollout's schema now; when a connection still holds locks on it past the wait (a call
        of another replica in flight), let it expire now instead: the next sweep drops it."""
        try:
            return super()._drop(db_id)
        except self._lock_busy_errors() as exc:
            logger.warning("rollout schema %s is still in use (%s); the next sweep drops it", db_id, exc)
            self._expire_later(db_id, 0.0)
            return True

    def _db_exists(self, conn: Any, name: str) -> bool:
        return conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (name,)).fetchone() is not None

    def _clone_script(self, conn: Any) -> Any:
        """The DDL copying the template schema into the first schema of ``search_path`` (the clone sets
        it), read from the catalogue once per process and run as one query: tables, serial sequences,
        rows, identity values, foreign keys."""
        from psycopg import sql
        tpl = self.template_name
        T = sql.Identifier(tpl)

        def text(ident: str) -> Any:  # a quoted name as an SQL string literal ('"t"'), for regclass casts
            return sql.Literal(sql.Identifier(ident).as_string(conn))

        tables = [r[0] for r in conn.execute(
            "SELECT relname FROM pg_class WHERE relnamespace = %s::regnamespace AND relkind = 'r' ORDER BY relname",
            (tpl,)).fetchall()]
        parts: list[Any] = [sql.SQL("CREATE TABLE {t} (LIKE {T}.{t} INCLUDING ALL)").format(t=sql.Identifier(t), T=T)
                            for t in tables]
        # serial columns: the copied default still names the template's sequence; the copy gets its own
        for table, column, seq in conn.execute(
                "SELECT t.relname, a.attname, s.relname FROM pg_depend d "
                "JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S' JOIN pg_class t ON t.oid = d.refobjid "
                "JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid "
                "WHERE s.relnamespace = %s::regnamespace AND d.deptype = 'a'", (tpl,)).fetchall():
            t, c, q = sql.Identifier(table), sql.Identifier(column), sql.Identifier(seq)
            parts += [sql.SQL("CREATE SEQUENCE {q} OWNED BY {t}.{c}").format(q=q, t=t, c=c),
                      sql.SQL("ALTER TABLE {t} ALTER COLUMN {c} SET DEFAULT nextval({s}::regclass)").format(
                          t=t, c=c, s=text(seq)),
                      sql.SQL("SELECT setval({s}::regclass, last_value, is_called) FROM {T}.{q}").format(
                          s=text(seq), T=T, q=q)]
        for table in tables:
            cols = [r[0] for r in conn.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
                "AND NOT attisdropped AND attgenerated = '' ORDER BY attnum",
                (sql.SQL("{}.{}").format(T, sql.Identifier(table)).as_string(conn),)).fetchall()]
            names = sql.SQL(", ").join(sql.Identifier(c) for c in cols)
            parts.append(sql.SQL("INSERT INTO {t} ({cols}) OVERRIDING SYSTEM VALUE SELECT {cols} FROM {T}.{t}")
                         .format(t=sql.Identifier(table), cols=names, T=T))
        # identity columns: LIKE made the copy's sequence; it goes on from the template's value
        for table, column, seq in conn.execute(
                "SELECT c.relname, a.attname, pg_get_serial_sequence(c.oid::regclass::text, a.attname) "
                "FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
                "WHERE c.relnamespace = %s::regnamespace AND c.relkind = 'r' AND a.attidentity <> ''",
                (tpl,)).fetchall():
            parts.append(sql.SQL("SELECT setval(pg_get_serial_sequence({t}, {c}), last_value, is_called) FROM {q}")
                         .format(t=text(table), c=sql.Literal(column), q=sql.SQL(seq)))
        # foreign keys after the rows: printed with search_path = the template schema, so the references are
        # unqualified and resolve to the copy; NOT VALID, as the rows are the template's, already checked
        with conn.transaction():
            conn.execute("SELECT set_config('search_path', %s, true)", (sql.Identifier(tpl).as_string(conn),))
            fks = conn.execute(
                "SELECT c.relname, k.conname, pg_get_constraintdef(k.oid) FROM pg_constraint k "
                "JOIN pg_class c ON c.oid = k.conrelid WHERE c.relnamespace = %s::regnamespace "
                "AND k.contype = 'f' ORDER BY c.relname, k.conname", (tpl,)).fetchall()
        for table, name, definition in fks:
            parts.append(sql.SQL("ALTER TABLE {t} ADD CONSTRAINT {n} {d} NOT VALID").format(
                t=sql.Identifier(table), n=sql.Identifier(name), d=sql.SQL(definition)))
        return sql.SQL(";\n").join(parts).as_string(conn)

    def unsupported(self, conn: Any) -> list[str]:
        """What the template schema holds that a schema copy would not carry (empty: it fits)."""
        return [r[0] for r in conn.execute(_UNSUPPORTED_SQL, {"s": self.template_name}).fetchall()]

    # -- the template schema ---------------------------------------------------------------
    def _prepare(self) -> None:
        with self._admin_conn() as conn:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key("rft-registry"),))
                conn.execute(_REGISTRY_DDL)
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(f"rft-template-{self.name}"),))
                built = self._fresh_template(conn, log=False)
        if not built:
            self._build_template()
            self.rebuild = False
        with self._admin_conn() as conn:
            problems = self.unsupported(conn)
            if problems:
                raise RFTError(f"the template schema {self.template_name!r} holds what a schema per rollout cannot "
                               f"copy: {', '.join(problems)}; use PostgresDatabase (a database per rollout)")
            self._script = self._clone_script(conn)

    def _build_template(self) -> None:
        import psycopg
        from psycopg import sql
        building = f"{self.name}_b_{uuid.uuid4().hex[:12]}"
        assert self.setup is not None
        with self._admin_conn() as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (_lock_key(f"rft-template-{self.name}"),))
            try:
                if self._fresh_template(conn, log=True):  # another replica built it since _prepare looked
                    return
                conn.execute(sql.SQL("CREATE SCHEMA {}").format(self._ident(building)))
                with psycopg.connect(self._schema_conninfo(building)) as target:
                    self.setup(target)
                    target.execute(CALLS_DDL)
                    target.commit()
                with conn.transaction():
                    self._drop_db(conn, self.template_name)
                    self._rename(conn, building, self.template_name)
                    self._record_source(conn)
                    self._record_digest(conn)
                    # the pool was copied from the old template: drop it
                    for (name,) in conn.execute(f"SELECT name FROM {REGISTRY_TABLE} WHERE prefix = %s "
                                                "AND kind = 'pool'", (self.name,)).fetchall():
                        self._drop_db(conn, name)
                        conn.execute(f"DELETE FROM {REGISTRY_TABLE} WHERE name = %s", (name,))
                self._script = None
            except BaseException:
                self._drop_db(conn, building)
                raise
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (_lock_key(f"rft-template-{self.name}"),))

    # -- connections: shared by every rollout, search_path set per call ---------------------
    def _schema_conninfo(self, schema: str, *, read_only: bool = False) -> str:
        from psycopg.conninfo import conninfo_to_dict
        options = f"-c search_path={schema}" + (" -c default_transaction_read_only=on" if read_only else "")
        dbname = conninfo_to_dict(self.url).get("dbname") or "postgres"
        return self._conninfo(str(dbname), options=options)

    def connect(self, db_id: str, *, read_only: bool = False) -> Any:
        if read_only:
            sync_cls, _ = pg_classes()
            return sync_cls.connect(self._schema_conninfo(db_id, read_only=True))
        conn, pooled = self._checkout(db_id)
        if pooled:
            try:  # session-level: a tool's own COMMIT in SQL text does not drop it
                conn.execute("SELECT set_config('search_path', %s, false)", (db_id,))
            except BaseException:
                self.checkin(db_id, conn)
                raise
        return conn

    def _open_sync(self, db_id: str, call_id: str, fresh: bool = False) -> tuple[Any, Any]:
        """As :meth:`RolloutDatabase._open_sync`, in two round trips (psycopg's ``BEGIN``, then ``search_path``,
        the call's mark and its savepoint together); a ``fresh`` database's size measured when it was cloned
        goes with the connection to :meth:`stage_and_measure`."""
        from psycopg import sql
        conn, _ = self._checkout(db_id)
        conn.rft_first_bytes = self._first_bytes.pop(db_id, None) if fresh else None
        setup = sql.SQL("SELECT set_config('search_path', {}, false), set_config({}, 'on', true)").format(
            sql.Literal(db_id), sql.Literal(_CALL_MARK))
        return self._begin_call(db_id, call_id, fresh, conn, setup.as_string)

    def stage_and_measure(self, conn: Any, params: tuple[str, str, str]) -> int:
        """The call's row and the schema's size after it. A rollout's first call (its clone made by this
        process) whose tool wrote nothing is not measured: its size is at most the clone's size when it was
        made (plus what autovacuum may add) plus what one ``_rft_calls`` row can add (twice its bytes and
        :data:`_ROW_PAGES` pages), returned as long as that bound is within ``max_db_bytes``. Measuring
        opened every relation of a schema the connection had not seen: 2.7 ms of the server's 4.4 ms of CPU
        per first answer at 1,024 rollouts starting together (issue 40). Anything else is measured; a
        concurrent call of the same rollout that measured before this row was written is the one case the
        bound misses (by at most this row's bound)."""
        known, conn.rft_first_bytes = getattr(conn, "rft_first_bytes", None), None
        if known is None:
            return super().stage_and_measure(conn, params)
        bound = known + 2 * sum(len(p.encode()) for p in params) + _ROW_PAGES * self._block_size
        (clean,) = conn.execute(_FIRST_INSERT_SQL, params).fetchone()
        if clean and bound <= self.max_db_bytes:
            return int(bound)
        return int(conn.execute(self.size_sql).fetchone()[0]) * self.size_unit

    def _checkout(self, db_id: str) -> tuple[Any, bool]:
        """``(an idle tool connection (any schema), True)`` or ``(a new one to db_id's schema, False)``,
        counted as handed out."""
        sync_cls, _ = pg_classes()
        conn = None
        with self._pooled_lock:
            while self._pooled and conn is None:
                candidate = self._pooled.pop()
                if not candidate.closed and not candidate.broken:
                    conn = candidate
            self._handed_out += 1
        if conn is not None:
            return conn, True
        try:
            return sync_cls.connect(self._schema_conninfo(db_id)), False
        except BaseException:
            with self._pooled_lock:
                self._handed_out -= 1
            raise

    def checkin(self, db_id: str, conn: Any) -> None:
        """Keep ``conn`` idle for the next call while the connections handed out plus the idle ones stay within
        ``max_connections``. Counted by connection, not by call slot: a slot is still held while its call hands
        the connection back, and counting slots closed most connections a batch handed back (at 1,024 rollouts
        in flight nearly every call opened a new server connection: a backend process started, its catalogue
        caches built from nothing, and ended)."""
        with self._pooled_lock:
            self._handed_out = max(0, self._handed_out - 1)
            if conn.closed or conn.broken:
                return
            # a call whose rollback failed drops its connection unreturned: never count more than the slots held
            if len(self._pooled) + min(self._handed_out, self.slots_held) < self.max_connections:
                self._pooled.append(conn)
                return
        conn.close()

    async def aconnect(self, db_id: str) -> Any:
        _, async_cls = pg_classes()
        return await async_cls.connect(self._schema_conninfo(db_id))

    def reclaim(self, db_id: str) -> None:
        """``VACUUM`` the rollout schema's tables (the space of a refused call's rows)."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self._schema_conninfo(db_id), autocommit=True) as conn:
            tables = [r[0] for r in conn.execute(
                "SELECT relname FROM pg_class WHERE relnamespace = %s::regnamespace AND relkind = 'r'",
                (db_id,)).fetchall()]
            if tables:
                conn.execute(sql.SQL("VACUUM {}").format(sql.SQL(", ").join(
                    sql.Identifier(db_id, t) for t in tables)))

    def _forget(self, db_id: str) -> None:
        self._touched.pop(db_id, None)  # connections are not bound to a schema: nothing to close
        self._first_bytes.pop(db_id, None)
        self._clone_bytes.pop(db_id, None)

    def _close_idle(self) -> None:
        with self._pooled_lock:
            idle, self._pooled = self._pooled, []
        for conn in idle:
            conn.close()
        super()._close_idle()

    def _own_objects(self) -> list[str]:
        """The template schema (no reference database: the template is the reference)."""
        return [self.template_name]
