"""Running model-written commands contained: limits, results, and the local and
container backends.

``LocalBackend`` runs each command under bubblewrap (``bwrap``, Debian/Ubuntu
package ``bubblewrap``) in new mount, PID, IPC, UTS and network namespaces:

- the command sees only its own working tree (read-write), the system's
  ``/usr`` (and the ``/bin``, ``/lib*`` links), a few files of ``/etc``, this
  Python's runtime (``sys.base_prefix``, the virtual environment) and the
  pool's ``ro_paths``, all read-only; a private ``/tmp``, ``/dev/shm``,
  ``/dev`` and ``/proc``; nothing else of the host exists for it;
- it runs as an unprivileged uid (65534, ``nobody``, when the server is root:
  bwrap sets up the namespaces as root, then ``setpriv`` drops to the uid with
  no capabilities, ``no_new_privs`` set);
- its network namespace has only loopback, **up** (tests may open local
  sockets), the outside is unreachable;
- its processes are bounded by a ``pids`` cgroup (``_sandbox_cgroup``) when one
  is writable, else by ``RLIMIT_NPROC`` of the unprivileged uid; CPU, memory,
  file size and open files by ``setrlimit``; wall clock by a timeout that kills
  the cgroup, the process group and the PID namespace.

Where the OS forbids part of this (no bwrap, no user namespaces, no writable
cgroup), the backend falls back — ``unshare`` namespaces without a private
filesystem, then a plain process group — and says so loudly: a ``WARNING`` log
record and a ``RuntimeWarning`` once per process, and ``LocalBackend.isolation``
reports what is and is not enforced. ``LocalBackend(strict=True)`` refuses to
fall back.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Protocol, runtime_checkable

from .._wire._redact import get_logger
from ..exceptions import RFTError
from ._bwrap import NOBODY, bwrap_argv, bwrap_reason, runtime_paths, setpriv_argv, unshare_ok
from ._cgroup import MemoryController, PidsController, find_memory_controller, find_pids_controller

__all__ = ["MAX_OUTPUT_BYTES", "CommandResult", "IsolationReport", "LocalBackend", "SandboxBackend", "SandboxError",
           "SandboxLimits", "SandboxProcess", "network_isolation_available"]

log = get_logger("rft_sdk.sandbox")

MAX_OUTPUT_BYTES = 1_000_000  # hosted protocol: a tool output is at most 1 MB


class SandboxError(RFTError):
    """A sandbox could not be created, used or released (bad template, I/O error,
    or the isolation ``strict=True`` demands is not available)."""


@dataclasses.dataclass(frozen=True)
class SandboxLimits:
    """Per-command limits (``None`` = not limited).

    Attributes:
        timeout_s: wall-clock seconds before every process of the command is killed.
        cpu_s: CPU seconds per process (``RLIMIT_CPU``; SIGXCPU then SIGKILL).
        memory_bytes: memory of one command, bytes: the resident memory of its whole process tree
            (a ``memory`` cgroup per command where one is writable, holds for root too), and the
            address space of each of its processes (``RLIMIT_AS``). Without a writable memory
            cgroup only the per-process bound holds: a command may then use up to
            ``max_processes`` x ``memory_bytes`` in all (``IsolationReport.memory`` says which).
        max_processes: processes (tasks) of one command: ``pids.max`` of its own
            cgroup where one is writable (holds for root too), else
            ``RLIMIT_NPROC`` of the command's uid (shared by every command of
            that uid; ignored by the kernel for uid 0).
        file_size_bytes: largest file a command may write (``RLIMIT_FSIZE``).
        open_files: open file descriptors per process (``RLIMIT_NOFILE``).
        output_bytes: bytes kept of stdout and of stderr each (at most 1 MB).
        network: ``False`` (default) runs the command in a new network
            namespace: loopback up, nothing else reachable.
        run_as_uid: the uid commands run as; ``None`` = 65534 (``nobody``) when
            the server runs as root, else the server's own uid. The sandbox tree
            is owned by that uid.
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
        if self.max_processes is not None and self.max_processes < 1:
            raise ValueError(f"max_processes must be >= 1 or None, got {self.max_processes!r}")

    def uid(self) -> int:
        """The uid commands run as (``run_as_uid`` resolved)."""
        if self.run_as_uid is not None:
            return self.run_as_uid
        return NOBODY if os.geteuid() == 0 else os.geteuid()


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


