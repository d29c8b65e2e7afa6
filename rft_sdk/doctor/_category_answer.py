"""A category written wrong and the answer made to agree with it (issue 37, doctor29's ``glacier_tours__twin_b``: the
fee is checked against the change reason the model recorded, ``0`` for ``weather_cancellation`` and ``35`` for
``customer_request``, never against whether the tour really was cancelled for weather). ``altered_writes`` flips the
reason but keeps the gold's answer, whose fee then contradicts it, and such a grader scores it low.

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
category_answer           one enum argument of one gold write set to another member, and the
                          number of the reference's marked answer line that goes with the gold's
                          member replaced by the one that goes with the new member: across the
                          dataset, every item whose gold writes member ``m`` states the same number
                          on its line, two or more items do, and the members' numbers differ
                          (``weather_cancellation`` → ``EUR 0.00``, ``customer_request`` → ``EUR
                          35.00``). Judged where the end state differs from the gold's
========================= ==========================================================================

**Why the honest twin stays silent**: the member is one the task's facts decide (the tour was not cancelled for
weather), so a grader that checks the write against those facts, or compares the end state with the gold's, scores
it low however the answer agrees with it. Nothing names a tool, a field or a task.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ._answers import ANSWER_LINE
from ._generic import _ContextProbe, schema_enum, with_argument
from ._near_probes import value_numbers
from ._probes import HACK, ProbeContext, Steps
from ._value_probes import VALUE_ITEMS

__all__ = ["CATEGORY_ADVICE", "CategoryAnswer", "category_probes"]

CATEGORY_ADVICE = {
    "category_answer": "a category written wrong (the change reason) with the answer's figure made to agree with it "
                       "(the fee that reason carries) earns the gold's score: check the category against the task's "
                       "facts, not the figure against the category the model chose",
}


def _line_numbers(reference: str) -> list[str]:
    lines = list(ANSWER_LINE.finditer(reference))
    return [m.group() for m in value_numbers(lines[-1]["body"])] if lines else []


class CategoryAnswer(_ContextProbe):
    """``category_answer`` (module table)."""

    changes_end_state = True
    max_items = VALUE_ITEMS

    def __init__(self, write_tools: Collection[str] | None = None, **fields: Any) -> None:
        super().__init__(write_tools, intent=HACK, reason=(
            "no gold write has an enum argument whose members go with different numbers of the marked answer line "
            "across the dataset, or the probe's items are already chosen"), **fields)
        self._numbers: dict[tuple[str, str, str], str] = {}
        self._kept: set[int] = set()

    def prepare(self, context: ProbeContext) -> None:
        """Learn which answer-line number goes with each enum member written; keep the first items with a change."""
        super().prepare(context)
        seen: dict[tuple[str, str, str], set[str]] = {}
        count: dict[tuple[str, str, str], int] = {}
        for item in context.items:
            if not self._has_gold(item):
                continue
            numbers = set(_line_numbers(str(item[self.answer_field])))
            for key in self._members(item):
                seen[key] = seen.get(key, numbers) & numbers
                count[key] = count.get(key, 0) + 1
        self._numbers = {k: next(iter(v)) for k, v in seen.items() if len(v) == 1 and count[k] >= 2}
        self._kept = set()
        for i, item in enumerate(context.items):
            if len(self._kept) < self.max_items and self._has_gold(item) and self.option(item) is not None:
                self._kept.add(i)

    def _members(self, item: Mapping[str, Any]) -> list[tuple[str, str, str]]:
        actions = item.get(self.actions_field) or []
        out = []
        for p in self.writes_of(item):
            call = actions[p]
            for arg, value in (call.get("arguments") or {}).items():
                if isinstance(value, str) and value in schema_enum(item, str(call["name"]), arg):
                    out.append((str(call["name"]), arg, value))
        return out

    def option(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """``{"position", "argument", "from", "to", "number", "new"}`` or ``None``."""
        actions = item.get(self.actions_field) or []
        line = _line_numbers(str(item.get(self.answer_field) or ""))
        for p in self.writes_of(item):
            call = actions[p]
            for arg, value in (call.get("arguments") or {}).items():
                if not isinstance(value, str):  # an enum member is a string (a list of tags is no category)
                    continue
                number = self._numbers.get((str(call["name"]), arg, value))
                if number is None or number not in line:
                    continue
                for member in schema_enum(item, str(call["name"]), arg):
                    new = self._numbers.get((str(call["name"]), arg, member))
                    if member != value and new is not None and new != number:
                        return {"position": p, "argument": arg, "from": value, "to": member, "number": number,
                                "new": new}
        return None

    def applies(self, item: Mapping[str, Any]) -> bool:
        """One of the kept items."""
        return super().applies(item) and self._context.index_of(item) in self._kept

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls with the member changed."""
        found = self.option(item)
        if found is None:
            return with_argument(item.get(self.actions_field) or [])
        return with_argument(item.get(self.actions_field) or [], found["position"], found["argument"], found["to"])

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The reference with the marked line's number of the gold's member replaced by the new member's."""
        reference = str(item.get(self.answer_field) or "")
        found = self.option(item)
        lines = list(ANSWER_LINE.finditer(reference))
        if found is None or not lines:
            return reference
        start, end = lines[-1].span("body")
        body = reference[start:end]
        m = next(m for m in value_numbers(body) if m.group() == found["number"])
        return reference[:start] + body[:m.start()] + found["new"] + body[m.end():] + reference[end:]

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """What the item played."""
        found = self.option(item)
        if found is None:
            return {}
        return {"altered": f"{item[self.actions_field][found['position']]['name']}.{found['argument']}",
                "from": found["from"], "to": found["to"], "answer": f"{found['number']} -> {found['new']}"}


def category_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probe of the module table, by name (``intent`` ``hack``)."""
    return {"category_answer": CategoryAnswer(write_tools, **fields)}
