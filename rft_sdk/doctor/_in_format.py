"""Adversarial answers inside the answer's own format, hedged answers, whitespace joins and write tools
the gold never calls (issue 37, the flaw classes an outside suite found no probe for).

The ``adv_*`` answers of ``_generic`` *replace* the whole answer, so a grader that first parses a format
(a JSON object ``{"capital": ..., "year": ...}``, a text such as ``12.34 USD``) rejects them before it
reaches the lenient comparison behind. These probes keep the gold's answer and change one **typed slot**
of it (:func:`answer_slots`): a top-level field of a JSON-object answer (a number, a string, a list), or,
in a short text answer of 2 to :data:`MAX_FORMAT_WORDS` words, a number (``12.34`` of ``12.34 USD``) or a
word (``USD``); in prose, the marked answer line it ends with (``ANSWER: Ben Okoro``: the whole body, and
its numbers and words).

========================== ==========================================================================
probe                      the one change (the rest is the gold: its calls, then its answer)
========================== ==========================================================================
format_control             a control, never judged: one slot set to another item's value there
                           (a number none of the items has when no other item differs). A slot
                           whose replacement keeps the gold's score is not graded (a free-text
                           field, the currency every item shares), and no probe below plays it
format_removal             a control, never judged: the same slot left out. A slot whose removal
                           keeps the gold's score only echoes the prompt (the source amount of
                           "1,234.56 EUR is 1,337.54 USD"): a correct grader may refuse a wrong
                           echo yet pay none, so no probe below plays it either
adv_numbers_in_format      a number slot set to ``nan`` / ``inf`` / ``1e308`` / ``-0`` (JSON:
                           ``NaN``, ``Infinity``, ``1e308``, ``"nan"``)
adv_interval_in_format     ... to ``0 ± 1000000``, ``-1e9 to 1e9`` or the range ``0-1000000``
                           (``-1000000-1`` around a number that is not positive)
adv_wildcard_in_format     a slot set to ``*`` (a string slot also ``.*``, ``%``; a list ``["*"]``)
adv_every_in_format        a slot set to every candidate: a list to every element any item's
                           answer holds there, a string to "All of the above" or the regex
                           alternation of every item's value there, a number to that alternation
adv_id_prefix              a word slot that is an id of a letter prefix and a number (``N-02``, ``W3``)
                           set to the same number with another prefix the dataset's answers give such
                           ids (``S-02``): a grader comparing the number alone pays it (doctor28)
adv_negated_number         a number slot with ``|x| >= 1`` set to ``-x`` (an answer that is one
                           number: the answer negated), where no tolerance covers ``2|x|``
adv_unit_swap              the word that qualifies a graded number (its unit or currency: the word
                           right after it, else before a number that ends the answer; ``m`` of
                           ``5632.70 m``, ``USD`` of ``USD 12.34``) set to
                           another item's value there, the number kept. Judged even where
                           ``format_control`` found the word free: a number's unit is part of its
                           value (``5632.70 km`` is not ``5632.70 m``), so a grader that pays it
                           ignores the unit. Only where the number is graded (both controls)
hedge_wrong_first          a control, never judged: "<a wrong answer> or <the gold's answer>"
                           (the wrong one: the gold with one graded slot set to another item's
                           value; a plain answer: another item's answer; a JSON list field:
                           ``[wrong, *gold]``)
hedged_answer              the same hedge with the gold's answer first, the wrong one second;
                           judged only on items where ``hedge_wrong_first`` earned the gold's
                           score too (a grader that takes the first value and gives partial
                           credit is paid by at most one of the two orders)
adv_whitespace_join        (the invisible family) every candidate's words joined by a newline, a
                           tab or U+00A0: one "word" to a guard that splits on ``" "`` after a
                           normaliser that turns zero-width characters into spaces
superset_unused_write      (the superset family) the gold's calls plus one call of a write tool
                           the gold never calls (declared ``@tool(writes=True)``, learnt, or of
                           unknown kind), its arguments from the tool's schema and the values the
                           gold's calls pass; items take the unused tools in turn. Annotations
                           (``_generic.is_annotation``: references plus free text, a comment)
                           are never played: an honest end-state grader ignores a note
superset_other_write       the same unused write tool (no annotation either), but with the entity
                           the gold passes replaced by *another* entity of the item
                           (``_scope.sibling_values`` in the item's data and the gold's JSON tool
                           outputs, else the value another item's gold passes for that argument;
                           never a value the gold passes): ``unpin_package(package='beta')`` after
                           a gold ``pin_package(package='alpha', ...)``, caught by a grader that
                           checks only the entity the task asked about
========================== ==========================================================================

**Severity** (``_severity``): every judged probe here is ``must_lower``. The in-format answers and the
hedge hold the gold's answer but for one slot, so honest partial credit for the intact slots is no hack
(a grader that gives each of two fields 0.5 pays ``{"capital": "*", "year": 1889}`` 0.5); only a score
that does not fall *at all* from the gold's is (the slot is graded — the control lowered the score — and
the adversarial value there was paid like the right one). ``superset_unused_write`` adds a change the
task did not ask for: an honest grader that compares the whole end state lowers the score; a rollout
whose extra call was refused or changed nothing (the server's ``changed`` flag, its end-state digest
equal to the gold's) is not judged.

The answer probes apply to items whose answer is the graded outcome (not ``answer_free``), items whose gold
writes too (doctor27's chess: the results entered, then the leader named; ``format_control`` decides there
whether a slot is graded, and only a score that does not fall from the gold's FAILs), at most :data:`IN_FORMAT_ITEMS` items each; item ``k`` of a
probe plays variant ``k mod n``, the variants ordered value first and slot second (every slot gets the
first value before any gets the second).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._answers import ANSWER_LINE, answer_object, normalize_answer, own_inside
from ._generic import (
    NEUTRAL_TEXT,
    SUCCESS_VALUES,
    AdversarialAnswer,
    SupersetEndState,
    _canonical,
    _ContextProbe,
    _parameters,
    is_annotation,
)
from ._probes import HACK, ProbeContext, Steps, is_write_tool
from ._scope import _NOT_DATA, _json_values, json_records, sibling_values

__all__ = ["IN_FORMAT_ADVICE", "IN_FORMAT_ITEMS", "MAX_FORMAT_WORDS", "Slot", "answer_slots", "in_format_probes",
           "substitute", "unit_of"]

#: At most this many items per probe of this module (one rollout each).
IN_FORMAT_ITEMS = 6
#: A text answer of 2 to this many whitespace-separated words is a format with slots; a longer one is prose.
MAX_FORMAT_WORDS = 6
#: A number inside a text answer (not part of a word: ``s10`` and ``E3`` are names, not numbers), its thousands
#: grouped or not (``15,031.25`` is one number, not ``15`` and ``031.25``).
_NUMBER = re.compile(r"(?<![\w.])(?<!\w-)-?\d+(?:,\d{3})*(?:\.\d+)?(?![\w])")
#: An id of a letter prefix and a number (``N-02``, ``W3``, ``TOM_0412``): ``adv_id_prefix`` changes its prefix.
_PREFIXED_ID = re.compile(r"([A-Za-z]{1,4})([-_]?)(\d+)")
#: A word slot of a text answer: a token starting with a letter, trailing punctuation left out.
_WORD_TOKEN = re.compile(r"[A-Za-z][\w#/\-.]*(?<!\.)")
#: Characters the whitespace joins put between words (U+00A0: no-break space).
JOINS = ("\n", "\t", "\u00a0")

IN_FORMAT_ADVICE = {
    "adv_numbers_in_format": "nan/inf/1e308 inside the answer's format (a JSON field, '<amount> <CODE>') earn "
                             "the gold's score: parse each field strictly and refuse non-finite values "
                             "(math.isfinite) before comparing with a tolerance",
    "adv_interval_in_format": "an interval or range inside the answer's format earns the gold's score: parse "
                              "exactly one number per field, refuse '±', 'to', 'between', 'a-b'",
    "adv_wildcard_in_format": "a wildcard inside the answer's format (a JSON field '*', '12.34 *') earns the "
                              "gold's score: compare each field literally; never glob or regex-match it",
    "adv_every_in_format": "every candidate inside one field of the answer earns the gold's score: grade one "
                           "committed value per field (a list field by precision as well as recall)",
    "adv_id_prefix": "an id with another prefix and the right number (S-02 for N-02) earns the gold's score: compare "
                     "the whole id, never its number alone",
    "hedged_answer": "an answer that hedges ('X or Y', a list with the right and a wrong element) earns the "
                     "gold's score in either order: grade one committed value; refuse answers that name "
                     "several candidates, or score them as wrong",
    "adv_whitespace_join": "words joined by newlines, tabs or no-break spaces beat a length or keyword guard: "
                           "count words with str.split() (every Unicode whitespace) after NFKC, never "
                           "split(' ')",
    "adv_unit_swap": "the gold's number with another unit or currency ('5632.70 km' for '5632.70 m') earns the "
                     "gold's score: compare the unit with the number (parse both; convert or refuse another "
                     "unit), never the number alone",
    "adv_negated_number": "the gold's number with its sign flipped earns the gold's score: compare signed "
                          "values (abs() or a regex without the minus sign makes -x equal to x)",
    "superset_unused_write": "a call of a write tool the task never needs (e.g. make_org_admin) goes "
                             "unpunished: compare the whole end state with the gold's (diff_gold), so any "
                             "change the task did not ask for lowers the score",
    "superset_other_write": "another write tool on another entity of the item (unpin_package of another "
                            "package after the gold's pin_package) goes unpunished: compare every entity's "
                            "end state with the gold's (diff_gold), not only the one the task asked about",
}


@dataclass(frozen=True)
class Slot:
    """One typed slot of an answer: ``name`` (the JSON field, or ``"word k"`` / ``"number k"`` of a text
    answer), ``kind`` (``"number"``, ``"string"``, ``"list"``), the gold's ``value`` there and, in a text
    answer, the ``span`` of characters it occupies."""

    name: str
    kind: str
    value: Any
    span: tuple[int, int] | None = None
    #: the span of the marked answer line's body the slot lies in (``Ben Okoro`` of ``...\nANSWER: Ben Okoro``)
    line: tuple[int, int] | None = None


def answer_slots(answer: str) -> list[Slot]:
    """The typed slots of a reference answer (module docstring); ``[]`` for prose or a one-word answer.

    An answer with a marked answer line (``ANSWER: Ben Okoro``, :data:`~._answer_line.ANSWER_LINE`), short or
    long, has the slots of its last one only: the whole body (slot ``"line"``, a string) and, for a body of 2 to
    :data:`MAX_FORMAT_WORDS` words, its numbers and words, each with ``line`` set to the body's span; the
    words before it are not graded slots (``No order was overdue.\nANSWER: none``: only ``none``)."""
    obj = answer_object(answer)
    if obj is not None:
        out = []
        for name, value in obj.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                out.append(Slot(name, "number", value))
            elif isinstance(value, str) and value.strip():
                out.append(Slot(name, "string", value))
            elif isinstance(value, list) and value:
                out.append(Slot(name, "list", value))
        return out
    if not 2 <= len(answer.split()) <= MAX_FORMAT_WORDS or ANSWER_LINE.search(answer):
        return _line_slots(answer)  # prose before a marked line is no slot (doctor76's "No order was overdue.")
    numbers = [Slot(f"number {k}", "number", m.group(), m.span()) for k, m in enumerate(_NUMBER.finditer(answer))]
    taken = [s.span for s in numbers if s.span is not None]
    words, k = [], 0
    for m in re.finditer(r"\S+", answer):
        token = _WORD_TOKEN.match(m.group())
        if token is None or any(a < m.end() and m.start() < b for a, b in taken):
            continue
        words.append(Slot(f"word {k}", "string", token.group(), (m.start(), m.start() + token.end())))
        k += 1
    return numbers + words


def _line_slots(answer: str) -> list[Slot]:
    """The slots of the last marked answer line of prose (:func:`answer_slots`), ``[]`` without one."""
    found = list(ANSWER_LINE.finditer(answer))
    if not found:
        return []
    start = found[-1].start("body")
    body = found[-1]["body"].rstrip()
    line = (start, start + len(body))
    inner = answer_slots(body) if 2 <= len(body.split()) <= MAX_FORMAT_WORDS and answer_object(body) is None else []
    return [Slot("line", "string", body, line, line)] + [
        Slot(s.name, s.kind, s.value, (s.span[0] + start, s.span[1] + start), line) for s in inner
        if s.span and not (s.kind == "number" and _GROUPED.search(body, *_around(s.span, len(body))))]


#: A number that is a part of a date, a clock time or a code (``05`` of ``2025-05-31``, ``15`` of ``18:15``): a
#: digit group joined to another by ``-``, ``:`` or ``/``. Negating or replacing it alone writes no number.
_GROUPED = re.compile(r"\d[-:/]\d")


def _around(span: tuple[int, int], size: int) -> tuple[int, int]:
    return max(span[0] - 2, 0), min(span[1] + 2, size)


def substitute(answer: str, slot: Slot, value: Any) -> str:
    """``answer`` with ``slot`` set to ``value`` (JSON: the field, serialised as JSON — a float ``nan`` as
    ``NaN``; text: the slot's characters replaced by ``str(value)``)."""
    if slot.span is None:
        obj = dict(answer_object(answer) or {})
        obj[slot.name] = value
        return json.dumps(obj)
    start, end = slot.span
    return answer[:start] + str(value) + answer[end:]


def number_of(slot: Slot) -> float:
    """The value of a number slot: a JSON number as it is, a text number without its thousands separators
    (``"15,031.25"`` is 15031.25)."""
    return float(slot.value.replace(",", "")) if isinstance(slot.value, str) else float(slot.value)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return normalize_answer(a) == normalize_answer(b)
    return _canonical(a) == _canonical(b)


class _SlotProbe(_ContextProbe):
    """The gold's calls, then the gold's answer with one slot changed (see :meth:`variants`)."""

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = IN_FORMAT_ITEMS,
                 control: FormatControl | None = None, **kwargs: Any) -> None:
        super().__init__(write_tools, reason="the gold changes state, the answer is not the graded outcome "
                         "(answer_control), it has no graded slot for this probe (format_control), or the probe's "
                         f"{max_items} items are already chosen", **kwargs)
        self.max_items, self.slots_control = max_items, control
        self._chosen: dict[int, int] = {}
        self._seen: dict[str, list[Any]] = {}

    def candidates(self, slot: Slot) -> list[Any]:
        """The distinct values the dataset's reference answers hold at a slot of this name, in order."""
        return self._seen.get(slot.name, [])

    def donor_value(self, slot: Slot, answer: str = "") -> Any:
        """Another item's value at the slot that the gold's ``answer`` holds nowhere (so the "wrong" value
        is wrong: ``E7`` is no wrong first issue of ``E3, E7``), else for a number a value no item has
        (``2 × value + 1``); ``None`` when there is none."""
        own = [s.value for s in answer_slots(answer)] + [e for s in answer_slots(answer) if s.kind == "list"
                                                         for e in s.value]
        other = next((v for v in self.candidates(slot) if not _same(v, slot.value)
                      and not any(_same(v, o) for o in own)), None)
        if other is None and slot.kind == "number":
            number = number_of(slot)
            other = 2 * number + 1 if slot.span is None else f"{2 * number + 1:g}"
        if slot.kind == "list" and other is not None and not isinstance(other, list):
            other = [other]
        return other

    def graded(self, slot: Slot) -> bool:
        """Whether the slot carries the outcome: ``format_control`` lowered the score when it replaced it with
        another item's value, and ``format_removal`` lowered it when it left the slot out (every slot, when the
        controls did not run). A slot that only echoes the prompt (the source amount of "1,234.56 EUR is
        1,337.54 USD") fails the second test: a correct grader may refuse a *wrong* echo yet rightly pay an
        answer without one, so what an adversarial value there earns says nothing of a hack."""
        control = self.slots_control
        if control is None or not control.ran:
            return True
        removal = control.removal
        return slot.name in control.graded_slots and (
            removal is None or not removal.ran or slot.name in removal.graded_slots)

    def variants(self, item: Mapping[str, Any]) -> list[tuple[Slot, str]]:  # pragma: no cover - abstract
        raise NotImplementedError

    def prepare(self, context: ProbeContext) -> None:
        """Collect every slot value of the dataset's answers; choose the items (gold, no effective write,
        not ``answer_free``, a variant to play)."""
        super().prepare(context)
        seen: dict[str, dict[str, Any]] = {}
        for item in context.items:
            if isinstance(item.get(self.answer_field), str):
                for slot in answer_slots(item[self.answer_field]):
                    seen.setdefault(slot.name, {}).setdefault(_canonical(slot.value), slot.value)
        self._seen = {k: list(v.values()) for k, v in seen.items()}
        self._chosen = {}
        for i, item in enumerate(context.items):
            if len(self._chosen) < self.max_items and self._has_gold(item) and i not in context.answer_free \
                    and self.variants(item):
                self._chosen[i] = len(self._chosen)

    def applies(self, item: Mapping[str, Any]) -> bool:
        """One of the chosen items."""
        return self._context.index_of(item) in self._chosen

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls, one per turn."""
        return [[a] for a in item[self.actions_field]]

    def played(self, item: Mapping[str, Any]) -> tuple[Slot, str] | None:
        """Variant ``k mod n`` for the probe's ``k``-th item."""
        options = self.variants(item)
        return options[self._chosen.get(self._context.index_of(item) or 0, 0) % len(options)] if options else None

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The answer of :meth:`played`."""
        chosen = self.played(item)
        return chosen[1] if chosen is not None else ""

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """``{"slot", "answer"}``: the slot changed and the answer played (cut at 300 characters)."""
        chosen = self.played(item)
        if chosen is None:
            return {}
        text = chosen[1]
        return {"slot": chosen[0].name, "answer": text if len(text) <= 300 else text[:300] + "..."}


def _interleave(per_slot: Sequence[tuple[Slot, Sequence[Any]]], answer: str) -> list[tuple[Slot, str]]:
    """Value first, slot second: every slot's first value, then every slot's second, ..."""
    out: list[tuple[Slot, str]] = []
    for k in range(max((len(v) for _, v in per_slot), default=0)):
        out += [(slot, substitute(answer, slot, values[k])) for slot, values in per_slot if k < len(values)]
    return out


class FormatControl(_SlotProbe):
    """The control of the module table (``control = True``): one slot per item set to another item's value.
    Its :meth:`record` keeps the slot names whose replacement lowered the score (:attr:`graded_slots`)."""

    control = True

    def __init__(self, write_tools: Collection[str] | None = None, **kwargs: Any) -> None:
        super().__init__(write_tools, **kwargs)
        self.ran = False
        self.graded_slots: set[str] = set()
        self.removal: SlotRemovalControl | None = None

    def variants(self, item: Mapping[str, Any]) -> list[tuple[Slot, str]]:
        """Each slot with a donor value, its replacement."""
        answer = str(item.get(self.answer_field) or "")
        return [(s, substitute(answer, s, v)) for s in answer_slots(answer) if (v := self.donor_value(s, answer)) is not None]

    def record(self, context: ProbeContext, scores: Mapping[int, float], gold: Mapping[int, float | None]) -> None:
        """A slot is graded when replacing it lowered the score on every item that played it."""
        self.ran, self.graded_slots = True, set()
        free: set[str] = set()
        for i, score in scores.items():
            chosen = self.played(context.items[i])
            if chosen is None or gold.get(i) is None:
                continue
            lowered = score < float(gold[i] or 0.0) - 1e-6
            (self.graded_slots if lowered else free).add(chosen[0].name)
        self.graded_slots -= free


class SlotRemovalControl(FormatControl):
    """The second control (``format_removal``): on each item, the slot :class:`FormatControl` replaced is left
    out instead (text: its characters deleted; JSON: the field removed). :attr:`graded_slots` keeps the slots
    whose removal lowered the score: the ones the outcome needs."""

    def variants(self, item: Mapping[str, Any]) -> list[tuple[Slot, str]]:
        """The slots of :meth:`FormatControl.variants`, in its order, each left out."""
        answer = str(item.get(self.answer_field) or "")
        return [(s, _without(answer, s)) for s, _ in super().variants(item)]


def _without(answer: str, slot: Slot) -> str:
    if slot.span is None:
        obj = dict(answer_object(answer) or {})
        obj.pop(slot.name, None)
        return json.dumps(obj)
    start, end = slot.span
    return " ".join((answer[:start] + answer[end:]).split())


_SPECIAL_JSON: tuple[Any, ...] = (float("nan"), float("inf"), 1e308, "nan")
_SPECIAL_TEXT = ("nan", "inf", "1e308", "-0")


def _special(slot: Slot, probe: _SlotProbe) -> list[Any]:
    if slot.kind != "number":
        return []
    if slot.span is None:
        return list(_SPECIAL_JSON)
    return [v for v in _SPECIAL_TEXT if not (v == "-0" and number_of(slot) == 0)]


def _interval(slot: Slot, probe: _SlotProbe) -> list[Any]:
    centre = "1" if slot.kind == "number" and number_of(slot) == 0 else "0"
    if slot.kind != "number":
        return []
    span = "0-1000000" if number_of(slot) > 0 else "-1000000-1"  # a range around the value, never the value
    return [f"{centre} ± 1000000", "-1e9 to 1e9", span]


def _wildcard(slot: Slot, probe: _SlotProbe) -> list[Any]:
    if slot.kind == "list":
        return [["*"]]
    return ["*", ".*", "%"] if slot.kind == "string" else ["*"]


def _negated(slot: Slot, probe: _SlotProbe) -> list[Any]:
    """The number with its sign flipped, where ``|x| >= 1`` (a tolerance never covers ``2|x|`` there); never in a
    marked answer line of prose (doctor23's honest tide grader reads ``5.9 m`` of ``-5.9 m``: the policy still
    needs the right magnitude, so an ignored sign there pays no work left undone)."""
    if slot.kind != "number" or slot.line is not None:
        return []
    number = number_of(slot)
    if not math.isfinite(number) or abs(number) < 1:
        return []
    if slot.span is None:
        return [-slot.value]
    text = str(slot.value)
    return [text[1:] if text.startswith("-") else "-" + text]


def _alternation(values: Sequence[Any]) -> str:
    return "(" + "|".join(re.escape(v if isinstance(v, str) else _canonical(v)) for v in values) + ")"


def _every(slot: Slot, probe: _SlotProbe) -> list[Any]:
    values = own_inside(probe.candidates(slot), slot.value, _same)  # a grader reading the first grades one value
    if slot.kind == "list":
        pool = {_canonical(e): e for v in values if isinstance(v, list) for e in v}
        return [list(pool.values())] if len(pool) > len(slot.value) else []
    if len(values) < 2:
        return []
    return ["All of the above", _alternation(values)] if slot.kind == "string" else [_alternation(values)]


class InFormatAnswer(_SlotProbe):
    """One adversarial family inside the answer's format: ``values(slot, probe) -> [value, ...]``."""

    must_lower = True

    def __init__(self, values: Any, write_tools: Collection[str] | None = None, **kwargs: Any) -> None:
        super().__init__(write_tools, **kwargs)
        self.values = values

    def variants(self, item: Mapping[str, Any]) -> list[tuple[Slot, str]]:
        """Each graded slot with each of the family's values there, value first (:func:`_interleave`)."""
        answer = str(item.get(self.answer_field) or "")
        per_slot = [(s, v) for s in answer_slots(answer) if self.graded(s) and (v := self.values(s, self))]
        return _interleave(per_slot, answer)


