"""The hosted wire, as a client: what every surface (and integration) sends to the one pipeline.

Every surface maps its protocol onto three hosted requests (hosted protocol
§3, ``docs/hosted-protocol.md``):

* a rollout is a ``trace_id`` (:func:`new_trace_id`: ``"trace_" + uuid4().hex``,
  as the hosted services mint them);
* a tool call is ``POST /tools/{name}`` with ``{"type": "function_call", "id",
  "call_id", "name", "arguments": <JSON string, sent verbatim>, "trace_id",
  "item"}`` (:meth:`HostedClient.call_tool`);
* the end of the episode is ``POST /grade[/{grader}]`` with ``{"sample":
  {"output_text"}, "item", "trace_id"}`` (:meth:`HostedClient.grade`).

:class:`HostedClient` sends them in process (``httpx.ASGITransport`` to the
``ToolServer``'s hosted routes: no socket, same pipeline) or over HTTP to a
running server, with the hosted side's failure rule: a 5xx or transport error
is retried (3 attempts in all, exponential back-off from 50 ms), after which
the rollout is discarded (:class:`RolloutDiscardedError`). A 4xx answer is
returned: its serialized error body is what the model sees. Bodies are sent as
they are, lone UTF-16 surrogates included (escaped: the JSON stays valid UTF-8),
so the pipeline's one decoding rule refuses them with a 400 the model sees,
instead of the client failing to encode them.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from starlette.types import ASGIApp
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from .._wire._tls import ssl_context
from ..exceptions import RFTError
from ..protocol import GRADE_DETAILS_HEADER

__all__ = ["ATTEMPTS", "GradeAnswer", "HostedClient", "RolloutDiscardedError", "ToolAnswer", "new_trace_id"]

#: Attempts per request before a rollout is discarded (hosted protocol §3: 5xx retried up to 3 times).
ATTEMPTS = 3
_LOCAL_BASE = "http://rft-sdk.local"
_PATH_SAFE = re.compile(r"[A-Za-z0-9_.-]+")
_JSON_HEADERS = {"Content-Type": "application/json"}


def new_trace_id() -> str:
    """A fresh rollout id, ``"trace_" + 32 hex`` (the hosted services' format)."""
    return f"trace_{uuid.uuid4().hex}"


class RolloutDiscardedError(RFTError):
    """A tool call or grade still failed (5xx or transport) after :data:`ATTEMPTS` attempts.

    The hosted services discard such a rollout: no reward, left out of training.
    ``reason`` is ``"tool_error"`` or ``"grader_error"``; ``detail`` the last failure.
    """

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"rollout discarded ({reason}): {detail}")
        self.reason = reason
        self.detail = detail


def _encode(body: dict[str, Any]) -> bytes:
    """``body`` as JSON bytes: UTF-8 text, or ``\\u`` escapes where a string holds a lone surrogate
    (not encodable as UTF-8; the pipeline then answers 400 ``malformed_json`` naming the field)."""
    try:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(body, separators=(",", ":")).encode("ascii")


class _Retryable(Exception):
    """A 5xx answer: retried like a transport error."""


@dataclass(frozen=True)
class ToolAnswer:
    """The hosted answer to one tool call.

    Attributes:
        status: HTTP status (200; 400 ``malformed_arguments``/``tool_error``/``tool_timeout``;
            404 ``unknown_tool``; 409 ``already_graded``; 413; 422 ``invalid_arguments``).
        output: the 2xx ``output`` string, else ``None``.
        body: the decoded JSON answer (``{"error": {"code", "message", ...}}`` on a 4xx).
        call_id: the ``call_id`` sent.
    """

    status: int
    output: str | None
    body: Any
    call_id: str

    @property
    def ok(self) -> bool:
        """A 2xx answer with an ``output``."""
        return self.output is not None

    @property
    def error_code(self) -> str | None:
        """``body["error"]["code"]`` of a 4xx answer, else ``None``."""
        error = self.body.get("error") if isinstance(self.body, dict) else None
        return str(error.get("code")) if isinstance(error, dict) else None

    @property
    def model_text(self) -> str:
        """What the model is shown: the ``output``, or the serialized error body (hosted §3)."""
        if self.output is not None:
            return self.output
        return json.dumps(self.body, ensure_ascii=False)


@dataclass(frozen=True)
class GradeAnswer:
    """The grader's answer: ``score`` and the ``x-rft-grade-details`` sub-scores and reasons."""

    score: float
    subscores: dict[str, float] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)


