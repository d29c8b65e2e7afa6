"""The hosted services' endpoint test hooks, offline: one tool call or one grade against a running server.

What the services' ``tool/run`` and ``graders/run`` hooks do before a job is
submitted: send one request exactly as a rollout would, and show what came
back. The request bodies are those of ``docs/hosted-protocol.md`` §3:

* tool: ``{"type": "function_call", "id", "call_id", "name", "arguments": <JSON string>,
  "trace_id", "item"}`` POSTed to ``{url}/tools/{name}`` (``target="openai"``) or
  to the shared ``{url}/tools`` (``target="azure"``, routed by ``name``);
* grader: ``{"sample", "item", "trace_id"?}`` POSTed to ``{url}/grade[/{name}]``, or
  ``{url}/grade/s/<secret>[/{name}]`` without headers when a grader secret is given.

Tokens go where each service puts them: ``Authorization: Bearer <t>`` (OpenAI) or
``X-Functions-Key: <t>`` (Azure AI Foundry, tools only: its grader sends no
headers). Tokens and secrets are masked in everything this module returns.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from .._jobs._config import TARGETS
from ..protocol import GRADE_DETAILS_HEADER, TOOL_TIMEOUT_S

__all__ = ["CheckResult", "auth_headers", "check_grader", "check_tool"]

_MASK = "***"
#: Characters of a JSON ``output`` string shown raw before its decoded form.
_SHOWN_CHARS = 120


@dataclass
class CheckResult:
    """One request made by :func:`check_tool` / :func:`check_grader` and its answer.

    Attributes:
        url: the URL posted to (a grader secret masked as ``***``).
        request_headers: headers sent (token values masked).
        request_body: the JSON body sent.
        status: HTTP status, ``None`` when no answer came (``error`` says why).
        response_body: the answer decoded as JSON, else its text.
        response_headers: the answer's headers.
        elapsed_s: seconds from sending to the full answer.
        error: transport failure, or ``None``.
    """

    url: str
    request_headers: dict[str, str]
    request_body: dict[str, Any]
    status: int | None = None
    response_body: Any = None
    response_headers: dict[str, str] = field(default_factory=dict)
    elapsed_s: float = 0.0
    error: str | None = None

    @property
    def ok(self) -> bool:
        """True for a 2xx answer."""
        return self.status is not None and 200 <= self.status < 300

    @property
    def grade_details(self) -> Any:
        """The parsed ``x-rft-grade-details`` header of a grade, or ``None``."""
        raw = self.response_headers.get(GRADE_DETAILS_HEADER)
        if raw is None:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw

    def render(self) -> str:
        """Plain-text report: request line, headers and body; status, timing and answer."""
        lines = [f"POST {self.url}"]
        lines += [f"{k}: {v}" for k, v in self.request_headers.items()]
        lines += ["", json.dumps(self.request_body, indent=2, ensure_ascii=False), ""]
        if self.status is None:
            lines.append(f"no response after {self.elapsed_s * 1000:.1f} ms: {self.error}")
            return "\n".join(lines)
        lines.append(f"-> HTTP {self.status} in {self.elapsed_s * 1000:.1f} ms")
        body = self.response_body
        decoded: Any = None
        if isinstance(body, dict) and isinstance(body.get("output"), str):
            try:
                decoded = json.loads(body["output"])
            except ValueError:
                decoded = None
            if decoded is not None and len(body["output"]) > _SHOWN_CHARS:  # shown decoded below
                body = {**body, "output": body["output"][:_SHOWN_CHARS] + f"... ({len(body['output'])} chars)"}
        lines.append(json.dumps(body, indent=2, ensure_ascii=False) if not isinstance(body, str) else body)
        if decoded is not None:
            lines += ["output (decoded):", json.dumps(decoded, indent=2, ensure_ascii=False)]
        details = self.grade_details
        if details is not None:
            lines += [f"{GRADE_DETAILS_HEADER}:", json.dumps(details, indent=2, ensure_ascii=False)]
        return "\n".join(lines)


def auth_headers(token: str | None, target: str) -> dict[str, str]:
    """The header a service sends a tool token in: ``Authorization: Bearer <t>`` (openai)
    or ``X-Functions-Key: <t>`` (azure); ``{}`` without a token.

    Raises:
        ValueError: unknown target.
    """
    if target not in TARGETS:
        raise ValueError(f"target must be one of {list(TARGETS)}, got {target!r}")
    if not token:
        return {}
    return {"X-Functions-Key": token} if target == "azure" else {"Authorization": f"Bearer {token}"}


def _masked(headers: Mapping[str, str], secrets: list[str]) -> dict[str, str]:
    out = {}
    for k, v in headers.items():
        for s in secrets:
            if s:
                v = v.replace(s, _MASK)
        out[k] = v
    return out


def _post(url: str, shown_url: str, body: dict[str, Any], headers: dict[str, str], secrets: list[str],
          timeout_s: float, transport: httpx.BaseTransport | None) -> CheckResult:
    result = CheckResult(url=shown_url, request_headers=_masked({"Content-Type": "application/json", **headers},
                                                                 secrets), request_body=body)
    content = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    t0 = time.perf_counter()
    try:
        with httpx.Client(transport=transport, timeout=timeout_s) as client:
            resp = client.post(url, content=content, headers={"Content-Type": "application/json", **headers})
    except httpx.HTTPError as exc:
        result.elapsed_s = time.perf_counter() - t0
        result.error = f"{type(exc).__name__}: {exc}"
        for s in secrets:
            if s:
                result.error = result.error.replace(s, _MASK)
        return result
    result.elapsed_s = time.perf_counter() - t0
    result.status = resp.status_code
    result.response_headers = dict(resp.headers)
    try:
        result.response_body = resp.json()
    except ValueError:
        result.response_body = resp.text
    return result


def check_tool(url: str, name: str, arguments: Any, *, item: Mapping[str, Any] | None = None,
               trace_id: str | None = None, call_id: str | None = None, target: str = "openai",
               token: str | None = None, headers: Mapping[str, str] | None = None,
               timeout_s: float = TOOL_TIMEOUT_S, transport: httpx.BaseTransport | None = None) -> CheckResult:
    """POST one tool call to the server at ``url`` (its base URL) as the hosted ``target`` would.

    Args:
        name: the tool; arguments: its arguments (an object, sent JSON-encoded as the
            services do, or an already-encoded JSON string, sent as is).
        item: the dataset line (``{}`` by default); trace_id: the rollout (default: a fresh
            ``"trace_" + uuid hex``, so state starts empty; pass the same id again to
            continue a rollout); call_id: default a fresh ``"call_" + uuid hex``.
        token / headers: ``token`` goes in the target's header (:func:`auth_headers`),
            ``headers`` are added verbatim.
        timeout_s: seconds to wait for the answer (hosted: 600).

    Returns:
        :class:`CheckResult`; a transport failure is reported in ``error``, never raised.

    Raises:
        ValueError: unknown target.
    """
    sent = {**auth_headers(token, target), **dict(headers or {})}
    base = url.rstrip("/")
    post_url = f"{base}/tools" if target == "azure" else f"{base}/tools/{name}"
    encoded = arguments if isinstance(arguments, str) else json.dumps(arguments, separators=(",", ":"))
    body = {"type": "function_call", "id": "fc_" + uuid.uuid4().hex, "call_id": call_id or "call_" + uuid.uuid4().hex,
            "name": name, "arguments": encoded, "trace_id": trace_id or "trace_" + uuid.uuid4().hex,
            "item": dict(item or {})}
    return _post(post_url, post_url, body, sent, [token or ""], timeout_s, transport)


def check_grader(url: str, sample: Mapping[str, Any], *, item: Mapping[str, Any] | None = None,
                 trace_id: str | None = None, grader: str | None = None, grader_secret: str | None = None,
                 target: str = "openai", token: str | None = None, headers: Mapping[str, str] | None = None,
                 timeout_s: float = TOOL_TIMEOUT_S, transport: httpx.BaseTransport | None = None) -> CheckResult:
    """POST one grade ``{"sample", "item", "trace_id"?}`` to the server at ``url`` (its base URL).

    Args:
        sample: what the model produced (``{"output_text": ...}`` and/or ``"output_json"``).
        item: the dataset line; trace_id: the rollout whose trajectory is graded (left out
            when ``None``: the server grades an empty trajectory, as in Azure's grader tests).
        grader: a named grader (default: the server's default grader).
        grader_secret: post to ``/grade/s/<secret>`` without any header (masked in the result).
        token / headers: as :func:`check_tool`, but ``target="azure"`` sends no header at all
            (Azure's endpoint grader cannot send headers).

    Returns:
        :class:`CheckResult` (``grade_details`` holds the parsed details header).

    Raises:
        ValueError: unknown target.
    """
    sent = {**auth_headers(token, target), **dict(headers or {})}
    if target == "azure" or grader_secret:
        sent = {}
    base = url.rstrip("/")
    root = f"{base}/grade/s/{grader_secret}" if grader_secret else f"{base}/grade"
    shown = f"{base}/grade/s/{_MASK}" if grader_secret else root
    suffix = f"/{grader}" if grader else ""
    body: dict[str, Any] = {"sample": dict(sample), "item": dict(item or {})}
    if trace_id is not None:
        body["trace_id"] = trace_id
    return _post(root + suffix, shown + suffix, body, sent, [token or "", grader_secret or ""], timeout_s, transport)
