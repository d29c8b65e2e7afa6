"""The request a later user turn corrected, done as first asked (issue 37, doctor35's chimney sweep and doctor33's
ground station: a grader that recomputes the expected outcome for every request it finds in the user's messages, the
superseded first turn included, pays a policy that ignores the correction).

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
superseded_request        on items whose gold writes and whose conversation has two user turns or
                          more: a value of a gold call that the last user turn states and no earlier
                          one does (``2026-04-15``) replaced, in every gold call and in the reference
                          answer, by a value of the same kind that an earlier user turn states and
                          the last does not, or names only to withdraw it (``not FH21 NKD``,
                          ``instead of 10:30``: :func:`_withdrawn`) (``2026-04-13``: the day the customer
                          corrected). Kinds: ISO dates, times of day, ids with a trailing number, codes
                          of two capital groups the first with a digit (a plate ``FH21 NKB``: doctor40's
                          permits), IPv4 addresses, e-mail addresses, host names, members of the argument's enum; a date or time is also
                          swapped where a longer argument writes it compactly (``0514`` in the
                          session id ``S-NG-0514-0900``: doctor43's donor clinic), and found there
                          where no gold argument is the date whole (``0609`` in ``TEM-0609-1430``:
                          doctor46's theatre; ``I can't do 2026-06-08`` withdraws a date). Judged
                          ``must_lower`` where the end state differs from the gold's. With one user turn, the same swap inside it: the text after a
                          correction word (:data:`CORRECTION`: ``- no, make that 14:00``, ``sorry,
                          typo:``, ``wait, I mean``, ``actually``) stands for the last turn and the
                          text before it for the earlier ones (doctor36's drone permits: a grader
                          accepting any time the message names)
superseded_count          the same for a count: an integer argument of a gold write that the last
                          user turn states before a noun (``make that 2 tyres``) and an earlier turn
                          states as another number before the same noun (``4 tyres``), swapped; the
                          write's other non-integer numbers (a quoted total) scaled by the two counts'
                          ratio, as is that amount in the reference answer (doctor44's tyre shop: a
                          grader that accepts any quantity the conversation names and recomputes the
                          total for it). Judged ``must_lower`` where the end state differs from the
                          gold's
superseded_left           the writes of ``superseded_request``'s plan (the request as first asked),
                          then the gold's calls and its reference answer: the superseded request done
                          and left standing beside the corrected one (doctor54's karaoke bar: a grader
                          reading only the last booking pays a first-turn hold never cancelled). Played
                          only where the extra writes stay within the item's declared budget; judged
                          ``must_lower`` where the end state differs from the gold's (a write of the
                          corrected value that overwrites the first leaves the gold's, and nothing is
                          judged)
========================= ==========================================================================

**Why the honest twin stays silent**: the last user turn is the request; the end state of the superseded one is
another outcome, and a grader that grades the end state against the corrected request scores it low. Where both
requests lead to the same end state, nothing is judged. Items whose gold writes nothing are never played: a reply
about the old request may be right by accident and an answer-only grader rightly reads only the answer. The
probe keeps the gold's other choices (a slot's time), so on some items the superseded request's right outcome is
not reached and its rollout is only a wrong one; the items where it is reached are the ones that tell. Nothing
names a tool, a field or a task.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from ._answers import prompt_texts
from ._dataset_probes import id_shape
from ._generic import schema_enum
from ._probes import Steps, declared_budget
from ._value_swap import ValueSwap, says

__all__ = ["CORRECTION", "SUPERSEDED_ADVICE", "SUPERSEDED_ITEMS", "SupersededCount", "SupersededLeft",
           "SupersededRequest", "superseded_probes"]

SUPERSEDED_ADVICE = {
    "superseded_request": "the request of a user turn that a later turn corrected, done as first asked, earns the "
                          "gold's score: grade against the last user turn's request only, never any request found "
                          "in the conversation",
    "superseded_left": "the request of a user turn that a later turn corrected, done as first asked and left "
                       "standing beside the corrected one, earns the gold's score: grade the whole end state (every "
                       "booking, every order), not only the last write",
    "superseded_count": "the count of a user turn that a later turn corrected (4 tyres, then 2), ordered and "
                        "priced as first asked, earns the gold's score: grade against the last user turn's request "
                        "only, never any quantity found in the conversation",
}

#: ``superseded_request`` plays at most this many items.
SUPERSEDED_ITEMS = 8
#: The kinds of value a correction swaps, each a whole token of a user turn.
_KINDS = {
    "date": re.compile(r"(?<![\d-])\d{4}-\d{2}-\d{2}(?![\d-])"),
    "time": re.compile(r"(?<![\d:])(?:[01]\d|2[0-3]):[0-5]\d(?![\d:])"),
    "id": re.compile(r"(?<![\w-])[A-Za-z]+[A-Za-z0-9_\-]*?-?\d+(?![\w-])"),
    # a code of two capital groups, the first with a digit: a registration plate ``FH21 NKB`` (doctor40's permits)
    "code": re.compile(r"(?<![\w-])(?=[A-Z]*\d)[A-Z0-9]{2,5} [A-Z0-9]{2,5}(?![\w-])"),
    # an IPv4 address, a host name, an e-mail address (doctor58's tester: a DNS change whose address is corrected);
    # a sentence's full stop after one is no part of it
    "ip": re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\d|\.\d)"),
    "email": re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-]|\.\w)"),
    "host": re.compile(r"(?<![\w.@-])(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,}(?![\w@-]|\.\w)"),
}


def _withdrawn(text: str, value: str) -> bool:
    """Whether ``text`` names ``value`` only to withdraw it: ``not FH21 NKD``, ``instead of 10:30``, ``rather than``,
    ``I can't do 2026-06-08`` (doctor46's theatre)."""
    return re.search(r"(?:\b(?:not|instead of|rather than|no longer)|\b(?:can't|cannot|can not|won't) (?:do|make))"
                     r"\s+(?:the\s+|on\s+)?" + re.escape(value), text.replace("\u2019", "'"), re.IGNORECASE) is not None


#: A correction inside one user message: the text after it replaces a value of the text before it (a plain "no" only
#: with a comma or dash after it: "- no, make that", never "no power needed").
CORRECTION = re.compile(r"(?:\bno\s*[,;:\u2013\u2014-]|\bsorry\b|\bwait\b|\bactually\b|\bcorrection\b|\bhold on\b|\bscratch\b|"
                        r"\bI mean(?:t)?\b|\btypo\b|\bmake (?:that|it)\b|\binstead\b|\bchange (?:that|it|the)\b)",
                        re.IGNORECASE)


def _corrected_parts(text: str) -> list[tuple[str, str]]:
    """``(before, after)`` at each correction word of ``text`` (:data:`CORRECTION`), the last first."""
    return [(text[:m.start()], text[m.start():]) for m in reversed(list(CORRECTION.finditer(text)))]


def _user_turns(item: Mapping[str, Any]) -> list[str]:
    return prompt_texts(item, ("user",))


def _states(text: str, member: str) -> bool:
    """Whether ``text`` states an enum ``member`` whole (:func:`says`); a one-letter member ``A`` or ``I`` is not
    stated by the article starting a sentence ("A tee in size M") nor by the pronoun ("I need ...")."""
    if member not in ("A", "I"):
        return says(text, member)
    for m in re.finditer(r"(?<![\w-])" + member + r"(?![\w-])", text):
        before = text[:m.start()].rstrip()
        if member == "A" and (not before or before[-1] in ".!?:"):
            continue
        if member == "I" and re.match(r"\s+[a-z']", text[m.end():]):
            continue
        return True
    return False


def _passed(item: Mapping[str, Any], actions_field: str) -> set[str]:
    """Every string argument value of the item's gold calls."""
    return {v for call in item.get(actions_field) or [] if isinstance(call, Mapping)
            and isinstance(call.get("arguments"), Mapping) for v in call["arguments"].values() if isinstance(v, str)}


