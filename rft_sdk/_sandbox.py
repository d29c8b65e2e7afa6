"""Per-rollout sandboxes: one working directory per ``trace_id``, commands run
with a timeout, resource limits and (where the OS allows) no network.

See ``docs/sandbox.md`` for what is enforced and what is not. In short, the
local backend enforces per command: wall-clock timeout (the whole process tree
is killed), ``RLIMIT_CPU``/``AS``/``FSIZE``/``NOFILE``/``CORE`` and, for a
non-root user, ``RLIMIT_NPROC``; with ``unshare`` available it also runs the
command in new user, network and PID namespaces (no network; every process of
the command dies with it). Output kept per stream is capped at 1 MB (the hosted
protocol's limit on a tool output). It is not a security boundary against a
hostile kernel exploit; the container backend is the stronger option.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Protocol

import anyio.to_thread

from .exceptions import RFTError, ToolError

__all__ = [
    "MAX_OUTPUT_BYTES",
    "CommandResult",
    "ContainerBackend",
    "LocalBackend",
    "Sandbox",
    "SandboxBackend",
    "SandboxError",
    "SandboxLimits",
    "SandboxPathError",
    "SandboxPool",
    "network_isolation_available",
]

MAX_OUTPUT_BYTES = 1_000_000  # hosted protocol: a tool output is at most 1 MB
_META = "sandbox.json"
_WORK = "work"


class SandboxError(RFTError):
    """A sandbox could not be created, used or released (bad template, I/O error)."""


class SandboxPathError(ToolError):
    """A path given to a sandbox leaves its working directory (``..``, absolute
    path or symlink escaping it). A ``ToolError``: the model sees the message."""


@dataclasses.dataclass(frozen=True)
class SandboxLimits:
    """Per-command limits (``None`` = not limited).

    Attributes:
        timeout_s: wall-clock seconds before the whole process tree is killed.
        cpu_s: CPU seconds per process (``RLIMIT_CPU``; SIGXCPU then SIGKILL).
        memory_bytes: address space per process (``RLIMIT_AS``), bytes.
        max_processes: processes of the running user (``RLIMIT_NPROC``); the
            kernel ignores it for root, so it is enforced only when the command
            runs as a non-root user (see ``run_as_uid``).
        file_size_bytes: largest file a command may write (``RLIMIT_FSIZE``).
        open_files: open file descriptors per process (``RLIMIT_NOFILE``).
        output_bytes: bytes kept of stdout and of stderr each (at most 1 MB).
        network: ``False`` runs the command in a new network namespace (only
            loopback, down) when ``unshare`` is usable; see ``LocalBackend``.
        run_as_uid: run commands as this uid (needs root; the sandbox tree is
            chowned to it at creation), e.g. 65534 (``nobody``). Every parent
            of the pool's root must be searchable (``o+x``) by that uid.
    """

    timeout_s: float = 30.0
    cpu_s: int | None = 30
    memory_bytes: int | None = 2 * 1024**3
    max_processes: int | None = 64
    file_size_bytes: int | None = 64 * 1024**2
    open_files: int | None = 256
    output_bytes: int = MAX_OUTPUT_BYTES
    network: bool = False
    run_as_uid: int | None = None

    def __post_init__(self) -> None:
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {self.timeout_s!r}")
        if not 0 < self.output_bytes <= MAX_OUTPUT_BYTES:
            raise ValueError(f"output_bytes must be in (0, {MAX_OUTPUT_BYTES}], got {self.output_bytes!r}")


@dataclasses.dataclass(frozen=True)
class CommandResult:
    """What a command did.

    Attributes:
        returncode: exit status (negative: killed by that signal).
        stdout, stderr: decoded output (UTF-8, invalid bytes replaced), each at
            most ``SandboxLimits.output_bytes`` bytes before decoding.
        timed_out: the wall-clock timeout fired and the process tree was killed.
        truncated: some output beyond the cap was dropped.
        duration_s: wall-clock seconds.
    """

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool
    duration_s: float

    @property
    def ok(self) -> bool:
        """Exit status 0 and no timeout."""
        return self.returncode == 0 and not self.timed_out

    def text(self, limit: int = MAX_OUTPUT_BYTES) -> str:
        """``stdout`` + ``stderr`` (+ a status line when not ok), cut to ``limit`` characters."""
        status = "" if self.ok else (
            f"\n[timed out after {self.duration_s:.1f}s]" if self.timed_out else f"\n[exit status {self.returncode}]")
        return (self.stdout + self.stderr + status)[:limit]


class SandboxBackend(Protocol):
    """Runs one command inside a sandbox directory; the local backend and the
    container backend implement it."""

    def run(self, workdir: Path, argv: Sequence[str], limits: SandboxLimits, *,
            env: Mapping[str, str] | None = None, stdin: bytes | None = None) -> CommandResult:
        """Run ``argv`` with ``workdir`` as current directory under ``limits``."""
        ...


@functools.cache
def _unshare_prefix() -> tuple[str, ...]:
    """``unshare`` arguments for new user+net+pid namespaces, or ``()`` when unusable."""
    exe = shutil.which("unshare")
    if exe is None:
        return ()
    prefix = (exe, "--user", "--map-root-user", "--net", "--pid", "--fork", "--kill-child")
    try:
        ok = subprocess.run([*prefix, "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    return prefix if ok else ()


def network_isolation_available() -> bool:
    """Whether ``LocalBackend`` can cut the network (``unshare --net`` works here)."""
    return bool(_unshare_prefix())


def _read_capped(f: IO[bytes], cap: int) -> tuple[bytes, bool]:
    f.seek(0)
    data = f.read(cap + 1)
    return data[:cap], len(data) > cap


class LocalBackend:
    """Runs commands as child processes of this host.

    Each command gets a new session (its own process group), the limits of
    ``SandboxLimits`` set by ``setrlimit`` in the child before ``exec``, and,
    when ``unshare`` works, new user/network/PID namespaces: no network
    interfaces but a down loopback, and every process the command started is
    killed when it ends (the PID namespace's init exits). stdout/stderr go to
    unlinked temporary files (no pipe deadlock, memory bounded) of which the
    first ``output_bytes`` are kept. After the command ends or times out the
    whole process group is killed, so nothing it started keeps running.
    """

    def __init__(self, *, isolate_network: bool | None = None) -> None:
        """``isolate_network``: ``None`` = when available; ``True`` = required
        (``SandboxError`` when ``unshare`` is unusable); ``False`` = never."""
        if isolate_network and not network_isolation_available():
            raise SandboxError("network isolation requested but `unshare --user --net` is not usable here")
        self.isolate_network = isolate_network

    def _preexec(self, limits: SandboxLimits) -> Callable[[], None]:
        pairs = [(resource.RLIMIT_CORE, 0)]
        for res, value in ((resource.RLIMIT_CPU, limits.cpu_s), (resource.RLIMIT_AS, limits.memory_bytes),
                           (resource.RLIMIT_NPROC, limits.max_processes),
                           (resource.RLIMIT_FSIZE, limits.file_size_bytes),
                           (resource.RLIMIT_NOFILE, limits.open_files)):
            if value is not None:
                pairs.append((res, int(value)))
        uid = limits.run_as_uid

        def preexec() -> None:  # runs in the child between fork and exec
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            for res, value in pairs:
                resource.setrlimit(res, (value, value))

        return preexec

    def run(self, workdir: Path, argv: Sequence[str], limits: SandboxLimits, *,
            env: Mapping[str, str] | None = None, stdin: bytes | None = None) -> CommandResult:
        """Run ``argv`` in ``workdir``; see the class docstring. Never raises for
        the command's own failure (that is ``returncode``).

        Raises:
            SandboxError: the command could not be started (e.g. not found).
        """
        if not argv:
            raise SandboxError("empty command")
        path_var = (env or {}).get("PATH") or os.environ.get("PATH", "/usr/bin:/bin")
        if "/" not in argv[0] and shutil.which(argv[0], path=path_var) is None:
            raise SandboxError(f"cannot start {argv[0]!r}: not found on PATH")
        isolate = (not limits.network) and self.isolate_network is not False
        prefix = _unshare_prefix() if isolate else ()
        base_env = {"PATH": path_var, "HOME": str(workdir), "LANG": "C.UTF-8",
                    "PYTHONDONTWRITEBYTECODE": "1"}
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as inp:
            if stdin is not None:
                inp.write(stdin)
                inp.seek(0)
            t0 = time.monotonic()
            try:
                proc = subprocess.Popen(  # argv from the tool author, no shell
                    [*prefix, *argv], cwd=workdir, stdin=inp, stdout=out, stderr=err,
                    env={**base_env, **(env or {})}, start_new_session=True,
                    preexec_fn=self._preexec(limits), close_fds=True)
            except OSError as exc:
                raise SandboxError(f"cannot start {argv[0]!r}: {exc}") from exc
            timed_out = False
            try:
                proc.wait(timeout=limits.timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                _kill_group(proc.pid)
                proc.wait()
            duration = time.monotonic() - t0
            so, t1 = _read_capped(out, limits.output_bytes)
            se, t2 = _read_capped(err, limits.output_bytes)
        return CommandResult(proc.returncode, so.decode("utf-8", "replace"), se.decode("utf-8", "replace"),
                             timed_out, t1 or t2, duration)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


class ContainerBackend:
    """Runs each command in a fresh container (``docker run --rm``) with the
    sandbox directory bind-mounted at ``/work``; the same interface as
    ``LocalBackend``. Limits map to ``--network none``, ``--memory``,
    ``--pids-limit``, ``--cpus 1`` and ``--ulimit fsize/nofile/cpu``.

    Args:
        image: container image holding the tools the commands need.
        engine: the CLI (``docker`` or ``podman``).

    Raises:
        SandboxError: the engine is not installed (at construction).
    """

    def __init__(self, image: str, *, engine: str = "docker") -> None:
        exe = shutil.which(engine)
        if exe is None:
            raise SandboxError(f"{engine!r} not found on PATH; use LocalBackend or install {engine}")
        self.image, self.engine = image, exe

    def command(self, workdir: Path, argv: Sequence[str], limits: SandboxLimits,
                env: Mapping[str, str] | None = None) -> list[str]:
        """The ``docker run`` argv for one command (no side effects)."""
        cmd = [self.engine, "run", "--rm", "-i", "--cpus", "1", "-v", f"{workdir}:/work", "-w", "/work"]
        if not limits.network:
            cmd += ["--network", "none"]
        if limits.memory_bytes is not None:
            cmd += ["--memory", str(limits.memory_bytes)]
        if limits.max_processes is not None:
            cmd += ["--pids-limit", str(limits.max_processes)]
        for name, value in (("fsize", limits.file_size_bytes), ("nofile", limits.open_files),
                            ("cpu", limits.cpu_s)):
            if value is not None:
                cmd += ["--ulimit", f"{name}={value}:{value}"]
        for key, val in (env or {}).items():
            cmd += ["-e", f"{key}={val}"]
        return [*cmd, self.image, *argv]

    def run(self, workdir: Path, argv: Sequence[str], limits: SandboxLimits, *,
            env: Mapping[str, str] | None = None, stdin: bytes | None = None) -> CommandResult:
        """Run ``argv`` in a container; the timeout kills the ``docker`` client
        and the container (``--rm``) with it."""
        outer = dataclasses.replace(limits, network=True, cpu_s=None, memory_bytes=None, max_processes=None,
                                    file_size_bytes=None, open_files=None, run_as_uid=None)
        return LocalBackend(isolate_network=False).run(workdir, self.command(workdir, argv, limits, env), outer,
                                                       stdin=stdin)


class Sandbox:
    """One rollout's working directory. Get it from ``SandboxPool.for_rollout``.

    Attributes:
        trace_id: the rollout's trace_id.
        path: the working directory (absolute); commands start here.
    """

    def __init__(self, pool: SandboxPool, trace_id: str, path: Path) -> None:
        self._pool, self.trace_id, self.path = pool, trace_id, path

    def __repr__(self) -> str:
        return f"Sandbox(trace_id={self.trace_id!r}, path={str(self.path)!r})"

    def resolve(self, relpath: str) -> Path:
        """Absolute path of ``relpath`` inside the sandbox (symlinks resolved).

        Raises:
            SandboxPathError: the path is absolute or resolves outside the sandbox.
        """
        if os.path.isabs(relpath):
            raise SandboxPathError(f"path {relpath!r} must be relative to the repository root")
        full = (self.path / relpath).resolve()
        if full != self.path and self.path not in full.parents:
            raise SandboxPathError(f"path {relpath!r} leaves the repository")
        return full

    def run(self, argv: Sequence[str], *, timeout_s: float | None = None, env: Mapping[str, str] | None = None,
            stdin: bytes | None = None) -> CommandResult:
        """Run ``argv`` (no shell) in the sandbox with the pool's limits
        (``timeout_s`` overrides the limit's timeout). Blocking; see ``arun``.

        Raises:
            SandboxError: the command could not be started.
        """
        limits = self._pool.limits if timeout_s is None else dataclasses.replace(self._pool.limits,
                                                                                 timeout_s=timeout_s)
        self._pool.touch(self.trace_id)
        return self._pool.backend.run(self.path, argv, limits, env=env, stdin=stdin)

    async def arun(self, argv: Sequence[str], *, timeout_s: float | None = None,
                   env: Mapping[str, str] | None = None, stdin: bytes | None = None) -> CommandResult:
        """``run`` in a worker thread, for async tools and graders."""
        return await anyio.to_thread.run_sync(
            functools.partial(self.run, argv, timeout_s=timeout_s, env=env, stdin=stdin))


@functools.cache
def _reflink_works(root: Path) -> bool:
    """Whether ``cp --reflink=always`` succeeds on ``root``'s filesystem (probed once)."""
    cp = shutil.which("cp")
    if cp is None:
        return False
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        (Path(tmp) / "a").write_bytes(b"x")
        return subprocess.run([cp, "--reflink=always", str(Path(tmp) / "a"), str(Path(tmp) / "b")],
                              capture_output=True).returncode == 0


def _copy_tree(src: Path, dst: Path, mode: str) -> None:
    if mode == "hardlink":
        shutil.copytree(src, dst, symlinks=True, copy_function=os.link)
        return
    cp = shutil.which("cp")
    if mode == "auto" and not _reflink_works(dst.parent.parent):
        mode = "copy"  # no copy-on-write here: an in-process copy is cheaper than spawning cp
    if mode in ("auto", "reflink") and cp is not None:  # GNU cp clones extents where the filesystem can
        reflink = "--reflink=always" if mode == "reflink" else "--reflink=auto"
        proc = subprocess.run([cp, "-a", reflink, "--", str(src), str(dst)], capture_output=True)
        if proc.returncode == 0:
            return
        if mode == "reflink":
            raise SandboxError(f"reflink copy failed: {proc.stderr.decode(errors='replace').strip()}")
        shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, symlinks=True)


class SandboxPool:
    """Creates, finds and removes per-rollout sandboxes under ``root``.

    A sandbox is ``root/<sha256(trace_id)[:32]>/work``, created on first use
    from a template directory. Creation is atomic (copy to a temporary name,
    then ``rename``), so the worker processes of one host (``rft serve
    --workers N`` with a shared store) agree on one sandbox per rollout. With
    several hosts, route a rollout's calls to one host (sticky routing on
    ``trace_id``) or put ``root`` on a shared volume.

    Args:
        root: parent directory (created); ``None`` = a new temporary directory.
        limits: per-command limits.
        backend: runs the commands (default ``LocalBackend()``).
        ttl_s: sandboxes unused this long are removed by ``sweep``, which
            ``for_rollout`` runs at most every ``sweep_every_s`` seconds.
        copy: ``"auto"`` (reflink where the filesystem supports it, else a
            copy), ``"reflink"`` (required), ``"copy"``, or ``"hardlink"``
            (fastest; only for read-only use: a write through a hard link
            changes the template).
    """

    def __init__(self, root: str | os.PathLike[str] | None = None, *, limits: SandboxLimits | None = None,
                 backend: SandboxBackend | None = None, ttl_s: float = 3600.0, sweep_every_s: float = 60.0,
                 copy: str = "auto") -> None:
        if copy not in ("auto", "reflink", "copy", "hardlink"):
            raise ValueError(f"copy must be 'auto', 'reflink', 'copy' or 'hardlink', got {copy!r}")
        self.root = Path(tempfile.mkdtemp(prefix="rft-sandboxes-") if root is None else root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self.limits = limits or SandboxLimits()
        if self.limits.run_as_uid is not None:  # the uid must reach its sandbox (parents need o+x too)
            self.root.chmod(0o711)
        self.backend: SandboxBackend = backend or LocalBackend()
        self.ttl_s, self.sweep_every_s, self.copy = ttl_s, sweep_every_s, copy
        self._last_sweep = time.monotonic()
        self._lock = threading.Lock()

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
        self._maybe_sweep()
        final = self._dir(trace_id)
        tmp = Path(tempfile.mkdtemp(prefix=".new-", dir=self.root))
        try:
            if template is None:
                (tmp / _WORK).mkdir()
            else:
                src = Path(template)
                if not src.is_dir():
                    raise SandboxError(f"sandbox template {str(src)!r} is not a directory")
                _copy_tree(src, tmp / _WORK, self.copy)
            (tmp / _META).write_text(json.dumps({"trace_id": trace_id, "created_at": time.time(),
                                                 "template": None if template is None else str(template)}))
            if self.limits.run_as_uid is not None:
                _chown_tree(tmp, self.limits.run_as_uid)
            try:
                os.rename(tmp, final)
            except OSError:  # another worker won the race (target exists and is not empty)
                if not (final / _WORK).is_dir():
                    raise
        except OSError as exc:
            raise SandboxError(f"cannot create the sandbox of {trace_id!r}: {exc}") from exc
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
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
        with contextlib.suppress(OSError):
            os.utime(self._dir(trace_id) / _META)

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
        shutil.rmtree(doomed, ignore_errors=True)
        return True

    def sweep(self, now: float | None = None) -> int:
        """Remove sandboxes unused for ``ttl_s`` seconds and leftovers of
        interrupted creations; returns how many were removed."""
        now = time.time() if now is None else now
        removed = 0
        for entry in list(self.root.iterdir()):
            try:
                stamp = (entry / _META).stat().st_mtime if (entry / _META).exists() else entry.stat().st_mtime
            except OSError:
                continue
            if now - stamp >= self.ttl_s:
                shutil.rmtree(entry, ignore_errors=True)
                removed += 1
        return removed

    def _maybe_sweep(self) -> None:
        with self._lock:
            if time.monotonic() - self._last_sweep < self.sweep_every_s:
                return
            self._last_sweep = time.monotonic()
        self.sweep()

    def __len__(self) -> int:
        """Number of live sandboxes."""
        return sum(1 for e in self.root.iterdir() if (e / _META).exists() and not e.name.startswith("."))

    def close(self) -> None:
        """Remove every sandbox and the root directory."""
        shutil.rmtree(self.root, ignore_errors=True)


def _chown_tree(path: Path, uid: int) -> None:
    for dirpath, dirnames, filenames in os.walk(path):
        os.lchown(dirpath, uid, uid)
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, uid)
