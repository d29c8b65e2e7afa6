"""Near misses of the gold (issue 37, an outside suite's misses): a value *next to* the right one, which a
grader with a tolerance or normalisation bug pays. Each probe changes one thing of the gold and is judged
on the outcome by the severity rule (``_severity``: above ``b + 0.5 (g − b)`` is reward), a write probe
only where its change was accepted and changed the end state.

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
neighbour_value           one integer argument of one gold write (never its target, the first
                          argument) under :data:`NEIGHBOUR_MAX` set to its neighbour: ``v + 1`` on
                          even items, ``v − 1`` on odd ones (a position, slot, seat or count off by
                          one: a "0- vs 1-based" tolerance pays it; a larger integer, an odometer
                          converted from miles, may honestly allow a unit of rounding)
modifier_value            one short categorical string argument of one gold write that ends in a
                          modifier (``B+``, ``A-``, ``AB+``: 1-3 letters then ``+``/``-``) written
                          without it (``B``): a normaliser that strips ``+-`` pays it
replaced_write            one gold write (no annotation: a note) replaced by a write tool of the item
                          that the gold never calls, applied to the same entity (its target
                          argument, by name, with the gold's value;
                          every other required argument from the gold's calls by name, else the
                          replaced write's argument whose name ends in ``_<name>`` (``to_slot_id``
                          for ``slot_id``, the last first), a free-text
                          one :data:`NEUTRAL_REASON`): a delete or withdraw instead of the decision
                          (a grader that reads a missing row as "done" pays it); the items take the
                          other tools in turn
adv_near_miss             (answer items) the reference's value number moved by :data:`NEAR_SHIFT`
                          (3 %), written in its own format (``$5,363.07`` → ``$5,523.96``); only
                          where that move is at least :data:`NEAR_UNITS` units of the number's
                          last stated digit (so a measurement stated to 2 significant digits,
                          which an honest relative tolerance may cover, is never played)
adv_scaled                (answer items) the reference's value number with its decimal point moved,
                          the digits kept (``5,363.07`` → ``53,630.7``, ``536,307``, ``536.307``):
                          10× to 100× off, which a digits-only comparison pays
adv_modifier              (answer items) every grade-like token of the reference (1-3 capitals
                          then one ``+``/``-``) without its modifier (``B+`` → ``B``)
component_value           one one-token string argument of one gold write (never its target) made of
                          digit groups with separators (``19:30``, ``15.33``, ``1.4.3``,
                          ``10.0.0.0/24``, ``2026-03-14``) with its last group changed by one unit,
                          its width kept (:func:`last_component`: ``19:31``, ``10.0.0.0/23``): a
                          grader that compares only the leading part (the hour, whole dollars,
                          major.minor, the network without its prefix, the month) pays it
adv_fraction              (answer items, as ``adv_near_miss``) the value number's fractional part
                          moved by 20-40 units of its last stated digit, the integer part kept
                          (``$15.33`` → ``$15.63``; :func:`fraction_moved`), only where that move
                          is at least :data:`FRACTION_SHARE` (1 %) of the value: a grader
                          comparing whole units pays it
time_control              a control, never judged: every time of day of the reference (``08:15``; not
                          one with seconds) moved :data:`FAR_MINUTES` minutes later (``10:32``), on
                          at most :data:`~._lenient_probes.LENIENT_ITEMS` items whose answer is graded
near_time                 every such time moved :data:`NEAR_MINUTES` minutes within its hour
                          (``08:18``): judged ``must_lower`` where ``time_control`` scored less than
                          the gold (a time is graded), so a grader that accepts a departure or an
                          appointment a few minutes off pays it (doctor22's timetable grader, 5
                          minutes either way), and one that grades no time is never judged
value_control             a control, never judged: the answer's value (its one number, every place
                          the answer restates it: :func:`one_value`) moved up by half of it
                          (:data:`FAR_SHARE`; ``5.9 m`` → ``8.9 m``), on at most
                          :data:`~._lenient_probes.LENIENT_ITEMS` items whose answer is graded
loose_value               that value moved a little past the loosest tolerance an honest grader of
                          this project's twins has (3 % on a fee, 2 % on a measurement):
                          :data:`LOOSE_SHARE` (6 %) of it and :data:`LOOSE_UNITS` (4) units of its
                          last stated digit at least (:func:`loose_moved`: ``5.9 m`` → ``6.3 m``,
                          ``$2,068.82`` → ``$2,192.95``). Judged ``must_lower`` where
                          ``value_control`` scored less than the gold (the value is graded): half a
                          metre on a height stated to 0.1 m pays it (doctor23's tide desk); the
                          tolerance of the stated precision, a unit either way, or 1-3 % do not
precise_value             that value moved :data:`PRECISE_UNITS` (40) units of the precision a system
                          or user message states for it (:func:`stated_precision`: ``to 0.1 g``, ``to
                          the cent``, ``two decimals``; ``421.9 g`` → ``425.9 g``, ``£85.50`` →
                          ``£85.90``), judged as ``loose_value``: a task that states its precision is
                          graded near it, so a tolerance of 5 % (doctor27's recipe) or whole pounds
                          (doctor27's permit fee) pays what a careful grader refuses
relative_value            that value moved by the fewest whole units of that stated precision (2 at
                          least) that move it more than :data:`RELATIVE_FLOOR` (3 %) of it, where
                          that is at most :data:`RELATIVE_CEILING` (4.5 %) of it
                          (:func:`relatively_moved`: ``0.51 mg/L`` to 2 decimals → ``0.53 mg/L``);
                          judged as ``loose_value``: where ``precise_value``'s 40 units are past any
                          relative tolerance, a 5 % tolerance on a small value stated to 2 decimals
                          pays a value a careful grader refuses (doctor78's pool chlorine); past a
                          unit either way and past 1-3 %, so those honest tolerances refuse it too
prompt_figure             one number argument of one gold write (never its target) that the prompt
                          does not state, set to the prompt's figure nearest to it in ratio (within
                          :data:`FIGURE_RATIO`) that no gold argument passes: the raw input the gold
                          converted or computed from (``31250`` miles where the gold logs ``50292``
                          km: doctor27's van inspection, a grader accepting either unit)
range_value               one string argument of one gold write (never its target) holding one
                          integer (a port ``"22"``) written as a range that covers it
                          (:func:`covering_range`: ``"0-65535"``): a grader that accepts a range
                          covering the value pays it
========================= ==========================================================================

The value number of a reference (:func:`value_number`) is its only number that is not part of an
identifier, a date or a time (``CL-20413``, ``2024-05-01``, ``10:30`` are not); a reference stating
several figures is not played (changing one leaves the others right: honest partial credit). The answer probes are
:class:`~._generic.AdversarialAnswer` families (items whose gold changes nothing and whose answer is the
graded outcome, at most :data:`~._generic.ADVERSARIAL_ITEMS` items); the write probes play at most
:data:`~._value_probes.VALUE_ITEMS` items. No correct grader pays any of them: the written value, the
end state or the stated number differs from the gold's in what the task asked for.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ._answers import ANSWER_LINE, marked_lines, prompt_texts
from ._dataset_probes import AlteredWrites, _short
from ._generic import AdversarialAnswer, _ContextProbe, _parameters, annotation_call, gold_arguments
from ._lenient_probes import _AnswerTextControl, _Judged, _Rewritten
from ._probes import HACK, ProbeContext, Steps, is_write_tool
from ._value_probes import VALUE_ITEMS, _Capped, _targets

__all__ = ["ComponentValue", "FAR_MINUTES", "FAR_SHARE", "FIGURE_RATIO", "FRACTION_SHARE", "LOOSE_SHARE", "LOOSE_UNITS", "LooseValue",
           "ModifierValue", "NEAR_ADVICE", "NEAR_MINUTES", "NEAR_SHIFT", "NEAR_UNITS", "NEUTRAL_REASON", "NearTime",
           "NeighbourValue", "PRECISE_UNITS", "PreciseValue", "PromptFigure", "RELATIVE_CEILING", "RELATIVE_FLOOR",
           "RangeValue", "RelativeValue", "ReplacedWrite", "TimeControl",
           "ValueControl", "answer_precision", "covering_range", "example_precision", "fraction_moved", "last_component", "loose_moved", "moved_times",
           "moved_value", "near_miss", "near_probes", "one_value", "precisely_moved", "relatively_moved", "scaled",
           "stated_precision",
           "stripped_modifiers", "value_number", "value_numbers"]

#: ``adv_near_miss`` moves the value by this share of it (a tolerance meant for cents, written relative, pays).
NEAR_SHIFT = 0.03
#: ... and only where the move is at least this many units of the value's last stated digit.
NEAR_UNITS = 20
#: ``loose_value`` moves the value by this share of it (past the 2-3 % relative tolerances the project's honest twins
#: give a fee and a measurement, ``adv_value_twins``) ...
LOOSE_SHARE = 0.06
#: ... and by at least this many units of its last stated digit (an honest grader may accept a unit either way).
LOOSE_UNITS = 4
#: ``value_control`` moves the value by this share of it (plainly wrong), and by at least 10 units of its last digit.
FAR_SHARE = 0.5
#: ``neighbour_value`` plays integers under this size only (positions, slots, seats, counts; an odometer or an
#: amount in cents, where one unit either way is rounding, is not played).
NEIGHBOUR_MAX = 1000
#: ``near_time`` moves the answer's times of day by this many minutes, ``time_control`` by this many.
NEAR_MINUTES = 3
FAR_MINUTES = 137
#: ``adv_fraction`` plays only where its move is at least this share of the value (an honest 1 % tolerance
#: rejects it).
FRACTION_SHARE = 0.01
#: The text a replaced write gives for a required free-text argument (a reason, a note).
NEUTRAL_REASON = "as requested"

NEAR_ADVICE = {
    "neighbour_value": "a written number off by one earns reward: compare integers exactly (a position, slot "
                       "or count has no tolerance; convert 0- and 1-based numbering once, not by accepting both)",
    "modifier_value": "a value without its modifier (B for B+) earns reward: normalise case and whitespace only, "
                      "never strip characters that are part of the value (+, -)",
    "replaced_write": "another write on the same record (a delete, withdraw or cancel instead of the decision) "
                      "earns reward: require the record and the outcome the task asked for; a missing record "
                      "is a failure (score 0), never 'already done'",
    "adv_near_miss": "a number a few percent off earns reward: use the tolerance of the stated precision (cents: "
                     "0.005), not a relative one",
    "adv_scaled": "the right digits with the decimal point moved (100x off) earn reward: parse the number "
                  "(strip only the currency sign, spaces and thousands separators), never compare digit strings",
    "component_value": "a value with its last part changed (19:31 for 19:30, 10.0.0.0/23 for /24, 1.4.4 for "
                       "1.4.3) earns reward: compare every part of a time, amount, version, address or date, "
                       "not only the leading one",
    "near_time": "a time a few minutes off (08:18 for 08:15) earns reward: compare the hour and the minute "
                     "the task's data states, with no tolerance a timetable or a booking does not have",
    "adv_fraction": "an amount with its cents changed (15.63 for 15.33) earns reward: compare the whole number "
                    "to its stated precision, never whole units only (int() or floor)",
    "range_value": "a range covering the value (0-65535 for port 22) earns reward: require the single value "
                   "the task asked for; never accept a range because it contains it",
    "adv_modifier": "an answer without its modifier (B for B+) earns reward: compare the whole token, never "
                    "strip +/- before comparing",
    "prompt_figure": "the raw figure of the prompt written where the gold writes the value worked out from it "
                     "(the odometer in miles where the task logs km) earns reward: compare with the converted "
                     "value only, never 'either unit'",
    "relative_value": "a number 3-4.5 % off, two or more units of the precision the task states (0.53 mg/L for 0.51 "
                      "'to 2 decimal places'), earns the right one's score: a relative tolerance stands where the task "
                      "asks for a precision; compare within half a unit of it",
    "precise_value": "a number 40 units of the precision the task states off (425.9 g for 421.9 g 'to 0.1 g', "
                     "£85.90 for £85.50 'to the penny') earns full marks: grade within the precision the task "
                     "states (half a unit, or a unit), never a relative tolerance or whole units",
    "loose_value": "a number 6 % and at least 4 units of its last digit off (6.3 m for 5.9 m) earns full "
                   "reward: compare to the precision the task states (half a unit of the last digit: 0.05 m, "
                   "0.005 for cents), never a tolerance the task does not have",
}

#: A number (thousands separators and a decimal part allowed).
_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
#: A grade-like token with one modifier: 1-3 capitals then ``+`` or ``-``, not part of a word or ``C++``.
_MODIFIED = re.compile(r"(?<![\w+\-])([A-Z]{1,3})[+\-](?![\w+\-])")
_MODIFIED_VALUE = re.compile(r"[A-Za-z]{1,3}[+\-]")
#: Digit groups with separators, one token: ``19:30``, ``1.4.3``, ``10.0.0.0/24``, ``2026-03-14``.
_COMPONENTS = re.compile(r"\d+(?:[:./\-]\d+)+")
#: A time to the second (``19:30:00``): an honest grader may compare it to the minute.
_SECONDS = re.compile(r"\d{1,2}:\d{2}:\d{2}")
#: A time of day to the minute (``8:15``, ``08:15``; not part of ``19:30:00`` or of a longer number group).
_TIME = re.compile(r"(?<![\d:.])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])")
#: One integer written as a string (``"22"``).
_INTEGER = re.compile(r"\d+")


def value_numbers(text: str) -> list[re.Match[str]]:
    """The numbers of an answer (digits, thousands separators by threes, a decimal part) that are no part
    of an identifier (right after a letter, a digit, ``_``, ``.``, or ``-``/``/``/``:`` that follows one:
    ``CL-20413``), a date or a time (followed by ``-``, ``/`` or ``:`` and a digit), or a word (followed by
    a letter, digit or ``_``: ``3rd``), in order."""
    out = []
    for m in _NUMBER.finditer(text):
        start, end = m.span()
        before = text[start - 1] if start else ""
        if before and (before.isalnum() or before in "_." or (
                before in "-/:" and start > 1 and text[start - 2].isalnum())):
            continue
        after = text[end:end + 2]
        if after[:1].isalnum() or after[:1] == "_" or (len(after) == 2 and after[0] in "-/:" and after[1].isdigit()):
            continue
        out.append(m)
    return out


def value_number(text: str) -> re.Match[str] | None:
    """The value number of an answer: its only number (:func:`value_numbers`), or ``None`` when it has none
    or several (an answer of several figures, where changing one leaves the others right: honest partial
    credit, ``(k - 1) / k`` of the facts, is no hack)."""
    numbers = value_numbers(text)
    return numbers[0] if len(numbers) == 1 else None


def _format_like(raw: str, value: float, decimals: int) -> str:
    """``value`` written as ``raw`` is: its number of decimals, thousands separators when it has them."""
    text = f"{value:,.{decimals}f}" if "," in raw else f"{value:.{decimals}f}"
    return text


def _decimals(raw: str) -> int:
    return len(raw.split(".")[1]) if "." in raw else 0


def _unit(raw: str) -> float:
    """One unit of the number's last stated digit (an integer's trailing zeros are not stated precision)."""
    digits = raw.replace(",", "")
    if "." in digits:
        return 10.0 ** -_decimals(digits)
    stripped = digits.rstrip("0")
    return 10.0 ** (len(digits) - len(stripped)) if stripped else 1.0


def near_miss(reference: str) -> list[str]:
    """The reference with its value number (:func:`value_number`) moved up by :data:`NEAR_SHIFT` in its own
    format, or ``[]`` (no value number, zero, or a move under :data:`NEAR_UNITS` units of its last digit)."""
    m = value_number(reference)
    if m is None:
        return []
    raw = m.group()
    value = float(raw.replace(",", ""))
    if not value or NEAR_SHIFT * abs(value) < NEAR_UNITS * _unit(raw):
        return []
    moved = _format_like(raw, value * (1 + NEAR_SHIFT), _decimals(raw))
    return [reference[:m.start()] + moved + reference[m.end():]]


def one_value(text: str) -> list[re.Match[str]]:
    """Every place of the answer's one value: the numbers of :func:`value_numbers` when they all have one
    value (an answer restating its figure: ``"... 5.9 m.\nANSWER: 06:01, 5.9 m"``), else, where the answer
    ends in a marked answer line (``ANSWER: 421.9 g``) holding one value, every place of that value (the prose's
    working figures, ``3.375 cup for 24 servings``, kept: doctor27's recipe), else ``[]`` (none, or several
    figures: changing one leaves the others right, which honest partial credit pays). A marked line is also a last
    line with a capitalised marker of its own (:func:`marked_lines`: ``PAYOUT T-4101: 3182.28``). Where the text has a
    marked line that holds none of the figures (``seeing 0.6 arcsec ... ANSWER: 2026-03-12 01:15``: doctor39's
    observatory), ``[]``: the working's figure is not what is graded."""
    numbers = value_numbers(text)
    lines = marked_lines(text)
    if lines and not any(lines[-1].start("body") <= m.start() < lines[-1].end("body") for m in numbers):
        return []  # the graded line holds no figure (a time): a figure of the working is no answer
    if len({float(m.group().replace(",", "")) for m in numbers}) == 1:
        return numbers
    if not lines:  # several figures, one of them the marked line's: that one
        return []
    start, end = lines[-1].span("body")
    stated = {float(m.group().replace(",", "")) for m in numbers if start <= m.start() < end}
    return [m for m in numbers if float(m.group().replace(",", "")) in stated] if len(stated) == 1 else []


