"""``parallel_tool_calls`` / ``tool_choice`` reach an OpenAI-compatible policy endpoint (respx: client logic).

Source: the chat-completions API takes ``parallel_tool_calls`` (bool) and ``tool_choice``
(``"auto"|"required"|"none"`` or ``{"type": "function", "function": {"name"}}``), only with ``tools``.
"""

from __future__ import annotations

import argparse
import json

import httpx
import pytest
import respx

from rft_sdk.emulator import OpenAICompatiblePolicy
from rft_sdk.emulator import cli as emulate_cli

CHAT = "http://llm.test/v1/chat/completions"
TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
ANSWER = {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}]}


async def _payload(policy: OpenAICompatiblePolicy, tools: list) -> dict:
    with respx.mock() as mock:
        route = mock.post(CHAT).mock(return_value=httpx.Response(200, json=ANSWER))
        step = await policy.act([{"role": "user", "content": "hi"}], tools, item={}, trace_id="trace_x")
        await policy.aclose()
    assert step.content == "ok"
    return json.loads(route.calls.last.request.content)


@pytest.mark.parametrize("parallel, choice", [(False, "required"), (True, {"type": "function",
                                                                          "function": {"name": "lookup"}})])
async def test_policy_sends_parallel_tool_calls_and_tool_choice_with_tools(parallel, choice):
    policy = OpenAICompatiblePolicy("http://llm.test/v1", "tiny", api_key="k", parallel_tool_calls=parallel,
                                    tool_choice=choice)
    sent = await _payload(policy, TOOLS)
    assert sent["parallel_tool_calls"] is parallel and sent["tool_choice"] == choice and sent["tools"] == TOOLS
    bare = await _payload(OpenAICompatiblePolicy("http://llm.test/v1", "tiny", api_key="k",
                                                 parallel_tool_calls=parallel, tool_choice=choice), [])
    assert "parallel_tool_calls" not in bare and "tool_choice" not in bare and "tools" not in bare


async def test_policy_sends_neither_by_default():
    sent = await _payload(OpenAICompatiblePolicy("http://llm.test/v1", "tiny", api_key="k"), TOOLS)
    assert "parallel_tool_calls" not in sent and "tool_choice" not in sent


@pytest.mark.parametrize("argv, parallel, choice", [
    (["--no-parallel-tool-calls", "--tool-choice", "lookup"], False,
     {"type": "function", "function": {"name": "lookup"}}),
    (["--parallel-tool-calls", "--tool-choice", "auto"], True, "auto"),
    ([], None, None),
])
def test_emulate_flags_build_the_policy(argv, parallel, choice):
    parser = argparse.ArgumentParser()
    emulate_cli.add_arguments(parser)
    args = parser.parse_args(["--dataset", "d", "--config", "c", "--out", "o", "--policy", "openai",
                              "--base-url", "http://llm.test/v1", "--model", "tiny", "--target", "azure", *argv])
    policy = emulate_cli.make_policy(args)
    assert args.target == "azure"
    assert policy.parallel_tool_calls is parallel and policy.tool_choice == choice


def test_emulate_target_is_checked():
    parser = argparse.ArgumentParser()
    emulate_cli.add_arguments(parser)
    with pytest.raises(SystemExit):
        parser.parse_args(["--dataset", "d", "--config", "c", "--out", "o", "--target", "gcp"])
    with pytest.raises(ValueError, match="target must be one of"):
        emulate_cli.ClientSettings(target="gcp")


def test_rft_emulate_target_azure_warns_about_grader_headers_and_runs(tmp_path, live, capsys):
    """``rft emulate --target azure`` over real uvicorn: an Azure job runs; a job whose grader
    needs headers is run too (as Azure would) but warned about, and its rollouts are discarded."""
    from dialect_helpers import TOKEN

    server, url = live
    tools = server.dataset_tools()
    lines = [{"messages": [{"role": "user", "content": "Find the Urban Puffer SKU"}], "tools": tools,
              "actions": [{"name": "search_catalog", "arguments": {"query": "Urban Puffer", "top_k": 1}}],
              "reference_answer": "JKT-URB-009"} for _ in range(10)]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    azure = server.job_config(url, target="azure", token=TOKEN, rate_limit=1000, parallel_tool_calls=False)
    (tmp_path / "azure.json").write_text(json.dumps(azure))
    header_job = json.loads(json.dumps(azure))
    header_job["method"]["reinforcement"]["grader"].update(url=f"{url}/grade", headers={"X-Functions-Key": TOKEN})
    (tmp_path / "header.json").write_text(json.dumps(header_job))
    base = ["--dataset", str(tmp_path / "d.jsonl"), "--samples-per-item", "1", "--limit", "2", "--no-progress",
            "--retries", "0", "--target", "azure"]
    assert emulate_cli.main([*base, "--config", str(tmp_path / "azure.json"), "--out", str(tmp_path / "a")]) == 0
    assert "warning (azure)" not in capsys.readouterr().err
    assert json.loads((tmp_path / "a" / "summary.json").read_text())["reward"]["mean"] == 1.0
    # every rollout discarded: exit 1, the reason on the terminal (issue 36's loud failures)
    assert emulate_cli.main([*base, "--config", str(tmp_path / "header.json"), "--out", str(tmp_path / "h")]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "warning (azure): Azure's endpoint grader cannot send headers: ['X-Functions-Key']" in err
    assert "2 of 2 rollouts discarded" in err
    assert json.loads((tmp_path / "h" / "summary.json").read_text())["discarded"] == 2
