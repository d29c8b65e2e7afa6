"""Execute one hosted grading request (hosted protocol §3 "Grading").

Flow, under the rollout's lock (so grading waits for in-flight tool calls):

1. Rollout present in the store: build the ``GradingContext`` from it, run the
   grader, keep a ``GradeRecord`` and release the rollout (after
   ``retention_s``).
2. Rollout absent but graded before: an identical retried request (same
   SHA-256 of the canonical request JSON) gets the recorded answer; a
   different request gets 409 (the state it would need is gone).
3. Never seen: the model used no tools; grade with an empty trajectory.
4. No ``trace_id`` in the request (Azure's grader tests, ``rft check grader``):
   grade with an empty trajectory and ``ctx.traced = False``; with a rollout
   database ``ctx.db`` reads the template (what a rollout that made no call
   ends with), read-only; nothing is locked, stored or replayed.

Answers: 200 ``{"score": float}`` + header ``x-rft-grade-details``; errors are
raised as :class:`EndpointError`: 500 ``grader_error`` with a readable message
when the grader raises or returns an invalid score (counted ``grader_errors``),
409 ``already_graded`` (counted ``grade_conflicts``, not a grader error); a
rollout evicted in progress raises ``RolloutEvictedError`` from the store (503
``rollout_evicted``: the grade would see a trajectory with calls missing).
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

from .._db import GradingDatabase, RolloutDatabase, open_grading_view
from .._definitions._grading import Grade, GraderDefinition, GradingContext, coerce_grade, parse_sample
from .._definitions._invoke import invoke_guarded
from .._stores import GradeRecord, RolloutStore
from .._wire._endpoint import EndpointError
from .._wire._json import clean_text, clean_value, json_object, loads_trusted
from ..exceptions import GraderError
from ..protocol import GRADE_DETAILS_MAX_CHARS, GradeRequest
from ._items import item_fingerprint

__all__ = ["GradeOutcome", "encode_details", "end_state_digest", "execute_grade", "fingerprint"]

logger = logging.getLogger("rft_sdk")


def encode_details(details: dict[str, Any]) -> str:
    """Compact ASCII JSON for the details header (lone surrogates come out as ``\\udXXX``
    escapes); reasons are trimmed (and ``"truncated": true`` added) when it would exceed
    ``GRADE_DETAILS_MAX_CHARS`` characters."""
    text = json.dumps(details, separators=(",", ":"), sort_keys=True)
    if len(text) <= GRADE_DETAILS_MAX_CHARS:
        return text
    trimmed = {"subscores": details.get("subscores", {}), "reasons": list(details.get("reasons", [])),
               "truncated": True}
    while True:
        text = json.dumps(trimmed, separators=(",", ":"), sort_keys=True)
        if len(text) <= GRADE_DETAILS_MAX_CHARS or not trimmed["reasons"]:
            break
        trimmed["reasons"].pop()
    if len(text) > GRADE_DETAILS_MAX_CHARS:
        text = json.dumps({"subscores": {}, "reasons": [], "truncated": True}, separators=(",", ":"))
    return text


def fingerprint(body: dict[str, Any], item_json: bytes | None = None) -> str:
    """SHA-256 hex of the canonical JSON (``json.dumps(..., sort_keys=True, separators=(",", ":"))``) of
    ``{"sample", "item", "trace_id"}`` of a grading request's decoded ``body``.

    ``item_json``: the item as the JSON bytes the body carried (``body`` then has
    no ``"item"``): the same digest, with the item's canonical text computed once
    per distinct item (``rft_sdk._server._items.item_fingerprint``) and streamed into the hash."""
    if item_json is None:
        canonical = {"sample": body.get("sample"), "item": body.get("item"), "trace_id": body.get("trace_id")}
        return hashlib.sha256(json.dumps(canonical, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    rest = json.dumps({"sample": body.get("sample"), "trace_id": body.get("trace_id")}, sort_keys=True,
                      separators=(",", ":"))  # '{"sample":...,"trace_id":...}': "item" sorts before both
    return item_fingerprint(item_json, rest)


class GradeOutcome:
    """What one grading request did, filled by :func:`execute_grade` and recorded once, at the end of the
    request, by ``Metrics.record_grade`` (no behaviour: creating one runs no code of the package).

    Attributes:
        score: the score answered; details: ``{"subscores", "reasons"}``; header: ``details`` encoded for
            the ``x-rft-grade-details`` header (:func:`encode_details`).
        events: names of the counters the request adds one to.
        graded: ``(tool calls, first call's start unix s or None, score)`` of a rollout graded now (not a
            replay, not an untraced grade), else ``None``.
        replayed: the answer is the recorded grade of an identical earlier request.
        end_state: the digest of the rollout's end state (:func:`end_state_digest`,
            ``protocol.END_STATE_HEADER``), when asked for and the rollout is graded now; else ``None``.
    """

    score: float = 0.0
    details: dict[str, Any] | None = None
    header: str = ""
    events: tuple[str, ...] = ()
    graded: tuple[int, float | None, float] | None = None
    replayed: bool = False
    end_state: str | None = None


async def execute_grade(definition: GraderDefinition, request: GradeRequest, data: dict[str, Any],
                        store: RolloutStore, outcome: GradeOutcome,
                        retention_s: float, tombstone_s: float = 3600.0,
                        db: RolloutDatabase | None = None, item_json: bytes | None = None, *,
                        end_state: bool = False) -> None:
    """Grade one validated request (decoded ``data``); fill ``outcome`` with the score, its details and
    what the metrics record of it; with ``end_state``, also the end state's digest of a rollout graded
    now (``outcome.end_state``).

    A graded rollout leaves a tombstone for ``tombstone_s`` seconds
    (``RolloutStore.mark_graded``): a later tool call of that ``trace_id`` gets
    409 ``already_graded`` instead of running on a fresh, never-graded rollout.
    With ``db``, the grader gets the rollout's database read-only (``ctx.db``),
    and a successful grade drops it (after ``retention_s``). ``item_json``: the
    request's item as the JSON bytes its body carried (``request.item`` is then
    ``None``); the grader sees the request's item (decoded once), else the
    rollout's. A retried identical request is recognised by :func:`fingerprint` of ``data``.

    Raises:
        EndpointError: 500 ``grader_error`` (grader raised or returned an invalid
            score; state kept for a retry); 409 ``already_graded``.
        StoreError: the store failed (answered 503 by the server).
    """
    trace_id = request.trace_id
    item = request.item if item_json is None else json_object("item", item_json)
    if trace_id is None:
        view = await open_grading_view(db, "", item or {}) if db is not None else None  # the template, read-only
        ctx = GradingContext(sample=parse_sample(request.sample.model_dump()), item=item or {}, trace_id="",
                             grader=definition.name, traced=False, db=view)
        try:
            grade = await _run_grader(definition, ctx)
        finally:
            if view is not None:
                await view.aclose()
        outcome.events = ("grades",)
        outcome.score, outcome.details = float(grade.score), clean_value(grade.details())
        outcome.header = encode_details(outcome.details)
        return
    request_fingerprint = fingerprint(data, item_json)
    async with store.lock(trace_id):
        stored = await store.load(trace_id)
        if stored is None:
            records = await store.load_grades(trace_id)
            previous = records.get(definition.name)
            if previous is not None and previous.fingerprint == request_fingerprint:
                outcome.events, outcome.replayed = ("grades_replayed",), True
                outcome.score, outcome.details = previous.score, previous.details
                outcome.header = encode_details(previous.details)
                return
            if records:
                message = (f"rollout {trace_id} was already graded (by {sorted(records)}) and its state "
                           "released; raise ToolServer(grade_retention_s=...) to grade it again")
                raise EndpointError(409, "already_graded", message, counter="grade_conflicts")
            if await store.graded_digest(trace_id) is not None:  # graded; its record left the store since
                message = (f"rollout {trace_id} was already graded and its state and grade record released; "
                           "grading it again would see an empty trajectory")
                raise EndpointError(409, "already_graded", message, counter="grade_conflicts")
        # read while the rollout is loaded (the store, visited once before the grader runs)
        ctx_item = item if item is not None else (stored.item if stored else {})
        trajectory = tuple(stored.trajectory) if stored else ()
        state = loads_trusted(stored.state_json) if stored else {}
        view = await open_grading_view(db, trace_id, ctx_item) if db is not None else None
        ctx = GradingContext(sample=parse_sample(request.sample.model_dump()), item=ctx_item, trace_id=trace_id,
                             trajectory=trajectory, state=state, grader=definition.name, db=view)
        try:
            grade = await _run_grader(definition, ctx)
            details = grade.details()
            if end_state:  # from the stored state, not ctx.state (a grader may have changed its copy)
                outcome.end_state = await end_state_digest(stored.state_json if stored else "{}", view)
        finally:
            if view is not None:
                await view.aclose()
        details = clean_value(details)  # header, store and log always encode
        score = float(grade.score)
        await store.save_grade(GradeRecord(trace_id, definition.name, request_fingerprint, score, details))
        await store.mark_graded(trace_id, request_fingerprint, tombstone_s)
        if stored is not None:
            await store.release(trace_id, after_s=retention_s)
        if db is not None:
            await db.release(trace_id, after_s=retention_s)  # 503 database_unavailable when it does not answer
        first = getattr(trajectory[0], "started_at", None) if trajectory else None
        outcome.events, outcome.graded = ("grades",), (len(trajectory), first, score)  # observed (#15)
        outcome.score, outcome.details, outcome.header = score, details, encode_details(details)
        logger.info("grader %s scored %s: %.4f subscores=%s reasons=%s", definition.name, trace_id, score,
                    details.get("subscores", {}), details.get("reasons", []))


async def end_state_digest(state_json: str, view: GradingDatabase | None = None) -> str:
    """``"sha256:<hex>"`` of a rollout's end state: the canonical JSON (sorted keys) of its state, then,
    with a rollout database, its rows that differ from the template (sorted; read once per grade and
    shared with the grader's ``ctx.db``). Equal for two rollouts of one item exactly when their tools
    left the same state, whatever order the calls came in.

    Raises:
        EndpointError: 503 ``database_unavailable`` when the rollout database does not answer.
    """
    state = loads_trusted(state_json or "{}")
    digest = hashlib.sha256(json.dumps(state, sort_keys=True, separators=(",", ":"), default=str).encode())
    if view is not None:
        try:
            changes = await view.changes()
        except view.owner.unavailable_errors as exc:
            raise view.owner.unavailable(exc) from exc
        digest.update(json.dumps(sorted((repr(k), repr(v)) for k, v in changes.items())).encode())
    return "sha256:" + digest.hexdigest()


async def _run_grader(definition: GraderDefinition, ctx: GradingContext) -> Grade:
    """Call the grader and check its value.

    Raises:
        EndpointError: 500 ``grader_error`` naming the grader and what went wrong; 503
            ``database_unavailable`` when the rollout database stopped answering (not the grader's fault).
    """
    owner = getattr(ctx.db, "owner", None)  # the rollout database, when the grader reads one
    try:
        value = await invoke_guarded(definition.fn, definition.is_async, definition.guard,
                                     f"grader {definition.name!r}", ctx)
        return coerce_grade(value, definition)
    except EndpointError:
        raise
    except Exception as exc:
        if owner is not None and isinstance(exc, owner.unavailable_errors):  # the database, not the grader
            logger.warning("grader %s: the rollout database does not answer for %s: %s", definition.name,
                           ctx.trace_id, type(exc).__name__)
            raise owner.unavailable(exc) from exc
        if isinstance(exc, GraderError):
            logger.error("grader %s failed for %s: %s", definition.name, ctx.trace_id, exc)
            raise EndpointError(500, "grader_error", clean_text(str(exc)), counter="grader_errors") from exc
        logger.exception("grader %s raised for %s", definition.name, ctx.trace_id)
        message = f"grader {definition.name!r} raised {type(exc).__name__}: {exc}"
        raise EndpointError(500, "grader_error", clean_text(message), counter="grader_errors") from exc
