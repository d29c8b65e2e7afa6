"""The hosted wire contract in one place: limits, header names, status meanings, JSON shapes.

Both sides of the protocol import this module: the tool server
(``rft_sdk.ToolServer``) and the offline copy of the hosted service
(``rft_sdk.emulator``). Source of every rule: ``docs/hosted-protocol.md``
(§3 "Tool call" and "Grading"); a constant is defined here once and nowhere else.

Limits:
    ``MAX_BODY_BYTES`` = 1,000,000. The hosted documentation (OpenAI agent RFT
    guide; Azure AI Foundry agentic RFT: "Max input payload 1 MB", "Max return
    payload 1 MB (413 error if exceeded)") says "1 MB" without defining it.
    We read it as the SI megabyte, 1,000,000 bytes, the stricter of the two
    readings (1 MiB is 1,048,576): a body that fits here fits under either
    reading, so nothing that passes offline is refused by the service.

Shapes (pydantic models, validated once per request):
    :class:`ToolCallRequest`, :class:`ToolCallOutput`, :class:`GradeRequest`,
    :class:`GradeResponse`, :class:`ErrorBody` (every non-2xx answer).

Gold fields of a dataset line (read by the SDK, never sent to the model):
    :class:`GoldItem` (:func:`gold_item_schema` is its JSON Schema), with
    :class:`GoldAction` and :class:`GoldAlternative`; ``docs/gold-items.md``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "BODY_TIMEOUT_S",
    "CONNECTION_LIMIT",
    "ErrorBody",
    "ErrorDetail",
    "ErrorInfo",
    "GoldAction",
    "GoldAlternative",
    "GoldItem",
    "END_STATE_HEADER",
    "GRADE_DETAILS_HEADER",
    "GRADE_DETAILS_MAX_CHARS",
    "GradeRequest",
    "GradeResponse",
    "FIRST_BYTE_TIMEOUT_S",
    "HEADER_TIMEOUT_S",
    "KEEP_ALIVE_S",
    "LOOP_STALL_S",
    "MAX_BODY_BYTES",
    "MAX_JSON_DEPTH",
    "QUEUE_TIMEOUT_S",
    "QUEUE_WAIT_HEADER",
    "STATE_CHANGED_HEADER",
    "RETRIES",
    "STATUS_MEANINGS",
    "Sample",
    "TOOL_TIMEOUT_S",
    "ToolCallOutput",
    "ToolCallRequest",
    "gold_item_schema",
    "is_model_visible",
    "is_retried",
]

#: Maximum request and response body, bytes ("1 MB", read as 10**6; see the module docstring).
MAX_BODY_BYTES = 1_000_000
#: Seconds the service waits for a tool or grader response (hosted: 10 minutes).
TOOL_TIMEOUT_S = 600.0
#: Retries after a failed first try on 5xx / timeout (hosted: 3, then the rollout is discarded).
RETRIES = 3
#: Seconds a client has to send a whole request body before the server answers 408 (SDK choice:
#: uvicorn has no body-read timeout, and a stalled client must not hold a slot forever).
BODY_TIMEOUT_S = 30.0
#: Seconds a connection has to deliver a request's complete headers (from its first byte, or from
#: connecting) before ``rft serve`` closes it (SDK choice; uvicorn has no such timeout: a client that
#: sends a partial header and stops would hold its connection forever). ``rft serve --header-timeout-s``.
HEADER_TIMEOUT_S = 10.0
#: Seconds ``rft serve`` keeps an idle keep-alive connection open between requests (uvicorn's
#: ``timeout_keep_alive``; ``rft serve --timeout-keep-alive``). Longer than clients keep an idle pooled
#: connection (httpx 5 s, aiohttp 15 s), so the client, not the server, ends an idle connection: with
#: uvicorn's own 5 s the two raced, and a starved client wrote into a connection the server had just closed
#: (a retried ``ReadError``: 140 retries of a 1,036-rollout burst, 11 with 75 s; issue #40). 75 s is
#: nginx's ``keepalive_timeout`` default; an idle connection costs one file descriptor.
KEEP_ALIVE_S = 75.0
#: Seconds a new connection may stay silent (no byte of its first request) before ``rft serve`` closes it
#: (SDK choice; the header deadline then runs from the first byte). ``rft serve --first-byte-timeout-s``.
FIRST_BYTE_TIMEOUT_S = 120.0
#: Connections (or requests in flight) one ``rft serve`` worker accepts before answering 503 (uvicorn's
#: ``limit_concurrency``, retried by the hosted side); keep it under the process's open-file limit.
#: ``rft serve --limit-concurrency``.
CONNECTION_LIMIT = 1000
#: Seconds a tool call waits for a slot of its tool (``max_concurrency``, or the tool's worker threads)
#: before answering 503 ``tool_busy`` (retried, not recorded); ``@tool(queue_timeout_s=...)``.
QUEUE_TIMEOUT_S = 60.0
#: Seconds a ``@tool(blocking=False)`` call may hold the event loop before the tool is moved to a
#: worker thread for its later calls (a warning says so once; every other request waited meanwhile).
LOOP_STALL_S = 0.1
#: Nesting limit of request JSON (arrays/objects): far above any tool call, far below Python's
#: recursion limit, so a hostile body cannot exhaust it while decoding or storing.
MAX_JSON_DEPTH = 64
#: Response header of a grade with sub-scores and reasons: compact JSON
#: ``{"subscores": {str: float}, "reasons": [str], "truncated"?: true}`` (SDK extension;
#: the hosted service reads only the body ``{"score": float}``).
GRADE_DETAILS_HEADER = "x-rft-grade-details"
#: Response header (SDK extension) of a tool call or grade that waited for admission in a burst: the
#: seconds it waited in the server's queue (``rft_sdk._server._admission``), e.g. ``"1.250"``; absent when it
#: did not wait. The emulator's summary counts these calls ("server": the server was the bottleneck).
QUEUE_WAIT_HEADER = "x-rft-queue-wait-s"
#: Response header (SDK extension) of a tool call the server ran: ``"true"`` when the call changed the
#: rollout's state (``Rollout.state``) or wrote rows to its database, ``"false"`` when it changed neither;
#: absent on an answer replayed for a resent ``call_id``. Decided by the server around the call, not by tool
#: code. The doctor learns a run's write tools from it (``rft_sdk.doctor``).
STATE_CHANGED_HEADER = "x-rft-state-changed"
#: Request and response header (SDK extension) of a grade. A client that sends it (any value) gets back
#: ``"sha256:<64 hex>"``: the digest of the rollout's end state, computed by the server from what the tools
#: left (the canonical JSON of ``Rollout.state`` and the rows its database holds that differ from the
#: template), never from anything a tool or grader returns. Two rollouts of one item end in the same state
#: exactly when their digests are equal. Absent for a grade without ``trace_id`` or replayed from its record.
END_STATE_HEADER = "x-rft-end-state"
#: Longest value of :data:`GRADE_DETAILS_HEADER`, characters (well under the 16 KiB
#: response-header limit of common HTTP stacks, e.g. h11).
GRADE_DETAILS_MAX_CHARS = 8_000

#: What each status the SDK answers means to the hosted service (hosted protocol §3).
STATUS_MEANINGS: dict[int, str] = {
    200: "ok: the body's output goes into the model's context",
    400: "model-visible error: malformed JSON/arguments or the tool raised; the body is shown to the model",
    401: "missing or wrong credentials",
    404: "unknown tool or grader",
    408: "the request body did not arrive within the body timeout",
    409: "conflict: the rollout was already graded (or a call_id was reused with other arguments)",
    413: "body over MAX_BODY_BYTES; a tool response this large reaches the model as a 413 error",
    422: "invalid request fields or arguments (details name each field); shown to the model",
    500: "grader failed or returned an invalid score; retried, then the rollout is discarded",
    503: "transient failure (RetryableToolError, store unavailable, tool busy, rollout evicted); retried with "
         "the same call_id",
}


def is_retried(status: int) -> bool:
    """Whether the hosted service retries an answer with this status (any 5xx, hosted protocol §3)."""
    return status >= 500


def is_model_visible(status: int) -> bool:
    """Whether a tool answer's body is shown to the model and the rollout continues (2xx and 4xx)."""
    return 200 <= status < 500


