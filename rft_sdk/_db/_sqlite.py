"""``SQLiteDatabase``: one SQLite file per rollout, cloned from a template file.

Every database has a folder of its own, ``<dir>/<name>/`` (``dir=`` given; by default
``$RFT_DB_DIR/<name>/``, else ``<temp dir>/rft-db-<name>/``), shared by the worker processes of one host
that serve the same database (same ``name``, same ``dir``); databases of other names in the same ``dir`` never
see its files. Layout of that folder (:attr:`SQLiteDatabase.dir`)::

    template.db           the private template (built once from ``template`` or ``setup``)
    template.source       what built it (``setup=``'s file and function name, or ``template=``'s path): a
                          database of this name and folder built from another source is refused at start
    template.digest       a digest of that source (the SHA-256 of ``setup``'s file, or ``template=``'s size
                          and mtime): another digest at start rebuilds the template (the seed was edited)
    r-<sha256 prefix>.db  one rollout's database; its mtime is the last tool call
    pool-<gen>-<uuid>.db  warm clones of the template of generation ``<gen>``; a rollout claims one of
                          the current generation by renaming it (atomic)
    <db>-journal          a database's rollback journal (``journal_mode=PERSIST``: kept between calls,
                          its header zeroed at each commit); a warm clone gets an empty one when it is
                          made, renamed with it when claimed (see "Journal files" below)
    gold-<uuid>.db        scratch clones of gold replays
    .tmp-<uuid>-<name>    a clone being written (renamed to <name> when complete); one named
                          ``.tmp-<uuid>-r-*.db`` is a new rollout's reserved slot
    .lock                 ``flock`` held while admitting a new rollout (the bound is exact); its
                          first bytes hold ``"<live> <pool>"``, upper bounds of the two counts, then
                          the template's generation (blank while a rebuild replaces the template)

The generation is the first 16 hex digits of the template file's SHA-256. A
warm clone is named after the generation it was cloned from and only a clone of
the current one is ever claimed: a rebuild (``rebuild=True`` after the seed
changed) blanks the generation, replaces the template, writes the new
generation and removes the older clones, all under the ``flock``; a refill
reads the generation under the ``flock`` before it clones and publishes its
clone only if the generation is still the same (else it deletes it), so a clone
of an old template never enters the pool, whichever process made it.

A file whose mtime is older than ``ttl_s`` is expired and removed by the
sweep (with its ``-journal``/``-wal``/``-shm``); temporary files of a clone
that crashed go the same way. The folder is the record of what exists: a
process killed at any point leaves only files the sweep recognises.

Admission is O(1) however many rollouts are alive: the counts in ``.lock`` are
kept at or above the truth (a slot is counted before its file appears, and
uncounted after its file is gone, both under the ``flock``), so a count under
``max_live`` admits without listing the folder; at the bound (or when the
counts are unreadable) the folder is listed once and the counts rewritten
exactly. A process keeps the pool files it has seen in memory and claims them
by renaming (a name another process claimed first fails with
``FileNotFoundError`` and the next is tried); it lists the folder again only
when its names run out while the pool count says clones may remain. The
clone itself (a cold admission's, or the refill's) is written outside the
``flock``: the lock covers only the counts, a rename and the reservation.

Journal files: creating a file costs 0.2-0.9 ms of kernel CPU on this
project's ext4 development machine (reopening one: 3 µs), and SQLite creates
its rollback journal at the first write of every transaction in the default
``journal_mode=DELETE``, deleting it at commit. So a read-write connection
uses ``journal_mode=PERSIST`` (same atomicity and crash recovery: the commit
zeroes the journal's header instead of deleting the file, and a journal with a
zeroed header is never rolled back; https://sqlite.org/pragma.html#pragma_journal_mode),
and the pool makes each warm clone's empty ``-journal`` ahead of demand, so a
rollout's first call creates no file. An empty journal is never hot (SQLite
reads its first byte). The claim renames the clone first (the claim itself),
then its journal; a journal left without its database (a crash between the two
renames, or during a refill) is removed by the sweep once older than
``ttl_s``. A journal is at most as large as the pages one call changed; it is
not counted in ``max_db_bytes`` (nor was the transient one before).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import logging
import os
import sqlite3
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..exceptions import RFTError
from ._base import CALLS_DDL, CALLS_TABLE, DatabaseLimitError, RolloutDatabase
from ._clone import clone_file
from ._connection import SQLiteConnection
from ._diff import TableInfo, quote
from ._source import file_digest, same_source, seed_file_paths, seed_label, setup_digest, stale_reason, template_source

__all__ = ["SQLiteDatabase"]

logger = logging.getLogger("rft_sdk")

_JOURNAL = "-journal"
#: Seconds a rollout connection waits for another connection's lock on its file (a grader reading it).
_BUSY_TIMEOUT_S = 30.0
#: A call that changed more rows than this commits in a worker thread, not on the event loop: its commit
#: writes that many pages or more, which must not hold the loop (``SQLiteDatabase.commit_nowait``).
_LOOP_COMMIT_MAX_ROWS = 64
_SIDE_FILES = (_JOURNAL, "-wal", "-shm")
#: Bytes at the start of ``.lock`` that hold the counts (``"<live> <pool>"``, space-padded).
_COUNTS_BYTES = 40
#: Hex digits of the template's generation (its SHA-256 prefix), stored in ``.lock`` after the counts.
_GEN_HEX = 16


def template_generation(path: Path) -> str:
    """The generation of the template file ``path``: the first :data:`_GEN_HEX` hex digits of the SHA-256 of
    its bytes (read in 1 MiB chunks; O(file size)). Raises ``OSError`` when it cannot be read."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:_GEN_HEX]


