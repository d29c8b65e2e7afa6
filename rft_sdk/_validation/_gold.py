"""The gold fields of a dataset (``rft validate``): their shape, their calls against the tools, and a dry run.

Two passes, each finding naming the line, the gold call and the field:

* **Static** (:func:`check_gold`): each line against :class:`~rft_sdk.protocol.GoldItem`
  (``actions`` a list of ``{"name", "arguments"}``, ``reference_answer`` a string,
  ``alternatives``, ``max_tool_calls`` a non-negative integer); ``actions`` without a
  ``reference_answer`` is an error (the replay policy has nothing to end with); every gold
  call names a tool the line offers and the server serves, with argument names the tool's
  schema has and every required one present; a budget the prompt states that is not ``max_tool_calls`` is a
  warning (``rft_sdk._validation._stated_budget``).
* **Dry run** (:func:`replay_gold`): every gold trajectory (and each ``alternatives`` entry)
  played on a fresh rollout of the server, the way the hosted service would: each call must
  answer 2xx, then the ``reference_answer`` is graded and must earn the full score (1.0).
  The rollouts are graded, so their state and databases are released as after any run.

The rule for a gold call answered with a 4xx (``docs/gold-items.md``):

* a call the action marks ``"expect_error": true`` must be refused (any 4xx); answered 200,
  it is a warning (the gold expected a refusal);
* 400 ``tool_error`` (the tool itself raised ``ToolError``: a business rule said no) on an
  unmarked call is a **warning**, an **error** with ``strict`` (``rft validate --strict``):
  τ²-bench golds make such calls on purpose (a lookup that finds nothing, an exchange the
  balance does not cover) and the model sees the same refusal;
* any other 4xx on an unmarked call (422 ``invalid_arguments``, 400 ``malformed_arguments``,
  404 ``unknown_tool``, 409, 413) is always an **error**: the gold is wrong, not the task's
  rules, and the reward would silently be computed on a broken trajectory.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from pydantic import ValidationError

from ..exceptions import RFTError
from ..protocol import GoldItem
from ._report import Report
from ._stated_budget import check_stated_budget

__all__ = ["FULL_SCORE", "GOLD_FIELDS", "REPLAY_CONCURRENCY", "TOOL_ERROR", "GoldClient", "check_gold", "replay_gold"]

#: The score the gold trajectory must earn from the grader.
FULL_SCORE = 1.0
#: The error code of a call the tool itself refused (``ToolError``), hosted protocol §3.
TOOL_ERROR = "tool_error"
#: Gold lines replayed at once by :func:`replay_gold`.
REPLAY_CONCURRENCY = 8
#: The line keys :class:`GoldItem` adds to the hosted ones.
GOLD_FIELDS = ("actions", "reference_answer", "alternatives", "max_tool_calls", "task_id")
_SCHEMA_FIX = "see docs/gold-items.md (rft_sdk.protocol.gold_item_schema())"


class GoldClient(Protocol):
    """What the dry run plays through: ``rft_sdk.surfaces.HostedClient`` (in process or over HTTP).

    ``call_tool`` answers an object with ``ok``, ``status``, ``error_code``, ``body`` and
    ``model_text``; ``grade`` one with ``score`` and ``reasons``. Both raise an ``RFTError`` with
    ``reason`` and ``detail`` when the rollout is discarded (5xx or no answer after retries).
    """

    async def call_tool(self, trace_id: str, name: str, arguments: Any, item: Mapping[str, Any] | None = None
                        ) -> Any: ...

    async def grade(self, trace_id: str, output_text: str, item: Mapping[str, Any] | None = None,
                    grader: str | None = None) -> Any: ...


def _loc(loc: Sequence[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _line_tools(item: Mapping[str, Any]) -> dict[str, dict[str, Any]] | None:
    """``{name: parameters schema}`` the line offers the model, or ``None`` when it offers no list."""
    tools = item.get("tools")
    if not isinstance(tools, list):
        return None
    out: dict[str, dict[str, Any]] = {}
    for tool in tools:
        fn = tool.get("function", tool) if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            params = fn.get("parameters")
            out[fn["name"]] = params if isinstance(params, dict) else {}
    return out


def _arguments(raw: dict[str, Any] | str) -> dict[str, Any] | None:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _check_call(lineno: int, where: str, action: Mapping[str, Any], offered: dict[str, dict[str, Any]] | None,
                served: Mapping[str, Mapping[str, Any]] | None, report: Report) -> None:
    """One gold call's tool name and argument names against the line's and the server's tools."""
    name = action["name"]
    field = f"{where}.name"
    if served is not None and name not in served:
        near = difflib.get_close_matches(name, list(served), n=1)
        report.add("error", lineno, field, f"gold call {name!r} names a tool the server does not serve"
                   f"{f' (did you mean {near[0]!r}?)' if near else ''}; served: {sorted(served)}",
                   "fix the tool name in the gold actions")
        return
    if offered is not None and name not in offered:
        report.add("error", lineno, field, f"gold call {name!r} names a tool the line does not offer the model "
                   f"(offered: {sorted(offered)}): a model could never make this call",
                   "add the tool to the line's tools (rft tools MODULE:ATTR) or fix the gold")
        return
    schema: Mapping[str, Any] = (served or {}).get(name, {}).get("parameters") or (offered or {}).get(name) or {}
    properties = schema.get("properties")
    arguments = _arguments(action["arguments"])
    if arguments is None:
        report.add("error", lineno, f"{where}.arguments", f"gold call {name!r}: arguments are not a JSON object",
                   "write arguments as an object: {\"order_id\": \"#W1\"}")
        return
    if not isinstance(properties, dict):
        return
    for key in arguments:
        if key not in properties:
            near = difflib.get_close_matches(key, list(properties), n=1)
            report.add("error", lineno, f"{where}.arguments.{key}",
                       f"gold call {name!r} passes {key!r}, which the tool's schema does not have"
                       f"{f' (did you mean {near[0]!r}?)' if near else ''}; parameters: {sorted(properties)}",
                       "rename the argument to the tool's parameter name")
    for key in schema.get("required") or []:
        if key not in arguments and not _nullable(properties.get(key)):
            report.add("error", lineno, f"{where}.arguments.{key}",
                       f"gold call {name!r} lacks the required argument {key!r}",
                       "add the argument to the gold call")


