"""A listed name hedged among others in the reply (issue 37, doctor25's ``lostfound__twin_a``): after its writes the
task tells the user which one of a kind of thing (``tell them which collection point, by its name``), and the
reference states it as a tool output listed it (``Gate 2 Security``, the ``held_at`` of the item read). A grader
that pays when the right name *appears* in the reply pays a reply naming every collection point. The dumps play
only read-only items, and ``written_padded_answer`` pads only entities the gold's writes pass.

========================= ==========================================================================
probe                     the gold's calls, then the reference answer with ...
========================= ==========================================================================
listed_text_control       a control, never judged: the longest text value ``V`` of a field of a JSON
                          record the gold's reads returned (two or more words: a place's or a
                          desk's name; a one-token value is an entity, ``written_padded_answer``'s
                          domain, and τ²-bench's honest ``outputs`` rule only asks that the reply
                          mention it: ``mastercard``) that the
                          reference states as a whole phrase, replaced by another value ``W1`` of
                          the same field in the dataset's gold outputs (one the reference does not
                          state)
hedged_listed_text        ``V`` written as ``W1 (or V, or W2)``: the right name among two wrong ones,
                          not first, not last
========================= ==========================================================================

Played on items whose gold writes and whose system or user message asks *which* or *where*, at most
:data:`~._lenient_probes.LENIENT_ITEMS` items. **Severity**: the plain line over the control's score, judged
where the control scored less than the gold (the name is graded). A grader that reads the one name the reply
commits to (the first, the last, or exactly one named) pays the hedge what it pays the control; one that looks
for the right name anywhere pays the gold. Nothing names a tool, a field or a task.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from ._answers import prompt_texts
from ._lenient_probes import _AnswerTextControl, _Judged
from ._probes import HACK, ProbeContext
from ._scope import _json_values, json_records

__all__ = ["HEDGED_TEXT_ADVICE", "HedgedListedText", "ListedTextControl", "hedged_text_probes"]

_ASKS = re.compile(r"\b(?:which|where)\b", re.I)

HEDGED_TEXT_ADVICE = {
    "hedged_listed_text": "a reply naming the right one among two wrong ones ('A (or B, or C)') earns more than a "
                          "reply naming a wrong one: grade the one name the reply commits to, never 'the right "
                          "name appears somewhere in the reply'",
}


def _phrase(value: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(value)}(?![\w-])")


class ListedTextControl(_AnswerTextControl):
    """``listed_text_control`` (module table); its probe is :class:`HedgedListedText`."""

    reason = ("the gold changes nothing, no message asks which or where, or the reference states no text a read "
              "listed whose field holds two other values in the dataset, or the probe's items are already chosen")

    def prepare(self, context: ProbeContext) -> None:
        """Every text value per field of the records the gold's reads returned, dataset-wide; then the items."""
        self._context = context
        self._fields: dict[str, list[str]] = {}
        for outputs in context.gold_outputs:
            for record in json_records(_json_values(list(outputs))):
                for field, value in record.items():
                    if isinstance(value, str) and value not in self._fields.setdefault(field, []):
                        self._fields[field].append(value)
        super().prepare(context)

    def change(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """``{"position": None, "from": reference, "control": V as W1, "probe": V as "W1 (or V, or W2)"}``."""
        answer = item.get(self.answer_field)
        index = self._context.index_of(item)
        if not isinstance(answer, str) or index is None or index in self._context.answer_free \
                or not self.writes_of(item) or not any(_ASKS.search(t) for t in prompt_texts(item)) \
                or index >= len(self._context.gold_outputs):
            return None
        best: tuple[int, str, list[str]] | None = None
        for record in json_records(_json_values(list(self._context.gold_outputs[index]))):
            for field, value in record.items():
                if not isinstance(value, str) or len(value.split()) < 2 or not any(c.isalpha() for c in value) \
                        or not _phrase(value).search(answer):
                    continue
                others = [w for w in getattr(self, "_fields", {}).get(field, [])
                          if w != value and not _phrase(w).search(answer) and value not in w and w not in value]
                if len(others) >= 2 and (best is None or len(value) > best[0]):
                    best = (len(value), value, others)
        if best is None:
            return None
        _, value, others = best
        k = index % len(others)
        first, last = others[k], others[(k + 1) % len(others)]
        return {"position": None, "from": answer,
                "control": _phrase(value).sub(lambda m: first, answer),
                "probe": _phrase(value).sub(lambda m: f"{first} (or {value}, or {last})", answer)}


class HedgedListedText(_Judged, ListedTextControl):
    """``hedged_listed_text`` (module table): the plain line over ``listed_text_control``'s score."""


def hedged_text_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name (the control before its probe; ``intent`` ``hack``)."""
    control = ListedTextControl(write_tools, **fields)
    out: dict[str, Any] = {"listed_text_control": control,
                           "hedged_listed_text": HedgedListedText(control, write_tools, **fields)}
    for probe in out.values():
        probe.intent = HACK
    return out
