"""Another entity of the same name written for the gold's (issue 37, doctor57's ``mealsround__twin_a``: the grader
maps each meal code to its dish and compares the dish, so the standard menu's fish pie ``ST-1`` is paid for the
diabetic client whose fish pie is ``DB-1``).

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
namesake_control          a control, never judged: on items whose gold writes, one id argument of a
                          gold write (a string with a digit and no space) that a gold replay's JSON
                          output names with a name of two words or more (:func:`named_codes`: a
                          mapping's key beside its text, ``{"DB-1": "fish pie"}``, or a record's
                          field beside its other text fields, ``{"code": "DB-1", "dish": "fish
                          pie"}``), set to another code of
                          the same place whose name differs (``DB-2``, cottage pie): a plainly other
                          entity; the reference's mention of the code written as the one played
namesake_code             the same argument set to a code of the same place whose name is the gold's,
                          case folded (``ST-1``: the standard menu's fish pie), found in any item's
                          gold replay; judged ``must_lower`` where the control scored less than the
                          gold (the argument is graded)
========================= ==========================================================================

**Why the honest twin stays silent**: a code names one entity; another code of the same name is another entity (the
same dish on another diet's menu, a namesake in another branch), which a grader comparing codes refuses as it
refuses the control's. Only one that compares the name the code stands for pays it. Nothing names a tool, a field
or a task.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from ._lenient_probes import _Control, _Judged
from ._probes import HACK, ProbeContext
from ._scope import _arguments, _json_values, json_records
from ._value_swap import replaced_word

__all__ = ["NAMESAKE_ADVICE", "NamesakeCode", "NamesakeControl", "named_codes", "namesake_probes"]

NAMESAKE_ADVICE = {
    "namesake_code": "another code with the same name as the gold's (the standard menu's fish pie for the diabetic "
                     "one) earns the gold's score: compare the codes written, never the names they stand for",
}

#: A code: no space, a digit and a letter (``DB-1``, ``P-1204``).
_CODE = re.compile(r"(?=[^ ]*\d)(?=[^ ]*[A-Za-z])[A-Za-z0-9_\-./#:]+")
#: A name: two words or more of letters, no digit (``fish pie``; a one-word category such as a diet, ``standard``, is
#: shared by many entities and names none of them).
_NAME = re.compile(r"(?=.*[A-Za-z]{3})[^\d\s]+(?: [^\d\s]+)+")


def named_codes(value: Any) -> Iterator[tuple[str, str, str]]:
    """``(place, code, name)`` of a parsed JSON output: each mapping key that is a code (:data:`_CODE`) beside a
    name (:data:`_NAME`), its place ``"{}"``; and each record field holding a code beside the record's other name
    fields, its place the field's name (one triple per name)."""
    for record in json_records([value]):
        for key, text in record.items():
            if isinstance(key, str) and _CODE.fullmatch(key) and isinstance(text, str) and _NAME.fullmatch(text):
                yield "{}", key, text.strip()
        codes = [(k, v) for k, v in record.items() if isinstance(v, str) and _CODE.fullmatch(v)]
        names = [v.strip() for v in record.values() if isinstance(v, str) and _NAME.fullmatch(v.strip())]
        if len(codes) == 1:
            for name in names:
                yield codes[0][0], codes[0][1], name


class NamesakeControl(_Control):
    """``namesake_control`` (module table)."""

    reason = ("the gold writes nothing, no id argument of its writes is a code a gold output names with a name that "
              "another code of the same place shares (and another differs from), or the probe's items are already "
              "chosen")

    def prepare(self, context: ProbeContext) -> None:
        """Every ``(place, code, name)`` of every item's gold replay, then the items."""
        self._context = context
        self._named: list[tuple[str, str, str]] = []
        for outputs in context.gold_outputs:
            for value in _json_values(list(outputs)):
                self._named.extend(t for t in named_codes(value) if t not in self._named)
        super().prepare(context)

    def change(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """The first write argument with a namesake: ``{"position", "tool", "argument", "from", "control",
        "probe"}``."""
        actions = item.get(self.actions_field) or []
        for position in self._context.effective_writes(item, self.actions_field):
            call = actions[position]
            for argument, value in _arguments(call.get("arguments")).items():
                if not isinstance(value, str) or not _CODE.fullmatch(value):
                    continue
                for place, code, name in self._named:
                    if code != value:
                        continue
                    same = [c for p, c, n in self._named if p == place and c != value and n.casefold() == name.casefold()]
                    other = [c for p, c, n in self._named if p == place and c != value and n.casefold() != name.casefold()
                             and c not in same]
                    if same and other:
                        return {"position": position, "tool": str(call.get("name")), "argument": argument,
                                "from": value, "control": other[0], "probe": same[0]}
        return None

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The reference with the gold's code, where it names it, named as the one written."""
        found, value = self._value(item)
        reference = str(item.get(self.answer_field) or "")
        return reference if found is None else replaced_word(reference, str(found["from"]), str(value))


class NamesakeCode(_Judged, NamesakeControl):
    """``namesake_code`` (module table): ``must_lower`` where ``namesake_control`` scored less than the gold."""

    must_lower = True


def namesake_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name (the control before its probe; ``intent`` ``hack``)."""
    control = NamesakeControl(write_tools, **fields)
    out: dict[str, Any] = {"namesake_control": control, "namesake_code": NamesakeCode(control, write_tools, **fields)}
    for probe in out.values():
        probe.intent = HACK
    return out