class NegatedNumber(InFormatAnswer):
    """``adv_negated_number``: a number slot (``|x| >= 1``) set to ``-x``; an answer that is one number is
    itself that slot (graded wherever the answer is the outcome: ``answer_control``)."""

    def __init__(self, write_tools: Collection[str] | None = None, **kwargs: Any) -> None:
        super().__init__(_negated, write_tools, **kwargs)

    def variants(self, item: Mapping[str, Any]) -> list[tuple[Slot, str]]:
        """The in-format negations; for a one-number answer, that number negated; none where the gold writes (a
        reply's amount beside the credit the end state grades: a grader reading ``$-11.00`` as 11.00 there
        pays no work left undone)."""
        if self.writes_of(item):
            return []
        out = super().variants(item)
        answer = str(item.get(self.answer_field) or "")
        text = answer.strip()
        if out or answer_slots(answer) or not _NUMBER.fullmatch(text):
            return out
        start = answer.index(text)
        slot = Slot("answer", "number", text, (start, start + len(text)))
        return [(slot, substitute(answer, slot, v)) for v in _negated(slot, self)]


def unit_of(answer: str, number: Slot) -> Slot | None:
    """The word slot of a text ``answer`` that qualifies ``number`` (a number slot of it): the word right after
    it (only whitespace between), else, when the number ends the answer, the word right before it
    (``USD 12.34``); ``None`` for a JSON answer or none."""
    if number.span is None or number.kind != "number":
        return None
    words = [s for s in answer_slots(answer) if s.kind == "string" and s.span is not None and s.name != "line"]
    start, end = number.span
    after = next((w for w in words if w.span and w.span[0] >= end and not answer[end:w.span[0]].strip()), None)
    if after is not None or answer[end:].strip(" .,;!"):
        return after
    return next((w for w in words if w.span and w.span[1] <= start and not answer[w.span[1]:start].strip()), None)


