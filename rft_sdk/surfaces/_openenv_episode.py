"""One OpenEnv episode = one rollout: OpenEnv's tool-calling actions and observations over the hosted pipeline.

The JSON shapes are OpenEnv's, as ``openenv`` 0.10.0 defines them
(``openenv/core/env_server/mcp_types.py``, ``types.py``, ``serialization.py``):

* actions: ``{"type": "call_tool", "tool_name", "arguments": {...}, "metadata": {...}}``
  and ``{"type": "list_tools"}``;
* observations (``serialize_observation``): ``{"observation": {...fields},
  "reward": float|null, "done": bool, "metadata": {...}}`` where a
  ``CallToolObservation`` has ``tool_name``, ``result`` (an MCP ``CallToolResult``-like
  ``{"content": [{"type": "text", "text"}], "structured_content", "data", "is_error"}``)
  and ``error`` (``{"error_type", "message"}``, OpenEnv's ``ToolError``: set when the
  call was not delivered: unknown tool, invalid arguments, timeout, transport);
  a ``ListToolsObservation`` has ``tools`` (``{"name", "description", "input_schema"}``).

The rollout (``docs/openenv.md``): ``reset`` mints a fresh ``trace_id`` and takes
the item (passed as ``item``, or ``index``/``seed`` into the surface's dataset,
else the next dataset line); its observation lists the tools (the server's
plus the answer tool) and carries the prompt ``messages`` in ``metadata`` (never
the item: it may hold gold answers). Each ``call_tool`` step is one hosted tool
call of that ``trace_id``. The episode ends when the agent calls the answer tool
(``submit_answer(answer)``: graded with ``output_text = answer``) or when
``max_steps`` tool calls have been made (graded with ``output_text = ""``, as the
hosted side grades a rollout cut at ``max_episode_steps``). The reward is the
grader's score of the whole trajectory; sub-scores and reasons are in the
observation's ``metadata``. A tool call or grade still failing (5xx) after 3
attempts ends the episode unscored: ``reward`` ``None``, ``metadata["discarded"]``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ._hosted import HostedClient, RolloutDiscardedError, ToolAnswer, new_trace_id

__all__ = ["Episode", "EpisodeConfig", "ProtocolError", "openenv_tools"]

#: hosted error code -> OpenEnv ToolErrorType (``mcp_types.ToolErrorType``): the call was not delivered.
_ERROR_TYPES = {"unknown_tool": "tool_not_found", "invalid_arguments": "invalid_args",
                "malformed_arguments": "invalid_args", "tool_timeout": "timeout"}


class ProtocolError(Exception):
    """A request the episode cannot serve (step before reset, after done, bad action): an OpenEnv error frame."""

    def __init__(self, message: str, code: str = "EXECUTION_ERROR") -> None:
        super().__init__(message)
        self.code = code


class EpisodeConfig:
    """What every episode of a surface shares (built once per server).

    Args:
        client: the hosted pipeline, in process.
        tools: returns the server's chat-completions tool definitions.
        dataset: hosted dataset lines (``reset`` picks one).
        grader: grader name (``None``: the default grader, ``POST /grade``).
        max_steps: tool calls per episode before it is cut and graded.
        answer_tool: name of the end-of-episode tool (arguments ``{"answer": str}``).
    """

    def __init__(self, client: HostedClient, tools: Any, dataset: Sequence[Mapping[str, Any]], grader: str | None,
                 max_steps: int, answer_tool: str) -> None:
        self.client, self.tools, self.dataset = client, tools, list(dataset)
        self.grader, self.max_steps, self.answer_tool = grader, max_steps, answer_tool
        self._next = itertools.count()

    def next_index(self) -> int:
        """The next dataset line, round robin over every session."""
        return next(self._next) % len(self.dataset)


def openenv_tools(config: EpisodeConfig) -> list[dict[str, Any]]:
    """The tool list as OpenEnv ``Tool`` dicts: the server's tools, then the answer tool."""
    tools = [{"name": t["function"]["name"], "description": t["function"].get("description") or "",
              "input_schema": t["function"].get("parameters") or {"type": "object", "properties": {}}}
             for t in config.tools()]
    tools.append({"name": config.answer_tool, "description": (
        "Give your final answer to the user and end the episode (it is graded with everything you did)."),
        "input_schema": {"type": "object", "properties": {"answer": {
            "type": "string", "description": "the final answer, as you would tell the user"}},
            "required": ["answer"], "additionalProperties": False}})
    return tools