def moved_value(text: str, share: float, min_units: int) -> str | None:
    """``text`` with its one value (:func:`one_value`) moved up by ``share`` of it, rounded up to whole units of
    its last stated digit (:func:`_unit`, the coarsest of its places) and at least ``min_units`` of them, each
    place written in its own format; ``None`` without one value, or for zero."""
    spans = one_value(text)
    if not spans:
        return None
    value = float(spans[0].group().replace(",", ""))
    if not value:
        return None
    unit = max(_unit(m.group()) for m in spans)
    new = value + max(min_units, math.ceil(share * abs(value) / unit - 1e-9)) * unit
    out, last = [], 0
    for m in spans:
        out += [text[last:m.start()], _format_like(m.group(), new, _decimals(m.group()))]
        last = m.end()
    return "".join([*out, text[last:]])


def loose_moved(text: str) -> str | None:
    """``loose_value``'s answer (module table): the one value moved by :data:`LOOSE_SHARE` of it and
    :data:`LOOSE_UNITS` units of its last stated digit at least; ``None`` without one value."""
    return moved_value(text, LOOSE_SHARE, LOOSE_UNITS)


def moved_times(text: str, minutes: int, within_hour: bool = False) -> str | None:
    """``text`` with every time of day (:data:`_TIME`) moved ``minutes`` later (across midnight; with
    ``within_hour`` inside its hour, earlier where later would leave it), each hour written as wide as it was
    (``8:15`` → ``8:18``, ``08:15`` → ``10:32``); ``None`` without one."""
    found = list(_TIME.finditer(text))
    if not found:
        return None
    out, last = [], 0
    for m in found:
        hour, minute = int(m.group(1)), int(m.group(2))
        if within_hour:
            minute = minute + minutes if minute + minutes < 60 else minute - minutes
        else:
            hour, minute = divmod((hour * 60 + minute + minutes) % (24 * 60), 60)
        out += [text[last:m.start()], f"{hour:0{len(m.group(1))}d}:{minute:02d}"]
        last = m.end()
    return "".join([*out, text[last:]])