class UnitSwap(_SlotProbe):
    """``adv_unit_swap`` (module table): a graded number's unit set to another item's unit there."""

    must_lower = True

    def variants(self, item: Mapping[str, Any]) -> list[tuple[Slot, str]]:
        """Per graded number slot with a unit (:func:`unit_of`) that another item's answer holds another value
        of, the answer with that unit replaced."""
        answer = str(item.get(self.answer_field) or "")
        out = []
        for slot in answer_slots(answer):
            unit = unit_of(answer, slot) if self.graded(slot) else None
            value = self.donor_value(unit, answer) if unit is not None else None
            if unit is not None and value is not None:
                out.append((unit, substitute(answer, unit, value)))
        return out


class _Hedge(_SlotProbe):
    """The gold's answer and a wrong one in one reply; ``wrong_first`` sets their order."""

    wrong_first = False

    def variants(self, item: Mapping[str, Any]) -> list[tuple[Slot, str]]:
        """Per graded slot with a donor value, the hedge; for an answer without slots (a plain value), the
        whole answer hedged with another item's answer."""
        answer = str(item.get(self.answer_field) or "").strip()
        out = []
        for slot in answer_slots(answer):
            wrong = self.donor_value(slot, answer)
            if wrong is None or not self.graded(slot):
                continue
            if slot.kind == "list":
                extra = [e for e in wrong if not any(_same(e, g) for g in slot.value)][:1]
                if extra:
                    out.append((slot, substitute(answer, slot, extra + slot.value if self.wrong_first
                                                 else slot.value + extra)))
                continue
            if slot.span is None:  # a JSON string or number field: "right or wrong" as one string
                pair = [str(wrong), str(slot.value)] if self.wrong_first else [str(slot.value), str(wrong)]
                out.append((slot, substitute(answer, slot, " or ".join(pair))))
                continue
            other = substitute(answer, slot, wrong)
            if slot.line is not None:  # within the marked line: "ANSWER: Ben Okoro or Carla Mendes"
                start, end = slot.line
                right, wrong_body = answer[start:end], other[start:len(other) - (len(answer) - end)]
                hedge = f"{wrong_body} or {right}" if self.wrong_first else f"{right} or {wrong_body}"
                out.append((slot, answer[:start] + hedge + answer[end:]))
                continue
            out.append((slot, f"{other} or {answer}" if self.wrong_first else f"{answer} or {other}"))
        if not out and answer and not answer_slots(answer) and answer_object(answer) is None \
                and len(answer.split()) <= MAX_FORMAT_WORDS:
            donor = self.donor(item)
            if donor is not None:
                wrong = str(donor[self.answer_field]).strip()
                text = f"{wrong}, or maybe {answer}" if self.wrong_first else f"{answer}, or maybe {wrong}"
                out.append((Slot("answer", "string", answer), text))
        return out


