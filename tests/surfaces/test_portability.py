"""``rft portability``: the gold trajectories of the retail test split through six surfaces, then the trainers'
(verifiers 0.4, verl, ART): same scores."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rft_sdk import ToolServer
from rft_sdk.surfaces import available_surfaces, load_surface
from rft_sdk.testing import serve_process

from .conftest import DATASET, ROOT, TOKEN

pytestmark = pytest.mark.slow  # a long file: the scheduler starts it first (tests/conftest.py)


def _portability(python, base_url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-m", "rft_sdk", "portability", "--dataset", str(DATASET), "--url", base_url,
                           "--token-env", "RFT_T", *args], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "RFT_T": TOKEN})


def test_a_surface_whose_client_is_missing_names_the_extra(recorded_server):
    base_url, _ = recorded_server
    done = _portability(sys.executable, base_url, "--surfaces", "hosted,openenv", "--limit", "1")
    assert done.returncode == 2
    assert 'pip install "rft-sdk[openenv]"' in done.stderr


def test_surfaces_are_registered_by_name_and_loaded_lazily():
    assert {"hosted", "mcp", "openenv"} <= set(available_surfaces())
    loaded = subprocess.run([sys.executable, "-c", "import rft_sdk, sys; print(sorted(m for m in sys.modules if "
                             "m.startswith(('rft_sdk.surfaces._mcp', 'rft_sdk.surfaces._openenv', 'mcp', 'openenv'))))"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"  # the core imports no surface and no surface's extra
    surface = load_surface("openenv", max_sessions=3, path="/env")
    assert surface.name == "openenv" and surface.max_sessions == 3
    try:
        load_surface("grpc")
    except ValueError as exc:
        assert "unknown surface 'grpc'" in str(exc) and "openenv" in str(exc)
    else:
        raise AssertionError("an unknown surface must be refused")
    server = ToolServer(surfaces=["hosted", surface], auth_env_var=None)
    assert server.surfaces == frozenset({"hosted", "openenv"})


def test_six_surfaces_score_the_gold_trajectories_identically(eco_python, tmp_path):
    """hosted, MCP, OpenEnv, verifiers (in .venv-eco) and NeMo Gym, Eval Protocol (their clients in
    .venv-eco2, through ``--client-python``), on a server without tokens: NeMo Gym's servers send none. The
    ``trl`` column (TRL's GRPOTrainer loop, the main venv) has its own file, tests/surfaces/test_trl_trainer.py,
    which runs it through ``rft portability --surfaces hosted,trl`` too: played here once more it cost about a quarter
    of this test."""
    from ._eco2 import ENV, eco2_python

    eco2 = eco2_python("nemo_gym")
    env = {"RFT_AUTH_TOKENS": "", "RFT_OPENENV_DATASET": str(DATASET)}
    with serve_process("examples.retail.app:server", "--surfaces", "hosted,mcp,openenv,nemo_gym", env=env) as url:
        done = subprocess.run([str(eco_python), "-m", "rft_sdk", "portability", "--dataset", str(DATASET), "--url", url,
                               "--limit", "10", "--surfaces",
                               "hosted,mcp_legacy,openenv,verifiers,nemo_gym,eval_protocol",
                               "--client-python", f"nemo_gym={eco2}",
                               "--client-python", f"eval_protocol={eco2}"],
                              cwd=ROOT, capture_output=True, text=True, timeout=600, env={**os.environ, **ENV})
    assert done.returncode == 0, done.stderr[-3000:]
    header, *rows, summary, clients = done.stdout.strip().splitlines()
    assert header.split() == ["item", "hosted", "mcp_legacy", "openenv", "verifiers", "nemo_gym",
                              "eval_protocol", "identical"]
    assert len(rows) == 10 and all(row.split()[-1] == "yes" for row in rows)
    assert summary == "10/10 items scored identically on 6 surfaces (gold)"
    assert clients.startswith("clients: hosted=rft-sdk ") and "verifiers=verifiers 0.1." in clients


def test_an_unset_token_variable_is_refused_before_any_rollout(monkeypatch, capsys):
    from rft_sdk.cli import main

    monkeypatch.delenv("RFT_UNSET_TOKEN", raising=False)
    # the URL is never called: without the refusal every call would have gone out unauthenticated (401s)
    assert main(["portability", "--dataset", str(DATASET), "--url", "http://127.0.0.1:9",
                 "--token-env", "RFT_UNSET_TOKEN"]) == 2
    assert "environment variable 'RFT_UNSET_TOKEN' is unset or empty" in capsys.readouterr().err


def test_trainer_surfaces_score_the_gold_trajectories_like_the_hosted_wire(recorded_server):
    """verifiers 0.4 (vf-eval), verl and ART, each played in its own venv (``--client-python``), gold and the
    versions printed; skipped where a venv is missing (``make vf4 verl art``)."""
    base_url, _ = recorded_server
    venvs = {"verifiers": ROOT / ".venv-vf4", "verl": ROOT / ".venv-verl", "art": ROOT / ".venv-art"}
    missing = [str(v) for v in venvs.values() if not (v / "bin" / "python").exists()]
    if missing:
        pytest.skip(f"missing venvs {missing}: run `make vf4 verl art` (part of `make test`)")
    pythons = [f"--client-python={name}={venv / 'bin' / 'python'}" for name, venv in venvs.items()]
    done = _portability(sys.executable, base_url, "--limit", "3", "--surfaces", "hosted,verifiers,verl,art",
                        "--grader", "retail", *pythons)
    assert done.returncode == 0, done.stderr[-2000:]
    header, *rows, summary, clients = done.stdout.strip().splitlines()
    assert header.split()[:5] == ["item", "hosted", "verifiers", "verl", "art"]
    assert len(rows) == 3 and all(row.split()[-1] == "yes" for row in rows)
    assert summary == "3/3 items scored identically on 4 surfaces (gold)"
    for name, package in (("verifiers", "verifiers 0.4."), ("verl", "verl 0.9."), ("art", "openpipe-art 0.5.")):
        assert f"{name}={package}" in clients, clients


def test_mcp_default_and_session_modes_and_a_surface_scoring_the_wrong_trajectory(recorded_server, monkeypatch,
                                                                                  capsys):
    """mcp 2.x's ``mcp.Client`` in its default mode (stateless: ``start_rollout``) and its session API score like the
    hosted wire, gold and gold minus its last call. A player that ignores the variant (plays the whole gold
    trajectory: a surface recording the wrong calls) agrees on gold and is caught on gold-minus-last (exit 1)."""
    from rft_sdk.cli import main
    from rft_sdk.portability import _players
    from rft_sdk.portability._target import REPLAY_KEY

    async def whole_gold(target, items):
        return await _players.play_hosted(target, [{k: v for k, v in i.items() if k != REPLAY_KEY} for i in items])

    monkeypatch.setitem(_players.BUILTIN_PLAYERS, "whole_gold", (whole_gold, None))
    monkeypatch.setenv("RFT_T", TOKEN)
    base_url, _ = recorded_server
    common = ["portability", "--dataset", str(DATASET), "--url", base_url, "--token-env", "RFT_T", "--limit", "3"]
    assert main([*common, "--surfaces", "hosted,mcp,mcp_legacy,whole_gold"]) == 0
    gold = capsys.readouterr().out
    assert main([*common, "--surfaces", "hosted,mcp,mcp_legacy,hosted@again", "--variant", "gold-minus-last"]) == 0
    minus = capsys.readouterr().out
    assert gold.splitlines()[-2] == "3/3 items scored identically on 4 surfaces (gold)"
    assert minus.splitlines()[-2] == "3/3 items scored identically on 4 surfaces (gold-minus-last)"
    assert minus.splitlines()[0].split() == ["item", "hosted", "mcp", "mcp_legacy", "hosted@again", "identical"]
    assert "mcp=mcp 2." in minus.splitlines()[-1] and "hosted@again=rft-sdk" in minus.splitlines()[-1]
    gold_scores = [row.split()[1] for row in gold.splitlines()[1:-2]]
    minus_scores = [row.split()[1] for row in minus.splitlines()[1:-2]]
    assert gold_scores != minus_scores  # the last call matters to the grader on these items
    assert main([*common, "--surfaces", "hosted,whole_gold", "--variant", "gold-minus-last"]) == 1
    caught = capsys.readouterr().out
    assert all(row.split()[-1] == "NO" for row in caught.splitlines()[1:-2])
    assert main([*common, "--surfaces", "hosted", "--client-python", "mcp=python"]) == 2
    assert "--client-python names ['mcp'], not among --surfaces" in capsys.readouterr().err
