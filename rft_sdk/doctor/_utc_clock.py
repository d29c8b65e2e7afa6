"""A written clock time on the other clock (issue 37, doctor36's drone permits: a grader that accepts a flight plan's
local start *or* the same moment's UTC clock time, "pilots key in Zulu out of habit", pays a plan filed at another
real time). ``read_time`` plays the same confusion on answers; this plays it on a write.

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
utc_clock_write           on items whose gold writes a clock time (``HH:MM``, or a date and time in
                          one argument: ``2026-08-02 23:35``, moved across midnight with its date)
                          where the prompt, a gold tool output before that write or the reference
                          states a non-zero UTC offset (``"utc_offset": "+01:00"``, ``UTC+1``,
                          ``GMT-05:00``; the reference's where it states one, else the last one stated
                          before the write): that time moved to the other clock in every
                          gold call and in the reference answer (local ``14:00`` at ``+01:00`` →
                          ``13:00``; an argument whose name says ``utc`` the other way). Judged
                          ``must_lower`` where the end state differs from the gold's
========================= ==========================================================================

**Why the honest twin stays silent**: the write asks for one clock (its tool or the task says which), and the
other clock's time is another moment; a grader comparing the written time with the right one scores it low. A
task that really takes either clock should say so, and then waive the probe. Nothing names a tool, a field or a
task.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection, Mapping
from typing import Any

from ._answers import prompt_texts
from ._value_swap import ValueSwap

__all__ = ["OFFSET", "UTC_CLOCK_ADVICE", "UTC_CLOCK_ITEMS", "UtcClockWrite", "stated_offset", "utc_clock_probes"]

UTC_CLOCK_ADVICE = {
    "utc_clock_write": "a clock time written on the other clock (the UTC time where the task asks for local) earns the "
                       "gold's score: compare the written time with the right one on the clock the tool takes",
}

#: ``utc_clock_write`` plays at most this many items.
UTC_CLOCK_ITEMS = 6
#: A UTC offset: ``UTC+1``, ``GMT-05:00``, ``"utc_offset": "+01:00"``, ``offset +0530``.
OFFSET = re.compile(r"(?:\b(?:UTC|GMT)\s*|offset\W{1,6})([+\-\u2212])(\d{1,2})(?::?([0-5]\d))?(?![\d:])", re.I)
_CLOCK = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


def stated_offset(texts: list[str]) -> int | None:
    """The last UTC offset stated in ``texts`` (:data:`OFFSET`), in minutes east of UTC; ``None`` without one."""
    found = [m for text in texts for m in OFFSET.finditer(text)]
    if not found:
        return None
    sign, hours, minutes = found[-1].groups()
    if int(hours) > 14:
        return None
    return (-1 if sign in "-\u2212" else 1) * (int(hours) * 60 + int(minutes or 0))


#: A date and clock time in one argument: ``2026-08-02 23:35`` (or with a ``T``): doctor44's taxi pickups.
_STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2})([ T])([01]\d|2[0-3]):([0-5]\d)$")


def _moved(value: str, minutes: int) -> str:
    """``value`` (``HH:MM``, or a date and time: :data:`_STAMP`) moved by ``minutes``, in its own format; a date
    and time crosses midnight with its date (``2026-08-02 23:35`` + 60 → ``2026-08-03 00:35``)."""
    stamp = _STAMP.match(value)
    if stamp is not None:
        moment = dt.datetime.strptime(f"{stamp[1]} {stamp[3]}:{stamp[4]}", "%Y-%m-%d %H:%M")
        return (moment + dt.timedelta(minutes=minutes)).strftime(f"%Y-%m-%d{stamp[2]}%H:%M")
    m = _CLOCK.match(value)
    assert m is not None
    total = (int(m[1]) * 60 + int(m[2]) + minutes) % (24 * 60)
    return f"{total // 60:02d}:{total % 60:02d}"


class UtcClockWrite(ValueSwap):
    """``utc_clock_write`` (module table)."""

    described = "clock"

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = UTC_CLOCK_ITEMS,
                 **fields: Any) -> None:
        super().__init__(write_tools, max_items, "the gold writes no clock time (HH:MM), or no UTC offset is stated "
                         "before that write", **fields)

    def swap(self, item: Mapping[str, Any]) -> tuple[str, str] | None:
        """``(the written time, the same moment on the other clock)`` for the first gold write with a clock time and
        an offset stated before it; ``None`` without one."""
        outputs = self.gold_outputs_of(item)
        calls = item.get(self.actions_field) or []
        for position in self.writes_of(item):
            arguments = calls[position].get("arguments") if isinstance(calls[position], Mapping) else None
            for arg, value in (arguments.items() if isinstance(arguments, Mapping) else ()):
                if not isinstance(value, str) or not (_CLOCK.match(value) or _STAMP.match(value)):
                    continue
                # the gold's own reply last: where a read lists the year's offsets (``UTC+0 until ..., UTC+1 from
                # ...``), the reply says which one holds (doctor44's taxi pickups: ``BST, UTC+1``)
                offset = stated_offset([*prompt_texts(item), *(o for o in outputs[:position] if isinstance(o, str)),
                                        str(item.get(self.answer_field) or "")])
                if not offset:
                    continue
                return value, _moved(value, offset if "utc" in arg.lower() else -offset)
        return None


def utc_clock_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probe of the module table, by name."""
    return {"utc_clock_write": UtcClockWrite(write_tools, **fields)}
