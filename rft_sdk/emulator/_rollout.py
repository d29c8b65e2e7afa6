"""The rollout loop: the hosted service's side of one rollout, run concurrently.

Source: ``docs/hosted-protocol.md`` section 3 and ``docs/ARCHITECTURE.md``
("Emulator ↔ trainer seam"). Per rollout: mint ``trace_id = "trace_" +
uuid4().hex``; copy the item's ``messages``; each turn ask the policy, append
its assistant message, dispatch that turn's tool calls concurrently and append
one ``{"role": "tool", "tool_call_id", "content"}`` message per call in call
order; stop at a turn without tool calls (the final answer) or after
``max_episode_steps`` turns; then grade. A tool or grader call that still
fails after its retries, or a policy error, discards the rollout with a reason.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import anyio

from .._wire._json import loads_strict
from ._client import EndpointClient, EndpointFailure, ToolCallResult, _encode
from ._contract import Policy, PolicyError, check_step
from ._job import ReinforcementJob
from ._types import PolicyStep, StepRecord, ToolCall

__all__ = ["RolloutResult", "build_sample"]


@dataclass
class RolloutResult:
    """Everything about one rollout.

    Attributes:
        trace_id: ``"trace_" + <32 hex>``, sent with every call of this rollout.
        item_index, sample_index: position of the item and of this sample (0-based).
        messages: the chat-completions conversation, item messages first.
        steps: one :class:`StepRecord` per policy turn.
        tool_calls: every dispatched call, in dispatch order.
        sample: the grading sample ``{"output_text", "output_json", "output_tools", "choices"}``.
        score: grader score; ``None`` when discarded.
        grade_details: parsed ``x-rft-grade-details`` header, if sent.
        end_state: the server's digest of the rollout's end state (``x-rft-end-state``), if sent.
        discarded / discard_reason / discard_detail: e.g. ``tool_server_error``,
            ``tool_timeout``, ``tool_transport_error``, ``grader_<reason>``, ``policy_error``.
        truncated: ``max_episode_steps`` turns ran without a final answer.
        perturbation, policy_info: from the policy's optional ``end_rollout`` hook.
        duration_s: wall seconds for the whole rollout.
    """

    trace_id: str
    item_index: int
    sample_index: int
    messages: list[dict[str, Any]] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    tool_calls: list[ToolCallResult] = field(default_factory=list)
    sample: dict[str, Any] | None = None
    score: float | None = None
    grade_details: dict[str, Any] | None = None
    end_state: str | None = None
    discarded: bool = False
    discard_reason: str | None = None
    discard_detail: str | None = None
    truncated: bool = False
    perturbation: str | None = None
    policy_info: dict[str, Any] | None = None
    duration_s: float = 0.0

    def to_dict(self, include_extra: bool = False) -> dict[str, Any]:
        """JSON-ready dict (one ``rollouts.jsonl`` line); step ``extra`` only if asked and JSON-serialisable.

        A dataclass ``extra`` is written as its ``asdict``.
        """
        out = asdict(self)
        for step, rec in zip(out["steps"], self.steps):
            step["extra"] = None
            if include_extra and rec.extra is not None:
                extra = rec.extra
                if dataclasses.is_dataclass(extra) and not isinstance(extra, type):
                    extra = asdict(extra)
                try:
                    json.dumps(extra)
                    step["extra"] = extra
                except (TypeError, ValueError):
                    step["extra"] = f"<not JSON-serialisable: {type(rec.extra).__name__}>"
        return out


def _chat_tool_calls(calls: list[ToolCall]) -> list[dict[str, Any]]:
    return [c.to_chat() for c in calls]


def _checked_calls(step: PolicyStep) -> list[ToolCall]:
    """The step's calls, which :func:`check_step` has made :class:`ToolCall` s."""
    return [c for c in step.tool_calls if isinstance(c, ToolCall)]


def build_sample(step: PolicyStep) -> dict[str, Any]:
    """The grading ``sample`` for the final turn (chat-completions style).

    Shape: ``{"output_text": str, "output_json": dict|list|None,
    "output_tools": [chat tool calls], "choices": [{"index": 0, "message":
    {...}, "finish_reason": "stop"|"tool_calls"}]}``. ``output_json`` is the
    parsed ``output_text`` when it is a strict JSON object or array (``_wire._json.loads_strict``: no
    ``NaN``/``Infinity``, which no JSON body may carry), else ``None``.
    Dict tool calls are coerced as :func:`check_step` does.

    Raises:
        PolicyError: ``step`` is not a valid step (see :func:`check_step`).
    """
    text = step.content or ""
    output_json = None
    if text.lstrip().startswith(("{", "[")):
        try:  # the server's one decoding rule: a NaN the stdlib accepts would make the grade body invalid JSON
            output_json = loads_strict(text)
        except ValueError:
            output_json = None
    tools = _chat_tool_calls(_checked_calls(check_step(step)))
    message: dict[str, Any] = {"role": "assistant", "content": step.content}
    if tools:
        message["tool_calls"] = tools
    return {"output_text": text, "output_json": output_json, "output_tools": tools,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tools else "stop"}]}


