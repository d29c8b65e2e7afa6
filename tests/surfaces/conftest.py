"""Fixtures of the surface tests: the ecosystems' own clients live in ``.venv-eco`` (made by ``make test``).

``openenv`` pins ``fastmcp`` 3 (so ``mcp<2``) and ``verifiers`` 0.1.14 pins ``datasets<4.7``: neither
installs beside the ``dev`` extras (``mcp>=2.3``, ``trl``'s ``datasets>=5.2``), so the Makefile builds a
second venv with ``rft-sdk`` (core), ``openenv==0.10.0`` and ``verifiers==0.1.14`` and the tests run those
clients there as real subprocesses against real ``rft serve`` processes started from the main venv.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rft_sdk import SQLiteStore
from rft_sdk.surfaces import HostedClient, new_trace_id
from rft_sdk.testing import serve_process

ROOT = Path(__file__).resolve().parents[2]
ECO_PYTHON = ROOT / ".venv-eco" / "bin" / "python"
DATASET = ROOT / "examples" / "retail" / "data" / "retail_test.jsonl"
TOKEN = "surface-test-token"
ITEMS = [json.loads(line) for line in DATASET.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="session")
def eco_python() -> Path:
    if not ECO_PYTHON.exists():
        pytest.skip("the ecosystems' venv .venv-eco is missing: run `make eco` (part of `make test`)")
    return ECO_PYTHON


def run_eco(eco_python: Path, module: str, *args: str, timeout: float = 300) -> dict[str, Any]:
    """Run ``python -m module args`` in ``.venv-eco`` from the repository root; its last stdout line is JSON."""
    done = subprocess.run([str(eco_python), "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def recorded_server(tmp_path_factory):
    """``rft serve tests.integrations.apps:retail_recorded --surfaces hosted,mcp,openenv`` (a real process)
    on a SQLiteStore the test reads back; yields ``(base_url, store)``."""
    store_path = tmp_path_factory.mktemp("surfaces") / "rollouts.db"
    env = {"RFT_AUTH_TOKENS": TOKEN, "RFT_TEST_STORE": str(store_path), "RFT_OPENENV_DATASET": str(DATASET),
           "RFT_OPENENV_MAX_STEPS": "20"}
    with serve_process("tests.integrations.apps:retail_recorded", "--surfaces", "hosted,mcp,openenv",
                       env=env) as url:
        yield url, SQLiteStore(store_path)


def stored(store: SQLiteStore, trace_ids: list[str]) -> dict[str, Any]:
    """What the server recorded per trace_id: ``{trace_id: (StoredRollout, {grader: GradeRecord})}``."""
    async def read():
        return {t: (await store.load(t), await store.load_grades(t)) for t in trace_ids}
    return asyncio.run(read())


def hosted_replay_score(base_url: str, rollout: Any, output_text: str, grader: str | None = None) -> float:
    """The hosted wire's score of the same trajectory: every recorded call re-sent (arguments text verbatim)
    under a fresh trace_id, then graded with the same final answer."""
    async def replay() -> float:
        async with HostedClient.over_http(base_url, token=TOKEN) as client:
            trace_id = new_trace_id()
            for record in rollout.trajectory:
                arguments = record.arguments["_raw"] if "_raw" in record.arguments else record.arguments
                await client.call_tool(trace_id, record.name, arguments, rollout.item)
            return (await client.grade(trace_id, output_text, rollout.item, grader)).score
    return asyncio.run(replay())