class ToolCallRequest(BaseModel):
    """``POST /tools/{name}`` body: ``{"type": "function_call", "id", "call_id", "name",
    "arguments", "trace_id", "item"}``; unknown fields are ignored.

    ``call_id`` and ``trace_id`` are required non-empty strings; ``id``, ``type``
    and ``name`` optional strings; ``item`` an optional JSON object. ``arguments``
    is a JSON text or an already-decoded value; its problems are model-visible
    (checked by the tool call, not here). Strict types: ``7`` is not a string.
    """

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    call_id: str = Field(min_length=1)
    trace_id: str = Field(min_length=1)
    id: str | None = None
    type: str | None = None
    name: str | None = None
    item: dict[str, Any] | None = None
    arguments: Any = None


class ToolCallOutput(BaseModel):
    """200 answer to a tool call: ``{"type": "function_call_output", "call_id", "id", "output"}``."""

    type: Literal["function_call_output"] = "function_call_output"
    call_id: str
    id: str | None
    output: str


class Sample(BaseModel):
    """The graded ``sample``: chat-completions style output of the final step. Only
    ``output_text`` can be relied on (a string when present); other fields are kept."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    output_text: str | None = None


class GradeRequest(BaseModel):
    """``POST /grade[/{name}]`` body: ``{"sample": {...}, "item": {...} | null, "trace_id": str}``.

    ``trace_id`` may be absent (Azure's grader test bodies): the grade then sees
    an empty trajectory and ``GradingContext.traced`` is ``False``.
    """

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    sample: Sample
    trace_id: str | None = Field(default=None, min_length=1)
    item: dict[str, Any] | None = None


class GradeResponse(BaseModel):
    """200 answer of a grader: exactly ``{"score": float}``."""

    score: float


class ErrorDetail(BaseModel):
    """One problem of a request: ``{"field": "a.b", "problem": "..."}``."""

    field: str
    problem: str


class ErrorInfo(BaseModel):
    """``{"code": str, "message": str, "details"?: [ErrorDetail]}``."""

    code: str
    message: str
    details: list[ErrorDetail] | None = None


class ErrorBody(BaseModel):
    """Every non-2xx answer: ``{"type": "error", "error": {...}, "call_id"?, "id"?}``.

    It never has an ``output`` key, so the hosted service serializes the whole
    body into the model's context (4xx) or retries (5xx).
    """

    type: Literal["error"] = "error"
    error: ErrorInfo
    call_id: str | None = None
    id: str | None = None


class GoldAction(BaseModel):
    """One gold tool call: ``{"name": str, "arguments": {...}, "expect_error"?: bool}``.

    ``arguments`` is the object the model would send (a JSON text of one is accepted too, as the
    replay policies send it verbatim). ``expect_error: true`` marks a call the gold makes on purpose
    although the tool refuses it with a 4xx (``tool_error``; τ²-bench golds have such calls):
    ``rft validate``'s dry run then requires the refusal instead of reporting it. Unknown keys are
    refused, so a misspelt ``argument`` or ``expect_eror`` is caught.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="the tool's name, as the server serves it")
    arguments: dict[str, Any] | str = Field(default_factory=dict,
                                             description="the call's arguments (an object, or its JSON text)")
    expect_error: bool = Field(default=False,
                               description="the tool is meant to refuse this call with a 4xx (e.g. tool_error)")