def _observation(fields: dict[str, Any], *, done: bool = False, reward: float | None = None,
                 metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """``serialize_observation``'s shape (metadata nested and top level, as openenv does)."""
    meta = dict(metadata or {})
    result: dict[str, Any] = {"observation": {**fields, "metadata": meta}, "reward": reward, "done": done}
    if meta:
        result["metadata"] = meta
    return result


def _text_result(text: str, *, is_error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "structured_content": None, "meta": None,
            "data": text, "is_error": is_error}


class Episode:
    """One OpenEnv session's environment: at most one rollout at a time (``reset`` starts the next)."""

    def __init__(self, config: EpisodeConfig) -> None:
        self.config = config
        self.lock = asyncio.Lock()
        self.trace_id: str | None = None
        self.episode_id: str | None = None
        self.item: dict[str, Any] = {}
        self.item_index: int | None = None
        self.step_count = 0
        self.done = False
        self.reward: float | None = None

    # -- reset / state ---------------------------------------------------------------
    async def reset(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """Start a rollout; ``data``: ``seed``, ``episode_id``, ``item`` (a dict) or ``index`` (int)."""
        item, index = self._choose(data)
        async with self.lock:
            self.trace_id = new_trace_id()
            self.episode_id = str(data.get("episode_id") or self.trace_id)
            self.item, self.item_index = item, index
            self.step_count, self.done, self.reward = 0, False, None
            messages = item.get("messages") if isinstance(item.get("messages"), list) else []
            return _observation({"tools": openenv_tools(self.config)}, metadata={
                "trace_id": self.trace_id, "episode_id": self.episode_id, "item_index": index,
                "messages": messages, "max_steps": self.config.max_steps, "answer_tool": self.config.answer_tool})

    def _choose(self, data: Mapping[str, Any]) -> tuple[dict[str, Any], int | None]:
        item = data.get("item")
        if item is not None:
            if not isinstance(item, dict):
                raise ProtocolError(f"reset item must be a JSON object (a hosted dataset line), got "
                                    f"{type(item).__name__}", "VALIDATION_ERROR")
            return dict(item), None
        dataset = self.config.dataset
        if not dataset:
            return {}, None
        index = data.get("index")
        if index is None and isinstance(data.get("seed"), int):
            index = int(data["seed"]) % len(dataset)
        if index is None:
            index = self.config.next_index()
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(dataset):
            raise ProtocolError(f"reset index must be an integer in [0, {len(dataset)}), got {index!r}",
                                "VALIDATION_ERROR")
        return dict(dataset[index]), index

    def state(self) -> dict[str, Any]:
        """OpenEnv ``State``: ``episode_id``, ``step_count`` (+ ``trace_id``, ``item_index``, ``done``, ``reward``)."""
        return {"episode_id": self.episode_id, "step_count": self.step_count, "trace_id": self.trace_id,
                "item_index": self.item_index, "done": self.done, "reward": self.reward}

    # -- step -----------------------------------------------------------------------
    async def step(self, action: Any) -> dict[str, Any]:
        """One action (see the module docstring).

        Raises:
            ProtocolError: not an OpenEnv tool action, no episode (``reset`` first), or the episode is over.
        """
        if not isinstance(action, dict):
            raise ProtocolError("an action is a JSON object", "VALIDATION_ERROR")
        kind = action.get("type")
        if kind == "list_tools":
            return _observation({"tools": openenv_tools(self.config)})
        if kind != "call_tool" or not isinstance(action.get("tool_name"), str):
            raise ProtocolError("actions are {'type': 'call_tool', 'tool_name': str, 'arguments': {...}} or "
                                "{'type': 'list_tools'}", "VALIDATION_ERROR")
        arguments = action.get("arguments", {})
        if not isinstance(arguments, dict):
            raise ProtocolError("call_tool arguments must be an object (send the model's raw text as "
                                "metadata.raw_arguments)", "VALIDATION_ERROR")
        metadata: dict[str, Any] = action["metadata"] if isinstance(action.get("metadata"), dict) else {}
        async with self.lock:
            if self.trace_id is None:
                raise ProtocolError("no episode: call reset() first (reset starts a rollout)")
            if self.done:
                raise ProtocolError(f"episode {self.episode_id} is over (done); call reset() for a new rollout")
            name = action["tool_name"]
            if name == self.config.answer_tool:
                return await self._answer(name, arguments)
            raw = metadata.get("raw_arguments")
            self.step_count += 1
            try:
                answer = await self.config.client.call_tool(self.trace_id, name,
                                                            raw if isinstance(raw, str) else arguments, self.item)
            except RolloutDiscardedError as exc:
                return self._discard(name, exc)
            fields = self._call_fields(name, answer)
            if self.step_count >= self.config.max_steps:  # cut at the step limit: graded like a hosted cut rollout
                return await self._finish(fields, "", truncated=True)
            return _observation(fields, metadata={"trace_id": self.trace_id, "status": answer.status,
                                                  "call_id": answer.call_id, "step": self.step_count})

    @staticmethod
    def _call_fields(name: str, answer: ToolAnswer) -> dict[str, Any]:
        if answer.ok:
            return {"tool_name": name, "result": _text_result(answer.model_text), "error": None}
        error_type = _ERROR_TYPES.get(answer.error_code or "")
        if error_type is not None:  # not delivered: OpenEnv's ToolError carries the hosted error body
            return {"tool_name": name, "result": None,
                    "error": {"error_type": error_type, "message": answer.model_text}}
        return {"tool_name": name, "result": _text_result(answer.model_text, is_error=True), "error": None}

    async def _answer(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        answer = arguments.get("answer")
        if not isinstance(answer, str):
            message = json.dumps({"error": {"code": "invalid_arguments", "message": (
                f"{name} needs {{'answer': <string>}}, got {sorted(arguments)}")}})
            return _observation({"tool_name": name, "result": None,
                                 "error": {"error_type": "invalid_args", "message": message}},
                                metadata={"trace_id": self.trace_id})
        return await self._finish({"tool_name": name, "result": _text_result("Answer submitted."), "error": None},
                                  answer, truncated=False)

    async def _finish(self, fields: dict[str, Any], output_text: str, *, truncated: bool) -> dict[str, Any]:
        assert self.trace_id is not None
        self.done = True
        try:
            grade = await self.config.client.grade(self.trace_id, output_text, self.item, self.config.grader)
        except RolloutDiscardedError as exc:
            return self._discard(str(fields.get("tool_name")), exc, fields)
        self.reward = grade.score
        return _observation(fields, done=True, reward=grade.score, metadata={
            "trace_id": self.trace_id, "score": grade.score, "subscores": grade.subscores, "reasons": grade.reasons,
            "truncated": truncated, "step": self.step_count})

    def _discard(self, name: str, exc: RolloutDiscardedError, fields: dict[str, Any] | None = None) -> dict[str, Any]:
        self.done, self.reward = True, None
        fields = fields or {"tool_name": name, "result": None,
                            "error": {"error_type": "transport_error", "message": str(exc)}}
        return _observation(fields, done=True, reward=None, metadata={
            "trace_id": self.trace_id, "discarded": True, "discard_reason": exc.reason, "detail": exc.detail})
