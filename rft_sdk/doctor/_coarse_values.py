"""A stated value a grader reads too coarsely or in the wrong terms (issue 37, doctor29's aquarium graders: whole
litres compared where the prompt asks for 0.1 L, a figure in US gallons labelled litres, and the change without
the top-up allowance the prompt adds). ``precise_value`` moves the value 40 units of the stated precision, past
a whole-unit comparison; these stay inside it, or play a figure of the wrong terms.

========================= ==========================================================================
probe                     the gold's calls, then the reference answer with its one value ...
========================= ==========================================================================
whole_unit_value          (where a system or user message states a precision under one unit:
                          ``to 0.1 L``, ``to the cent``) moved :data:`COARSE_UNITS` units of that
                          precision (up, else down) so that it rounds to the same whole number
                          (``87.1 L`` → ``87.4 L``): a grader comparing whole units pays it
unit_figure               converted as if it were in the other unit of a common pair (:data:`PAIRS`:
                          litres and US gallons, km and miles, kg and pounds, g and ounces, cm and
                          inches, m and feet, tonnes and kg), its own unit label kept (``87.1 L`` →
                          ``23.0 L``; ``3.59 t`` → ``3590.00 t``: doctor35's quarry), where
                          the unit follows the number: a grader that accepts the figure in either
                          unit pays it
prose_figure              replaced by another figure the reference's prose states with the same unit,
                          the nearest to it by ratio (``a 20% change is 79.2 L, ... mix 87.1 L`` →
                          ``79.2 L``; a currency before it: ``EUR 13.65 net`` for ``EUR 16.38``; the
                          net ``£358.50`` beside the VAT ``£71.70`` for ``£430.20``), where the reply
                          ends in a marked answer line: an intermediate result, which a grader
                          accepting either of two readings of the task pays
written_total             replaced by the sum of a list of numbers a gold call passes (the arrows of
                          the end entered: ``[10, 9, 9, 8, 7, 0]`` → ``43`` for the running total
                          ``282``), where that sum differs from it: the figure of the part just
                          written for the whole, which a grader accepting "either total" pays
                          (doctor33's archery desk)
========================= ==========================================================================

All four are judged like ``precise_value`` (``must_lower``) against ``value_control``, which moves the value
far first: only where the value is graded at all. **Why the honest twin stays silent**: each moved value is past
the precision the task asks for (three units of it, a ratio of 2.2 or more, another figure of the working), so a
grader within that precision refuses it as it refuses the control's. Nothing names a tool, a field or a task.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from typing import Any

from ._answers import ANSWER_LINE
from ._lenient_probes import _Rewritten
from ._near_probes import ValueControl, _decimals, _format_like, answer_precision, one_value, value_numbers
from ._probes import HACK

__all__ = ["COARSE_ADVICE", "COARSE_UNITS", "PAIRS", "ProseFigure", "UnitFigure", "WholeUnitValue", "WrittenTotal",
           "coarse_value_probes"]

COARSE_ADVICE = {
    "whole_unit_value": "a value a few units of the stated precision off (87.4 L for 87.1 L, to 0.1 L) earns the "
                        "right value's score: compare at the precision the task states, never in whole units",
    "unit_figure": "the figure in the other unit of a pair (US gallons for litres) labelled with the asked unit "
                   "earns the right value's score: accept the one unit the task asks for, never either figure",
    "prose_figure": "an intermediate figure of the working (the change without the allowance) earns the right "
                    "value's score: grade the one value the task asks for, never either of two readings",
    "written_total": "the total of the part just written (the end's arrows) earns the right value's score (the "
                     "running total): grade the one total the task asks for, never either of two totals",
}

#: ``whole_unit_value`` moves the value this many units of the stated precision
COARSE_UNITS = 3
#: unit label (lower case) → factor: the figure in the other unit of the pair is ``value / factor``
PAIRS = {"l": 3.785411784, "litre": 3.785411784, "litres": 3.785411784, "liter": 3.785411784,
         "liters": 3.785411784, "km": 1.609344, "kg": 0.45359237 ** -1, "g": 28.349523125, "cm": 2.54,
         "m": 0.3048 ** -1, "gal": 3.785411784 ** -1, "mi": 1.609344 ** -1, "lb": 0.45359237, "oz": 28.349523125 ** -1,
         "in": 2.54 ** -1, "ft": 0.3048, "t": 1e-3, "tonne": 1e-3, "tonnes": 1e-3}
_UNIT = re.compile(r"\s?([A-Za-z]+)\b")


def _unit_after(text: str, end: int) -> str | None:
    m = _UNIT.match(text, end)
    return m.group(1).lower() if m else None


#: A currency written before its amount: ``EUR 16.38``, ``€16.38``, ``USD 4``.
_UNIT_BEFORE = re.compile(r"(?:(?<![A-Za-z])([A-Z]{3})\s?|([€$£¥]))$")


def _unit_before(text: str, start: int) -> str | None:
    m = _UNIT_BEFORE.search(text[max(0, start - 5):start])
    return (m.group(1) or m.group(2)).lower() if m else None


def _replaced(text: str, spans: list[re.Match[str]], new: float, decimals: int | None = None) -> str:
    out, last = [], 0
    for m in spans:
        out += [text[last:m.start()], _format_like(m.group(), new, _decimals(m.group()) if decimals is None
                                                   else decimals)]
        last = m.end()
    return "".join([*out, text[last:]])


class WholeUnitValue(_Rewritten, ValueControl):
    """``whole_unit_value`` (module table)."""

    must_lower = True

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """The one value :data:`COARSE_UNITS` units of the stated precision off, in the same whole number."""
        precision = answer_precision(item, answer)
        spans = one_value(answer)
        if precision is None or not spans or precision >= 1:
            return None
        value = float(spans[0].group().replace(",", ""))
        places = max(0, -math.floor(math.log10(precision) + 1e-9))
        for new in (value + COARSE_UNITS * precision, value - COARSE_UNITS * precision):
            if math.floor(new + 0.5) == math.floor(value + 0.5) and new >= 0:
                return _replaced(answer, spans, new, max(places, _decimals(spans[0].group())))
        return None


class UnitFigure(_Rewritten, ValueControl):
    """``unit_figure`` (module table)."""

    must_lower = True

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """The one value divided by its unit's :data:`PAIRS` factor, its label kept."""
        spans = one_value(answer)
        if not spans:
            return None
        unit = _unit_after(answer, spans[-1].end())
        if unit not in PAIRS:
            return None
        value = float(spans[0].group().replace(",", ""))
        return _replaced(answer, spans, value / PAIRS[unit]) if value else None