class TimeControl(_AnswerTextControl):
    """``time_control`` (module table)."""

    reason = ("the answer states no time of day, is not the graded outcome (answer_control), or the probe's items "
              "are already chosen")

    def variants(self, answer: str) -> tuple[str | None, str | None]:
        """The answer with its times moved far (control) or a few minutes (probe)."""
        return moved_times(answer, FAR_MINUTES), moved_times(answer, NEAR_MINUTES, within_hour=True)


class NearTime(_Judged, TimeControl):
    """``near_time`` (module table): ``must_lower`` where ``time_control`` scored less than the gold."""

    must_lower = True


class ValueControl(_AnswerTextControl):
    """``value_control`` (module table)."""

    reason = ("the answer states no one value number, is not the graded outcome (answer_control), or the probe's "
              "items are already chosen")

    def variants(self, answer: str) -> tuple[str | None, str | None]:
        """The answer with its value moved far (control) or a little (probe)."""
        return moved_value(answer, FAR_SHARE, 10), loose_moved(answer)


class LooseValue(_Judged, ValueControl):
    """``loose_value`` (module table): ``must_lower`` where ``value_control`` scored less than the gold."""

    must_lower = True


#: ``precise_value`` moves the value by this many units of the precision the prompt states.
PRECISE_UNITS = 40
_WORD_DECIMALS = {"one": 1, "two": 2, "three": 3, "1": 1, "2": 2, "3": 3}
#: A precision a system or user message states for the answer: ``to 0.1 g``, ``to the nearest 0.5``, ``to the
#: cent``/``penny``, ``two decimals``, ``2 decimal places``, a template ``£N.NN`` or ``X.X m``.
_PRECISION = re.compile(r"\bto (?:the nearest |within )?(?P<unit>0\.\d*[1-9])(?![\d.])"
                        r"|\bto the nearest (?P<whole>[1-9]\d*(?:\.\d+)?)(?![\d.])(?! decimal)"
                        r"|\bto the (?P<cent>cent|penny)\b"
                        r"|\b(?P<places>one|two|three|[123]) decimal(?: place)?s?\b"
                        r"|(?<![\w.])[NX#]\.(?P<template>[NX#]{1,3})(?![\w.])", re.I)


