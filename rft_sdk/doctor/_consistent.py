"""A wrong number or date written *and* stated (issue 37, doctor16's ``bowling__average_as_stated``,
doctor17's ``giftcard__stated_amount`` and ``recycling__weekday_only``, doctor18's ``dental__month_only``): a grader that checks the written
value against the number the reply states (consistency) instead of recomputing it, or a date by its weekday,
pays a rollout that writes a wrong value and states the same wrong value. ``altered_writes`` changes the
write only, so its reply (the reference, stating the right value) contradicts the write and such a grader
scores it low.

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
consistent_value          one **number** or ISO **date** argument of one gold write (never its
                          target, the first argument) that the reference states, changed, **and the
                          reference with that value replaced by the same new one** (a number
                          written with the reference's decimals; a whole number of cents the
                          reference states as dollars, ``1250`` as ``$12.50``, replaced there in
                          dollars: doctor22's credit grader). A number becomes the value
                          ``altered_writes`` would write (another item's, a sibling, a mutation);
                          a date moves by whole weeks (1 to :data:`WEEKS`, back or forth: the same
                          weekday), within its month where it can (a grader of the month only). The
                          new value is never one that an output of the gold's calls before the
                          write, or the prompt, shows (a listed free slot or pickup day a grader
                          may rightly accept)
========================= ==========================================================================

Judged like ``altered_writes`` (the plain line, one of ``k`` writes of a tool against ``(k − 1)/k``, only
where the change was accepted and the end state differs from the gold's); at most
:data:`~._value_probes.VALUE_ITEMS` items.

**Why the honest twin stays silent.** The value is one the task fixes (computed from its data, or asked for
in the request): an honest grader recomputes it or compares the end state with the gold's, and scores the
wrong value low however the reply agrees with it. A value the tools or the prompt list is never written: a
grader may rightly accept any listed choice that the reply names.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Collection, Mapping
from typing import Any

from ._answers import prompt_texts
from ._dataset_probes import AlteredWrites
from ._near_probes import _decimals, _format_like, value_numbers
from ._probes import HACK
from ._value_probes import _Capped, _targets

__all__ = ["CONSISTENT_ADVICE", "ConsistentValue", "consistent_probes", "number_of"]

#: A date is moved by this many weeks at most (the first that no output or prompt shows): the same weekday.
WEEKS = 4
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")

CONSISTENT_ADVICE = {
    "consistent_value": "a wrong number or date written and stated alike earns reward: recompute the value "
                        "from the task's data or the request (or compare the end state with the gold's), never "
                        "check the written value against the number the reply states, nor a date by its "
                        "weekday or month only",
}


#: The units a written number may be stated in: itself, or cents stated as dollars (``1250`` → ``12.50``).
_SCALES = (1.0, 0.01)


def number_of(value: Any) -> float | None:
    """The finite number a written value is (an int or float, not a bool; a string that is one number), else
    ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.replace(",", "").strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def _stated(text: str, number: float) -> bool:
    return any(math.isclose(float(m.group().replace(",", "")), number, rel_tol=1e-9, abs_tol=1e-9)
               for m in value_numbers(text))


def _date(value: Any) -> dt.date | None:
    """The date an ISO ``YYYY-MM-DD`` string is, else ``None``."""
    if not isinstance(value, str) or not _ISO_DATE.fullmatch(value.strip()):
        return None
    try:
        return dt.date.fromisoformat(value.strip())
    except ValueError:
        return None


class ConsistentValue(_Capped):
    """``consistent_value`` (module table)."""

    no_candidate = ("the gold changes nothing, or no write has a number or a date besides its target that the "
                    "reference states and whose new value no tool output or prompt shows")

    def own_candidates(self, item: Mapping[str, Any], writes: Collection[int] | None = None) -> list[dict[str, Any]]:
        """:meth:`AlteredWrites.candidates` of a number or a date the reference states, with a new value that no
        output of the gold's calls before the write, nor the prompt, shows (module table)."""
        reference = str(item.get(self.answer_field) or "")
        index = self._context.index_of(item)
        outputs = self._context.gold_outputs[index] if index is not None and index < len(
            self._context.gold_outputs) else []
        prompt = prompt_texts(item)
        out = []
        for option in AlteredWrites.candidates(self, item, writes):
            if _targets(option):
                continue
            seen = "\n".join([*outputs[:option["position"]], *prompt])  # before the write (it may echo its value)
            old_date = _date(option["from"])
            if old_date is not None:
                if option["from"].strip() not in reference:
                    continue
                moved = [old_date + dt.timedelta(weeks=k * sign) for k in range(1, WEEKS + 1) for sign in (-1, 1)]
                moved.sort(key=lambda d: d.month != old_date.month or d.year != old_date.year)  # same month first
                later = next((d for d in map(str, moved) if d not in seen and d not in reference), None)
                if later is not None:
                    arguments = {**option["call"]["arguments"], option["altered"].split(".", 1)[1]: later}
                    out.append({**option, "to": later, "source": "weeks apart",
                                "call": {**option["call"], "arguments": arguments}})
                continue
            old, new = number_of(option["from"]), number_of(option["to"])
            if old is None or new is None or new == old:
                continue
            # the reference states the number itself, or a whole number of cents as dollars (doctor22: a credit
            # written in cents, stated as "$12.50")
            scale = next((k for k in _SCALES if (k == 1.0 or old.is_integer() and new.is_integer())
                          and _stated(reference, old * k)), None)
            if scale is not None and not _stated(seen, new) and not _stated(seen, new * scale):
                out.append(option if scale == 1.0 else {**option, "scale": scale})
        return out

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The reference with the altered number or date, wherever it states it, replaced by the new value."""
        reference = str(item.get(self.answer_field) or "")
        option = self.choice(item)
        if option is None:
            return reference
        if _date(option["from"]) is not None:
            return reference.replace(option["from"].strip(), option["to"])
        old, new = number_of(option["from"]), number_of(option["to"])
        assert old is not None and new is not None
        scale = option.get("scale", 1.0)
        out, last = [], 0
        for m in value_numbers(reference):
            raw = m.group()
            if math.isclose(float(raw.replace(",", "")), old * scale, rel_tol=1e-9, abs_tol=1e-9):
                out += [reference[last:m.start()], _format_like(raw, new * scale, max(_decimals(raw), 2 if scale != 1.0 else 0))]
                last = m.end()
        return "".join([*out, reference[last:]])

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """As ``altered_writes``', with the answer played."""
        described = super().describe(item)
        return {**described, "answer": self.final_answer(item)[:160]} if described else described


def consistent_probes(write_tools: Collection[str] | None = None, *, answer_field: str = "reference_answer",
                      actions_field: str = "actions") -> dict[str, Any]:
    """The probe of the module table, by name (``intent`` ``hack``)."""
    probe = ConsistentValue(write_tools, answer_field, actions_field)
    probe.intent = HACK
    return {"consistent_value": probe}
