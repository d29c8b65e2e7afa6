"""A listed answer right only at its head (issue 37, doctor38's ``curling__twin_b``): the task asks for a list (a
pool's top three in order), and a grader weights the places, "the winner matters most" (0.6 / 0.25 / 0.15), so a
policy that finds the winner alone earns more than half of the gold's score without ranking the rest.

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
leading_entry             (answer items, as the ``adv_*`` families) the reference's marked answer line
                          of :data:`MIN_ENTRIES` or more entries with its **first entry kept** and every
                          other replaced by a member of the gold's JSON tool outputs that is not on the
                          line: the last members of the collection that holds every entry (the bottom
                          of the standings the gold read). Judged above the share of the line left
                          right, ``1 / n`` (``unchanged_share``)
========================= ==========================================================================

**Why the honest twin stays silent**: one entry right of ``n`` with the others wrong is worth ``1 / n`` to a grader
that credits each place (or set F1: precision and recall ``1 / n``), and nothing to one that compares the whole
line; the severity line is half the gold's score or that share, whichever is higher. A grader that pays more than
half for the first place alone pays for a shortcut. Nothing names a tool, a field or a task.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ._answers import RANKING_SPLIT, answer_span, fold_case
from ._generic import AdversarialAnswer
from ._probes import HACK
from ._scope import _collections, _json_values

__all__ = ["LEADING_ENTRY_ADVICE", "MIN_ENTRIES", "LeadingEntry", "leading_entry_line", "leading_entry_probes"]

LEADING_ENTRY_ADVICE = {
    "leading_entry": "a list right only in its first entry (the others wrong) earns more than half the gold's score: "
                     "credit each entry alike (or the whole list), so that finding the first alone does not pay",
}

#: Lines of at least this many entries are played (one right of ``n``: ``1 / n``, under the half-way line).
MIN_ENTRIES = 3



def leading_entry_line(reference: str, outputs: list[Any]) -> tuple[str, int] | None:
    """``(reference with its marked line's entries after the first replaced, n)``: the replacements are the last
    members, not on the line, of the first collection of the parsed ``outputs`` holding every entry (case and
    spaces folded); ``None`` without a line of :data:`MIN_ENTRIES` short entries or enough other members."""
    span = answer_span(reference)
    if span is None:
        return None
    start, end = span
    body = reference[start:end]
    tail = "." if body.endswith(".") else ""
    parts = RANKING_SPLIT.split(body.rstrip("."))
    entries = parts[::2]
    folded = [fold_case(e) for e in entries]
    if len(entries) < MIN_ENTRIES or any(not e or len(e.split()) > 5 for e in entries) or len(set(folded)) < len(
            folded):
        return None
    for value in _json_values([o for o in outputs if isinstance(o, str)]):
        for _, members in _collections(value):
            names = [m for m in members if isinstance(m, str)]
            if not set(folded) <= {fold_case(m) for m in names}:
                continue
            others = list(dict.fromkeys(m for m in names if fold_case(m) not in folded))
            if len(others) < len(entries) - 1:
                continue
            replaced = [entries[0], *others[len(others) - len(entries) + 1:]]
            parts[::2] = replaced
            line = "".join(p if i % 2 == 0 else (f" {p} " if p in (">", "\u2192") else f"{p} ")
                           for i, p in enumerate(parts))
            return reference[:start] + line + tail + reference[end:], len(entries)
    return None


class LeadingEntry(AdversarialAnswer):
    """``leading_entry`` (module table)."""

    def __init__(self, write_tools: Collection[str] | None = None, **fields: Any) -> None:
        super().__init__(self._variants, write_tools, **fields)

    def _line(self, item: Mapping[str, Any]) -> tuple[str, int] | None:
        return leading_entry_line(str(item.get(self.answer_field) or ""), self.gold_outputs_of(item))

    def _variants(self, item: Mapping[str, Any], probe: AdversarialAnswer) -> list[str]:
        found = self._line(item)
        return [] if found is None else [found[0]]

    def unchanged_share(self, item: Mapping[str, Any]) -> float:
        """``1 / n``: the line's first entry is right."""
        found = self._line(item)
        return 0.0 if found is None else 1 / found[1]


def leading_entry_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probe of the module table, by name (``intent`` ``hack``)."""
    probe = LeadingEntry(write_tools, **fields)
    probe.intent = HACK
    return {"leading_entry": probe}
