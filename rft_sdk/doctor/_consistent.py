"""A wrong number written *and* stated (issue 37, doctor16's ``bowling__average_as_stated``): a grader that
checks the written value against the number the reply states (consistency) instead of recomputing it pays a
rollout that writes a wrong average and says the same wrong average. ``altered_writes`` changes the write
only, so its reply (the reference, stating the right number) contradicts the write and such a grader
scores it low.

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
consistent_value          one **number** argument of one gold write (never its target, the first
                          argument) that the reference states and that the model *computed*: it
                          appears in no output of the gold's calls before that write and nowhere
                          in the prompt
                          (an average, a total, a quote; never a slot, a count or an id read
                          from a listing, which the model may choose among equals); altered as
                          ``altered_writes`` alters it (another item's value, a sibling, a
                          mutation), and the reference with that number replaced by the same
                          new value, written with the reference's decimals
========================= ==========================================================================

Judged like ``altered_writes`` (the plain line, one of ``k`` writes of a tool against ``(k − 1)/k``, only
where the change was accepted and the end state differs from the gold's); at most
:data:`~._value_probes.VALUE_ITEMS` items.

**Why the honest twin stays silent.** The number is one the task computes from its data: an honest grader
recomputes it (or compares the end state with the gold's) and scores the wrong value low however the reply
agrees with it. A value the model picks from what the tools list (a free slot, a locker) is never played: a
grader may rightly accept any listed choice that the reply names.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Any

from ._answers import prompt_texts
from ._dataset_probes import AlteredWrites
from ._near_probes import _decimals, _format_like, value_numbers
from ._probes import HACK
from ._value_probes import _Capped, _targets

__all__ = ["CONSISTENT_ADVICE", "ConsistentValue", "consistent_probes", "number_of"]

CONSISTENT_ADVICE = {
    "consistent_value": "a wrong number written and stated alike earns reward: recompute the value from the "
                        "task's data (or compare the end state with the gold's), never check the written value "
                        "against the number the reply states",
}


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


class ConsistentValue(_Capped):
    """``consistent_value`` (module table)."""

    no_candidate = ("the gold changes nothing, or no write has a number besides its target that the reference "
                    "states and no tool output or prompt shows")

    def own_candidates(self, item: Mapping[str, Any], writes: Collection[int] | None = None) -> list[dict[str, Any]]:
        """:meth:`AlteredWrites.candidates` of a number the reference states and the model computed (module
        table), altered to another number."""
        reference = str(item.get(self.answer_field) or "")
        index = self._context.index_of(item)
        outputs = self._context.gold_outputs[index] if index is not None and index < len(
            self._context.gold_outputs) else []
        prompt = prompt_texts(item)
        out = []
        for option in AlteredWrites.candidates(self, item, writes):
            old, new = number_of(option["from"]), number_of(option["to"])
            if _targets(option) or old is None or new is None or new == old:
                continue
            seen = "\n".join([*outputs[:option["position"]], *prompt])  # before the write (it may echo its value)
            if _stated(reference, old) and not _stated(seen, old):
                out.append(option)
        return out

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The reference with the altered number, wherever it states it, replaced by the new value."""
        reference = str(item.get(self.answer_field) or "")
        option = self.choice(item)
        if option is None:
            return reference
        old, new = number_of(option["from"]), number_of(option["to"])
        assert old is not None and new is not None
        out, last = [], 0
        for m in value_numbers(reference):
            raw = m.group()
            if math.isclose(float(raw.replace(",", "")), old, rel_tol=1e-9, abs_tol=1e-9):
                out += [reference[last:m.start()], _format_like(raw, new, _decimals(raw))]
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
