"""Counterfactuals that keep *part* of the gold's value (issue 37, a held-out suite's misses: a grader that
tests ``str(kwh) in answer``, one that scores tags by recall, one that keys a title on its first letters).
Each probe changes one thing of the gold and is judged against a **control** that changes the same thing
to a plainly wrong value on the same item: the control tells whether the grader reads that thing at all
(where the control keeps the gold's score, the thing is no graded outcome and the probe is not judged).

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
number_control            a control, never judged: the gold's answer with every number rotated
                          digit by digit (``d → (d + 5) mod 10``, a leading ``0`` made ``9``:
                          ``377`` → ``822``), a number that shares no digit position with the gold's
superstring_number        the gold's answer with every number replaced by another number that
                          *contains* the gold's digits (:func:`superstring`: ``377`` → ``3770``,
                          ``4,180.00`` → ``14,180.00``): a grader testing ``str(value) in answer``
                          pays it. Judged ``must_not_raise`` against ``number_control``: a correct
                          grader pays a different number no more than any other wrong number
unparsed_number           the gold's answer with every number written :data:`UNPARSED` (``unknown``):
                          a grader whose parser pays what it cannot parse (``except ValueError:
                          return 1.0``, doctor20's irrigation grader: "benefit of the doubt") pays
                          it in full. Judged ``must_lower`` (the gold's whole score is reward)
                          where ``number_control`` scored less than the gold (the number is
                          graded): an honest grader pays an answer without its number less than
                          the gold, however much partial credit the rest earns
list_control              a control, never judged: one list argument of one gold write (tags, ids,
                          recipients) replaced by as many plausible elements, none of the gold's
padded_list               that list argument with :func:`padding_size` plausible extra elements
                          appended to the gold's (another item's values of the same argument, then
                          generated ones): set F1 falls to at most ``2n / (5n + 2)`` < 0.4, recall
                          stays 1.0. Judged on the plain line with ``list_control``'s score as the
                          honest-but-wrong baseline: above half-way from it to the gold is reward.
                          A gold list holding a wildcard (``["*"]``) is not played, and no wildcard is
                          added: ``*`` may already mean every element
text_control              a control, never judged: one string argument of one gold write that the
                          gold copies verbatim from the task's data (the prompt or a tool output: a
                          title, a name; 12+ characters; never a note in lower-case phrases across
                          the items, ``prose_fields``) replaced by another item's value of the
                          same argument (another prefix), else by its words reversed
truncated_text            that argument cut after about half of its words and ended with ``...``
                          (:func:`truncated`): a grader comparing only a prefix pays it. Judged
                          ``must_lower`` (the whole gold score is reward), only where
                          ``text_control`` scored less than the gold
========================= ==========================================================================

Each pair plays at most :data:`LENIENT_ITEMS` items (the first it is defined on; the probe plays the
items its control played); where a gold has several such arguments, item ``k`` of the chosen ones plays
argument ``k mod n`` (so one that no grader reads does not hide another). **What they can get wrong, and the guard**: a list a correct grader does not
read, a free-text note or boilerplate no correct grader reads (:func:`~._dataset_probes.template_fields`,
values the model writes but the data never holds) — the controls and the copy rule keep those out; the
outcome rule (``changes_end_state``: the end-state digest differs from the gold replay's) keeps out an
argument the tool ignores. A grader that legitimately reads only a part of a copied text (a note that
must *mention* the order id) makes ``truncated_text`` fire: waive it there.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ._answer_numbers import NUMBER
from ._answers import prompt_texts
from ._dataset_probes import has_wildcard, item_values, prose_fields, template_fields
from ._generic import _ContextProbe, with_argument
from ._probes import HACK, ProbeContext, Steps, is_write_tool
from ._scope import _json_values

__all__ = ["LENIENT_ADVICE", "LENIENT_ITEMS", "MIN_TEXT", "ListControl", "NumberControl", "PaddedList",
           "SuperstringNumber", "TextControl", "TruncatedText", "UNPARSED", "UnparsedNumber", "lenient_probes",
           "padding_size", "rotated", "superstring", "truncated"]

#: What ``unparsed_number`` writes in place of every number of the answer.
UNPARSED = "unknown"

#: At most this many items per probe of this module (and as many for its control: two rollouts per item).
LENIENT_ITEMS = 4
#: A copied text argument shorter than this (characters) is not cut (a name, a code: nothing to keep).
MIN_TEXT = 12

LENIENT_ADVICE = {
    "unparsed_number": "an answer whose number is the word 'unknown' earns the gold's score: a number the grader "
                       "cannot parse is a wrong answer (score 0 for it), never the benefit of the doubt",
    "superstring_number": "a number that only contains the right digits ('3770' for 377) earns reward: parse the "
                          "answer's numbers with a strict pattern and compare them whole, never 'str(value) in answer'",
    "padded_list": "the right list padded with many extra elements earns reward: score a list by set F1 (or exact "
                   "set equality), never by recall alone",
    "truncated_text": "a written text cut after its first words ('Deep Sea Mining: Wh...') earns the full reward: "
                      "compare the whole value (after a case/space normalisation), never a prefix or a short key",
}

_EPS = 1e-6


def superstring(number: str) -> str:
    """Another number whose text contains ``number``'s digits: with a decimal point or thousands separators,
    ``"1"`` put before its digits (``"4,180.00"`` → ``"14,180.00"``, ``"-3.5"`` → ``"-13.5"``: appending a digit
    after the point would stay within a tolerance); else a ``"0"`` appended (``"377"`` → ``"3770"``, ``"0"`` →
    ``"10"``). Never the same value."""
    sign, body = ("-", number[1:]) if number.startswith("-") else ("", number)
    if "." in body or "," in body:
        return f"{sign}1{body}"
    return f"{sign}10" if body.strip("0") == "" else f"{sign}{body}0"


def rotated(number: str) -> str:
    """``number`` with each digit ``d`` made ``(d + 5) mod 10`` and a leading ``0`` made ``9`` (``"377"`` →
    ``"822"``, ``"5"`` → ``"9"``): a plainly wrong number of the same form (sign, separators, decimals kept)."""
    out = "".join(str((int(c) + 5) % 10) if c.isdigit() else c for c in number)
    lead = 1 if out.startswith("-") else 0
    return out[:lead] + "9" + out[lead + 1:] if out[lead:lead + 1] == "0" else out


def _replace_numbers(text: str, change: Any) -> str | None:
    """``text`` with each number (:data:`~._answer_numbers.NUMBER`: never the digits of an id such as ``k10``,
    whose substring test the kv twins' honest grader uses for a whole value) replaced by ``change(number)``."""
    found = list(NUMBER.finditer(text))
    if not found:
        return None
    out, last = [], 0
    for m in found:
        out += [text[last:m.start()], change(m.group())]
        last = m.end()
    return "".join([*out, text[last:]])


def padding_size(n: int) -> int:
    """How many elements ``padded_list`` adds to a gold list of ``n``: ``3n + 2`` (set F1 ``2n / (5n + 2)``,
    below 0.4, so an honest set-F1 grader stays under the half-way line; recall stays 1.0)."""
    return 3 * n + 2


def truncated(text: str) -> str | None:
    """``text`` cut after about half of its words (at least one kept) and ended with ``"..."``
    (``"Deep Sea Mining: Who Owns the Ocean Floor?"`` → ``"Deep Sea Mining:..."``); a one-word text cut after
    half of its characters; ``None`` under :data:`MIN_TEXT` characters."""
    text = text.strip()
    if len(text) < MIN_TEXT:
        return None
    words = text.split()
    if len(words) == 1:
        return text[:len(text) // 2] + "..."
    kept: list[str] = []
    size = 0
    for w in words:
        if kept and size + len(w) > len(text) // 2:
            break
        kept.append(w)
        size += len(w) + 1
    return " ".join(kept) + "..."


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


class _Control(_ContextProbe):
    """A control of this module: plays a plainly wrong change on the first :data:`LENIENT_ITEMS` items with a
    :meth:`change`, never judged; :attr:`scores` keeps its score per item for its probe."""

    control = True
    probe_side = False
    reason = ""

    def __init__(self, write_tools: Collection[str] | None = None, **fields: Any) -> None:
        super().__init__(write_tools, reason=self.reason, **fields)
        self.items: set[int] = set()
        self.scores: dict[int, float] = {}

    def change(self, item: Mapping[str, Any]) -> dict[str, Any] | None:  # pragma: no cover - abstract
        """``{"position": gold call index or None (the answer), "control": value, "probe": value, ...}``."""
        raise NotImplementedError

    def prepare(self, context: ProbeContext) -> None:
        """Choose the first :data:`LENIENT_ITEMS` items with a change."""
        super().prepare(context)
        self.items = set()
        for i, item in enumerate(context.items):
            if len(self.items) < LENIENT_ITEMS and self._has_gold(item) and self.change(item) is not None:
                self.items.add(i)

    def applies(self, item: Mapping[str, Any]) -> bool:
        """One of the chosen items."""
        return self._context.index_of(item) in self.items

    def _value(self, item: Mapping[str, Any]) -> tuple[dict[str, Any] | None, Any]:
        found = self.change(item)
        return found, None if found is None else found["probe" if self.probe_side else "control"]

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls, the chosen write's argument changed (when the change is one of a write)."""
        found, value = self._value(item)
        if found is None or found.get("position") is None:
            return with_argument(item[self.actions_field])
        return with_argument(item[self.actions_field], found["position"], found["argument"], value)

    def record(self, context: ProbeContext, scores: Mapping[int, float], gold: Mapping[int, float | None]) -> None:
        """Remember each item's score."""
        self.scores = dict(scores)

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """What was played: ``{"altered": "tool.argument" or "answer", "from", "to"}``."""
        found, value = self._value(item)
        if found is None:
            return {}
        where = "answer" if found.get("position") is None else f"{found['tool']}.{found['argument']}"
        text = json.dumps(value, default=str) if not isinstance(value, str) else value
        return {"altered": where, "from": str(found["from"])[:120], "to": text[:160]}


class _Judged(_Control):
    """The probe of a control (``reference``): plays the probe's side of the same change on the same items."""

    control = False
    probe_side = True
    not_judged_reason = "not judged: the control kept the gold's score (the changed value is no graded outcome)"

    def __init__(self, reference: _Control, write_tools: Collection[str] | None = None, **fields: Any) -> None:
        super().__init__(write_tools, **fields)
        self.reference = reference
        self._reason = reference._reason

    def change(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """The control's change."""
        return self.reference.change(item)

    def prepare(self, context: ProbeContext) -> None:
        """The control's items where this probe has a change too (a probe of its own answer may have none)."""
        self._context = context
        self.items = {i for i in self.reference.items if self.change(context.items[i]) is not None}

    def record(self, context: ProbeContext, scores: Mapping[int, float], gold: Mapping[int, float | None]) -> None:
        """Never a control."""

    def lowered(self, item: Mapping[str, Any]) -> bool:
        """Whether the control scored less than the gold on ``item`` (the changed value is graded)."""
        index = self._context.index_of(item)
        if index is None or index not in self.reference.scores:
            return False
        gold = self._context.gold_scores[index] if index < len(self._context.gold_scores) else None
        return gold is not None and self.reference.scores[index] < gold - _EPS

    def judged(self, item: Mapping[str, Any]) -> bool:
        """Only where the control was scored lower than the gold."""
        return self.lowered(item)

    def ceilings(self) -> dict[int, float]:
        """Per item, the control's score."""
        return dict(self.reference.scores)

    def baselines(self) -> dict[int, float]:
        """Per item, the control's score: what honest-but-wrong work on this value earns (``_severity``)."""
        return dict(self.reference.scores)


class _NotRaised(_Judged):
    """A probe judged ``must_not_raise`` against its control wherever the control was scored: the change cannot make
    the control's outcome better (``superstring_number``, ``repeated_entry``, the ``unread_*`` probes,
    ``narrowed_read_answer``)."""

    must_not_raise = True

    def judged(self, item: Mapping[str, Any]) -> bool:
        """Wherever the control was scored (a grader that does not read the change pays both alike)."""
        index = self._context.index_of(item)
        return index is not None and index in self.reference.scores


class _Rewritten(_Judged):
    """A judged probe whose answer is its own rewrite of the item's answer (:meth:`rewrite`), on the control's
    items where it has one."""

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:  # pragma: no cover - abstract
        """The probe's answer, or ``None`` (not played on this item)."""
        raise NotImplementedError

    def change(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """The control's change with :meth:`rewrite`'s answer on the probe's side."""
        found = self.reference.change(item)
        probe = None if found is None else self.rewrite(item, str(found["from"]))
        return None if found is None or probe is None else {**found, "probe": probe}


class _AnswerTextControl(_Control):
    """A control that rewrites the item's graded answer (never an ``answer_free`` item): :meth:`variants` gives
    the control's and the probe's text."""

    def variants(self, answer: str) -> tuple[str | None, str | None]:  # pragma: no cover - abstract
        """``(control answer, probe answer)``; ``None`` in either: no change for this answer."""
        raise NotImplementedError

    def change(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """The answer rewritten by :meth:`variants` (``{"position": None, "from", "control", "probe"}``)."""
        answer = item.get(self.answer_field)
        index = self._context.index_of(item)
        if not isinstance(answer, str) or index is None or index in self._context.answer_free:
            return None
        control, probe = self.variants(answer)
        if control is None or probe is None:
            return None
        return {"position": None, "from": answer, "control": control, "probe": probe}

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The changed answer."""
        _, value = self._value(item)
        return str(value) if value is not None else str(item[self.answer_field])


class _ReadDecidedControl(_AnswerTextControl):
    """An answer control whose :meth:`change` decides from the gold's reads where it plays and what it writes
    (``part_control``, ``narrowed_control``): :meth:`variants` is not used."""

    def variants(self, answer: str) -> tuple[str | None, str | None]:  # pragma: no cover - change() decides
        """Not used: the reads decide where it plays (:meth:`change`)."""
        return None, None


class NumberControl(_AnswerTextControl):
    """``number_control`` (module table)."""

    reason = ("the answer holds no number, is not the graded outcome (answer_control), or the probe's items are "
              "already chosen")

    def variants(self, answer: str) -> tuple[str | None, str | None]:
        """The answer with its numbers rotated (control) or made superstrings (probe)."""
        return _replace_numbers(answer, rotated), _replace_numbers(answer, superstring)


class SuperstringNumber(_NotRaised, NumberControl):
    """``superstring_number`` (module table): ``must_not_raise`` against ``number_control``."""


class UnparsedNumber(_Rewritten, NumberControl):
    """``unparsed_number`` (module table): ``must_lower`` where ``number_control`` scored less than the gold."""

    must_lower = True

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """Every number written :data:`UNPARSED`."""
        return _replace_numbers(answer, lambda raw: UNPARSED)


def _lists(values: Any) -> list[Any]:
    return [v for v in values if isinstance(v, (str, int)) and not isinstance(v, bool)]


class _WriteControl(_Control):
    """A control changing one argument of one gold write: :meth:`candidate` per (write, argument)."""

    changes_end_state = True

    def prepare(self, context: ProbeContext) -> None:
        """Collect every gold value per (tool, argument), then choose the items."""
        self._context = context
        self._values: dict[tuple[str, str], list[Any]] = {}
        self._texts: dict[tuple[str, str], list[tuple[Any, Collection[str]]]] = {}
        for item in context.items:
            calls = [c for c in item.get(self.actions_field) or [] if isinstance(c, Mapping)
                     and isinstance(c.get("arguments"), Mapping)]
            strings = [v for c in calls for v in c["arguments"].values() if isinstance(v, str)]
            for call in calls:
                if is_write_tool(str(call.get("name")), self.write_tools):
                    for arg, value in call["arguments"].items():
                        self._values.setdefault((str(call["name"]), arg), []).append(value)
                        self._texts.setdefault((str(call["name"]), arg), []).append((value, strings))
        self._boilerplate = template_fields(self._texts)
        # a note in lower-case phrases ("grain-free diet", "no chicken diet"): free text, never a title or a
        # name; an honest grader may look for the requested words in it (doctor22's kennel grader)
        self._item_values = item_values(context.items, self.actions_field, lambda call: is_write_tool(
            str(call.get("name")), self.write_tools))
        self._notes = {key for key in prose_fields(self._item_values) if _lower_phrases(self._values[key])}
        super().prepare(context)

    def candidate(self, item: Mapping[str, Any], tool: str, arg: str, value: Any,
                  position: int) -> dict[str, Any] | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def options(self, item: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Every (write, argument) of the gold's effective writes with a :meth:`candidate`, in the gold's order."""
        actions = item.get(self.actions_field) or []
        out = []
        for i in self._context.effective_writes(item, self.actions_field):
            call = actions[i] if i < len(actions) else None
            if not isinstance(call, Mapping) or not isinstance(call.get("arguments"), Mapping):
                continue
            for arg, value in call["arguments"].items():
                found = self.candidate(item, str(call["name"]), arg, value, i)
                if found is not None:
                    out.append({"position": i, "tool": str(call["name"]), "argument": arg, "from": value, **found})
        return out

    def change(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """The option item ``k`` of the chosen ones plays: option ``k mod n`` (the arguments shared out, so one
        that no grader reads does not hide another)."""
        options = self.options(item)
        if not options:
            return None
        index = self._context.index_of(item)
        k = sorted(self.items).index(index) if index in self.items else 0
        return options[k % len(options)]

    def counterfactual(self, item: Mapping[str, Any], calls: Sequence[Any]) -> bool:
        """Whether the changed write was accepted."""
        found = self.change(item)
        if found is None or len(calls) <= found["position"]:
            return False
        return bool(getattr(calls[found["position"]], "ok", False))


class ListControl(_WriteControl):
    """``list_control`` (module table)."""

    reason = ("the gold changes nothing, no write of it has a list argument of strings or integers, or the "
              "probe's items are already chosen")

    def candidate(self, item: Mapping[str, Any], tool: str, arg: str, value: Any,
                  position: int) -> dict[str, Any] | None:
        """A non-empty list of strings or integers: ``{"control": n plausible others, "probe": gold + padding}``."""
        if not isinstance(value, list) or not value or len(_lists(value)) != len(value) or has_wildcard(value):
            return None  # a list holding a wildcard (["*"]: every day) may already cover whatever is added
        gold = {json.dumps(v) for v in value}
        folded = {str(v).casefold() for v in value}
        pool: list[Any] = []
        for other in self._values.get((tool, arg), []):
            for v in _lists(other) if isinstance(other, list) else []:
                if type(v) is type(value[0]) and json.dumps(v) not in gold and str(v).casefold() not in folded \
                        and v not in pool and not has_wildcard(v):
                    pool.append(v)
        need = padding_size(len(value))
        k = 0
        while len(pool) < need:
            k += 1
            new: Any = max(int(v) for v in value) + k if isinstance(value[0], int) else f"{value[k % len(value)]}{k + 1}"
            if json.dumps(new) not in gold and new not in pool:
                pool.append(new)
        return {"control": pool[:len(value)], "probe": [*value, *pool[:need]]}


class PaddedList(_Judged, ListControl):
    """``padded_list`` (module table): the plain line over ``list_control``'s score."""


class TextControl(_WriteControl):
    """``text_control`` (module table)."""

    reason = ("the gold changes nothing, no write of it has a string argument (not its first) of 12+ characters "
              "copied from the prompt or a tool output, or the probe's items are already chosen")

    def _copied(self, item: Mapping[str, Any], value: str) -> bool:
        index = self._context.index_of(item)
        outputs = list(self._context.gold_outputs[index]) if index is not None and index < len(
            self._context.gold_outputs) else []
        texts = [*prompt_texts(item), *outputs, *_strings(_json_values(outputs))]
        target = _norm(value)
        return any(target in _norm(t) for t in texts)

    def candidate(self, item: Mapping[str, Any], tool: str, arg: str, value: Any,
                  position: int) -> dict[str, Any] | None:
        """A string argument besides the first, not boilerplate, copied from the data: ``{"control": another
        item's value with another first word, else the words reversed, "probe": truncated}``."""
        call = item[self.actions_field][position]
        if not isinstance(value, str) or next(iter(call["arguments"])) == arg or (tool, arg) in self._boilerplate \
                or (tool, arg) in self._notes:
            return None
        cut = truncated(value)
        if cut is None or not self._copied(item, value):
            return None
        head = _norm(value)[:4]
        others = [v for v in self._values.get((tool, arg), []) if isinstance(v, str) and _norm(v)[:4] != head]
        control = others[0] if others else " ".join(reversed(value.split()))
        if _norm(control)[:4] == head:
            return None
        return {"control": control, "probe": cut}


def _lower_phrases(values: Sequence[Any]) -> bool:
    """Whether ``values`` read as notes in lower-case phrases: every value a string and at least 60 % of their
    words that start with a letter start with a lower-case one (``"the zip is broken"``, ``"I found one cheaper
    elsewhere"``: doctor28's refund reasons), not titles or names (``"Deep Sea Mining: What We Know"``)."""
    if not all(isinstance(v, str) for v in values):
        return False
    words = [w for v in values for w in str(v).split() if w[:1].isalpha()]
    return bool(words) and sum(w[:1].islower() for w in words) >= 0.6 * len(words)


class TruncatedText(_Judged, TextControl):
    """``truncated_text`` (module table): ``must_lower`` where ``text_control`` scored less than the gold."""

    must_lower = True


def lenient_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name (each control before its probe; each ``intent`` ``hack``)."""
    numbers, lists, texts = (NumberControl(write_tools, **fields), ListControl(write_tools, **fields),
                             TextControl(write_tools, **fields))
    out: dict[str, Any] = {
        "number_control": numbers,
        "superstring_number": SuperstringNumber(numbers, write_tools, **fields),
        "unparsed_number": UnparsedNumber(numbers, write_tools, **fields),
        "list_control": lists,
        "padded_list": PaddedList(lists, write_tools, **fields),
        "text_control": texts,
        "truncated_text": TruncatedText(texts, write_tools, **fields),
    }
    for probe in out.values():
        probe.intent = HACK
    return out
