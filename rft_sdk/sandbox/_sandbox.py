"""Per-rollout sandboxes: one working tree per ``trace_id``; commands run in it
contained (``_sandbox_run``), files read and written without following links
(``_sandbox_fs``), trees removed when graded, when unused for ``ttl_s``, at
exit, and — for a server killed with ``kill -9`` — when the next one starts.

See ``docs/sandbox.md`` for what is enforced on which host.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import hashlib
import json
import os
import tempfile
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import anyio.to_thread

from . import _fs as fs
from ._container import ContainerBackend
from ._fs import SandboxPathError
from ._run import (
    MAX_OUTPUT_BYTES,
    CommandResult,
    IsolationReport,
    LocalBackend,
    SandboxBackend,
    SandboxError,
    SandboxLimits,
    SandboxProcess,
    log,
    network_isolation_available,
)

__all__ = [
    "MAX_OUTPUT_BYTES",
    "CommandResult",
    "ContainerBackend",
    "IsolationReport",
    "LocalBackend",
    "Sandbox",
    "SandboxBackend",
    "SandboxError",
    "SandboxLimits",
    "SandboxPathError",
    "SandboxPool",
    "SandboxProcess",
    "SandboxProvider",
    "network_isolation_available",
    "remove_stale_roots",
]

_META = "sandbox.json"
_WORK = "work"
remove_stale_roots = fs.remove_stale_roots


class Sandbox:
    """One rollout's working tree. Get it from ``SandboxPool.for_rollout``.

    The file methods take paths relative to the tree, refuse absolute paths,
    ``..`` and symbolic links anywhere on the way (``SandboxPathError``, a
    ``ToolError`` the model sees), and never leave the tree — also when the
    model's own commands swap a directory for a link meanwhile.

    Attributes:
        trace_id: the rollout's trace_id.
        path: the working tree on this host (absolute); commands start here.
        uid: the uid its commands run as (owner of what the file methods create).
    """

    def __init__(self, pool: SandboxPool, trace_id: str, path: Path) -> None:
        self._pool, self.trace_id, self.path = pool, trace_id, path
        self.uid = pool.limits.uid()

    def __repr__(self) -> str:
        return f"Sandbox(trace_id={self.trace_id!r}, path={str(self.path)!r})"

    def resolve(self, relpath: str) -> Path:
        """Absolute path of ``relpath`` inside the tree (symlinks resolved). Prefer the
        file methods below: a path checked here can be swapped for a link before use.

        Raises:
            SandboxPathError: the path is absolute or resolves outside the tree.
        """
        fs.split_relpath(relpath)
        full = (self.path / relpath).resolve()
        if full != self.path and self.path not in full.parents:
            raise SandboxPathError(f"path {relpath!r} leaves the repository")
        return full

    def relpath(self, relpath: str) -> str:
        """``relpath`` normalised (``a/./b`` → ``a/b``; ``""`` → ``.``), checked to stay in the tree.

        Raises:
            SandboxPathError: absolute, or leaves the tree (``..``).
        """
        return "/".join(fs.split_relpath(relpath)) or "."

    def read_bytes(self, relpath: str, max_bytes: int | None = None) -> bytes:
        """Content of regular file ``relpath`` (at most ``max_bytes``).

        Raises:
            SandboxPathError: outside the tree, a symlink, or not a regular file.
            FileNotFoundError: missing.
        """
        return fs.read_bytes(self.path, relpath, max_bytes)

    def read_text(self, relpath: str, max_bytes: int | None = None) -> str:
        """``read_bytes`` decoded as UTF-8 (invalid bytes replaced)."""
        return self.read_bytes(relpath, max_bytes).decode("utf-8", "replace")

    def write_bytes(self, relpath: str, data: bytes) -> None:
        """Create or replace regular file ``relpath`` (parents created), owned by ``uid``.

        Raises:
            SandboxPathError: outside the tree, a symlink on the way, or not a regular file.
        """
        fs.write_bytes(self.path, relpath, data, uid=self.uid if self.uid != os.geteuid() else None)

    def write_text(self, relpath: str, text: str) -> None:
        """``write_bytes`` of ``text`` encoded as UTF-8."""
        self.write_bytes(relpath, text.encode("utf-8"))

    def list_dir(self, relpath: str = ".") -> list[tuple[str, bool]]:
        """``(name, is_directory)`` of the entries of directory ``relpath``, unsorted."""
        return fs.list_dir(self.path, relpath)

    def files(self, relpath: str = ".") -> list[str]:
        """Sorted relative paths of every regular file under ``relpath`` (links not followed)."""
        return fs.tree_files(self.path, relpath)

    def is_file(self, relpath: str) -> bool:
        """Whether ``relpath`` is a regular file reached without a symlink."""
        try:
            fs.read_bytes(self.path, relpath, 0)
            return True
        except (OSError, SandboxPathError):
            return False

    def run(self, argv: Sequence[str], *, timeout_s: float | None = None, env: Mapping[str, str] | None = None,
            stdin: bytes | None = None) -> CommandResult:
        """Run ``argv`` (no shell) in the tree, contained, with the pool's limits
        (``timeout_s`` overrides the limit's timeout). Blocking; see ``arun``.

        Raises:
            SandboxError: the command could not be started.
        """
        self._pool.touch(self.trace_id)
        return self._pool.backend.run(self.path, argv, self._pool.limits_for(timeout_s), env=env, stdin=stdin)

    async def arun(self, argv: Sequence[str], *, timeout_s: float | None = None,
                   env: Mapping[str, str] | None = None, stdin: bytes | None = None) -> CommandResult:
        """``run`` in a worker thread, for async tools and graders."""
        return await anyio.to_thread.run_sync(
            functools.partial(self.run, argv, timeout_s=timeout_s, env=env, stdin=stdin))

    def popen(self, argv: Sequence[str], *, timeout_s: float | None = None,
              env: Mapping[str, str] | None = None) -> SandboxProcess:
        """Start ``argv`` contained with stdin/stdout pipes (an interactive harness);
        everything it starts is killed by ``close()`` or after the timeout.

        Raises:
            SandboxError: it could not be started, or the backend has no ``popen``.
        """
        popen = getattr(self._pool.backend, "popen", None)
        if popen is None:
            raise SandboxError(f"{type(self._pool.backend).__name__} cannot start interactive commands")
        self._pool.touch(self.trace_id)
        return popen(self.path, argv, self._pool.limits_for(timeout_s), env=env)  # type: ignore[no-any-return]


@runtime_checkable
class SandboxProvider(Protocol):
    """Where rollouts' sandboxes live: the seam a remote sandbox service plugs into.

    ``SandboxPool`` is the local implementation. A provider backed by a remote
    service implements these methods with the same contracts and returns
    sandbox objects offering ``trace_id``, ``run``/``arun``, ``popen``,
    ``read_bytes``/``read_text``, ``write_bytes``/``write_text``, ``list_dir``,
    ``files``, ``is_file`` and ``relpath`` (no local ``path``). The examples use nothing else, so they run
    unchanged on such a provider. ``template`` is a local directory the
    provider uploads (and may cache) on first use. See ``docs/sandbox.md``.
    """

    limits: SandboxLimits

    def create(self, trace_id: str, template: str | os.PathLike[str] | None = None) -> Any:
        """The sandbox of ``trace_id``, made from ``template`` if it does not exist (idempotent)."""
        ...

    def get(self, trace_id: str) -> Any:
        """The sandbox of ``trace_id`` if it exists, else ``None``."""
        ...

    def for_rollout(self, rollout: object, template: str | os.PathLike[str] | None = None) -> Any:
        """``create(rollout.trace_id, template)``."""
        ...

    def release(self, trace_id: str) -> bool:
        """Remove the sandbox; whether one existed."""
        ...

    def sweep(self, now: float | None = None) -> int:
        """Remove sandboxes unused for the provider's TTL; how many."""
        ...

    def close(self) -> None:
        """Remove every sandbox of this provider."""
        ...


class SandboxPool:
    """Creates, finds and removes per-rollout sandboxes on this host (a ``SandboxProvider``).

    A sandbox is ``root/<sha256(trace_id)[:32]>/work``, created on first use
    from a template directory. Creation is atomic (copy to a temporary name,
    then ``rename``), so the worker processes of one host sharing an explicit
    ``root`` agree on one sandbox per rollout.

    Args:
        root: parent directory (created; shared, swept by TTL). ``None`` = a new
            directory ``<tmp>/rft-sandboxes-<pid>-*`` owned by this process:
            removed when this process ends — however it ends: a janitor process
            waits on a pipe only this process holds — and, should the janitor
            be killed too, by the next pool made on the host.
        limits: per-command limits.
        backend: runs the commands (default ``LocalBackend(ro_paths=ro_paths)``).
        ro_paths: host paths commands may read (e.g. a bare repository); only
            with the default backend.
        ttl_s: sandboxes unused this long (never graded: a discarded rollout)
            are removed by a background sweep every ``sweep_every_s`` seconds.
        copy: ``"auto"`` (reflink where the filesystem supports it, else a
            copy), ``"reflink"`` (required), ``"copy"``, or ``"hardlink"``
            (fastest; read-only use only: a write through a hard link changes
            the template, so the tree stays owned by the server and read-only
            for commands).

    Raises:
        ValueError: bad ``copy``; ``ro_paths`` with a custom backend.
        SandboxError: the default backend is ``strict`` and isolation is missing.
    """

    def __init__(self, root: str | os.PathLike[str] | None = None, *, limits: SandboxLimits | None = None,
                 backend: SandboxBackend | None = None, ro_paths: Sequence[str | os.PathLike[str]] = (),
                 ttl_s: float = 3600.0, sweep_every_s: float = 60.0, copy: str = "auto") -> None:
        if copy not in ("auto", "reflink", "copy", "hardlink"):
            raise ValueError(f"copy must be 'auto', 'reflink', 'copy' or 'hardlink', got {copy!r}")
        if ro_paths and backend is not None:
            raise ValueError("ro_paths applies to the default LocalBackend; pass LocalBackend(ro_paths=...) instead")
        self.owned = root is None
        self._janitor: int | None = None
        if self.owned:
            fs.remove_stale_roots()
            self.root = fs.claim_root()
            self._janitor = fs.start_janitor(self.root)
        else:
            self.root = Path(root).resolve()  # type: ignore[arg-type]
            self.root.mkdir(parents=True, exist_ok=True)
        self.limits = limits or SandboxLimits()
        self.backend: SandboxBackend = backend or LocalBackend(ro_paths=ro_paths)
        self.ttl_s, self.sweep_every_s, self.copy = ttl_s, sweep_every_s, copy
        self._chown = self.limits.uid() != os.geteuid() and copy != "hardlink"
        self._closed = threading.Event()
        if not self.owned:
            self.sweep()
        _start_reaper(self)
        if self.owned:
            atexit.register(_close_ref, weakref.ref(self))

    @property
    def isolation(self) -> IsolationReport | None:
        """What the backend enforces (``None`` for a backend that does not say)."""
        return getattr(self.backend, "isolation", None)

    def limits_for(self, timeout_s: float | None) -> SandboxLimits:
        """The pool's limits, with ``timeout_s`` when given."""
        return self.limits if timeout_s is None else dataclasses.replace(self.limits, timeout_s=timeout_s)

    def _dir(self, trace_id: str) -> Path:
        return self.root / hashlib.sha256(trace_id.encode()).hexdigest()[:32]

    def get(self, trace_id: str) -> Sandbox | None:
        """The rollout's sandbox if it exists, else ``None`` (creates nothing)."""
        work = self._dir(trace_id) / _WORK
        return Sandbox(self, trace_id, work) if work.is_dir() else None

    def create(self, trace_id: str, template: str | os.PathLike[str] | None = None) -> Sandbox:
        """The rollout's sandbox, created from ``template`` (a directory; ``None``
        = empty) when it does not exist yet. Idempotent and safe under races.

        Raises:
            SandboxError: ``template`` is not a directory, or the copy failed.
        """
        existing = self.get(trace_id)
        if existing is not None:
            self.touch(trace_id)
            return existing
        final = self._dir(trace_id)
        tmp = Path(tempfile.mkdtemp(prefix=".new-", dir=self.root))
        try:
            if template is None:
                (tmp / _WORK).mkdir()
            else:
                src = Path(template)
                if not src.is_dir():
                    raise SandboxError(f"sandbox template {str(src)!r} is not a directory")
                fs.copy_tree(src, tmp / _WORK, self.copy)
            (tmp / _META).write_text(json.dumps({"trace_id": trace_id, "created_at": time.time(),
                                                 "template": None if template is None else str(template)}))
            os.chmod(tmp, 0o755)
            if self._chown:
                fs.chown_tree(tmp / _WORK, self.limits.uid())
            elif self.limits.uid() != os.geteuid():  # hard-link farm: readable, not writable, by the uid
                fs.open_dirs(tmp / _WORK)
            try:
                os.rename(tmp, final)
            except OSError:  # another worker won the race (target exists and is not empty)
                if not (final / _WORK).is_dir():
                    raise
        except OSError as exc:
            raise SandboxError(f"cannot create the sandbox of {trace_id!r}: {exc}") from exc
        finally:
            fs.rmtree(tmp)
        return Sandbox(self, trace_id, final / _WORK)

    def for_rollout(self, rollout: object, template: str | os.PathLike[str] | None = None) -> Sandbox:
        """``create(rollout.trace_id, template)`` for a tool's ``Rollout`` (or a
        ``GradingContext``: anything with a ``trace_id``)."""
        trace_id = getattr(rollout, "trace_id", None)
        if not isinstance(trace_id, str):
            raise TypeError(f"for_rollout needs an object with a str trace_id, got {rollout!r}")
        return self.create(trace_id, template)

    def touch(self, trace_id: str) -> None:
        """Mark the sandbox used now (its TTL restarts)."""
        try:
            os.utime(self._dir(trace_id) / _META)
        except OSError:
            pass

    def release(self, trace_id: str) -> bool:
        """Remove the rollout's sandbox (call it from the grader once graded).
        Returns whether one existed. Commands still running in it are not
        waited for (each is bounded by its own timeout)."""
        final = self._dir(trace_id)
        if not final.exists():
            return False
        doomed = self.root / f".del-{final.name}-{os.getpid()}-{threading.get_ident()}"
        try:
            os.rename(final, doomed)
        except OSError:
            return False
        fs.rmtree(doomed)
        return True

    def sweep(self, now: float | None = None) -> int:
        """Remove sandboxes unused for ``ttl_s`` seconds and leftovers of
        interrupted creations/removals; returns how many were removed."""
        now = time.time() if now is None else now
        removed = 0
        try:
            entries = list(self.root.iterdir())
        except OSError:
            return 0
        for entry in entries:
            if entry.name == "owner.json":
                continue
            try:
                stamp = (entry / _META).stat().st_mtime if (entry / _META).exists() else entry.stat().st_mtime
            except OSError:
                continue
            if now - stamp >= self.ttl_s or (entry.name.startswith(".del-") and now - stamp >= 60):
                fs.rmtree(entry)
                removed += 1
        return removed

    def __len__(self) -> int:
        """Number of live sandboxes."""
        return sum(1 for e in self.root.iterdir() if (e / _META).exists() and not e.name.startswith("."))

    def close(self) -> None:
        """Remove every sandbox and the root directory; stops the background sweep."""
        self._closed.set()
        fs.rmtree(self.root)
        if self._janitor is not None:
            os.close(self._janitor)
            self._janitor = None


def _close_ref(ref: weakref.ref[SandboxPool]) -> None:
    pool = ref()
    if pool is not None:
        pool.close()


def _start_reaper(pool: SandboxPool) -> None:
    """A daemon thread running ``pool.sweep()`` every ``sweep_every_s`` until the pool is closed or collected."""
    ref, closed, every = weakref.ref(pool), pool._closed, pool.sweep_every_s

    def loop() -> None:
        while not closed.wait(every):
            p = ref()
            if p is None:
                return
            try:
                p.sweep()
            except OSError as exc:  # a failed sweep must not stop the reaper; the next round retries
                log.warning("sandbox sweep of %s failed: %s", p.root, exc)
            del p

    threading.Thread(target=loop, name="rft-sandbox-reaper", daemon=True).start()
