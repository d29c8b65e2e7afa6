"""A ``verifiers`` environment backed by a tool server's hosted endpoints.

verifiers' classic environment API (``verifiers`` 0.1.14: ``vf.StatefulToolEnv``,
``vf.Rubric``, ``vf.load_environment``; ``env.evaluate`` / ``vf-eval`` run it):

* :class:`ToolServerEnv` is a ``vf.StatefulToolEnv`` (the tool environment whose tools
  need per-rollout state the model never sees: here the rollout's ``trace_id``).
  ``setup_state`` mints ``trace_id = "trace_" + uuid4().hex`` and reads the item
  (the hosted dataset line) from the row's ``info["rft_item"]``. Every tool call the
  model makes is sent, with its arguments text verbatim, as the hosted
  ``POST /tools/{name}`` of that ``trace_id`` (so a malformed call gets the hosted
  400 and is recorded, as in a hosted run); the tool message is the ``output`` or
  the serialized error body.
* :class:`GraderRubric` is a ``vf.Rubric`` whose one reward function,
  ``grader_score``, is the endpoint grader's score of the whole trajectory
  (``POST /grade[/{grader}]`` with ``sample.output_text`` = the last assistant text);
  the grader's sub-scores are added to each rollout's ``metrics``.
* A rollout cut at ``max_turns`` whose last turn made tool calls: those calls are
  sent (and recorded) before grading, as the hosted side executes the last turn's
  calls before it grades a rollout cut at ``max_episode_steps``.
* A tool call or grade still failing (5xx/transport) after 3 attempts raises
  ``vf.ToolCallError`` / fails the score: verifiers' error path (the hosted side
  discards such a rollout).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

import httpx
import verifiers as vf
from datasets import Dataset

from ..surfaces import GradeAnswer, HostedClient, RolloutDiscardedError, new_trace_id
from ._messages import text_messages

__all__ = ["ITEM_KEY", "GraderRubric", "ToolServerEnv", "hosted_rows", "load_environment"]

#: ``info`` key holding the hosted dataset line (JSON text, so rows of any shape share one Arrow schema).
ITEM_KEY = "rft_item"


def hosted_rows(lines: Sequence[Mapping[str, Any]]) -> Dataset:
    """Hosted JSONL lines → a verifiers dataset: ``prompt`` (the line's ``messages``), ``answer``
    (``reference_answer`` or ``answer``, informational), ``info`` (``{"rft_item": <the line as JSON>}``).

    Raises:
        ValueError: a line without a non-empty ``messages`` list.
    """
    rows = []
    for number, line in enumerate(lines, 1):
        messages = line.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ValueError(f"dataset line {number} has no 'messages' list (hosted protocol §2 requires one)")
        rows.append({"prompt": text_messages(messages),
                     "answer": str(line.get("reference_answer") or line.get("answer") or ""),
                     "info": {ITEM_KEY: json.dumps(dict(line))}})
    return Dataset.from_list(rows)


class _Clients:
    """One :class:`HostedClient` per event loop (verifiers may run evaluations on different loops)."""

    def __init__(self, make: Any) -> None:
        self.make = make
        self.by_loop: dict[int, HostedClient] = {}

    def get(self) -> HostedClient:
        key = id(asyncio.get_running_loop())
        if key not in self.by_loop:
            self.by_loop[key] = self.make()
        return self.by_loop[key]


def _item(state: Mapping[str, Any]) -> dict[str, Any]:
    info = state.get("info") or {}
    raw = info.get(ITEM_KEY) if isinstance(info, Mapping) else None
    item = json.loads(raw) if isinstance(raw, str) else (raw or {})
    return dict(item)


def _text(message: Any) -> str:
    content = getattr(message, "content", None) if not isinstance(message, Mapping) else message.get("content")
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) if isinstance(p, Mapping) else str(getattr(p, "text", ""))
                       for p in content)
    return str(content or "")


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


class GraderRubric(vf.Rubric):
    """Reward = the endpoint grader's score (``grader_score``); its sub-scores become metrics."""

    def __init__(self, clients: _Clients, grader: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.clients, self.grader = clients, grader
        self.add_reward_func(self.grader_score, weight=1.0)

    async def grader_score(self, completion: Any, state: Any) -> float:
        """The grader's score of the rollout's whole trajectory (hosted ``POST /grade``)."""
        client = self.clients.get()
        messages = list(completion or [])
        last = messages[-1] if messages else None
        if last is not None and _field(last, "role") == "assistant" and _field(last, "tool_calls"):
            for call in _field(last, "tool_calls"):  # cut at max_turns: the hosted side runs the last turn's calls
                await client.call_tool(state["trace_id"], str(_field(call, "name")), _field(call, "arguments") or "",
                                       _item(state))
        final = next((m for m in reversed(messages) if _field(m, "role") == "assistant"), None)
        grade: GradeAnswer = await client.grade(state["trace_id"], _text(final) if final is not None else "",
                                                _item(state), self.grader)
        state["rft_grade"] = {"score": grade.score, "subscores": grade.subscores, "reasons": grade.reasons}
        return grade.score

    @staticmethod
    def _merge(state: Any) -> None:
        grade = state.get("rft_grade")
        if grade and isinstance(state.get("metrics"), dict):
            state["metrics"].update({name: float(v) for name, v in grade["subscores"].items()})

    async def score_rollout(self, state: Any) -> None:
        await super().score_rollout(state)
        self._merge(state)

    async def score_group(self, states: list[Any]) -> None:
        await super().score_group(states)
        for state in states:
            self._merge(state)


class ToolServerEnv(vf.StatefulToolEnv):
    """A verifiers tool environment whose tools are a tool server's (see the module docstring).

    Args:
        clients: makes the :class:`HostedClient` (one per event loop).
        tool_defs: chat-completions tool definitions (``GET /tools``).
        dataset / eval_dataset: rows from :func:`hosted_rows`.
        grader: grader name (``None``: ``POST /grade``).
        max_turns: model turns per rollout (the hosted ``max_episode_steps``).
    """

    def __init__(self, clients: _Clients, tool_defs: Sequence[Mapping[str, Any]], *, grader: str | None = None,
                 max_turns: int = 10, **kwargs: Any) -> None:
        rubric = GraderRubric(clients, grader)
        super().__init__(tools=[], max_turns=max_turns, rubric=rubric, **kwargs)
        self.clients = clients
        self.tool_defs = self._normalize_tool_defs(
            [{"name": t["function"]["name"], "description": t["function"].get("description") or "",
              "parameters": t["function"].get("parameters") or {"type": "object", "properties": {}}}
             for t in tool_defs])
        for definition in tool_defs:
            self.tool_monitor_rubric.add_tool_metric(definition["function"]["name"])

    async def setup_state(self, state: Any) -> None:
        """A fresh rollout: its own ``trace_id``."""
        state["trace_id"] = new_trace_id()
        await super().setup_state(state)

    def update_tool_args(self, tool_name: str, tool_args: dict, messages: Any, state: Any, **kwargs: Any) -> dict:
        return tool_args  # the trace_id travels in the hosted request, never in the model's arguments

    async def env_response(self, messages: Any, state: Any, **kwargs: Any) -> Any:
        """Each tool call of the last assistant message → one hosted tool call (arguments text verbatim)."""
        last = messages[-1]
        client = self.clients.get()
        replies = []
        for call in _field(last, "tool_calls") or []:
            try:
                answer = await client.call_tool(state["trace_id"], str(_field(call, "name")),
                                                _field(call, "arguments") or "", _item(state))
            except RolloutDiscardedError as exc:
                raise vf.ToolCallError(str(exc)) from exc
            replies.append(vf.ToolMessage(role="tool", content=answer.model_text, tool_call_id=_field(call, "id")))
        return replies


def load_environment(base_url: str | None = None, *, server: Any = None,
                     dataset: str | os.PathLike[str] | Sequence[Mapping[str, Any]] | None = None,
                     eval_dataset: str | os.PathLike[str] | Sequence[Mapping[str, Any]] | None = None,
                     token: str | None = None, headers: Mapping[str, str] | None = None, grader: str | None = None,
                     max_turns: int = 10, timeout_s: float = 600.0, **kwargs: Any) -> ToolServerEnv:
    """The verifiers entry point: a :class:`ToolServerEnv` for a running tool server or an in-process one.

    Args:
        base_url: the server's root URL (``/tools/{name}``, ``/grade`` below it); or
        server: a ``ToolServer`` in this process (its hosted routes are called without a socket).
        dataset / eval_dataset: hosted JSONL path or lines (at least one is needed;
            ``$RFT_VERIFIERS_DATASET`` is the default ``eval_dataset``).
        token: bearer token (default ``$RFT_AUTH_TOKEN``); headers: more headers (e.g. ``X-Functions-Key``).
        grader: grader name (``POST /grade/{grader}``); max_turns: model turns per rollout.
        timeout_s: seconds per HTTP request (the hosted side waits up to 600).
        kwargs: passed to ``vf.StatefulToolEnv`` (e.g. ``system_prompt``).

    Raises:
        ValueError: neither or both of ``base_url``/``server``, or no dataset.
        httpx.HTTPStatusError: ``GET /tools`` refused (e.g. 401 with a wrong token).
    """
    if (base_url is None) == (server is None):
        raise ValueError("pass exactly one of base_url (a running tool server) or server (a ToolServer object)")
    token = token if token is not None else os.environ.get("RFT_AUTH_TOKEN")
    if server is not None:
        pipeline = server.surface_context().pipeline
        tools = server.dataset_tools("chat_completions")
        clients = _Clients(lambda: HostedClient.in_process(pipeline, timeout_s=timeout_s))
    else:
        sent = {**dict(headers or {}), **({"Authorization": f"Bearer {token}"} if token else {})}
        listed = httpx.get(str(base_url).rstrip("/") + "/tools", headers=sent, timeout=timeout_s)
        listed.raise_for_status()
        tools = listed.json()["tools"]
        url = str(base_url)
        clients = _Clients(lambda: HostedClient.over_http(url, headers=sent, timeout_s=timeout_s))
    if dataset is None and eval_dataset is None:
        eval_dataset = os.environ.get("RFT_VERIFIERS_DATASET")
    if dataset is None and eval_dataset is None:
        raise ValueError("a dataset is needed: dataset= or eval_dataset= (hosted JSONL path or lines)")
    return ToolServerEnv(clients, tools, grader=grader, max_turns=max_turns,
                         dataset=hosted_rows(_lines(dataset)) if dataset is not None else None,
                         eval_dataset=hosted_rows(_lines(eval_dataset)) if eval_dataset is not None else None,
                         **kwargs)


def _lines(source: str | os.PathLike[str] | Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    if isinstance(source, (str, os.PathLike)):
        with open(source, encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]
    return list(source)
