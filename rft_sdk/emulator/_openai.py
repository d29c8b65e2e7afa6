"""A policy backed by any OpenAI-compatible chat-completions endpoint (vLLM, Ollama, OpenAI, ...).

Source: the OpenAI chat-completions API: ``POST {base_url}/chat/completions``
with ``{"model", "messages", "tools", "parallel_tool_calls"?, "tool_choice"?}``; the answer's ``choices[0].message``
carries ``content`` and ``tool_calls: [{"id", "type": "function",
"function": {"name", "arguments": <JSON string>}}]``.
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from ._contract import PolicyError
from ._types import PolicyStep, ToolCall, make_tool_call

__all__ = ["OpenAICompatiblePolicy"]


class _Transient(Exception):
    pass


class OpenAICompatiblePolicy:
    """Ask a chat-completions endpoint for each turn.

    Args:
        base_url: e.g. ``"http://localhost:8000/v1"`` or ``"https://api.openai.com/v1"``.
        model: model name sent as ``model``.
        api_key: bearer token; default ``$OPENAI_API_KEY``; omitted if neither.
        temperature: sampling temperature; ``max_tokens``: optional cap.
        extra_body: extra request fields (e.g. ``{"top_p": 0.9}``).
        parallel_tool_calls: sent as ``parallel_tool_calls`` with the tools (``None``: not
            sent, the endpoint's default); a job's ``parallel_tool_calls`` maps here.
        tool_choice: sent as ``tool_choice`` with the tools: ``"auto"``, ``"required"``,
            ``"none"`` or ``{"type": "function", "function": {"name": ...}}`` (``None``: not sent).
        client / transport: an ``httpx.AsyncClient`` to use, or a transport
            for the one created lazily (close it with :meth:`aclose`).
        timeout_s: per-request limit, seconds. retries: retries after the
            first try on 429, 5xx and transport errors, with exponential backoff
            starting at ``backoff_initial_s`` seconds.

    Raises (from ``act``):
        PolicyError: the endpoint keeps failing, answers non-2xx, or answers
            something that is not a chat completion.
    """

    def __init__(self, base_url: str, model: str, api_key: str | None = None, *, temperature: float = 1.0,
                 max_tokens: int | None = None, extra_body: dict[str, Any] | None = None,
                 client: httpx.AsyncClient | None = None, transport: httpx.AsyncBaseTransport | None = None,
                 timeout_s: float = 600.0, retries: int = 3, backoff_initial_s: float = 0.5,
                 parallel_tool_calls: bool | None = None, tool_choice: str | dict[str, Any] | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/chat/completions"
        self.model = model
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.temperature, self.max_tokens = temperature, max_tokens
        self.extra_body = dict(extra_body or {})
        self.parallel_tool_calls, self.tool_choice = parallel_tool_calls, tool_choice
        self._client, self._own = client, client is None
        self._transport, self.timeout_s = transport, timeout_s
        self.retries, self.backoff_initial_s = retries, backoff_initial_s

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(transport=self._transport, timeout=self.timeout_s)
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP client if this policy created it."""
        if self._own and self._client is not None:
            await self._client.aclose()
            self._client = None

    async def preflight(self, timeout_s: float = 10.0) -> str | None:
        """Check that the endpoint answers before any rollout, as ``rft validate`` checks the tool server.

        Sends ``GET {base_url}/models`` (the OpenAI API's model list, which vLLM, Ollama and
        llama.cpp serve too) once, without retries, within ``min(timeout_s, self.timeout_s)``.

        Returns:
            ``None``, or a warning: the list answered but does not name :attr:`model`, or the
            server has no ``/models`` route (any other non-2xx below 500 but 401/403).

        Raises:
            PolicyError: the endpoint cannot be reached (connection refused, DNS, timeout), refused
                the API key (401/403), or answered 5xx; the message names the URL and the fix.
        """
        url = self.base_url + "/models"
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            resp = await self._http().get(url, headers=headers, timeout=min(timeout_s, self.timeout_s))
        except httpx.TransportError as exc:
            raise PolicyError(f"the model endpoint {self.base_url} cannot be reached ({type(exc).__name__}: "
                              f"{exc or 'no answer'}); start the model server or fix --base-url") from exc
        if resp.status_code in (401, 403):
            raise PolicyError(f"the model endpoint {url} refused the API key (HTTP {resp.status_code}); "
                              "pass --api-key or set OPENAI_API_KEY")
        if resp.status_code >= 500:
            raise PolicyError(f"the model endpoint {url} answered HTTP {resp.status_code}: {resp.text[:200]}")
        if not resp.is_success:
            return f"{url} answered HTTP {resp.status_code}; the model {self.model!r} was not checked"
        try:
            names = [m.get("id") for m in resp.json().get("data", []) if isinstance(m, dict)]
        except (ValueError, AttributeError):
            return None  # answered, but not the OpenAI list shape: nothing more to check
        if names and self.model not in names:
            return f"{url} does not list the model {self.model!r} (it lists {names[:5]})"
        return None

    async def _request(self, payload: dict[str, Any]) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        retrying = AsyncRetrying(stop=stop_after_attempt(self.retries + 1),
                                 wait=wait_exponential(multiplier=self.backoff_initial_s, max=30),
                                 retry=retry_if_exception_type(_Transient), reraise=True)
        try:
            async for attempt in retrying:
                with attempt:
                    try:
                        resp = await self._http().post(self.url, json=payload, headers=headers)
                    except httpx.TransportError as exc:
                        raise _Transient(f"{type(exc).__name__}: {exc}") from exc
                    if resp.status_code == 429 or resp.status_code >= 500:
                        raise _Transient(f"HTTP {resp.status_code}: {resp.text[:200]}")
        except _Transient as exc:
            raise PolicyError(f"chat-completions endpoint {self.url} failed: {exc}") from exc
        if not resp.is_success:
            raise PolicyError(f"chat-completions endpoint {self.url} answered HTTP {resp.status_code}: "
                              f"{resp.text[:200]}")
        return resp

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, item: dict[str, Any],
                  trace_id: str) -> PolicyStep:
        """One chat completion; its tool calls become the step's calls (``call_id`` = the API's id)."""
        payload: dict[str, Any] = {"model": self.model, "messages": messages,
                                   "temperature": self.temperature, **self.extra_body}
        if tools:  # the API refuses parallel_tool_calls / tool_choice without tools
            payload["tools"] = tools
            if self.parallel_tool_calls is not None:
                payload["parallel_tool_calls"] = self.parallel_tool_calls
            if self.tool_choice is not None:
                payload["tool_choice"] = self.tool_choice
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        resp = await self._request(payload)
        try:
            data = resp.json()
            choice = data["choices"][0]
            message = choice["message"]
            calls: list[ToolCall | dict[str, Any]] = []
            for tc in message.get("tool_calls") or []:
                fn = tc["function"]
                args = fn.get("arguments", "{}")
                calls.append(make_tool_call(fn["name"], args if isinstance(args, str) else json.dumps(args),
                                            call_id=tc.get("id") or None))
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise PolicyError(f"not a chat completion: {type(exc).__name__}: {exc}; body {resp.text[:200]}") from exc
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise PolicyError(f"choices[0].message.content must be a string, got {type(content).__name__}")
        return PolicyStep(content=content, tool_calls=calls,
                          extra={"usage": data.get("usage"), "finish_reason": choice.get("finish_reason")})
