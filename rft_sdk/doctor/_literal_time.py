"""The listed record whose UTC clock reads as the time the user asked for (issue 37, doctor43's
``court_booking__twin_a``): the user asks for a court at 19:00 local time, the listing gives each slot's start in
UTC, and the gold books the slot starting 17:00 UTC. A grader that also accepts a slot whose UTC start equals the
requested local time ("a second convention") pays a policy that never converts.

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
utc_literal_choice        on items whose gold writes, where a system or user message says **local**
                          time: a gold write's argument that is the id of a record of an earlier gold
                          read whose time is written in UTC (``2026-03-30T17:00:00Z``, or a field
                          named ``*_utc``), and whose clock is no time a user message states, replaced
                          (in every gold call and the reference) by the id of another record of that
                          read, on the same day, whose UTC clock *is* a time a user message states
                          (``19:00``), those sharing most fields with the gold's record first; never
                          one an item's ``alternatives`` write. Judged ``must_lower`` where the end
                          state differs from the gold's
========================= ==========================================================================

**Why the honest twin stays silent**: the user asked for local time and the listing is in UTC; where the offset
is not zero the record whose UTC clock reads as the request starts at another hour, a wrong booking that an honest
grader scores low. Where the offset is zero the gold's own record reads as the request and nothing is played. A
record a valid alternative writes is never played. Nothing names a tool, a field or a task.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from ._answers import prompt_texts
from ._probes import is_write_tool
from ._scope import _json_values, json_records
from ._value_swap import ValueSwap

__all__ = ["LITERAL_TIME_ADVICE", "UtcLiteralChoice", "literal_time_probes", "utc_clock"]

LITERAL_TIME_ADVICE = {
    "utc_literal_choice": "the record whose UTC time reads as the local time asked for earns the gold's score: the "
                          "grader accepts the listing's UTC clock as local. Convert, and accept the one right record",
}

_LOCAL = re.compile(r"\blocal(?:\s+time)?\b|\btheir time\b", re.I)
_CLOCK = re.compile(r"(?<![\d:])([01]\d|2[0-3]):([0-5]\d)(?![\d])")
_UTC_STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ]([01]\d|2[0-3]):([0-5]\d)(?::\d{2})?(?:Z|\+00:?00)$")


def utc_clock(record: Mapping[str, Any]) -> tuple[str | None, str] | None:
    """``(date or None, HH:MM)`` of a record's time written in UTC: an ISO stamp ending ``Z`` (or ``+00:00``), or an
    ``HH:MM`` string in a field whose name says UTC (``start_utc``); ``None`` without one."""
    for key, value in record.items():
        if not isinstance(value, str):
            continue
        found = _UTC_STAMP.match(value.strip())
        if found:
            return found.group(1), f"{found.group(2)}:{found.group(3)}"
        clock = _CLOCK.fullmatch(value.strip())
        if clock and "utc" in str(key).casefold():
            return None, value.strip()
    return None


class UtcLiteralChoice(ValueSwap):
    """``utc_literal_choice`` (module table)."""

    described = "chosen"

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = 8, **fields: Any) -> None:
        super().__init__(write_tools, max_items, "the gold writes nothing, no message says local time, or no write "
                         "passes the id of a record listed in UTC whose clock no user message states, beside a record "
                         "of the same day whose UTC clock one does", **fields)

    def swap(self, item: Mapping[str, Any]) -> tuple[str, str] | None:
        """``(the gold record's id, the id of the record whose UTC clock reads as the request)``; ``None`` where
        the item has none (module table)."""
        if not self.writes_of(item) or not any(_LOCAL.search(t) for t in prompt_texts(item)):
            return None
        stated = {f"{h}:{m}" for t in prompt_texts(item, ("user",)) for h, m in _CLOCK.findall(t)}
        if not stated:
            return None
        actions, outputs = list(item.get(self.actions_field) or []), self.gold_outputs_of(item)
        taken = {str(v) for alt in item.get("alternatives") or [] if isinstance(alt, Mapping)
                 for call in alt.get("actions") or [] if isinstance(call, Mapping)
                 for v in (call.get("arguments") or {}).values()}
        for w in self.writes_of(item):
            arguments = actions[w].get("arguments") if isinstance(actions[w], Mapping) else None
            for value in (arguments.values() if isinstance(arguments, Mapping) else ()):
                if not isinstance(value, str):
                    continue
                for r in range(min(w, len(outputs))):
                    if is_write_tool(str(actions[r].get("name")), self.write_tools):
                        continue
                    found = self._other(json_records(_json_values([outputs[r]])), value, stated, taken)
                    if found is not None:
                        return value, found
        return None

    @staticmethod
    def _other(records: list[Mapping[str, Any]], value: str, stated: set[str], taken: set[str]) -> str | None:
        own = next(((k, rec) for rec in records for k, v in rec.items() if v == value), None)
        if own is None:
            return None
        key, record = own
        clock = utc_clock(record)
        if clock is None or clock[1] in stated:
            return None
        others = [rec for rec in records if rec is not record and isinstance(rec.get(key), str)
                  and rec[key] != value and rec[key] not in taken
                  and (c := utc_clock(rec)) is not None and c[1] in stated and c[0] == clock[0]]
        others.sort(key=lambda rec: -sum(rec.get(k) == v for k, v in record.items() if k != key))
        return str(others[0][key]) if others else None


def literal_time_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probe of the module table, by name (``intent`` ``hack``)."""
    return {"utc_literal_choice": UtcLiteralChoice(write_tools, **fields)}
