"""OpenPipe ART's own types (``.venv-art``: ``openpipe-art`` from the index, ``openai<3``: see docs/art.md) against a
real ``rft serve``: ``rft_sdk.integrations.art.rollout`` gathered by ``art.gather_trajectory_groups``, 10 retail
items x 4 rollouts all in flight, the model an ``art.Model`` whose inference URL is the scripted gold server.
Every ``art.Trajectory``'s reward equals the hosted wire's score of the same trajectory, its metrics are the
grader's sub-scores, and the 4 rollouts of an item never share state.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rft_sdk.portability import ScriptedLLM
from rft_sdk.testing import run_server

from ._eco_checks import N_ITEMS, ROLLOUTS, check_rollouts, run_script
from .conftest import DATASET, ITEMS, ROOT, TOKEN

ART_PYTHON = ROOT / ".venv-art" / "bin" / "python"


@pytest.fixture(scope="module")
def art_python() -> Path:
    if not ART_PYTHON.exists():
        pytest.skip("ART's venv .venv-art is missing: run `make art` (part of `make test`)")
    return ART_PYTHON


def test_art_rollouts_score_like_the_hosted_wire(art_python, recorded_server):
    base_url, store = recorded_server
    llm = ScriptedLLM(ITEMS)
    with run_server(llm.app) as llm_url:
        out = run_script(art_python, "eco_art.py", base_url, llm_url, str(DATASET), str(N_ITEMS), str(ROLLOUTS),
                         TOKEN)
    assert all(r["type"] == "Trajectory" for r in out["rollouts"])
    check_rollouts(base_url, store, out["rollouts"])
    sent = {t["function"]["name"] for t in llm.requests[0]["tools"]}  # ART offered the server's tools
    assert {"get_order_details", "cancel_pending_order"} <= sent