def _nullable(schema: Any) -> bool:
    """Whether ``schema`` accepts ``null`` (a strict schema lists optional parameters as required + nullable)."""
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_nullable(s) for s in schema.get("anyOf") or [])


def check_gold(items: Sequence[Any], report: Report,
               served: Mapping[str, Mapping[str, Any]] | None = None) -> list[tuple[int, dict[str, Any]]]:
    """Check every line's gold fields into ``report``; return ``[(1-based line, item)]`` of the lines
    whose gold can be replayed (well-formed ``actions`` and ``reference_answer``, no error found here).

    Args:
        items: decoded lines (``None`` for a line that did not decode: skipped).
        served: ``{tool name: function spec}`` of the server (``GET /tools``), or ``None`` when unknown.
    """
    replayable: list[tuple[int, dict[str, Any]]] = []
    with_gold = 0
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        lineno = index + 1
        if not any(key in item for key in GOLD_FIELDS if key != "task_id"):
            continue
        with_gold += 1
        before = len(report.errors)
        try:
            gold = GoldItem.model_validate(item)
        except ValidationError as exc:
            for err in exc.errors():
                if err["loc"] and err["loc"][0] in ("messages", "tools"):
                    continue  # the hosted checks report these
                report.add("error", lineno, _loc(err["loc"]), f"{err['msg']} (got {err.get('input')!r:.80})",
                           _SCHEMA_FIX)
            continue
        if gold.actions is not None and gold.reference_answer is None:
            report.add("error", lineno, "reference_answer", "the line has gold actions but no reference_answer: "
                       "the reference policy cannot end the rollout and the gold cannot be graded",
                       "add \"reference_answer\": the final answer the gold trajectory gives")
        if gold.reference_answer is not None and gold.actions is None:
            report.add("error", lineno, "actions", "the line has a reference_answer but no actions list",
                       "add \"actions\": [] when the gold makes no tool call")
        check_stated_budget(item, gold.max_tool_calls, lineno, report)  # a warning where the prompt says otherwise
        offered = _line_tools(item)
        plays = [("actions", gold.actions or [])]
        plays += [(f"alternatives[{k}].actions", alt.actions) for k, alt in enumerate(gold.alternatives or [])]
        for prefix, actions in plays:
            for i, action in enumerate(actions):
                _check_call(lineno, f"{prefix}[{i}]", action.model_dump(), offered, served, report)
        if gold.has_gold and len(report.errors) == before:
            replayable.append((lineno, item))
    real = [i for i, item in enumerate(items) if isinstance(item, dict)]
    if real and not with_gold and served is not None:  # checked against a server: the offline tools are in play
        report.add("warning", None, "actions", "no line has gold fields (actions, reference_answer): rft emulate "
                   "--policy reference and rft doctor have nothing to replay", _SCHEMA_FIX)
    elif 0 < with_gold < len(real):
        for index in real:
            if not any(key in items[index] for key in GOLD_FIELDS if key != "task_id"):
                report.add("warning", index + 1, "actions", "the line has no gold (actions, reference_answer) while "
                           "others do: the reference policy discards its rollouts (policy_error)", _SCHEMA_FIX)
    return replayable


