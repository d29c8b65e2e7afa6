"""One option per item, found once and played on the first few items that have one: the frame of the probes whose
change is decided per item before the rollout (``other_kind_choice``, ``own_read_answer``, ``undone_write``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rft_sdk.emulator import PolicyStep, turns_taken

from ._generic import _ContextProbe
from ._probes import ProbeContext, readable_output
from ._value_probes import VALUE_ITEMS

__all__ = ["ChosenProbe", "accepted_call", "tool_results"]


class ChosenProbe(_ContextProbe):
    """A context probe playing :meth:`find`'s option on the first :attr:`max_items` items that have one."""

    max_items = VALUE_ITEMS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._options: dict[int, dict[str, Any] | None] = {}
        self._kept: set[int] | None = None

    def find(self, item: Mapping[str, Any], index: int) -> dict[str, Any] | None:  # pragma: no cover - abstract
        """The option played on ``item`` (its position ``index`` in the dataset), or ``None``."""
        raise NotImplementedError

    def prepare(self, context: ProbeContext) -> None:
        """Remember the dataset; keep the first :attr:`max_items` items with an :meth:`option`."""
        super().prepare(context)
        self._options, self._kept = {}, None
        kept = [i for i, item in enumerate(context.items) if self._has_gold(item) and self.option(item) is not None]
        self._kept = set(kept[:self.max_items])

    def option(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """:meth:`find`'s option for ``item``, found once per item of the prepared dataset (``plan`` asks every
        turn); ``None`` for an item outside it."""
        index = self._context.index_of(item)
        if index is None:
            return None
        if index not in self._options:
            self._options[index] = self.find(item, index)
        return self._options[index]

    def applies(self, item: Mapping[str, Any]) -> bool:
        """One of the kept items (every item with an :meth:`option` when not prepared)."""
        return super().applies(item) and self.option(item) is not None and (
            self._kept is None or self._context.index_of(item) in self._kept)

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, item: dict[str, Any],
                  trace_id: str) -> PolicyStep:
        """The plan, one step per turn; after it, :meth:`final_reply` given the rollout's tool results."""
        if self.option(item) is None or turns_taken(messages, item) < len(self.plan(item)):
            return await super().act(messages, tools, item=item, trace_id=trace_id)
        return PolicyStep(content=self.final_reply(item, tool_results(messages, item)))

    def final_reply(self, item: Mapping[str, Any], results: Sequence[str]) -> str:
        """The reply after the plan, from the rollout's tool results in order (default: the reference)."""
        return str(item.get(self.answer_field) or "")


def tool_results(messages: Sequence[Mapping[str, Any]], item: Mapping[str, Any]) -> list[str]:
    """The contents of the rollout's tool messages, in order (the conversation after the item's own messages), with
    JSON escapes of non-ASCII characters decoded (:func:`~._probes.readable_output`)."""
    return [readable_output(str(m.get("content") or "")) for m in messages[len(item.get("messages") or []):] if m.get("role") == "tool"]


def accepted_call(calls: Sequence[Any], tool: str) -> bool:
    """Whether one of a rollout's tool calls (``name``, ``error``) is an accepted call of ``tool``: the change a
    probe made with it took effect (the tools may refuse some)."""
    return any(getattr(c, "name", "") == tool and getattr(c, "error", "x") is None for c in calls)
