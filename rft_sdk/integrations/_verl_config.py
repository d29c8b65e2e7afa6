"""verl's tool config, dataset rows and reward function for a tool server (no verl import: the generator and the
reward run wherever ``httpx`` and ``pyyaml`` are). The tool class is :class:`rft_sdk.integrations._verl.HostedTool`;
the whole picture is in that module's docstring and ``docs/verl.md``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from ..surfaces import HostedClient, new_trace_id

__all__ = ["AGENT_NAME", "CLASS_NAME", "ITEM_KEY", "LOOP_CLASS_NAME", "OUTPUT_KEY", "TRACE_KEY",
           "agent_loop_config_yaml", "base_url_of", "compute_score", "headers_of", "tool_config", "tool_config_yaml",
           "verl_row"]

#: ``agent_data.extra_fields`` key of the trajectory's hosted ``trace_id`` (reaches the reward's ``extra_info``).
TRACE_KEY = "rft_trace_id"
#: ``create_kwargs`` / ``extra_info`` key of the hosted dataset line (JSON text).
ITEM_KEY = "rft_item"
#: the tool class as verl's tool config names it.
CLASS_NAME = "rft_sdk.integrations.verl.HostedTool"
#: ``agent_data.extra_fields`` / ``extra_info`` key of the text of the trajectory's last model turn (written by
#: ``HostedToolAgentLoop``), what :func:`compute_score` grades.
OUTPUT_KEY = "rft_output_text"
#: the agent loop as verl's agent-loop config names it, and its name there (the rows' ``agent_name``).
LOOP_CLASS_NAME = "rft_sdk.integrations.verl.HostedToolAgentLoop"
AGENT_NAME = "rft_tool_agent"


def agent_loop_config_yaml() -> str:
    """verl's agent-loop config (``actor_rollout_ref.rollout.agent.agent_loop_config_path``) registering
    ``HostedToolAgentLoop`` as :data:`AGENT_NAME`."""
    return f"- name: {AGENT_NAME}\n  _target_: {LOOP_CLASS_NAME}\n"


def headers_of(token_env: str | None) -> dict[str, str]:
    """``Authorization: Bearer $token_env`` when that variable is set and non-empty, else ``{}``."""
    token = os.environ.get(token_env) if token_env else None
    return {"Authorization": f"Bearer {token}"} if token else {}


def base_url_of(config: Mapping[str, Any]) -> str:
    """``config["base_url"]``, else ``$RFT_VERL_URL``. Raises ``ValueError`` when neither is set."""
    url = config.get("base_url") or os.environ.get("RFT_VERL_URL")
    if not url:
        raise ValueError("no tool server URL: set base_url in the tool config or $RFT_VERL_URL")
    return str(url).rstrip("/")


def tool_config(tools: Sequence[Mapping[str, Any]], *, base_url: str | None = None,
                token_env: str | None = "RFT_AUTH_TOKEN", timeout_s: float = 600.0) -> dict[str, Any]:
    """verl's tool config (``{"tools": [{"class_name", "config", "tool_schema"}]}``) for chat-completions tool
    definitions (``GET /tools``); ``base_url`` ``None`` leaves the URL to ``$RFT_VERL_URL``."""
    config: dict[str, Any] = {"type": "native", "token_env": token_env, "timeout_s": timeout_s}
    if base_url:
        config["base_url"] = base_url.rstrip("/")
    return {"tools": [{"class_name": CLASS_NAME, "config": dict(config),
                       "tool_schema": {"type": "function", "function": dict(t["function"])}} for t in tools]}


def tool_config_yaml(base_url: str, *, token: str | None = None, token_env: str | None = "RFT_AUTH_TOKEN",
                     timeout_s: float = 600.0) -> str:
    """The YAML text of :func:`tool_config` for the server at ``base_url`` (reads its ``GET /tools`` with
    ``token``; the YAML names ``token_env``, never the token).

    Raises:
        httpx.HTTPStatusError: ``GET /tools`` refused (e.g. 401).
    """
    import yaml

    listed = httpx.get(base_url.rstrip("/") + "/tools", headers={"Authorization": f"Bearer {token}"} if token else {},
                       timeout=timeout_s)
    listed.raise_for_status()
    return str(yaml.safe_dump(tool_config(listed.json()["tools"], base_url=base_url, token_env=token_env,
                                          timeout_s=timeout_s), sort_keys=False))


def verl_row(item: Mapping[str, Any], tool_names: Sequence[str], *, data_source: str = "rft",
             agent_name: str = AGENT_NAME) -> dict[str, Any]:
    """A hosted dataset line → a verl RL dataset row (``RLHFDataset``'s columns): ``prompt`` (the line's
    ``messages``), ``reward_model.ground_truth`` (``reference_answer``, informational), and ``extra_info``
    with the item (``rft_item``) and ``tools_kwargs`` giving every tool the item.

    Raises:
        ValueError: a line without a non-empty ``messages`` list (hosted protocol §2).
    """
    messages = item.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("the item has no 'messages' list (hosted protocol §2 requires one)")
    text = json.dumps(dict(item))
    return {"data_source": data_source, "agent_name": agent_name,
            "prompt": [{"role": m["role"], "content": m.get("content") or ""} for m in messages],
            "reward_model": {"style": "rule", "ground_truth": str(item.get("reference_answer") or "")},
            "extra_info": {ITEM_KEY: text, "need_tools_kwargs": True,
                           "tools_kwargs": {name: {"create_kwargs": {ITEM_KEY: text}} for name in tool_names}}}


async def compute_score(data_source: str, solution_str: str, ground_truth: Any = None,
                        extra_info: Mapping[str, Any] | None = None, **kwargs: Any) -> dict[str, float]:
    """verl reward function: the endpoint grader's score of the trajectory named by
    ``extra_info["rft_trace_id"]`` with ``extra_info["rft_output_text"]`` (the last model turn's text, recorded by
    ``HostedToolAgentLoop``) as ``sample.output_text``. verl's ``solution_str`` (the decoded response of all turns,
    tool results included) is not graded: the hosted wire grades the final answer alone.

    Returns ``{"score": score, **sub-scores}``. The server comes from ``$RFT_VERL_URL`` (token:
    ``$RFT_AUTH_TOKEN``), the grader from ``$RFT_VERL_GRADER`` (unset: ``POST /grade``). A trajectory that
    made no tool call has no ``trace_id`` yet: it is graded under a fresh one (no calls).

    Raises:
        ValueError: no ``rft_item`` or no ``rft_output_text`` in ``extra_info`` (the rows' agent loop is not
            ``rft_tool_agent``: ``docs/verl.md``), or no server URL.
        RolloutDiscardedError: the grader failed (verl's reward loop fails the step).
    """
    info = dict(extra_info or {})
    if ITEM_KEY not in info:
        raise ValueError(f"extra_info has no {ITEM_KEY!r} (rft_sdk.integrations.verl.verl_row writes it)")
    item = json.loads(info[ITEM_KEY]) if isinstance(info[ITEM_KEY], str) else dict(info[ITEM_KEY])
    if not isinstance(info.get(OUTPUT_KEY), str):
        raise ValueError(f"extra_info has no {OUTPUT_KEY!r}: run the rows with verl agent loop {AGENT_NAME!r} "
                         f"(HostedToolAgentLoop, registered by agent_loop_config_yaml(); verl_row names it), not the "
                         f"stock tool_agent, whose solution_str holds every turn and tool result, not the answer")
    trace_id = str(info.get(TRACE_KEY) or new_trace_id())
    async with HostedClient.over_http(base_url_of({}), headers=headers_of("RFT_AUTH_TOKEN")) as client:
        grade = await client.grade(trace_id, info[OUTPUT_KEY], item, os.environ.get("RFT_VERL_GRADER") or None)
    return {"score": grade.score, **grade.subscores}