async def _play(client: GoldClient, lineno: int, item: dict[str, Any], prefix: str,
                actions: list[dict[str, Any]], answer: str, grader: str | None, report: Report,
                strict: bool) -> None:
    trace_id = f"trace_{uuid.uuid4().hex}"  # a fresh rollout, in the hosted services' format
    failed = False
    try:
        for i, action in enumerate(actions):
            where = f"{prefix}[{i}]"
            name, expect_error = action["name"], bool(action.get("expect_error"))
            reply = await client.call_tool(trace_id, name, action.get("arguments") or {}, item)
            if reply.ok and expect_error:
                report.add("warning", lineno, f"{where}.expect_error", f"gold call {name!r} is marked expect_error "
                           "but the tool answered it 200", "remove expect_error, or fix the call so it fails")
            elif not reply.ok and not expect_error:
                failed = True
                error = reply.body.get("error") if isinstance(reply.body, dict) else None
                detail = error.get("message") if isinstance(error, dict) else reply.model_text
                details = error.get("details") if isinstance(error, dict) else None
                if details:
                    detail = f"{detail}: " + "; ".join(f"{d.get('field')}: {d.get('problem')}" for d in details
                                                      if isinstance(d, dict))
                refused = reply.error_code == TOOL_ERROR
                report.add("error" if strict or not refused else "warning", lineno, where,
                           f"gold call {name!r} answered {reply.status} {reply.error_code or ''}: {str(detail)[:300]}",
                           "mark it \"expect_error\": true if the gold means the tool to refuse it, else fix the "
                           "call" if refused else "fix the gold call (its name or arguments)")
        answer_out = await client.grade(trace_id, answer, item, grader)
    except RFTError as exc:  # RolloutDiscardedError: 5xx or no answer after the retries
        reason, detail = getattr(exc, "reason", "error"), str(getattr(exc, "detail", exc))
        report.add("error", lineno, prefix, f"the gold rollout was discarded ({reason}): {detail[:300]}",
                   "the tool or grader failed with a 5xx: fix it (rft serve logs the traceback)")
        return
    if answer_out.score < FULL_SCORE and not failed:
        reasons = "; ".join(answer_out.reasons)[:300]
        field = "reference_answer" if prefix == "actions" else prefix.rsplit(".", 1)[0]
        report.add("error", lineno, field, f"the gold trajectory scored {answer_out.score:g}, not the full "
                   f"{FULL_SCORE:g}{f' ({reasons})' if reasons else ''}",
                   "fix the gold actions or reference_answer, or the grader")


async def replay_gold(lines: Sequence[tuple[int, dict[str, Any]]], client: GoldClient, report: Report, *,
                      grader: str | None = None, concurrency: int = REPLAY_CONCURRENCY, strict: bool = False) -> int:
    """Play the gold of each of ``lines`` (``[(1-based line, item)]`` from :func:`check_gold`) on fresh
    rollouts; return the number of trajectories played. Findings go into ``report`` (see the module docstring;
    ``strict``: an unmarked 400 ``tool_error`` is an error, not a warning)."""
    gate = asyncio.Semaphore(max(1, concurrency))
    jobs: list[tuple[int, dict[str, Any], str, list[dict[str, Any]], str]] = []
    for lineno, item in lines:
        gold = GoldItem.model_validate(item)
        answer = gold.reference_answer or ""
        jobs.append((lineno, item, "actions", [a.model_dump() for a in gold.actions or []], answer))
        for k, alt in enumerate(gold.alternatives or []):
            jobs.append((lineno, item, f"alternatives[{k}].actions", [a.model_dump() for a in alt.actions],
                         alt.reference_answer if alt.reference_answer is not None else answer))

    async def one(job: tuple[int, dict[str, Any], str, list[dict[str, Any]], str]) -> None:
        async with gate:
            await _play(client, *job[:5], grader, report, strict)

    await asyncio.gather(*(one(job) for job in jobs))
    return len(jobs)