class GoldAlternative(BaseModel):
    """Another trajectory that also solves the item: ``{"name"?, "actions": [GoldAction], "reference_answer"?}``.

    Read by ``rft doctor`` (``rft_sdk.doctor._alternatives``): each alternative must earn the full
    score too (the grader must not insist on one path). ``reference_answer`` defaults to the item's.
    """

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, description="a label shown in reports")
    actions: list[GoldAction]
    reference_answer: str | None = None


class GoldItem(BaseModel):
    """The fields of a dataset line that the SDK reads besides the hosted ones.

    Hosted fields: ``messages`` (the prompt) and ``tools`` (what the model may call); the
    hosted service passes the whole line to the tools and the grader as ``item``, so every
    other key (your grader's own fields) is kept as is. Gold fields, all optional for the
    hosted service, needed by the offline tools:

    * ``actions``: the gold tool calls in order (``rft emulate --policy reference`` replays
      them, the doctor perturbs them, ``ctx.db.diff_gold`` replays them in a scratch clone);
    * ``reference_answer``: the gold final answer (needed with ``actions``: the replay policy
      ends with it, and ``rft validate`` grades it);
    * ``alternatives``: other trajectories that must also earn the full score (doctor);
    * ``max_tool_calls``: the item's tool-call budget (doctor's budget probes; ``--budget``
      otherwise);
    * ``task_id``: a stable id shown in reports (``rft portability`` keys on it).

    Source of the rule: what ``rft_sdk.emulator._policy``, ``rft_sdk.doctor`` and
    ``rft_sdk.portability`` read (``docs/gold-items.md``).
    """

    model_config = ConfigDict(extra="allow")

    messages: list[dict[str, Any]] = Field(min_length=1)
    tools: list[dict[str, Any]] | None = None
    actions: list[GoldAction] | None = None
    reference_answer: str | None = None
    alternatives: list[GoldAlternative] | None = None
    max_tool_calls: int | None = Field(default=None, ge=0, strict=True)
    task_id: str | int | None = None

    @property
    def has_gold(self) -> bool:
        """Both ``actions`` and ``reference_answer`` are present (what replay needs)."""
        return self.actions is not None and self.reference_answer is not None


def gold_item_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12, pydantic's rendering) of one dataset line's :class:`GoldItem`."""
    return GoldItem.model_json_schema()