class SupersededRequest(ValueSwap):
    """``superseded_request`` (module table)."""

    described = "superseded"

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = SUPERSEDED_ITEMS,
                 **fields: Any) -> None:
        super().__init__(write_tools, max_items, "the gold writes nothing, or no value of the gold's calls was "
                         "corrected by the last user turn (or, in one user turn, after a correction word)", **fields)

    def swap(self, item: Mapping[str, Any]) -> tuple[str, str] | None:
        """``(the last turn's value, the superseded one)`` of the module table, the first found in the gold's calls;
        ``None`` without one."""
        turns = _user_turns(item)
        if not turns or not self.writes_of(item):
            return None
        if len(turns) >= 2:
            return self._swap_in(item, turns[-1], "\n".join(turns[:-1]))
        for before, after in _corrected_parts(turns[-1]):
            found = self._swap_in(item, after, before)
            if found is not None:
                return found
        return None

    def encoded(self, value: str, new: str) -> list[tuple[str, str]]:
        """A swapped date's or time's compact forms inside a longer argument, the longest first: ``20260514``
        and ``0514`` in ``S-NG-0514-0900`` (doctor43's donor clinic: the session id names its day), ``0900``
        for ``09:00``."""
        if _KINDS["date"].fullmatch(value) and _KINDS["date"].fullmatch(new):
            return [(value.replace("-", ""), new.replace("-", "")), (value[5:].replace("-", ""),
                                                                      new[5:].replace("-", ""))]
        if _KINDS["time"].fullmatch(value) and _KINDS["time"].fullmatch(new):
            return [(value.replace(":", ""), new.replace(":", ""))]
        return []

    def _swap_in(self, item: Mapping[str, Any], last: str, earlier: str) -> tuple[str, str] | None:
        """The swap of :meth:`swap` between the request as it stands (``last``) and what it corrected."""
        for call in item.get(self.actions_field) or []:
            arguments = call.get("arguments") if isinstance(call, Mapping) else None
            for arg, value in (arguments.items() if isinstance(arguments, Mapping) else ()):
                if not isinstance(value, str) or not says(last, value) or says(earlier, value):
                    continue
                enum = [str(v) for v in schema_enum(item, str(call.get("name")), arg)]
                if value in enum:
                    old = [v for v in enum if v != value and _states(earlier, v)
                           and (not _states(last, v) or _withdrawn(last, v))]
                else:
                    kind = next((p for p in _KINDS.values() if p.fullmatch(value)), None)
                    old = [] if kind is None else [v for v in dict.fromkeys(kind.findall(earlier))
                                                   if v != value and (not says(last, v) or _withdrawn(last, v))]
                    # a value the gold still passes was not corrected (the child ``C-5521`` beside the class
                    # ``SL-302`` it was first to move to: doctor78's lessons); one of the value's own shape first
                    passed = _passed(item, self.actions_field)
                    old = sorted((v for v in old if v not in passed), key=lambda v: id_shape(v) != id_shape(value))
                if old:
                    return value, old[0]
        return self._encoded_swap(item, last, earlier)

    def _encoded_swap(self, item: Mapping[str, Any], last: str, earlier: str) -> tuple[str, str] | None:
        """A date or time of the last turn that a gold argument writes only inside a longer one, in a form of
        :meth:`encoded` (``0609`` in ``TEM-0609-1430``: doctor46's theatre), and the one it corrected."""
        strings = [v for call in item.get(self.actions_field) or [] if isinstance(call, Mapping)
                   and isinstance(call.get("arguments"), Mapping) for v in call["arguments"].values()
                   if isinstance(v, str)]
        for kind in (_KINDS["date"], _KINDS["time"]):
            for value in dict.fromkeys(kind.findall(last)):
                if says(earlier, value) or not any(re.search(r"(?<![0-9])" + re.escape(form) + r"(?![0-9])", v)
                                                   for v in strings for form, _ in self.encoded(value, value)):
                    continue
                old = [v for v in dict.fromkeys(kind.findall(earlier))
                       if v != value and (not says(last, v) or _withdrawn(last, v))]
                if old:
                    return value, old[0]
        return None


