"""The emulator plays both services against ONE real retail server (uvicorn) with the same scores.

The server has a token and a grader secret. The OpenAI job (one URL per tool, ``Authorization:
Bearer``, grader by header) and the Azure job (one shared ``/tools`` URL routed by ``name``,
``X-Functions-Key``, grader by secret path without headers) come from the same ``job_config``;
reference and perturbed replays of the first retail test items run under each ``--target``.
"""

from __future__ import annotations

from collections import Counter

import httpx
import pytest

from examples.retail._db import DATA_DIR
from examples.retail._perturb import make_perturb
from examples.retail._server_tools import SERVED_TOOLS, get_order_status
from examples.retail._tools import WRITE_TOOLS
from examples.retail.app import order_status, retail
from rft_sdk import ToolServer
from rft_sdk.emulator import ClientSettings, PerturbedReplayPolicy, ReferenceReplayPolicy, emulate, load_dataset
from rft_sdk.testing import run_server

TOKEN = "retail-token-" + "e" * 20
SECRET = "retail-secret-" + "f" * 20
SETTINGS = {"openai": ClientSettings(retries=0, target="openai"), "azure": ClientSettings(retries=0, target="azure")}


@pytest.fixture(scope="module")
def retail_live():
    server = ToolServer(tools=[*SERVED_TOOLS, get_order_status], graders=[retail, order_status],
                        auth_tokens=[TOKEN], grader_secret=SECRET, auth_env_var=None)
    items = load_dataset(DATA_DIR / "retail_test.jsonl", server.tools)[:6]
    with run_server(server) as url:
        yield server, url, items


def _jobs(server: ToolServer, url: str, steps: int) -> dict[str, dict]:
    openai = server.job_config(url, target="openai", token=TOKEN, max_episode_steps=steps, rate_limit=1000)
    # the OpenAI service forwards grader headers: use the header route /grade, not the secret path
    grader = openai["method"]["reinforcement"]["grader"]
    assert grader["url"] == f"{url}/grade/s/{SECRET}" and grader["headers"] == {}
    grader.update(url=f"{url}/grade", headers={"Authorization": f"Bearer {TOKEN}"})
    azure = server.job_config(url, target="azure", token=TOKEN, max_episode_steps=steps, rate_limit=1000)
    return {"openai": openai, "azure": azure}


async def _run(items, job, policy, target):
    seen: list[tuple[str, frozenset[str]]] = []

    async def record(request: httpx.Request) -> None:
        seen.append((request.url.path, frozenset(k.lower() for k in request.headers)))

    async with httpx.AsyncClient(timeout=60, event_hooks={"request": [record]}) as client:
        run = await emulate(items, job, policy, samples_per_item=2, settings=SETTINGS[target], client=client,
                            progress=False, min_lines=1)
    return run, seen


async def test_retail_scores_are_the_same_in_both_dialects(retail_live):
    server, url, items = retail_live
    jobs = _jobs(server, url, max(len(i["actions"]) for i in items) + 1)
    scores, paths = {}, {}
    for target in ("openai", "azure"):
        ref, ref_seen = await _run(items, jobs[target], ReferenceReplayPolicy(), target)
        pert, pert_seen = await _run(items, jobs[target], PerturbedReplayPolicy(
            WRITE_TOOLS, perturb=make_perturb(), seed=3), target)
        assert not any(r.discarded for r in ref.results + pert.results), target
        scores[target] = [(r.item_index, r.sample_index, r.perturbation, r.score)
                          for r in ref.results + pert.results]
        paths[target] = ref_seen + pert_seen
    assert scores["openai"] == scores["azure"]
    assert {s for *_, s in scores["openai"][:12]} == {1.0}  # reference replay
    assert 0.0 in {s for *_, s in scores["openai"][12:]}  # perturbations that change the end state fail

    openai_paths = Counter(p for p, _ in paths["openai"])
    azure_paths = Counter(p for p, _ in paths["azure"])
    assert set(azure_paths) == {"/tools", "/grade/s/" + SECRET}  # one shared URL, grader by secret path
    assert "/tools" not in openai_paths and "/grade" in openai_paths
    assert sum(azure_paths.values()) == sum(openai_paths.values())  # the same calls, routed differently
    assert all("x-functions-key" in h for p, h in paths["azure"] if p == "/tools")
    assert not any("x-functions-key" in h or "authorization" in h for p, h in paths["azure"] if p.startswith("/grade"))
    assert all("authorization" in h for _, h in paths["openai"])


async def test_azure_never_sends_grader_headers_so_a_header_grader_discards(retail_live):
    server, url, items = retail_live
    header_job = _jobs(server, url, 12)["openai"]  # grader at /grade, needs the Bearer header
    run, _ = await _run(items[:2], header_job, ReferenceReplayPolicy(), "azure")
    assert all(r.discarded and "401" in (r.discard_detail or "") for r in run.results)
    run, _ = await _run(items[:2], header_job, ReferenceReplayPolicy(), "openai")
    assert all(r.score == 1.0 for r in run.results)
