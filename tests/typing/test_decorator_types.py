"""``@server.tool`` / ``@server.grader`` keep the decorated function's signature for a type checker (issue 36).

mypy (the project's own configuration) checks ``decorated.py``, whose ``assert_type`` lines
fail if a decorator returns ``Any``; a wrong call must be reported against the real signature.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
ROOT = HERE.parents[1]

pytest.importorskip("mypy")


def mypy(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--strict", "--follow-imports=silent",
                           *map(str, paths)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_decorated_functions_keep_their_types(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        "from rft_sdk import Rollout, ToolServer\n"
        "server = ToolServer()\n"
        "@server.tool\n"
        "def lookup(key: str, *, rollout: Rollout) -> str:\n"
        "    return key\n"
        "@server.grader(name='g')\n"
        "def g(ctx: object) -> float:\n"
        "    return 1.0\n"
        "def use(rollout: Rollout) -> None:\n"
        "    lookup(3, rollout=rollout)\n"
        "    g()\n")
    ok = mypy(HERE / "decorated.py")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = mypy(wrong)
    assert bad.returncode == 1
    assert 'Argument 1 to "lookup" has incompatible type "int"; expected "str"' in bad.stdout
    assert 'Missing positional argument "ctx" in call to "g"' in bad.stdout
