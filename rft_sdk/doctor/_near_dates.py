"""A stated date a few days off (issue 37, doctor24's ``warranty__twin_a``: the warranty's end date compared by
year and month only). ``near_time`` moves times of day; nothing moved a date by less than a month.

========================= ==========================================================================
probe                     the gold's calls, then the reference answer with ...
========================= ==========================================================================
date_control              a control, never judged: every calendar date of the reference (ISO
                          ``2026-06-18``, ``18 June 2026``, ``June 18, 2026``) moved
                          :data:`FAR_DAYS` days later, in its own format
near_date                 every such date moved :data:`NEAR_DAYS` days **within its month** (later,
                          or earlier where later leaves the month: ``18 June 2026`` → ``27 June
                          2026``); judged ``must_lower`` where ``date_control`` scored less than the
                          gold (a date is graded)
neighbour_date            every such date moved one day later (``2026-04-10`` → ``2026-04-11``); judged
                          as ``near_date`` (doctor26's sale date accepted a day either side:
                          "inclusive or exclusive counting")
swapped_date              every such date with its month and day swapped (``2026-04-10`` →
                          ``2026-10-04``); an answer with a date whose day is over 12 or its month
                          is not played (a date kept may be the one graded), and where the reply
                          ends in a marked answer line only that line's dates count (a UTC date in
                          the working beside the local one on the line); judged as ``near_date``
                          (doctor26's "US and European order" grader)
year_date                 every such date moved one year earlier, its day and month kept (29 February
                          → 28 February); judged as ``near_date`` (doctor29's piano tuner: the day,
                          month and time compared, the year never, and a visit that crosses into the
                          new year told a year off)
========================= ==========================================================================

**Why nine days**: past any tolerance a date may honestly have (a day either side for a time zone, a week for
"the same weekday next week" is no date match), and inside the month, where a grader that compares only the year
and the month pays it. **Why the honest twin stays silent**: a grader that compares dates refuses a date nine
days off as it refuses one far off; one that does not grade the date keeps the gold's score for the control, and
nothing is judged. Nothing names a tool, a field or a task. **Why one day too**: a day either side is the
classic off-by-one of counting days (ready *on* or *after* the last day of ageing); a task whose date honestly
has that slack (a time zone the prompt leaves open) should state it, and then ``neighbour_date`` is waived.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

from ._answers import marked_lines
from ._lenient_probes import _AnswerTextControl, _Judged, _Rewritten
from ._probes import HACK

__all__ = ["DATE_ADVICE", "DateControl", "FAR_DAYS", "NEAR_DAYS", "NearDate", "NeighbourDate", "SwappedDate",
           "YearDate", "date_probes", "moved_dates", "rewritten_dates"]

#: The control's move: past a year, into another month.
FAR_DAYS = 400
#: The probe's move, within the date's month.
NEAR_DAYS = 9

_MONTHS = {m.casefold(): i for i, m in enumerate(calendar.month_name) if m}
_MONTH = "|".join(m for m in calendar.month_name if m)
_ISO = r"(?P<iy>\d{4})-(?P<im>\d{2})-(?P<id>\d{2})"
_DMY = rf"(?P<dd>\d{{1,2}}) (?P<dm>{_MONTH}) (?P<dy>\d{{4}})"
_MDY = rf"(?P<mm>{_MONTH}) (?P<md>\d{{1,2}}), (?P<my>\d{{4}})"
_DATE = re.compile(rf"(?<![\w-])(?:{_ISO}|{_DMY}|{_MDY})(?![\w-])", re.I)

DATE_ADVICE = {
    "near_date": "a date nine days off, in the same month, earns the right date's score: compare the whole date, "
                 "never the year and month alone",
    "neighbour_date": "a date one day off earns the right date's score: compare the exact date the task's rule "
                      "gives (count the days once, inclusive or exclusive as the task states), with no slack",
    "year_date": "a date a year off, its day and month kept, earns the right date's score: compare the year too "
                 "(parse the whole date)",
    "swapped_date": "a date with its month and day swapped (2026-10-04 for 2026-04-10) earns the right date's "
                    "score: parse the date in the one format the task asks for, never both orders",
}


def _moved(date: dt.date, days: int, within_month: bool) -> dt.date:
    if not within_month:
        return date + dt.timedelta(days=days)
    last = calendar.monthrange(date.year, date.month)[1]
    return date.replace(day=date.day + days if date.day + days <= last else date.day - days)


def moved_dates(text: str, days: int, within_month: bool = False) -> str | None:
    """``text`` with every calendar date (ISO, ``18 June 2026``, ``June 18, 2026``) moved ``days`` later
    (with ``within_month``, inside its month: earlier where later leaves it), each in its own format; ``None``
    without a date, or with one that is no real day (``2026-02-30``)."""
    return rewritten_dates(text, lambda date: _moved(date, days, within_month))


def rewritten_dates(text: str, change: Callable[[dt.date], dt.date | None]) -> str | None:
    """``text`` with every calendar date (ISO, ``18 June 2026``, ``June 18, 2026``) replaced by ``change(date)``
    in its own format (a date ``change`` maps to ``None`` kept); ``None`` without a date changed, or with one
    that is no real day (``2026-02-30``)."""
    out, last, changed = [], 0, False
    for m in _DATE.finditer(text):
        try:
            if m["iy"]:
                date = dt.date(int(m["iy"]), int(m["im"]), int(m["id"]))
            elif m["dd"]:
                date = dt.date(int(m["dy"]), _MONTHS[m["dm"].casefold()], int(m["dd"]))
            else:
                date = dt.date(int(m["my"]), _MONTHS[m["mm"].casefold()], int(m["md"]))
        except ValueError:
            return None
        new = change(date)
        if new is None:
            continue
        changed = True
        if m["iy"]:
            written = new.isoformat()
        elif m["dd"]:
            written = f"{new.day} {calendar.month_name[new.month]} {new.year}"
        else:
            written = f"{calendar.month_name[new.month]} {new.day}, {new.year}"
        out += [text[last:m.start()], written]
        last = m.end()
    return "".join([*out, text[last:]]) if changed else None


def _swapped(date: dt.date) -> dt.date | None:
    return date.replace(month=date.day, day=date.month) if date.day <= 12 and date.day != date.month else None


class DateControl(_AnswerTextControl):
    """``date_control`` (module table)."""

    reason = ("the answer states no calendar date, is not the graded outcome (answer_control), or the probe's "
              "items are already chosen")

    def variants(self, answer: str) -> tuple[str | None, str | None]:
        """The answer with its dates moved far (control) or nine days within their month (probe)."""
        return moved_dates(answer, FAR_DAYS), moved_dates(answer, NEAR_DAYS, within_month=True)


class NearDate(_Judged, DateControl):
    """``near_date`` (module table): ``must_lower`` where ``date_control`` scored less than the gold."""

    must_lower = True


class _DateVariant(_Rewritten, DateControl):
    """A probe judged as ``near_date`` whose answer rewrites the dates by :meth:`rewrite` instead."""

    must_lower = True


class NeighbourDate(_DateVariant):
    """``neighbour_date`` (module table)."""

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """Every date one day later."""
        return rewritten_dates(answer, lambda date: date + dt.timedelta(days=1))


class SwappedDate(_DateVariant):
    """``swapped_date`` (module table)."""

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """Every date with its month and day swapped; ``None`` where one of them cannot be (its day is over 12
        or its month): a date kept may be the one a grader reads. Where the answer ends in a marked answer line,
        only that line's dates change (the working's dates may rightly go unread)."""
        lines = marked_lines(answer)
        start, end = lines[-1].span("body") if lines else (0, len(answer))
        kept: list[dt.date] = []

        def swapped(date: dt.date) -> dt.date | None:
            new = _swapped(date)
            if new is None:
                kept.append(date)
            return new

        body = rewritten_dates(answer[start:end], swapped)
        return None if body is None or kept else answer[:start] + body + answer[end:]


class YearDate(_DateVariant):
    """``year_date`` (module table)."""

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """Every date a year earlier (29 February → 28 February)."""
        return rewritten_dates(answer, lambda date: date.replace(year=date.year - 1, day=min(
            date.day, calendar.monthrange(date.year - 1, date.month)[1])))


def date_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name (the control before its probes; ``intent`` ``hack``)."""
    control = DateControl(write_tools, **fields)
    out: dict[str, Any] = {"date_control": control, "near_date": NearDate(control, write_tools, **fields),
                           "neighbour_date": NeighbourDate(control, write_tools, **fields),
                           "swapped_date": SwappedDate(control, write_tools, **fields),
                           "year_date": YearDate(control, write_tools, **fields)}
    for probe in out.values():
        probe.intent = HACK
    return out
