"""A verifiers 0.4 (``verifiers.v1``) taskset backed by a running tool server's hosted routes.

verifiers 0.4 removed the classic ``vf.Environment``/``vf.Rubric`` API (``verifiers.v1``: a *taskset*
yields typed tasks, a *harness* plays the model, *toolsets* are MCP servers the harness calls). This
module is a taskset plugin: ``vf-eval rft_sdk.integrations.verifiers --env.taskset.dataset DATA.jsonl
--env.taskset.task.url http://HOST:PORT`` loads it the way 0.4 loads any taskset (by import name,
``verifiers.v1.utils.loaders``: the module's ``__all__`` exports one ``Taskset`` subclass).

* :class:`HostedTaskset` reads a hosted JSONL dataset (one task per line, the line kept whole as
  :attr:`HostedData.item`, its ``messages`` as the prompt).
* :class:`HostedTask` ``setup`` starts a rollout: ``trace_id = new_trace_id()`` in the rollout's
  :class:`HostedState` (verifiers keeps one state per rollout and syncs it to the tool server for every
  call, so parallel rollouts never share a ``trace_id``). Its one reward, ``grader_score`` (weight 1),
  is the endpoint grader's score of the trajectory (``POST /grade[/{grader}]`` with the agent's last
  reply as ``sample.output_text``); the grader's sub-scores are recorded as trace metrics.
* :class:`HostedToolset` (a shared ``vf.Toolset``, run by verifiers as ``python -m`` this module) lists
  the server's tools (``GET /tools``, names unprefixed) and sends each MCP ``tools/call`` as the
  hosted ``POST /tools/{name}`` of the rollout's ``trace_id``; the model sees the ``output`` or the
  hosted error body (``is_error`` set), as in a hosted run.
* The harness is verifiers' own ``null`` chat loop (no code execution): the module exports it as
  :class:`HostedHarness`, so it is the taskset's default harness (``--env.agent.harness.id`` overrides).

The server's bearer token is read from ``$RFT_AUTH_TOKEN`` (``--env.taskset.task.token-var`` names
another variable); the token never enters the trace. See ``docs/verifiers.md``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import verifiers.v1 as vf
from mcp.types import CallToolResult, TextContent, Tool
from pydantic import Field
from verifiers.v1.harnesses.null.harness import NullHarness

from ..surfaces import HostedClient, new_trace_id
from ._messages import SYSTEM_ROLES, text_messages

__all__ = ["HostedData", "HostedHarness", "HostedState", "HostedTask", "HostedTaskConfig", "HostedTaskset",
           "HostedTasksetConfig", "HostedToolset"]


class HostedState(vf.State):
    """One rollout's state (shared by the task hooks and the tool server process).

    ``trace_id``: the rollout's hosted id; ``item``: the hosted dataset line (JSON text);
    ``tools``: chat-completions tool definitions from ``GET /tools``.
    """

    base_url: str = ""
    headers: dict[str, str] = Field(default_factory=dict)
    timeout_s: float = 600.0
    trace_id: str = ""
    item: str = "{}"
    tools: list[dict[str, Any]] = Field(default_factory=list)

    def client(self) -> HostedClient:
        """A hosted-wire client of this rollout's server."""
        return HostedClient.over_http(self.base_url, headers=self.headers, timeout_s=self.timeout_s)


class HostedTaskConfig(vf.TaskConfig):
    """Where the tool server is (``--env.taskset.task.*``).

    ``url``: the server's root URL (default ``$RFT_VERIFIERS_URL``); ``token_var``: the environment
    variable holding its bearer token (unset or empty: no ``Authorization`` header); ``grader``: grader
    name (``None``: ``POST /grade``); ``timeout_s``: seconds per HTTP request (the hosted side waits 600).
    """

    url: str | None = None
    token_var: str = "RFT_AUTH_TOKEN"
    grader: str | None = None
    timeout_s: float = Field(default=600.0, gt=0)


class HostedTasksetConfig(vf.TasksetConfig):
    """``dataset``: hosted JSONL (each line needs a non-empty ``messages`` list); default
    ``$RFT_VERIFIERS_DATASET`` (a default, not a required field: vf-eval builds the config's defaults
    before it parses the flags)."""

    dataset: Path | None = None
    tools: vf.SharedToolsetConfig = vf.SharedToolsetConfig()
    task: HostedTaskConfig = HostedTaskConfig()


class HostedData(vf.TaskData):
    """A task's wire data: ``item`` is the hosted dataset line, whole."""

    item: dict[str, Any]


