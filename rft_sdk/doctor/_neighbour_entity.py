"""The task done on the entity next to the one asked for (issue 37, doctor32's ``lifts__twin_b``: the grader compares
the changed rows with their key columns dropped, so recording the inspection of lift ``LC-2`` for the ``LC-1`` the
user named is paid).

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
neighbour_entity          on items whose gold writes: an entity id that the user's messages name and
                          every gold write passes (``LC-1``, ``T-0042``: a string argument value
                          ending in digits) replaced, in every gold call and in the reference answer,
                          by its neighbour (the number one higher, its width kept: ``LC-2``,
                          ``T-0043``) that no message and no gold call names. Judged ``must_lower``
                          where the end state differs from the gold's (the neighbour exists and the
                          writes took effect on it)
========================= ==========================================================================

**Why the honest twin stays silent**: the entity the user asked for is left untouched and another one is changed:
a grader that grades the end state scores it low, whatever it does with the extra entity. A neighbour that does
not exist makes the tools refuse the writes; the end state is then the start's and nothing is judged. Only ids the
user names are moved (never one the model chooses among several valid ones: a free slot, a seat). Nothing names a
tool, a field or a task.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from ._answers import prompt_texts
from ._value_swap import ValueSwap, says

__all__ = ["NEIGHBOUR_ENTITY_ADVICE", "NEIGHBOUR_ITEMS", "NeighbourEntity", "neighbour_id"]

NEIGHBOUR_ENTITY_ADVICE = {
    "neighbour_entity": "the task done on the entity next to the one asked for (lift LC-2 inspected for LC-1) earns "
                        "the gold's score: compare the end state with its keys (which entity changed), not the "
                        "changed values alone",
}

#: ``neighbour_entity`` plays at most this many items.
NEIGHBOUR_ITEMS = 8
#: An entity id: letters (or a prefix with separators) and a trailing number.
_ID = re.compile(r"^(?=.*[A-Za-z])([A-Za-z0-9_\-./#]*?)(\d+)$")


def neighbour_id(value: str) -> str | None:
    """``value``'s neighbour: its trailing number one higher, written as wide (``LC-1`` → ``LC-2``, ``T-0099`` →
    ``T-0100``); ``None`` where ``value`` is no id with letters and a trailing number (``42``, ``2025-03-14``)."""
    m = _ID.match(value)
    if not m or re.fullmatch(r"[\d\-./]+", value):
        return None
    digits = m.group(2)
    return f"{m.group(1)}{int(digits) + 1:0{len(digits)}d}"


class NeighbourEntity(ValueSwap):
    """``neighbour_entity`` (module table)."""

    described = "moved"

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = NEIGHBOUR_ITEMS,
                 **fields: Any) -> None:
        super().__init__(write_tools, max_items, "the gold writes nothing, no id the user names is passed by every "
                         "gold write, or the probe's items are already chosen", **fields)

    def swap(self, item: Mapping[str, Any]) -> tuple[str, str] | None:
        """``(the id, its neighbour)`` of the module table, the first such argument of the first write; ``None``
        without one."""
        writes = self.writes_of(item)
        actions = item.get(self.actions_field) or []
        if not writes:
            return None
        asked = "\n".join(prompt_texts(item, ("user",)))
        prompt = "\n".join(prompt_texts(item))
        passed = {v for a in actions if isinstance(a, Mapping) and isinstance(a.get("arguments"), Mapping)
                  for v in a["arguments"].values() if isinstance(v, str)}
        first = actions[writes[0]].get("arguments")
        for value in (first.values() if isinstance(first, Mapping) else ()):
            if not isinstance(value, str) or not says(asked, value):
                continue
            other = neighbour_id(value)
            if other is None or other in passed or says(prompt, other):
                continue
            if all(isinstance(actions[p].get("arguments"), Mapping) and value in actions[p]["arguments"].values()
                   for p in writes):
                return value, other
        return None


def neighbour_entity_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probe of the module table, by name."""
    return {"neighbour_entity": NeighbourEntity(write_tools, **fields)}
