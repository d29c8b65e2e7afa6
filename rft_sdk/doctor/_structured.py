"""Structured answers: a JSON-object answer whose list fields hold more than the right elements.

When an item's reference answer is a JSON object with list fields (``{"answer": ..., "citations": [...]}``),
the text probes (dumps, wildcards) send text a parser rejects, and none sends the *right* answer with extra
elements in its lists. Two probes close that, on items whose gold changes nothing (there the answer is the
outcome) and whose answer is not answer-free (``answer_control``), at most :data:`STRUCTURED_ITEMS` each:

======================= ======================================================================
probe                   the one change (the rest is the gold: its calls, then its answer)
======================= ======================================================================
structured_control      a control, never judged: each padded list field *replaced* by as many
                        elements of other items' answers (none of this item's). Where that still
                        earns the gold's score, the lists are not graded here (a grader of the
                        ``answer`` field alone), and ``answer_superset`` skips the item
answer_superset         each list field *padded*: the gold's elements, then as many again from
                        other items' answers of the same field (none of this item's)
======================= ======================================================================

What an honest grader must do with ``answer_superset``: the answer holds everything the gold's does and
more, so a precision-aware grader (F1, exact set) lowers the score by some amount; one that does not lower
it at all (recall, "contains every gold element") pays for padding — the ``must_lower`` rule (``_severity``).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from ._answers import answer_object
from ._generic import _ContextProbe
from ._probes import ProbeContext, Steps

__all__ = ["STRUCTURED_ITEMS", "AnswerSuperset", "StructuredControl", "list_pool"]

#: At most this many items per structured probe (one rollout each).
STRUCTURED_ITEMS = 8


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def list_pool(objects: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Per list field name, every distinct element any of ``objects`` holds there, in order."""
    pool: dict[str, dict[str, Any]] = {}
    for obj in objects:
        for name, value in obj.items():
            if isinstance(value, list):
                for element in value:
                    pool.setdefault(name, {}).setdefault(_key(element), element)
    return {k: list(v.values()) for k, v in pool.items()}


class _Structured(_ContextProbe):
    """Gold calls, then the gold's JSON answer with its list fields changed (:meth:`lists`)."""

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = STRUCTURED_ITEMS,
                 **kwargs: Any) -> None:
        super().__init__(write_tools, reason="the reference answer is no JSON object with a list field that other "
                         "items' answers fill differently, the gold changes state (the end state is the outcome), "
                         "the answer is not the graded outcome (answer_control) or its lists are not graded "
                         f"(structured_control), or the probe's {max_items} items are already chosen", **kwargs)
        self.max_items = max_items
        self._chosen: dict[int, int] = {}
        self._pool: dict[str, list[Any]] = {}

    def others(self, item: Mapping[str, Any]) -> dict[str, list[Any]]:
        """Per list field of the item's answer: the pool's elements that are not the item's own
        (rotated by the item's position, so that items pad with different elements)."""
        mine = answer_object(item.get(self.answer_field)) or {}
        index = self._context.index_of(item) or 0
        out = {}
        for name, value in mine.items():
            if isinstance(value, list):
                own = {_key(e) for e in value}
                pool = [e for e in self._pool.get(name, []) if _key(e) not in own]
                if pool:
                    shift = index % len(pool)
                    out[name] = pool[shift:] + pool[:shift]
        return out

    def eligible(self, index: int, item: Mapping[str, Any], context: ProbeContext) -> bool:
        """Gold, no effective write, an answer that is the outcome and a list field to change."""
        return self._has_gold(item) and not self.writes_of(item) and index not in context.answer_free \
            and bool(self.others(item))

    def prepare(self, context: ProbeContext) -> None:
        """Collect the list elements of every JSON-object reference answer; choose the items."""
        super().prepare(context)
        self._pool = list_pool([o for i in context.items if (o := answer_object(i.get(self.answer_field)))])
        self._chosen = {}
        for i, item in enumerate(context.items):
            if len(self._chosen) < self.max_items and self.eligible(i, item, context):
                self._chosen[i] = len(self._chosen)

    def applies(self, item: Mapping[str, Any]) -> bool:
        """One of the chosen items."""
        return self._context.index_of(item) in self._chosen

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls, one per turn."""
        return [[a] for a in item[self.actions_field]]

    def lists(self, own: list[Any], others: list[Any]) -> list[Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def answered(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """The JSON object answered: the gold's, each list field with other elements (:meth:`lists`)."""
        mine = dict(answer_object(item.get(self.answer_field)) or {})
        for name, others in self.others(item).items():
            mine[name] = self.lists(list(mine[name]), others)
        return mine

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """:meth:`answered` as JSON."""
        return json.dumps(self.answered(item))

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """``{"answer": <the JSON answered>}`` (cut at 300 characters)."""
        text = self.final_answer(item)
        return {"answer": text if len(text) <= 300 else text[:300] + "..."}


class StructuredControl(_Structured):
    """The control of the module table (``control = True``: never judged): the list fields replaced."""

    control = True

    def lists(self, own: list[Any], others: list[Any]) -> list[Any]:
        """As many other elements as the gold's list holds (at least one)."""
        return others[:max(1, len(own))]

    def record(self, context: ProbeContext, scores: Mapping[int, float], gold: Mapping[int, float | None]) -> None:
        """Items where replacing the lists did not lower the score: their lists are not graded
        (``context.lists_free``); every graded item is recorded as checked (``context.lists_checked``)."""
        context.lists_checked |= set(scores)
        context.lists_free |= {i for i, s in scores.items() if gold.get(i) is not None
                               and s >= float(gold[i] or 0.0) - 1e-6 and s > 0}


class AnswerSuperset(_Structured):
    """The probe of the module table: the gold's lists padded with other items' elements (``must_lower``)."""

    must_lower = True

    def eligible(self, index: int, item: Mapping[str, Any], context: ProbeContext) -> bool:
        """As for the control, and the lists are graded here: the control checked the item (when it ran)
        and replacing the lists lowered the score (not in ``context.lists_free``)."""
        checked = not context.lists_checked or index in context.lists_checked
        return super().eligible(index, item, context) and checked and index not in context.lists_free

    def lists(self, own: list[Any], others: list[Any]) -> list[Any]:
        """The gold's elements, then as many others (at least one)."""
        return own + others[:max(1, len(own))]


def structured_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """``{"structured_control", "answer_superset"}`` (module table)."""
    return {"structured_control": StructuredControl(write_tools, **fields),
            "answer_superset": AnswerSuperset(write_tools, **fields)}
