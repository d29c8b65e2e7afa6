"""The repository-backed dataset builders: clear errors, and no hidden environment variable.

A dataset built with ``--source`` carries ``source.json``; ``main_job --data-dir`` finds the
repository from it (issue #25: ``code_edit --data-dir`` used to die with a traceback unless two
environment variables were set).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from examples._repos import bare_repo

pytestmark = pytest.mark.slow  # a long file: the scheduler starts it first (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]


def _run(module: str, *args: str, env_drop: tuple[str, ...] = ("RFT_EXAMPLES_REPO", "RFT_EXAMPLES_PACKAGE")):
    env = {k: v for k, v in os.environ.items() if k not in env_drop}
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)


def test_too_short_a_history_is_a_clear_error_not_a_traceback(tmp_path):
    res = _run("examples.code_edit.build_dataset", "--recent", "6", "--out", str(tmp_path / "ce"))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "each split needs at least 10 (the hosted minimum)" in res.stderr and "gave" in res.stderr, res.stderr
    assert not (tmp_path / "ce").exists()  # nothing was written
    bad = _run("examples.code_edit.build_dataset", "--source", str(tmp_path), "--out", str(tmp_path / "x"))
    assert bad.returncode == 2 and "is not a git repository" in bad.stderr and "Traceback" not in bad.stderr


def test_a_source_dataset_runs_without_environment_variables(tmp_path):
    clone = tmp_path / "shelfkit"
    subprocess.run(["git", "clone", "-q", str(bare_repo()), str(clone)], check=True)
    built = _run("examples.code_edit.build_dataset", "--source", str(clone), "--package", "shelfkit",
                 "--out", str(tmp_path / "ce"))
    assert built.returncode == 0, built.stderr
    meta = json.loads((tmp_path / "ce" / "source.json").read_text())
    assert meta == {"source": str(clone.resolve()), "package": "shelfkit"}
    job = _run("examples.code_edit.main_job", "--data-dir", str(tmp_path / "ce"), "--limit", "1", "--samples", "1",
               "--runs-dir", str(tmp_path / "runs"))
    assert job.returncode == 0 and "Traceback" not in job.stderr, job.stdout[-2000:] + job.stderr[-2000:]
    assert "PASS reference replay scores 1.0" in job.stdout


def test_a_dataset_from_another_repository_is_a_clear_error(tmp_path):
    data = tmp_path / "foreign"
    data.mkdir()
    item = json.loads((ROOT / "examples/code_edit/data/test.jsonl").read_text().splitlines()[0])
    lines = [json.dumps({**item, "commit": "f" * 40, "parent": "e" * 40}) for _ in range(10)]
    (data / "test.jsonl").write_text("\n".join(lines) + "\n")
    job = _run("examples.code_edit.main_job", "--data-dir", str(data), "--limit", "1", "--runs-dir",
               str(tmp_path / "runs"))
    assert job.returncode == 2 and "Traceback" not in job.stderr
    assert "which is not in the repository" in job.stdout and "source.json" in job.stdout


@pytest.mark.parametrize("module", ["examples.test_fix.main_job", "examples.code_research.main_job"])
def test_a_short_dataset_is_a_clear_error(tmp_path, module):
    (tmp_path / "test.jsonl").write_text('{"messages": [{"role": "user", "content": "hi"}]}\n')
    job = _run(module, "--data-dir", str(tmp_path), "--runs-dir", str(tmp_path / "runs"))
    assert job.returncode == 2 and "Traceback" not in job.stderr and "at least 10" in job.stdout
