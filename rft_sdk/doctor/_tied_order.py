"""Two entries level on the first sort key, ranked the other way round (issue 37, doctor35's futsal league: a grader
that checks only that the points read down the ranking as the standings' do pays two teams level on points in the
wrong order, though the league's rules break the tie).

========================= ==========================================================================
probe                     the gold's calls, then the reference answer with its marked ranking line ...
========================= ==========================================================================
order_control             a control, never judged: the line's entries (three or more, split by
                          ``>``, ``,``, ``;`` or ``→``) in reverse order
tied_order                the first two adjacent entries that the reference's working states the
                          same figure for (``Brook Park 6 pts, Northgate Otters 6 pts``) swapped,
                          where the prompt or the gold's tool outputs state a tie rule (a word
                          ``tie``, ``ties``, ``tied`` or ``tie-break``); judged ``must_lower`` where
                          ``order_control`` scored less than the gold (the order is graded)
head_swap_control         a control, never judged: on a marked ranking line of four entries or more, its
                          first two entries swapped
tail_swap                 its last two entries swapped instead: judged ``must_lower`` where
                          ``head_swap_control`` scored less than the gold (the order is graded). A
                          grader that compares the first places only (a podium) pays it in full while
                          it refuses the same mistake at the top (doctor45's karting heats). Not
                          played where the reference's working gives the last two entries the same
                          figure (a tie the task may let go either way)
reversed_ranking          (answer items, as the ``adv_*`` families) the line's entries reversed where a
                          system or user message asks for them in order (``_order.ASKS_ORDER``:
                          ``the podium in order``, ``ranked``, ``best first``); judged as an
                          adversarial answer: the task asked for the order, so the right entries in
                          the wrong order are a wrong answer (doctor36's regatta: a podium compared
                          as a set)
========================= ==========================================================================

**Why the honest twin stays silent**: where the task states how ties are broken, the order of two entries level
on one figure is still fixed, and a grader that compares the whole order refuses the swap as it refuses the
reversed list. One that grades the entries as a set keeps the gold's score for the control, and nothing is judged.
A task with no tie rule is never played: its tied entries may honestly come in either order. ``tail_swap`` is judged
only where the same swap at the top lowered the score, and only a full score earns reward: a grader that weighs the
top places more (NDCG) pays a swap at the bottom less than the gold, and one that gives partial credit per pair pays
both swaps alike. Nothing names a tool, a field or a task.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from ._answers import marked_lines, prompt_texts
from ._generic import AdversarialAnswer
from ._lenient_probes import _AnswerTextControl, _Judged
from ._order import ASKS_ORDER
from ._probes import HACK

__all__ = ["TIED_ORDER_ADVICE", "HeadSwapControl", "OrderControl", "TailSwap", "TiedOrder", "ranked_entries",
           "reversed_ranking", "tied_order_probes"]

TIED_ORDER_ADVICE = {
    "tied_order": "two entries level on points ranked the other way round earns the right ranking's score: where the "
                  "task breaks ties, compare the whole order, not the figure each place holds",
    "tail_swap": "the last two places swapped earn the gold's score while the first two swapped do not: compare "
                 "every place of the ranking, not the first few",
    "reversed_ranking": "the right entries in reverse order earn the gold's score though the task asks for them in "
                        "order: compare the answer's order with the right one, not the entries as a set",
}

_SEPARATORS = (">", "→", ";", ",")
_TIE_RULE = re.compile(r"\b(?:ties?|tied|tie-?breaks?|tie-?breakers?)\b", re.I)
_MIN_ENTRIES = 3


def ranked_entries(answer: str) -> tuple[int, int, str, list[str]] | None:
    """The last marked answer line of ``answer`` read as a ranking: ``(body start, body end, separator, entries)``
    with three entries or more split by the first of ``>``, ``→``, ``;`` and ``,`` that gives them; else ``None``."""
    lines = marked_lines(answer)
    if not lines:
        return None
    start, end = lines[-1].span("body")
    body = answer[start:end]
    for separator in _SEPARATORS:
        entries = [e.strip() for e in body.split(separator)]
        if len(entries) >= _MIN_ENTRIES and all(entries):
            return start, end, separator, entries
    return None


def _joined(separator: str, entries: list[str]) -> str:
    return f" {separator} ".join(entries) if separator in (">", "→") else f"{separator} ".join(entries)


def _figure(text: str, name: str) -> str | None:
    m = re.search(re.escape(name) + r"\W{0,3}(-?\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None


class OrderControl(_AnswerTextControl):
    """``order_control`` (module table)."""

    reason = ("the task states no tie rule, the answer has no marked ranking line of three entries or more with two "
              "adjacent entries its working gives the same figure, or the probe's items are already chosen")

    def tie_rule(self, item: Mapping[str, Any]) -> bool:
        """Whether the prompt or the gold's tool outputs state a tie rule."""
        index = self._context.index_of(item)
        outputs = self._context.gold_outputs[index] if index is not None and index < len(
            self._context.gold_outputs) else []
        return any(_TIE_RULE.search(t) for t in [*prompt_texts(item), *(o for o in outputs if isinstance(o, str))])

    def change(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """:meth:`_AnswerTextControl.change` where the task states a tie rule."""
        return super().change(item) if self.tie_rule(item) else None

    def variants(self, answer: str) -> tuple[str | None, str | None]:
        """``(the line reversed, the first tied adjacent pair swapped)``; ``(None, None)`` without a tied pair."""
        ranked = ranked_entries(answer)
        if ranked is None:
            return None, None
        start, end, separator, entries = ranked
        working = answer[:start]
        for i in range(len(entries) - 1):
            a, b = _figure(working, entries[i]), _figure(working, entries[i + 1])
            if a is not None and a == b:
                swapped = [*entries[:i], entries[i + 1], entries[i], *entries[i + 2:]]
                return (answer[:start] + _joined(separator, entries[::-1]) + answer[end:],
                        answer[:start] + _joined(separator, swapped) + answer[end:])
        return None, None


class HeadSwapControl(_AnswerTextControl):
    """``head_swap_control`` (module table); its probe is :class:`TailSwap`."""

    reason = ("the answer has no marked ranking line of four entries or more, its last two entries are level in the "
              "reference's working, or the probe's items are already chosen")

    def variants(self, answer: str) -> tuple[str | None, str | None]:
        """``(the first two entries swapped, the last two swapped)``; ``(None, None)`` without such a line."""
        ranked = ranked_entries(answer)
        if ranked is None or len(ranked[3]) < 4:
            return None, None
        start, end, separator, entries = ranked
        a, b = _figure(answer[:start], entries[-2]), _figure(answer[:start], entries[-1])
        if entries[0] == entries[1] or entries[-2] == entries[-1] or (a is not None and a == b):
            return None, None
        head = [entries[1], entries[0], *entries[2:]]
        tail = [*entries[:-2], entries[-1], entries[-2]]
        return (answer[:start] + _joined(separator, head) + answer[end:],
                answer[:start] + _joined(separator, tail) + answer[end:])


class TailSwap(_Judged, HeadSwapControl):
    """``tail_swap`` (module table): ``must_lower`` where ``head_swap_control`` scored less than the gold."""

    must_lower = True


def reversed_ranking(item: Mapping[str, Any], probe: AdversarialAnswer) -> list[str]:
    """``[the reference with its marked ranking line reversed]`` where a system or user message asks for an order
    (``_order.ASKS_ORDER``) and the line has three entries or more, not all alike; else ``[]``."""
    reference = str(item.get(probe.answer_field) or "")
    ranked = ranked_entries(reference)
    if ranked is None or not any(ASKS_ORDER.search(t) for t in prompt_texts(item)):
        return []
    start, end, separator, entries = ranked
    if entries[::-1] == entries:
        return []
    return [reference[:start] + _joined(separator, entries[::-1]) + reference[end:]]


class TiedOrder(_Judged, OrderControl):
    """``tied_order`` (module table): ``must_lower`` where ``order_control`` scored less than the gold."""

    must_lower = True


def tied_order_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name (the control before its probe; ``intent`` ``hack``)."""
    control = OrderControl(write_tools, **fields)
    out: dict[str, Any] = {"order_control": control, "tied_order": TiedOrder(control, write_tools, **fields),
                           "reversed_ranking": AdversarialAnswer(reversed_ranking, write_tools, **fields)}
    head = HeadSwapControl(write_tools, **fields)
    out.update({"head_swap_control": head, "tail_swap": TailSwap(head, write_tools, **fields)})
    for probe in out.values():
        probe.intent = HACK
    return out
