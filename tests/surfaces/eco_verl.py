"""Play hosted items through verl's own tool classes; print JSON per rollout. Run in ``.venv-verl``:
``python tests/surfaces/eco_verl.py BASE_URL LLM_URL DATASET N ROLLOUTS TOKEN``.

verl's side, all verl's own code: the tool config YAML (from ``python -m rft_sdk.integrations.verl``) loaded by
``verl.tools.tool_registry.initialize_tools_from_config``; each tool call dispatched by
``ToolAgentLoop._call_tool`` (create → execute(agent_data) → release, a tool instance per call) with verl's
``AgentData`` per trajectory and ``FunctionCall``s; assistant messages built by
``ToolAgentLoop._build_assistant_message``. The model is the scripted chat-completions server at LLM_URL (gold
calls, then the reference answer); verl's token-level generation (tokenizer, vLLM/SGLang server) is not run.
The reward is ``rft_sdk.integrations.verl.compute_score`` called as ``NaiveRewardManager.run_single`` calls it
(``extra_info`` = the row's ``extra_info`` updated with the agent loop's ``extra_fields``).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import uuid
from importlib.metadata import version

import httpx
from verl.experimental.agent_loop.tool_agent_loop import AgentData, ToolAgentLoop
from verl.experimental.agent_loop.tool_parser import FunctionCall
from verl.tools.tool_registry import initialize_tools_from_config

from rft_sdk.integrations.verl import compute_score, verl_row


def agent_loop(tools: list) -> ToolAgentLoop:
    """verl's ToolAgentLoop with the settings its tool path reads (its __init__ needs a model server)."""
    loop = ToolAgentLoop.__new__(ToolAgentLoop)
    loop.tools = {tool.name: tool for tool in tools}
    loop.tool_schemas = [tool.tool_schema.model_dump(exclude_unset=True, exclude_none=True) for tool in tools]
    loop.max_parallel_calls, loop.max_tool_response_length, loop.tool_response_truncate_side = 1, 1 << 20, "middle"
    return loop


async def trajectory(loop: ToolAgentLoop, llm: httpx.AsyncClient, row: dict) -> dict:
    data = AgentData(messages=list(row["prompt"]), image_data=None, video_data=None, audio_data=None,
                     mm_processor_kwargs=None, metrics={}, request_id=uuid.uuid4().hex,
                     tools_kwargs=row["extra_info"]["tools_kwargs"])
    for _ in range(50):
        answer = (await llm.post("/v1/chat/completions", json={"model": "scripted-gold", "messages": data.messages,
                                                                "tools": loop.tool_schemas})).json()
        message = answer["choices"][0]["message"]
        data.tool_calls = [FunctionCall(name=c["function"]["name"], arguments=c["function"]["arguments"])
                           for c in message.get("tool_calls") or []]
        data.messages.append(loop._build_assistant_message(message.get("content") or "", data))
        if not data.tool_calls:
            break
        for call in data.tool_calls:
            response, _, _ = await loop._call_tool(call, data.tools_kwargs, data)
            data.messages.append({"role": "tool", "content": response.text or ""})
    extra_info = dict(row["extra_info"])
    extra_info.update(data.extra_fields.items())  # as verl's NaiveRewardManager merges tool_extra_fields
    result = await compute_score(row["data_source"], data.messages[-1]["content"],
                                 row["reward_model"]["ground_truth"], extra_info)
    return {"trace_id": data.extra_fields.get("rft_trace_id"), "reward": result.pop("score"), "metrics": result,
            "task_id": json.loads(row["extra_info"]["rft_item"]).get("task_id")}


async def main() -> None:
    base_url, llm_url, dataset, n, rollouts, token = sys.argv[1:7]
    os.environ.update({"RFT_AUTH_TOKEN": token, "RFT_VERL_URL": base_url, "RFT_VERL_GRADER": "retail"})
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as handle:  # the generator, as a user runs it
        subprocess.run([sys.executable, "-m", "rft_sdk.integrations.verl", base_url], stdout=handle, check=True)
    tools = initialize_tools_from_config(handle.name)
    loop = agent_loop(tools)
    with open(dataset, encoding="utf-8") as lines:
        items = [json.loads(line) for line in lines if line.strip()][: int(n)]
    rows = [verl_row(item, [tool.name for tool in tools]) for item in items for _ in range(int(rollouts))]
    async with httpx.AsyncClient(base_url=llm_url, timeout=60) as llm:
        out = await asyncio.gather(*(trajectory(loop, llm, row) for row in rows))  # every rollout in flight
    print(json.dumps({"verl": version("verl"), "tools": len(tools), "rollouts": out}))


asyncio.run(main())
