"""``rft init``: the scaffold passes ``rft validate``, ``rft emulate`` and ``rft doctor`` as generated.

Every step runs as a user runs it: a subprocess of ``python -m rft_sdk ...`` in the task folder,
against a real ``rft serve`` of the generated app on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from rft_sdk._cli_commands import plugin_commands
from rft_sdk._commands.init import DOCTOR_PRINCIPLES, next_commands
from rft_sdk.surfaces import HostedClient
from rft_sdk.testing import free_port, serve_process

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
ENV.pop("RFT_AUTH_TOKENS", None)
ENV.pop("RFT_DB_DIR", None)  # the scaffold's databases then go to .rft-db/ beside app.py, as these tests expect


def rft(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rft_sdk", *args], cwd=cwd, env=ENV, capture_output=True,
                          text=True, timeout=timeout)


def init(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``rft init`` when this checkout's entry points are installed, else its module (the same ``run``)."""
    if "init" in plugin_commands():
        return rft("init", *args, cwd=cwd)
    return subprocess.run([sys.executable, "-m", "rft_sdk._commands.init", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=120)


def step(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """One printed ``rft ...`` command, run as printed."""
    argv = shlex.split(command)
    assert argv[0] == "rft"
    return rft(*argv[1:], cwd=cwd)


def test_pyproject_declares_the_init_command() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert data["project"]["entry-points"]["rft_sdk.commands"]["init"] == "rft_sdk._commands.init"


@pytest.mark.slow
def test_the_scaffold_passes_validate_emulate_and_doctor(tmp_path: Path) -> None:
    port = free_port()
    made = init("task", "--port", str(port), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    task = tmp_path / "task"
    steps = next_commands(port)
    for name in ("validate", "serve", "emulate"):  # the next three commands, printed
        assert steps[name] in made.stdout
    # (a __pycache__ of the run's own imports may sit beside them: bytecode is cached, not part of the scaffold)
    assert sorted(p.name for p in task.iterdir() if p.name != "__pycache__") == [
        ".gitignore", "app.py", "job.json", "test_app.py", "train.jsonl"]
    assert [json.loads(line)["max_tool_calls"] for line in (task / "train.jsonl").read_text().splitlines()] == [4] * 10

    checked = step(steps["validate"], task)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "10 gold trajectories replayed: 0 error(s), 0 warning(s)" in checked.stdout
    # the template lives in .rft-db/<name>/: another task's database in the same .rft-db/ never shares it
    assert [p.relative_to(task).as_posix() for p in (task / ".rft-db").glob("**/template.db")] == [
        ".rft-db/task/template.db"]

    with serve_process("app:server", port=port, cwd=task, env={"PYTHONPATH": ENV["PYTHONPATH"]}) as base:
        for live in (["--config", "job.json"], ["--url", base]):  # the dry run over HTTP, through the job's URLs too
            over_http = rft("validate", "train.jsonl", *live, cwd=task)
            assert over_http.returncode == 0, over_http.stdout + over_http.stderr
            assert "10 gold trajectories replayed: 0 error(s)" in over_http.stdout, over_http.stdout

        ref = step(steps["emulate"], task)
        assert ref.returncode == 0, ref.stderr
        reference = json.loads((task / "runs/reference/summary.json").read_text())
        assert reference["reward"]["mean"] == 1.0 and reference["reward"]["min"] == 1.0

        bad = step(steps["perturbed"], task)
        assert bad.returncode == 0, bad.stderr
        perturbed = json.loads((task / "runs/perturbed/summary.json").read_text())
        assert perturbed["reward"]["mean"] < reference["reward"]["mean"]
        assert perturbed["reward"]["max"] == 0.0  # every perturbation drops the one write: the end state differs

        doctor = step(steps["doctor"], task)
        assert doctor.returncode == 0, doctor.stdout[-3000:] + doctor.stderr[-2000:]
        report = json.loads((task / "runs/doctor/doctor.json").read_text())
        assert report["passed"] is True
        assert set(report["principles"]) == set(DOCTOR_PRINCIPLES.split(","))
        assert report["principles"]["gradeable"]["passed"] is True
        unhackable = report["principles"]["unhackable"]
        assert unhackable["passed"] is True and unhackable["failed_probes"] == unhackable["warned_probes"] == []

    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_app.py"],
                           cwd=task, env=ENV, capture_output=True, text=True, timeout=300)
    assert tests.returncode == 0, tests.stdout[-3000:]
    assert "4 passed" in tests.stdout


def test_init_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "task").mkdir()
    (tmp_path / "task" / "mine.py").write_text("x = 1\n")
    refused = init("task", cwd=tmp_path)
    assert refused.returncode == 2
    assert "exists and is not empty" in refused.stderr
    assert [p.name for p in (tmp_path / "task").iterdir()] == ["mine.py"]  # nothing written


def test_init_refuses_a_bad_port(tmp_path: Path) -> None:
    refused = init("task", "--port", "70000", cwd=tmp_path)
    assert refused.returncode == 2 and "--port" in refused.stderr
    assert not (tmp_path / "task").exists()


@pytest.mark.slow
def test_two_servers_of_the_scaffold_with_different_rft_db_dir_keep_their_databases_apart(tmp_path: Path) -> None:
    made = init("task", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    task = tmp_path / "task"
    item = json.loads((task / "train.jsonl").read_text().splitlines()[0])
    lend = item["actions"][1]

    async def lend_once(base: str) -> str:
        trace = "trace_" + uuid.uuid4().hex
        async with HostedClient.over_http(base) as client:
            answer = await client.call_tool(trace, lend["name"], lend["arguments"], item)
        assert answer.ok, answer.model_text
        return trace

    folders = {name: tmp_path / name for name in ("train", "eval")}
    env = {"PYTHONPATH": ENV["PYTHONPATH"]}
    with serve_process("app:server", cwd=task, env={**env, "RFT_DB_DIR": str(folders["train"])}) as train, \
            serve_process("app:server", cwd=task, env={**env, "RFT_DB_DIR": str(folders["eval"])}) as evaluate:
        for base in (train, evaluate):
            asyncio.run(lend_once(base))
        for folder in folders.values():  # each server's template and its one rollout, in its own $RFT_DB_DIR/<name>
            assert (folder / "task" / "template.db").is_file()
            assert len(list((folder / "task").glob("r-*.db"))) == 1
    assert not (task / ".rft-db").exists()  # the default folder beside the code is not used when RFT_DB_DIR is set