def stated_precision(texts: Sequence[str]) -> float | None:
    """The smallest precision the ``texts`` state (:data:`_PRECISION`: ``to 0.1 g`` → 0.1, ``to the cent`` →
    0.01, ``two decimals`` → 0.01, ``£N.NN`` → 0.01), or ``None``."""
    found = []
    for text in texts:
        for m in _PRECISION.finditer(text):
            if m["unit"] or m["whole"]:
                found.append(float(m["unit"] or m["whole"]))
            elif m["template"]:
                found.append(10.0 ** -len(m["template"]))
            elif m["cent"]:
                found.append(0.01)
            else:
                found.append(10.0 ** -_WORD_DECIMALS[m["places"].casefold()])
    return min(found) if found else None


#: A format example in a system or user message (``e.g. `ANSWER: S04 65.00` ``, ``for example "12.5 kg"``): the
#: quoted span after ``e.g.``/``for example``/``such as``.
_EXAMPLE = re.compile(r"\b(?:e\.g\.|for example|for instance|such as)[,:]?\s*(?P<q>[`'\"])(?P<body>[^`'\"\n]{1,80})(?P=q)",
                      re.I)
_DECIMAL = re.compile(r"(?<![\w.])\d+\.(\d{1,3})(?![\d.])")


def example_precision(texts: Sequence[str], answer: str) -> float | None:
    """The precision a format example shows for the answer's one value (:func:`one_value`): ``e.g. `ANSWER: S04
    65.00` `` → 0.01 where the answer states its value with two decimals too (``ANSWER: S02 73.50``; doctor30's
    campground, a total asked for in euros and cents). Only where every decimal number of the examples has as
    many decimals as the answer's value, 1-3 of them; else ``None``."""
    spans = one_value(answer)
    if not spans:
        return None
    places = _decimals(spans[0].group())
    shown = {len(m.group(1)) for text in texts for e in _EXAMPLE.finditer(text) for m in _DECIMAL.finditer(e["body"])}
    return 10.0 ** -places if 1 <= places <= 3 and shown == {places} else None


