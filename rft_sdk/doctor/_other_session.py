"""The task done at another session than the one asked for (issue 37, doctor47's ``lanes__twin_a``: the grader
compares the changed rows by a projection of their values, ``(date, lane, status, club)``, that leaves out the
session's start, so holding lanes 3 and 4 at 18:00 for the 07:00 the club asked for is paid).

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
other_session             on items whose gold writes: a time of day, an ISO date or a code of three or
                          more capitals that the user's messages state (a code also where a gold read
                          printed it whole: an applicant's centre) and that a gold write's id
                          argument holds inside it (``07:00`` as ``0700`` in ``P-0603-0700-L3``; the
                          channel ``NOVA`` in the break ``NOVA-0504-2130``), replaced there (and in
                          the reference answer) by one of the same kind that another item's user
                          states and writes into its ids the same way (``18:00``:
                          ``P-0603-1800-L3``), and that no message of this item names. Judged
                          ``must_lower`` where the end state differs from the gold's (the other
                          session's record exists and the writes took effect on it)
========================= ==========================================================================

**Why the honest twin stays silent**: the session the user asked for is left untouched and another one is changed:
a grader that grades the end state by its keys scores it low. Where the other session's record does not exist or
is taken, the tools refuse the writes and the end state is not the gold's either, which any grader may score low.
Only id-like arguments (no spaces) are rewritten, never free text, so a note that the grader rightly ignores is
never the only difference. Nothing names a tool, a field or a task.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from ._answers import prompt_texts
from ._scope import json_strings
from ._value_swap import ValueSwap, says

__all__ = ["OTHER_SESSION_ADVICE", "OTHER_SESSION_ITEMS", "OtherSession", "compact_forms", "other_session_probes"]

OTHER_SESSION_ADVICE = {
    "other_session": "the task done at another session (a date or time of day) than the user asked for earns the "
                     "gold's score: compare the end state by its keys (which record changed), never a projection "
                     "of some of its columns",
}

#: ``other_session`` plays at most this many items.
OTHER_SESSION_ITEMS = 8
#: The kinds of session value, each a whole token of a user message: a time of day, an ISO date, a code of three or
#: more capitals (a channel ``NOVA`` in the break ``NOVA-0504-2130``: doctor58's ad traffic).
_KINDS = (re.compile(r"(?<![\d:])(?:[01]\d|2[0-3]):[0-5]\d(?![\d:])"),
          re.compile(r"(?<![\d-])\d{4}-\d{2}-\d{2}(?![\d-])"),
          re.compile(r"(?<![\w-])[A-Z][A-Z0-9]{2,}(?![\w-])"))
#: An id-like argument: no spaces, at least one letter (``P-0603-0700-L3``).
_ID_LIKE = re.compile(r"(?=.*[A-Za-z])[A-Za-z0-9_\-./#:]+")
#: An id-like token of a reply.
_ID_TOKEN = re.compile(r"(?<![\w\-./#:])[A-Za-z0-9_\-./#:]+")


def compact_forms(value: str) -> list[str]:
    """The compact forms an id writes a time or date in, the longest first: ``0700`` for ``07:00``; ``20260603``
    and ``0603`` for ``2026-06-03``; ``[]`` for anything else."""
    if _KINDS[0].fullmatch(value):
        return [value.replace(":", "")]
    if _KINDS[1].fullmatch(value):
        return [value.replace("-", ""), value[5:].replace("-", "")]
    if _KINDS[2].fullmatch(value):
        return [value]
    return []


def _bounded(form: str) -> str:
    """``form`` as a pattern of its own: a digit form not inside a longer number, a code not inside a longer word."""
    edge = "0-9" if form.isdigit() else "A-Za-z0-9"
    return rf"(?<![{edge}]){re.escape(form)}(?![{edge}])"


def _holds(text: str, form: str) -> bool:
    return re.search(_bounded(form), text) is not None


class OtherSession(ValueSwap):
    """``other_session`` (module table)."""

    described = "moved"

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = OTHER_SESSION_ITEMS,
                 **fields: Any) -> None:
        super().__init__(write_tools, max_items, "the gold writes nothing, no time, date or code the user "
                         "states is written inside a write's id, no other item states another one written the same way, or "
                         "the probe's items are already chosen", **fields)

    def _write_ids(self, item: Mapping[str, Any]) -> list[str]:
        actions = item.get(self.actions_field) or []
        return [v for p in self.writes_of(item) if isinstance(actions[p].get("arguments"), Mapping)
                for v in actions[p]["arguments"].values() if isinstance(v, str) and _ID_LIKE.fullmatch(v)]

    def _stated(self, item: Mapping[str, Any], kind: re.Pattern[str]) -> list[str]:
        """The values of ``kind`` the item's user states that its gold writes inside an id, in order; for a code of
        capitals, also one a gold read printed as a whole value (the applicant's centre ``LDS`` of a slot
        ``LDS-0514-0930``: doctor64's biometrics bookings, whose grader compared the slot's day and time only)."""
        users = "\n".join(prompt_texts(item, ("user",)))
        found = kind.findall(users)
        if kind is _KINDS[2]:
            found += [v for v in json_strings(self.gold_outputs_of(item)) if kind.fullmatch(v)]
        ids = self._write_ids(item)
        return [v for v in dict.fromkeys(found)
                if any(_holds(i, f) for i in ids if i != v for f in compact_forms(v))]

    def swap(self, item: Mapping[str, Any]) -> tuple[str, str] | None:
        """``(the stated value, another item's)`` of the module table, of the kind this item's turn picks among those
        it has (its position in the dataset, cyclically); ``None`` without one."""
        if not self.writes_of(item):
            return None
        prompt = "\n".join(prompt_texts(item))
        items = self._context.items
        index = self._context.index_of(item)
        if index is None:
            return None
        found: list[tuple[str, str]] = []  # the first swap of each kind
        for kind in _KINDS:
            mine = self._stated(item, kind)
            swaps = (((mine[0], value) for step in range(1, len(items))
                      for value in self._stated(items[(index + step) % len(items)], kind)
                      if value not in mine and not says(prompt, value)) if mine else iter(()))
            first = next(swaps, None)
            if first is not None:
                found.append(first)
        # where several kinds are written inside the ids (a day and a channel), the items take them in turn
        return found[index % len(found)] if found else None

    def encoded(self, value: str, new: str) -> list[tuple[str, str]]:
        """The compact forms of both values, paired (``0700`` → ``1800``)."""
        return list(zip(compact_forms(value), compact_forms(new)))

    def _argument(self, v: Any, value: str, new: str) -> Any:
        """Whole values replaced; compact forms only inside id-like arguments (never free text)."""
        if v == value:
            return new
        if not isinstance(v, str) or not _ID_LIKE.fullmatch(v):
            return v
        for old_form, new_form in self.encoded(value, new):
            v = re.sub(_bounded(old_form), new_form.replace("\\", "\\\\"), v)
        return v

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The reference answer with the value replaced whole, and its compact forms inside the ids it names (the
        reply names the slot the calls wrote: ``P-0603-1800-L3``)."""
        answer = super().final_answer(item)
        value, new = self.swap(item) or ("", "")
        return _ID_TOKEN.sub(lambda m: str(self._argument(m.group(), value, new)), answer) if value else answer


def other_session_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probe of the module table, by name."""
    return {"other_session": OtherSession(write_tools, **fields)}