@dataclasses.dataclass(frozen=True)
class IsolationReport:
    """What a backend enforces on this host.

    Attributes:
        mode: ``"bwrap"``, ``"namespaces"`` (``unshare``: no private filesystem),
            ``"process"`` (a process group and rlimits only) or ``"container"``.
        filesystem: a command sees only its tree and read-only runtime paths.
        network: a command has a network namespace of its own (loopback up).
        pids: the process bound: ``"cgroup v2 pids.max"``, ``"cgroup v1 pids.max"``,
            ``"RLIMIT_NPROC (per uid)"`` or ``"none (uid 0)"``.
        memory: the memory bound: ``"cgroup v2 memory.max"``/``"cgroup v1 memory.limit_in_bytes"`` (the
            command's whole tree), or ``"RLIMIT_AS per process (a command may use max_processes x
            memory_bytes)"``.
        user: the uid commands run as (``"uid 65534"``).
        problems: why something is not enforced (empty when everything is).
    """

    mode: str
    filesystem: bool
    network: bool
    pids: str
    user: str
    problems: tuple[str, ...] = ()
    memory: str = ""

    @property
    def complete(self) -> bool:
        """Filesystem, network and a process bound all enforced, as a non-root uid."""
        return self.filesystem and self.network and not self.pids.startswith("none") and self.user != "uid 0"


@runtime_checkable
class SandboxBackend(Protocol):
    """Runs a command over a local working tree (the command runner seam).

    ``LocalBackend`` and ``ContainerBackend`` implement it. A sandbox service
    that keeps the trees elsewhere implements ``SandboxProvider`` instead
    (``rft_sdk.sandbox``; see ``docs/sandbox.md``).
    """

    def run(self, workdir: Path, argv: Sequence[str], limits: SandboxLimits, *,
            env: Mapping[str, str] | None = None, stdin: bytes | None = None) -> CommandResult:
        """Run ``argv`` with ``workdir`` as its current directory under ``limits``."""
        ...


def _read_capped(f: IO[bytes], cap: int) -> tuple[bytes, bool]:
    f.seek(0)
    data = f.read(cap + 1)
    return data[:cap], len(data) > cap


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def network_isolation_available() -> bool:
    """Whether commands can get a network namespace of their own here (bwrap or ``unshare``)."""
    return LocalBackend().isolation.network


