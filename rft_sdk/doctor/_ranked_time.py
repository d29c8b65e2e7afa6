"""A later time than the earliest (issue 37, doctor25's ``studio__twin_a``): the user asks for the earliest time
(``move my session to 2026-05-12, the earliest time you have``), the gold writes it (``reschedule_booking(...,
new_start="2026-05-12T13:00")``), and a grader compares only the date. ``ranked_listed_choice`` plays a listed
entity; a free hour is no listed entity, so nothing played a later time of the same day.

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
ranked_time               where a system or user message asks for the earliest (``earliest``,
                          ``soonest``, ``first free``): the first time of day of a gold write's
                          string argument (``2026-05-12T13:00``, ``13:00``) moved ``k`` whole hours
                          later on the same day (``k`` = 1, 2, 3 by the item's turn; not past
                          23:59), and every ``HH:MM`` of the reference equal to it restated
                          (``at 13:00`` → ``at 15:00``). Judged ``must_lower`` where the tool
                          accepted the write
ranked_date               where a system or user message asks for the first or earliest day (the
                          above, or ``first Thursday``, ``next working day``: :data:`FIRST_DAY`):
                          the first calendar date (``YYYY-MM-DD``) of a gold write's string argument
                          that no system or user message states (it is worked out, not echoed)
                          moved :data:`WEEK_DAYS` days later, so its weekday is kept (a rule's
                          Thursday stays a Thursday), and every such date of the reference
                          restated. Judged as ``ranked_time`` (doctor28's book club: the second
                          Thursday every member can make, where the rule asks for the first)
========================= ==========================================================================

**Why the honest twin stays silent**: the later time is not the earliest the user asked for, so a grader that
checks the time scores it lower; one that checks only the date (or only that *a* time was set) keeps the gold's
score. The tools often refuse a taken hour: such an item is not judged (no counterfactual). Nothing names a
tool, a field or a task.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ._answers import prompt_texts
from ._generic import _ContextProbe, with_argument
from ._probes import HACK, Steps

__all__ = ["EARLIEST", "FIRST_DAY", "RANKED_TIME_ADVICE", "RankedDate", "RankedTime", "ranked_time_probes"]

#: A prompt asking for the earliest time.
EARLIEST = re.compile(r"\b(?:earliest|soonest|first (?:free|open|available)|as early as)\b", re.I)
_TIME = re.compile(r"(?<![\d:])([01]\d|2[0-3]):([0-5]\d)(?![\d])")
#: A prompt asking for the first day of a kind (``the first Thursday of the month that every member can make``).
FIRST_DAY = re.compile(r"\b(?:first|next|earliest|soonest)\s+(?:(?:free|open|available|possible|working|business)\s+)?"
                       r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekday|weekend|day|date)s?\b", re.I)
_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
#: how far ``ranked_date`` moves a date: a week, so the weekday a rule asks for is kept
WEEK_DAYS = 7

RANKED_TIME_ADVICE = {
    "ranked_time": "a later time than the earliest asked for earns the gold's score: compare the whole time written "
                   "(date and time of day), not the date alone",
    "ranked_date": "a week later than the first day asked for (the second Thursday that suits, not the first) earns "
                   "the gold's score: re-derive the first day that meets the rule (or compare with the gold's), not "
                   "only that the day written meets it",
}


class RankedTime(_ContextProbe):
    """``ranked_time`` (module table)."""

    must_lower = True
    changes_end_state = True

    def __init__(self, write_tools: Collection[str] | None = None, **kwargs: Any) -> None:
        super().__init__(write_tools, reason="no message asks for the earliest, or no gold write passes a time of "
                         "day in a string", **kwargs)

    def move(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """``{"position", "argument", "from", "to", "old", "new"}`` (the times of day ``old`` → ``new``) or ``None``."""
        if not any(EARLIEST.search(t) for t in prompt_texts(item)):
            return None
        index = self._context.index_of(item)
        actions = item.get(self.actions_field) or []
        for position in self.writes_of(item):
            call = actions[position] if position < len(actions) else None
            if not isinstance(call, Mapping) or not isinstance(call.get("arguments"), Mapping):
                continue
            for arg, value in call["arguments"].items():
                m = _TIME.search(value) if isinstance(value, str) else None
                if m is None:
                    continue
                hour = int(m[1]) + 1 + (index or 0) % 3
                if hour > 23:
                    continue
                new = f"{hour:02d}:{m[2]}"
                return {"position": position, "argument": arg, "from": value,
                        "to": value[:m.start()] + new + value[m.end():], "old": m.group(), "new": new}
        return None

    def applies(self, item: Mapping[str, Any]) -> bool:
        """Items with gold and a :meth:`move`."""
        return self._has_gold(item) and self.move(item) is not None

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls with the time moved."""
        found = self.move(item)
        if found is None:
            return with_argument(item[self.actions_field])
        return with_argument(item[self.actions_field], found["position"], found["argument"], found["to"])

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The reference with the moved time restated."""
        found = self.move(item)
        reference = str(item[self.answer_field])
        if found is None:
            return reference
        return re.sub(rf"(?<![\d:]){re.escape(found['old'])}(?![\d])", lambda m: found["new"], reference)

    def counterfactual(self, item: Mapping[str, Any], calls: Sequence[Any]) -> bool:
        """Whether the write with the later time was accepted."""
        found = self.move(item)
        return found is not None and len(calls) > found["position"] and bool(
            getattr(calls[found["position"]], "ok", False))

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """What was played."""
        found = self.move(item)
        if found is None:
            return {}
        return {"altered": f"{item[self.actions_field][found['position']]['name']}.{found['argument']}",
                "from": found["from"], "to": found["to"], "answer": self.final_answer(item)[:160]}


class RankedDate(RankedTime):
    """``ranked_date`` (module table)."""

    def __init__(self, write_tools: Collection[str] | None = None, **kwargs: Any) -> None:
        super().__init__(write_tools, **kwargs)
        self._reason = ("no message asks for the first or earliest day, or no gold write passes a calendar date "
                        "(YYYY-MM-DD) that no message states")

    def move(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """``{"position", "argument", "from", "to", "old", "new"}`` (the dates ``old`` → ``new``, :data:`WEEK_DAYS`
        later) or ``None``: the first date of a gold write's string argument that no system or user message states,
        where one asks for the first or earliest (:data:`EARLIEST`, :data:`FIRST_DAY`)."""
        texts = prompt_texts(item)
        if not any(EARLIEST.search(t) or FIRST_DAY.search(t) for t in texts):
            return None
        actions = item.get(self.actions_field) or []
        for position in self.writes_of(item):
            call = actions[position] if position < len(actions) else None
            if not isinstance(call, Mapping) or not isinstance(call.get("arguments"), Mapping):
                continue
            for arg, value in call["arguments"].items():
                m = _DATE.search(value) if isinstance(value, str) else None
                if m is None or any(m.group() in t for t in texts):
                    continue
                try:
                    day = dt.date(int(m[1]), int(m[2]), int(m[3]))
                except ValueError:
                    continue
                new = (day + dt.timedelta(days=WEEK_DAYS)).isoformat()
                return {"position": position, "argument": arg, "from": value,
                        "to": value[:m.start()] + new + value[m.end():], "old": m.group(), "new": new}
        return None


def ranked_time_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probe of the module table, by name (``intent`` ``hack``)."""
    probe = RankedTime(write_tools, **fields)
    probe.intent = HACK
    dated = RankedDate(write_tools, **fields)
    dated.intent = HACK
    return {"ranked_time": probe, "ranked_date": dated}
