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
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

try:
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]

import anyio
import anyio.to_thread
import pydantic
import pydantic_core

from .._db import RolloutDatabase
from .._db._call import SHARED_HOP_S, run_call
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
T = TypeVar("T")


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
        call = _ToolCall(definition, request, store, outcome, response_limit, stored, sent, adopt,
                         hop_wait_s=db.shared_hop_wait_s if db is not None else None)
        if db is None:
            await call.run(None, None)
            await call.finish(None)
        else:  # the rollout's database: entered once, with the call's own steps (rft_sdk._db._call)
            await run_call(db, trace_id, call_id, call, is_async=definition.is_async)


class _ToolCall:
    """One tool call under its rollout's lock, in the steps a rollout database runs it in
    (``rft_sdk._db.CallWork``): :meth:`run_sync` or :meth:`run` (the tool), :meth:`finish` (the answer
    encoded and recorded with the rollout), :meth:`withdraw` (the answer taken back out when the
    database's commit failed). Without a database: ``run(None, None)``, then ``finish(None)``."""

    def __init__(self, definition: ToolDefinition, request: ToolCallRequest, store: RolloutStore,
                 outcome: CallOutcome, response_limit: int, stored: StoredRollout, sent: SentItem | None,
                 adopt: bytes | None, *, hop_wait_s: float | None = None) -> None:
        self.definition, self.request, self.store, self.outcome = definition, request, store, outcome
        self.response_limit, self.stored, self.sent, self.adopt = response_limit, stored, sent, adopt
        self.hop_wait_s = hop_wait_s  # the database's RolloutDatabase.shared_hop_wait_s
        self.started_at, self.t0 = time.time(), time.perf_counter()
        self.arguments: dict[str, Any] = {"_raw": request.arguments}
        self.output: str | None = None
        self.new_state_json: str | None = None
        self.error: EndpointError | None = None  # a model-visible error answer (4xx)
        self.replayed = False
        self.record: ToolCallRecord | None = None

    @property
    def in_thread(self) -> bool:
        """A sync tool that runs in a worker thread without a timeout and has not held the database's shared
        hop past ``SHARED_HOP_S``: it may run in the thread that opens its database."""
        definition = self.definition
        return not definition.on_loop and definition.timeout_s is None and not definition.runtime.own_threads

    def _rollout(self, connection: Any) -> CallRollout:
        self.arguments = decode_arguments(self.request.arguments)
        state = _load_state(self.stored.state_json)
        return CallRollout(self.request.trace_id, self.sent or self.stored, state, self.stored.trajectory,
                           self.request.call_id, connection)

    def _replay(self, rollout: CallRollout, replay: tuple[str, dict[str, Any]]) -> None:
        """A call committed in the database before a crash lost the store's copy: answered, not re-run."""
        self.replayed = True
        self.output, self.arguments, self.started_at = replay[0], replay[1]["arguments"], replay[1]["started_at"]
        rollout.state = _load_state(replay[1]["state_json"])
        self.new_state_json = self._state_json(rollout)

    def _ran(self, rollout: CallRollout, output: str, db_changed: bool) -> tuple[str, dict[str, Any]] | None:
        """After the tool returned: the new state, what the call changed; what to stage in the database."""
        self.output = output
        self.new_state_json = self._state_json(rollout)
        # what the call changed: how undeclared write tools are learnt (@tool(writes=))
        self.outcome.changed = db_changed or self.new_state_json != (self.stored.state_json or "{}")
        self.definition.runtime.observe(self.outcome.changed)
        return output, {"arguments": self.arguments, "started_at": self.started_at, "state_json": self.new_state_json}

    @staticmethod
    def _state_json(rollout: CallRollout) -> str:
        try:
            return json.dumps(rollout.state, allow_nan=False)  # NaN and Infinity are not JSON (RFC 8259)
        except (TypeError, ValueError) as exc:
            raise EndpointError(400, "tool_error", f"{type(exc).__name__}: {exc}") from exc

    def _refused(self, exc: EndpointError) -> None:
        """A model-visible error answer (kept for :meth:`finish`); a retryable 503 is raised instead."""
        if exc.status >= 500:
            exc.also_count("tool_retryable_errors")
            raise exc
        self.error = exc

    def in_worker(self, fn: Callable[[], T], limiter: anyio.CapacityLimiter | None) -> Awaitable[T]:
        """``fn`` in a worker thread of ``limiter`` holding a slot of the tool's own (``rft_sdk._db.CallWork``)."""
        return _in_tool_thread(self.definition, fn, limiter)

    def run_sync(self, connection: Any, replay: tuple[str, dict[str, Any]] | None) -> tuple[str, Any] | None:
        """The tool, in the worker thread that opened ``connection`` (``rft_sdk._db.CallWork``)."""
        try:
            rollout = self._rollout(connection)
            if replay is not None:
                self._replay(rollout, replay)
                return None
            before, t0, c0, p0 = _changes(connection), time.perf_counter(), time.process_time(), _preempted()
            try:
                output = run_tool_sync(self.definition, self.arguments, rollout)
            finally:
                wall = time.perf_counter() - t0
                # off the CPU with the whole process idle (not on the GIL other threads held) and never
                # preempted (not a loaded machine's scheduler): waiting outside the process
                waited = None if _preempted() != p0 else wall - (time.process_time() - c0)
                _held_shared_hop(self.definition, wall, waited, self.hop_wait_s)
            return self._ran(rollout, output, before is not None and _changes(connection) != before)
        except EndpointError as exc:
            self._refused(exc)
            return None

    async def run(self, connection: Any, replay: tuple[str, dict[str, Any]] | None) -> tuple[str, Any] | None:
        """The tool, on the event loop (which hops to a thread where the tool runs in one)."""
        try:
            rollout = self._rollout(connection)
            if replay is not None:
                self._replay(rollout, replay)
                return None
            before = _changes(connection)
            output = await run_tool(self.definition, self.arguments, rollout)
            return self._ran(rollout, output, before is not None and _changes(connection) != before)
        except EndpointError as exc:
            self._refused(exc)
            return None

    async def finish(self, error: EndpointError | None) -> bool:
        """Encode the answer (``error``: the database refused the call's stage) and record it with the
        rollout in one save; whether the database may commit (a 200 answer of a call that ran).

        Raises:
            EndpointError: a retryable 503 (not recorded); 413 ``rollout_too_large`` (nothing written).
            StoreError: the store failed.
        """
        if error is not None:
            self._refused(error)
        request, outcome, stored = self.request, self.outcome, self.stored
        call_id = request.call_id
        echo: dict[str, str | None] = {"call_id": call_id, "id": request.id}
        events: list[str] = []
        output, new_state_json, refusal = self.output, self.new_state_json, self.error
        payload: dict[str, Any]
        if refusal is not None:
            if refusal.counter:  # e.g. tool_timeouts: answered here, not by the error handler
                events.append(refusal.counter)
            output, new_state_json, outcome.changed = None, None, False
            status, payload, message = refusal.status, refusal.body(echo), refusal.message
        else:
            status, message = 200, None
            payload = {"type": "function_call_output", "call_id": call_id, "id": request.id, "output": output}
        status, payload, body, too_large = _answer(status, payload, self.response_limit, echo)
        if too_large is not None:
            events.append("outputs_too_large")
            output, message, new_state_json, outcome.changed = None, too_large, None, False
        latency_s = time.perf_counter() - self.t0
        record = ToolCallRecord(call_id=call_id, id=request.id, name=self.definition.name, arguments=self.arguments,
                                output=output, error=message, status=status, started_at=self.started_at,
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
        if self.adopt is not None:
            stored.set_item_json(self.adopt)
        trajectory = stored.trajectory
        append = getattr(trajectory, "append", None)  # a list, or a store's append-only view
        if append is not None:
            append(record)
        else:
            stored.trajectory = [*trajectory, record]
        stored.responses[call_id] = cast(Any, (status, body.decode("utf-8")))  # read back as [0], [1]
        if new_state_json is not None:
            stored.state_json = new_state_json
        self.record = record
        try:
            await self.store.save(stored)
        except RolloutTooLargeError as exc:  # nothing written: the model sees why, the rollout goes on
            raise EndpointError(413, "rollout_too_large", str(exc), counter="rollouts_too_large") from exc
        return status == 200 and not self.replayed

    async def withdraw(self) -> None:
        """The database's commit failed after :meth:`finish` saved the answer: take it back out of the store
        (saved again without it) so that neither side keeps the call."""
        stored, record = self.stored, self.record
        trajectory = stored.trajectory
        if isinstance(trajectory, list) and trajectory and trajectory[-1] is record:
            trajectory.pop()
        else:
            stored.trajectory = [r for r in trajectory if r is not record]
        stored.responses.pop(self.request.call_id, None)
        await self.store.save(stored)


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


def _changes(connection: Any) -> int | None:
    """Rows the rollout's connection changed so far (SQLite's ``total_changes``); ``None`` without a
    connection or when the driver does not count them (then only the rollout state tells a write)."""
    count = getattr(connection, "total_changes", None)
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
    """The output string shown to the model: a str as is, else compact JSON (pydantic), no lone surrogates.

    Raises:
        ValueError: the value holds a NaN or an infinity, which JSON cannot carry (RFC 8259): the call answers
            400 ``tool_error`` naming it, as a rollout state holding one does.
    """
    if isinstance(value, str):
        return clean_text(value)
    if value is None:
        return ""
    try:
        data = pydantic_core.to_json(value)
    except pydantic_core.PydanticSerializationError:  # lone surrogates inside: replace, then retry once
        value = clean_value(value)
        data = pydantic_core.to_json(value)
    if (b"NaN" in data or b"Infinity" in data) and data != pydantic_core.to_json(value, inf_nan_mode="null"):
        raise ValueError("the tool's output holds NaN or Infinity, which JSON cannot carry (RFC 8259): return a "
                         "finite number, None or a string")
    return data.decode()


def _tool_kwargs(definition: ToolDefinition, arguments: dict[str, Any], rollout: Rollout) -> dict[str, Any]:
    """The tool's keyword arguments, validated against its model (``null`` for a parameter with a default
    means the default). Raises: EndpointError 422 ``invalid_arguments`` (``details`` per field)."""
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
    return kwargs


def _tool_failed(definition: ToolDefinition, call_id: str | None, exc: Exception) -> EndpointError:
    """The answer to what a tool call raised (``run_tool``'s Raises), logged; its cause set as ``raise ... from``
    would."""
    cause: BaseException | None = exc
    if isinstance(exc, CallTimedOut):
        message = f"tool {definition.name!r} did not finish within {definition.timeout_s:g} s (timeout_s)"
        logger.warning("%s (call_id=%s)", message, call_id)
        error, cause = EndpointError(400, "tool_timeout", message, counter="tool_timeouts"), None
    elif isinstance(exc, NoSlotError):  # nothing ran: retryable, never shown to the model
        message = f"tool {definition.name!r} is busy: {exc}; retry"
        logger.warning("%s (call_id=%s)", message, call_id)
        error, cause = EndpointError(503, "tool_busy", message, counter="tool_queue_timeouts"), None
    elif isinstance(exc, RetryableToolError):
        logger.warning("tool %s raised RetryableToolError (call_id=%s): %s", definition.name, call_id, exc)
        error = EndpointError(503, "retryable", clean_text(str(exc)) or "temporary failure, retry")
    elif isinstance(exc, ToolError):
        error = EndpointError(400, "tool_error", clean_text(str(exc)))
    else:  # model-visible; never crash the worker
        logger.error("tool %s raised (call_id=%s)", definition.name, call_id, exc_info=exc)
        error = EndpointError(400, "tool_error", clean_text(f"{type(exc).__name__}: {exc}"))
    error.__cause__, error.__suppress_context__ = cause, True
    return error


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
    kwargs = _tool_kwargs(definition, arguments, rollout)
    try:
        if definition.on_loop and definition.timeout_s is None and definition.max_concurrency is None:
            if definition.is_async:  # timed on the loop, named in a warning once it holds the loop (loop guard)
                return _to_output(await invoke_guarded(definition.fn, True, definition.runtime.guard,
                                                       f"tool {definition.name!r}", await_free_in_thread=False,
                                                       **kwargs))
            return _to_output(_on_loop(definition, kwargs))  # @tool(blocking=False): on the loop, no thread hop
        return _to_output(await call_limited(definition.fn, kwargs, is_async=definition.is_async,
                                             in_thread=not definition.on_loop, limiter=definition.limiter,
                                             timeout_s=definition.timeout_s,
                                             queue_timeout_s=definition.queue_timeout_s))
    except Exception as exc:
        raise _tool_failed(definition, rollout.call_id, exc)  # noqa: B904 - its cause is set as run_tool's contract says


def run_tool_sync(definition: ToolDefinition, arguments: dict[str, Any], rollout: Rollout) -> str:
    """:func:`run_tool` for a sync tool, in the worker thread the caller runs in (``_ToolCall.run_sync``: the
    thread that opened the rollout's database, holding the tool's thread slot). Raises what ``run_tool``
    raises but ``tool_timeout`` and ``tool_busy`` (such a call has no timeout and already holds its slot)."""
    kwargs = _tool_kwargs(definition, arguments, rollout)
    try:
        return _to_output(definition.fn(**kwargs))
    except Exception as exc:
        raise _tool_failed(definition, rollout.call_id, exc)  # noqa: B904 - its cause is set


#: ``resource.RUSAGE_THREAD`` where the platform has it (Linux), else ``None``: looked up once, not per call.
_RUSAGE_THREAD: int | None = getattr(resource, "RUSAGE_THREAD", None) if resource is not None else None


def _preempted() -> int:
    """Involuntary context switches of the calling thread so far (Linux ``RUSAGE_THREAD``; 0 elsewhere): the
    scheduler took the CPU from it, which is a loaded machine, not the tool waiting."""
    return resource.getrusage(_RUSAGE_THREAD).ru_nivcsw if _RUSAGE_THREAD is not None else 0


#: Calls in a row that must wait past ``RolloutDatabase.shared_hop_wait_s`` before a tool leaves the shared hop:
#: a tool that waits on I/O does on every call, a busy machine that kept a thread off the CPU once does not.
SHARED_HOP_WAITS = 3


def _held_shared_hop(definition: ToolDefinition, seconds: float, waited: float | None,
                     wait_bound: float | None) -> None:
    """A tool that ran ``seconds`` in the database's shared hop past ``SHARED_HOP_S``, or that spent more than
    ``wait_bound`` of them waiting in :data:`SHARED_HOP_WAITS` calls in a row (``waited``: wall time less the
    CPU the whole process used meanwhile; ``None`` for a call the scheduler preempted, which neither counts nor
    breaks the run of calls: blocked on I/O, a lock or a
    sleep while no thread ran, never the GIL another thread held nor a loaded machine's scheduler, which a CI
    machine showed as 2 ms waits of a tool that only runs SQL;
    ``RolloutDatabase.shared_hop_wait_s``, ``None``: not checked), gets threads of its own from its next call on (``rft_sdk._db._call``), said once. SQLite's
    shared hop is one thread: a tool that waits there holds every other rollout's call behind it. On
    PostgreSQL the hop already runs on the tool's threads: such a tool then takes the general path (a hop
    each for the open, the tool and the stage, which cost little next to a call that long)."""
    runtime = definition.runtime
    if runtime.own_threads:
        return
    if seconds > SHARED_HOP_S:
        why = f"ran {seconds:.3f} s (over {SHARED_HOP_S:g} s)"
    elif wait_bound is not None and waited is None:
        return
    elif wait_bound is not None and waited is not None and waited > wait_bound:
        runtime.hop_waits += 1
        if runtime.hop_waits < SHARED_HOP_WAITS:
            return
        why = (f"waited {waited * 1e3:.1f} ms off the CPU (over {wait_bound * 1e3:g} ms, {SHARED_HOP_WAITS} calls "
               "in a row)")
    else:
        runtime.hop_waits = 0
        return
    runtime.own_threads = True
    logger.info("tool %s %s in the worker-thread hop that opens its rollout database: its later calls run on "
                "threads of its own", definition.name, why)


async def _in_tool_thread(definition: ToolDefinition, fn: Callable[[], T], limiter: anyio.CapacityLimiter | None) -> T:
    """``fn()`` in a worker thread of ``limiter`` (``None``: anyio's default) while holding a slot of the
    tool's own limiter (its ``max_concurrency``, as ``run_tool`` runs a sync tool).

    Raises:
        EndpointError: 503 ``tool_busy`` (no slot within ``queue_timeout_s``; ``fn`` did not run); what ``fn``
            raises.
    """
    async def hop() -> T:
        ran: T = await anyio.to_thread.run_sync(fn, limiter=limiter)
        return ran

    try:
        result: T = await call_limited(hop, {}, is_async=True, in_thread=False, limiter=definition.limiter,
                                       timeout_s=None, queue_timeout_s=definition.queue_timeout_s)
    except NoSlotError as exc:
        error = _tool_failed(definition, None, exc)
        error.also_count("tool_retryable_errors")  # as run_tool's 503 is counted by the call
        raise error from None
    return result


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
