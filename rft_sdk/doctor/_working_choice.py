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
ranked_listed_answer      on the same items (one id on the marked line), where a system or user message
                          states a rule that ranks (:data:`~._choices.RANKING`: the cheapest, the
                          nearest, the earliest) and a gold tool output lists the id's record beside
                          others of its kind: the id replaced by the **runner-up**
                          (:func:`~._choices.runner_up`: the listed record most like the gold's,
                          never a tie), the prose kept; never an id the item's ``alternatives``
                          answer with. Judged as ``working_runner_up`` (doctor78's class sessions:
                          any session with a free place paid, not the cheapest)
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
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ._answers import marked_lines, prompt_texts
from ._choices import RANKING, runner_up
from ._dataset_probes import id_shape
from ._generic import _ContextProbe
from ._probes import HACK, Steps
from ._scope import _json_values, sibling_values

__all__ = ["WORKING_CHOICE_ADVICE", "RankedListedAnswer", "WorkingRunnerUp", "ranked_runner_up",
           "working_choice_probes", "working_runner_up"]

WORKING_CHOICE_ADVICE = {
    "working_runner_up": "the entity the working ranks next (the other depot as near, the tie-break never applied) "
                         "earns the right one's score: compare the answer with the item's own choice, or re-derive "
                         "every criterion the task states, tie-breaks included",
    "ranked_listed_answer": "another listed entity than the one the stated rule picks (the next cheapest session, the "
                            "second nearest depot) earns the right one's score: compare the answer with the item's own "
                            "choice, or apply the rule to every listed record",
}

#: An id: letters, then digits, joined by ``-``, ``_`` or ``/`` or not (``DEP-11``, ``BK20117``, ``ST_4``).
_ID = re.compile(r"(?<![\w-])[A-Za-z]{1,8}[-_/]?\d[\w-]*(?![\w-])")


def _line_id(answer: str) -> tuple[re.Match[str], str] | None:
    """The last marked answer line and its body, where the body is one id (:data:`_ID`); else ``None``."""
    lines = marked_lines(answer)
    body = lines[-1]["body"].strip() if lines and "body" in lines[-1].re.groupindex else ""
    return (lines[-1], body) if body and _ID.fullmatch(body) else None


def working_runner_up(answer: str, outputs: Collection[str], taken: Collection[str] = ()) -> str | None:
    """``answer`` with its marked line's one id replaced by the next id of the same shape (:func:`~._dataset_probes.id_shape`) that the
    prose above the line names after it and ``outputs`` hold (a word of one of them); ``None`` without a marked line of one id, or
    without such a next id, or where it is in ``taken`` (the alternatives' answers)."""
    found = _line_id(answer)
    if found is None:
        return None
    line, body = found
    prose = answer[:line.start()]
    first = next((m for m in _ID.finditer(prose) if m.group() == body), None)
    if first is None:
        return None
    for m in _ID.finditer(prose, first.end()):
        other = m.group()
        if other == body or id_shape(other) != id_shape(body) or other in taken:
            continue
        if any(re.search(rf"(?<![\w-]){re.escape(other)}(?![\w-])", o) for o in outputs):
            return _on_line(answer, other)
        return None  # the next one the working names is not listed: no guess further down
    return None


def _on_line(answer: str, new: str) -> str | None:
    """``answer`` with its marked line's one id (:data:`_ID`) replaced by ``new``; ``None`` without such a line."""
    found = _line_id(answer)
    if found is None:
        return None
    line, body = found
    start, end = line.span("body")
    at = answer.index(body, start, end)
    return answer[:at] + new + answer[at + len(body):]


def ranked_runner_up(answer: str, outputs: Sequence[str], rules: Sequence[str], taken: Collection[str] = ()) -> str | None:
    """``answer`` with its marked line's one id replaced by its :func:`~._choices.runner_up` among the siblings the
    JSON ``outputs`` list with records, where one of ``rules`` (the prompt's texts) states a ranking
    (:data:`~._choices.RANKING`); ``None`` otherwise, or where the runner-up is in ``taken``."""
    found = _line_id(answer)
    if found is None or not any(RANKING.search(t) for t in rules):
        return None
    body = found[1]
    listed = _json_values(list(outputs))
    best = runner_up(body, sibling_values(body, listed), listed)
    if not isinstance(best, str) or best in taken or not _ID.fullmatch(best):
        return None
    return _on_line(answer, best)


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
        return self.rewrite(item, answer, [o for o in self.gold_outputs_of(item) if isinstance(o, str)],
                            _alternative_answers(item))

    def rewrite(self, item: Mapping[str, Any], answer: str, outputs: list[str], taken: set[str]) -> str | None:
        """:func:`working_runner_up`."""
        return working_runner_up(answer, outputs, taken)

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


class RankedListedAnswer(WorkingRunnerUp):
    """``ranked_listed_answer`` (module table)."""

    def __init__(self, write_tools: Collection[str] | None = None, **kwargs: Any) -> None:
        super().__init__(write_tools, **kwargs)
        self._reason = ("the gold changes state, the answer is not the graded outcome (answer_control), its marked line "
                        "is not one id, the prompt states no rule that ranks, or no output lists the id's record "
                        "beside others")

    def rewrite(self, item: Mapping[str, Any], answer: str, outputs: list[str], taken: set[str]) -> str | None:
        """:func:`ranked_runner_up` over the prompt's texts."""
        return ranked_runner_up(answer, outputs, prompt_texts(item), taken)


def _alternative_answers(item: Mapping[str, Any]) -> set[str]:
    """The bodies of the marked lines of the item's ``alternatives``' own reference answers."""
    taken: set[str] = set()
    for alt in item.get("alternatives") or []:
        said = alt.get("reference_answer") if isinstance(alt, Mapping) else None
        taken |= {m["body"].strip() for m in marked_lines(said)} if isinstance(said, str) else set()
    return taken


def working_choice_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probe of the module table, by name (``intent`` ``hack``)."""
    out: dict[str, Any] = {"working_runner_up": WorkingRunnerUp(write_tools, **fields),
                           "ranked_listed_answer": RankedListedAnswer(write_tools, **fields)}
    for probe in out.values():
        probe.intent = HACK
    return out
