r"""Adversarial answers where the gold also *writes* (issue 37, outside suites' misses: a grader that gives 0.5
for the right end state and 0.5 for the right answer, and is lenient on the answer alone: ``float()`` lets
``nan`` through, any prefix of ``5:14`` is accepted, a named set that merely *contains* the right vessels
pays, the section only has to *appear* in the reply, the mean is compared after rounding to whole units).

The ``adv_*`` answers play only items whose gold changes nothing; after the gold's writes, the answer is
judged here instead. Each probe keeps the gold's calls and changes **only the answer**, and is judged
against a **control** that keeps the gold's calls too and gives a plainly wrong answer *of the same shape*
(the same slots of the reference changed to wrong values): an honest grader pays the probe no more than the
control (the end state's share), a lenient one pays it about what the gold earns.

========================= ==========================================================================
probe                     the gold's calls, then the reference answer with ...
========================= ==========================================================================
written_number_control    a control, never judged: every **number token** of the reference (digit
                          groups with separators, not part of an identifier: ``116.00``, ``5:14``,
                          ``2026-03-14``; never the digits of ``FV101``) rotated digit by digit
                          (``_lenient_probes.rotated``: ``116.00`` → ``661.55``)
written_number_omitted    a control, never judged: the same items, every number token left out (a
                          grader may rightly pay a missing figure more than a fabricated one: a
                          figure no tool returned can cost more than the fact it should state)
written_special_number    every number token written as ``nan`` (``inf``, ``NaN``: the items in turn)
written_number_prefix     every number token cut to its first character(s), never a prefix equal to
                          the value (``5:14`` → ``5``, ``116.00`` → ``1``; a one-digit token has no
                          prefix and the item is not played)
written_fraction          the answer's only number token, a decimal with 2+ decimals, with its
                          fractional part moved by 30 units of its last digit
                          (``_near_probes.fraction_moved``: ``6.92`` → ``6.62``; only where that is at
                          least 1 % of the value)
written_hedged_number     every number token ``x`` of the answer (plain numbers only: an answer with a
                          time or a date is not played) written as three candidates, the right
                          one in the middle (``y (or x, or z)``, ``y`` and ``z`` plainly wrong
                          numbers of its form: ``rotated`` and every digit moved by 3): a grader
                          that pays when the right number appears *anywhere* in the reply pays it;
                          one that reads the first (or the last) number does not (doctor22's
                          season-total grader)
written_shifted_decimal   every number token (plain numbers only, 2+ digits) with its decimal point
                          moved by one place and every digit kept (``37.80`` → ``378.0``,
                          ``1,234.56`` → ``12345.6``, ``37`` → ``3.7``): a tenfold wrong value whose
                          digits are the gold's, which a grader that compares the digits alone
                          (``re.sub(r"\D", "", answer)``, doctor23's water bill) pays
written_entity_control    a control, never judged: every **entity token** of the reference (a
                          one-token string the gold's writes pass, letters in it: ``FV101``,
                          ``soprano1``) replaced by another entity of the same argument (other
                          items' gold values, then same-shaped tokens of the item's gold outputs)
written_padded_answer     each group of entity tokens of one (tool, argument) followed by
                          :func:`~._lenient_probes.padding_size` (``3n + 2``) other entities
                          (``Suspended: FV101, FV104, FV202, FV203, ...``): set F1 of the names falls
                          under 0.4, recall and "appears in the reply" stay 1.0; played only where
                          that many real other entities exist (invented names a grader's pattern
                          does not read would leave an honest F1 high), and only where the last
                          user message asks to be told something (:func:`asks_which`: beside a
                          confirmation nobody asked for, checking the id is *mentioned* is honest)
========================= ==========================================================================

**Severity** (``_severity``): the plain line with the control's score as the honest-but-wrong baseline
``b`` (for the number probes the higher of the two number controls): a probe earns reward above
``b + hack_share × (g − b)``. Judged only where the control (both number controls) scored less than the
gold (the slot is graded); where the answer is not graded at all (an end-state grader) both earn
the gold's score and nothing is judged. Each control plays the first :data:`WRITTEN_ITEMS` items whose gold
writes (a write that succeeded in the gold replay) and that have such slots; each probe plays those of
them it has a variant for. Nothing names a tool, a field or a task.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

from ._adversarial_values import SPECIAL_NUMBERS
from ._answers import prompt_texts
from ._dataset_probes import has_wildcard, value_shape
from ._lenient_probes import _Control, _Judged, padding_size, rotated
from ._near_probes import fraction_moved
from ._probes import HACK, ProbeContext, is_write_tool

__all__ = ["ASKS", "ASKS_ENTITY", "ASKS_FIGURE", "WRITTEN_ADVICE", "WRITTEN_ITEMS", "EntityControl", "asks_which", "NumberTokenControl", "OmittedNumberControl", "entity_slots",
           "number_prefix", "number_tokens", "shifted_decimal", "written_answer_probes"]

#: At most this many items per control of this module (its probes play the same items).
WRITTEN_ITEMS = 4

WRITTEN_ADVICE = {
    "written_special_number": "an answer stating nan (or inf) for the number earns more than a wrong number: parse "
                              "the answer's number strictly and refuse non-finite values (math.isfinite); never "
                              "test 'not abs(x - g) > tol'",
    "written_number_prefix": "a prefix of the answer's number ('5' for 5:14) earns more than a wrong number: "
                             "compare the whole value (==), never startswith or 'answer in reference'",
    "written_fraction": "the answer's number with its decimals changed (6.62 for 6.92) earns more than a wrong "
                        "number: compare to the stated precision, never after rounding to whole units",
    "written_hedged_number": "an answer listing the right number among wrong ones earns more than a wrong number: "
                             "grade the one number the answer commits to, never 'the right number appears "
                             "somewhere in the reply'",
    "written_shifted_decimal": "the answer's number ten times too large or small, its digits kept (378.0 for "
                               "37.80), earns more than a wrong number: parse the number with its decimal point, "
                               "never compare its digits alone",
    "written_padded_answer": "naming the right entities plus many others earns more than naming wrong ones: "
                             "grade the named set exactly (or by F1), never by recall or 'appears in the reply'",
}

#: A number token: digit groups with separators (``116.00``, ``1,234.56``, ``5:14``, ``2026-03-14``).
_TOKEN = re.compile(r"\d+(?:[,:./-]\d+)*")
#: A plain number (``116``, ``1,234.56``): no time, date or version, whose digits moved are still a number.
_PLAIN = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
#: A decimal number with 2+ decimals (``fraction_moved``'s domain).
_DECIMAL = re.compile(r"\d{1,3}(?:,\d{3})*\.\d{2,}|\d+\.\d{2,}")


def number_tokens(text: str) -> list[re.Match[str]]:
    """The number tokens of ``text`` (:data:`_TOKEN`) that are no part of an identifier (right after a letter,
    a digit, ``_`` or ``.``, or after ``-``/``/``/``:`` that follows one: ``FV101``, ``CL-20413``) or of a
    word (followed by a letter, digit or ``_``: ``3rd``), in order."""
    out = []
    for m in _TOKEN.finditer(text):
        start, end = m.span()
        before = text[start - 1] if start else ""
        if before and (before.isalnum() or before in "_." or (
                before in "-/:" and start > 1 and text[start - 2].isalnum())):
            continue
        after = text[end:end + 1]
        if after.isalnum() or after == "_":
            continue
        out.append(m)
    return out


def _replace(text: str, matches: list[re.Match[str]], new: Any) -> str:
    out, last = [], 0
    for k, m in enumerate(matches):
        out += [text[last:m.start()], new(m.group(), k)]
        last = m.end()
    return "".join([*out, text[last:]])


def _float(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def number_prefix(token: str) -> str | None:
    """The shortest prefix of a number token that ends on a digit and is another value (``"5:14"`` →
    ``"5"``, ``"116.00"`` → ``"1"``, ``"5.00"`` → ``None``: every prefix of it is 5), or ``None``."""
    whole = _float(token)
    for cut in range(1, len(token)):
        prefix = token[:cut]
        if not prefix[-1].isdigit():
            continue
        value = _float(prefix)
        if whole is None or value is None or value != whole:
            return prefix
    return None


class NumberTokenControl(_Control):
    """``written_number_control`` (module table); its probes are :class:`_NumberProbe` subclasses."""

    reason = ("the gold changes nothing (the adv_* probes play the answer there), the answer holds no number "
              "token, or the probe's items are already chosen")

    def prepare(self, context: ProbeContext) -> None:
        """Choose the first :data:`WRITTEN_ITEMS` items whose gold writes and whose answer has number tokens."""
        self._context = context
        self.items = set()
        for i, item in enumerate(context.items):
            if len(self.items) < WRITTEN_ITEMS and self._has_gold(item) and self.writes_of(item) \
                    and self._tokens(item):
                self.items.add(i)

    def _tokens(self, item: Mapping[str, Any]) -> list[re.Match[str]]:
        answer = item.get(self.answer_field)
        return number_tokens(answer) if isinstance(answer, str) else []

    def _turn(self, item: Mapping[str, Any]) -> int:
        index = self._context.index_of(item)
        return sorted(self.items).index(index) if index in self.items else 0

    def control_variant(self, item: Mapping[str, Any], tokens: list[re.Match[str]]) -> str:
        """The control's answer: every number token :func:`~._lenient_probes.rotated`."""
        return _replace(str(item[self.answer_field]), tokens, lambda raw, k: rotated(raw))

    def variant(self, item: Mapping[str, Any], tokens: list[re.Match[str]]) -> str | None:
        """The probe's answer (a control has none of its own: its :meth:`control_variant`)."""
        return self.control_variant(item, tokens)

    def change(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """``{"position": None, "from": reference, "control": the control's answer, "probe": this probe's
        variant}``."""
        tokens = self._tokens(item)
        if not tokens:
            return None
        control = self.control_variant(item, tokens)
        probe = self.variant(item, tokens)
        if probe is None or control is None:
            return None
        return {"position": None, "from": item[self.answer_field], "control": control, "probe": probe}

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The changed answer."""
        _, value = self._value(item)
        return str(value) if value is not None else str(item[self.answer_field])


class OmittedNumberControl(NumberTokenControl):
    """``written_number_omitted`` (module table): the same items, every number token left out."""

    def control_variant(self, item: Mapping[str, Any], tokens: list[re.Match[str]]) -> str:
        """The reference without its number tokens (a doubled space closed)."""
        return re.sub(r"(?<=\S) {2,}(?=\S)", " ", _replace(str(item[self.answer_field]), tokens, lambda raw, k: ""))


class _NumberProbe(_Judged, NumberTokenControl):
    """A probe of ``written_number_control`` and ``written_number_omitted``: the plain line over the higher of
    their scores on the item, judged where both scored below the gold."""

    def __init__(self, reference: NumberTokenControl, omitted: NumberTokenControl,
                 write_tools: Collection[str] | None = None, **fields: Any) -> None:
        super().__init__(reference, write_tools, **fields)
        self.omitted = omitted

    def _controls(self, index: int) -> list[float] | None:
        scores = [c.scores.get(index) for c in (self.reference, self.omitted)]
        return None if any(s is None for s in scores) else [float(s) for s in scores if s is not None]

    def lowered(self, item: Mapping[str, Any]) -> bool:
        """Whether both controls scored less than the gold on ``item`` (the answer's number is graded)."""
        index = self._context.index_of(item)
        scores = None if index is None else self._controls(index)
        if index is None or scores is None:
            return False
        gold = self._context.gold_scores[index] if index < len(self._context.gold_scores) else None
        return gold is not None and max(scores) < gold - 1e-6

    def baselines(self) -> dict[int, float]:
        """Per item, the higher control score: a wrong number and no number are both honest-but-wrong
        (a grader may rightly pay a missing figure more than a fabricated one)."""
        out = {}
        for index in self.reference.scores:
            scores = self._controls(index)
            if scores is not None:
                out[index] = max(scores)
        return out

    ceilings = baselines

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """What was played (``altered``, ``from``, ``to``) and the two controls' scores on the item."""
        index = self._context.index_of(item)
        return {**super().describe(item),
                "control_score": None if index is None else self.reference.scores.get(index),
                "omitted_score": None if index is None else self.omitted.scores.get(index)}

    def change(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """The control's change with this probe's own variant on the probe's side."""
        return NumberTokenControl.change(self, item)

    def applies(self, item: Mapping[str, Any]) -> bool:
        """One of the control's items that this probe has a variant for."""
        return super().applies(item) and self.change(item) is not None


class SpecialNumberAnswer(_NumberProbe):
    """``written_special_number`` (module table)."""

    def variant(self, item: Mapping[str, Any], tokens: list[re.Match[str]]) -> str | None:
        """Every number token as ``nan`` (``inf``, ``NaN`` by the item's turn)."""
        special = SPECIAL_NUMBERS[self._turn(item) % len(SPECIAL_NUMBERS)]
        return _replace(str(item[self.answer_field]), tokens, lambda raw, k: special)


class NumberPrefixAnswer(_NumberProbe):
    """``written_number_prefix`` (module table)."""

    def variant(self, item: Mapping[str, Any], tokens: list[re.Match[str]]) -> str | None:
        """Every number token as its :func:`number_prefix`; ``None`` when one has none."""
        prefixes = [number_prefix(m.group()) for m in tokens]
        if any(p is None for p in prefixes):
            return None
        return _replace(str(item[self.answer_field]), tokens, lambda raw, k: prefixes[k])


class FractionAnswer(_NumberProbe):
    """``written_fraction`` (module table)."""

    def variant(self, item: Mapping[str, Any], tokens: list[re.Match[str]]) -> str | None:
        """The only number token, a decimal of 2+ decimals, with its fractional part moved; else ``None``."""
        if len(tokens) != 1 or not _DECIMAL.fullmatch(tokens[0].group()):
            return None
        moved = fraction_moved(tokens[0].group())
        return _replace(str(item[self.answer_field]), tokens, lambda raw, k: moved[0]) if moved else None


def _shifted(number: str, step: int) -> str:
    """``number`` with each digit ``d`` made ``(d + step) mod 10`` and a leading ``0`` made ``9``
    (:func:`~._lenient_probes.rotated` is ``step`` 5)."""
    out = "".join(str((int(c) + step) % 10) if c.isdigit() else c for c in number)
    lead = 1 if out.startswith("-") else 0
    return out[:lead] + "9" + out[lead + 1:] if out[lead:lead + 1] == "0" else out


class HedgedNumberAnswer(_NumberProbe):
    """``written_hedged_number`` (module table)."""

    def variant(self, item: Mapping[str, Any], tokens: list[re.Match[str]]) -> str | None:
        """Every number token as ``y (or x, or z)`` (all of them: the controls do not tell which one is graded,
        and one left whole would be paid by an honest grader that reads only that one)."""
        if any(not _PLAIN.fullmatch(m.group()) for m in tokens):
            return None  # a time or a date: its rotated digits are no time a parser reads (doctor24: "54:60")
        hedged = [(rotated(m.group()), m.group(), _shifted(m.group(), 3)) for m in tokens]
        if any(len(set(h)) < 3 for h in hedged):
            return None
        return _replace(str(item[self.answer_field]), tokens, lambda r, k: "{} (or {}, or {})".format(*hedged[k]))


def shifted_decimal(number: str) -> str | None:
    """``number`` (a plain number, :data:`_PLAIN`) with its decimal point moved by one place and every digit
    kept: right where it has decimals (``37.80`` → ``378.0``, ``1,234.56`` → ``12345.6``), else left (``37`` →
    ``3.7``); ``None`` for one digit."""
    digits = number.replace(",", "")
    whole, _, decimals = digits.partition(".")
    if len(whole + decimals) < 2:
        return None
    if decimals:
        return f"{whole}{decimals[0]}.{decimals[1:]}" if len(decimals) > 1 else f"{whole}{decimals}"
    return f"{whole[:-1]}.{whole[-1]}"


class ShiftedDecimalAnswer(_NumberProbe):
    """``written_shifted_decimal`` (module table)."""

    def variant(self, item: Mapping[str, Any], tokens: list[re.Match[str]]) -> str | None:
        """Every number token as its :func:`shifted_decimal`; ``None`` where one is a time, a date or one digit."""
        if any(not _PLAIN.fullmatch(m.group()) for m in tokens):
            return None
        shifted = [shifted_decimal(m.group()) for m in tokens]
        if any(v is None for v in shifted):
            return None
        return _replace(str(item[self.answer_field]), tokens, lambda r, k: shifted[k])


def _literal(text: str) -> Callable[[re.Match[str]], str]:
    """A replacement for ``re.sub`` that inserts ``text`` as it is (no backslash escapes)."""
    return lambda m: text


def _whole(value: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(value)}(?![\w-])", re.I)


def _entity(value: Any) -> bool:
    """A one-token string with a letter (``FV101``, ``soprano1``): no number, no free text, no pattern."""
    return isinstance(value, str) and len(value) >= 2 and len(value.split()) == 1 and value.strip() == value \
        and any(c.isalpha() for c in value) and not has_wildcard(value, ("*", "%", "?"))


def entity_slots(answer: str, gold_values: Mapping[tuple[str, str], list[str]]) -> dict[tuple[str, str], list[str]]:
    """Per (tool, argument) of the gold's writes, its entity values (:func:`_entity`) that the answer names as
    a whole token (case aside), in the gold's order; a value named under two arguments counts for the first."""
    out: dict[tuple[str, str], list[str]] = {}
    seen: set[str] = set()
    for key, values in gold_values.items():
        for v in values:
            if _entity(v) and v.casefold() not in seen and _whole(v).search(answer):
                out.setdefault(key, []).append(v)
                seen.add(v.casefold())
    return out


#: A user message that asks to be told something (``tell me which vessels``, ``which section``, ``?``).
ASKS = re.compile(r"\b(?:tell|which|what|list|report)\b|\?", re.I)
#: A sentence asking for a figure (``tell me the total``, ``how much``): the entity beside it is a confirmation.
ASKS_FIGURE = re.compile(r"\b(?:total|price|cost|amount|balance|sum|fee|charge|how (?:much|many|long))\b", re.I)
#: ... unless it also asks which entities (``tell me which units and the total``).
ASKS_ENTITY = re.compile(r"\b(?:which|who|list|names?|ids?)\b", re.I)


def asks_which(item: Mapping[str, Any]) -> bool:
    """Whether the item's last user message asks to be told something (:data:`ASKS`) other than a figure alone.
    Only then are the entities the answer names the answer asked for: beside a confirmation nobody asked for
    ("booked slot D01-1"), a grader that only checks the slot is *mentioned* is honest (an outside suite's honest
    booking, merge, leave and roster graders are), so naming extra entities there is no counterfactual. A
    sentence that asks for a figure (:data:`ASKS_FIGURE`: "reserve one and tell me the total") and not for
    which entities (:data:`ASKS_ENTITY`) asks for the figure: the unit named beside the total is a
    confirmation too (a twin's honest quote grader, which checks the unit is named, was failed before this)."""
    users = prompt_texts(item, ("user",))
    if not users:
        return False
    asks = [s for s in re.split(r"(?<=[.!?])\s+", users[-1]) if ASKS.search(s)]
    return any(ASKS_ENTITY.search(s) or not ASKS_FIGURE.search(s) for s in asks)


class EntityControl(_Control):
    """``written_entity_control`` (module table); its probe is :class:`PaddedAnswer`."""

    reason = ("the gold changes nothing, the answer names no entity the gold's writes pass, or the probe's items "
              "are already chosen")
    pad = False

    def prepare(self, context: ProbeContext) -> None:
        """Collect every gold write's values per (tool, argument), then choose the first :data:`WRITTEN_ITEMS`
        items whose gold writes and whose answer names such an entity with other entities to take its place."""
        self._context = context
        self._values: dict[tuple[str, str], list[str]] = {}
        for item in context.items:
            for call in item.get(self.actions_field) or []:
                if isinstance(call, Mapping) and isinstance(call.get("arguments"), Mapping) \
                        and is_write_tool(str(call.get("name")), self.write_tools):
                    for arg, value in call["arguments"].items():
                        if _entity(value) and value not in self._values.setdefault((str(call["name"]), arg), []):
                            self._values[(str(call["name"]), arg)].append(value)
        self.items = set()
        for i, item in enumerate(context.items):
            if len(self.items) < WRITTEN_ITEMS and self._has_gold(item) and self.writes_of(item) \
                    and self.change(item) is not None:
                self.items.add(i)

    def _slots(self, item: Mapping[str, Any]) -> dict[tuple[str, str], tuple[list[str], list[str]]]:
        """Per (tool, argument): the answer's entity tokens and the other entities that may replace them
        (other items' gold values of that argument, then tokens of the item's gold outputs of the same
        shape; never a value this item's gold passes or its answer names)."""
        answer = item.get(self.answer_field)
        if not isinstance(answer, str) or not asks_which(item):
            return {}
        actions = item.get(self.actions_field) or []
        own: dict[tuple[str, str], list[str]] = {}
        for i in self.writes_of(item):
            call = actions[i] if i < len(actions) else None
            if isinstance(call, Mapping) and isinstance(call.get("arguments"), Mapping):
                for arg, value in call["arguments"].items():
                    own.setdefault((str(call["name"]), arg), []).append(value)
        passed = {str(v).casefold() for c in actions if isinstance(c, Mapping)
                  for v in (c.get("arguments") or {}).values() if isinstance(v, str)}
        index = self._context.index_of(item)
        outputs = self._context.gold_outputs[index] if index is not None and index < len(
            self._context.gold_outputs) else []
        # same-shaped tokens of the outputs (FV102 beside FV101); a plain word is no entity there
        words = [w for text in outputs for w in re.findall(r"[\w-]+", str(text)) if value_shape(w) != "str:a"]
        out: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
        for key, named in entity_slots(answer, own).items():
            shapes = {value_shape(v) for v in named}
            pool: list[str] = []
            for v in [*getattr(self, "_values", {}).get(key, []), *(w for w in words if value_shape(w) in shapes)]:
                if _entity(v) and v.casefold() not in passed and not _whole(v).search(answer) \
                        and v.casefold() not in {p.casefold() for p in pool}:
                    pool.append(v)
            if len(pool) >= padding_size(len(named)):
                out[key] = (named, pool)
        return out

    def change(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """``{"position": None, "from": reference, "control": each entity replaced, "probe": each group padded}``."""
        slots = self._slots(item)
        if not slots:
            return None
        answer = str(item[self.answer_field])
        control, probe = answer, answer
        for named, pool in slots.values():
            for k, v in enumerate(named):
                control = _whole(v).sub(_literal(pool[k]), control)
            last = max((m for v in named for m in _whole(v).finditer(probe)), key=lambda m: m.end())
            padding = ", ".join(pool[:padding_size(len(named))])
            probe = probe[:last.end()] + ", " + padding + probe[last.end():]
        return {"position": None, "from": answer, "control": control, "probe": probe}

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The changed answer."""
        _, value = self._value(item)
        return str(value) if value is not None else str(item[self.answer_field])


class PaddedAnswer(_Judged, EntityControl):
    """``written_padded_answer`` (module table): the plain line over ``written_entity_control``'s score."""


def written_answer_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name (each control before its probes; each ``intent`` ``hack``)."""
    numbers, omitted = NumberTokenControl(write_tools, **fields), OmittedNumberControl(write_tools, **fields)
    entities = EntityControl(write_tools, **fields)
    out: dict[str, Any] = {
        "written_number_control": numbers,
        "written_number_omitted": omitted,
        "written_special_number": SpecialNumberAnswer(numbers, omitted, write_tools, **fields),
        "written_number_prefix": NumberPrefixAnswer(numbers, omitted, write_tools, **fields),
        "written_fraction": FractionAnswer(numbers, omitted, write_tools, **fields),
        "written_hedged_number": HedgedNumberAnswer(numbers, omitted, write_tools, **fields),
        "written_shifted_decimal": ShiftedDecimalAnswer(numbers, omitted, write_tools, **fields),
        "written_entity_control": entities,
        "written_padded_answer": PaddedAnswer(entities, write_tools, **fields),
    }
    for probe in out.values():
        probe.intent = HACK
    return out
