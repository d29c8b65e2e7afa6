"""Execute one hosted tool call (hosted protocol §3) against a rollout.

Status codes (documented choice for "errors a model can learn from"):

* 200 ``{"type": "function_call_output", "call_id", "id", "output"}``.
* 400 ``tool_error``: the tool raised (``ToolError`` or any other exception) or
  left non-JSON state; 400 ``malformed_arguments``: ``arguments`` is not JSON
  (or holds a lone UTF-16 surrogate); 422 ``invalid_arguments``: schema
  violation, ``details`` lists ``{"field", "problem"}``. These 4xx bodies carry
  no ``output``, so the hosted service shows the serialized body to the model
  and the rollout continues. They are recorded in the trajectory and replayed
  (the same bytes) for a repeated ``call_id``.
* 503 ``retryable``: the tool raised ``RetryableToolError``; raised as an
  :class:`EndpointError`, not recorded, state rolled back, the hosted side retries.

* 413 ``output_too_large``: the answer would exceed the response limit
  (hosted: 1 MB, larger answers reach the model as a 413 error). Recorded as
  what the model saw: status 413, no output (the tool did run: its state
  changes are kept).

Text the tool returns or raises is cleaned of lone surrogates (U+FFFD), so
the answer, the trajectory and the store always encode.

Dialect: a body on ``POST /tools/{name}`` that is the bare arguments object
(``{"query": "Urban Puffer", "top_k": 1}``, how Azure's docs test a tool;
recognised when the body is decoded, ``rft_sdk._wire._hosted_body.is_bare_arguments``:
none of ``call_id``, ``trace_id``, ``arguments`` and no ``"type": "function_call"``)
runs one stateless call: no trace_id, so a fresh empty state, nothing recorded or replayed.

Metrics: nothing here counts; each handler fills a :class:`CallOutcome` that the edge records once
(``Metrics.record_call``), and an error raised names its counters (``EndpointError.counter``,
``also_count``) for the edge's error handler.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any, cast

import pydantic
import pydantic_core

from .._db import CallScope, RolloutDatabase
from .._definitions._invoke import CallTimedOut, NoSlotError, call_limited, invoke_guarded
from .._definitions._rollout import Rollout, ToolCallRecord
from .._definitions._tool import ToolDefinition
from .._stores import RolloutStore, RolloutTooLargeError, StoredRollout
from .._wire._body import problems
from .._wire._endpoint import EndpointError
from .._wire._json import SurrogateError, clean_text, clean_value, encode_json, loads_strict, loads_trusted, orjson
from ..exceptions import RetryableToolError, ToolError
from ..protocol import LOOP_STALL_S, MAX_BODY_BYTES, ToolCallRequest
from ._items import SentItem, check_item

__all__ = ["CallOutcome", "CallRollout", "decode_arguments", "execute_stateless_call", "execute_tool_call",
           "run_tool"]

logger = logging.getLogger("rft_sdk")


class CallOutcome:
    """What one tool call did, filled by :func:`execute_tool_call` and recorded once, at the end of the
    request, by ``Metrics.record_call`` (no behaviour: creating one runs no code of the package).

    Attributes:
        status: HTTP status of the answer; body: its encoded JSON bytes.
        events: names of the counters the call adds one to (``rft_events_total{event=...}``).
        tool_s: seconds the call took (validation + function), ``None`` when no tool ran (a replay, a refusal).
        output_bytes: UTF-8 bytes of the output the model was shown (0 without one).
        replayed: the answer is a replay of a ``call_id`` answered before.
        changed: whether the call changed the rollout's state or wrote rows to its database
            (``protocol.STATE_CHANGED_HEADER``; ``False`` for a refused call, whose writes are rolled
            back); ``None`` for a replayed answer or one recovered from the database after a crash.
    """

    status: int = 0
    body: bytes = b""
    events: tuple[str, ...] = ()
    tool_s: float | None = None
    output_bytes: int = 0
    replayed: bool = False
    changed: bool | None = None


class CallRollout(Rollout):
    """The :class:`~rft_sdk.Rollout` a tool call gets: ``item`` is decoded on first read (from the
    request's item, else the stored rollout's); otherwise the same object."""

    __slots__ = ("_item_from", "_item_value")

    def __init__(self, trace_id: str, item_from: SentItem | StoredRollout, state: dict[str, Any],
                 trajectory: Any = (), call_id: str | None = None, db: Any = None) -> None:
        super().__init__(trace_id, {}, state, trajectory, call_id, db)  # assigns {} through the setter below
        self._item_from: SentItem | StoredRollout | None = item_from
        self._item_value: dict[str, Any] | None = None

    @property
    def item(self) -> dict[str, Any]:
        """The dataset line (JSON object) the rollout was sampled from."""
        if self._item_value is None:
            source = self._item_from
            self._item_value = {} if source is None else (
                source.decode() if isinstance(source, SentItem) else source.item)
        return self._item_value

    @item.setter
    def item(self, value: dict[str, Any]) -> None:
        self._item_value, self._item_from = value, None


def _answer(status: int, payload: dict[str, Any], limit: int,
            echo: dict[str, str | None]) -> tuple[int, dict[str, Any], bytes, str | None]:
    """Encode an answer; an oversize 200 becomes the 413 the model would see.
    Returns ``(status, payload, body, error_message_or_None)``."""
    body = None
    if status == 200 and orjson is not None:
        # a 200 answer holds only strings free of lone surrogates (the output is cleaned, call_id/id were
        # checked in the request) and None: orjson gives the bytes encode_json would, without its checks
        try:
            body = orjson.dumps(payload)
        except TypeError:  # never expected; encode_json below always encodes (U+FFFD for a surrogate)
            body = None
    if body is None:
        body = encode_json(payload)
    if len(body) <= limit:
        return status, payload, body, None
    message = (f"tool output of {len(body)} bytes exceeds the {limit}-byte response limit "
               "(a larger response reaches the model as a 413 error)")
    payload = EndpointError(413, "output_too_large", message).body(echo)
    return 413, payload, encode_json(payload), message


async def execute_stateless_call(definition: ToolDefinition, arguments: dict[str, Any], outcome: CallOutcome,
                                 response_limit: int) -> None:
    """Run one call whose body was the bare ``arguments`` (no trace_id: empty state, nothing stored).

    Fills ``outcome`` (``status``, the encoded JSON ``body``; counted ``stateless_calls``); ``call_id``
    and ``id`` are ``null`` in a 200 answer.

    Raises:
        EndpointError: 503 ``retryable`` (also counted ``tool_retryable_errors`` by the edge).
    """
    rollout = Rollout("", {}, {}, (), None)
    outcome.events = ("stateless_calls",)
    try:
        output = await run_tool(definition, arguments, rollout)
        payload: dict[str, Any] = {"type": "function_call_output", "call_id": None, "id": None, "output": output}
        status = 200
    except EndpointError as exc:
        if exc.status >= 500:
            exc.also_count("tool_retryable_errors")
            raise
        status, payload = exc.status, exc.body()
    outcome.status, _, outcome.body, _ = _answer(status, payload, response_limit, {})


async def execute_tool_call(definition: ToolDefinition, request: ToolCallRequest, store: RolloutStore,
                            outcome: CallOutcome, response_limit: int = MAX_BODY_BYTES,
                            db: RolloutDatabase | None = None, item_json: bytes | None = None) -> None:
    """Run one call under the rollout's lock; fill ``outcome`` with the answer (``status``, encoded JSON
    ``body``) and what the metrics record of it.

    The steps, each in one place: the rollout is loaded under its lock (the store, once), its item
    compared with the request's (``rft_sdk._server._items``), the tool run (``rft_sdk._definitions``),
    the answer encoded and recorded with the rollout (the store again, which releases the lock).

    A ``call_id`` already answered in this rollout is replayed (same status,
    same bytes) without running again. An answer over ``response_limit`` bytes
    is answered and recorded as a 413 ``output_too_large`` without output.
    With ``db``, the tool runs with ``rollout.db`` in a transaction committed
    (with the call_id) when it returns and rolled back when it raises.
    ``item_json``: the request's item as the JSON bytes its body carried
    (``rft_sdk._wire._hosted_body.decode_request``; ``request.item`` is then ``None``).
    The rollout keeps the first item it is sent; the tool's ``rollout.item`` is
    decoded only if read.

    Raises:
        EndpointError: 409 ``item_conflict`` (another item than the rollout's;
            not run, not recorded); 503 ``retryable`` (nothing recorded, state
            rolled back); 503 ``database_limit`` (no database free for a new rollout).
        StoreError: the store failed (answered 503 by the server).
    """
    call_id, trace_id = request.call_id, request.trace_id
    if request.name is not None and request.name != definition.name:
        message = (f"the body names tool {request.name!r} but was sent to tool {definition.name!r} "
                   f"(POST /tools/{definition.name}); a tool call names one tool")
        raise EndpointError(422, "invalid_request", message, counter="bad_requests",
                            details=[{"field": "name", "problem": message}])
    async with store.lock_for_call(trace_id):
        loaded, graded = await store.load_for_call(trace_id)  # one await: the rollout and its grade tombstone
        stored = loaded or StoredRollout(trace_id=trace_id)
        previous = stored.responses.get(call_id)  # read while the rollout is loaded: the store, visited once
        held = stored.held_item_json
        held_value = stored.item if held is None else None
        # 409 item_conflict; ``adopt``: the item a rollout without one takes, recorded with the answer
        sent, adopt = check_item(trace_id, held, held_value, request.item, item_json)
        if previous is not None:
            _check_same_call(stored.trajectory, definition.name, request)
            outcome.events, outcome.replayed = ("replayed_calls",), True
            outcome.status, outcome.body = int(previous[0]), str(previous[1]).encode("utf-8")
            return
        if graded:  # exactly-once ends at the grade, never after
            raise EndpointError(409, "already_graded", f"rollout {trace_id} was already graded: a tool call "
                                "after its grade is refused (not run, not recorded)", counter="late_calls")
        scope = await db.open_call(trace_id, call_id, is_async=definition.is_async) if db is not None else None
        try:
            await _run_call(definition, request, store, outcome, response_limit, stored, scope, sent, adopt)
        finally:
            if scope is not None:
                await scope.close()


async def _run_call(definition: ToolDefinition, request: ToolCallRequest, store: RolloutStore, outcome: CallOutcome,
                    response_limit: int, stored: StoredRollout, scope: CallScope | None,
                    sent: SentItem | None, adopt: bytes | None) -> None:
    """The part of :func:`execute_tool_call` that runs under the rollout's lock (and database scope)."""
    call_id, trace_id = request.call_id, request.trace_id
    trajectory = stored.trajectory
    replayed = scope.replay if scope is not None else None

    started_at, t0 = time.time(), time.perf_counter()
    arguments: dict[str, Any] = {"_raw": request.arguments}
    output: str | None = None
    error: str | None = None
    new_state_json: str | None = None
    events: list[str] = []
    echo: dict[str, str | None] = {"call_id": call_id, "id": request.id}
    try:
        arguments = decode_arguments(request.arguments)
        state = _load_state(stored.state_json)
        rollout = CallRollout(trace_id, sent or stored, state, trajectory, call_id,
                              scope.connection if scope is not None else None)
        db_changed = False
        if replayed is not None:  # committed in the database before a crash lost the store's copy: not re-run
            output, arguments, started_at = replayed[0], replayed[1]["arguments"], replayed[1]["started_at"]
            rollout.state = _load_state(replayed[1]["state_json"])
        else:
            db_changes = _db_changes(scope)
            output = await run_tool(definition, arguments, rollout)
            db_changed = db_changes is not None and _db_changes(scope) != db_changes
        try:
            new_state_json = json.dumps(rollout.state)
        except (TypeError, ValueError) as exc:
            raise EndpointError(400, "tool_error", f"{type(exc).__name__}: {exc}") from exc
        if replayed is None:  # what the call changed: how undeclared write tools are learnt (@tool(writes=))
            outcome.changed = db_changed or new_state_json != (stored.state_json or "{}")
            definition.runtime.observe(outcome.changed)
        if scope is not None and replayed is None:  # recorded in the transaction; committed after the store's save
            await scope.stage(call_id, output, {"arguments": arguments, "started_at": started_at,
                                                "state_json": new_state_json})
        status = 200
        payload: dict[str, Any] = {"type": "function_call_output", "call_id": call_id, "id": request.id,
                                   "output": output}
    except EndpointError as exc:
        if scope is not None:
            await scope.rollback()
        if exc.status >= 500:
            exc.also_count("tool_retryable_errors")
            raise
        if exc.counter:  # e.g. tool_timeouts: answered here, not by the error handler
            events.append(exc.counter)
        output, new_state_json, outcome.changed = None, None, False
        status, payload, error = exc.status, exc.body(echo), exc.message

    status, payload, body, too_large = _answer(status, payload, response_limit, echo)
    if too_large is not None:
        events.append("outputs_too_large")
        output, error, new_state_json, outcome.changed = None, too_large, None, False
    if status != 200 and scope is not None:  # a refused call changes nothing: its writes are rolled back
        await scope.rollback()
    latency_s = time.perf_counter() - t0
    record = ToolCallRecord(call_id=call_id, id=request.id, name=definition.name, arguments=arguments,
                            output=output, error=error, status=status, started_at=started_at,
                            latency_s=latency_s)
    events.append("tool_calls")
    if status == 422:
        events.append("invalid_arguments")
    elif status != 200:
        events.append("tool_errors")
    outcome.events, outcome.status, outcome.body = tuple(events), status, body
    outcome.tool_s, outcome.output_bytes = latency_s, len(output.encode("utf-8")) if output else 0
    # recorded with the rollout, in one visit of the store: the item it adopts, the call (O(1) in the
    # rollout's length: appended in place; a (status, text) tuple of atoms is left alone by the cyclic GC,
    # docs/performance.md), the answer, the state, then the save
    if adopt is not None:
        stored.set_item_json(adopt)
    append = getattr(trajectory, "append", None)  # a list, or a store's append-only view
    if append is not None:
        append(record)
    else:
        stored.trajectory = [*trajectory, record]
    stored.responses[call_id] = cast(Any, (status, body.decode("utf-8")))  # read back as [0], [1]
    if new_state_json is not None:
        stored.state_json = new_state_json
    try:
        await store.save(stored)
    except RolloutTooLargeError as exc:  # nothing written: the model sees why, the rollout goes on
        if scope is not None:
            await scope.rollback()  # nor committed in the rollout's database (issue 39: it was)
        raise EndpointError(413, "rollout_too_large", str(exc), counter="rollouts_too_large") from exc
    except BaseException:
        if scope is not None:
            await scope.rollback()
        raise
    if scope is not None and status == 200 and replayed is None:
        await _commit_after_save(scope, store, stored, record, call_id)