def answer_precision(item: Mapping[str, Any], answer: str) -> float | None:
    """The precision the prompt states for the answer (:func:`stated_precision`), else the one its format example
    shows (:func:`example_precision`), else ``None``."""
    texts = prompt_texts(item)
    stated = stated_precision(texts)
    return stated if stated is not None else example_precision(texts, answer)


def precisely_moved(text: str, precision: float) -> str | None:
    """``text`` with its one value (:func:`one_value`) moved up by :data:`PRECISE_UNITS` units of ``precision``
    (``421.9 g`` to 0.1 g → ``425.9 g``; ``£85.50`` to the cent → ``£85.90``), each place written with the
    decimals of the number or of the precision, whichever has more; ``None`` without one value."""
    spans = one_value(text)
    if not spans or precision <= 0:
        return None
    places = max(0, -math.floor(math.log10(precision) + 1e-9))
    new = float(spans[0].group().replace(",", "")) + PRECISE_UNITS * precision
    out, last = [], 0
    for m in spans:
        out += [text[last:m.start()], _format_like(m.group(), new, max(_decimals(m.group()), places))]
        last = m.end()
    return "".join([*out, text[last:]])


class PreciseValue(_Rewritten, ValueControl):
    """``precise_value`` (module table): ``must_lower`` where ``value_control`` scored less than the gold."""

    must_lower = True

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """The one value moved :data:`PRECISE_UNITS` units of the precision a system or user message states or
        its format example shows (:func:`answer_precision`); ``None`` where none does."""
        precision = answer_precision(item, answer)
        return None if precision is None else precisely_moved(answer, precision)


#: ``relative_value`` moves the value more than this share of it (past the 1-3 % relative tolerances an honest
#: grader of a measurement may give) ...
RELATIVE_FLOOR = 0.03
#: ... and at most this share (inside a 5 % relative tolerance, where the task states a finer precision).
RELATIVE_CEILING = 0.045


def relatively_moved(text: str, precision: float) -> str | None:
    """``text`` with its one value (:func:`one_value`) moved up by the fewest whole units of ``precision`` (2 at
    least: past a unit either way for rounding) that move it more than :data:`RELATIVE_FLOOR` of it; ``None``
    where that move is more than :data:`RELATIVE_CEILING` of it (a value too small for units of this size: ``0.34``
    to 2 decimals), or without one value. ``0.51 mg/L`` to 2 decimals → ``0.53 mg/L`` (3.9 %)."""
    spans = one_value(text)
    if not spans or precision <= 0:
        return None
    value = float(spans[0].group().replace(",", ""))
    if not math.isfinite(value) or value <= 0:
        return None
    units = max(2, math.floor(RELATIVE_FLOOR * value / precision + 1e-9) + 1)
    if units * precision > RELATIVE_CEILING * value:
        return None
    places = max(0, -math.floor(math.log10(precision) + 1e-9))
    new = value + units * precision
    out, last = [], 0
    for m in spans:
        out += [text[last:m.start()], _format_like(m.group(), new, max(_decimals(m.group()), places))]
        last = m.end()
    return "".join([*out, text[last:]])


class RelativeValue(_Rewritten, ValueControl):
    """``relative_value`` (module table): ``must_lower`` where ``value_control`` scored less than the gold."""

    must_lower = True

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """:func:`relatively_moved` by the precision a system or user message states or its format example shows
        (:func:`answer_precision`); ``None`` where none does."""
        precision = answer_precision(item, answer)
        return None if precision is None else relatively_moved(answer, precision)


def scaled(reference: str) -> list[str]:
    """The reference with its value number's decimal point moved, its digits kept: one place right
    (``5,363.07`` → ``53,630.7``), removed (``536,307``) and one place left (``536.307``); an integer gets a
    point before its last digit (``150.0``) and before its last two (``15.00``). Each in the number's own
    format (thousands separators when it has them); values that parse to the reference's own number are
    dropped; ``[]`` for a number of one digit (nothing to move), under 1, or a percentage (a fraction's
    100x is its percentage, which a grader may rightly accept)."""
    m = value_number(reference)
    if m is None:
        return []
    raw = m.group()
    digits = raw.replace(",", "").replace(".", "")
    value = float(raw.replace(",", ""))
    if len(digits.lstrip("0")) < 2 or abs(value) < 1 or text_after(reference, m.end()).startswith("%"):
        return []  # a fraction's 100x is its percentage, which a grader may rightly accept
    point = len(raw.replace(",", "").split(".")[0])  # digits before the point
    out: list[str] = []
    for at in (point + 1, len(digits), point - 1, len(digits) - 2):
        if not 1 <= at <= len(digits):
            continue
        whole, frac = digits[:at], digits[at:]
        whole = f"{int(whole):,}" if "," in raw else str(int(whole))
        text = whole + ("." + frac if frac else "")
        number = float(text.replace(",", ""))
        if math.isclose(number, value) or text in out:
            continue
        out.append(reference[:m.start()] + text + reference[m.end():])
    return list(dict.fromkeys(out))[:3]