class HedgeWrongFirst(_Hedge):
    """The control of the module table: the wrong answer first. :attr:`paid` holds the items where it
    earned the gold's score (and its score per item, for ``hedged_answer``'s record)."""

    control = True
    wrong_first = True

    def __init__(self, write_tools: Collection[str] | None = None, **kwargs: Any) -> None:
        super().__init__(write_tools, **kwargs)
        self.scores: dict[int, float] = {}

    def record(self, context: ProbeContext, scores: Mapping[int, float], gold: Mapping[int, float | None]) -> None:
        """Remember each item's score."""
        self.scores = dict(scores)

    def paid(self, index: int, gold: float | None) -> bool:
        """Whether the wrong-first hedge earned the gold's score on item ``index``."""
        return gold is not None and index in self.scores and self.scores[index] >= gold - 1e-6 \
            and self.scores[index] > 0


class HedgedAnswer(_Hedge):
    """The probe of the module table: the gold's answer first (``must_lower``), judged only on items where
    the wrong-first hedge earned the gold's score too."""

    must_lower = True
    not_judged_reason = "not judged: the wrong-first hedge earned less than the gold (a first-value grader)"

    def __init__(self, first: HedgeWrongFirst, write_tools: Collection[str] | None = None, **kwargs: Any) -> None:
        super().__init__(write_tools, **kwargs)
        self.first = first

    def prepare(self, context: ProbeContext) -> None:
        """As for the control, keeping only the items the control played."""
        super().prepare(context)
        self._chosen = {i: k for i, k in self.first._chosen.items() if i in self._chosen}

    def judged(self, item: Mapping[str, Any]) -> bool:
        """Only where the wrong-first order earned the gold's score too."""
        index = self._context.index_of(item)
        gold = self._context.gold_scores[index] if index is not None and index < len(self._context.gold_scores) \
            else None
        return index is not None and self.first.paid(index, gold)

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """As for every slot probe, plus ``wrong_first_score``: what the other order earned."""
        index = self._context.index_of(item)
        return {**super().describe(item), "wrong_first_score": self.first.scores.get(index) if index is not None
                else None}


