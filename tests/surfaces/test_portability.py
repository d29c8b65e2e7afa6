"""``rft portability``: the gold trajectories of the retail test split through five surfaces, same scores."""

from __future__ import annotations

import os
import subprocess
import sys

from rft_sdk import ToolServer
from rft_sdk.surfaces import available_surfaces, load_surface

from .conftest import DATASET, ROOT, TOKEN


def _portability(python, base_url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-m", "rft_sdk", "portability", "--dataset", str(DATASET), "--url", base_url,
                           "--token-env", "RFT_T", *args], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "RFT_T": TOKEN})


def test_five_surfaces_score_the_gold_trajectories_identically(eco_python, recorded_server):
    base_url, _ = recorded_server
    done = _portability(eco_python, base_url, "--limit", "10")
    assert done.returncode == 0, done.stderr[-2000:]
    header, *rows, summary = done.stdout.strip().splitlines()
    assert header.split() == ["item", "hosted", "mcp", "trl", "openenv", "verifiers", "identical"]
    assert len(rows) == 10 and all(row.split()[-1] == "yes" for row in rows)
    assert summary == "10/10 items scored identically on 5 surfaces"


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
