"""verl (0.9) against a tool server's hosted routes: a ``BaseTool``, its tool-config YAML and a reward function.

verl's ``ToolAgentLoop`` (``verl.experimental.agent_loop.tool_agent_loop``) keeps one tool object per tool
name and, for **every call**, runs ``create(create_kwargs=...)`` → ``execute(instance_id, args,
agent_data=...)`` → ``release(instance_id)``; state that must last a whole trajectory therefore lives in
``agent_data.extra_fields`` (verl's documented place for "tool session data"), which verl also hands to the
reward function (``extra_info`` ← the agent loop's ``extra_fields``, ``NaiveRewardManager.run_single``).

* :class:`HostedTool` is that ``BaseTool``: the first call of a trajectory mints
  ``extra_fields["rft_trace_id"]`` (``new_trace_id()``), every call is the hosted ``POST /tools/{name}``
  of that ``trace_id`` with the model's arguments and the item, and the model is shown the ``output`` or
  the hosted error body. The item (the hosted dataset line, JSON text) comes from the row's
  ``tools_kwargs[<tool>]["create_kwargs"]["rft_item"]`` (:func:`verl_row` writes it).
* :func:`tool_config` / :func:`tool_config_yaml` build verl's tool config (``actor_rollout_ref.rollout.
  multi_turn.tool_config_path``) from ``GET /tools``: one ``HostedTool`` entry per served tool.
* :func:`compute_score` is a verl reward function (``reward.custom_reward_function.path`` = this module,
  ``name=compute_score``): the endpoint grader's score of the trajectory (``POST /grade[/{grader}]``), as a
  dict ``{"score": ..., **sub-scores}`` (verl logs the extra keys as reward metrics).

Server location and credentials: the tool config's ``base_url`` (else ``$RFT_VERL_URL``) and the bearer
token from the environment variable the config names (``token_env``, default ``RFT_AUTH_TOKEN``), so no
secret is written into YAML. See ``docs/verl.md``.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from verl.tools.base_tool import BaseTool
from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

from ..surfaces import HostedClient, new_trace_id
from ._verl_config import ITEM_KEY, TRACE_KEY, base_url_of, headers_of

__all__ = ["HostedTool"]


class HostedTool(BaseTool):
    """One served tool as a verl ``BaseTool`` (see the module docstring).

    Args:
        config: the tool-config entry's ``config``: ``base_url``, ``token_env`` (default
            ``RFT_AUTH_TOKEN``), ``timeout_s`` (default 600, seconds per request).
        tool_schema: the tool's OpenAI schema (from ``GET /tools``).

    Raises (from ``execute``):
        ValueError: no ``agent_data`` (the trajectory's state) or no item for the call.
        RolloutDiscardedError: 5xx/transport after retries (verl shows the model the error text).
    """

    def __init__(self, config: dict[str, Any], tool_schema: OpenAIFunctionToolSchema) -> None:
        super().__init__(config, tool_schema)
        self.base_url = base_url_of(config)
        self.headers = headers_of(config.get("token_env", "RFT_AUTH_TOKEN"))
        self.timeout_s = float(config.get("timeout_s", 600.0))
        self._items: dict[str, str] = {}

    async def create(self, instance_id: str | None = None, **kwargs: Any) -> tuple[str, ToolResponse]:
        """Keep the call's item (``create_kwargs["rft_item"]``) under a fresh instance id."""
        instance_id = instance_id or uuid.uuid4().hex
        item = (kwargs.get("create_kwargs") or {}).get(ITEM_KEY)
        if item is not None:
            self._items[instance_id] = item if isinstance(item, str) else json.dumps(item)
        return instance_id, ToolResponse()

    async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs: Any
                      ) -> tuple[ToolResponse, float, dict[str, Any]]:
        """The hosted ``POST /tools/{name}`` of the trajectory's ``trace_id``; returns
        ``(ToolResponse(text=output or error body), 0.0, {"status": http_status})``."""
        agent_data = kwargs.get("agent_data")
        if agent_data is None:
            raise ValueError("HostedTool.execute needs agent_data (verl's ToolAgentLoop passes it)")
        item = self._items.get(instance_id)
        if item is None:
            raise ValueError(f"no item for tool {self.name!r}: the row needs tools_kwargs[{self.name!r}]"
                             f"['create_kwargs'][{ITEM_KEY!r}] (rft_sdk.integrations.verl.verl_row writes it)")
        trace_id = agent_data.extra_fields.setdefault(TRACE_KEY, new_trace_id())
        async with HostedClient.over_http(self.base_url, headers=self.headers, timeout_s=self.timeout_s) as client:
            answer = await client.call_tool(trace_id, self.name, parameters, json.loads(item))
        return ToolResponse(text=answer.model_text), 0.0, {"status": answer.status}

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        """Forget the call's item (the rollout itself lives on until it is graded)."""
        self._items.pop(instance_id, None)