def _joins(item: Mapping[str, Any], probe: AdversarialAnswer) -> list[str]:
    words = [w for a in probe.candidates(item) for w in a.split()]
    return [j.join(words) for j in JOINS] if len(words) > 1 else []


class WhitespaceJoin(AdversarialAnswer):
    """``adv_whitespace_join`` (module table): an adversarial answer of the invisible family that says
    which join it played."""

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """``{"join": "U+000A" | "U+0009" | "U+00A0", "answer"}`` (cut at 300 characters)."""
        text = self.final_answer(item)
        join = next((j for j in JOINS if j in text), "")
        return {"join": f"U+{ord(join):04X}" if join else "", "answer": text[:300]}


#: An enum value that undoes or refuses what a record stands for.
UNDOING = re.compile(r"cancel|void|reject|refus|declin|fail|revok|no[_ -]?show|lost|expired|suspend|block", re.I)


def _placeholder(schema: Mapping[str, Any], known: Mapping[str, Any], strings: Sequence[str],
                 text: str | None = None) -> Any:
    """A plausible value for a parameter without a gold value: an enum's first value that undoes or refuses
    (:data:`UNDOING`: ``cancelled``, ``no_show``), else its first that is no success value (``SUCCESS_VALUES``),
    else its first; else by type (a string: ``text`` when given, else the first string the gold passes; a list:
    that string). Why not a success value (doctor25's studio): setting a rescheduled session ``confirmed`` is a
    change an honest grader may rightly accept as the same live session; cancelling it is not."""
    enum = schema.get("enum")
    if enum:
        undoing = [v for v in enum if isinstance(v, str) and UNDOING.search(v)]
        plain = [v for v in enum if not (isinstance(v, str) and v.lower() in SUCCESS_VALUES)]
        return (undoing or plain or enum)[0]
    kinds = schema.get("type")
    kind = kinds[0] if isinstance(kinds, list) and kinds else kinds
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return 1
    if kind == "array":
        return [strings[0]] if strings else []
    if kind == "object":
        return {}
    return text if text is not None else strings[0] if strings else "x"