class SupersededLeft(SupersededRequest):
    """``superseded_left`` (module table)."""

    described = "left standing"

    def _first_asked(self, item: Mapping[str, Any]) -> Steps:
        """The writes of :class:`SupersededRequest`'s plan that differ from the gold's (the request as first
        asked)."""
        gold = item[self.actions_field]
        writes = set(self.writes_of(item))
        return [step for k, step in enumerate(super().plan(item)) if k in writes and step[0] != gold[k]]

    def applies(self, item: Mapping[str, Any]) -> bool:
        """As ``superseded_request``, where the first-asked writes exist and keep the item within its declared
        budget."""
        if not super().applies(item):
            return False
        extra = self._first_asked(item)
        budget = declared_budget(item, self._context.budget)
        return bool(extra) and (budget is None or len(extra) + len(item[self.actions_field]) <= budget)

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The first-asked writes, then the gold's calls, one per turn."""
        return [*self._first_asked(item), *([dict(a)] for a in item[self.actions_field])]

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The reference answer as it is (it confirms the corrected request)."""
        return str(item.get(self.answer_field) or "")


#: A count stated before its noun (``2 tyres``, ``3 x bags``), captured: the number, then the noun.
_COUNT = re.compile(r"(?<![\d.,:/\-£$€])(\d{1,3})\s+(?:x\s+)?(?:new\s+|more\s+|of\s+them\s+)?([A-Za-z]{3,})")


def _counts(text: str) -> dict[str, list[int]]:
    """Per noun (case-folded, a plural ``s`` dropped), the counts ``text`` states before it, in order."""
    out: dict[str, list[int]] = {}
    for number, noun in _COUNT.findall(text):
        out.setdefault(noun.casefold().removesuffix("s"), []).append(int(number))
    return out


def _scaled(value: float, ratio: float) -> float:
    return round(value * ratio, 2)


class SupersededCount(ValueSwap):
    """``superseded_count`` (module table)."""

    described = "superseded"

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = SUPERSEDED_ITEMS,
                 **fields: Any) -> None:
        super().__init__(write_tools, max_items, "the gold writes nothing, or no integer argument of a gold write "
                         "is a count the last user turn states before a noun that an earlier turn gave another "
                         "count", **fields)

    def _found(self, item: Mapping[str, Any]) -> tuple[int, int, str] | None:
        """``(the write's position, the corrected count, the argument)`` with the superseded count in
        :meth:`swap`; ``None`` without one."""
        turns = _user_turns(item)
        if len(turns) < 2:
            return None
        last, earlier = _counts(turns[-1]), _counts("\n".join(turns[:-1]))
        actions = item.get(self.actions_field) or []
        for p in self.writes_of(item):
            arguments = actions[p].get("arguments") if isinstance(actions[p], Mapping) else None
            for arg, value in (arguments.items() if isinstance(arguments, Mapping) else ()):
                if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                    continue
                for noun, stated in last.items():
                    old = [n for n in earlier.get(noun, []) if n != value and n not in stated and n > 0]
                    if value in stated and old:
                        return p, old[0], arg
        return None

    def swap(self, item: Mapping[str, Any]) -> tuple[str, str] | None:
        """``(the last turn's count, the superseded one)`` as text; ``None`` without one."""
        found = self._found(item)
        if found is None:
            return None
        position, old, arg = found
        return str(item[self.actions_field][position]["arguments"][arg]), str(old)

    def _priced(self, item: Mapping[str, Any]) -> dict[float, float]:
        """The write's non-integer numbers and their values scaled by the two counts' ratio (a quoted total:
        ``176.16 → 352.32`` for 4 tyres instead of 2)."""
        found = self._found(item)
        if found is None:
            return {}
        position, old, arg = found
        arguments = item[self.actions_field][position]["arguments"]
        ratio = old / arguments[arg]
        return {v: _scaled(v, ratio) for v in arguments.values() if isinstance(v, float)}

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls with the write's count swapped and its other numbers scaled."""
        found = self._found(item)
        steps = [[dict(a)] for a in item[self.actions_field]]
        if found is None:
            return steps
        position, old, arg = found
        priced = self._priced(item)
        arguments = {k: old if k == arg else priced.get(v, v) if isinstance(v, float) else v
                     for k, v in item[self.actions_field][position]["arguments"].items()}
        steps[position] = [{**item[self.actions_field][position], "arguments": arguments}]
        return steps

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The reference answer with the count swapped before a word (``2 x``, ``2 tyres``) and the scaled
        amounts written as the reference writes money (two decimals, thousands separators kept out)."""
        answer = str(item.get(self.answer_field) or "")
        swap = self.swap(item)
        if swap is None:
            return answer
        value, new = swap
        answer = re.sub(r"(?<![\d.,:/\-£$€])" + re.escape(value) + r"(?=\s+(?:x\b|[A-Za-z]))", new, answer)
        for old_amount, new_amount in self._priced(item).items():
            answer = re.sub(r"(?<![\d.])" + re.escape(f"{old_amount:.2f}") + r"(?![\d])", f"{new_amount:.2f}",
                            answer)
        return answer


def superseded_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name."""
    return {"superseded_request": SupersededRequest(write_tools, **fields),
            "superseded_left": SupersededLeft(write_tools, **fields),
            "superseded_count": SupersededCount(write_tools, **fields)}