class HostedClient:
    """Async client of a tool server's hosted routes (in process or over HTTP).

    Args:
        client: an ``httpx.AsyncClient`` whose base URL is the server's root
            (use :meth:`in_process` or :meth:`over_http`).

    Every method may raise :class:`RolloutDiscardedError` (see the module docstring).
    """

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.http = client

    @classmethod
    def in_process(cls, app: ASGIApp, *, timeout_s: float | None = None) -> HostedClient:
        """A client whose requests reach ``app`` (the hosted routes) in process, without a socket."""
        return cls(httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=_LOCAL_BASE,
                                     timeout=timeout_s))

    @classmethod
    def over_http(cls, base_url: str, *, token: str | None = None, headers: Mapping[str, str] | None = None,
                  timeout_s: float = 600.0) -> HostedClient:
        """A client of the server at ``base_url`` (``Authorization: Bearer <token>`` when given;
        ``timeout_s`` per request, the hosted side waits at most 600 s)."""
        sent = dict(headers or {})
        if token:
            sent["Authorization"] = f"Bearer {token}"
        return cls(httpx.AsyncClient(base_url=base_url.rstrip("/"), headers=sent, timeout=timeout_s,
                                     verify=ssl_context()))

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self.http.aclose()

    async def __aenter__(self) -> HostedClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _post(self, path: str, body: dict[str, Any], reason: str) -> httpx.Response:
        try:
            async for attempt in AsyncRetrying(stop=stop_after_attempt(ATTEMPTS), wait=wait_exponential(0.05, max=1.0),
                                               retry=retry_if_exception_type((_Retryable, httpx.TransportError)),
                                               reraise=True):
                with attempt:
                    response = await self.http.post(path, content=_encode(body), headers=_JSON_HEADERS)
                    if response.status_code >= 500:
                        raise _Retryable(f"{path} answered {response.status_code}: {response.text[:300]}")
        except (_Retryable, httpx.TransportError) as exc:
            raise RolloutDiscardedError(reason, f"{type(exc).__name__}: {exc}") from exc
        return response

    async def list_tools(self) -> list[dict[str, Any]]:
        """``GET /tools``: the chat-completions tool definitions (``server.dataset_tools()``).

        Raises:
            httpx.HTTPStatusError: the server refused (e.g. 401).
        """
        response = await self.http.get("/tools")
        response.raise_for_status()
        tools: list[dict[str, Any]] = response.json()["tools"]
        return tools

    async def call_tool(self, trace_id: str, name: str, arguments: str | Mapping[str, Any] | None,
                        item: Mapping[str, Any] | None = None, *, call_id: str | None = None) -> ToolAnswer:
        """One tool call of rollout ``trace_id``, on the hosted wire.

        ``arguments``: the model's JSON text, sent verbatim (malformed text gets the
        hosted 400 ``malformed_arguments``, recorded), or an object (encoded once).
        ``call_id`` defaults to a fresh ``"call_" + hex`` (the ``id`` is ``"fc_" + hex``).
        """
        hex_id = uuid.uuid4().hex
        call_id = call_id or f"call_{hex_id}"
        raw = arguments if isinstance(arguments, str) else json.dumps(dict(arguments or {}), ensure_ascii=False)
        body: dict[str, Any] = {"type": "function_call", "id": f"fc_{hex_id}", "call_id": call_id, "name": name,
                                "arguments": raw, "trace_id": trace_id}
        if item is not None:
            body["item"] = dict(item)
        path = f"/tools/{name}" if _PATH_SAFE.fullmatch(name or "") else "/tools"  # else dispatched on the body's name
        response = await self._post(path, body, "tool_error")
        try:
            payload: Any = response.json()
        except ValueError:
            payload = {"error": {"code": "invalid_response", "message": response.text[:1000]}}
        output = payload.get("output") if response.is_success and isinstance(payload, dict) else None
        return ToolAnswer(response.status_code, output if isinstance(output, str) else None, payload, call_id)

    async def grade(self, trace_id: str, output_text: str, item: Mapping[str, Any] | None = None,
                    grader: str | None = None) -> GradeAnswer:
        """Grade rollout ``trace_id`` (``POST /grade`` or ``/grade/{grader}``) with its final answer.

        Raises:
            RolloutDiscardedError: 5xx/transport after retries, or any other non-200
                answer (``reason="grader_error"``, the answer's text in ``detail``).
        """
        body = {"sample": {"output_text": output_text}, "item": dict(item or {}), "trace_id": trace_id}
        response = await self._post(f"/grade/{grader}" if grader else "/grade", body, "grader_error")
        if response.status_code != 200:
            raise RolloutDiscardedError("grader_error", f"{response.status_code}: {response.text[:300]}")
        details = json.loads(response.headers.get(GRADE_DETAILS_HEADER) or "{}")
        return GradeAnswer(float(response.json()["score"]),
                           {str(k): float(v) for k, v in (details.get("subscores") or {}).items()},
                           [str(r) for r in details.get("reasons") or []])