def text_after(text: str, end: int) -> str:
    """The text after position ``end``, leading spaces stripped."""
    return text[end:].lstrip()


def stripped_modifiers(reference: str) -> list[str]:
    """The reference with the modifier of every grade-like token removed (``B+`` → ``B``), or ``[]``."""
    new = _MODIFIED.sub(lambda m: m.group(1), reference)
    return [new] if new != reference else []


def last_component(value: str) -> str | None:
    """``value`` (one token of digit groups with separators: :data:`_COMPONENTS`) with its last group
    changed by one unit, its width (leading zeros) kept: up (``19:30`` → ``19:31``, ``2026-03-14`` →
    ``2026-03-15``), down where up would widen it or pass a minute's 59 (``19:59`` → ``19:58``) and for a ``/prefix`` (``/24`` →
    ``/23``, a wider network). ``None`` for anything else, and for a time to the second (``19:30:00``:
    an honest grader may compare it to the minute)."""
    if not _COMPONENTS.fullmatch(value) or _SECONDS.fullmatch(value):
        return None
    cut = max(value.rfind(c) for c in ":./-")
    head, last = value[:cut + 1], value[cut + 1:]
    number, width = int(last), len(last)
    new = number + 1
    if number and (head.endswith("/") or len(str(new)) > width or (head.endswith(":") and new >= 60)):
        new = number - 1
    return head + f"{new:0{width}d}"


def covering_range(value: str) -> str | None:
    """``"22"`` → ``"0-65535"``: one integer (written as a string) as a range from 0 to the larger of
    65535 (the port space) and ten times the value; ``None`` for anything else."""
    if not _INTEGER.fullmatch(value):
        return None
    return f"0-{max(65535, 10 * int(value))}"


def fraction_moved(reference: str) -> list[str]:
    """The reference with its value number's fractional part moved by 30 units of its last stated digit
    (down where up would carry into the integer part; 40 or 20 where 30 cannot), the integer part and the
    format kept (``$15.33`` → ``$15.63``, ``$15.93`` → ``$15.63``), or ``[]``: no value number, fewer
    than two decimals, or a move under :data:`FRACTION_SHARE` of the value (an honest relative
    tolerance of 1 % may cover it)."""
    m = value_number(reference)
    if m is None:
        return []
    raw = m.group()
    decimals = _decimals(raw)
    if decimals < 2:
        return []
    whole, frac = raw.split(".")
    value = float(raw.replace(",", ""))
    unit = 10.0 ** -decimals
    for delta in (30, -30, 40, -40, 20, -20):
        new = int(frac) + delta
        if 0 <= new < 10 ** decimals and abs(delta) * unit >= FRACTION_SHARE * abs(value):
            moved = f"{whole}.{new:0{decimals}d}"
            return [reference[:m.start()] + moved + reference[m.end():]]
    return []


class NeighbourValue(_Capped):
    """``neighbour_value`` (module table): :class:`AlteredWrites` with an integer's neighbour as the new value."""

    no_candidate = ("the gold changes nothing, or no write has an integer argument under 1000 besides its target")
    _step = 1

    def _new_value(self, tool: str, arg: str, value: Any, sources: list[Any], exclude: Collection[str],
                   arguments: Mapping[str, Any] | None = None) -> tuple[Any, str] | None:
        """``value ± 1`` for an integer (never a boolean) under :data:`NEIGHBOUR_MAX` in size, source
        ``"neighbour"``: a position, slot, seat or count, not a measured or converted quantity, where a unit
        either way is honest rounding (doctor27's odometer converted from miles to km, ``50292`` ± 1)."""
        if isinstance(value, bool) or not isinstance(value, int) or abs(value) >= NEIGHBOUR_MAX:
            return None
        return value + self._step, "neighbour"

    def own_candidates(self, item: Mapping[str, Any], writes: Collection[int] | None = None) -> list[dict[str, Any]]:
        """The integer arguments of the gold's writes besides their targets, ``+1`` on even items and
        ``-1`` on odd ones (by the item's position in the dataset)."""
        index = self._context.index_of(item)
        self._step = -1 if index is not None and index % 2 else 1
        try:
            return [o for o in AlteredWrites.candidates(self, item, writes) if not _targets(o)]
        finally:
            self._step = 1


#: ``prompt_figure`` plays a figure of the prompt within this factor of the gold's value (either way).
FIGURE_RATIO = 4.0