async def _commit_after_save(scope: CallScope, store: RolloutStore, stored: StoredRollout, record: ToolCallRecord,
                             call_id: str) -> None:
    """Commit the call's database transaction once the store holds its answer; when the commit fails, take
    the answer back out of the store (saved again without it) so that neither side keeps the call.

    Raises:
        EndpointError: the commit's 400 ``tool_error`` / 503 ``database_unavailable``.
    """
    try:
        await scope.commit()
    except EndpointError:
        trajectory = stored.trajectory
        if isinstance(trajectory, list) and trajectory and trajectory[-1] is record:
            trajectory.pop()
        else:
            stored.trajectory = [r for r in trajectory if r is not record]
        stored.responses.pop(call_id, None)
        await store.save(stored)
        raise


def _recorded_arguments(raw: Any) -> dict[str, Any]:
    """The arguments as a call with ``raw`` would record them (``{"_raw": raw}`` when not a JSON object)."""
    try:
        return decode_arguments(raw)
    except EndpointError:
        return {"_raw": raw}


def _check_same_call(trajectory: Any, name: str, request: ToolCallRequest) -> None:
    """Refuse a ``call_id`` answered before for another tool or other arguments (the hosted side resends
    a call_id only as a retry of the same call; replaying the first answer would hide the second call).

    Raises:
        EndpointError: 409 ``call_id_conflict`` naming what differs (not run, not recorded).
    """
    for record in reversed(trajectory):  # only on a replay, which is rare: O(calls) decodes are fine
        if record.call_id != request.call_id:
            continue
        if record.name != name:
            problem = f"it was used for tool {record.name!r}, now for {name!r}"
        elif record.arguments != _recorded_arguments(request.arguments):
            problem = "it was used with other arguments"
        else:
            return
        raise EndpointError(409, "call_id_conflict", f"call_id {request.call_id!r} already names another call in "
                            f"this rollout: {problem}; a call_id names one call (a retry resends it unchanged)",
                            counter="call_id_conflicts")


