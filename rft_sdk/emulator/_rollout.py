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
import json
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import anyio
import httpx

from ._client import ClientSettings, EndpointClient, EndpointFailure, ToolCallResult
from ._job import ReinforcementJob, load_job
from ._job import samples_per_item as _samples_for
from ._policy import Policy, PolicyError, PolicyStep, check_step

if sys.version_info < (3, 11):  # pragma: no cover - anyio depends on the backport there
    from exceptiongroup import BaseExceptionGroup

__all__ = ["RolloutResult", "StepRecord", "build_sample", "run_rollouts"]


@dataclass
class StepRecord:
    """One policy turn: its text, normalised tool calls and the policy's opaque ``extra``."""

    index: int
    content: str | None
    tool_calls: list[dict[str, Any]]
    extra: Any = None


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
    discarded: bool = False
    discard_reason: str | None = None
    discard_detail: str | None = None
    truncated: bool = False
    perturbation: str | None = None
    policy_info: dict[str, Any] | None = None
    duration_s: float = 0.0

    def to_dict(self, include_extra: bool = False) -> dict[str, Any]:
        """JSON-ready dict (one ``rollouts.jsonl`` line); step ``extra`` only if asked and JSON-serialisable."""
        out = asdict(self)
        for step, rec in zip(out["steps"], self.steps):
            step["extra"] = None
            if include_extra and rec.extra is not None:
                try:
                    json.dumps(rec.extra)
                    step["extra"] = rec.extra
                except (TypeError, ValueError):
                    step["extra"] = f"<not JSON-serialisable: {type(rec.extra).__name__}>"
        return out


def _chat_tool_calls(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": c["call_id"], "type": "function",
             "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]


def build_sample(step: PolicyStep) -> dict[str, Any]:
    """The grading ``sample`` for the final turn (chat-completions style).

    Shape: ``{"output_text": str, "output_json": dict|list|None,
    "output_tools": [chat tool calls], "choices": [{"index": 0, "message":
    {...}, "finish_reason": "stop"|"tool_calls"}]}``. ``output_json`` is the
    parsed ``output_text`` when it is a JSON object or array, else ``None``.
    """
    text = step.content or ""
    output_json = None
    if text.lstrip().startswith(("{", "[")):
        try:
            output_json = json.loads(text)
        except json.JSONDecodeError:
            output_json = None
    tools = _chat_tool_calls(step.tool_calls)
    message: dict[str, Any] = {"role": "assistant", "content": step.content}
    if tools:
        message["tool_calls"] = tools
    return {"output_text": text, "output_json": output_json, "output_tools": tools,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tools else "stop"}]}


class _Runner:
    def __init__(self, job: ReinforcementJob, policy: Policy, clients: list[EndpointClient], max_steps: int) -> None:
        self.job, self.policy, self.clients, self.max_steps = job, policy, clients, max_steps

    async def _dispatch(self, client: EndpointClient, call: dict[str, Any], trace_id: str, item: dict[str, Any]
                        ) -> tuple[ToolCallResult, EndpointFailure | None]:
        tool = self.job.tool(call["name"])
        if tool is None:
            res = ToolCallResult(id=call["id"], call_id=call["call_id"], name=call["name"],
                                 arguments=call["arguments"], error="unknown tool", started_at=time.time())
            res.output = json.dumps({"error": f"unknown tool {call['name']!r}; job tools: {sorted(self.job.tool_names)}"})
            return res, None
        try:
            return await client.call_tool(tool, call, trace_id=trace_id, item=item), None
        except EndpointFailure as exc:
            if exc.result is None:  # call_tool always attaches it; guard against misuse
                raise
            return exc.result, exc

    async def _dispatch_all(self, client: EndpointClient, calls: list[dict[str, Any]], trace_id: str,
                            item: dict[str, Any]) -> list[tuple[ToolCallResult, EndpointFailure | None]]:
        if len(calls) == 1:
            return [await self._dispatch(client, calls[0], trace_id, item)]
        out: list[Any] = [None] * len(calls)

        async def one(i: int) -> None:
            out[i] = await self._dispatch(client, calls[i], trace_id, item)

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
        final: PolicyStep | None = None
        for turn in range(self.max_steps):
            try:
                step = check_step(await self.policy.act(res.messages, tools, item=item, trace_id=res.trace_id))
            except PolicyError as exc:
                res.discarded, res.discard_reason, res.discard_detail = True, "policy_error", str(exc)
                return
            res.steps.append(StepRecord(turn, step.content, step.tool_calls, step.extra))
            msg: dict[str, Any] = {"role": "assistant", "content": step.content}
            if step.tool_calls:
                msg["tool_calls"] = _chat_tool_calls(step.tool_calls)
            res.messages.append(msg)
            final = step
            if not step.tool_calls:
                break
            failure = None
            for call_res, exc in await self._dispatch_all(client, step.tool_calls, res.trace_id, item):
                res.tool_calls.append(call_res)
                res.messages.append({"role": "tool", "tool_call_id": call_res.call_id, "content": call_res.output})
                failure = failure or exc
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
            grade = await client.grade(self.job.grader, res.sample, item=item, trace_id=res.trace_id)
        except EndpointFailure as exc:
            res.discarded, res.discard_reason, res.discard_detail = True, f"grader_{exc.reason}", exc.detail
            return
        res.score, res.grade_details = grade.score, grade.details


