"""What model-written code can and cannot do in the real sandbox (bubblewrap, pids cgroup, uid drop).

Every test runs commands through ``Sandbox.run`` exactly as a tool would; the
assertions are about the host afterwards (files untouched, processes gone).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
import uuid
from pathlib import Path

import pytest

from rft_sdk.sandbox import (
    LocalBackend,
    SandboxError,
    SandboxLimits,
    SandboxPathError,
    SandboxPool,
)

ISOLATION = LocalBackend().isolation
needs_fs = pytest.mark.skipif(not ISOLATION.filesystem, reason=f"no filesystem isolation here: {ISOLATION.problems}")
needs_net = pytest.mark.skipif(not ISOLATION.network, reason="no network namespace here")
needs_cgroup = pytest.mark.skipif(not ISOLATION.pids.startswith("cgroup"), reason="no writable pids cgroup here")
is_root = os.geteuid() == 0


@pytest.fixture
def pool(tmp_path: Path):
    p = SandboxPool(tmp_path / "boxes", limits=SandboxLimits(timeout_s=20, max_processes=32))
    yield p
    p.close()


def _py(box, code: str, **kw):
    return box.run([sys.executable, "-c", code], **kw)


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


def test_this_host_contains_commands_completely() -> None:
    """CI (root, Debian, bubblewrap from `make test`) must get the full isolation, not the fallback."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed (make test installs it)")
    report = LocalBackend().isolation
    assert report.mode == "bwrap" and report.filesystem and report.network, report
    assert report.user != "uid 0"
    if is_root:
        assert report.pids.startswith("cgroup"), report
        assert report.complete and report.problems == ()


@needs_fs
def test_two_rollouts_cannot_reach_each_other_or_the_host(pool: SandboxPool, tmp_path: Path) -> None:
    a, b = pool.create("rollout-a"), pool.create("rollout-b")
    b.write_text("secret.txt", "rollout B secret")
    outside = tmp_path / "host-file.txt"
    outside.write_text("host data")
    code = f"""
import os
for path in [{str(b.path / 'secret.txt')!r}, {str(outside)!r}, "/etc/shadow", {str(Path(__file__))!r}]:
    try:
        print("READ", path, open(path).read())
    except OSError as exc:
        print("DENIED", path, type(exc).__name__)
for path in [{str(b.path / 'planted.txt')!r}, {str(tmp_path / 'planted.txt')!r}, "/planted", "/usr/planted",
             "/etc/planted"]:
    try:
        open(path, "w").write("x")
        print("WROTE", path)
    except OSError as exc:
        print("DENIED", path, type(exc).__name__)
open("mine.txt", "w").write("ok")
print("UID", os.getuid())
"""
    res = _py(a, code)
    assert res.ok, res.text()
    assert "READ" not in res.stdout and "WROTE" not in res.stdout, res.stdout
    assert res.stdout.count("DENIED") == 9
    assert not (b.path / "planted.txt").exists() and not (tmp_path / "planted.txt").exists()
    assert outside.read_text() == "host data" and b.read_text("secret.txt") == "rollout B secret"
    assert a.read_text("mine.txt") == "ok"
    uid = int(res.stdout.split("UID ")[1])
    assert uid != 0 and uid == SandboxLimits().uid()


@needs_fs
def test_the_venv_interpreter_works_for_the_unprivileged_user(pool: SandboxPool) -> None:
    res = _py(pool.create("py"), "import os, sys, pytest, torch; print(os.getuid(), sys.prefix)",
              timeout_s=120)
    assert res.ok, res.text()
    uid, prefix = res.stdout.split()
    assert prefix == sys.prefix and int(uid) == SandboxLimits().uid()


@needs_fs
def test_only_own_processes_and_tree_are_visible(pool: SandboxPool) -> None:
    res = pool.create("ps").run(["sh", "-c", "ls /proc | grep -c '^[0-9]'; ls /; ls /tmp"])
    assert res.ok, res.text()
    count, *listing = res.stdout.split()
    assert int(count) <= 6  # bwrap's init, sh, ls, grep
    assert not {"home", "var", "srv", "opt", "boot", "mnt", "run"} & set(listing), listing


@needs_net
def test_loopback_is_up_and_the_outside_unreachable(pool: SandboxPool) -> None:
    code = """
import socket
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen()
cli = socket.create_connection(srv.getsockname(), timeout=5)
conn, _ = srv.accept(); cli.sendall(b"ping"); print(conn.recv(4).decode())
try:
    socket.create_connection(("1.1.1.1", 53), timeout=3)
    print("REACHED")
except OSError as exc:
    print("UNREACHABLE", exc.errno)
print(open("/proc/net/dev").read())
"""
    res = _py(pool.create("net"), code)
    assert res.ok, res.text()
    assert res.stdout.startswith("ping\n") and "UNREACHABLE" in res.stdout and "REACHED" not in res.stdout
    ifaces = [line.split(":")[0].strip() for line in res.stdout.splitlines() if ":" in line and "|" not in line]
    assert ifaces == ["lo"]


