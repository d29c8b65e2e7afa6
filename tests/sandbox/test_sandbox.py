"""Per-rollout sandbox: isolation between parallel rollouts, cleanup, limits."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rft_sdk import Rollout
from rft_sdk.sandbox import (
    ContainerBackend,
    SandboxError,
    SandboxLimits,
    SandboxPathError,
    SandboxPool,
    network_isolation_available,
)

needs_unshare = pytest.mark.skipif(not network_isolation_available(), reason="unshare --user --net unusable here")


@pytest.fixture
def template(tmp_path: Path) -> Path:
    t = tmp_path / "template"
    (t / "pkg").mkdir(parents=True)
    (t / "pkg" / "mod.py").write_text("X = 1\n")
    (t / "README").write_text("template\n")
    return t


@pytest.fixture
def pool(tmp_path: Path):
    p = SandboxPool(tmp_path / "boxes", limits=SandboxLimits(timeout_s=10))
    yield p
    p.close()


def _processes_with(marker: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        pids.append(int(entry))
            except OSError:
                continue
    return pids


def test_32_parallel_rollouts_see_only_their_own_files(pool: SandboxPool, template: Path) -> None:
    def rollout(i: int) -> tuple[int, str, str]:
        box = pool.for_rollout(Rollout(f"trace-{i}", {}, {}), template)
        write = box.run(["sh", "-c", f"echo {i} > mine_{i}.txt && echo 'print({i} * 2)' > run_{i}.py"])
        assert write.ok, write
        ran = box.run([sys.executable, f"run_{i}.py"])
        listing = box.run(["sh", "-c", "ls -1 | sort"])
        return i, ran.stdout.strip(), listing.stdout

    with ThreadPoolExecutor(32) as ex:
        results = list(ex.map(rollout, range(32)))
    for i, ran, listing in results:
        assert ran == str(i * 2)
        assert listing.split() == sorted(["README", f"mine_{i}.txt", "pkg", f"run_{i}.py"])
    assert len(pool) == 32
    assert not (template / "mine_0.txt").exists()  # the template is untouched


def test_create_is_idempotent_and_release_removes(pool: SandboxPool, template: Path) -> None:
    a = pool.create("t", template)
    (a.path / "new.txt").write_text("x")
    b = pool.create("t", template)
    assert b.path == a.path and (b.path / "new.txt").read_text() == "x"
    assert pool.release("t") is True
    assert not a.path.exists() and pool.get("t") is None
    assert pool.release("t") is False


def test_timeout_kills_the_whole_process_tree(pool: SandboxPool) -> None:
    marker = f"{uuid.uuid4().int % 10**6 + 10**6}"
    box = pool.create("slow")
    t0 = time.monotonic()
    res = box.run(["sh", "-c", f"sleep {marker} & sleep {marker} & sleep {marker}"], timeout_s=1.0)
    assert res.timed_out and not res.ok and res.returncode < 0
    assert time.monotonic() - t0 < 8
    time.sleep(0.2)
    assert _processes_with(f"sleep\x00{marker}") == []


def test_background_children_die_when_the_command_ends(pool: SandboxPool) -> None:
    marker = f"{uuid.uuid4().int % 10**6 + 10**6}"
    res = pool.create("bg").run(["sh", "-c", f"sleep {marker} >/dev/null 2>&1 & echo started"])
    assert res.ok and res.stdout.strip() == "started"
    time.sleep(0.2)
    assert _processes_with(f"sleep\x00{marker}") == []


@needs_unshare
def test_setsid_escape_dies_with_the_pid_namespace(pool: SandboxPool) -> None:
    marker = f"{uuid.uuid4().int % 10**6 + 10**6}"
    res = pool.create("escape").run(["sh", "-c", f"setsid sleep {marker} >/dev/null 2>&1 & sleep 30"], timeout_s=1)
    assert res.timed_out
    time.sleep(0.2)
    assert _processes_with(f"sleep\x00{marker}") == []


@needs_unshare
def test_no_network(pool: SandboxPool) -> None:
    code = "import socket; s = socket.socket(); s.settimeout(2); s.connect(('1.1.1.1', 53))"
    res = pool.create("net").run([sys.executable, "-c", code])
    assert res.returncode != 0 and "unreachable" in res.stderr.lower()
    ifaces = pool.create("net").run(["cat", "/proc/net/dev"]).stdout
    assert [line.split(":")[0].strip() for line in ifaces.splitlines()[2:]] == ["lo"]


def test_file_size_memory_cpu_and_output_limits(tmp_path: Path) -> None:
    limits = SandboxLimits(timeout_s=20, cpu_s=1, memory_bytes=300 * 1024**2, file_size_bytes=1024**2,
                           output_bytes=1000)
    pool = SandboxPool(tmp_path / "b", limits=limits)
    box = pool.create("lim")
    big = box.run([sys.executable, "-c", "open('f', 'wb').write(b'x' * 2_000_000)"])
    assert big.returncode != 0 and (box.path / "f").stat().st_size <= 1024**2
    mem = box.run([sys.executable, "-c", "b = bytearray(600 * 1024**2)"])
    assert mem.returncode != 0 and "MemoryError" in mem.stderr
    cpu = box.run([sys.executable, "-c", "while True: pass"])
    assert not cpu.timed_out and cpu.returncode != 0 and cpu.duration_s < 15
    out = box.run([sys.executable, "-c", "print('y' * 5000)"])
    assert out.truncated and len(out.stdout) == 1000
    pool.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="run_as_uid needs root")
def test_process_limit_as_unprivileged_user(tmp_path: Path) -> None:
    limits = SandboxLimits(timeout_s=10, max_processes=6, run_as_uid=65534)
    pool = SandboxPool(tempfile.mkdtemp(dir="/tmp"), limits=limits)  # parents searchable by uid 65534
    box = pool.create("procs")
    assert box.run(["touch", "written"]).ok and (box.path / "written").exists()  # tree writable by the uid
    res = box.run(["sh", "-c", "for i in $(seq 30); do sleep 2 & done; wait"])
    assert res.returncode != 0 and "fork" in res.stderr.lower(), res
    pool.close()


def test_path_escape_refused(pool: SandboxPool, template: Path) -> None:
    box = pool.create("p", template)
    assert box.resolve("pkg/mod.py") == box.path / "pkg" / "mod.py"
    os.symlink("/etc", box.path / "link")
    for bad in ("../x", "/etc/passwd", "link/passwd", "pkg/../../x"):
        with pytest.raises(SandboxPathError):
            box.resolve(bad)


def test_ttl_sweep_removes_stale_sandboxes(tmp_path: Path) -> None:
    pool = SandboxPool(tmp_path / "b", ttl_s=60)
    pool.create("old")
    pool.create("new")
    old_meta = next(p for p in (tmp_path / "b").glob("*/sandbox.json") if '"old"' in p.read_text())
    os.utime(old_meta, (time.time() - 120, time.time() - 120))
    assert pool.sweep() == 1
    assert pool.get("old") is None and pool.get("new") is not None


@pytest.mark.parametrize("copy", ["auto", "copy", "hardlink"])
def test_copy_modes(tmp_path: Path, template: Path, copy: str) -> None:
    pool = SandboxPool(tmp_path / copy, copy=copy)
    box = pool.create("c", template)
    assert (box.path / "pkg" / "mod.py").read_text() == "X = 1\n"
    linked = (box.path / "README").stat().st_ino == (template / "README").stat().st_ino
    assert linked is (copy == "hardlink")


def test_bad_template_and_command(pool: SandboxPool, tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="not a directory"):
        pool.create("x", tmp_path / "missing")
    with pytest.raises(SandboxError, match="cannot start"):
        pool.create("y").run(["definitely-not-a-command-xyz"])
    with pytest.raises(ValueError, match="timeout_s"):
        SandboxLimits(timeout_s=0)


def test_container_backend_interface() -> None:
    with pytest.raises(SandboxError, match="not found"):
        ContainerBackend("python:3.11", engine="no-such-engine-xyz")
    if shutil.which("docker") is None:
        pytest.skip("docker not installed")
    backend = ContainerBackend("python:3.11-slim")
    argv = backend.command(Path("/tmp/w"), ["python", "-V"], SandboxLimits(max_processes=10))
    assert argv[-2:] == ["python", "-V"] and "--network" in argv and "--pids-limit" in argv
