"""A scripted (gold-replay) chat-completions server: for each dataset item it emits the item's gold tool calls
(or the calls under ``REPLAY_KEY``: :func:`~._target.replay_actions`), one per turn, then its ``reference_answer``
(``POST /v1/chat/completions``, the OpenAI response shape).

The item is recognised by the conversation's first user message; the turn by the number of assistant
messages already in the request. ``bad`` items (by index) start with malformed tool calls
(``bad_calls``: raw arguments text and tool names as given) before their gold calls.
Every request is kept in ``requests`` so a test can check what the client sent. A request with
``"stream": true`` is answered as OpenAI's server-sent chunks (``chat.completion.chunk``: the whole
message in one delta, then ``finish_reason``, a usage chunk when ``stream_options.include_usage``, and
``data: [DONE]``), which is how verifiers 0.4's interception proxy calls a model.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ._target import replay_actions


def _user_text(messages: Sequence[dict[str, Any]]) -> str:
    return next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")


class ScriptedLLM:
    """``app`` serves the script for ``items``; ``bad_calls``: ``{item_index: [(name, raw_arguments), ...]}``."""

    def __init__(self, items: Sequence[dict[str, Any]], bad_calls: dict[int, list[tuple[str, str]]] | None = None,
                 model: str = "scripted-gold") -> None:
        self.by_prompt = {_user_text(item["messages"]): index for index, item in enumerate(items)}
        self.items, self.bad_calls, self.model = list(items), dict(bad_calls or {}), model
        self.requests: list[dict[str, Any]] = []
        self.app = Starlette(routes=[Route("/v1/chat/completions", self.completions, methods=["POST"])])

    def script(self, index: int) -> list[tuple[str, str] | str]:
        """The turns of item ``index``: ``(name, raw arguments)`` tool calls, then the final answer text."""
        item = self.items[index]
        calls = [*self.bad_calls.get(index, []),
                 *[(a["name"], json.dumps(a["arguments"])) for a in replay_actions(item)]]
        return [*calls, str(item.get("reference_answer") or item.get("answer") or "")]

    async def completions(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        messages = body.get("messages") or []
        index = self.by_prompt.get(_user_text(messages))
        if index is None:
            return JSONResponse({"error": {"message": "unknown conversation"}}, status_code=400)
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        script = self.script(index)
        step = script[min(turn, len(script) - 1)]
        message: dict[str, Any] = {"role": "assistant", "content": None}
        finish = "tool_calls"
        if isinstance(step, str):
            message["content"], finish = step, "stop"
        else:
            message["tool_calls"] = [{"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
                                      "function": {"name": step[0], "arguments": step[1]}}]
        answer_id, model = f"chatcmpl-{uuid.uuid4().hex}", body.get("model") or self.model
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        if body.get("stream"):
            return Response(_chunks(answer_id, model, message, finish, usage,
                                    bool((body.get("stream_options") or {}).get("include_usage"))),
                            media_type="text/event-stream")
        return JSONResponse({"id": answer_id, "object": "chat.completion", "created": 0, "model": model,
                             "choices": [{"index": 0, "message": message, "finish_reason": finish,
                                          "logprobs": None}],
                             "usage": usage})


def _chunks(answer_id: str, model: str, message: dict[str, Any], finish: str, usage: dict[str, int],
            include_usage: bool) -> str:
    """The message as OpenAI's streamed ``chat.completion.chunk`` events (one delta, then the finish)."""
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
    head = {"id": answer_id, "object": "chat.completion.chunk", "created": 0, "model": model}
    events = [{**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None, "logprobs": None}]},
              {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish, "logprobs": None}]}]
    if include_usage:
        events.append({**head, "choices": [], "usage": usage})
    return "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"