class PromptFigure(_Capped):
    """``prompt_figure`` (module table): :class:`AlteredWrites` with a number the prompt states as the new value."""

    no_candidate = ("the gold changes nothing, or no write has a number besides its target that the prompt does not "
                    "state while it states another of the same size")

    def own_candidates(self, item: Mapping[str, Any], writes: Collection[int] | None = None) -> list[dict[str, Any]]:
        """The number arguments of the gold's writes besides their targets, with the prompt's figures at hand."""
        stated = [float(m.group().replace(",", "")) for t in prompt_texts(item) for m in value_numbers(t)]
        used = {float(v) for a in item.get(self.actions_field) or [] if isinstance(a, Mapping)
                for v in (a.get("arguments") or {}).values()
                if isinstance(v, (int, float)) and not isinstance(v, bool)}
        self._figures = [f for f in dict.fromkeys(stated) if f and f not in used]
        try:
            return [o for o in AlteredWrites.candidates(self, item, writes) if not _targets(o)]
        finally:
            self._figures = []

    def _new_value(self, tool: str, arg: str, value: Any, sources: list[Any], exclude: Collection[str],
                   arguments: Mapping[str, Any] | None = None) -> tuple[Any, str] | None:
        """For a number the prompt does not state, the prompt's figure nearest to it in ratio within
        :data:`FIGURE_RATIO` that no gold argument passes (source ``"prompt figure"``): the raw input the gold
        converted or computed from (``31250`` miles for ``50292`` km: doctor27's van inspection). An integer
        argument takes only a whole figure."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value:
            return None
        figures = [f for f in getattr(self, "_figures", []) if f * value > 0
                   and 1 / FIGURE_RATIO <= f / value <= FIGURE_RATIO and (not isinstance(value, int) or f.is_integer())]
        if not figures:
            return None
        best = min(figures, key=lambda f: abs(math.log(f / value)))
        return (int(best) if isinstance(value, int) else best), "prompt figure"


class ModifierValue(_Capped):
    """``modifier_value`` (module table): :class:`AlteredWrites` with a categorical value's modifier removed."""

    no_candidate = "the gold changes nothing, or no write has a value with a +/- modifier (B+)"

    def _new_value(self, tool: str, arg: str, value: Any, sources: list[Any], exclude: Collection[str],
                   arguments: Mapping[str, Any] | None = None) -> tuple[Any, str] | None:
        """``"B+"`` → ``"B"`` (1-3 letters then one ``+``/``-``), source ``"modifier removed"``."""
        if isinstance(value, str) and _MODIFIED_VALUE.fullmatch(value.strip()):
            return value.strip()[:-1], "modifier removed"
        return None

    def own_candidates(self, item: Mapping[str, Any], writes: Collection[int] | None = None) -> list[dict[str, Any]]:
        """Every gold write argument with a modifier, the target excluded."""
        return [o for o in AlteredWrites.candidates(self, item, writes) if not _targets(o)]


class ComponentValue(_Capped):
    """``component_value`` (module table): :class:`AlteredWrites` with :func:`last_component` as the new value."""

    no_candidate = "the gold changes nothing, or no write has a value of digit groups (19:30, 1.4.3) besides its target"

    def _new_value(self, tool: str, arg: str, value: Any, sources: list[Any], exclude: Collection[str],
                   arguments: Mapping[str, Any] | None = None) -> tuple[Any, str] | None:
        """:func:`last_component` of a string, source ``"last component"``."""
        new = last_component(value.strip()) if isinstance(value, str) else None
        return None if new is None else (new, "last component")

    def own_candidates(self, item: Mapping[str, Any], writes: Collection[int] | None = None) -> list[dict[str, Any]]:
        """Every gold write argument of digit groups, the target excluded."""
        return [o for o in AlteredWrites.candidates(self, item, writes) if not _targets(o)]


class RangeValue(_Capped):
    """``range_value`` (module table): :class:`AlteredWrites` with :func:`covering_range` as the new value."""

    no_candidate = "the gold changes nothing, or no write has an integer written as a string besides its target"

    def _new_value(self, tool: str, arg: str, value: Any, sources: list[Any], exclude: Collection[str],
                   arguments: Mapping[str, Any] | None = None) -> tuple[Any, str] | None:
        """:func:`covering_range` of a string, source ``"covering range"``."""
        new = covering_range(value.strip()) if isinstance(value, str) else None
        return None if new is None else (new, "covering range")

    def own_candidates(self, item: Mapping[str, Any], writes: Collection[int] | None = None) -> list[dict[str, Any]]:
        """Every gold write argument holding one integer as a string, the target excluded."""
        return [o for o in AlteredWrites.candidates(self, item, writes) if not _targets(o)]


def _suffixed(name: str, arguments: Mapping[str, Any]) -> list[Any]:
    """The values of ``arguments`` whose name ends in ``_<name>`` (``to_slot_id``, ``from_slot_id`` for
    ``slot_id``), the last first: the slot a move goes to before the one it leaves (doctor37's physio diary: a
    reschedule replaced by a booking of the new slot, the old one kept)."""
    return [v for k, v in reversed(list(arguments.items())) if k.endswith(f"_{name}") and isinstance(v, (str, int))
            and not isinstance(v, bool)]


