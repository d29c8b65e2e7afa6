"""Execute one hosted tool call (hosted protocol §3) against a rollout.

Status codes (documented choice for "errors a model can learn from"):

* 200 ``{"type": "function_call_output", "call_id", "id", "output"}``.
* 400 ``tool_error``: the tool raised (``ToolError`` or any other exception) or
  left non-JSON state; 400 ``malformed_arguments``: ``arguments`` is not JSON;
  422 ``invalid_arguments``: schema violation, ``details`` lists
  ``{"field", "problem"}``. These 4xx bodies carry no ``output``, so the hosted
  service shows the serialized body to the model and the rollout continues.
  They are recorded in the trajectory and replayed for a repeated ``call_id``.
* 503 ``retryable``: the tool raised ``RetryableToolError``; not recorded, state
  rolled back, the hosted side retries.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import anyio
import pydantic
import pydantic_core

from ._body import loads_strict
from ._metrics import Metrics
from ._rollout import Rollout, ToolCallRecord
from ._store import RolloutStore, StoredRollout
from ._tool import ToolDefinition
from .exceptions import RetryableToolError, ToolError

__all__ = ["decode_arguments", "error_body", "execute_tool_call", "request_problems"]

logger = logging.getLogger("rft_sdk")


def error_body(code: str, message: str, *, details: list[dict[str, Any]] | None = None,
               call_id: Any = None, id: Any = None) -> dict[str, Any]:
    """The JSON error body shape used by every non-2xx answer (no ``output`` key)."""
    body: dict[str, Any] = {"type": "error", "error": {"code": code, "message": message}}
    if details:
        body["error"]["details"] = details
    if call_id is not None:
        body["call_id"] = call_id
    if id is not None:
        body["id"] = id
    return body


def _to_output(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return pydantic_core.to_json(value).decode()


async def execute_tool_call(definition: ToolDefinition, body: dict[str, Any],
                            store: RolloutStore, metrics: Metrics) -> tuple[int, dict[str, Any]]:
    """Run one call under the rollout's lock; return ``(status, json_body)``.

    ``body`` is the decoded hosted request (``type, id, call_id, name,
    arguments, trace_id, item``; unknown fields ignored).
    """
    call_id, trace_id, item_id = body.get("call_id"), body.get("trace_id"), body.get("id")
    problems = request_problems(body)
    if problems:
        metrics.incr("bad_requests")
        return 422, error_body("invalid_request", "invalid tool call request", details=problems,
                               call_id=call_id if isinstance(call_id, str) else None,
                               id=item_id if isinstance(item_id, str) else None)
    item = body.get("item")
    if item is None:
        item = {}

    async with store.lock(trace_id):
        stored = await store.load(trace_id) or StoredRollout(trace_id=trace_id, item=item)
        if not stored.item and item:  # first call carried no item; later ones do
            stored.item = item
        previous = stored.responses.get(call_id)
        if previous is not None:
            metrics.incr("replayed_calls")
            return previous[0], json.loads(previous[1])

        started_at, t0 = time.time(), time.perf_counter()
        raw_args = body.get("arguments")
        state = json.loads(stored.state_json)
        new_state_json: str | None = None
        output: str | None = None
        error: str | None = None
        arguments, status, payload = decode_arguments(raw_args, call_id, item_id)
        if status == 0:  # decoded to a JSON object: validate and run the tool
            status, payload, output, error, new_state_json = await _run(
                definition, arguments, Rollout(trace_id, stored.item, state, stored.trajectory, call_id),
                call_id, item_id)
        else:
            error = payload["error"]["message"]
        if status == 503:
            metrics.incr("tool_retryable_errors")
            return status, payload

        latency_s = time.perf_counter() - t0
        record = ToolCallRecord(call_id=call_id, id=item_id, name=definition.name, arguments=arguments,
                                output=output, error=error, status=status, started_at=started_at,
                                latency_s=latency_s)
        metrics.incr("tool_calls")
        if status == 422:
            metrics.incr("invalid_arguments")
        elif status != 200:
            metrics.incr("tool_errors")
        metrics.tool_call(definition.name, error=status != 200, latency_s=latency_s)
        stored.trajectory = [*stored.trajectory, record]
        stored.responses = {**stored.responses, call_id: [status, json.dumps(payload)]}
        if new_state_json is not None:
            stored.state_json = new_state_json
        await store.save(stored)
        return status, payload


def request_problems(body: dict[str, Any]) -> list[dict[str, str]]:
    """``[{"field", "problem"}]`` for every hosted tool-call field with a wrong JSON type.

    ``call_id`` and ``trace_id`` are required non-empty strings; ``id``,
    ``type`` and ``name`` are optional strings; ``item`` an optional object.
    ``arguments`` is checked later (its problems are model-visible).
    """
    problems = [{"field": f, "problem": "required non-empty string"}
                for f in ("call_id", "trace_id") if not isinstance(body.get(f), str) or not body[f]]
    problems += [{"field": f, "problem": "must be a string"}
                 for f in ("id", "type", "name") if body.get(f) is not None and not isinstance(body[f], str)]
    if body.get("item") is not None and not isinstance(body["item"], dict):
        problems.append({"field": "item", "problem": "must be a JSON object"})
    return problems


def decode_arguments(raw: Any, call_id: str, item_id: str | None) -> tuple[dict[str, Any], int, dict[str, Any]]:
    """Decode the hosted ``arguments`` (a JSON string, or an already-decoded object).

    Returns ``(arguments, status, error_payload)``: status ``0`` and an empty
    payload when ``arguments`` is a JSON object (missing, ``null`` or a blank
    string count as ``{}``); else 400 ``malformed_arguments`` (not JSON) or
    422 ``invalid_arguments`` (JSON, but not an object), with ``arguments``
    ``{"_raw": <what was sent>}`` for the trajectory.
    """
    value = raw
    if isinstance(raw, str):
        if not raw.strip():
            return {}, 0, {}
        try:
            value = loads_strict(raw)
        except ValueError as exc:
            message = f"arguments are not valid JSON: {exc}"
            return {"_raw": raw}, 400, error_body("malformed_arguments", message, call_id=call_id, id=item_id)
    if value is None:
        return {}, 0, {}
    if not isinstance(value, dict):
        message = f"arguments must be a JSON object, got {type(value).__name__}"
        return {"_raw": raw}, 422, error_body("invalid_arguments", message, call_id=call_id, id=item_id,
                                              details=[{"field": "arguments", "problem": message}])
    return value, 0, {}


async def _run(definition: ToolDefinition, raw_args: dict[str, Any], rollout: Rollout,
               call_id: str, item_id: str | None) -> tuple[int, dict[str, Any], str | None, str | None, str | None]:
    """Validate and call; returns ``(status, payload, output, error, new_state_json)``."""
    args = {k: v for k, v in raw_args.items() if not (v is None and k in definition.defaults)}
    try:
        validated = definition.args_model.model_validate(args)
    except pydantic.ValidationError as exc:
        details = [
            {"field": ".".join(str(p) for p in e["loc"]) or "arguments", "problem": e["msg"]}
            for e in exc.errors(include_url=False)
        ]
        message = "invalid arguments: " + "; ".join(f"{d['field']}: {d['problem']}" for d in details)
        return 422, error_body("invalid_arguments", message, details=details,
                               call_id=call_id, id=item_id), None, message, None
    kwargs = {name: getattr(validated, name) for name in type(validated).model_fields}
    if definition.rollout_param:
        kwargs[definition.rollout_param] = rollout
    try:
        if definition.is_async:
            result = await definition.fn(**kwargs)
        else:
            result = await anyio.to_thread.run_sync(lambda: definition.fn(**kwargs))
        output = _to_output(result)
        new_state_json = json.dumps(rollout.state)
    except RetryableToolError as exc:
        logger.warning("tool %s raised RetryableToolError (call_id=%s): %s", definition.name, call_id, exc)
        return 503, error_body("retryable", str(exc) or "temporary failure, retry",
                               call_id=call_id, id=item_id), None, None, None
    except ToolError as exc:
        message = str(exc)
        return 400, error_body("tool_error", message, call_id=call_id, id=item_id), None, message, None
    except Exception as exc:  # model-visible; never crash the worker
        logger.exception("tool %s raised (call_id=%s)", definition.name, call_id)
        message = f"{type(exc).__name__}: {exc}"
        return 400, error_body("tool_error", message, call_id=call_id, id=item_id), None, message, None
    payload = {"type": "function_call_output", "call_id": call_id, "id": item_id, "output": output}
    return 200, payload, output, None, new_state_json