#: rollouts in flight per owned ``httpx.AsyncClient``. httpcore's pool scans all
#: its connections for every queued request (cost ~ connections x requests), so
#: one client with 200+ connections is several times slower than clients of ~16
#: (measured by benchmarks/bench_emulator.py); the emulator shards instead.
ROLLOUTS_PER_CLIENT = 16


def _default_clients(settings: ClientSettings, concurrency: int,
                     transport: httpx.AsyncBaseTransport | None) -> list[httpx.AsyncClient]:
    shards = -(-concurrency // ROLLOUTS_PER_CLIENT)
    conns = 4 * -(-concurrency // shards)  # room for parallel tool calls within a step
    ssl_context = httpx.create_ssl_context()  # built once: ~30 ms each (loads the CA bundle)
    return [httpx.AsyncClient(
        transport=transport,
        verify=ssl_context,
        timeout=httpx.Timeout(settings.timeout_s, pool=None),
        limits=httpx.Limits(max_connections=conns, max_keepalive_connections=conns),
    ) for _ in range(shards)]


async def run_rollouts(
    items: Sequence[dict[str, Any]],
    policy: Policy,
    job: ReinforcementJob | dict[str, Any] | str,
    *,
    samples_per_item: int | None = None,
    max_concurrency: int = 64,
    max_episode_steps: int | None = None,
    settings: ClientSettings | None = None,
    client: httpx.AsyncClient | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    on_result: Callable[[RolloutResult], Any] | None = None,
) -> list[RolloutResult]:
    """Run ``samples_per_item`` rollouts of every item, at most ``max_concurrency`` at once.

    Args:
        items: dataset lines (dicts with a ``messages`` list; ``tools`` optional).
        policy: anything with ``async act(messages, tools, *, item, trace_id) -> PolicyStep``.
        job: a :class:`ReinforcementJob`, or anything :func:`load_job` accepts.
        samples_per_item: rollouts per item (the group size G); default from
            ``compute_multiplier`` via :func:`samples_per_item`.
        max_concurrency: rollouts in flight at once.
        max_episode_steps: overrides the job's value.
        settings: retries, backoff, timeouts and size limits.
        client: an ``httpx.AsyncClient`` to use (not closed here); otherwise
            ``ceil(max_concurrency / 16)`` clients are created (over ``transport``
            when given), rollouts spread over them, and closed at the end.
        on_result: called with each finished rollout (e.g. a progress bar).

    Returns:
        ``len(items) * samples_per_item`` results ordered by (item_index, sample_index).

    Raises:
        ValueError: an item without a ``messages`` list, or non-positive counts.
        JobConfigError: an invalid job. Exceptions other than
            :class:`PolicyError` raised by the policy propagate (after the
            other rollouts are cancelled).
    """
    job = load_job(job)
    settings = settings or ClientSettings()
    n = samples_per_item if samples_per_item is not None else _samples_for(job.hyperparameters.compute_multiplier)
    steps = max_episode_steps if max_episode_steps is not None else job.max_episode_steps
    if n < 1 or max_concurrency < 1 or steps < 1:
        raise ValueError(f"samples_per_item ({n}), max_concurrency ({max_concurrency}) and "
                         f"max_episode_steps ({steps}) must be >= 1")
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("messages"), list):
            raise ValueError(f"items[{i}] must be a dict with a 'messages' list")
    own = client is None
    https = _default_clients(settings, max_concurrency, transport) if own else [client]
    limiters: dict[str, Any] = {}  # one grader rate limit across all shards
    runner = _Runner(job, policy, [EndpointClient(h, settings, limiters) for h in https], steps)
    limiter = anyio.CapacityLimiter(max_concurrency)
    results: list[RolloutResult | None] = [None] * (len(items) * n)

    async def one(k: int) -> None:
        async with limiter:
            r = await runner.rollout(k // n, k % n, items[k // n])
        results[k] = r
        if on_result is not None:
            on_result(r)

    try:
        async with anyio.create_task_group() as tg:
            for k in range(len(results)):
                tg.start_soon(one, k)
    except BaseExceptionGroup as group:
        # surface the first failure itself (not a group); say how many others there were
        first, *others = group.exceptions
        if others and hasattr(first, "add_note"):  # add_note: Python >= 3.11
            first.add_note(f"({len(others)} other rollout(s) failed too: "
                           f"{', '.join(sorted({type(e).__name__ for e in others}))})")
        raise first from None
    finally:
        if own:
            for h in https:
                await h.aclose()
    return [r for r in results if r is not None]
