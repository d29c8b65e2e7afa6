"""Bounds per sandboxed command: a ``pids`` cgroup with ``pids.max``, and a ``memory`` cgroup.

Memory (issue 39): ``RLIMIT_AS`` bounds each process, so a command of N processes could use N times
``memory_bytes``. Where a ``memory`` controller is writable, each command also gets a memory group
(cgroup v2 ``memory.max`` with ``memory.swap.max`` 0, in the same group as its ``pids.max``; cgroup v1
``memory.limit_in_bytes``, plus ``memory.memsw.limit_in_bytes`` when swap accounting is on) that bounds
the resident memory of the command's whole tree; past it the kernel's OOM killer ends a process of that
command only (``Documentation/admin-guide/cgroup-v2.rst`` "Memory", ``cgroup-v1/memory.rst``).

``RLIMIT_NPROC`` counts every process of a uid and the kernel ignores it for
root, so it is no bound for a server that runs as root. A cgroup's
``pids.max`` holds for every uid, root included, and counts only the
command's own processes. This module finds a writable ``pids`` controller —
cgroup v2 (``pids`` in ``cgroup.controllers``; enabled in our group's
``cgroup.subtree_control`` when missing) or, on hybrid hosts, the v1 ``pids``
hierarchy — and makes one child group per command (``rft-sbx-<pid>-<n>``),
killed and removed when the command ends. Groups of a server that died are
removed when the next one starts.

Kernel documentation: ``Documentation/admin-guide/cgroup-v2.rst`` ("PID",
``cgroup.kill``) and ``Documentation/admin-guide/cgroup-v1/pids.rst``.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import threading
import time
from pathlib import Path
from typing import TypeVar

__all__ = ["MemoryController", "PidsController", "find_memory_controller", "find_pids_controller"]

_PREFIX = "rft-sbx-"


def _mounts() -> list[tuple[str, str, set[str]]]:
    """``(mount point, fs type, super options)`` of every mount (``/proc/self/mountinfo``)."""
    out = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                fields, rest = left.split(), right.split()
                if len(fields) >= 5 and len(rest) >= 3:
                    out.append((fields[4].replace("\\040", " "), rest[0], set(rest[2].split(","))))
    except OSError:
        pass
    return out


def _own_groups() -> dict[str, str]:
    """``{controller list or "": path}`` from ``/proc/self/cgroup``."""
    out = {}
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                out[controllers] = path
    except (OSError, ValueError):
        pass
    return out


class PidsController:
    """Makes, kills and removes per-command ``pids`` groups under ``base``.

    Attributes:
        base: the directory new groups are made in.
        version: 1 or 2 (the cgroup hierarchy version).
    """

    _counter = itertools.count()

    def __init__(self, base: Path, version: int) -> None:
        self.base, self.version = base, version
        self._lock = threading.Lock()

    @property
    def label(self) -> str:
        """E.g. ``"cgroup v2 pids.max"``."""
        return f"cgroup v{self.version} pids.max"

    def new_group(self, max_pids: int) -> Path:
        """A new group allowing ``max_pids`` processes (tasks) at most.

        Raises:
            OSError: it could not be made.
        """
        with self._lock:
            n = next(self._counter)
        group = self.base / f"{_PREFIX}{os.getpid()}-{n}"
        group.mkdir()
        try:
            (group / "pids.max").write_text(str(max_pids))
        except OSError:
            group.rmdir()
            raise
        return group

    @staticmethod
    def join(group: Path) -> None:
        """Move the calling process into ``group`` (call it in the child before ``exec``)."""
        fd = os.open(group / "cgroup.procs", os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)

    def kill_and_remove(self, group: Path, wait_s: float = 5.0) -> bool:
        """SIGKILL every process of ``group``, then remove it. Returns whether it is gone."""
        deadline = time.monotonic() + wait_s
        kill = group / "cgroup.kill"
        while True:
            if self.version == 2 and kill.exists():
                with contextlib.suppress(OSError):
                    kill.write_text("1")
            try:
                pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
            except FileNotFoundError:
                return True
            except OSError:
                pids = []
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            try:
                group.rmdir()
                return True
            except FileNotFoundError:
                return True
            except OSError:
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.01)

    def remove_stale(self) -> int:
        """Kill and remove the groups of servers that are no longer running; returns how many."""
        removed = 0
        with contextlib.suppress(OSError):
            for entry in self.base.iterdir():
                if not entry.name.startswith(_PREFIX):
                    continue
                try:
                    pid = int(entry.name[len(_PREFIX):].split("-")[0])
                except ValueError:
                    continue
                if pid != os.getpid() and not Path(f"/proc/{pid}").exists():
                    removed += self.kill_and_remove(entry, wait_s=1.0)
        return removed


_Controller = TypeVar("_Controller", bound="PidsController")


def _probe(kind: type[_Controller], base: Path, version: int, probe_limit: int) -> _Controller | None:
    ctl = kind(base, version)
    try:
        group = ctl.new_group(probe_limit)
    except OSError:
        return None
    ctl.kill_and_remove(group)
    ctl.remove_stale()
    return ctl


def _find_controller(kind: type[_Controller], name: str, probe_limit: int) -> tuple[_Controller | None, str]:
    """A writable controller ``name`` (``"pids"``, ``"memory"``) as ``kind``, v2 first, else ``None`` and why."""
    groups, mounts = _own_groups(), _mounts()
    reasons = []
    for point, fstype, _ in mounts:
        if fstype != "cgroup2" or "" not in groups:
            continue
        base = Path(point) / groups[""].lstrip("/")
        try:
            controllers = (base / "cgroup.controllers").read_text().split()
        except OSError:
            continue
        if name not in controllers:
            reasons.append(f"cgroup v2 at {point}: no {name} controller delegated here")
            continue
        subtree = base / "cgroup.subtree_control"
        with contextlib.suppress(OSError):
            if name not in subtree.read_text().split():
                subtree.write_text(f"+{name}")
        ctl = _probe(kind, base, 2, probe_limit)
        if ctl is not None:
            return ctl, ""
        reasons.append(f"cgroup v2 at {point}: {base} is not writable")
    for point, fstype, options in mounts:
        if fstype != "cgroup" or name not in options:
            continue
        path = next((p for c, p in groups.items() if name in c.split(",")), None)
        if path is None:
            continue
        ctl = _probe(kind, Path(point) / path.lstrip("/"), 1, probe_limit)
        if ctl is not None:
            return ctl, ""
        reasons.append(f"cgroup v1 {name} at {point}: not writable")
    return None, "; ".join(reasons) or f"no {name} cgroup controller mounted"


def find_pids_controller() -> tuple[PidsController | None, str]:
    """A writable ``pids`` controller, or ``None`` and the reason there is none."""
    return _find_controller(PidsController, "pids", 8)


class MemoryController(PidsController):
    """Makes, kills and removes per-command ``memory`` groups under ``base`` (see the module docstring)."""

    @property
    def label(self) -> str:
        """E.g. ``"cgroup v1 memory.limit_in_bytes"``."""
        return "cgroup v2 memory.max" if self.version == 2 else "cgroup v1 memory.limit_in_bytes"

    def limit(self, group: Path, limit_bytes: int) -> None:
        """Bound ``group``'s memory (its whole tree) to ``limit_bytes``, swap included.

        Raises:
            OSError: the limit could not be written.
        """
        if self.version == 2:
            (group / "memory.max").write_text(str(limit_bytes))
            with contextlib.suppress(OSError):  # no swap controller: nothing to swap to either
                (group / "memory.swap.max").write_text("0")
            return
        (group / "memory.limit_in_bytes").write_text(str(limit_bytes))
        memsw = group / "memory.memsw.limit_in_bytes"
        if memsw.exists():  # swap accounting on: memory + swap bounded by the same figure
            memsw.write_text(str(limit_bytes))

    def new_group(self, limit_bytes: int) -> Path:  # a byte count, where the parent takes a pid count
        """A new group whose memory (its whole tree, swap included) is bounded to ``limit_bytes``.

        Raises:
            OSError: it could not be made.
        """
        with self._lock:
            n = next(self._counter)
        group = self.base / f"{_PREFIX}{os.getpid()}-m{n}"
        group.mkdir()
        try:
            self.limit(group, limit_bytes)
        except OSError:
            group.rmdir()
            raise
        return group


def find_memory_controller() -> tuple[MemoryController | None, str]:
    """A writable ``memory`` controller, or ``None`` and the reason there is none."""
    return _find_controller(MemoryController, "memory", 64 * 2**20)
