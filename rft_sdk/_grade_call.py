"""Execute one hosted grading request (hosted protocol §3 "Grading").

Flow, under the rollout's lock (so grading waits for in-flight tool calls):

1. Rollout present in the store: build the ``GradingContext`` from it, run the
   grader, keep a ``GradeRecord`` and release the rollout (after
   ``retention_s``).
2. Rollout absent but graded before: an identical retried request (same
   SHA-256 of the canonical request JSON) gets the recorded answer; a
   different request gets 409 (the state it would need is gone).
3. Never seen: the model used no tools; grade with an empty trajectory.

Answers: 200 ``{"score": float}`` + header ``x-rft-grade-details``; 500
``grader_error`` with a readable body when the grader raises or returns an
invalid score.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

import anyio

from ._calls import error_body
from ._grading import GraderDefinition, GradingContext, coerce_grade, parse_sample
from ._metrics import Metrics
from ._store import GradeRecord, RolloutStore
from .exceptions import GraderError

__all__ = ["DETAILS_HEADER", "encode_details", "execute_grade"]

logger = logging.getLogger("rft_sdk")
DETAILS_HEADER = "x-rft-grade-details"
_MAX_HEADER_CHARS = 8_000  # keep well under common 16 KiB response-header limits (h11)


def encode_details(details: dict[str, Any]) -> str:
    """Compact ASCII JSON for the details header; reasons are trimmed (and
    ``"truncated": true`` added) when it would exceed 8,000 characters."""
    text = json.dumps(details, separators=(",", ":"), sort_keys=True)
    if len(text) <= _MAX_HEADER_CHARS:
        return text
    trimmed = {"subscores": details.get("subscores", {}), "reasons": list(details.get("reasons", [])),
               "truncated": True}
    while True:
        text = json.dumps(trimmed, separators=(",", ":"), sort_keys=True)
        if len(text) <= _MAX_HEADER_CHARS or not trimmed["reasons"]:
            break
        trimmed["reasons"].pop()
    if len(text) > _MAX_HEADER_CHARS:
        text = json.dumps({"subscores": {}, "reasons": [], "truncated": True}, separators=(",", ":"))
    return text


async def execute_grade(definition: GraderDefinition, body: dict[str, Any], store: RolloutStore,
                        metrics: Metrics, retention_s: float) -> tuple[int, dict[str, Any], dict[str, Any] | None]:
    """Grade one request; return ``(status, json_body, details_or_None)``.

    ``body`` is the decoded hosted grading request ``{"sample": {...}, "item":
    {...} | null, "trace_id": str}`` (unknown fields ignored). A missing or
    non-object ``sample``, a non-string ``sample.output_text``, a non-object
    ``item`` or a missing ``trace_id`` answers 422 ``invalid_request`` (with
    ``details``) before anything is read or run.
    """
    trace_id, sample, item = body.get("trace_id"), body.get("sample"), body.get("item")
    problems = []
    if not isinstance(trace_id, str) or not trace_id:
        problems.append({"field": "trace_id", "problem": "required non-empty string"})
    if not isinstance(sample, dict):
        problems.append({"field": "sample", "problem": "required JSON object"})
    elif sample.get("output_text") is not None and not isinstance(sample["output_text"], str):
        problems.append({"field": "sample.output_text", "problem": "must be a string"})
    if item is not None and not isinstance(item, dict):
        problems.append({"field": "item", "problem": "must be a JSON object"})
    if problems:
        metrics.incr("bad_requests")
        return 422, error_body("invalid_request", "invalid grading request", details=problems), None

    fingerprint = hashlib.sha256(
        json.dumps({"sample": sample, "item": item, "trace_id": trace_id}, sort_keys=True,
                   separators=(",", ":")).encode()).hexdigest()
    async with store.lock(trace_id):
        stored = await store.load(trace_id)
        if stored is None:
            records = await store.load_grades(trace_id)
            previous = records.get(definition.name)
            if previous is not None and previous.fingerprint == fingerprint:
                metrics.incr("grades_replayed")
                return 200, {"score": previous.score}, previous.details
            if records:
                metrics.incr("grader_errors")
                message = (f"rollout {trace_id} was already graded (by {sorted(records)}) and its state "
                           "released; raise ToolServer(grade_retention_s=...) to grade it again")
                return 409, error_body("already_graded", message), None
        ctx = GradingContext(
            sample=parse_sample(sample),
            item=item if item is not None else (stored.item if stored else {}),
            trace_id=trace_id,
            trajectory=tuple(stored.trajectory) if stored else (),
            state=json.loads(stored.state_json) if stored else {},
            grader=definition.name,
        )
        try:
            if definition.is_async:
                value = await definition.fn(ctx)
            else:
                value = await anyio.to_thread.run_sync(definition.fn, ctx)
            grade = coerce_grade(value, definition)
        except GraderError as exc:
            metrics.incr("grader_errors")
            logger.error("grader %s failed for %s: %s", definition.name, trace_id, exc)
            return 500, error_body("grader_error", str(exc)), None
        except Exception as exc:
            metrics.incr("grader_errors")
            logger.exception("grader %s raised for %s", definition.name, trace_id)
            return 500, error_body("grader_error",
                                   f"grader {definition.name!r} raised {type(exc).__name__}: {exc}"), None
        details = grade.details()
        score = float(grade.score)
        await store.save_grade(GradeRecord(trace_id, definition.name, fingerprint, score, details))
        if stored is not None:
            await store.release(trace_id, after_s=retention_s)
        metrics.incr("grades")
        metrics.graded(definition.name, score=score, trajectory=ctx.trajectory)  # observe (#15)
        logger.info("grader %s scored %s: %.4f subscores=%s reasons=%s", definition.name, trace_id, score,
                    details.get("subscores", {}), details.get("reasons", []))
        return 200, {"score": score}, details