class SQLiteDatabase(RolloutDatabase):
    """A database per rollout in SQLite files (see the module docstring and :class:`RolloutDatabase`).

    Args:
        template: an existing SQLite file holding the schema and seed data (read
            with the backup API once: it may be in use), or ``None`` with ``setup``.
        setup: ``setup(conn: sqlite3.Connection)`` creating the schema and seed
            rows in an empty database, run once (the SDK commits).
        name: the database's name (default ``"rft"``; 1-20 lower-case letters, digits or ``_``), which
            picks its folder under ``dir``: give each task its own.
        dir: folder shared by databases: this one's files go to ``<dir>/<name>/`` (default: the folder
            ``$RFT_DB_DIR/<name>``, else ``<temp dir>/rft-db-<name>``); every worker of one host serving
            this database must use the same. Databases of different ``name`` in one ``dir`` are kept apart.
        rebuild: rebuild the private template even when one exists; the warm clones of the old template
            are removed and never handed out. Not needed after an edit of ``setup``'s file (any change to it,
            a seed constant included: its SHA-256 is recorded in ``template.digest``) or of the ``template=``
            file (its size and mtime): the template is then rebuilt at start, the same way, with a warning
            naming the source. Needed after a change the digest cannot see: data ``setup`` reads from
            another file (a JSON, a CSV, another module), a ``template=`` file replaced by a copy of the same
            size and mtime. A template built by an rft-sdk without ``template.digest`` is rebuilt once.
        seed_files: with ``setup``, the files it reads (a JSON or CSV of fixtures, a ``.sql`` script, a
            module it imports), as a list of ``str`` or ``os.PathLike`` (a relative path is resolved against
            the current directory now: prefer ``Path(__file__).parent / "fixture.json"``). Their bytes join
            the digest beside ``setup``'s file (each read whole when the database is constructed, in every
            process), so an edit of one rebuilds the template at the next start, as an edit of ``setup``'s
            file does. Default ``()``: the digest is ``setup``'s file alone.
        **options: keyword arguments of :class:`RolloutDatabase`: ``max_live``,
            ``ttl_s``, ``pool_size``, ``max_pool``, ``pool_window_s``, ``pool_half_life_s``,
            ``sweep_interval_s``, ``admission_timeout_s``, ``max_db_bytes``.

    ``rollout.db`` is a ``sqlite3.Connection`` (``isolation_level=None``,
    ``check_same_thread=False``), also for ``async def`` tools (SQLite has no
    async driver in the standard library; a local file answers in microseconds).

    Raises:
        ValueError: neither or both of ``template`` and ``setup``; ``seed_files`` with ``template`` (that file's
            own size and mtime are its digest), or naming something that is not a file.
        TypeError: ``seed_files`` one path instead of a list of them.
        RFTError: at start, when ``<dir>/<name>/template.db`` was built from another ``setup``/``template``
            (two different tasks with one ``name`` and ``dir``); ``rebuild=True`` replaces it.
    """

    backend = "sqlite"
    clone_method = "unknown"
    #: The one-hop calls of sync tools (a new rollout's claim or clone, then the open, the tool and the stage:
    #: ``rft_sdk._db._call``) on one thread of their own: their work (Python, and SQLite statements that
    #: drop the GIL around each step) never waits on another such thread for the GIL, and the calls that
    #: need the shared threads (a commit that could not run on the loop) get them. Measured at 1,024
    #: rollouts starting together with a warm pool on 2 cores (issue 40; docs/database.md, "one admission
    #: thread"): CPU per first answer, medians, 0.94-1.04 ms on one thread against 1.21-1.75 ms on 4, p99
    #: 0.97-1.06 s against 1.05-1.34 s (the tool's own wall time in the hop: p50 0.16 ms against 1.4 ms,
    #: the rest waiting for the GIL). A tool that waits in that thread (``shared_hop_wait_s``) leaves it.
    admission_threads = 1
    #: A SQLite tool's statements run on the CPU (pages from the OS cache); 2 ms off the CPU is a tool
    #: waiting on something else (measured in the 1,024 batch: the whole tool at most 0.38 ms of wall time).
    shared_hop_wait_s = 0.002
    #: The byte budget's query: the page count (one pragma; times :attr:`size_unit`, the template's page size,
    #: which every clone shares).
    size_sql = "PRAGMA page_count"
    unavailable_errors = (sqlite3.OperationalError, OSError)  # locked, unreadable, disk full

    def is_statement_error(self, exc: BaseException) -> bool:
        """SQLite's ``OperationalError`` also means a bad statement (``no such table``): only a locked,
        unreadable or full database is unavailability."""
        text = str(exc).lower()
        return isinstance(exc, sqlite3.OperationalError) and not any(
            word in text for word in ("locked", "unable to open", "disk i/o", "disk is full", "readonly"))

    def __init__(self, template: str | os.PathLike[str] | None = None, *,
                 setup: Callable[[sqlite3.Connection], None] | None = None, name: str = "rft",
                 dir: str | os.PathLike[str] | None = None, rebuild: bool = False,
                 seed_files: Iterable[str | os.PathLike[str]] = (), **options: Any) -> None:
        super().__init__(name=name, **options)
        if (template is None) == (setup is None):
            raise ValueError("SQLiteDatabase needs exactly one of template= (an SQLite file) or setup= (a function)")
        self.seed_files = seed_file_paths(seed_files, "SQLiteDatabase")
        if self.seed_files and template is not None:
            raise ValueError("SQLiteDatabase(seed_files=...) goes with setup=: a template= file's own size and mtime "
                             "are its digest")
        self.source = Path(template) if template is not None else None
        self.setup = setup
        self.rebuild = rebuild
        if dir is None:
            base = os.environ.get("RFT_DB_DIR")
            folder = Path(base) / self.name if base else Path(tempfile.gettempdir()) / f"rft-db-{self.name}"
            self.parent_dir: Path | None = None
        else:  # a folder per name: two databases of different names in one dir never share a template
            self.parent_dir = Path(dir)
            folder = self.parent_dir / self.name
        #: The folder of this database's files (``<dir>/<name>``, or the default above).
        self.dir = folder
        self.template_path = self.dir / "template.db"
        self.source_path = self.dir / "template.source"
        self.source_id = template_source(str(self.source.resolve()) if self.source is not None else None, setup)
        self.digest_path = self.dir / "template.digest"
        # setup's file read now, next to the import that loaded the code setup() will run
        self._setup_digest = setup_digest(setup, self.seed_files) if setup is not None else ""
        self._thread_lock = threading.Lock()
        self._lock_fd: int | None = None
        self._pool_names: list[str] = []  # pool files this process saw (claimed by rename; may be stale)
        self._gen = ""  # the template's generation as this process last read it from .lock

    def ping(self) -> None:
        """The template answers a read, and its folder takes new files (a new rollout clones there).

        Raises:
            OSError: the folder is gone or not writable; sqlite3.OperationalError: the template does not open.
        """
        if not os.access(self.dir, os.W_OK | os.X_OK):
            raise OSError(errno.EACCES, f"cannot create files in {str(self.dir)!r}")
        super().ping()

    def startup_hint(self) -> str:
        """Where the files go and how to move them (the start-up error of an unwritable folder)."""
        return (f"its files go to {str(self.dir)!r}: set RFT_DB_DIR to a writable folder (each database uses "
                "RFT_DB_DIR/<name>) or pass SQLiteDatabase(dir=...) (files in <dir>/<name>)")

    # -- files -----------------------------------------------------------------------------
    def _path(self, db_id: str) -> Path:
        return self.dir / f"{db_id}.db"

    def db_id_for(self, trace_id: str) -> str:
        return "r-" + super().db_id_for(trace_id).rsplit("_", 1)[1]

    @contextlib.contextmanager
    def _dir_lock(self) -> Iterator[None]:
        """Exclusive across processes (``flock`` on ``.lock``) and across this process's threads (a
        ``flock`` belongs to the open file, which the threads share: a thread lock comes first)."""
        with self._thread_lock:
            if self._lock_fd is None:
                self._lock_fd = os.open(self.dir / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    def _listing(self) -> tuple[int, list[str]]:
        """``(live rollout files and reserved slots, pool file names of the current generation)`` (the lock
        held): one ``listdir`` (O(files), in C; no per-file stat)."""
        names = os.listdir(self.dir)
        live = sum(1 for n in names if n.endswith(".db") and (
            n.startswith("r-") or (n.startswith(".tmp-") and n[38:].startswith("r-"))))
        prefix = self._pool_prefix()
        return live, [n for n in names if n.startswith(prefix) and n.endswith(".db")] if prefix else []

    def _read_gen(self) -> str:
        """The template's generation from ``.lock`` (held); ``""`` while unwritten or being rebuilt."""
        assert self._lock_fd is not None
        raw = os.pread(self._lock_fd, _GEN_HEX, _COUNTS_BYTES).decode("ascii", "replace")
        self._gen = raw if len(raw) == _GEN_HEX and all(c in "0123456789abcdef" for c in raw) else ""
        return self._gen

    def _write_gen(self, gen: str) -> None:
        assert self._lock_fd is not None
        os.pwrite(self._lock_fd, gen.encode("ascii").ljust(_GEN_HEX), _COUNTS_BYTES)
        self._gen = gen

    def _pool_prefix(self) -> str:
        """``pool-<gen>-``: the names of the clones that may be claimed (the lock held); ``""``: none may."""
        gen = self._read_gen()
        return f"pool-{gen}-" if gen else ""

    def _drop_stale_pool(self) -> int:
        """Remove the warm clones of any other generation than the current one (the lock held); the number
        removed. The caller recounts."""
        prefix = self._pool_prefix()
        removed = 0
        for n in os.listdir(self.dir):
            if n.startswith("pool-") and n.endswith(".db") and not (prefix and n.startswith(prefix)):
                removed += int(self._remove(self.dir / n))
        return removed

    def _read_counts(self) -> tuple[int, int] | None:
        """``(live, pool)`` upper bounds from ``.lock`` (held), or ``None`` when unwritten or unreadable."""
        assert self._lock_fd is not None
        raw = os.pread(self._lock_fd, _COUNTS_BYTES, 0).split()
        try:
            live, pool = int(raw[0]), int(raw[1])
        except (IndexError, ValueError):
            return None
        return (live, pool) if live >= 0 and pool >= 0 else None

    def _write_counts(self, live: int, pool: int) -> None:
        assert self._lock_fd is not None
        os.pwrite(self._lock_fd, f"{max(0, live)} {max(0, pool)}".encode().ljust(_COUNTS_BYTES), 0)

    def _recount(self) -> tuple[int, int]:
        """List the folder (the lock held): rewrite the counts exactly and this process's pool names."""
        live, pool = self._listing()
        self._pool_names = pool
        self._write_counts(live, len(pool))
        return live, len(pool)

    def _prepare(self) -> None:
        self._warn_old_layout()
        self.dir.mkdir(parents=True, exist_ok=True)
        with self._dir_lock():  # every worker of a start in turn: the first rebuilds, the next find it fresh
            reuse = self.template_path.exists() and not self.rebuild
            if reuse:
                self._check_source()
                stale = self._stale_reason()
                if stale is not None:  # rebuilt as rebuild=True does (the old warm clones removed)
                    logger.warning("rebuilding the SQLite template %s: %s", self.template_path, stale)
                    reuse = False
            if reuse:
                if not self._read_gen():  # a .lock of an older version, or a rebuild that crashed midway
                    self._write_gen(template_generation(self.template_path))
                    self._drop_stale_pool()
                    self._recount()
            else:
                self._build_template()
        conn = sqlite3.connect(f"file:{self.template_path}?mode=ro", uri=True)
        try:
            self.size_unit = int(conn.execute("PRAGMA page_size").fetchone()[0])
        finally:
            conn.close()

    def _warn_old_layout(self) -> None:
        """Before the folder per name, ``dir=`` held the files itself: say once that they are no longer used."""
        if self.parent_dir is not None and (self.parent_dir / "template.db").is_file() \
                and (self.parent_dir / ".lock").is_file() and not self.dir.exists():
            logger.warning("%s holds SQLite rollout files of an older rft-sdk (template.db, .lock, r-*.db, "
                           "pool-*.db): they are no longer used; %r keeps its files in %s (remove the old ones)",
                           self.parent_dir, self.name, self.dir)

    def _check_source(self) -> None:
        """The existing template was built from this database's ``setup``/``template`` (the lock held).

        Raises:
            RFTError: ``template.source`` names another one: two tasks share ``name`` and ``dir``.
        """
        try:
            recorded = self.source_path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:  # built by an older version: adopt it
            self.source_path.write_text(self.source_id + "\n", encoding="utf-8")
            return
        if same_source(recorded, self.source_id):
            if recorded != self.source_id:
                self.source_path.write_text(self.source_id + "\n", encoding="utf-8")
            return
        raise RFTError(
            f"the SQLite template {str(self.template_path)!r} was built from {recorded}, not from "
            f"{self.source_id}: two different databases share name={self.name!r} in one folder. Give each its "
            "own name= (or dir=); if this is the same task with its setup renamed, pass rebuild=True once")

    def _digest(self) -> str:
        """The digest of what builds the template now (``""``: unknown)."""
        return file_digest(self.source) if self.source is not None else self._setup_digest

    def _stale_reason(self) -> str | None:
        """Why the existing template, built from this source, must be rebuilt (its recorded digest differs from
        :meth:`_digest`, or none was recorded), or ``None`` (the lock held)."""
        try:
            recorded: str | None = self.digest_path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            recorded = None
        return stale_reason(recorded, self._digest(), seed_label(self.source_id, self.seed_files))

    def _build_template(self) -> None:
        """Write ``template.db`` from ``template`` or ``setup`` and publish its generation (the folder's lock
        held); the pool's clones of an older template are removed."""
        tmp = self.dir / f".tmp-{uuid.uuid4().hex}-template.db"
        digest = self._digest()  # before the build: an edit during it is seen at the next start
        try:
            conn = sqlite3.connect(tmp, isolation_level=None)
            try:
                if self.source is not None:
                    if not self.source.exists():
                        raise RFTError(f"SQLite template {str(self.source)!r} does not exist")
                    source = sqlite3.connect(f"file:{self.source}?mode=ro", uri=True)
                    try:
                        source.backup(conn)
                    finally:
                        source.close()
                else:
                    assert self.setup is not None
                    conn.execute("BEGIN")
                    self.setup(conn)
                    if conn.in_transaction:
                        conn.execute("COMMIT")
                conn.execute("PRAGMA journal_mode=DELETE")
                conn.execute(CALLS_DDL)
                conn.execute("VACUUM")
            finally:
                conn.close()
            gen = template_generation(tmp)
            self._write_gen("")  # no clone is claimed or published while the template is replaced
            os.replace(tmp, self.template_path)
            self.source_path.write_text(self.source_id + "\n", encoding="utf-8")
            if digest:  # after the template: a crash in between leaves the old digest (rebuilt again)
                self.digest_path.write_text(digest + "\n", encoding="utf-8")
            else:
                self.digest_path.unlink(missing_ok=True)
            self._write_gen(gen)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self._drop_stale_pool()  # cloned from the old template: never handed out
        self._recount()
        self.rebuild = False

    def _clone_to(self, path: Path, tmp: Path | None = None, *, replace: bool = True) -> str:
        method = clone_file(self.template_path, path, tmp=tmp, replace=replace)
        self.clone_method = method
        return method

    def _exists(self, trace_id: str) -> str | None:
        db_id = self.db_id_for(trace_id)
        return db_id if self._path(db_id).exists() else None

    def _ensure(self, trace_id: str) -> tuple[str, str | None]:
        db_id = self.db_id_for(trace_id)
        path = self._path(db_id)
        if path.exists():
            with contextlib.suppress(FileNotFoundError):
                os.utime(path)
                return db_id, None
        with self._dir_lock():
            if path.exists():
                return db_id, None
            counts = self._read_counts()
            if counts is None or counts[0] >= self.max_live:
                counts = self._recount()
            live, pool = counts
            if live >= self.max_live:
                self.metrics.set_counts({"live": live, "pool": pool})
                raise DatabaseLimitError(f"{live} rollout databases are alive (max_live={self.max_live})")
            self._write_counts(live + 1, pool)  # counted before the file appears: the count stays an upper bound
            relisted, prefix = False, self._pool_prefix()
            while True:
                while self._pool_names:
                    pooled = self._pool_names.pop()
                    if not prefix or not pooled.startswith(prefix):  # another template's clone: never claimed
                        continue
                    try:
                        os.rename(self.dir / pooled, path)  # claimed: no other process can rename it too
                    except FileNotFoundError:  # claimed by another process first
                        continue
                    self._write_counts(live + 1, pool - 1)
                    os.utime(path)
                    with contextlib.suppress(FileNotFoundError):  # none made (older version): SQLite makes one
                        os.rename(self.dir / (pooled + _JOURNAL), str(path) + _JOURNAL)
                    return db_id, "pool"
                if not pool or relisted:
                    break
                _, self._pool_names = self._listing()  # the names this process knew are gone: the folder's
                pool, relisted = len(self._pool_names), True
            if pool:  # listed under this lock and none left: the pool is empty
                self._write_counts(live + 1, 0)
            reserved = self.dir / f".tmp-{uuid.uuid4().hex}-{path.name}"  # the slot, counted by a recount too
            reserved.touch()
        try:
            self._clone_to(path, reserved, replace=False)  # outside the lock: other admissions go on
        except FileExistsError:  # another process made this rollout's database meanwhile: it is the one
            with self._dir_lock():
                self._uncount(live=1)
            return db_id, None
        except BaseException:
            with self._dir_lock():
                reserved.unlink(missing_ok=True)
                self._uncount(live=1)
            raise
        return db_id, "cold"

    def _uncount(self, live: int = 0, pool: int = 0) -> None:
        """Lower the counts after files were removed (the lock held)."""
        counts = self._read_counts()
        if counts is not None:
            self._write_counts(counts[0] - live, counts[1] - pool)

    def connect(self, db_id: str, *, read_only: bool = False) -> Any:
        path = self._path(db_id) if db_id != "template" else self.template_path
        if read_only:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None,
                                   check_same_thread=False, factory=SQLiteConnection)
        else:
            if not path.exists():
                raise RFTError(f"rollout database {db_id} does not exist (expired or dropped)")
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, factory=SQLiteConnection,
                                   timeout=_BUSY_TIMEOUT_S)
            conn.execute("PRAGMA synchronous=OFF")  # a scratch copy: a killed process loses nothing, a power cut the run
            conn.execute("PRAGMA journal_mode=PERSIST")  # no file created per transaction (module docstring)
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    def commit_nowait(self, db_id: str, conn: Any) -> bool:
        """Commit on the event loop when it need not wait: ``COMMIT`` with the busy timeout at 0 (a scratch
        file with ``synchronous=OFF``: no fsync, a few page writes); the connection is closed then. ``False``
        when another connection (a grader reading the file) holds a lock: the transaction stays open, as
        SQLite leaves it after ``SQLITE_BUSY`` (https://sqlite.org/lang_transaction.html), the busy timeout
        is restored, and the caller commits in a worker thread; ``False`` too, untried, when the call changed
        more than ``_LOOP_COMMIT_MAX_ROWS`` rows (a large transaction's page writes stay off the loop).
        Measured at 1,024 first calls (issue 40): one thread hop less per call.

        Raises:
            sqlite3.Error: any other failure of the commit (the caller rolls back).
        """
        if conn.total_changes > _LOOP_COMMIT_MAX_ROWS:  # a large transaction: its page writes go off the loop
            return False
        conn.execute("PRAGMA busy_timeout=0")
        try:
            conn.rft_end(True)
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc).lower() or not conn.in_transaction:  # SQLITE_BUSY / SQLITE_LOCKED
                raise
            conn.execute(f"PRAGMA busy_timeout={int(_BUSY_TIMEOUT_S * 1000)}")
            return False
        self.checkin(db_id, conn)
        return True

    def _remove(self, path: Path) -> bool:
        existed = False
        for suffix in ("", *_SIDE_FILES):
            with contextlib.suppress(FileNotFoundError):
                Path(str(path) + suffix).unlink()
                existed = existed or suffix == ""
        return existed

    def _drop(self, db_id: str) -> bool:
        if not db_id.startswith("r-"):
            return self._remove(self._path(db_id))
        with self._dir_lock():  # removed and uncounted together: a recount in between would undercount
            existed = self._remove(self._path(db_id))
            if existed:
                self._uncount(live=1)
        return existed

    def _expire_later(self, db_id: str, after_s: float) -> None:
        when = time.time() + after_s - self.ttl_s
        with contextlib.suppress(FileNotFoundError):
            os.utime(self._path(db_id), (when, when))

    def _sweep(self) -> int:
        if not self.dir.exists():
            return 0
        cutoff = time.time() - self.ttl_s
        dropped = 0
        for path in [*self.dir.glob("r-*.db"), *self.dir.glob("gold-*.db"), *self.dir.glob(".tmp-*")]:
            try:
                if path.stat().st_mtime < cutoff:
                    dropped += int(self._remove(path) and path.name.startswith("r-"))
            except FileNotFoundError:
                continue
        for journal in self.dir.glob(f"*.db{_JOURNAL}"):  # left without its database (module docstring)
            with contextlib.suppress(FileNotFoundError):
                if journal.stat().st_mtime < cutoff and not Path(str(journal)[:-len(_JOURNAL)]).exists():
                    journal.unlink()
        with self._dir_lock():  # the files the sweep removed (and any removed by hand) uncounted
            self._drop_stale_pool()
            self._recount()
        return dropped

    def _fill_pool(self) -> int:
        cloned = 0
        now = time.time()
        for pooled in self.dir.glob("pool-*.db"):  # still wanted: keep the sweep off them
            with contextlib.suppress(FileNotFoundError):
                os.utime(pooled, (now, now))
        with self._dir_lock():
            self._recount()  # one listing per pass, not per clone
        while not self._stop.is_set() and self.refill_may_run():
            with self._dir_lock():  # every process fills the one pool
                counts = self._read_counts()
                prefix = self._pool_prefix()  # the generation this clone will be of
                if counts is None or not prefix or counts[1] >= self.pool_target():
                    break
            name = f"{prefix}{uuid.uuid4().hex}.db"
            tmp = self.dir / f".tmp-{uuid.uuid4().hex}-{name}"
            journal = self.dir / (name + _JOURNAL)
            t0 = time.perf_counter()
            try:
                self._clone_to(tmp)  # outside the lock: admissions go on meanwhile
                journal.touch()  # empty: its claim's first write creates no file (module docstring)
                self.sizer.prepared(time.perf_counter() - t0)
                with self._dir_lock():  # appears and is counted together
                    if self._pool_prefix() != prefix:  # the template was rebuilt meanwhile: an old clone
                        tmp.unlink(missing_ok=True)
                        journal.unlink(missing_ok=True)
                        continue
                    os.replace(tmp, self.dir / name)
                    counts = self._read_counts()
                    if counts is not None:
                        self._write_counts(counts[0], counts[1] + 1)
                    self._pool_names.append(name)
            except BaseException:
                tmp.unlink(missing_ok=True)
                if not (self.dir / name).exists():
                    journal.unlink(missing_ok=True)
                raise
            cloned += 1
        return cloned

    def _counts(self) -> dict[str, int]:
        if not self.dir.exists():
            return {"live": 0, "pool": 0}
        names = os.listdir(self.dir)  # one listing: no Path object per file
        prefix = f"pool-{self._gen}-" if self._gen else ""  # the generation last read (no lock here)
        return {"live": sum(1 for n in names if n.startswith("r-") and n.endswith(".db")),
                "pool": sum(1 for n in names if prefix and n.startswith(prefix) and n.endswith(".db"))}

    def _scratch(self) -> str:
        db_id = f"gold-{uuid.uuid4().hex}"
        self._clone_to(self._path(db_id))
        return db_id

    def _template_id(self) -> str:
        return "template"

    def table_info(self, conn: Any) -> list[TableInfo]:
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        tables = []
        for name in names:
            if name == CALLS_TABLE or name.startswith("_rft_"):
                continue
            info = conn.execute(f"PRAGMA table_info({quote(name)})").fetchall()
            columns = tuple(row[1] for row in info)
            pk = sorted((row[5], i) for i, row in enumerate(info) if row[5])
            tables.append(TableInfo(name, columns, tuple(i for _, i in pk)))
        return tables

    def drop_all(self) -> int:
        dropped = 0
        if self.dir.exists():
            for path in list(self.dir.iterdir()):
                if path.name.endswith(".db"):
                    dropped += int(self._remove(path))
                elif path.name.startswith(".tmp-") or path.name.endswith(f".db{_JOURNAL}"):
                    path.unlink(missing_ok=True)
            with self._dir_lock():
                self._recount()
        return dropped

    def _close(self) -> None:
        with self._thread_lock:
            if self._lock_fd is not None:
                os.close(self._lock_fd)
                self._lock_fd = None