FORK_LOOP = """
import os, time
n = 0
for _ in range(150):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(3)
        os._exit(0)
    n += 1
print("FORKED", n, "UID", os.getuid())
"""


@needs_cgroup
@pytest.mark.skipif(not is_root, reason="the server must be root to run a command as root")
def test_fork_loop_as_root_stops_at_the_bound(tmp_path: Path) -> None:
    """RLIMIT_NPROC does not hold for uid 0; the pids cgroup does."""
    pool = SandboxPool(tmp_path / "b", limits=SandboxLimits(timeout_s=30, max_processes=20, run_as_uid=0))
    try:
        res = _py(pool.create("root-forks"), FORK_LOOP)
        assert res.ok, res.text()
        forked = int(res.stdout.split()[1])
        assert res.stdout.split()[3] == "0"  # it really ran as root
        assert 5 <= forked < 20, res.stdout  # python itself is one of the 20
    finally:
        pool.close()


def test_fork_loop_as_the_default_user_stops_at_the_bound(tmp_path: Path) -> None:
    pool = SandboxPool(tmp_path / "b", limits=SandboxLimits(timeout_s=30, max_processes=16))
    try:
        res = _py(pool.create("forks"), FORK_LOOP)
        assert res.ok, res.text()
        assert int(res.stdout.split()[1]) < 16, res.stdout
    finally:
        pool.close()


def test_timeout_kills_the_whole_process_tree(pool: SandboxPool) -> None:
    marker = f"{uuid.uuid4().int % 10**6 + 10**6}"
    t0 = time.monotonic()
    res = pool.create("slow").run(["sh", "-c", f"sleep {marker} & sleep {marker} & sleep {marker}"], timeout_s=1.0)
    assert res.timed_out and not res.ok
    assert time.monotonic() - t0 < 10
    time.sleep(0.3)
    assert _processes_with(f"sleep\x00{marker}") == []


@pytest.mark.parametrize("escape", ["", "setsid "])
def test_background_children_die_when_the_command_ends(pool: SandboxPool, escape: str) -> None:
    marker = f"{uuid.uuid4().int % 10**6 + 10**6}"
    res = pool.create("bg").run(["sh", "-c", f"{escape}sleep {marker} >/dev/null 2>&1 & echo started"])
    assert res.ok and res.stdout.strip() == "started"
    time.sleep(0.3)
    assert _processes_with(f"sleep\x00{marker}") == []


def test_file_size_memory_cpu_and_output_limits(tmp_path: Path) -> None:
    limits = SandboxLimits(timeout_s=20, cpu_s=1, memory_bytes=300 * 1024**2, file_size_bytes=1024**2,
                           output_bytes=1000)
    pool = SandboxPool(tmp_path / "b", limits=limits)
    box = pool.create("lim")
    big = _py(box, "open('f', 'wb').write(b'x' * 2_000_000)")
    assert big.returncode != 0 and (box.path / "f").stat().st_size <= 1024**2
    mem = _py(box, "b = bytearray(600 * 1024**2)")
    assert mem.returncode != 0 and "MemoryError" in mem.stderr
    cpu = _py(box, "while True: pass")
    assert not cpu.timed_out and cpu.returncode != 0 and cpu.duration_s < 15
    out = _py(box, "print('y' * 5000)")
    assert out.truncated and len(out.stdout) == 1000
    pool.close()


