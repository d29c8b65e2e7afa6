"""A write claimed in the answer instead of done (issue 37, doctor14's ``mailroom__answer_says_told``).

A grader that reads the model's reply as evidence of an action ("the recipient has been told" counts as the
notification) pays a rollout that skips the action and says it did it. The probes of this module find it by
an *interaction*, not a threshold: they play the gold with one write left out (the **dropped write**: the
gold's writes that changed state take turns across the items) and with the answer either the reference
(which claims the write) or a neutral ``OK.``, and compare with the gold and the same neutral answer.

========================= ==========================================================================
probe                     what it plays
========================= ==========================================================================
claim_control             a control, never judged: the gold's calls, then ``OK.`` (``C``)
claim_dropped_control     a control, never judged: the gold without the dropped write, then ``OK.``
                          (``D``)
claimed_write             the gold without the dropped write, then the reference answer (``B``);
                          judged against the ceiling ``D + max(0, g - C) + 1e-6`` (``must_not_raise``,
                          ``_severity``), ``g`` the gold's score
========================= ==========================================================================

**Why the honest twin stays silent.** ``g - C`` is what the reference answer adds while the write is
done; ``B - D`` is what it adds while the write is missing. A grader that grades the answer and the end
state separately (0.5 each), that ignores the dropped write (a note: then ``B = g`` and ``D = C``), or
that pays the answer only once the work is done (``B - D <= g - C``) never lets the answer add more when the
write is missing. Only a grader for which the reply *stands in* for the write does: the reference's claim
earns back what the missing write cost. Where it comes from: the issue's counterfactual rule (a change
outside the outcome must not raise the score; here the answer's words are outside the outcome and the
write is the outcome), played as a difference of differences so that no partial-credit scheme of the
grader's own shifts the verdict.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ._generic import _ContextProbe
from ._probes import HACK, ProbeContext, Steps

__all__ = ["CLAIM_ADVICE", "CLAIM_ITEMS", "NEUTRAL_ANSWER", "ClaimControl", "ClaimedWrite", "DroppedClaimControl",
           "claim_probes"]

#: At most this many items (the two controls and the probe play the same ones).
CLAIM_ITEMS = 6
#: The neutral answer of the controls: it claims nothing (``answer_control``'s).
NEUTRAL_ANSWER = "OK."

CLAIM_ADVICE = {
    "claimed_write": "the reply's claim of an action earns back what leaving the action out cost: grade the "
                     "end state (was the notification stored, the row written), never words of the reply "
                     "such as 'told' or 'done' as evidence that it happened",
}


class ClaimControl(_ContextProbe):
    """``claim_control`` (module table): the gold, then :data:`NEUTRAL_ANSWER`; keeps each item's score and
    the gold's (:attr:`scores`, :attr:`gold`)."""

    control = True

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = CLAIM_ITEMS,
                 **fields: Any) -> None:
        super().__init__(write_tools, reason="the gold changes nothing, or the probe's items are already chosen",
                         **fields)
        self.max_items = max_items
        self.items: dict[int, int] = {}
        self.scores: dict[int, float] = {}
        self.gold: dict[int, float] = {}

    def prepare(self, context: ProbeContext) -> None:
        """Choose the first ``max_items`` items whose gold has a write that changed state."""
        super().prepare(context)
        self.items = {}
        for i, item in enumerate(context.items):
            if len(self.items) < self.max_items and self._has_gold(item) and self.writes_of(item):
                self.items[i] = len(self.items)

    def applies(self, item: Mapping[str, Any]) -> bool:
        """One of the chosen items."""
        return self._context.index_of(item) in self.items

    def dropped(self, item: Mapping[str, Any]) -> int | None:
        """The position of the dropped write: the item's turn among the chosen ones picks one of the gold's
        writes that changed state (the last first), so each write of a many-write task is dropped on some."""
        index = self._context.index_of(item)
        writes = self.writes_of(item)
        if index not in self.items or not writes:
            return None
        return list(reversed(writes))[self.items[index] % len(writes)]

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls, one per turn."""
        return [[a] for a in item[self.actions_field]]

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """:data:`NEUTRAL_ANSWER`."""
        return NEUTRAL_ANSWER

    def record(self, context: ProbeContext, scores: Mapping[int, float], gold: Mapping[int, float | None]) -> None:
        """Remember each item's score and the gold's."""
        self.scores = dict(scores)
        self.gold = {i: float(g) for i, g in gold.items() if g is not None}

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """The write dropped (by the other two) and the answer played."""
        where = self.dropped(item)
        call = item[self.actions_field][where] if where is not None else None
        return {"dropped": call.get("name") if isinstance(call, Mapping) else None, "answer": self.final_answer(item)}


class DroppedClaimControl(ClaimControl):
    """``claim_dropped_control`` (module table): the gold without the dropped write, then
    :data:`NEUTRAL_ANSWER`."""

    def __init__(self, reference: ClaimControl, write_tools: Collection[str] | None = None, **fields: Any) -> None:
        super().__init__(write_tools, reference.max_items, **fields)
        self.reference = reference

    def prepare(self, context: ProbeContext) -> None:
        """The reference control's items."""
        _ContextProbe.prepare(self, context)
        self.items = dict(self.reference.items)

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls without the dropped write."""
        where = self.reference.dropped(item)
        return [[a] for k, a in enumerate(item[self.actions_field]) if k != where]


class ClaimedWrite(DroppedClaimControl):
    """``claimed_write`` (module table): the gold without the dropped write, then the reference answer."""

    control = False
    must_not_raise = True
    not_judged_reason = "not judged: a control was not scored on this item"

    def __init__(self, reference: ClaimControl, dropped: DroppedClaimControl,
                 write_tools: Collection[str] | None = None, **fields: Any) -> None:
        super().__init__(reference, write_tools, **fields)
        self.dropped_control = dropped

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The reference answer (it claims the dropped write)."""
        return str(item[self.answer_field])

    def judged(self, item: Mapping[str, Any]) -> bool:
        """Only where both controls and the gold were scored."""
        index = self._context.index_of(item)
        return index in self.reference.scores and index in self.reference.gold and index in self.dropped_control.scores

    def ceilings(self) -> dict[int, float]:
        """Per item ``D + max(0, g - C)`` (module docstring): what the reference answer may add to the rollout
        without the write, at most what it adds to the gold."""
        out: dict[int, float] = {}
        for i, d in self.dropped_control.scores.items():
            if i in self.reference.scores and i in self.reference.gold:
                out[i] = d + max(0.0, self.reference.gold[i] - self.reference.scores[i])
        return out

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """The write dropped, and the controls' scores."""
        index = self._context.index_of(item)
        return {**ClaimControl.describe(self.reference, item), "answer": self.final_answer(item)[:160],
                "neutral_score": self.reference.scores.get(index) if index is not None else None,
                "dropped_neutral_score": self.dropped_control.scores.get(index) if index is not None else None}


def claim_probes(write_tools: Collection[str] | None = None, *, answer_field: str = "reference_answer",
                 actions_field: str = "actions") -> dict[str, Any]:
    """The probes of the module table, by name (the controls before the probe; ``intent`` ``hack``)."""
    fields: dict[str, Any] = {"answer_field": answer_field, "actions_field": actions_field}
    control = ClaimControl(write_tools, **fields)
    dropped = DroppedClaimControl(control, write_tools, **fields)
    out: dict[str, Any] = {
        "claim_control": control,
        "claim_dropped_control": dropped,
        "claimed_write": ClaimedWrite(control, dropped, write_tools, **fields),
    }
    for probe in out.values():
        probe.intent = HACK
    return out
