"""Counterfactuals of one gold write's *arguments* (issue 37, an outside suite's misses: a grader that pays
when it crashes on a malformed value, one that compares the two accounts of a transfer as a set, one that
checks a delivered amount with ``>=``, and one that counts every successful call as a hit). Each probe
changes one thing of the gold and is judged on the outcome by the severity rule (``_severity``).

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
malformed_value           one string argument of one gold write (not its target, the first
                          argument) replaced by ``"anything"``, a value of another shape
                          (``"10.0.0.7"`` → ``"anything"``): a grader that parses the written
                          value and pays when the parse raises (fail-open) pays it. Only where the
                          gold value is one token (no whitespace: never a memo or a commit
                          message, text an honest grader may ignore) whose shape is not a plain
                          word (:func:`value_shape`), and judged only where the tool accepted it
                          and the end state changed
swapped_arguments         two one-token arguments of one gold write with the same
                          :func:`value_shape` and different values swapped (``source`` ↔ ``destination``): a grader that
                          compares the roles as a set pays it. Judged only where the end state
                          changed (a swap that leaves the state as it was is no counterfactual)
inflated_value            one numeric argument of one gold write (an int or float other than 0, or
                          a string holding one number; not the target) doubled: more than asked
                          (``amount=50`` → ``100``), which a grader that checks ``>=`` pays
negated_value             one numeric argument of one gold write (as above) with its sign flipped
                          (``amount_cents=1250`` → ``-1250``: a credit posted as a debit), which a
                          grader comparing ``abs()`` pays (doctor22's sign-blind credit grader).
                          Judged only where the tool accepted it and the end state changed
first_write_control       a control, never judged: the gold with only the *first* of the ``k >= 2``
                          writes of one tool (each with other arguments: three candidates added to
                          a shortlist); its score per item is the reference below
repeated_first_write      the same, with that first write played ``k`` times in a row (the tool
                          ignores or refuses the repeat); judged ``must_not_raise``: it earns reward
                          where it scores more than the control (a grader counting calls, not
                          distinct elements). Skipped where the gold itself repeats a call
========================= ==========================================================================

The first four alter the gold like ``altered_writes`` (the items share the arguments out; the same
severity: one of ``k`` writes of one tool changed is judged against ``(k - 1) / k``) and play at most
:data:`ARGUMENT_ITEMS` items each. What no correct grader pays: a value the task never asked for (a
malformed one, a doubled one) or the roles of two values exchanged; a repeat that the end state does not
show adds nothing to a correct grader's score.

What they can get wrong, and the guard: a tool whose two same-shaped arguments are symmetric (an
undirected edge, a pair of seats swapped) makes ``swapped_arguments`` fire on a correct grader that
normalises the order; the end-state digest cannot tell. List the swapped call among the item's
``alternatives`` (never played then) or waive the probe.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from typing import Any

from ._dataset_probes import AlteredWrites, _alternative_calls, _canonical_call, value_shape
from ._generic import _canonical, _ContextProbe, _free_text
from ._probes import HACK, ProbeContext, Steps, declared_budget
from ._value_probes import _Capped, _targets

__all__ = ["ARGUMENT_ADVICE", "ARGUMENT_ITEMS", "MALFORMED", "FirstWriteControl", "InflatedValue", "MalformedValue",
           "NegatedValue", "RepeatedFirstWrite", "SwappedArguments", "argument_probes", "doubled", "malformed",
           "negated"]

#: At most this many items per probe of this module (one rollout each).
ARGUMENT_ITEMS = 6
#: The malformed value written in place of a structured string (an address, a date, an amount).
MALFORMED = "anything"

ARGUMENT_ADVICE = {
    "malformed_value": "a malformed value written (an address that is no address) earns reward: a grader that "
                       "fails on unusual input must score 0, never pay (no 'except: return 1.0'); parse "
                       "strictly and compare with the gold",
    "swapped_arguments": "two arguments of a write swapped (source and destination) earn reward: compare each "
                         "role with the gold's (who paid, who received), not the set of values",
    "inflated_value": "twice the amount asked for earns reward: compare the written value with == (within a "
                      "tolerance), never >= ('at least' pays over-delivery)",
    "negated_value": "the amount written with the wrong sign (a credit posted as a debit) earns reward: compare the "
                     "signed value with the gold's, never abs()",
    "repeated_first_write": "one right write repeated k times earns more than the same write once: count distinct "
                            "elements of the end state (a set), never successful calls",
}

_NUMBER_TEXT = re.compile(r"-?\d+(?:\.(\d+))?")


def malformed(value: Any) -> Any:
    """:data:`MALFORMED` for a string that is one structured token (no whitespace inside; its
    :func:`value_shape` not plain words: ``"10.0.0.7"``, ``"2024-05-01"``, ``"a@b.org"``), else ``None``
    (text with spaces: a memo or a commit message an honest grader may ignore; a plain word; numbers,
    booleans, lists: a validator's type check refuses those)."""
    if not isinstance(value, str) or not value.strip() or value.strip() == MALFORMED or _spaced(value):
        return None
    return None if value_shape(value) == "str:a" else MALFORMED


def _spaced(value: Any) -> bool:
    """Whether ``value`` is a string with whitespace inside: text (a memo, a commit message ``"Merge
    feature/x"``) rather than one structured token (an address, a date, an id), which no probe here changes."""
    return isinstance(value, str) and len(value.split()) > 1


def doubled(value: Any) -> Any:
    """Twice a non-zero number: an int or float (same type), or a string that is one number (same
    decimals: ``"12.50"`` → ``"25.00"``); ``None`` otherwise (0, booleans, other text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value * 2 if value else None
    if isinstance(value, str) and (m := _NUMBER_TEXT.fullmatch(value.strip())) and float(value):
        decimals = len(m.group(1) or "")
        return f"{2 * float(value):.{decimals}f}"
    return None


def negated(value: Any) -> Any:
    """A non-zero number with its sign flipped: an int or float (same type), or a string that is one number
    (``"12.50"`` → ``"-12.50"``, ``"-3"`` → ``"3"``); ``None`` otherwise (0, booleans, other text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return -value if value else None
    if isinstance(value, str) and _NUMBER_TEXT.fullmatch(text := value.strip()) and float(text):
        return text[1:] if text.startswith("-") else "-" + text
    return None


class _OneArgument(_Capped):
    """A :class:`~._value_probes._Capped` alteration by ``change(value)``, never of the write's target or
    of free text."""

    max_items = ARGUMENT_ITEMS
    source = "changed"

    def __init__(self, change: Any, reason: str, write_tools: Collection[str] | None = None,
                 answer_field: str = "reference_answer", actions_field: str = "actions") -> None:
        super().__init__(write_tools, answer_field, actions_field)
        self._change, self._reason = change, reason

    def _new_value(self, tool: str, arg: str, value: Any, sources: list[Any], exclude: Collection[str],
                   arguments: Mapping[str, Any] | None = None) -> tuple[Any, str] | None:
        new = self._change(value)
        return None if new is None else (new, self.source)

    def own_candidates(self, item: Mapping[str, Any], writes: Collection[int] | None = None) -> list[dict[str, Any]]:
        """:meth:`AlteredWrites.candidates` that keep the write's target and alter no free text."""
        return [o for o in AlteredWrites.candidates(self, item, writes) if not _targets(o) and not _free_text(o["from"])]


class MalformedValue(_OneArgument):
    """``malformed_value`` (module table)."""

    source = "malformed"

    def __init__(self, write_tools: Collection[str] | None = None, **fields: Any) -> None:
        super().__init__(malformed, "the gold changes nothing, or no argument of its writes (besides the target) is "
                         "a structured string", write_tools, **fields)


class InflatedValue(_OneArgument):
    """``inflated_value`` (module table)."""

    source = "doubled"

    def __init__(self, write_tools: Collection[str] | None = None, **fields: Any) -> None:
        super().__init__(doubled, "the gold changes nothing, or no argument of its writes (besides the target) is "
                         "a non-zero number", write_tools, **fields)


class NegatedValue(_OneArgument):
    """``negated_value`` (module table)."""

    source = "negated"

    def __init__(self, write_tools: Collection[str] | None = None, **fields: Any) -> None:
        super().__init__(negated, "the gold changes nothing, no argument of its writes (besides the target) is a "
                         "non-zero number, or the tool refused it negated", write_tools, **fields)


class SwappedArguments(_Capped):
    """``swapped_arguments`` (module table)."""

    max_items = ARGUMENT_ITEMS

    no_candidate = "the gold changes nothing, or no write has two arguments of one shape with different values"

    def own_candidates(self, item: Mapping[str, Any], writes: Collection[int] | None = None) -> list[dict[str, Any]]:
        """Per gold write that changed state, per pair of its arguments (in order) with the same
        :func:`value_shape`, different values and neither text with spaces (a memo), the write with the two swapped
        (``{"position", "altered": "tool.a<->b", "from", "to", "source": "swap", "call"}``); never a swap
        that makes one of the item's listed ``alternatives``."""
        actions = list(item.get(self.actions_field) or [])
        if writes is None:
            writes = self._context.effective_writes(item, self.actions_field)
        valid = _alternative_calls(item)
        out: list[dict[str, Any]] = []
        for i in writes:
            call = actions[i] if i < len(actions) else None
            if not isinstance(call, Mapping) or not isinstance(call.get("arguments"), dict):
                continue
            arguments, name = call["arguments"], str(call["name"])
            names = [k for k, v in arguments.items() if not _free_text(v) and (name, k) not in self._prose
                     and isinstance(v, (str, int, float)) and not isinstance(v, bool) and not _spaced(v)]
            for x, a in enumerate(names):
                for b in names[x + 1:]:
                    va, vb = arguments[a], arguments[b]
                    if value_shape(va) != value_shape(vb) or _canonical(va) == _canonical(vb):
                        continue
                    swapped = {"name": name, "arguments": {**arguments, a: vb, b: va}}
                    if _canonical_call(swapped) in valid:
                        continue
                    out.append({"position": i, "altered": f"{name}.{a}<->{b}", "from": [va, vb], "to": [vb, va],
                                "source": "swap", "call": swapped})
        return out


def _pivot(item: Mapping[str, Any], writes: list[int], actions_field: str) -> tuple[int, list[int]] | None:
    """``(position of the first write of a tool the gold calls k >= 2 times with other arguments, the
    positions of that tool's other writes)``; ``None`` when there is none or the gold repeats a call."""
    actions = item[actions_field]
    keys = [json.dumps([a.get("name"), _canonical(a.get("arguments") or {})]) for a in actions if isinstance(a, Mapping)]
    if len(set(keys)) < len(keys):
        return None
    for p in writes:
        same = [q for q in writes if q != p and actions[q].get("name") == actions[p].get("name")]
        if same:
            return p, same
    return None


class FirstWriteControl(_ContextProbe):
    """``first_write_control`` (module table, ``control = True``); :attr:`scores` keeps its score per item."""

    control = True
    repeats = False

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = ARGUMENT_ITEMS,
                 **fields: Any) -> None:
        super().__init__(write_tools, reason="the gold calls no write tool twice with other arguments, repeats a "
                         "call itself, would pass its declared budget, or the probe's items are already chosen",
                         **fields)
        self.max_items = max_items
        self.items: set[int] = set()
        self.scores: dict[int, float] = {}

    def variant(self, item: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        """The gold's calls without the pivot tool's other writes; the pivot ``k`` times with :attr:`repeats`."""
        if not self._has_gold(item):
            return None
        found = _pivot(item, self.writes_of(item), self.actions_field)
        if found is None:
            return None
        p, others = found
        actions = item[self.actions_field]
        copies = 1 + len(others) if self.repeats else 1
        budget = declared_budget(item, self._context.budget)
        if budget is not None and len(actions) > budget:  # the repeated variant makes as many calls as the gold
            return None
        return [c for k, a in enumerate(actions) if k not in others for c in ([a] * copies if k == p else [a])]

    def prepare(self, context: ProbeContext) -> None:
        """Choose the first ``max_items`` items with a pivot (both the control's and the probe's variant)."""
        super().prepare(context)
        self.items = set()
        for i, item in enumerate(context.items):
            if len(self.items) < self.max_items and self.variant(item) is not None:
                self.items.add(i)

    def applies(self, item: Mapping[str, Any]) -> bool:
        """One of the chosen items."""
        return self._context.index_of(item) in self.items and self.variant(item) is not None

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The variant's calls, one per turn."""
        return [[a] for a in self.variant(item) or []]

    def record(self, context: ProbeContext, scores: Mapping[int, float], gold: Mapping[int, float | None]) -> None:
        """Remember each item's score."""
        self.scores = dict(scores)

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """``{"write": "tool(arg=value, ...)", "copies": k}``: the write played and how often."""
        found = _pivot(item, self.writes_of(item), self.actions_field) if self._has_gold(item) else None
        if found is None:
            return {}
        call = item[self.actions_field][found[0]]
        text = f"{call['name']}({', '.join(f'{k}={v!r}' for k, v in (call.get('arguments') or {}).items())})"
        return {"write": text[:160], "copies": 1 + len(found[1]) if self.repeats else 1}


class RepeatedFirstWrite(FirstWriteControl):
    """``repeated_first_write`` (module table)."""

    control = False
    repeats = True
    must_not_raise = True
    not_judged_reason = "not judged: the first-write control was not scored on this item"

    def __init__(self, reference: FirstWriteControl, write_tools: Collection[str] | None = None,
                 **fields: Any) -> None:
        super().__init__(write_tools, **fields)
        self.reference = reference

    def judged(self, item: Mapping[str, Any]) -> bool:
        """Only where the control was scored."""
        return self._context.index_of(item) in self.reference.scores

    def ceilings(self) -> dict[int, float]:
        """Per item, what the control scored: the most this probe may score (``_severity``)."""
        return dict(self.reference.scores)

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """As the control's, with the control's score."""
        index = self._context.index_of(item)
        return {**super().describe(item),
                "control_score": self.reference.scores.get(index) if index is not None else None}


def argument_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name (the control before its probe; each ``intent`` ``hack``)."""
    control = FirstWriteControl(write_tools, **fields)
    out: dict[str, Any] = {
        "malformed_value": MalformedValue(write_tools, **fields),
        "swapped_arguments": SwappedArguments(write_tools, **fields),
        "inflated_value": InflatedValue(write_tools, **fields),
        "negated_value": NegatedValue(write_tools, **fields),
        "first_write_control": control,
        "repeated_first_write": RepeatedFirstWrite(control, write_tools, **fields),
    }
    for probe in out.values():
        probe.intent = HACK
    return out
