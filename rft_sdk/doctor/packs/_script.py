"""A scripted probe: a fixed sequence of tool-call turns computed from the item
(and the outputs the earlier turns got), then a final answer."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["Call", "ScriptProbe", "tool_outputs"]

Call = dict[str, Any]  # {"name": str, "arguments": dict}
#: ``plan(item, outputs) -> turns``: ``outputs`` are the tool outputs received so far, in order.
Plan = Callable[[Mapping[str, Any], Sequence[str]], list[list[Call]]]


def tool_outputs(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The ``content`` of every ``{"role": "tool"}`` message, in order."""
    return [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]


@dataclasses.dataclass
class ScriptProbe:
    """A probe playing one known hack through the task's own tools.

    Attributes:
        family: the hack family (e.g. ``"exit-code forgery"``).
        how: one line: what the probe does.
        source: where the hack was reported (a paper, a post, an issue).
        plan: builds the turns (see :data:`Plan`); it is called every turn, so a
            later turn may depend on what an earlier one returned.
        needs: item fields the hack needs; items without them are skipped.
        answer: the final answer text.
    """

    family: str
    how: str
    source: str
    plan: Plan
    needs: tuple[str, ...] = ()
    answer: str = "Done: the change is implemented and every test passes."

    def applies(self, item: Mapping[str, Any]) -> bool:
        """Whether ``item`` has every field in ``needs`` (non-empty)."""
        return all(item.get(k) for k in self.needs)

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, item: dict[str, Any],
                  trace_id: str) -> Any:
        """The next turn of the plan, or the final answer."""
        from rft_sdk.emulator import PolicyStep, make_tool_call, turns_taken

        turn = turns_taken(messages, item)
        turns = self.plan(item, tool_outputs(messages[len(item.get("messages", [])):]))
        if turn < len(turns) and turns[turn]:
            return PolicyStep(tool_calls=[make_tool_call(c["name"], c.get("arguments", {})) for c in turns[turn]])
        return PolicyStep(content=self.answer)
