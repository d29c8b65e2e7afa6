"""``docs/first-task.md`` as a newcomer runs it: every ``bash`` block's commands in order, every
``# new file:`` / ``# append to`` Python block written, against a real ``rft serve`` on 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import pytest

from rft_sdk._cli_commands import plugin_commands
from rft_sdk.testing import free_port, serve_process

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "first-task.md"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
ENV.pop("RFT_AUTH_TOKENS", None)
ENV.pop("RFT_DB_DIR", None)  # the page's task keeps its databases in .rft-db/ beside app.py


def blocks(text: str) -> list[tuple[str, str]]:
    """``(language, body)`` of every fenced block, in order."""
    return re.findall(r"```(\w*)\n(.*?)```", text, flags=re.S)


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    if argv[0] == "rft":
        if argv[1] == "init" and "init" not in plugin_commands():  # this checkout's entry points not installed
            argv = [sys.executable, "-m", "rft_sdk._commands.init", *argv[2:]]
        else:
            argv = [sys.executable, "-m", "rft_sdk", *argv[1:]]
    elif argv[0] == "pytest":
        argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *argv[1:]]
    return subprocess.run(argv, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_every_command_of_the_first_task_page_runs(tmp_path: Path) -> None:
    port = str(free_port())
    cwd = tmp_path
    ran: list[str] = []
    with ExitStack() as stack:
        for language, body in blocks(PAGE.read_text(encoding="utf-8")):
            first, _, rest = body.partition("\n")
            if language == "python":
                if (m := re.fullmatch(r"# (new file|append to):? (\S+)", first.strip())) is None:
                    continue
                target = cwd / m.group(2)
                with target.open("w" if m.group(1) == "new file" else "a", encoding="utf-8") as fh:
                    fh.write(("\n\n" if m.group(1) == "append to" else "") + rest)
                continue
            if language != "bash":
                continue
            for line in body.splitlines():
                argv = [w.replace("8000", port) for w in shlex.split(line, comments=True)]
                if not argv:
                    continue
                ran.append(" ".join(argv))
                if argv[0] == "cd":
                    cwd = cwd / argv[1]
                elif argv[:2] == ["rft", "serve"]:
                    assert argv[2:] == ["app:server", "--port", port]
                    stack.enter_context(serve_process("app:server", port=int(port), cwd=cwd,
                                                      env={"PYTHONPATH": ENV["PYTHONPATH"]}))
                else:
                    result = run(argv, cwd)
                    assert result.returncode == 0, (line, result.stdout[-3000:], result.stderr[-3000:])
                    if argv[:2] == ["rft", "validate"]:  # the warning the page announces, and no error
                        assert "0 error(s), 1 warning(s)" in result.stdout, result.stdout
                        assert "serves 'return_book' but no line offers it" in result.stdout
                    if argv[0] == "pytest":
                        assert "6 passed" in result.stdout, result.stdout[-2000:]  # test_app.py + test_library.py
    assert [c.split()[:2] for c in ran] == [["rft", "init"], ["cd", "my-library"], ["pytest", "-q"],
                                            ["rft", "validate"], ["rft", "serve"], ["rft", "emulate"],
                                            ["rft", "emulate"], ["rft", "doctor"]]
    reward = {name: json.loads((cwd / "runs" / name / "summary.json").read_text())["reward"]["mean"]
              for name in ("reference", "perturbed")}
    assert reward == {"reference": 1.0, "perturbed": 0.0}
    assert json.loads((cwd / "runs/doctor/doctor.json").read_text())["passed"] is True
