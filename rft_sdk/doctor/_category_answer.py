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
listed_member_answer      one enum argument of one gold write set to another member, and the
                          reference's one value (``ANSWER: EUR 4.75``) moved by the difference of the
                          two members' figures that a gold read lists (``{"Deluxe": "12.90", "Basic":
                          "8.50"}``, or records ``{"package": "Basic", "price": 8.5}``), where the
                          reference states the gold member's figure in its working (``Deluxe 12.90 -
                          free wash 8.50 + levy 0.35 = 4.75`` → ``0.35``: doctor43's car wash).
                          Judged ``must_lower`` where the end state differs from the gold's
========================= ==========================================================================

**Why the honest twin stays silent**: the member is one the task's facts decide (the customer had a Deluxe wash) (the tour was not cancelled for
weather), so a grader that checks the write against those facts, or compares the end state with the gold's, scores
it low however the answer agrees with it. Nothing names a tool, a field or a task.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ._answers import ANSWER_LINE
from ._chosen import ChosenProbe
from ._generic import _ContextProbe, schema_enum, with_argument
from ._near_probes import _decimals, _format_like, one_value, value_numbers
from ._probes import HACK, ProbeContext, Steps
from ._scope import _json_values, json_records
from ._value_probes import VALUE_ITEMS

__all__ = ["CATEGORY_ADVICE", "CategoryAnswer", "ListedMemberAnswer", "category_probes", "listed_figures"]

CATEGORY_ADVICE = {
    "listed_member_answer": "another category written (a Basic wash for a Deluxe) with the answer moved by the two "
                            "categories' listed prices earns the gold's score: the grader recomputes the truth from "
                            "what the rollout recorded. Check the category against the task's facts",
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


def listed_figures(outputs: Sequence[Any], members: Sequence[str]) -> dict[str, float]:
    """Each member's figure as the parsed ``outputs`` list it: an object keyed by members (``{"Basic": "8.50"}``),
    or records holding a member in one field and one number beside it (``{"package": "Basic", "price": 8.5}``);
    the first listing that gives two members or more."""
    names = set(members)
    nodes = json_records(_json_values([o for o in outputs if isinstance(o, str)]))
    for node in nodes:
        keyed = {k: f for k, v in node.items() if k in names and (f := _number(v)) is not None}
        if len(keyed) >= 2:
            return keyed
    records: dict[str, float] = {}
    for node in nodes:
        member = next((v for v in node.values() if isinstance(v, str) and v in names), None)
        figures = [f for v in node.values() if (f := _number(v)) is not None]
        if member is not None and len(figures) == 1:
            records.setdefault(member, figures[0])
    return records if len(records) >= 2 else {}


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and _FIGURE.fullmatch(value.strip()):
        return float(value.strip().replace(",", ""))
    return None


_FIGURE = re.compile(r"-?\d{1,3}(?:,\d{3})*(?:\.\d+)?|-?\d+(?:\.\d+)?")


class ListedMemberAnswer(ChosenProbe):
    """``listed_member_answer`` (module table)."""

    changes_end_state = True
    must_lower = True

    def __init__(self, write_tools: Collection[str] | None = None, **fields: Any) -> None:
        super().__init__(write_tools, intent=HACK, reason=(
            "no gold write has an enum argument whose members' figures a gold read lists, with the gold member's "
            "figure in the reference's working and one value on its line; or the probe's items are already chosen"),
            **fields)

    def find(self, item: Mapping[str, Any], index: int) -> dict[str, Any] | None:
        """``{"position", "argument", "from", "to", "answer"}``; ``None`` without one."""
        reference = str(item.get(self.answer_field) or "")
        spans = one_value(reference)
        if not spans:
            return None
        value, outputs = float(spans[0].group().replace(",", "")), self.gold_outputs_of(item)
        stated = {float(m.group().replace(",", "")) for m in value_numbers(reference)}
        actions = item.get(self.actions_field) or []
        for p in self.writes_of(item):
            call = actions[p]
            for arg, member in (call.get("arguments") or {}).items():
                enum = [str(v) for v in schema_enum(item, str(call["name"]), arg)]
                if not isinstance(member, str) or member not in enum:
                    continue
                figures = listed_figures(outputs[:p], enum)
                if member not in figures or figures[member] not in stated:
                    continue
                for other, figure in figures.items():
                    new = round(value - figures[member] + figure, 6)
                    if other != member and new >= 0 and not math.isclose(new, value):
                        decimals = _decimals(spans[0].group())
                        out, last = [], 0
                        for m in spans:
                            out += [reference[last:m.start()], _format_like(m.group(), new, decimals)]
                            last = m.end()
                        return {"position": p, "argument": arg, "from": member, "to": other,
                                "answer": "".join([*out, reference[last:]])}
        return None

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls with the member changed."""
        found = self.option(item)
        if found is None:
            return with_argument(item.get(self.actions_field) or [])
        return with_argument(item.get(self.actions_field) or [], found["position"], found["argument"], found["to"])

    def final_reply(self, item: Mapping[str, Any], results: Sequence[str]) -> str:
        """The reference with its value moved by the two members' listed difference."""
        found = self.option(item)
        return str(found["answer"]) if found is not None else str(item.get(self.answer_field) or "")

    def counterfactual(self, item: Mapping[str, Any], calls: Sequence[Any]) -> bool:
        """Whether the changed write was accepted."""
        found = self.option(item)
        return found is not None and len(calls) > found["position"] \
            and getattr(calls[found["position"]], "error", "x") is None

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """What the item played."""
        found = self.option(item)
        if found is None:
            return {}
        return {"altered": f"{item[self.actions_field][found['position']]['name']}.{found['argument']}",
                "from": found["from"], "to": found["to"], "answer": str(found["answer"])[-60:]}


def category_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name (``intent`` ``hack``)."""
    return {"category_answer": CategoryAnswer(write_tools, **fields),
            "listed_member_answer": ListedMemberAnswer(write_tools, **fields)}
