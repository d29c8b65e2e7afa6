"""verl 0.9's own tool classes (``.venv-verl``: ``verl --no-deps`` plus what its agent loop imports; no vLLM, no
GPU) against a real ``rft serve``: 10 retail items x 4 trajectories, all in flight, through
``tests/surfaces/eco_verl.py`` (verl's tool registry, ``ToolAgentLoop._call_tool``, ``AgentData``) with the
scripted gold model. Every reward equals the hosted wire's score of the same trajectory, sub-scores come back
as reward metrics, one ``trace_id`` per trajectory although verl makes a tool instance per call, and the 4
trajectories of an item never share state.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rft_sdk.portability import ScriptedLLM
from rft_sdk.testing import run_server

from ._eco_checks import N_ITEMS, ROLLOUTS, check_rollouts, run_script
from .conftest import DATASET, ITEMS, ROOT, TOKEN

VERL_PYTHON = ROOT / ".venv-verl" / "bin" / "python"


@pytest.fixture(scope="module")
def verl_python() -> Path:
    if not VERL_PYTHON.exists():
        pytest.skip("verl's light venv .venv-verl is missing: run `make verl` (part of `make test`)")
    return VERL_PYTHON


def test_verl_tool_agent_loop_rollouts_score_like_the_hosted_wire(verl_python, recorded_server):
    base_url, store = recorded_server
    with run_server(ScriptedLLM(ITEMS).app) as llm_url:
        out = run_script(verl_python, "eco_verl.py", base_url, llm_url, str(DATASET), str(N_ITEMS), str(ROLLOUTS),
                         TOKEN)
    check_rollouts(base_url, store, out["rollouts"])


def test_the_tool_config_generator_reads_get_tools_and_names_no_secret(recorded_server):
    """The generator needs no verl: it runs in the main venv."""
    base_url, _ = recorded_server
    done = subprocess.run([sys.executable, "-m", "rft_sdk.integrations.verl", base_url, "MY_TOKEN"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "MY_TOKEN": TOKEN})
    assert done.returncode == 0, done.stderr[-2000:]
    import yaml

    config = yaml.safe_load(done.stdout)
    names = [t["tool_schema"]["function"]["name"] for t in config["tools"]]
    assert "get_order_details" in names and len(names) == len(set(names))
    assert {t["class_name"] for t in config["tools"]} == {"rft_sdk.integrations.verl.HostedTool"}
    assert all(t["config"]["token_env"] == "MY_TOKEN" and t["config"]["base_url"] == base_url
               for t in config["tools"])
    assert TOKEN not in done.stdout
    refused = subprocess.run([sys.executable, "-m", "rft_sdk.integrations.verl", base_url, "NO_SUCH_VAR"],
                             cwd=ROOT, capture_output=True, text=True, timeout=120,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert refused.returncode == 1 and "401" in refused.stderr