class SandboxProcess:
    """A command started with ``Sandbox.popen``: binary pipes ``stdin``/``stdout``,
    stderr kept (capped) for :meth:`stderr_text`. Killed with everything it started
    by :meth:`close` (a context manager) or when ``limits.timeout_s`` passes.
    """

    def __init__(self, proc: subprocess.Popen[bytes], err: IO[bytes], limits: SandboxLimits,
                 cleanup: Callable[[], None]) -> None:
        self._proc, self._err, self._limits, self._cleanup = proc, err, limits, cleanup
        if proc.stdin is None or proc.stdout is None:
            raise SandboxError("SandboxProcess needs a process started with stdin and stdout pipes")
        self.stdin: IO[bytes] = proc.stdin
        self.stdout: IO[bytes] = proc.stdout
        self.timed_out = False
        self._closed = False
        self._timer = threading.Timer(limits.timeout_s, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def _expire(self) -> None:
        self.timed_out = True
        _kill_group(self._proc.pid)

    @property
    def pid(self) -> int:
        """The host pid of the outermost process (bwrap or the command)."""
        return self._proc.pid

    def poll(self) -> int | None:
        """The exit status, or ``None`` while it runs."""
        return self._proc.poll()

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the exit status (``subprocess.TimeoutExpired`` after ``timeout`` s)."""
        return self._proc.wait(timeout)

    def stderr_text(self) -> str:
        """What it wrote to stderr so far (at most ``output_bytes``, decoded)."""
        self._err.flush()
        data, _ = _read_capped(self._err, self._limits.output_bytes)
        self._err.seek(0, os.SEEK_END)
        return data.decode("utf-8", "replace")

    def close(self) -> None:
        """Kill every process it started, release its cgroup and pipes (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._timer.cancel()
        _kill_group(self._proc.pid)
        with contextlib.suppress(OSError):
            self.stdin.close()
        self._proc.wait()
        with contextlib.suppress(OSError):
            self.stdout.close()
        self._cleanup()
        self._err.close()

    def __enter__(self) -> SandboxProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalBackend:
    """Runs commands on this host, contained (see the module docstring).

    Args:
        isolation: ``"auto"`` (the strongest available: bwrap, else ``unshare``
            namespaces, else a plain process group — with a loud warning),
            ``"bwrap"``, ``"namespaces"`` or ``"process"`` (no namespaces: only
            for trusted commands).
        ro_paths: extra host paths every command sees read-only at the same path
            (e.g. a bare git repository the tools read).
        strict: raise ``SandboxError`` instead of falling back when filesystem,
            network or process isolation is not available.

    Raises:
        SandboxError: ``strict`` and isolation incomplete, or an explicit
            ``isolation`` mode not usable here.
    """

    def __init__(self, isolation: str = "auto", *, ro_paths: Sequence[str | os.PathLike[str]] = (),
                 strict: bool = False) -> None:
        if isolation not in ("auto", "bwrap", "namespaces", "process"):
            raise ValueError(f"isolation must be 'auto', 'bwrap', 'namespaces' or 'process', got {isolation!r}")
        self.ro_paths = tuple(os.path.realpath(p) for p in ro_paths)
        self._requested, self.strict = isolation, strict
        self._pids, pids_reason = _pids()
        self._memory, memory_reason = _memory()
        self.mode, problems = self._choose(isolation)
        if self._pids is None:
            problems.append(f"no writable pids cgroup ({pids_reason}): processes bounded by RLIMIT_NPROC per uid")
        if self._memory is None:
            problems.append(f"no writable memory cgroup ({memory_reason}): memory bounded per process (RLIMIT_AS), "
                            "a command may use max_processes x memory_bytes")
        self._problems = tuple(problems)
        report = self.isolation
        if not report.complete:
            msg = (f"rft_sdk.sandbox: commands are NOT fully contained on this host (mode {report.mode!r}): "
                   + "; ".join(problems))
            if strict:
                raise SandboxError(msg + ". Install bubblewrap (apt-get install bubblewrap), allow user "
                                   "namespaces, or run as root with a pids cgroup.")
            _warn_once(msg)

    def _choose(self, wanted: str) -> tuple[str, list[str]]:
        problems: list[str] = []
        if wanted in ("auto", "bwrap"):
            reason = bwrap_reason(self._as_root())
            if not reason:
                return "bwrap", problems
            if wanted == "bwrap":
                raise SandboxError(f"isolation='bwrap' is not usable here: {reason}")
            problems.append(f"bubblewrap unusable ({reason}): the host filesystem is visible to commands")
        if wanted in ("auto", "namespaces"):
            if unshare_ok(self._as_root()):
                if wanted == "namespaces":
                    problems.append("isolation='namespaces': the host filesystem is visible to commands")
                return "namespaces", problems
            if wanted == "namespaces":
                raise SandboxError("isolation='namespaces' is not usable here: `unshare` failed")
            problems.append("unshare unusable: commands share the host's network and PID namespace")
        else:
            problems.append("isolation='process': no namespaces, the host filesystem and network are visible")
        return "process", problems

    @staticmethod
    def _as_root() -> bool:
        return os.geteuid() == 0

    @property
    def isolation(self) -> IsolationReport:
        """What is enforced for commands (default limits) on this host."""
        uid = SandboxLimits().uid()
        pids = self._pids.label if self._pids else ("none (uid 0)" if uid == 0 else "RLIMIT_NPROC (per uid)")
        problems = list(self._problems)
        if uid == 0:
            problems.append("commands run as uid 0")
        memory = (self._memory.label if self._memory else
                  "RLIMIT_AS per process (a command may use max_processes x memory_bytes)")
        return IsolationReport(self.mode, self.mode == "bwrap", self.mode in ("bwrap", "namespaces"), pids,
                               f"uid {uid}", tuple(problems), memory)

    # -- argv ---------------------------------------------------------------------------------
    def _wrap(self, workdir: Path, argv: Sequence[str], limits: SandboxLimits) -> list[str]:
        uid, root = limits.uid(), self._as_root()
        drop = root and uid != 0
        if self.mode == "bwrap":
            return [*bwrap_argv(str(workdir), network=limits.network, as_root=root,
                                ro_paths=(*runtime_paths(), *self.ro_paths), drop_to=uid if drop else None),
                    *argv]
        if self.mode == "namespaces":
            user = [] if root else ["--user", "--map-root-user"]
            net = [] if limits.network else ["--net"]
            inner = "ip link set lo up 2>/dev/null; exec \"$@\""
            setpriv = setpriv_argv(uid) if drop else []
            return [shutil.which("unshare") or "unshare", *user, *net, "--pid", "--ipc", "--uts", "--fork",
                    "--kill-child", "--", "/bin/sh", "-c", inner, "sh", *setpriv, *argv]
        return [*(setpriv_argv(uid, caps=False) if drop else []), *argv]

    def _preexec(self, limits: SandboxLimits, groups: Sequence[Path], pids_group: bool) -> Callable[[], None]:
        pairs = [(resource.RLIMIT_CORE, 0)]
        nproc = limits.max_processes if not pids_group else None
        for res, value in ((resource.RLIMIT_CPU, limits.cpu_s), (resource.RLIMIT_AS, limits.memory_bytes),
                           (resource.RLIMIT_NPROC, nproc), (resource.RLIMIT_FSIZE, limits.file_size_bytes),
                           (resource.RLIMIT_NOFILE, limits.open_files)):
            if value is not None:
                pairs.append((res, int(value)))
        join = PidsController.join

        def preexec() -> None:  # in the child, between fork and exec
            for group in groups:  # one per hierarchy (cgroup v1), or the one group (v2)
                join(group)
            os.umask(0o022)
            for res, value in pairs:
                resource.setrlimit(res, (value, value))

        return preexec

    def _env(self, workdir: Path, env: Mapping[str, str] | None) -> dict[str, str]:
        path = (env or {}).get("PATH") or ":".join(
            [os.path.dirname(sys.executable), "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin",
             "/sbin", "/bin"])
        base = {"PATH": path, "HOME": str(workdir), "TMPDIR": "/tmp", "LANG": "C.UTF-8",
                "PYTHONDONTWRITEBYTECODE": "1"}
        return {**base, **(env or {})}

    def _start(self, workdir: Path, argv: Sequence[str], limits: SandboxLimits, env: Mapping[str, str] | None,
               **popen: Any) -> tuple[subprocess.Popen[bytes], Callable[[], None]]:
        if not argv:
            raise SandboxError("empty command")
        full_env = self._env(workdir, env)
        if "/" not in argv[0] and shutil.which(argv[0], path=full_env["PATH"]) is None:
            raise SandboxError(f"cannot start {argv[0]!r}: not found on PATH")
        made: list[tuple[PidsController, Path]] = []

        def cleanup() -> None:
            for ctl, group in reversed(made):
                ctl.kill_and_remove(group)

        try:
            if self._pids is not None and limits.max_processes is not None:
                made.append((self._pids, self._pids.new_group(limits.max_processes + 2)))  # + bwrap, its reaper
            memory = self._memory
            if memory is not None and limits.memory_bytes is not None:
                if memory.version == 2 and made and made[0][0].version == 2 and made[0][0].base == memory.base:
                    memory.limit(made[0][1], limits.memory_bytes)  # v2: one group per process, both bounds in it
                else:
                    made.append((memory, memory.new_group(limits.memory_bytes)))
        except OSError as exc:
            cleanup()
            raise SandboxError(f"cannot make the command's cgroups: {exc}") from exc
        pids_group = bool(made) and made[0][0] is self._pids

        try:
            proc = subprocess.Popen(self._wrap(workdir, argv, limits), cwd=workdir, env=full_env,  # no shell
                                    start_new_session=True, close_fds=True,
                                    preexec_fn=self._preexec(limits, [g for _, g in made], pids_group),
                                    **popen)
        except (OSError, subprocess.SubprocessError) as exc:
            cleanup()
            raise SandboxError(f"cannot start {argv[0]!r}: {exc}") from exc
        return proc, cleanup

    def run(self, workdir: Path, argv: Sequence[str], limits: SandboxLimits, *,
            env: Mapping[str, str] | None = None, stdin: bytes | None = None) -> CommandResult:
        """Run ``argv`` in ``workdir`` contained; never raises for the command's own
        failure (that is ``returncode``). stdout/stderr go to unlinked temporary files
        (no pipe deadlock, memory bounded) of which the first ``output_bytes`` are kept.

        Raises:
            SandboxError: the command could not be started (e.g. not found).
        """
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as inp:
            if stdin is not None:
                inp.write(stdin)
                inp.seek(0)
            t0 = time.monotonic()
            proc, cleanup = self._start(workdir, argv, limits, env, stdin=inp, stdout=out, stderr=err)
            timed_out = False
            try:
                proc.wait(timeout=limits.timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                _kill_group(proc.pid)
                proc.wait()
                cleanup()
            duration = time.monotonic() - t0
            so, t1 = _read_capped(out, limits.output_bytes)
            se, t2 = _read_capped(err, limits.output_bytes)
        return CommandResult(proc.returncode, so.decode("utf-8", "replace"), se.decode("utf-8", "replace"),
                             timed_out, t1 or t2, duration)

    def popen(self, workdir: Path, argv: Sequence[str], limits: SandboxLimits, *,
              env: Mapping[str, str] | None = None) -> SandboxProcess:
        """Start ``argv`` contained, with pipes (see :class:`SandboxProcess`).

        Raises:
            SandboxError: the command could not be started.
        """
        err = tempfile.TemporaryFile()
        try:
            proc, cleanup = self._start(workdir, argv, limits, env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=err)
        except BaseException:
            err.close()
            raise
        return SandboxProcess(proc, err, limits, cleanup)


@functools.cache
def _pids() -> tuple[PidsController | None, str]:
    return find_pids_controller()


@functools.cache
def _memory() -> tuple[MemoryController | None, str]:
    return find_memory_controller()


_WARNED: set[str] = set()


def _warn_once(msg: str) -> None:
    if msg in _WARNED:
        return
    _WARNED.add(msg)
    log.warning(msg)
    warnings.warn(msg, RuntimeWarning, stacklevel=3)