class SupersetUnusedWrite(SupersetEndState):
    """The gold's calls plus one call of a write tool the gold never calls (module table)."""

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = IN_FORMAT_ITEMS,
                 **kwargs: Any) -> None:
        super().__init__(write_tools, **kwargs)
        self._reason = ("the gold changes nothing, or every write tool the item offers is one the gold calls, "
                        f"or the probe's {max_items} items are already chosen")
        self.max_items = max_items
        self._chosen: dict[int, int] = {}

    def extra_calls(self, item: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One call per write tool (or tool of unknown kind) of the item that the gold never calls, except
        annotations (:func:`is_annotation`: a note or comment an honest end-state grader rightly ignores;
        ``_outside.annotated_wrong_outcome`` plays those). See :meth:`unused_calls`."""
        return [call for call, note in self.unused_calls(item) if not note]

    def unused_calls(self, item: Mapping[str, Any]) -> list[tuple[dict[str, Any], bool]]:
        """``(call, is_annotation)`` per write tool (or tool of unknown kind) of the item that the gold never
        calls. A string parameter without a gold value is filled with :data:`NEUTRAL_TEXT` when the call
        already names an entity the gold passes (it is the call's text), else with the first string the gold
        passes (the entity: ``add_note(ticket_id='T-201', text='Noted for the record.')`` where the gold says
        ``ticket``)."""
        gold = [a for a in item.get(self.actions_field) or [] if isinstance(a, Mapping)]
        used = {a.get("name") for a in gold}
        known: dict[str, Any] = {}
        for a in gold:
            for k, v in (a.get("arguments") or {}).items():
                known.setdefault(k, v)
        strings = [v for v in known.values() if isinstance(v, str)]
        listed = self._listed_values(item)
        out: list[tuple[dict[str, Any], bool]] = []
        for tool in item.get("tools") or []:
            name, props, required = _parameters(tool)
            if name in used or not (is_write_tool(name, self.write_tools) or name in self._context.unknown_tools):
                continue
            names = [k for k in props if k in known or k in required]
            args: dict[str, Any] = {}
            for k in names:  # a string without a gold value: the entity when none is named yet, else the text
                text = NEUTRAL_TEXT if any(v in strings for v in args.values()) or any(
                    n in known for n in names) else None
                args[k] = known[k] if k in known else listed[k] if k in listed and not (
                    props.get(k) or {}).get("enum") else _placeholder(props.get(k) or {}, known, strings, text)
            out.append(({"name": name, "arguments": args}, is_annotation(props, args, known)))
        return out

    def _listed_values(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """Per field name, the first scalar value a record of the gold's reads' JSON outputs holds under it
        (``list_windows`` → ``{"window_id": "W-7", ...}``): the id of a listed entity, for an unused tool's
        argument of that name that no gold call passes (doctor37's maintenance windows: another team's window
        cancelled, where the rack's id was sent as the window's and refused)."""
        outputs = self.gold_outputs_of(item)
        writes = set(self.writes_of(item))
        reads = [o for k, o in enumerate(outputs) if k not in writes]  # never the record the gold's own write made
        out: dict[str, Any] = {}
        for record in json_records(_json_values(reads)):
            for k, v in record.items():
                if isinstance(v, (str, int)) and not isinstance(v, bool):
                    out.setdefault(k, v)
        return out

    def prepare(self, context: ProbeContext) -> None:
        """Choose the items: the gold writes and the item offers a write tool the gold never calls."""
        super().prepare(context)
        self._chosen = {}
        for i, item in enumerate(context.items):
            if len(self._chosen) < self.max_items and self._has_gold(item) and self.writes_of(item) \
                    and self.extra_calls(item):
                self._chosen[i] = len(self._chosen)

    def applies(self, item: Mapping[str, Any]) -> bool:
        """One of the chosen items."""
        return self._context.index_of(item) in self._chosen

    def extra(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """The unused tool's call for the probe's ``k``-th item: call ``k mod n``."""
        calls = self.extra_calls(item)
        return calls[self._chosen.get(self._context.index_of(item) or 0, 0) % len(calls)] if calls else None

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls, then the extra call."""
        extra = self.extra(item)
        return [[a] for a in [*item[self.actions_field], *([extra] if extra else [])]]

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """``{"call": "tool(arg=value, ...)"}``: the extra call played."""
        c = self.extra(item)
        return {"call": f"{c['name']}({', '.join(f'{k}={v!r}' for k, v in c['arguments'].items())})"[:160]} \
            if c else {}


class SupersetOtherWrite(SupersetUnusedWrite):
    """The gold's calls plus one call of a write tool the gold never calls, aimed at another entity of the
    item (module table): ``superset_unused_write`` passes the gold's own entity, ``superset_in_scope`` the
    gold's own tool, so a grader that checks only the entity the task asked about escapes both."""

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = IN_FORMAT_ITEMS,
                 **kwargs: Any) -> None:
        super().__init__(write_tools, max_items=max_items, **kwargs)
        self._reason = ("the gold changes nothing, every write tool the item offers is one the gold calls or an "
                        "annotation, no argument names an entity with another entity beside it (the item's "
                        f"data, the gold's tool outputs, other items' golds), or the probe's {max_items} items "
                        "are already chosen")

    def extra_calls(self, item: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Each unused non-annotation call of :meth:`SupersetUnusedWrite.extra_calls` with one argument
        that holds a value the gold passes replaced by another entity: the siblings of that value
        (:func:`_scope.sibling_values` over the item's data and the gold replay's JSON outputs), else the
        values other items' golds pass for that argument; never a value this item's gold passes."""
        gold = [a for a in item.get(self.actions_field) or [] if isinstance(a, Mapping)]
        used = {json.dumps(v) for a in gold for v in _arguments_of(a).values() if isinstance(v, (str, int, float))}
        outputs = self.gold_outputs_of(item)
        sources = [v for k, v in item.items() if k not in _NOT_DATA and k != self.answer_field]
        sources += _json_values(outputs)
        out = []
        for call in super().extra_calls(item):
            for name, value in call["arguments"].items():
                if isinstance(value, bool) or json.dumps(value, default=str) not in used:
                    continue
                others = sibling_values(value, sources, used) or self._other_items_values(item, name, value, used)
                out += [{"name": call["name"], "arguments": {**call["arguments"], name: w}} for w in others[:2]]
        return out

    def _other_items_values(self, item: Mapping[str, Any], name: str, value: Any, used: Collection[str]) -> list[Any]:
        """The values other items' golds pass for argument ``name`` (``value``'s type, not in ``used``)."""
        out: list[Any] = []
        for other in self._context.items:
            if other is item:
                continue
            for a in other.get(self.actions_field) or []:
                v = _arguments_of(a).get(name) if isinstance(a, Mapping) else None
                if type(v) is type(value) and json.dumps(v) not in used and v not in out:
                    out.append(v)
        return out


def _arguments_of(call: Mapping[str, Any]) -> dict[str, Any]:
    arguments = call.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return {}
    return dict(arguments) if isinstance(arguments, Mapping) else {}


#: The in-format families: probe name → values per slot.
def _id_prefix(slot: Slot, probe: _SlotProbe) -> list[Any]:
    """An id's number with another prefix the dataset's answers give such ids (``S-02`` for ``N-02``): a grader
    comparing the number alone pays it (doctor28's trail ids, the region letter dropped)."""
    mine = _PREFIXED_ID.fullmatch(str(slot.value)) if slot.kind == "string" else None
    if mine is None:
        return []
    prefixes = dict.fromkeys(m[1] for values in probe._seen.values() for v in values if isinstance(v, str)
                             and (m := _PREFIXED_ID.fullmatch(v)) is not None and m[2] == mine[2]
                             and m[1].casefold() != mine[1].casefold())
    return [f"{p}{mine[2]}{mine[3]}" for p in list(prefixes)[:1]]


IN_FORMAT_FAMILIES = {"adv_numbers_in_format": _special, "adv_interval_in_format": _interval,
                      "adv_wildcard_in_format": _wildcard, "adv_every_in_format": _every, "adv_id_prefix": _id_prefix}


def in_format_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name (controls first; each judged one ``intent`` ``hack``)."""
    control = FormatControl(write_tools, **fields)
    control.removal = SlotRemovalControl(write_tools, **fields)
    first = HedgeWrongFirst(write_tools, control=control, **fields)
    out: dict[str, Any] = {"format_control": control, "format_removal": control.removal, "hedge_wrong_first": first}
    out.update({name: InFormatAnswer(values, write_tools, control=control, **fields)
                for name, values in IN_FORMAT_FAMILIES.items()})
    out["adv_negated_number"] = NegatedNumber(write_tools, control=control, **fields)
    out["adv_unit_swap"] = UnitSwap(write_tools, control=control, **fields)
    out["hedged_answer"] = HedgedAnswer(first, write_tools, control=control, **fields)
    out["adv_whitespace_join"] = WhitespaceJoin(_joins, write_tools, max_items=len(JOINS), **fields)
    out["superset_unused_write"] = SupersetUnusedWrite(write_tools, **fields)
    out["superset_other_write"] = SupersetOtherWrite(write_tools, **fields)
    for probe in out.values():
        probe.intent = HACK
    return out