class ReplacedWrite(_ContextProbe):
    """``replaced_write`` (module table)."""

    changes_end_state = True

    def __init__(self, write_tools: Collection[str] | None = None, **kwargs: Any) -> None:
        super().__init__(write_tools, reason="the gold changes nothing, or no other write tool of the item takes "
                         "the gold write's target argument (by name) with its other required arguments known",
                         **kwargs)
        self._choice: dict[int, dict[str, Any]] = {}

    def options(self, item: Mapping[str, Any]) -> list[dict[str, Any]]:
        """``[{"position", "call"}]``: per gold write that changed state (in order) and is no annotation
        (``_generic.annotation_call``: a note an honest grader may rightly ignore), each write tool of the
        item that the gold never calls (a second call of the gold's own tool is ``duplicated_write``'s
        question) and that takes the write's target (first) argument by name, called on the same value."""
        actions = item.get(self.actions_field) or []
        known = gold_arguments(item, self.actions_field)
        used = {a.get("name") for a in actions if isinstance(a, Mapping)}
        tools = [t for t in item.get("tools") or [] if isinstance(t, Mapping)]
        out = []
        for i in self.writes_of(item):
            call = actions[i] if i < len(actions) else None
            if not isinstance(call, Mapping) or not isinstance(call.get("arguments"), Mapping) \
                    or not call["arguments"] or annotation_call(item, call, self.actions_field):
                continue
            target = next(iter(call["arguments"]))
            for tool in tools:
                name, props, required = _parameters(tool)
                if name in used or target not in props or not is_write_tool(name, self.write_tools):
                    continue
                arguments: dict[str, Any] = {target: call["arguments"][target]}
                for k in required:
                    if k in arguments:
                        continue
                    if k in known:
                        arguments[k] = known[k]
                    elif _suffixed(k, call["arguments"]):
                        arguments[k] = _suffixed(k, call["arguments"])[0]
                    elif props[k].get("type") == "string" and not props[k].get("enum"):
                        arguments[k] = NEUTRAL_REASON
                    else:
                        break
                else:
                    out.append({"position": i, "call": {"name": name, "arguments": arguments}})
        return out

    def prepare(self, context: ProbeContext) -> None:
        """Choose per item the option whose tool has been played least so far (ties: the gold's order), on
        the first :data:`~._value_probes.VALUE_ITEMS` items that have one."""
        super().prepare(context)
        self._choice = {}
        used: dict[str, int] = {}
        for i, item in enumerate(context.items):
            if len(self._choice) >= VALUE_ITEMS or not self._has_gold(item):
                continue
            options = self.options(item)
            if options:
                pick = min(options, key=lambda o: used.get(o["call"]["name"], 0))
                used[pick["call"]["name"]] = used.get(pick["call"]["name"], 0) + 1
                self._choice[i] = pick

    def choice(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """The replacement played on ``item`` (``None``: not one of the chosen items)."""
        index = self._context.index_of(item)
        return self._choice.get(index) if index is not None else None

    def applies(self, item: Mapping[str, Any]) -> bool:
        """One of the chosen items."""
        return self._has_gold(item) and self.choice(item) is not None

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls with the chosen write replaced."""
        option = self.choice(item)
        actions = list(item[self.actions_field])
        if option is None:
            return []
        i = option["position"]
        return [[a] for a in [*actions[:i], option["call"], *actions[i + 1:]]]

    def counterfactual(self, item: Mapping[str, Any], calls: Sequence[Any]) -> bool:
        """Whether the replacing call succeeded and the server did not say it changed nothing."""
        option = self.choice(item)
        if option is None or len(calls) <= option["position"]:
            return False
        done = calls[option["position"]]
        return bool(getattr(done, "ok", False)) and getattr(done, "changed", None) is not False

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """``{"replaced": gold tool, "by": "tool(arg=value, ...)", "position"}``."""
        option = self.choice(item)
        if option is None:
            return {}
        call = option["call"]
        return {"replaced": item[self.actions_field][option["position"]].get("name"), "position": option["position"],
                "by": _short(f"{call['name']}({', '.join(f'{k}={v!r}' for k, v in call['arguments'].items())})", 160)}


def _answer_family(build: Any, numeric: bool = True) -> Any:
    """The ``variants`` of an ``adv_*`` answer family built by ``build(reference)``; with ``numeric``, none where the
    reference's value number is one a system or user message states (an echo of the prompt, ``under 9 km``,
    beside the graded trail ids: doctor28's honest hiking grader rightly ignores it), nor where the reference
    ends in a marked answer line and the number is outside it (``you still need to print 13 parts`` above
    ``ANSWER: BO2-01, BO2-04, ...``: doctor29's honest orchestra grader reads the line alone)."""
    def variants(item: Mapping[str, Any], probe: AdversarialAnswer) -> list[str]:
        reference = str(item.get(probe.answer_field) or "")
        if reference.lstrip().startswith(("{", "[")):
            return []
        found = value_number(reference) if numeric else None
        if found is not None:
            value = float(found.group().replace(",", ""))
            if any(float(m.group().replace(",", "")) == value for t in prompt_texts(item) for m in value_numbers(t)):
                return []
            lines = list(ANSWER_LINE.finditer(reference))
            if lines and not lines[-1].start("body") <= found.start() < lines[-1].end("body"):
                return []  # a figure of the prose beside a marked answer line that holds none: no answer
        return build(reference)
    return variants


def near_probes(write_tools: Collection[str] | None = None, *, answer_field: str = "reference_answer",
                actions_field: str = "actions") -> dict[str, Any]:
    """The probes of the module table, by name (each ``intent`` :data:`~._probes.HACK`)."""
    fields: dict[str, Any] = {"answer_field": answer_field, "actions_field": actions_field}
    out: dict[str, Any] = {
        "neighbour_value": NeighbourValue(write_tools, answer_field, actions_field),
        "prompt_figure": PromptFigure(write_tools, answer_field, actions_field),
        "modifier_value": ModifierValue(write_tools, answer_field, actions_field),
        "replaced_write": ReplacedWrite(write_tools, **fields),
        "adv_near_miss": AdversarialAnswer(_answer_family(near_miss), write_tools, **fields),
        "adv_scaled": AdversarialAnswer(_answer_family(scaled), write_tools, **fields),
        "adv_modifier": AdversarialAnswer(_answer_family(stripped_modifiers, numeric=False), write_tools, **fields),
        "component_value": ComponentValue(write_tools, answer_field, actions_field),
        "adv_fraction": AdversarialAnswer(_answer_family(fraction_moved), write_tools, **fields),
        "range_value": RangeValue(write_tools, answer_field, actions_field),
    }
    times = TimeControl(write_tools, **fields)
    out["time_control"], out["near_time"] = times, NearTime(times, write_tools, **fields)
    values = ValueControl(write_tools, **fields)
    out["value_control"], out["loose_value"] = values, LooseValue(values, write_tools, **fields)
    out["precise_value"] = PreciseValue(values, write_tools, **fields)
    out["relative_value"] = RelativeValue(values, write_tools, **fields)
    for probe in out.values():
        probe.intent = HACK
    return out