def test_file_methods_never_follow_links_the_code_planted(pool: SandboxPool, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("host file")
    box = pool.create("links")
    res = box.run(["sh", "-c", f"mkdir real && ln -s {tmp_path} sub && ln -s {victim} model_new.py && "
                               "ln -s /etc/passwd passwd"])
    assert res.ok, res.text()
    with pytest.raises(SandboxPathError, match="symbolic link"):
        box.write_text("model_new.py", "overwritten")
    with pytest.raises(SandboxPathError):
        box.write_text("sub/victim.txt", "overwritten")
    with pytest.raises(SandboxPathError):
        box.read_bytes("passwd")
    for bad in ("../x", "/etc/passwd", "real/../../x"):
        with pytest.raises(SandboxPathError):
            box.read_bytes(bad)
    assert victim.read_text() == "host file"
    assert box.files() == []  # links are not files
    box.write_text("real/ok.txt", "fine")
    assert box.read_text("real/ok.txt") == "fine" and box.files() == ["real/ok.txt"]
    assert _py(box, "open('real/ok.txt', 'a').write('!')").ok  # the command's uid owns what the server wrote
    assert box.read_text("real/ok.txt") == "fine!"


def test_release_removes_what_the_code_locked(pool: SandboxPool) -> None:
    box = pool.create("locked")
    assert box.run(["sh", "-c", "mkdir -p a/b && touch a/b/f && chmod 000 a/b a"]).ok
    assert pool.release("locked") and not box.path.exists()


def test_interactive_process_is_contained_and_killed(pool: SandboxPool) -> None:
    box = pool.create("popen")
    code = "import sys, os\nfor line in sys.stdin:\n    print(os.getuid(), line.strip()[::-1], flush=True)\n"
    with box.popen([sys.executable, "-c", code]) as proc:
        proc.stdin.write(b"abc\n")
        proc.stdin.flush()
        uid, text = proc.stdout.readline().decode().split()
        assert text == "cba" and int(uid) == SandboxLimits().uid()
        pid = proc.pid
    assert not Path(f"/proc/{pid}").exists()


def test_uncontained_backend_warns_loudly_or_refuses(monkeypatch: pytest.MonkeyPatch,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(SandboxError, match="NOT fully contained"):
        LocalBackend("process", strict=True)
    monkeypatch.setattr("rft_sdk.sandbox._run._WARNED", set())
    with pytest.warns(RuntimeWarning, match="NOT fully contained"):
        backend = LocalBackend("process")
    assert "NOT fully contained" in caplog.text
    assert not backend.isolation.filesystem and not backend.isolation.complete


def test_no_cgroup_is_left_behind(pool: SandboxPool) -> None:
    backend = pool.backend
    ctl = getattr(backend, "_pids", None)
    if ctl is None:
        pytest.skip("no pids cgroup here")
    for _ in range(3):
        assert pool.create("cg").run(["true"]).ok
    mine = [e.name for e in ctl.base.iterdir() if e.name.startswith(f"rft-sbx-{os.getpid()}-")]
    assert mine == []


def test_release_never_chmods_through_a_link_swapped_in_meanwhile(pool: SandboxPool, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A command still running when its sandbox is released (a tool call the trainer gave up on) can swap
    a directory for a symlink to a host path between the removal's check of the name and its use. The
    removal makes locked directories removable (chmod); that chmod must never reach the host path behind
    the link (the server may be root). The race (measured: 35 hits in 20,000 removals against a swapping
    process) is made deterministic here: the swap happens right after any check that ``a/d`` is no link."""
    victim = tmp_path / "victim"
    victim.mkdir()
    victim.chmod(0o755)
    box = pool.create("swap")
    assert box.run(["sh", "-c", "mkdir -p a/d && chmod 000 a/d"]).ok
    real_islink = os.path.islink

    def islink_then_swap(path) -> bool:  # the attacker's timing: right after the server looked
        answer = real_islink(path)
        d = Path(path)
        if d.name == "d" and d.parent.name == "a" and not answer:
            os.rename(d, d.parent / "moved")
            os.symlink(victim, d)
        return answer

    monkeypatch.setattr(os.path, "islink", islink_then_swap)
    assert pool.release("swap") and not box.path.exists()
    assert victim.stat().st_mode & 0o777 == 0o755


MEMORY_TREE = r"""
import subprocess, sys
child = "b = bytearray(150 * 2**20); b[::4096] = b'x' * len(b[::4096]); import time; time.sleep(2); print('ok')"
kids = [subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE) for _ in range(4)]
print(sum(k.communicate()[0].strip() == b"ok" for k in kids))
"""


@pytest.mark.skipif(not ISOLATION.memory.startswith("cgroup"), reason=f"no memory cgroup here: {ISOLATION.memory}")
def test_memory_bytes_bounds_the_whole_command_not_each_process(tmp_path: Path) -> None:
    """Issue 39 #11: with memory_bytes=256 MiB, 12 processes x 200 MiB reached 1,805 MiB (RLIMIT_AS is per
    process). Now 4 children touching 150 MiB each (600 MiB) cannot all live: the command's cgroup holds 256 MiB."""
    pool = SandboxPool(tmp_path / "b", limits=SandboxLimits(timeout_s=60, memory_bytes=256 * 2**20, max_processes=32))
    try:
        res = _py(pool.create("mem"), MEMORY_TREE)
        survived = int(res.stdout.split()[0]) if res.stdout.split() else 0
        assert survived <= 1, res.text()  # 150 MiB fits once in 256 MiB; never 4 x 150
        one = _py(pool.create("one"), "b = bytearray(150 * 2**20); b[::4096] = b'x' * len(b[::4096]); print('ok')")
        assert one.ok and one.stdout.strip() == "ok", one.text()  # a command within the bound runs
    finally:
        pool.close()


def test_the_isolation_report_states_the_memory_bound_honestly() -> None:
    report = LocalBackend().isolation
    assert report.memory.startswith("cgroup") or report.memory.startswith("RLIMIT_AS per process (a command may use")
