"""The second ecosystems venv, ``.venv-eco2`` (``make eco2``): NeMo Gym's and Eval Protocol's own clients.

nemo-gym 0.7 needs Python 3.13 and pins ``mcp<2``/``openai==2.44``; eval-protocol pins litellm 1.105
(``openai<3``), which verifiers (in ``.venv-eco``) cannot share: both live in a venv of their own, and
the tests run them there as real subprocesses against ``rft serve`` processes started from ``.venv``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ECO2_PYTHON = ROOT / ".venv-eco2" / "bin" / "python"
#: litellm (imported by eval-protocol) fetches a price list from the network at import unless told not to.
ENV = {"PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "RAY_AUTH_MODE": "disabled"}


def eco2_python(package: str) -> Path:
    """``.venv-eco2``'s interpreter, or skip saying why (no venv, or ``package`` not installable there)."""
    if not ECO2_PYTHON.exists():
        pytest.skip("the ecosystems' venv .venv-eco2 is missing: run `make eco2` (part of `make test`)")
    found = subprocess.run([str(ECO2_PYTHON), "-c", f"import importlib.util as u; print(bool(u.find_spec({package!r})))"],
                           capture_output=True, text=True)
    if found.stdout.strip() != "True":
        pytest.skip(f"{package} is not installed in .venv-eco2 (nemo-gym needs Python 3.13: see `make eco2`)")
    return ECO2_PYTHON


def run_eco2(python: Path, module: str, *args: str, timeout: float = 600) -> dict[str, Any]:
    """Run ``python -m module args`` in ``.venv-eco2`` from the repository root; its last stdout line is JSON."""
    done = subprocess.run([str(python), "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **ENV})
    assert done.returncode == 0, (done.stdout[-2000:] + done.stderr[-4000:])
    return json.loads(done.stdout.strip().splitlines()[-1])
