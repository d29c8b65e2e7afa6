"""verl 0.9's own agent loop (``.venv-verl``: ``verl --no-deps`` plus what its agent loop and reward loop import;
no vLLM, no GPU) against a real ``rft serve``: 10 retail items x 4 trajectories, all in flight, through
``tests/surfaces/eco_verl.py``: verl's tool registry loads the generated tool YAML, hydra instantiates the agent
loop from the generated agent-loop config (``HostedToolAgentLoop``: ``ToolAgentLoop.run`` unchanged), a scripted
token-level model answers its ``server_manager.generate``, and verl's ``NaiveRewardManager.run_single`` calls the
reward function. Every reward equals the hosted wire's score of the same trajectory, sub-scores come back as reward
metrics, one ``trace_id`` per trajectory although verl makes a tool instance per call, and the 4 trajectories of
an item never share state.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ._eco_checks import N_ITEMS, ROLLOUTS, check_rollouts, run_script
from .conftest import DATASET, ITEMS, ROOT, TOKEN

pytestmark = pytest.mark.slow  # a long file: the scheduler starts it first (tests/conftest.py)

VERL_PYTHON = ROOT / ".venv-verl" / "bin" / "python"


@pytest.fixture(scope="module")
def verl_python() -> Path:
    if not VERL_PYTHON.exists():
        pytest.skip("verl's light venv .venv-verl is missing: run `make verl` (part of `make test`)")
    return VERL_PYTHON


def test_verl_tool_agent_loop_rollouts_score_like_the_hosted_wire(verl_python, recorded_server):
    base_url, store = recorded_server
    out = run_script(verl_python, "eco_verl.py", base_url, str(DATASET), str(N_ITEMS), str(ROLLOUTS), TOKEN)
    assert {r["loop"] for r in out["rollouts"]} == {"HostedToolAgentLoop"}
    check_rollouts(base_url, store, out["rollouts"])
    # what verl's reward manager decoded holds every turn; the grader was given the last turn's text alone
    for result in out["rollouts"]:
        item = next(i for i in ITEMS if i["task_id"] == result["task_id"])
        assert result["output_text"] == item["reference_answer"]
        assert "<tool_response>" in result["solution_str"] and result["solution_str"] != result["output_text"]


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


def test_the_reward_grades_the_last_turn_and_refuses_the_stock_agent_loop(recorded_server, monkeypatch):
    """Without ``HostedToolAgentLoop`` verl hands the reward function every turn and tool result as
    ``solution_str``; grading that would score another text than the hosted wire, so it is refused, saying why."""
    import anyio
    import yaml

    from rft_sdk.integrations.verl import AGENT_NAME, LOOP_CLASS_NAME, OUTPUT_KEY, compute_score, verl_row

    base_url, _ = recorded_server
    monkeypatch.setenv("RFT_VERL_URL", base_url)
    monkeypatch.setenv("RFT_AUTH_TOKEN", TOKEN)
    monkeypatch.setenv("RFT_VERL_GRADER", "retail")
    item = ITEMS[0]
    row = verl_row(item, ["get_order_details"])
    assert row["agent_name"] == AGENT_NAME
    printed = subprocess.run([sys.executable, "-m", "rft_sdk.integrations.verl", "--agent-loop-config"], cwd=ROOT,
                             capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert yaml.safe_load(printed.stdout) == [{"name": AGENT_NAME, "_target_": LOOP_CLASS_NAME}]
    transcript = "user\n<tool_response>\n...\n</tool_response>\nassistant\n" + item["reference_answer"]
    with pytest.raises(ValueError, match="rft_output_text.*rft_tool_agent"):
        anyio.run(lambda: compute_score("rft", transcript, None, row["extra_info"]))
    # the gold calls on the hosted wire under one trace; the reward grades the recorded last turn, not solution_str
    from rft_sdk.integrations.verl import TRACE_KEY
    from rft_sdk.surfaces import HostedClient, new_trace_id

    async def gold_then_reward() -> dict:
        trace_id = new_trace_id()
        async with HostedClient.over_http(base_url, token=TOKEN) as client:
            for action in item["actions"]:
                await client.call_tool(trace_id, action["name"], action["arguments"], item)
        return await compute_score("rft", transcript + " and more", None,
                                   {**row["extra_info"], TRACE_KEY: trace_id, OUTPUT_KEY: item["reference_answer"]})

    assert anyio.run(gold_then_reward)["score"] == 1.0