class HostedToolset(vf.Toolset[vf.SharedToolsetConfig, HostedState]):
    """The tool server's tools as an MCP server (names unprefixed), each call on the hosted wire."""

    TOOL_PREFIX = None

    def register(self, mcp: Any) -> None:
        # As verifiers' own NeMo Gym toolset does: the catalog comes from the rollout's state.
        server = cast(Any, mcp)
        server.list_tools = self._with_state(self.list_tools)
        server.call_tool = self._with_state(self.call_tool)

    async def list_tools(self) -> list[Tool]:
        """The rollout's tools (``GET /tools`` read at setup)."""
        return [Tool(name=t["function"]["name"], description=t["function"].get("description") or None,
                     input_schema=t["function"].get("parameters") or {"type": "object", "properties": {}})
                for t in self.state.tools]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> CallToolResult:
        """``POST /tools/{name}`` of the rollout's ``trace_id``; a 4xx answer is an ``is_error`` result
        whose text is the hosted error body. Raises ``RolloutDiscardedError`` on 5xx/transport after
        retries (verifiers records the rollout's error)."""
        state = self.state
        async with state.client() as client:
            answer = await client.call_tool(state.trace_id, name, arguments, json.loads(state.item))
        return CallToolResult(content=[TextContent(type="text", text=answer.model_text)], is_error=not answer.ok)


class HostedTask(vf.Task[HostedData, HostedState, HostedTaskConfig]):
    """One dataset line played as one rollout of the tool server (see the module docstring)."""

    async def setup(self, trace: Any, runtime: Any) -> None:
        """Mint the rollout's ``trace_id`` and read the server's tools.

        Raises:
            ValueError: no server URL (``--env.taskset.task.url`` or ``$RFT_VERIFIERS_URL``).
            httpx.HTTPStatusError: ``GET /tools`` refused (e.g. 401 with a wrong token).
        """
        url = self.config.url or os.environ.get("RFT_VERIFIERS_URL")
        if not url:
            raise ValueError("no tool server URL: set --env.taskset.task.url or $RFT_VERIFIERS_URL")
        token = os.environ.get(self.config.token_var) if self.config.token_var else None
        state = trace.state
        state.base_url = url.rstrip("/")
        state.headers = {"Authorization": f"Bearer {token}"} if token else {}
        state.timeout_s = self.config.timeout_s
        state.item = json.dumps(self.data.item)
        state.trace_id = new_trace_id()
        async with httpx.AsyncClient(headers=state.headers, timeout=state.timeout_s) as http:
            listed = await http.get(state.base_url + "/tools")
            listed.raise_for_status()
            state.tools = listed.json()["tools"]

    @vf.reward(weight=1.0)
    async def grader_score(self, trace: Any) -> float:
        """The endpoint grader's score of the rollout (``POST /grade``); sub-scores become metrics."""
        state = trace.state
        async with state.client() as client:
            grade = await client.grade(state.trace_id, trace.last_reply, self.data.item, self.config.grader)
        trace.info["rft"] = {"trace_id": state.trace_id, "reasons": grade.reasons}
        trace.record_metrics(grade.subscores)
        return grade.score


class HostedTaskset(vf.Taskset[HostedTask, HostedTasksetConfig]):
    """The hosted dataset's lines as tasks; the tool server as the shared toolset."""

    @classmethod
    def toolsets(cls, config: HostedTasksetConfig) -> list[vf.Toolset]:
        return [HostedToolset(config.tools)]

    def load(self) -> Iterator[HostedTask]:
        """One task per non-empty line.

        Raises:
            ValueError: no dataset given, a line without a non-empty ``messages`` list (hosted
                protocol §2), or no line.
        """
        source = self.config.dataset or os.environ.get("RFT_VERIFIERS_DATASET")
        if not source:
            raise ValueError("no dataset: set --env.taskset.dataset or $RFT_VERIFIERS_DATASET")
        path = Path(source).expanduser().resolve()
        found = False
        with path.open(encoding="utf-8") as lines:
            for number, line in enumerate(filter(str.strip, lines), 1):
                item = json.loads(line)
                messages = item.get("messages")
                if not isinstance(messages, list) or not messages:
                    raise ValueError(f"{path}: line {number} has no 'messages' list (hosted protocol §2)")
                found = True
                system = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") in SYSTEM_ROLES)
                prompt = text_messages([m for m in messages if m.get("role") not in SYSTEM_ROLES])
                yield HostedTask(HostedData(name=str(item.get("task_id", f"{path.stem}:{number}")),
                                            id=str(item["task_id"]) if "task_id" in item else None,
                                            prompt=prompt, system_prompt=system or None, item=item),
                                 self.config.task)
        if not found:
            raise ValueError(f"hosted dataset is empty: {path}")


class HostedHarness(NullHarness):
    """verifiers' ``null`` harness (a chat loop over the toolset's MCP tools, no code execution),
    exported so that it is this taskset's default harness."""


if __name__ == "__main__":  # verifiers starts the shared toolset as `python -m <its module>`
    HostedToolset.run()