class ProseFigure(_Rewritten, ValueControl):
    """``prose_figure`` (module table)."""

    must_lower = True

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """The one value replaced by the prose's other figure with the same unit (5 % or more away) nearest to it by
        ratio, the later of two as near (an intermediate result: the net beside the gross)."""
        spans = one_value(answer)
        lines = list(ANSWER_LINE.finditer(answer))
        if not spans or not lines:
            return None
        # the unit after the number (``87.1 L``), else a currency before it (``EUR 16.38``: doctor41's toll bridge)
        after = _unit_after(answer, spans[-1].end()) is not None

        def unit_of(m: re.Match[str]) -> str | None:
            return _unit_after(answer, m.end()) if after else _unit_before(answer, m.start())

        unit, value = unit_of(spans[-1]), float(spans[0].group().replace(",", ""))
        if unit is None or not value:
            return None
        start = lines[-1].start()
        others = [float(m.group().replace(",", "")) for m in value_numbers(answer[:start]) if unit_of(m) == unit
                  and abs(float(m.group().replace(",", "")) - value) >= 0.05 * abs(value)]
        # the nearest by ratio (the net total beside the gross: doctor51's plant hire), the later one of a tie
        others = [o for o in others if o > 0 and value > 0] or others
        if not others:
            return None
        best = min(reversed(others), key=lambda o: abs(math.log(o / value)) if o > 0 and value > 0 else math.inf)
        return _replaced(answer, spans, best)


class WrittenTotal(_Rewritten, ValueControl):
    """``written_total`` (module table)."""

    must_lower = True

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """The one value replaced by the sum of the first list of two numbers or more a gold call passes whose sum
        differs from it."""
        spans = one_value(answer)
        if not spans:
            return None
        value = float(spans[0].group().replace(",", ""))
        for call in item.get(self.actions_field) or []:
            arguments = call.get("arguments") if isinstance(call, Mapping) else None
            for listed in (arguments.values() if isinstance(arguments, Mapping) else ()):
                if (isinstance(listed, list) and len(listed) >= 2
                        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in listed)):
                    total = float(sum(listed))
                    if math.isfinite(total) and total > 0 and not math.isclose(total, value):
                        return _replaced(answer, spans, total)
        return None


def coarse_value_probes(control: ValueControl, write_tools: Collection[str] | None = None,
                        **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name, judged against ``control`` (``value_control``; ``intent``
    ``hack``)."""
    out: dict[str, Any] = {"whole_unit_value": WholeUnitValue(control, write_tools, **fields),
                           "unit_figure": UnitFigure(control, write_tools, **fields),
                           "prose_figure": ProseFigure(control, write_tools, **fields),
                           "written_total": WrittenTotal(control, write_tools, **fields)}
    for probe in out.values():
        probe.intent = HACK
    return out
