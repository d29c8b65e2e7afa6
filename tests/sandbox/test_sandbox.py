"""Per-rollout sandbox lifecycle: parallel rollouts, creation, release, TTL reaping, cleanup at exit and after kill -9."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from rft_sdk import Rollout
from rft_sdk.sandbox import (
    ContainerBackend,
    SandboxError,
    SandboxLimits,
    SandboxPool,
    remove_stale_roots,
)
from rft_sdk.testing import free_port

ROOT = Path(__file__).resolve().parents[2]

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


def test_ungraded_sandboxes_are_reaped_in_the_background(tmp_path: Path) -> None:
    pool = SandboxPool(tmp_path / "b", ttl_s=0.5, sweep_every_s=0.2)
    try:
        pool.create("discarded-rollout")
        deadline = time.monotonic() + 15
        while pool.get("discarded-rollout") is not None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pool.get("discarded-rollout") is None and len(pool) == 0
    finally:
        pool.close()


_MAKE_POOL = """
import os, sys, time
from rft_sdk.sandbox import SandboxPool
pool = SandboxPool()
pool.create("t").write_text("f.txt", "x")
print(pool.root, flush=True)
if sys.argv[1] == "hang":
    time.sleep(600)
"""


def _roots(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("rft-sandboxes-*"))


def test_owned_root_removed_at_exit_and_by_the_next_start(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", _MAKE_POOL, "exit"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).parent == tmp_path and _roots(tmp_path) == []  # removed at exit
    proc = subprocess.Popen([sys.executable, "-c", _MAKE_POOL, "hang"], env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    left = Path(proc.stdout.readline().strip())
    for pid in _janitors(left):
        os.kill(pid, signal.SIGKILL)
    proc.kill()
    proc.wait()
    time.sleep(0.3)
    assert _roots(tmp_path) == [left]  # kill -9 of the process and its janitor: nothing ran
    other = tmp_path / "rft-sandboxes-legacy-in-use"
    other.mkdir()  # an old-style root in use by someone else: kept
    assert remove_stale_roots(tmp_path) == [left]
    assert _roots(tmp_path) == [other]


async def _first_tool_call(base_url: str) -> None:
    item = json.loads((ROOT / "examples/code_research/data/test.jsonl").read_text().splitlines()[0])
    body = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "list_dir",
            "arguments": json.dumps({"path": "."}), "trace_id": "trace_" + uuid.uuid4().hex, "item": item}
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        resp = await client.post("/tools/list_dir", json=body)
    assert resp.status_code == 200, resp.text


def _serve(env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "rft_sdk", "serve", "examples.code_research.app:server",
                             "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"], cwd=ROOT, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("server did not start")


def _gone(tmp: Path, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while _roots(tmp) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _roots(tmp) == []


def _janitors(root: Path) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"rft-sandbox-janitor" in cmd and str(root).encode() in cmd:
            pids.append(int(entry))
    return pids


def test_no_root_survives_a_server_stop_or_a_kill_9_and_restart(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    env.pop("RFT_SANDBOX_ROOT", None)
    proc, url = _serve(env)
    asyncio.run(_first_tool_call(url))
    assert len(_roots(tmp_path)) == 1
    proc.send_signal(signal.SIGTERM)  # a normal stop (uvicorn re-raises SIGTERM: atexit does not run)
    assert proc.wait(30) in (0, -signal.SIGTERM)
    assert _gone(tmp_path)
    proc, url = _serve(env)
    asyncio.run(_first_tool_call(url))
    proc.kill()  # kill -9 of the server: its janitor removes the root
    proc.wait()
    assert _gone(tmp_path)
    proc, url = _serve(env)
    asyncio.run(_first_tool_call(url))
    [root] = _roots(tmp_path)
    for pid in _janitors(root):  # kill -9 of the server and of its janitor: the root stays behind ...
        os.kill(pid, signal.SIGKILL)
    proc.kill()
    proc.wait()
    time.sleep(0.5)
    assert _roots(tmp_path) == [root]
    proc, url = _serve(env)  # ... until the next server starts
    try:
        assert _roots(tmp_path) == []
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    assert _gone(tmp_path)


_ENGINE = """#!/bin/sh
# A stand-in for the docker CLI (no container daemon on this machine): logs its argv, and `run` hangs
# like a container that outlives its timeout.
echo "$@" >> LOG
[ "$1" = run ] && exec sleep 600
exit 0
"""


def test_container_backend_removes_a_timed_out_container(tmp_path: Path) -> None:
    """Killing `docker run` (the client) leaves the container running: the backend must `rm -f` it by name."""
    engine, log = tmp_path / "engine", tmp_path / "engine.log"
    engine.write_text(_ENGINE.replace("LOG", shlex.quote(str(log))))
    engine.chmod(0o755)
    backend = ContainerBackend("img", engine=str(engine))
    res = backend.run(tmp_path, ["python", "-c", "while True: pass"], SandboxLimits(timeout_s=1))
    assert res.timed_out
    run, rm = log.read_text().splitlines()
    name = run.split("--name ")[1].split()[0]
    assert name.startswith("rft-sbx-") and rm == f"rm -f {name}"
    with backend.popen(tmp_path, ["cat"], SandboxLimits(timeout_s=30)):
        deadline = time.monotonic() + 30  # the client has started once it logged its `run` (else close kills it first)
        while len(log.read_text().splitlines()) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    run2, rm2 = log.read_text().splitlines()[2:]
    name2 = run2.split("--name ")[1].split()[0]
    assert name2 != name and rm2 == f"rm -f {name2}"