def _db_changes(scope: CallScope | None) -> int | None:
    """Rows the rollout's connection changed so far (SQLite's ``total_changes``); ``None`` when the
    driver does not count them (then only the rollout state tells a write)."""
    count = getattr(scope.connection, "total_changes", None) if scope is not None else None
    return count if isinstance(count, int) else None


def _load_state(state_json: str) -> dict[str, Any]:
    """The rollout state decoded from the store's JSON text (see ``loads_trusted``)."""
    state: dict[str, Any] = loads_trusted(state_json)
    return state


def decode_arguments(raw: Any) -> dict[str, Any]:
    """Decode the hosted ``arguments`` (a JSON string, or an already-decoded object).

    Missing, ``null`` or a blank string count as ``{}``.

    Raises:
        EndpointError: 400 ``malformed_arguments`` (not strict JSON, or a lone
            UTF-16 surrogate inside); 422 ``invalid_arguments`` (JSON, but not
            an object). Both model-visible.
    """
    value = raw
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        try:
            value = loads_strict(raw)  # the one decoding rule (rft_sdk._wire._json)
        except SurrogateError as exc:
            raise EndpointError(400, "malformed_arguments", f"arguments hold a {exc}") from None
        except ValueError as exc:
            raise EndpointError(400, "malformed_arguments", f"arguments are not valid JSON: {exc}") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        message = f"arguments must be a JSON object, got {type(value).__name__}"
        raise EndpointError(422, "invalid_arguments", message, details=[{"field": "arguments", "problem": message}])
    return value


