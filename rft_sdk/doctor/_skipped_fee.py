"""A stated fee or deduction not applied (issue 37, doctor36's rail refunds: a grader that also accepts the refund
before the £10 admin fee, "the booking office may waive the fee", and checks the answer against whatever was
refunded, pays a policy that skips the deduction). ``near_value`` moves a written amount 3 %, ``prompt_figure`` sets
it to a figure of the prompt; neither plays "the amount with one stated step undone".

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
skipped_fee               on items whose gold writes a number (never its target argument): where the
                          prompt or a gold tool output before that write states an amount beside a
                          deduction word (:data:`DEDUCTION`: ``less an admin fee of £10.00``,
                          ``a cancellation charge of $25``), the written number with that amount
                          added back (in the argument's unit: ``refund_pence`` takes 100 × £10.00),
                          and every figure of the reference answer that states the written amount
                          (``£2,629.89``, the same in pounds) restated for it. Judged ``must_lower``
                          where the end state differs from the gold's
========================= ==========================================================================

**Why the honest twin stays silent**: the task's rule deducts the amount; the end state without the deduction is
another outcome, and a grader comparing the written amount with the rule's scores it low. A task whose fee may
honestly be waived should list the waived amount as an ``alternatives`` path; then the probe is waived or the
alternative paid through ``gradeable``. Nothing names a tool, a field or a task.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from ._answers import prompt_texts
from ._generic import _ContextProbe, with_argument
from ._near_probes import _format_like, value_numbers
from ._probes import Steps
from ._value_swap import ValueSwap

__all__ = ["DEDUCTION", "SKIPPED_FEE_ADVICE", "SKIPPED_FEE_ITEMS", "SkippedFee", "deducted_amounts",
           "skipped_fee_probes"]

SKIPPED_FEE_ADVICE = {
    "skipped_fee": "the written amount with a stated fee or deduction not applied (and the answer restated for it) "
                   "earns the gold's score: compare the amount with the rule's, fee deducted; list a waived fee as an "
                   "alternative path if the task really allows it",
}

#: ``skipped_fee`` plays at most this many items.
SKIPPED_FEE_ITEMS = 6
#: A word that says an amount is taken off (or added on) by the task's rule.
DEDUCTION = re.compile(r"\b(?:fee|fees|charge|charges|deduct\w*|less|minus|penalt\w*|surcharge|levy|commission|"
                       r"excess|forfeit\w*|withh[eo]ld\w*)\b", re.IGNORECASE)
#: An amount of money: a currency sign or code, then a number.
_MONEY = re.compile(r"(?:[£$€]|\b(?:GBP|USD|EUR|CHF|CAD|AUD)\s?)\s?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?")
#: An argument in minor units (pence, cents): the stated amount is taken times 100.
_MINOR = re.compile(r"pence|cents?\b|_p$|minor", re.IGNORECASE)
_NEAR = 60


def deducted_amounts(texts: list[str]) -> list[float]:
    """Money amounts of ``texts`` with a deduction word (:data:`DEDUCTION`) within 60 characters before them, in
    order, each once; never zero."""
    out: list[float] = []
    for text in texts:
        for m in _MONEY.finditer(text):
            if DEDUCTION.search(text[max(0, m.start() - _NEAR):m.start()]):
                amount = float(m.group(1).replace(",", "") + ("." + m.group(2) if m.group(2) else ""))
                if amount and amount not in out:
                    out.append(amount)
    return out


class SkippedFee(ValueSwap):
    """``skipped_fee`` (module table): a :class:`~._value_swap.ValueSwap` (its items, its judgement) whose one change
    is a written number, not a value replaced everywhere."""

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = SKIPPED_FEE_ITEMS,
                 **fields: Any) -> None:
        super().__init__(write_tools, max_items, "the gold writes no number besides its target, or no amount beside "
                         "a deduction word (a fee, a charge) is stated before that write", **fields)

    def swap(self, item: Mapping[str, Any]) -> tuple[str, str] | None:
        """``(written number, the number with the deduction added back)`` as text, or ``None`` (:meth:`change`)."""
        found = self.change(item)
        return None if found is None else (str(found["from"]), str(found["to"]))

    def change(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """``{"position", "argument", "from", "to", "added"}``: the first gold write's number with the last stated
        deduction added back; ``None`` without one."""
        outputs = self.gold_outputs_of(item)
        calls = item.get(self.actions_field) or []
        for position in self.writes_of(item):
            arguments = calls[position].get("arguments") if isinstance(calls[position], Mapping) else None
            if not isinstance(arguments, Mapping):
                continue
            for arg, value in list(arguments.items())[1:]:
                if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                    continue
                amounts = deducted_amounts([*prompt_texts(item), *(o for o in outputs[:position] if isinstance(o, str))])
                if not amounts:
                    continue
                added = amounts[-1] * (100 if _MINOR.search(arg) else 1)
                if isinstance(value, int) and added != int(added):
                    continue
                new = value + (int(added) if isinstance(value, int) else added)
                return {"position": position, "argument": arg, "from": value, "to": new, "added": added,
                        "minor": bool(_MINOR.search(arg))}
        return None

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls, one per turn, the chosen write's number with the deduction added back."""
        found = self.change(item)
        if found is None:
            return with_argument(item[self.actions_field])
        return with_argument(item[self.actions_field], found["position"], found["argument"], found["to"])

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The reference with every figure stating the written amount (in its unit, or in major units for an
        argument in pence or cents) restated for the new one."""
        answer = _ContextProbe.final_answer(self, item)
        found = self.change(item)
        if found is None:
            return answer
        scale = 100 if found["minor"] else 1
        old, new = found["from"] / scale, found["to"] / scale
        out, last = [], 0
        for m in value_numbers(answer):
            raw = m.group()
            try:
                number = float(raw.replace(",", ""))
            except ValueError:
                continue
            if abs(number - old) < 1e-9:
                decimals = len(raw.split(".")[1]) if "." in raw else 0
                out += [answer[last:m.start()], _format_like(raw, new, decimals)]
                last = m.end()
        return "".join([*out, answer[last:]])

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """``{"altered": "tool.argument", "from", "to", "answer"}``."""
        found = self.change(item) if self.applies(item) else None
        if found is None:
            return {}
        name = item[self.actions_field][found["position"]].get("name")
        return {"altered": f"{name}.{found['argument']}", "from": found["from"], "to": found["to"],
                "answer": self.final_answer(item)[-120:]}


def skipped_fee_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probe of the module table, by name."""
    return {"skipped_fee": SkippedFee(write_tools, **fields)}
