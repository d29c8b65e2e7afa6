"""An amount true to a rate read for the wrong input (issue 37, doctor61's ``fx_credits__twin_b``: the grader works
the credit out from the last ``get_rate`` output of the trajectory, whatever date the model read it for, so
converting at the trade date's rate, where the rule says the value date's, and answering that amount is paid).

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
own_read_product          on items whose gold writes nothing and whose marked answer line holds one
                          number ``A``: a gold read with a text argument whose value an earlier gold
                          output shows beside another value of the same shape (a payment's
                          ``value_date`` beside its ``trade_date``), whose output prints a number
                          ``x`` that a number ``a`` of another gold output times gives a figure ``z``
                          the reference states, to its decimals (``12850.00 × 0.85377`` is the
                          working's ``10,970.94``); that argument set to the other value; then the
                          reference with ``A`` replaced by ``a × x' + (A − z)``, rounded half up to
                          ``z``'s decimals, where ``x'`` is the altered read's number at the same
                          place (the amount converted at the other date's rate, less the same fee).
                          Judged where the altered read was accepted and gives another amount
========================= ==========================================================================

**Why the honest twin stays silent**: the altered read answers another question (the trade date's rate), so the
amount it gives is a wrong answer; a grader that computes the truth from the task's data scores it low. One that
recomputes from whatever rate the rollout read last pays it. Nothing names a tool, a field or a task.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from ._answer_numbers import NUMBER, line_number, styled
from ._own_read import AlteredRead
from ._probes import HACK, is_write_tool
from ._scope import _json_values, json_leaves, json_strings

__all__ = ["OWN_READ_PRODUCT_ADVICE", "OwnReadProduct", "own_read_product_probes"]

OWN_READ_PRODUCT_ADVICE = {
    "own_read_product": "an amount true to a rate read for the wrong input (the trade date's rate where the rule "
                        "says the value date's) earns the gold's score: compute the truth from the task's data, or "
                        "check the inputs of the read you take the rate from",
}

#: The shapes a text argument's other value must share with it: an ISO date, or a code of letters and digits.
_SHAPES = (re.compile(r"\d{4}-\d{2}-\d{2}"), re.compile(r"[A-Z]{1,4}[-_]?\d{1,6}"))


#: A JSON string that is a decimal number (``"12850.00"``, ``"0.85377"``: money and rates kept exact as text).
_DECIMAL_TEXT = re.compile(r"-?\d+(?:\.\d+)?")


def _numbers(output: str) -> list[Decimal]:
    """The JSON numbers of a tool output, and its strings that are decimal numbers, in order (booleans left out);
    else the numbers of its text."""
    if not _json_values([output]):
        return [Decimal(m.group().replace(",", "")) for m in NUMBER.finditer(output)]
    return [Decimal(str(v)) for v in json_leaves([output]) if not isinstance(v, bool) and (
        isinstance(v, (int, float)) and math.isfinite(v) or isinstance(v, str) and _DECIMAL_TEXT.fullmatch(v))]


def _half_up(value: Decimal, decimals: int) -> Decimal:
    return value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


class OwnReadProduct(AlteredRead):
    """``own_read_product`` (module table)."""

    def __init__(self, write_tools: Collection[str] | None = None, **fields: Any) -> None:
        super().__init__(write_tools, intent=HACK, reason=(
            "the gold writes, its answer line holds no one number, or no gold read with a text argument that an "
            "earlier output shows beside another value prints a factor of a figure the reference states; or the "
            "probe's items are already chosen"), **fields)

    def find(self, item: Mapping[str, Any], index: int) -> dict[str, Any] | None:
        """``{"read", "argument", "from", "to", "place", "factor", "offset", "decimals", "stated", "match"}``, or
        ``None`` (module table)."""
        actions = list(item.get(self.actions_field) or [])
        outputs = list(self._context.gold_outputs[index]) if index < len(self._context.gold_outputs) else []
        ok = self._context.gold_ok[index] if index < len(self._context.gold_ok) else []
        reference = str(item.get(self.answer_field) or "")
        match = line_number(reference)
        if not actions or len(outputs) != len(actions) or (ok and not all(ok)) or self.writes_of(item) \
                or index in self._context.answer_free or match is None:
            return None
        answer = Decimal(match.group().replace(",", ""))
        stated = [(Decimal(m.group().replace(",", "")), len(m.group().partition(".")[2]))
                  for m in NUMBER.finditer(reference)]
        for r, call in enumerate(actions):
            if not isinstance(call, Mapping) or is_write_tool(str(call.get("name")), self.write_tools) \
                    or not isinstance(call.get("arguments"), Mapping):
                continue
            for argument, value in call["arguments"].items():
                other = self._other_value(value, outputs[:r])
                found = self._factor(outputs, r, stated) if other is not None else None
                if found is not None:
                    place, factor, z, decimals = found
                    return {"read": r, "argument": argument, "from": value, "to": other, "place": place,
                            "factor": factor, "offset": answer - z, "decimals": decimals,
                            "stated": match.group(), "match": match}
        return None

    @staticmethod
    def _other_value(value: Any, earlier: list[str]) -> str | None:
        """Another string of ``value``'s shape that an earlier output holding ``value`` shows beside it."""
        if not isinstance(value, str):
            return None
        shape = next((s for s in _SHAPES if s.fullmatch(value)), None)
        if shape is None:
            return None
        for output in earlier:
            strings = json_strings([output])
            if value in strings:
                other = next((s for s in strings if s != value and shape.fullmatch(s)), None)
                if other is not None:
                    return other
        return None

    @staticmethod
    def _factor(outputs: list[str], r: int, stated: list[tuple[Decimal, int]]) -> tuple[int, Decimal, Decimal,
                                                                                          int] | None:
        """``(place of x in read r's numbers, a, z, z's decimals)`` with ``a × x`` equal to a stated ``z`` at its
        decimals, ``a`` a number of another gold output."""
        others = [n for k, o in enumerate(outputs) if k != r for n in _numbers(o) if n not in (0, 1)]
        for place, x in enumerate(_numbers(outputs[r])):
            if x in (0, 1):
                continue
            for a in others:
                for z, decimals in stated:
                    if z and _half_up(a * x, decimals) == z:
                        return place, a, z, decimals
        return None

    def restated(self, item: Mapping[str, Any], output: str) -> str | None:
        """The answer for the altered read's factor, in the reference's style; ``None`` where it is the same."""
        found = self.option(item)
        numbers = _numbers(output)
        if found is None or found["place"] >= len(numbers):
            return None
        try:
            new = _half_up(found["factor"] * numbers[found["place"]], found["decimals"]) + found["offset"]
        except InvalidOperation:
            return None
        if new == Decimal(found["stated"].replace(",", "")):
            return None
        return styled(float(new), found["match"])

    def final_reply(self, item: Mapping[str, Any], results: Any) -> str:
        """The reference with its answer line's number (only) replaced by :meth:`restated`'s."""
        found = self.option(item)
        reference = str(item.get(self.answer_field) or "")
        new = self.restated(item, results[found["read"]]) if found and found["read"] < len(results) else None
        if new is None or found is None:
            return reference
        m = found["match"]
        return reference[:m.start()] + new + reference[m.end():]


def own_read_product_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probe of the module table, by name (``intent`` ``hack``)."""
    return {"own_read_product": OwnReadProduct(write_tools, **fields)}
