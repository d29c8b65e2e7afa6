"""A text the prompt names, written from another record (issue 37, doctor64's ``postal_votes__twin_b``: the grader
forgives ``dispatch_address`` as "typed text", though the prompt says where the ballot pack goes, "to the dispatch
address on the application, exactly as written there": the elector's registered address from the register pays).

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
named_text_swap           on items whose gold writes: one **string** argument of a gold write (not its
                          first; 12+ characters; not boilerplate, not a note in lower-case phrases) that
                          the gold copies from the task's data (as ``text_control``) and whose **name**
                          the system or user message states word for word (``dispatch_address``:
                          "the dispatch address"), set to a text of the same kind that a gold read
                          before the write returned under another field of the same name's words
                          (the register's ``address``), else another item's value of the argument
                          with another first word; at most 4 items. ``must_lower``, judged where the
                          write was accepted and the end state differs
========================= ==========================================================================

Not a note: a note's argument is no phrase of the prompt, and a note the prompt asks for in lower-case words is
never played (``text_control``'s rule). **What it can get wrong**: a prompt naming a field the task does not grade
("the dispatch address may be left as the system shows it"): the probe then fails a grader that rightly ignores it.
Nothing names a tool, a field or a task: the argument's own name and the prompt decide.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from ._answers import prompt_texts
from ._lenient_probes import MIN_TEXT, TextControl, _norm
from ._probes import HACK
from ._scope import _json_values

__all__ = ["NAMED_TEXT_ADVICE", "NamedTextSwap", "named_text_probes"]

NAMED_TEXT_ADVICE = {
    "named_text_swap": "a text the prompt names (the dispatch address) written from another record keeps the "
                       "gold's score: the grader forgives that field as free text, though the task says what it "
                       "must hold. Compare it with the value the item's data gives (exactly, or as the task "
                       "states), and forgive only fields no instruction names",
}

_SPLIT = re.compile(r"[_\W]+")


def _name_words(name: str) -> list[str]:
    """The words of an argument's or field's name (``dispatch_address`` → ``dispatch``, ``address``), 3+ letters."""
    return [w for w in _SPLIT.split(re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()) if len(w) >= 3]


def _fields(value: Any) -> Iterator[tuple[str, str]]:
    """Every ``(key, string value)`` of a JSON value's objects, nested ones too."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            if isinstance(v, str):
                yield str(k), v
            else:
                yield from _fields(v)
    elif isinstance(value, list):
        for v in value:
            yield from _fields(v)


class NamedTextSwap(TextControl):
    """``named_text_swap`` (module table)."""

    control = False
    probe_side = True
    must_lower = True
    reason = ("the gold changes nothing, no write of it has a string argument (not its first) of 12+ characters "
              "copied from the data whose name the prompt states, or the probe's items are already chosen")

    def candidate(self, item: Mapping[str, Any], tool: str, arg: str, value: Any,
                  position: int) -> dict[str, Any] | None:
        """The argument (module table): ``{"control": None, "probe": the other record's text}``."""
        call = item[self.actions_field][position]
        if not isinstance(value, str) or len(value.strip()) < MIN_TEXT or next(iter(call["arguments"])) == arg \
                or (tool, arg) in self._boilerplate or (tool, arg) in self._notes:
            return None
        words = _name_words(arg)
        said = " ".join(prompt_texts(item, ("system", "user"))).lower()
        if not words or not all(re.search(rf"(?<![a-z]){re.escape(w)}", said) for w in words) \
                or not self._copied(item, value):
            return None
        index = self._context.index_of(item)
        outputs = list(self._context.gold_outputs[index][:position]) if index is not None and index < len(
            self._context.gold_outputs) else []
        mine, head = _norm(value), _norm(value)[:4]
        read = [v for k, v in _fields(_json_values(outputs)) if set(_name_words(k)) & set(words)
                and len(v.strip()) >= MIN_TEXT and _norm(v) != mine and _norm(v)[:4] != head]
        others = [v for v in self._values.get((tool, arg), []) if isinstance(v, str)
                  and len(v.strip()) >= MIN_TEXT and _norm(v)[:4] != head]
        swapped = read or others
        return {"control": None, "probe": swapped[0]} if swapped else None


def named_text_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probe of the module table, by name (``intent`` ``hack``)."""
    probe = NamedTextSwap(write_tools, **fields)
    probe.intent = HACK
    return {"named_text_swap": probe}