def _to_output(value: Any) -> str:
    """The output string shown to the model: a str as is, else compact JSON (pydantic), no lone surrogates."""
    if isinstance(value, str):
        return clean_text(value)
    if value is None:
        return ""
    try:
        return pydantic_core.to_json(value).decode()
    except pydantic_core.PydanticSerializationError:  # lone surrogates inside: replace, then retry once
        return pydantic_core.to_json(clean_value(value)).decode()


async def run_tool(definition: ToolDefinition, arguments: dict[str, Any], rollout: Rollout) -> str:
    """Validate ``arguments`` against the tool's model, call the tool and return its output string.

    ``null`` for a parameter with a default means the default. The rollout's
    ``state`` may be changed by the tool (the caller persists it on success).

    Raises:
        EndpointError: 422 ``invalid_arguments`` (schema violation, ``details``
            per field); 400 ``tool_error`` (``ToolError`` or any other
            exception, logged with its traceback); 400 ``tool_timeout`` (ran
            past ``timeout_s``); 503 ``retryable`` (``RetryableToolError``);
            503 ``tool_busy`` (no slot within ``queue_timeout_s``, nothing ran).
    """
    args = {k: v for k, v in arguments.items() if not (v is None and k in definition.defaults)}
    try:
        validated = definition.args_model.model_validate(args)
    except pydantic.ValidationError as exc:
        details = problems(exc)
        message = "invalid arguments: " + "; ".join(f"{d['field']}: {d['problem']}" for d in details)
        raise EndpointError(422, "invalid_arguments", clean_text(message), details=clean_value(details)) from None
    kwargs = {name: getattr(validated, name) for name in type(validated).model_fields}
    if definition.rollout_param:
        kwargs[definition.rollout_param] = rollout
    try:
        if definition.on_loop and definition.timeout_s is None and definition.max_concurrency is None:
            if definition.is_async:  # timed on the loop; moved to a thread once it holds the loop (loop guard)
                return _to_output(await invoke_guarded(definition.fn, True, definition.runtime.guard,
                                                       f"tool {definition.name!r}", movable=rollout._db is None,
                                                       await_free_in_thread=False, **kwargs))
            return _to_output(_on_loop(definition, kwargs))  # @tool(blocking=False): on the loop, no thread hop
        return _to_output(await call_limited(definition.fn, kwargs, is_async=definition.is_async,
                                             in_thread=not definition.on_loop, limiter=definition.limiter,
                                             timeout_s=definition.timeout_s,
                                             queue_timeout_s=definition.queue_timeout_s))
    except CallTimedOut:
        message = f"tool {definition.name!r} did not finish within {definition.timeout_s:g} s (timeout_s)"
        logger.warning("%s (call_id=%s)", message, rollout.call_id)
        raise EndpointError(400, "tool_timeout", message, counter="tool_timeouts") from None
    except NoSlotError as exc:  # nothing ran: retryable, never shown to the model
        message = f"tool {definition.name!r} is busy: {exc}; retry"
        logger.warning("%s (call_id=%s)", message, rollout.call_id)
        raise EndpointError(503, "tool_busy", message, counter="tool_queue_timeouts") from None
    except RetryableToolError as exc:
        logger.warning("tool %s raised RetryableToolError (call_id=%s): %s", definition.name, rollout.call_id, exc)
        raise EndpointError(503, "retryable", clean_text(str(exc)) or "temporary failure, retry") from exc
    except ToolError as exc:
        raise EndpointError(400, "tool_error", clean_text(str(exc))) from exc
    except Exception as exc:  # model-visible; never crash the worker
        logger.exception("tool %s raised (call_id=%s)", definition.name, rollout.call_id)
        raise EndpointError(400, "tool_error", clean_text(f"{type(exc).__name__}: {exc}")) from exc


def _on_loop(definition: ToolDefinition, kwargs: dict[str, Any]) -> Any:
    """Call a ``blocking=False`` tool on the event loop; one that held the loop past ``LOOP_STALL_S``
    (every other request waited) runs in a worker thread from its next call on, and says so once."""
    t0 = time.perf_counter()
    try:
        return definition.fn(**kwargs)
    finally:
        held_s = time.perf_counter() - t0
        if held_s > LOOP_STALL_S and not definition.runtime.moved_to_thread:
            definition.runtime.moved_to_thread = True
            logger.warning("tool %s is declared blocking=False but held the event loop for %.3f s (every other "
                           "request of the process waited): its later calls run in a worker thread. Drop "
                           "blocking=False, or make it async and await its I/O", definition.name, held_s)
