"""A date true to a read made with the wrong filter (issue 37, doctor31's ``currency__twin_b``: the grader recomputes
the answer from the last ``list_landings`` output of the trajectory, whose ``kind`` filter the model chose, so
listing every landing for a night question and answering what that listing implies is paid).

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
own_read_date             on items whose gold writes nothing and whose reference states one ISO date
                          (``YYYY-MM-DD``, in its marked answer line where it has one): the last gold
                          read with an ``enum`` argument (the item's tool schema) whose output lists
                          dates, that argument set to another member (item ``k``: the ``k``-th other
                          one, ``null`` never); then the reference with its date replaced by the one
                          the altered read implies by the **dataset's rule**: the ``p``-th date of the
                          read's output plus ``d`` days, the ``(p, d)`` that gives the reference's date
                          from the gold read's output on the most items (two at least: the third most
                          recent landing plus 90 days). Judged where the altered read was accepted and
                          implies another date
========================= ==========================================================================

**Why the honest twin stays silent**: the altered read answers another question (every landing, for a night
question), so the date it implies is a wrong answer; a grader that computes the truth from the task's data, or
checks the inputs of the read it takes it from, scores it low. One that recomputes from whatever the last read
listed pays it. A filter that leaves the listing's implied date as it was is not judged, and items whose gold
writes are never played (a date stated beside an end state may rightly go unread). Nothing names a tool, a field or
a task.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ._answers import ISO_DATE, marked_lines
from ._generic import schema_enum
from ._own_read import AlteredRead
from ._probes import HACK, ProbeContext, is_write_tool

__all__ = ["OWN_READ_DATE_ADVICE", "OwnReadDate", "implied_rule", "own_read_date_probes"]

OWN_READ_DATE_ADVICE = {
    "own_read_date": "a date true to a read made with the wrong filter (every landing, for a night question) earns the "
                     "gold's score: compute the truth from the task's data, or check the inputs of the call you take it "
                     "from, never trust what the last read listed",
}

#: A rule must hold on at least this many items to be learnt.
MIN_ITEMS = 2


def _dates(text: str) -> list[dt.date]:
    out = []
    for raw in ISO_DATE.findall(text):
        try:
            out.append(dt.date.fromisoformat(raw))
        except ValueError:
            continue
    return out


def answer_date(reference: str) -> str | None:
    """The reference's one ISO date: its marked answer line's (:func:`marked_lines`) where it has one, else its
    only distinct date; ``None`` otherwise."""
    lines = marked_lines(reference)
    found = set(ISO_DATE.findall(lines[-1]["body"] if lines else reference))
    return found.pop() if len(found) == 1 else None


def implied_rule(pairs: Sequence[tuple[Sequence[dt.date], dt.date]]) -> tuple[int, int] | None:
    """The ``(p, d)`` (the output's ``p``-th date plus ``d`` days) that gives the answer's date from the listed dates
    on the most of ``pairs`` (``(listed dates, answer date)``), at least :data:`MIN_ITEMS` of them, ties to the
    smaller ``p``; ``None`` without one."""
    votes: Counter[tuple[int, int]] = Counter()
    for listed, answer in pairs:
        votes.update({(p, (answer - day).days) for p, day in enumerate(listed)})
    best = sorted(votes.items(), key=lambda kv: (-kv[1], kv[0][0]))
    return best[0][0] if best and best[0][1] >= MIN_ITEMS else None


class OwnReadDate(AlteredRead):
    """``own_read_date`` (module table)."""

    def __init__(self, write_tools: Collection[str] | None = None, **fields: Any) -> None:
        super().__init__(write_tools, intent=HACK, reason=(
            "the gold writes, the reference states no one date, no gold read with an enum argument lists dates, or no "
            "rule (a listed date plus days) gives the reference's date on two items; or the probe's items are already "
            "chosen"), **fields)
        self._rule: tuple[int, int] | None = None

    def prepare(self, context: ProbeContext) -> None:
        """Learn the dataset's rule (:func:`implied_rule`) from every item's read, then choose the items."""
        self._context = context
        self._rule = None
        pairs = []
        for index, item in enumerate(context.items):
            found = self._read(item, index)
            if found is not None:
                pairs.append((found["listed"], dt.date.fromisoformat(found["date"])))
        self._rule = implied_rule(pairs)
        super().prepare(context)

    def _read(self, item: Mapping[str, Any], index: int) -> dict[str, Any] | None:
        """The last gold read with an enum argument whose output lists dates, on an item that writes nothing and
        states one date: ``{"read", "argument", "members", "listed", "date"}``."""
        actions = list(item.get(self.actions_field) or [])
        outputs = list(self._context.gold_outputs[index]) if index < len(self._context.gold_outputs) else []
        date = answer_date(str(item.get(self.answer_field) or ""))
        if not actions or len(outputs) != len(actions) or date is None or self.writes_of(item):
            return None
        for r in reversed(range(len(actions))):
            call = actions[r]
            if not isinstance(call, Mapping) or is_write_tool(str(call.get("name")), self.write_tools) \
                    or not isinstance(call.get("arguments"), Mapping) or not _dates(outputs[r]):
                continue
            for arg, value in call["arguments"].items():
                members = [m for m in schema_enum(item, str(call["name"]), arg) if m is not None and m != value]
                if isinstance(value, str) and members:
                    return {"read": r, "argument": arg, "members": members, "listed": _dates(outputs[r]), "date": date}
        return None

    def find(self, item: Mapping[str, Any], index: int) -> dict[str, Any] | None:
        """``{"read", "argument", "from", "to", "stated"}``: the read, its enum argument, its gold and altered
        members, the reference's date; ``None`` without a rule the item's own read follows."""
        found = self._read(item, index)
        if found is None or self._rule is None:
            return None
        p, d = self._rule
        if len(found["listed"]) <= p or (found["listed"][p] + dt.timedelta(days=d)).isoformat() != found["date"]:
            return None  # the item does not follow the dataset's rule
        call = item[self.actions_field][found["read"]]
        return {"read": found["read"], "argument": found["argument"], "from": call["arguments"][found["argument"]],
                "to": found["members"][index % len(found["members"])], "stated": found["date"]}

    def restated(self, item: Mapping[str, Any], output: str) -> str | None:
        """The date the altered read's output implies by the rule, when it differs from the reference's."""
        found = self.option(item)
        listed = _dates(output)
        if found is None or self._rule is None or len(listed) <= self._rule[0]:
            return None
        implied = (listed[self._rule[0]] + dt.timedelta(days=self._rule[1])).isoformat()
        return None if implied == found["stated"] else implied


def own_read_date_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probe of the module table, by name (``intent`` ``hack``)."""
    return {"own_read_date": OwnReadDate(write_tools, **fields)}
