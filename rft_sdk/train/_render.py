"""Render a conversation compactly for a small model, and parse its output.

Rendering (one line per turn; ``<bos>``/``<eos>`` are the tokenizer's special ids)::

    <bos>T:get_order_status(order_id)            tools: names and argument names only
    S:You look up orders.                        system / developer message
    U:What is the status of order #W2611340?     user message
    A:<call>get_order_status {"order_id": "#W2611340"}</call><eos>
    R:processed                                  tool output (truncated)
    A:                                           the policy continues here

Output syntax (what the policy generates after ``A:``, up to ``<eos>``):

- one or more ``<call>NAME {JSON object}</call>`` blocks → tool calls (text
  around the blocks is ignored);
- anything else → a final answer, the stripped text. Output that looks like a
  call but does not parse (unclosed tag, arguments that are not a JSON object)
  also becomes a final answer, as on the hosted side, where the grader scores it.

Messages may be chat-completions style (``role`` + ``content`` + ``tool_calls``
with ``function.name``/``function.arguments``, ``role: "tool"`` results) or
Responses style items (``type: "function_call"`` / ``"function_call_output"``).
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

from rft_sdk.emulator import ToolCall

__all__ = ["ParsedOutput", "format_call", "parse_output", "render_prompt", "render_tools"]

_CALL_RE = re.compile(r"<call>\s*([A-Za-z0-9_.\-]+)\s*(.*?)</call>", re.DOTALL)
_ROLE_TAGS = {"system": "S", "developer": "S", "user": "U"}


class _Tokenizer(Protocol):
    bos_id: int
    eos_id: int

    def encode(self, text: str) -> list[int]: ...


@dataclass
class ParsedOutput:
    """A parsed completion: ``tool_calls`` (:class:`ToolCall` s, arguments a JSON string) or ``content``."""

    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)


def format_call(name: str, arguments: dict[str, Any] | str) -> str:
    """``<call>NAME {canonical JSON}</call>``; ``arguments`` may be a JSON string (kept if it does not parse)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return f"<call>{name} {arguments}</call>"
    return f"<call>{name} {json.dumps(arguments, ensure_ascii=False)}</call>"


def parse_output(text: str) -> ParsedOutput:
    """Parse generated text (without ``<eos>``) into tool calls or a final answer.

    Tool calls come back as :class:`ToolCall` s (``id`` ``"fc_…"``, ``call_id`` ``"call_…"``,
    ``arguments`` a JSON string: the hosted wire shape). Never raises: output that is not a well-formed call
    becomes a final answer.
    """
    if "<call>" not in text:
        return ParsedOutput(content=text.strip())
    calls: list[ToolCall] = []
    matches = list(_CALL_RE.finditer(text))
    if not matches or text.count("<call>") != len(matches):
        return ParsedOutput(content=text.strip())
    for m in matches:
        try:
            args = json.loads(m.group(2)) if m.group(2).strip() else {}
        except json.JSONDecodeError:
            return ParsedOutput(content=text.strip())
        if not isinstance(args, dict):
            return ParsedOutput(content=text.strip())
        suffix = uuid.uuid4().hex[:12]
        calls.append(ToolCall(call_id=f"call_{suffix}", name=m.group(1), arguments=json.dumps(args, ensure_ascii=False),
                              id=f"fc_{suffix}"))
    return ParsedOutput(content=None, tool_calls=calls)


def render_tools(tools: list[dict[str, Any]]) -> str:
    """``"T:name(arg1,arg2);other()\\n"`` from chat-completions or flat tool definitions ("" if none)."""
    parts = []
    for t in tools:
        fn = t.get("function", t)
        props = (fn.get("parameters") or {}).get("properties") or {}
        parts.append(f"{fn.get('name', '?')}({','.join(props)})")
    return f"T:{';'.join(parts)}\n" if parts else ""


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return json.dumps(content, ensure_ascii=False)


def _call_name_args(call: dict[str, Any]) -> tuple[str, Any]:
    fn = call.get("function", call)
    return str(fn.get("name", "?")), fn.get("arguments", {})


def render_prompt(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]], tokenizer: _Tokenizer, *, max_tool_chars: int = 200
) -> list[int]:
    """Token ids of the rendered conversation, ending with ``"A:"`` (the policy's turn).

    Args:
        messages: the conversation so far (chat-completions or Responses items).
        tools: tool definitions (chat-completions ``{"type": "function", "function": {...}}`` or flat).
        tokenizer: provides ``encode``, ``bos_id``, ``eos_id``.
        max_tool_chars: tool outputs longer than this many characters are cut.

    Returns: ``list[int]`` starting with ``bos_id``.

    Raises:
        ValueError: a message has an unknown role/type.
    """
    ids = [tokenizer.bos_id]
    buf = render_tools(tools)

    def flush_assistant(text: str) -> None:
        nonlocal buf
        ids.extend(tokenizer.encode(buf + "A:" + text))
        ids.append(tokenizer.eos_id)
        buf = ""

    pending_calls: list[str] = []
    for m in messages:
        kind = m.get("type")
        if kind == "function_call":  # Responses item: one call per item, consecutive ones form one turn
            name, args = _call_name_args(m)
            pending_calls.append(format_call(name, args))
            continue
        if pending_calls:
            flush_assistant("".join(pending_calls))
            pending_calls = []
        role = m.get("role")
        if kind == "function_call_output" or role == "tool":
            out = _text(m.get("output", m.get("content")))
            buf += f"R:{out[:max_tool_chars]}\n"
        elif role in _ROLE_TAGS:
            buf += f"{_ROLE_TAGS[role]}:{_text(m.get('content'))}\n"
        elif role == "assistant":
            calls = m.get("tool_calls") or []
            text = "".join(format_call(*_call_name_args(c)) for c in calls) if calls else _text(m.get("content"))
            flush_assistant(text)
        else:
            raise ValueError(f"cannot render message with role={role!r} type={kind!r}")
    if pending_calls:
        flush_assistant("".join(pending_calls))
    ids.extend(tokenizer.encode(buf + "A:"))
    return ids
