"""A second answer kept in the item beside the right one (issue 37, doctor38's ``curling__twin_a`` and
``shore_excursions__twin_c``, doctor36's ``regatta__twin_b``): the dataset row carries, for the grader's eyes only,
a value the task does *not* ask for (last season's ranking, ``top3_dsc_tiebreak``; the tour's meeting time beside
the gangway time it asks for, ``meet_ship``; the port's local clock, ``gangway_local``), and a grader that accepts
it "since some sheets still use it" pays a policy for the easier convention.

========================= ==========================================================================
probe                     the gold's calls, then the reference answer with its marked line's value ...
========================= ==========================================================================
field_control             a control, never judged: ... replaced by what another item's row holds in
                          the field that holds this item's answer (the same field, another value: a
                          plainly wrong answer of the same shape)
item_field_answer         ... replaced by **another field of this item's row** of the same shape (a
                          list of as many names; a string whose digits and letters fall the same way:
                          ``2026-06-16 08:15`` for ``2026-06-16 07:55``) that differs from it; for a
                          list, also a list field of as many names or fewer, none on the line, put in
                          front of the line's (``due_that_day`` beside ``expected``: doctor40's
                          boundary read both ways). Judged
                          ``must_lower`` where ``field_control`` scored less than the gold (the line is
                          graded); the chosen items take the row's candidates in turn (each the field
                          played least so far)
========================= ==========================================================================

The field that holds the answer is found, not named: a list field equal to the marked line's entries (case and
spaces folded, in order), or the longest string field found inside the line. Fields whose name says they are
accepted spellings (``aliases``, ``accepted_answers``, ``alternatives``, ``synonyms``, ``valid_*``, ``also_*``...:
:data:`ACCEPTED_NAMES`) are never played, nor the conversation, the tools, the gold calls or numbers (a numeric
tolerance has probes of its own).

**Why the honest twin stays silent**: a field that differs from the right answer is another answer, and a grader
that compares the answer the task asks for refuses it as it refuses the control's. A task that honestly accepts two
values should say so in its prompt and keep them in a field named for it (``accepted_answers``); then nothing is
played. **What it can get wrong**: a row field that is the same answer written another way under a name that does
not say so (``top3_codes`` beside ``top3_names``) is played and paid; the finding names the field, and renaming it
(``accepted_top3``) waives it. Nothing names a tool or a task.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from ._answers import LIST_SPLIT, answer_span, fold_case
from ._lenient_probes import _AnswerTextControl, _Rewritten
from ._probes import HACK, ProbeContext
from ._scope import _NOT_DATA

__all__ = ["ACCEPTED_NAMES", "ITEM_FIELD_ADVICE", "FieldControl", "ItemFieldAnswer", "field_answers",
           "item_field_probes"]

ITEM_FIELD_ADVICE = {
    "item_field_answer": "another value the dataset row keeps beside the right answer (last season's rule, another "
                         "clock, another time of the same event) earns the right answer's score: grade the one value "
                         "the task asks for; if two are honestly right, say so in the prompt and name the field "
                         "for it (accepted_answers)",
}

#: A field whose name holds one of these words (split at ``_``, ``-``, ``.`` and case changes) keeps accepted
#: spellings of the answer: never played.
ACCEPTED_NAMES = re.compile(r"^(alias|accept|altern|alt$|synonym|equival|variant|valid|allow|also$|either$|"
                            r"spelling|ok$|permitted)", re.I)
#: Nested fields are walked this deep (``breakdown.payable``).
_DEPTH = 2



def _shape(text: str) -> str:
    """Digits as ``9``, letter runs as ``a``: ``2026-06-16 08:15`` → ``9999-99-99 99:99``."""
    return re.sub(r"[^\W\d_]+", "a", re.sub(r"\d", "9", text))


def _accepted(path: str) -> bool:
    words = [w for w in re.split(r"[_\-.\s]+|(?<=[a-z])(?=[A-Z])", path) if w]
    return any(ACCEPTED_NAMES.match(w) for w in words)


def _fields(item: Mapping[str, Any], skip: Collection[str]) -> Iterator[tuple[str, Any]]:
    """``(dotted path, value)`` of the row's strings and lists of strings, ``_DEPTH`` deep, accepted-spelling fields
    and ``skip`` left out."""
    queue: list[tuple[str, Any, int]] = [(k, v, 1) for k, v in item.items() if k not in _NOT_DATA and k not in skip]
    while queue:
        path, value, depth = queue.pop(0)
        if _accepted(path):
            continue
        if isinstance(value, str) and value.strip():
            yield path, value
        elif isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
            yield path, value
        elif isinstance(value, Mapping) and depth < _DEPTH:
            queue.extend((f"{path}.{k}", v, depth + 1) for k, v in value.items() if isinstance(k, str))


def _value_at(item: Mapping[str, Any], path: str) -> Any:
    node: Any = item
    for key in path.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def _found(item: Mapping[str, Any], answer_field: str) -> tuple[int, int, str, Any] | None:
    """``(start, end, path, value)``: the span of the reference's marked line that a row field holds (a list
    field equal to the line's entries, else the longest string field inside the line), the field and its value."""
    reference = str(item.get(answer_field) or "")
    span = answer_span(reference)
    if span is None:
        return None
    start, end = span
    body = reference[start:end].rstrip(".")
    entries = [fold_case(e) for e in LIST_SPLIT.split(body) if e.strip()]
    best: tuple[int, int, str, Any] | None = None
    for path, value in _fields(item, {answer_field}):
        if isinstance(value, list):
            if [fold_case(v) for v in value] == entries:
                return start, start + len(body), path, value
            continue
        if len(value.strip()) < 3:
            continue
        at = re.search(re.escape(value.strip()), body, re.I)
        if at is not None and (best is None or len(value.strip()) > best[1] - best[0]):
            best = (start + at.start(), start + at.end(), path, value)
    return best