class _Runner:
    """Runs one rollout at a time for a job and policy over a set of endpoint clients (shards)."""

    def __init__(self, job: ReinforcementJob, policy: Policy, clients: list[EndpointClient], max_steps: int) -> None:
        self.job, self.policy, self.clients, self.max_steps = job, policy, clients, max_steps

    async def _dispatch(self, client: EndpointClient, call: ToolCall, trace_id: str, item: dict[str, Any],
                        item_json: Callable[[], bytes]) -> tuple[ToolCallResult, EndpointFailure | None]:
        tool = self.job.tool(call.name)
        if tool is None:
            res = ToolCallResult(id=call.id, call_id=call.call_id, name=call.name,
                                 arguments=call.arguments, error="unknown tool", started_at=time.time())
            res.output = json.dumps({"error": f"unknown tool {call.name!r}; job tools: {sorted(self.job.tool_names)}"})
            return res, None
        try:
            return await client.call_tool(tool, call, trace_id=trace_id, item=item, item_json=item_json()), None
        except EndpointFailure as exc:
            if exc.result is None:  # call_tool always attaches it; guard against misuse
                raise
            return exc.result, exc

    async def _dispatch_all(self, client: EndpointClient, calls: list[ToolCall], trace_id: str,
                            item: dict[str, Any], item_json: Callable[[], bytes]
                            ) -> list[tuple[ToolCallResult, EndpointFailure | None]]:
        if len(calls) == 1:
            return [await self._dispatch(client, calls[0], trace_id, item, item_json)]
        out: list[Any] = [None] * len(calls)

        async def one(i: int) -> None:
            out[i] = await self._dispatch(client, calls[i], trace_id, item, item_json)

        async with anyio.create_task_group() as tg:
            for i in range(len(calls)):
                tg.start_soon(one, i)
        return out

    async def rollout(self, item_index: int, sample_index: int, item: dict[str, Any]) -> RolloutResult:
        t0 = time.perf_counter()
        res = RolloutResult(trace_id="trace_" + uuid.uuid4().hex, item_index=item_index,
                            sample_index=sample_index, messages=copy.deepcopy(item["messages"]))
        try:
            await self._loop(res, item, self.clients[(item_index + sample_index) % len(self.clients)])
        finally:
            hook = getattr(self.policy, "end_rollout", None)
            if hook is not None:
                info = hook(res.trace_id)
                if info:
                    res.policy_info = dict(info)
                    res.perturbation = info.get("perturbation")
            res.duration_s = time.perf_counter() - t0
        return res

    async def _loop(self, res: RolloutResult, item: dict[str, Any], client: EndpointClient) -> None:
        tools = item.get("tools") or []
        # the item's JSON, encoded at its first call and sent with every call and the grade of this rollout
        item_json = functools.cache(functools.partial(_encode, item))
        final: PolicyStep | None = None
        for turn in range(self.max_steps):
            try:
                step = check_step(await self.policy.act(res.messages, tools, item=item, trace_id=res.trace_id))
            except PolicyError as exc:
                res.discarded, res.discard_reason, res.discard_detail = True, "policy_error", str(exc)
                return
            calls = _checked_calls(step)
            res.steps.append(StepRecord(turn, step.content, calls, step.extra))
            msg: dict[str, Any] = {"role": "assistant", "content": step.content}
            if calls:
                msg["tool_calls"] = _chat_tool_calls(calls)
            res.messages.append(msg)
            final = step
            if not calls:
                break
            failure = None
            for call_res, call_failure in await self._dispatch_all(client, calls, res.trace_id, item, item_json):
                res.tool_calls.append(call_res)
                res.messages.append({"role": "tool", "tool_call_id": call_res.call_id, "content": call_res.output})
                failure = failure or call_failure
            if failure is not None:
                res.discarded, res.discard_reason = True, f"tool_{failure.reason}"
                res.discard_detail = f"{failure.result.name if failure.result else '?'}: {failure.detail}"
                return
        else:
            res.truncated = True
        if final is None:  # max_steps >= 1 is validated, so a turn always ran
            raise RuntimeError("rollout ended without any policy turn")
        res.sample = build_sample(final)
        try:
            grade = await client.grade(self.job.grader, res.sample, item=item, trace_id=res.trace_id,
                                       item_json=item_json())
        except EndpointFailure as exc:
            res.discarded, res.discard_reason, res.discard_detail = True, f"grader_{exc.reason}", exc.detail
            return
        res.score, res.grade_details, res.end_state = grade.score, grade.details, grade.end_state
