"""A TRL ``GRPOTrainer`` environment backed by a hosted-protocol tool server.

TRL's environment interface (trl 1.16, ``GRPOTrainer(environment_factory=...)``,
documented in ``GRPOTrainer``'s docstring): a zero-argument callable returns an
environment instance; the trainer draws one instance per rollout, calls
``reset(**dataset_row)`` before generating, exposes the instance's public
methods as tools (schema from type hints + docstring) and passes the instances
to reward functions as ``environments=``. This module provides:

- :class:`ToolServerEnvironment` — that callable. Built from the server's base
  URL; it reads the tool definitions once (``GET /tools``, the hosted export) and
  makes one method per tool (:mod:`._signatures`).
- :class:`RolloutEnvironment` — one instance per rollout: ``reset`` mints a
  fresh ``trace_id = "trace_" + uuid4().hex`` and takes the item from the row;
  each tool method sends the hosted wire request ``POST {base}/tools/{name}``
  (``{"type": "function_call", "id", "call_id", "name", "arguments": <JSON string>,
  "trace_id", "item"}``, same headers as a hosted job), so the same server, auth
  and store serve training here and in a hosted run.
- ``ToolServerEnvironment.grader_reward`` — the reward function: ``POST {base}/grade``
  (or ``/grade/{grader}``) with ``{"sample": {"output_text"}, "item", "trace_id"}``
  per rollout; the score is the reward, the ``x-rft-grade-details`` sub-scores are
  logged with TRL's ``log_metric`` as ``grader/<name>``.
- :func:`hosted_dataset` — hosted JSONL lines → a ``datasets.Dataset`` with
  ``prompt`` (the line's ``messages``) and ``rft_item`` (the whole line, JSON).

Failure behaviour follows the hosted protocol (docs/hosted-protocol.md §3): a
4xx tool answer is shown to the model as the JSON error body; a 5xx or a
transport error is retried up to 3 times, after which the rollout is discarded
(its reward is ``None``, which TRL leaves out of the loss) and the tool call
raises, which TRL shows to the model as an error.
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from tenacity import AsyncRetrying, Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from ._signatures import schema_method

__all__ = ["ITEM_COLUMN", "RolloutEnvironment", "RolloutRecord", "ToolServerEnvironment", "hosted_dataset"]

ITEM_COLUMN = "rft_item"
DETAILS_HEADER = "x-rft-grade-details"
_ATTEMPTS = 3  # hosted protocol §3: 5xx retried up to 3 times


class _Retryable(Exception):
    """A 5xx answer: retried like a transport error."""


def _retrying_call(client: httpx.Client, url: str, body: dict[str, Any]) -> httpx.Response:
    for attempt in Retrying(stop=stop_after_attempt(_ATTEMPTS), wait=wait_exponential(0.05, max=1.0),
                            retry=retry_if_exception_type((_Retryable, httpx.TransportError)), reraise=True):
        with attempt:
            response = client.post(url, json=body)
            if response.status_code >= 500:
                raise _Retryable(f"{url} answered {response.status_code}: {response.text[:200]}")
    return response


@dataclass
class RolloutRecord:
    """What one graded rollout did: ``trace_id``, tool calls sent, score (``None``: discarded), sub-scores."""

    trace_id: str
    tool_calls: int
    score: float | None
    subscores: dict[str, float] = field(default_factory=dict)


class RolloutEnvironment:
    """One rollout against the tool server (TRL draws one instance per generation).

    Attributes (all reset by :meth:`reset`): ``trace_id`` (``"trace_" + 32 hex``),
    ``item`` (the dataset line, a dict), ``tool_calls`` (calls sent), ``failed``
    (a tool call failed after retries: the rollout is discarded), ``seed_output``.
    Public methods besides ``reset`` are the server's tools (added per server).
    """

    _owner: ToolServerEnvironment

    def __init__(self) -> None:
        self.trace_id = ""
        self.item: dict[str, Any] = {}
        self.tool_calls = 0
        self.failed = False
        self.seed_output: str | None = None

    def reset(self, **row: Any) -> str | None:
        """Start a new rollout for a dataset row (TRL passes the row's columns).

        The item is ``json.loads(row["rft_item"])`` when that column exists, else the
        row without ``prompt``. With ``seed_first_call``, the item's first gold action
        (``item["actions"][0]``) is sent as this rollout's first tool call and the
        returned text (appended by TRL to the last user message) shows it to the model.
        """
        self.trace_id = f"trace_{uuid.uuid4().hex}"
        raw = row.get(ITEM_COLUMN)
        self.item = json.loads(raw) if isinstance(raw, str) else {k: v for k, v in row.items() if k != "prompt"}
        self.tool_calls = 0
        self.failed = False
        self.seed_output = None
        actions = self.item.get("actions") or []
        if not (self._owner.seed_first_call and actions):
            return None
        first = actions[0]
        self.seed_output = self._call(first["name"], dict(first.get("arguments") or {}))
        return (f"\n\n[{first['name']}({json.dumps(first.get('arguments') or {})}) was already called for you; "
                f"it returned: {self.seed_output}]")

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        owner = self._owner
        call = uuid.uuid4().hex
        body = {"type": "function_call", "id": f"fc_{call}", "call_id": f"call_{call}", "name": name,
                "arguments": json.dumps(arguments), "trace_id": self.trace_id, "item": self.item}
        self.tool_calls += 1
        try:
            response = _retrying_call(owner.client, f"/tools/{name}", body)
        except (_Retryable, httpx.TransportError) as exc:
            self.failed = True
            raise RuntimeError(f"tool {name!r} failed after {_ATTEMPTS} attempts; rollout discarded: {exc}") from exc
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if response.is_success and isinstance(payload, dict) and isinstance(payload.get("output"), str):
            return str(payload["output"])
        return json.dumps(payload) if payload is not None else response.text


class ToolServerEnvironment:
    """``environment_factory`` for ``GRPOTrainer``: rollouts against the tool server at ``base_url``.

    Args:
        base_url: the server's base URL (``/tools/{name}``, ``/grade`` below it).
        token: bearer token, sent as ``Authorization: Bearer <token>`` (tools and grader).
        headers: more headers for every request (e.g. ``X-Functions-Key``).
        tools: names of the tools to expose (default: all of the server's, in its order).
        grader: grader name (``POST /grade/{grader}``); ``None`` uses ``POST /grade``.
        seed_first_call: send each item's first gold action at ``reset`` (see
            :meth:`RolloutEnvironment.reset`); for smoke tests with untrained models.
        timeout_s: seconds per HTTP request (protocol allows 600).
        history: how many :class:`RolloutRecord` to keep in ``records``.

    Raises:
        httpx.HTTPStatusError: ``GET /tools`` failed (e.g. 401 with a wrong token).
        ValueError: an unknown name in ``tools``, or a tool that cannot be a method.

    Use: ``GRPOTrainer(..., environment_factory=env, reward_funcs=[env.grader_reward])``.
    """

    def __init__(self, base_url: str, *, token: str | None = None, headers: Mapping[str, str] | None = None,
                 tools: Sequence[str] | None = None, grader: str | None = None, seed_first_call: bool = False,
                 timeout_s: float = 600.0, history: int = 100_000) -> None:
        self.base_url = base_url.rstrip("/")
        self.headers = dict(headers or {})
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.grade_path = f"/grade/{grader}" if grader else "/grade"
        self.seed_first_call = seed_first_call
        self.timeout_s = timeout_s
        self.client = httpx.Client(base_url=self.base_url, headers=self.headers, timeout=timeout_s)
        listed = self.client.get("/tools")
        listed.raise_for_status()
        definitions = {d["function"]["name"]: d for d in listed.json()["tools"]}
        unknown = sorted(set(tools or ()) - set(definitions))
        if unknown:
            raise ValueError(f"tools {unknown!r} are not served at {self.base_url}; available: {sorted(definitions)}")
        self.tool_definitions = [definitions[n] for n in (tools if tools is not None else definitions)]
        methods = {d["function"]["name"]: schema_method(d, RolloutEnvironment._call)
                   for d in self.tool_definitions}
        self.environment_class: type[RolloutEnvironment] = type(
            "ToolServerRollout", (RolloutEnvironment,), {"_owner": self, **methods})
        self.records: deque[RolloutRecord] = deque(maxlen=history)
        self._lock = threading.Lock()

    def __call__(self) -> RolloutEnvironment:
        """A fresh rollout environment (no request is sent until ``reset``)."""
        return self.environment_class()

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self.client.close()

    async def _grade(self, client: httpx.AsyncClient, env: RolloutEnvironment,
                     completion: Any) -> tuple[float | None, dict[str, float]]:
        if env.failed:
            return None, {}
        body = {"sample": {"output_text": _final_text(completion)}, "item": env.item, "trace_id": env.trace_id}
        try:
            async for attempt in AsyncRetrying(stop=stop_after_attempt(_ATTEMPTS), wait=wait_exponential(0.05, max=1.0),
                                               retry=retry_if_exception_type((_Retryable, httpx.TransportError)),
                                               reraise=True):
                with attempt:
                    response = await client.post(self.grade_path, json=body)
                    if response.status_code >= 500:
                        raise _Retryable(f"grader answered {response.status_code}: {response.text[:200]}")
        except (_Retryable, httpx.TransportError):
            return None, {}
        if response.status_code != 200:
            return None, {}
        details = json.loads(response.headers.get(DETAILS_HEADER, "{}"))
        return float(response.json()["score"]), {k: float(v) for k, v in details.get("subscores", {}).items()}

    async def grader_reward(self, completions: list[Any], environments: list[RolloutEnvironment] | None = None,
                     log_metric: Any = None, log_extra: Any = None, **kwargs: Any) -> list[float | None]:
        """TRL reward function: the grader's score of each rollout (``None``: discarded rollout).

        Args:
            completions: one per rollout; conversational (a list of messages, the
                last assistant ``content`` is ``sample.output_text``) or plain text.
            environments: the rollouts' :class:`RolloutEnvironment` (TRL passes them).
            log_metric: TRL's ``log_metric(name, value)``; gets ``grader/<subscore>``
                means, ``grader/discarded`` and ``grader/tool_calls_per_rollout``.
            log_extra: TRL's ``log_extra(column, values)``; gets the ``trace_id`` column.

        Raises:
            ValueError: no environments (the trainer was built without ``environment_factory``).
        """
        if environments is None:
            raise ValueError("ToolServerEnvironment.grader_reward needs GRPOTrainer(environment_factory=...)")
        async with httpx.AsyncClient(base_url=self.base_url, headers=self.headers, timeout=self.timeout_s) as client:
            graded = await asyncio.gather(*(self._grade(client, env, c) for env, c in zip(environments, completions)))
        records = [RolloutRecord(env.trace_id, env.tool_calls, score, subs)
                   for env, (score, subs) in zip(environments, graded)]
        with self._lock:
            self.records.extend(records)
        if log_metric is not None:
            for name in sorted({k for r in records for k in r.subscores}):
                values = [r.subscores[name] for r in records if name in r.subscores]
                log_metric(f"grader/{name}", sum(values) / len(values))
            log_metric("grader/discarded", float(sum(r.score is None for r in records)))
            log_metric("grader/tool_calls_per_rollout", sum(r.tool_calls for r in records) / max(len(records), 1))
        if log_extra is not None:
            log_extra("trace_id", [r.trace_id for r in records])
        return [r.score for r in records]


def _final_text(completion: Any) -> str:
    """``sample.output_text``: the last assistant message's text (or the plain completion)."""
    if isinstance(completion, str):
        return completion
    for message in reversed(list(completion or [])):
        if message.get("role") == "assistant":
            content = message.get("content") or ""
            if isinstance(content, list):
                return "".join(p.get("text", "") for p in content if isinstance(p, dict))
            return str(content)
    return ""


def hosted_dataset(lines: Iterable[Mapping[str, Any]]) -> Any:
    """A TRL dataset from hosted dataset lines (hosted protocol §2).

    Each line ``{"messages": [...], "tools": [...], ...}`` becomes a row
    ``{"prompt": messages, "rft_item": json.dumps(line)}``; the line reaches the
    tools and the grader as ``item``. (TRL renders the tools from the environment,
    so a line's own ``tools`` are not used for the prompt.)

    Returns:
        ``datasets.Dataset`` with columns ``prompt`` and ``rft_item``.

    Raises:
        ValueError: a line without a non-empty ``messages`` list.
    """
    from datasets import Dataset

    prompts, items = [], []
    for number, line in enumerate(lines, 1):
        messages = line.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ValueError(f"dataset line {number} has no 'messages' list (hosted protocol §2 requires one)")
        prompts.append([{"role": m["role"], "content": m["content"]} for m in messages])
        items.append(json.dumps(dict(line)))
    return Dataset.from_dict({"prompt": prompts, ITEM_COLUMN: items})