def _alike(value: Any, other: Any) -> bool:
    """Whether ``other`` has ``value``'s shape (a list of as many short strings; a string of the same
    :func:`_shape`) and differs from it."""
    if isinstance(value, list):
        return (isinstance(other, list) and len(other) == len(value) and all(len(o.split()) <= 6 for o in other)
                and [fold_case(o) for o in other] != [fold_case(v) for v in value])
    return isinstance(other, str) and _shape(other.strip()) == _shape(value.strip()) and fold_case(other) != fold_case(value)


def _beside(value: list[str], other: Any) -> bool:
    """Whether ``other`` is a list of at most as many short names as ``value``, none of them in it (``due_that_day``
    beside ``expected``)."""
    return (isinstance(other, list) and 1 <= len(other) <= len(value) and all(len(o.split()) <= 6 for o in other)
            and not {fold_case(o) for o in other} & {fold_case(v) for v in value})


def _written(value: Any, body: str) -> str:
    if isinstance(value, list):
        return ("; " if ";" in body and "," not in body else ", ").join(v.strip() for v in value)
    return str(value).strip()


def field_answers(item: Mapping[str, Any], answer_field: str, items: list[Mapping[str, Any]]
                  ) -> tuple[str, list[tuple[str, str]]] | None:
    """``(the control's answer, [(field, the probe's answer), ...])`` for ``item`` (module table): the control
    takes the next item's (cyclically) value of the answer's field where it differs with the same shape, each
    probe answer another field of this row; ``None`` when there is no such field or no control."""
    found = _found(item, answer_field)
    if found is None:
        return None
    start, end, path, value = found
    reference = str(item[answer_field])
    body = reference[start:end]
    probes = [(p, reference[:start] + _written(v, body) + reference[end:])
              for p, v in _fields(item, {answer_field}) if p != path and _alike(value, v)]
    if isinstance(value, list):  # a list kept beside the answer's, none of its names on the line: both together
        probes += [(p, reference[:start] + _written([*v, *value], body) + reference[end:])
                   for p, v in _fields(item, {answer_field}) if p != path and _beside(value, v)]
    if not probes:
        return None
    index = next((k for k, other in enumerate(items) if other is item), None)
    for step in range(1, len(items)):
        other = _value_at(items[((index or 0) + step) % len(items)], path)
        if _alike(value, other):
            return reference[:start] + _written(other, body) + reference[end:], probes
    return None


class FieldControl(_AnswerTextControl):
    """``field_control`` (module table)."""

    reason = ("the reference has no marked answer line held by a row field, the row keeps no other field of that "
              "shape, no other row holds another value there, its answer is not the graded outcome "
              "(answer_control), or the probe's items are already chosen")

    def __init__(self, write_tools: Collection[str] | None = None, **fields: Any) -> None:
        super().__init__(write_tools, **fields)
        self._picks: dict[int, str] = {}

    def prepare(self, context: ProbeContext) -> None:
        """Choose the items, then each chosen item's field: the one of its candidates played least so far (items in
        order, the first candidate on a tie), so that the items together play every field."""
        self._picks = {}
        super().prepare(context)
        played: Counter[str] = Counter()
        for index in sorted(self.items):
            found = field_answers(context.items[index], self.answer_field, list(context.items))
            if found is not None:
                field = min((f for f, _ in found[1]), key=lambda f: played[f])
                self._picks[index] = field
                played[field] += 1

    def change(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """The answer with its field's value replaced (``{"position": None, "from", "control", "probe",
        "field"}``); the probe plays the field :meth:`prepare` picked for the item (its first before that)."""
        answer = item.get(self.answer_field)
        index = self._context.index_of(item)
        if not isinstance(answer, str) or index is None or index in self._context.answer_free:
            return None
        found = field_answers(item, self.answer_field, list(self._context.items))
        if found is None:
            return None
        control, probes = found
        field, probe = next((p for p in probes if p[0] == self._picks.get(index)), probes[0])
        return {"position": None, "from": answer, "control": control, "probe": probe, "field": field}

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """As the other controls', with the row field played (``field``)."""
        described = super().describe(item)
        found = self.change(item)
        return {**described, "field": found["field"]} if described and found else described


class ItemFieldAnswer(_Rewritten, FieldControl):
    """``item_field_answer`` (module table): ``must_lower`` against ``field_control``."""

    must_lower = True

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """The control's probe side (another field of the row)."""
        found = self.reference.change(item)
        return None if found is None else str(found["probe"])


def item_field_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name (the control first; ``intent`` ``hack``)."""
    control = FieldControl(write_tools, **fields)
    out: dict[str, Any] = {"field_control": control, "item_field_answer": ItemFieldAnswer(control, write_tools,
                                                                                          **fields)}
    for probe in out.values():
        probe.intent = HACK
    return out
