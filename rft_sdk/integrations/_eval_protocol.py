"""Eval Protocol (``eval-protocol`` 0.3.33) for a tool server: rows, a rollout processor, the grader as evaluator.

EP's names and shapes (``eval_protocol/models.py``, ``eval_protocol/pytest/rollout_processor.py``,
``eval_protocol/pytest/types.py``):

* :func:`hosted_rows` / :func:`dataset_adapter`: hosted dataset lines as ``EvaluationRow`` s
  (``messages``, ``tools``, ``input_metadata.row_id`` = :func:`row_id_of`,
  ``input_metadata.dataset_info["rft_item"]`` = the hosted item, ``ground_truth`` = its
  ``reference_answer``/``answer``), for ``@evaluation_test(input_rows=...)`` or
  ``@evaluation_test(input_dataset=[...], dataset_adapter=dataset_adapter)``;
* :class:`ToolServerRolloutProcessor`: EP's ``RolloutProcessor`` for ``ep``'s local loop: per row,
  a fresh ``trace_id``; the model through LiteLLM with the run's ``completion_params`` (as EP's
  own processors call it); each tool call over the hosted wire (:func:`run_rollout`); the
  ``trace_id`` in ``execution_metadata.extra["trace_id"]``;
* :func:`evaluate_row`: the evaluator body — the endpoint grader's score of the rollout's
  trajectory (``POST /grade`` with that ``trace_id``, the final answer = the last assistant
  message's text, the item) as ``evaluation_result`` (``EvaluateResult``; sub-scores as
  ``metrics``). The same function scores rows that Fireworks RFT's ``RemoteRolloutProcessor``
  brings back from :mod:`._eval_protocol_remote` (its status extras carry the ``trace_id``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from eval_protocol.models import EvaluateResult, EvaluationRow, InputMetadata, Message, MetricResult, Status
from eval_protocol.pytest.rollout_processor import RolloutProcessor
from eval_protocol.pytest.types import RolloutProcessorConfig
from eval_protocol.pytest.utils import normalize_fireworks_model_for_litellm

from ..surfaces import HostedClient, RolloutDiscardedError, new_trace_id

__all__ = ["ITEM_KEY", "ToolServerRolloutProcessor", "dataset_adapter", "evaluate_row", "final_text", "hosted_rows",
           "item_of", "row_id_of", "run_rollout"]

#: Where a row keeps its hosted item: ``input_metadata.dataset_info[ITEM_KEY]``.
ITEM_KEY = "rft_item"
Complete = Callable[[list[dict[str, Any]], "list[dict[str, Any]] | None"], Awaitable[dict[str, Any]]]


def row_id_of(item: Mapping[str, Any]) -> str:
    """A row's stable id: its ``task_id`` (as text), else the first 16 hex of the SHA-256 of its canonical JSON."""
    if item.get("task_id") is not None:
        return str(item["task_id"])
    return hashlib.sha256(json.dumps(item, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def hosted_rows(lines: Sequence[Mapping[str, Any]]) -> list[EvaluationRow]:
    """One ``EvaluationRow`` per hosted dataset line (see the module docstring)."""
    rows = []
    for line in lines:
        item = dict(line)
        rows.append(EvaluationRow(
            messages=[Message(**m) for m in item.get("messages") or []], tools=item.get("tools") or None,
            ground_truth=item.get("reference_answer", item.get("answer")),
            input_metadata=InputMetadata(row_id=row_id_of(item), dataset_info={ITEM_KEY: item})))
    return rows


def dataset_adapter(rows: list[dict[str, Any]]) -> list[EvaluationRow]:
    """``@evaluation_test(dataset_adapter=...)``: EP's JSONL lines (hosted dataset lines) as rows."""
    return hosted_rows(rows)


def item_of(row: EvaluationRow) -> dict[str, Any]:
    """The hosted item of a row (its ``dataset_info["rft_item"]``; ``{}`` without one)."""
    info = row.input_metadata.dataset_info or {}
    item = info.get(ITEM_KEY)
    return dict(item) if isinstance(item, dict) else {}


def final_text(messages: Sequence[Any]) -> str:
    """The final answer graded: the text of the last assistant message (``""`` when it only called tools,
    as the hosted side grades a rollout cut at its turn limit with that turn's text)."""
    for message in reversed(messages):
        role = message.get("role") if isinstance(message, dict) else getattr(message, "role", None)
        if role != "assistant":
            continue
        content = message.get("content") if isinstance(message, dict) else getattr(message, "content", None)
        if isinstance(content, list):
            return "".join(str(p.get("text") or "") if isinstance(p, dict) else str(getattr(p, "text", "") or "")
                           for p in content)
        return str(content or "")
    return ""


async def run_rollout(client: HostedClient, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                      item: Mapping[str, Any], complete: Complete, max_turns: int) -> tuple[str, list[dict[str, Any]]]:
    """One rollout: ``(trace_id, conversation)``. ``complete(messages, tools)`` returns the assistant message
    (``{"role", "content", "tool_calls"}``); each of its tool calls is one hosted call (arguments text verbatim)
    whose answer (``output`` or error body) becomes the ``tool`` message; at most ``max_turns`` model turns
    (the last turn's calls run, as hosted).

    Raises:
        RolloutDiscardedError: a tool call still failed after 3 attempts (hosted rule: the rollout is discarded).
    """
    trace_id = new_trace_id()
    conversation = list(messages)
    for _ in range(max_turns):
        message = await complete(conversation, tools)
        conversation.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            break
        for call in calls:
            function = call.get("function") or {}
            answer = await client.call_tool(trace_id, str(function.get("name") or ""),
                                            str(function.get("arguments") or ""), item)
            conversation.append({"role": "tool", "tool_call_id": call.get("id"), "name": function.get("name"),
                                 "content": answer.model_text})
    return trace_id, conversation


def _assistant(message: Any) -> dict[str, Any]:
    """A chat-completions assistant message (LiteLLM's or OpenAI's object) as a plain dict."""
    data = message.model_dump() if hasattr(message, "model_dump") else dict(message)
    out: dict[str, Any] = {"role": "assistant", "content": data.get("content")}
    calls = [{"id": c.get("id"), "type": "function", "function": {"name": (c.get("function") or {}).get("name"),
                                                                  "arguments": (c.get("function") or {}).get("arguments")}}
             for c in data.get("tool_calls") or []]
    if calls:
        out["tool_calls"] = calls
    return out


class ToolServerRolloutProcessor(RolloutProcessor):
    """EP's ``RolloutProcessor`` over a tool server's hosted routes (see the module docstring).

    Args:
        base_url: the tool server's root URL.
        token: bearer token (``Authorization: Bearer``), if the server wants one.
        max_turns: model turns per rollout (default: the run's ``steps``, EP's default 30).
        timeout_s: seconds per hosted request.
    """

    def __init__(self, base_url: str, *, token: str | None = None, max_turns: int | None = None,
                 timeout_s: float = 600.0) -> None:
        self.base_url, self.token, self.max_turns, self.timeout_s = base_url, token, max_turns, timeout_s
        self._client: HostedClient | None = None

    def _hosted(self) -> HostedClient:
        if self._client is None:
            self._client = HostedClient.over_http(self.base_url, token=self.token, timeout_s=self.timeout_s)
        return self._client

    def __call__(self, rows: list[EvaluationRow], config: RolloutProcessorConfig) -> list[asyncio.Task[EvaluationRow]]:
        import litellm

        params = dict(normalize_fireworks_model_for_litellm(config.completion_params) or config.completion_params or {})
        if not params.get("model"):
            raise ValueError("completion_params needs a 'model' (LiteLLM's name, e.g. 'openai/<model>' with "
                             "'base_url' for an OpenAI-compatible server)")
        turns = self.max_turns or config.steps

        async def complete(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
            response = await litellm.acompletion(messages=messages, tools=tools or None, **params)
            return _assistant(response.choices[0].message)

        async def one(row: EvaluationRow) -> EvaluationRow:
            async with config.semaphore:
                messages = [m.dump_mdoel_for_chat_completion_request() for m in row.messages]
                try:
                    trace_id, conversation = await run_rollout(self._hosted(), messages, row.tools, item_of(row),
                                                               complete, turns)
                except RolloutDiscardedError as exc:
                    row.rollout_status = Status.rollout_error(str(exc))
                    return row
                row.messages = [Message(**m) for m in conversation]
                row.execution_metadata.extra = {**(row.execution_metadata.extra or {}), "trace_id": trace_id}
                row.rollout_status = Status.rollout_finished()
                return row

        return [asyncio.create_task(one(row)) for row in rows]

    async def acleanup(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


async def evaluate_row(row: EvaluationRow, base_url: str, *, token: str | None = None,
                       grader: str | None = None) -> EvaluationRow:
    """Set ``row.evaluation_result`` to the endpoint grader's score of the row's rollout (module docstring).

    A row without a ``trace_id`` (its rollout failed) or whose grade was discarded gets
    ``score=0.0, is_score_valid=False`` with the reason: EP leaves invalid scores out.
    """
    trace_id = (row.execution_metadata.extra or {}).get("trace_id")
    if not trace_id:
        reason = row.rollout_status.message if row.rollout_status else ""
        row.evaluation_result = EvaluateResult(score=0.0, is_score_valid=False,
                                               reason=f"no trace_id: the rollout did not run ({reason})")
        return row
    async with HostedClient.over_http(base_url, token=token) as client:
        try:
            grade = await client.grade(str(trace_id), final_text(row.messages), item_of(row), grader)
        except RolloutDiscardedError as exc:
            row.evaluation_result = EvaluateResult(score=0.0, is_score_valid=False, reason=str(exc))
            return row
    row.evaluation_result = EvaluateResult(
        score=grade.score, reason="; ".join(grade.reasons) or None,
        metrics={name: MetricResult(score=value, reason=name) for name, value in grade.subscores.items()})
    return row
