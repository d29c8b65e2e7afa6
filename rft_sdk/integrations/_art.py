"""OpenPipe ART (``openpipe-art`` 0.5) against a tool server: ``rollout(model, scenario) -> art.Trajectory``.

ART leaves the rollout function to its user (``async def rollout(model, scenario) -> art.Trajectory``, gathered
with ``art.gather_trajectory_groups``). :func:`rollout` is that function for a tool server's hosted wire:

* one rollout = one fresh ``trace_id`` (``new_trace_id()``), kept in ``trajectory.metadata["trace_id"]``;
* the model is ART's own client (``model.openai_client()``, ``model.get_inference_name()``), offered the
  server's tools (``GET /tools``); every tool call it makes is the hosted ``POST /tools/{name}`` of that
  ``trace_id`` with its arguments text verbatim, and the tool message is the ``output`` or the hosted error body;
* the rollout ends when the model answers without tool calls, or after ``scenario.max_turns`` model turns (the
  last turn's calls are executed first, as the hosted side does at ``max_episode_steps``);
* ``trajectory.reward`` is the endpoint grader's score (``POST /grade[/{grader}]``, the last assistant text as
  ``sample.output_text``) and ``trajectory.metrics`` its sub-scores plus ``grader_score``.

:func:`blend_ruler` mixes in ART's RULER (``art.rewards.ruler_score_group``, an LLM judge ranking a group's
trajectories against each other): ``reward = (1 - weight) * grader_score + weight * ruler_score``. ``weight``
defaults to 0 (the grader alone, no judge call); the grader is the ground truth of the task, RULER a relative
shaping signal, so keep ``weight`` small (e.g. 0.2) when the grader is sparse. See ``docs/art.md``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import art
from pydantic import BaseModel, Field

from ..surfaces import HostedClient, new_trace_id

__all__ = ["HostedScenario", "blend_ruler", "rollout"]


class HostedScenario(BaseModel):
    """One ART scenario: a hosted dataset line and where its tool server is.

    ``item``: the hosted dataset line (its ``messages`` open the conversation); ``base_url``: the server's root
    URL; ``token``: its bearer token (never copied into the trajectory); ``grader``: grader name (``None``:
    ``POST /grade``); ``max_turns``: model turns (the hosted ``max_episode_steps``); ``timeout_s``: seconds
    per HTTP request.
    """

    item: dict[str, Any]
    base_url: str
    token: str | None = None
    grader: str | None = None
    max_turns: int = Field(default=10, ge=1)
    timeout_s: float = Field(default=600.0, gt=0)


def _text(message: Any) -> str:
    content = message.get("content") if isinstance(message, Mapping) else getattr(message, "content", None)
    return content if isinstance(content, str) else ""


async def rollout(model: art.Model, scenario: HostedScenario, **completion_kwargs: Any) -> art.Trajectory:
    """Play ``scenario`` with ``model`` through the hosted wire (see the module docstring).

    ``completion_kwargs`` go to ``chat.completions.create`` (e.g. ``temperature``).

    Raises:
        ValueError: the item has no non-empty ``messages`` list (hosted protocol §2).
        RolloutDiscardedError: a tool call or the grade failed (5xx/transport after retries, or a non-200
            grade): ART counts it as the rollout's exception (``max_exceptions``).
        httpx.HTTPStatusError: ``GET /tools`` refused (e.g. 401).
    """
    messages = scenario.item.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("the scenario's item has no 'messages' list (hosted protocol §2 requires one)")
    trace_id = new_trace_id()
    client = model.openai_client()
    async with HostedClient.over_http(scenario.base_url, token=scenario.token, timeout_s=scenario.timeout_s) as hosted:
        tools = await hosted.list_tools()
        trajectory = art.Trajectory(
            messages_and_choices=[{"role": m["role"], "content": m.get("content") or ""} for m in messages],
            tools=tools, reward=0.0,
            metadata={"trace_id": trace_id, "task_id": str(scenario.item.get("task_id", ""))})
        for _ in range(scenario.max_turns):
            completion = await client.chat.completions.create(model=model.get_inference_name(),
                                                              messages=trajectory.messages(), tools=tools,
                                                              **completion_kwargs)
            choice = completion.choices[0]
            trajectory.messages_and_choices.append(choice)
            calls = choice.message.tool_calls or []
            for call in calls:
                answer = await hosted.call_tool(trace_id, call.function.name, call.function.arguments or "",
                                                scenario.item)
                trajectory.messages_and_choices.append({"role": "tool", "tool_call_id": call.id,
                                                        "content": answer.model_text})
            if not calls:
                break
        final = next((m for m in reversed(trajectory.messages()) if m.get("role") == "assistant"), None)
        grade = await hosted.grade(trace_id, _text(final) if final is not None else "", scenario.item,
                                   scenario.grader)
    trajectory.reward = grade.score
    trajectory.metrics = {**grade.subscores, "grader_score": grade.score}
    if grade.reasons:
        trajectory.metadata["grade_reasons"] = json.dumps(grade.reasons)
    return trajectory


async def blend_ruler(group: art.TrajectoryGroup, weight: float = 0.0, judge_model: str = "openai/o3",
                      **ruler_kwargs: Any) -> art.TrajectoryGroup:
    """``group`` with ``reward = (1 - weight) * grader_score + weight * ruler_score`` per trajectory.

    ``weight`` in [0, 1]; 0 returns ``group`` unchanged without calling the judge. RULER is ART's own
    ``art.rewards.ruler_score_group(group, judge_model, **ruler_kwargs)`` (it keeps the grader's reward in
    ``metrics["independent_reward"]`` and its own in ``metrics["ruler_score"]``).

    Raises:
        ValueError: ``weight`` outside [0, 1], or a trajectory without ``metrics["grader_score"]``.
        Whatever RULER raises (e.g. the judge is unreachable).
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight must be in [0, 1], got {weight}")
    if any("grader_score" not in t.metrics for t in group.trajectories):
        raise ValueError("every trajectory needs metrics['grader_score'] (made by rft_sdk.integrations.art.rollout)")
    if weight == 0.0:
        return group
    from art.rewards import ruler_score_group

    judged = await ruler_score_group(group, judge_model, **ruler_kwargs)
    if judged is None:  # only with swallow_exceptions=True
        raise ValueError("RULER returned no scores (swallow_exceptions hid the judge's error)")
    for trajectory in judged.trajectories:
        ruler = float(trajectory.metrics["ruler_score"])
        trajectory.reward = (1.0 - weight) * float(trajectory.metrics["grader_score"]) + weight * ruler
    return judged
