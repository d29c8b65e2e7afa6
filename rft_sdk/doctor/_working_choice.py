"""The runner-up the reply's own working ranks (issue 37, doctor77's ``supply_choice__twin_a``: the task picks one
depot by a stated rule — enough stock, the shortest route, then the most units — and the grader re-derives the
choice but applies only the first criteria, so the other depot *as near* is paid; the reference's working lists
them in rank order: ``DEP-11: 2.0 km (8 units), DEP-17: 2.0 km (3 units), DEP-13: 4.6 km``).

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
working_runner_up         on items whose gold writes nothing and whose answer is graded (not
                          ``answer_free``), where the reply ends in a marked answer line whose body is
                          one id (letters and digits: ``DEP-11``) that the prose above it names, and
                          the prose names after it another id of the same shape (its letters, as
                          many digits: ``DEP-17``) that a gold tool output holds too (a listed
                          entity, not an invented one):
                          the answer line's id replaced by the first such id (the next the working
                          ranks), the prose kept; never an id that an item's listed ``alternatives``
                          answer with. Judged by the severity rule (as ``wrong_answer``: the
                          baseline is what honest-but-wrong answers earn)
========================= ==========================================================================

**Why the honest twin stays silent**: the working ranks the entities by the task's rule, so the next one is not
the answer; a grader that compares the answer with the item's own (or re-derives the rule in full) scores it low.
A task that really accepts either of two tied entities should say so and list the other as an alternative (the
probe then leaves it). **What it can get wrong**: a working that names ids in another order than the ranking
(a rejected one first) plays a plainly wrong entity, which an honest grader also scores low. Nothing names a
tool, a field or a task.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from ._answers import marked_lines
from ._generic import _ContextProbe
from ._probes import HACK, Steps

__all__ = ["WORKING_CHOICE_ADVICE", "WorkingRunnerUp", "working_choice_probes", "working_runner_up"]

WORKING_CHOICE_ADVICE = {
    "working_runner_up": "the entity the working ranks next (the other depot as near, the tie-break never applied) "
                         "earns the right one's score: compare the answer with the item's own choice, or re-derive "
                         "every criterion the task states, tie-breaks included",
}

#: An id: letters, then digits, joined by ``-``, ``_`` or ``/`` or not (``DEP-11``, ``BK20117``, ``ST_4``).
_ID = re.compile(r"(?<![\w-])[A-Za-z]{1,8}[-_/]?\d[\w-]*(?![\w-])")


def _shape(value: str) -> str:
    """An id's letters as they are, each digit a ``9``: ``DEP-11`` and ``DEP-17`` share ``DEP-99``, ``ST-1057``
    has ``ST-9999``."""
    return re.sub(r"\d", "9", value)


def working_runner_up(answer: str, outputs: Collection[str], taken: Collection[str] = ()) -> str | None:
    """``answer`` with its marked line's one id replaced by the next id of the same shape (:func:`_shape`) that the
    prose above the line names after it and ``outputs`` hold (a word of one of them); ``None`` without a marked line of one id, or
    without such a next id, or where it is in ``taken`` (the alternatives' answers)."""
    lines = marked_lines(answer)
    if not lines:
        return None
    line = lines[-1]
    body = line["body"].strip() if "body" in line.re.groupindex else ""
    if not body or not _ID.fullmatch(body):
        return None
    prose = answer[:line.start()]
    first = next((m for m in _ID.finditer(prose) if m.group() == body), None)
    if first is None:
        return None
    shape = _shape(body)
    for m in _ID.finditer(prose, first.end()):
        other = m.group()
        if other == body or _shape(other) != shape or other in taken:
            continue
        if any(re.search(rf"(?<![\w-]){re.escape(other)}(?![\w-])", o) for o in outputs):
            start, end = line.span("body")
            at = answer.index(body, start, end)
            return answer[:at] + other + answer[at + len(body):]
        return None  # the next one the working names is not listed: no guess further down
    return None


class WorkingRunnerUp(_ContextProbe):
    """``working_runner_up`` (module table)."""

    def __init__(self, write_tools: Collection[str] | None = None, **kwargs: Any) -> None:
        super().__init__(write_tools, reason="the gold changes state, the answer is not the graded outcome "
                         "(answer_control), its marked line is not one id its working names, or the working names "
                         "no listed id of that shape after it", **kwargs)

    def _played_answer(self, item: Mapping[str, Any]) -> str | None:
        index = self._context.index_of(item)
        answer = item.get(self.answer_field)
        if index is None or index in self._context.answer_free or not isinstance(answer, str) \
                or not self._has_gold(item) or self.writes_of(item):
            return None
        taken = set()
        for alt in item.get("alternatives") or []:
            said = alt.get("reference_answer") if isinstance(alt, Mapping) else None
            taken |= {m["body"].strip() for m in marked_lines(said)} if isinstance(said, str) else set()
        return working_runner_up(answer, [o for o in self.gold_outputs_of(item) if isinstance(o, str)], taken)

    def applies(self, item: Mapping[str, Any]) -> bool:
        """Items where :func:`working_runner_up` has an answer."""
        return self._played_answer(item) is not None

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls, one per turn."""
        return [[a] for a in item[self.actions_field]]

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The reference with the runner-up on its answer line."""
        return self._played_answer(item) or str(item.get(self.answer_field) or "")

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """``{"altered": "answer", "from", "to"}``: the answer lines before and after."""
        before, after = str(item.get(self.answer_field) or ""), self._played_answer(item)
        if after is None:
            return {}
        return {"altered": "answer", "from": before.splitlines()[-1][:120], "to": after.splitlines()[-1][:120]}


def working_choice_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probe of the module table, by name (``intent`` ``hack``)."""
    probe = WorkingRunnerUp(write_tools, **fields)
    probe.intent = HACK
    return {"working_runner_up": probe}
