"""``ContainerBackend``: each sandboxed command in a fresh container (``docker``/``podman``)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import secrets
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from ._run import CommandResult, IsolationReport, LocalBackend, SandboxError, SandboxLimits, SandboxProcess

__all__ = ["ContainerBackend"]


class ContainerBackend:
    """Runs each command in a fresh container (``docker run --rm``) with the
    sandbox directory bind-mounted at ``/work``; the same interface as
    ``LocalBackend``. Limits map to ``--network none``, ``--memory``,
    ``--pids-limit``, ``--cpus 1``, ``--user`` and ``--ulimit fsize/nofile/cpu``.
    Each container gets a unique ``--name`` (``rft-sbx-<hex>``): killing the
    engine's client does not stop a container, so a command that times out (or
    an interactive one that is closed) is removed with ``docker rm -f NAME``.

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

    @property
    def isolation(self) -> IsolationReport:
        """What the container engine enforces (everything, by construction)."""
        return IsolationReport("container", True, True, "--pids-limit", f"uid {SandboxLimits().uid()}",
                               memory="--memory (the whole container)")

    def command(self, workdir: Path, argv: Sequence[str], limits: SandboxLimits,
                env: Mapping[str, str] | None = None, *, name: str | None = None) -> list[str]:
        """The ``docker run`` argv for one command (no side effects); ``name``: the container's ``--name``."""
        uid = limits.uid()
        cmd = [self.engine, "run", "--rm", "-i", "--cpus", "1", "--user", f"{uid}:{uid}", "-v", f"{workdir}:/work",
               "-w", "/work"]
        if name is not None:
            cmd += ["--name", name]
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

    def _outer(self, limits: SandboxLimits) -> SandboxLimits:
        return dataclasses.replace(limits, network=True, cpu_s=None, memory_bytes=None, max_processes=None,
                                   file_size_bytes=None, open_files=None, run_as_uid=os.geteuid())

    def remove(self, name: str) -> None:
        """``docker rm -f NAME``: stop and remove the container (no error when it is already gone)."""
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run([self.engine, "rm", "-f", name], capture_output=True, timeout=60)

    def run(self, workdir: Path, argv: Sequence[str], limits: SandboxLimits, *,
            env: Mapping[str, str] | None = None, stdin: bytes | None = None) -> CommandResult:
        """Run ``argv`` in a container; on timeout the client is killed and the container removed."""
        name = f"rft-sbx-{secrets.token_hex(8)}"
        result = _HOST.run(workdir, self.command(workdir, argv, limits, env, name=name), self._outer(limits),
                           stdin=stdin)
        if result.timed_out:
            self.remove(name)
        return result

    def popen(self, workdir: Path, argv: Sequence[str], limits: SandboxLimits, *,
              env: Mapping[str, str] | None = None) -> SandboxProcess:
        """Start ``argv`` in a container with pipes; ``close()`` kills the client and removes the container."""
        name = f"rft-sbx-{secrets.token_hex(8)}"
        proc = _HOST.popen(workdir, self.command(workdir, argv, limits, env, name=name), self._outer(limits))
        release = proc._cleanup

        def cleanup() -> None:
            release()
            self.remove(name)

        proc._cleanup = cleanup
        return proc


class _HostRunner(LocalBackend):
    """A plain process group (for the container engine's client)."""

    def __init__(self) -> None:
        self.ro_paths, self._requested, self.strict = (), "process", False
        self._pids, self._memory, self.mode, self._problems = None, None, "process", ()


_HOST = _HostRunner()
