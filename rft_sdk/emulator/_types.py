"""Typed records that cross the emulator ↔ policy ↔ trainer seam.

Source: ``docs/ARCHITECTURE.md`` ("Emulator ↔ trainer seam") and
``docs/hosted-protocol.md`` section 3 (the tool call body carries ``id``,
``call_id``, ``name`` and ``arguments`` as a JSON string).

* :class:`ToolCall` — one function call a policy asks for.
* :class:`PolicyStep` — one model turn as a policy answers it.
* :class:`StepRecord` — one turn as the rollout loop recorded it (normalised).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PolicyStep", "StepRecord", "ToolCall", "make_tool_call"]

_FIELDS = frozenset({"call_id", "name", "arguments", "id"})


@dataclass(frozen=True)
class ToolCall:
    """One tool call, as sent to the tool endpoint.

    Attributes:
        call_id: ``"call_<hex>"``; the chat-completions ``tool_call_id`` of the
            answer, and the ``call_id`` of the request body.
        name: the job tool's name.
        arguments: the arguments as a JSON string (sent verbatim; a string
            that is not valid JSON is judged by the tool endpoint).
        id: ``"fc_<hex>"``, the Responses-style item id of the request body.
    """

    call_id: str
    name: str
    arguments: str
    id: str

    def __getitem__(self, key: str) -> str:
        """Dict-style read, ``call["name"]``, for code written against the former dict shape.

        Raises:
            KeyError: ``key`` is not one of ``call_id``, ``name``, ``arguments``, ``id``.
        """
        if key not in _FIELDS:
            raise KeyError(key)
        value: str = getattr(self, key)
        return value

    def to_chat(self) -> dict[str, Any]:
        """The chat-completions form ``{"id": call_id, "type": "function", "function": {"name", "arguments"}}``."""
        return {"id": self.call_id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


def make_tool_call(name: str, arguments: dict[str, Any] | str, *, id: str | None = None,
                   call_id: str | None = None) -> ToolCall:
    """Build a :class:`ToolCall`; a dict ``arguments`` is JSON-encoded, missing ids are minted.

    Minted ids share one uuid4: ``id = "fc_<hex>"``, ``call_id = "call_<hex>"``.
    """
    hex_ = uuid.uuid4().hex
    args = arguments if isinstance(arguments, str) else json.dumps(arguments, separators=(",", ":"))
    return ToolCall(call_id=call_id or f"call_{hex_}", name=name, arguments=args, id=id or f"fc_{hex_}")


@dataclass
class PolicyStep:
    """One model turn, as a policy returns it.

    Attributes:
        content: final answer text when ``tool_calls`` is empty (may also
            accompany tool calls as visible text).
        tool_calls: :class:`ToolCall` s. Dicts ``{"name", "arguments", "id"?,
            "call_id"?}`` are accepted too (``arguments`` a JSON string or a
            dict) and coerced to :class:`ToolCall` by ``check_step`` when the
            rollout loop reads the step (the :class:`StepRecord` holds only
            :class:`ToolCall` s).
        extra: opaque, kept on the step record (e.g. token ids, logprobs).
    """

    content: str | None = None
    tool_calls: list[ToolCall | dict[str, Any]] = field(default_factory=list)
    extra: Any = None


@dataclass
class StepRecord:
    """One policy turn of a rollout: its text, normalised tool calls and the policy's opaque ``extra``."""

    index: int
    content: str | None
    tool_calls: list[ToolCall]
    extra: Any = None
