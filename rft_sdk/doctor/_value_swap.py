"""The frame of a probe that plays the gold with one value replaced everywhere: in every gold call where it is a
whole argument and in the reference answer (``neighbour_entity``, ``superseded_request``)."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from ._generic import _ContextProbe
from ._probes import HACK, Steps

__all__ = ["ValueSwap", "renamed_words", "replaced_word", "says"]


def says(text: str, value: str, ignore_case: bool = False) -> bool:
    """Whether ``text`` holds ``value`` whole (not inside a longer word or id: ``LC-1`` is not in ``LC-12``), in any
    case with ``ignore_case`` (``Saloon`` for ``saloon``)."""
    return re.search(r"(?<![\w-])" + re.escape(value) + r"(?![\w-])", text,
                     re.IGNORECASE if ignore_case else 0) is not None


def renamed_words(text: str, renames: Mapping[str, Any], ignore_case: bool = False) -> str:
    """``text`` with each whole occurrence (not inside a longer word or id) of a key of ``renames`` replaced by its
    value, in any case with ``ignore_case``; the longest key first where keys overlap."""
    if not renames:
        return text
    lookup = {k.lower() if ignore_case else k: str(v) for k, v in renames.items()}
    pattern = "|".join(re.escape(k) for k in sorted(renames, key=len, reverse=True))
    return re.sub(r"(?<![\w-])(?:" + pattern + r")(?![\w-])",
                  lambda m: lookup[m.group(0).lower() if ignore_case else m.group(0)], text,
                  flags=re.IGNORECASE if ignore_case else 0)


def replaced_word(text: str, value: str, new: str) -> str:
    """``text`` with every whole occurrence of ``value`` (not inside a longer word or id) replaced by ``new``."""
    return renamed_words(text, {value: new})


class ValueSwap(_ContextProbe):
    """A gold-plan probe judged ``must_lower`` where the end state differs from the gold's, on the first
    ``max_items`` items (in dataset order) where :meth:`swap` finds ``(value, new)``; ``described`` names the key
    of :meth:`describe`."""

    must_lower = True
    changes_end_state = True
    described = "swapped"

    def __init__(self, write_tools: Collection[str] | None, max_items: int, reason: str, **fields: Any) -> None:
        super().__init__(write_tools, reason=reason, **fields)
        self.intent = HACK
        self.max_items = max_items

    def swap(self, item: Mapping[str, Any]) -> tuple[str, str] | None:  # pragma: no cover - abstract
        """``(the gold's value, the one played)``, or ``None`` (not played on this item)."""
        raise NotImplementedError

    def applies(self, item: Mapping[str, Any]) -> bool:
        """One of the first :attr:`max_items` items with a swap (in dataset order)."""
        index = self._context.index_of(item)
        if index is None or not self._has_gold(item) or self.swap(item) is None:
            return False
        earlier = [i for i, other in enumerate(self._context.items[:index])
                   if self._has_gold(other) and self.swap(other) is not None]
        return len(earlier) < self.max_items

    def encoded(self, value: str, new: str) -> list[tuple[str, str]]:
        """``(form of value, same form of new)`` pairs, digit strings only (they are substituted as written), that
        longer arguments write inside them (a date in a session id: ``S-NG-0514-0900``); none here."""
        return []

    def _argument(self, v: Any, value: str, new: str) -> Any:
        if v == value:
            return new
        if isinstance(v, str) and v:
            for old_form, new_form in self.encoded(value, new):
                v = re.sub(r"(?<![0-9])" + re.escape(old_form) + r"(?![0-9])", re.escape(new_form), v)
        return v

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls, one per turn, the value replaced wherever it is a whole argument (and, in its
        :meth:`encoded` forms, inside a longer one)."""
        value, new = self.swap(item) or ("", "")
        return [[{**a, "arguments": {k: self._argument(v, value, new) for k, v in a["arguments"].items()}}
                 if isinstance(a.get("arguments"), Mapping) else dict(a)] for a in item[self.actions_field]]

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The reference answer with the value replaced, whole and in its :meth:`encoded` forms (the reply names
        the id the calls wrote: ``F-0512-B``, not the gold's ``F-0514-B``)."""
        answer = super().final_answer(item)
        value, new = self.swap(item) or ("", "")
        return self._argument(replaced_word(answer, value, new), value, new) if value else answer

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """``{described: "value -> new"}``."""
        swap = self.swap(item) if self.applies(item) else None
        return {self.described: f"{swap[0]} -> {swap[1]}"} if swap else {}
