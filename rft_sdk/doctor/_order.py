"""The gold's writes twice or in another order (issue 37: graders blind to duplicates, to the order of the
writes, or to a write the tools refused). Counterfactuals of the gold judged on the outcome.

Each item gets one **pivot**: one of the gold's writes that changed state in the gold replay
(:meth:`~._probes.ProbeContext.effective_writes`); with two or more, the second to the last in turn
(item ``i`` of the dataset takes write ``1 + i mod (n - 1)``), so that it has a write before it. Each
probe plays the first :data:`ORDER_ITEMS` items it is defined on (``reordered_writes``: two writes or
more); the control plays the items of both.

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
write_removal             a control, never judged: the gold without the pivot. Where the score does
                          not fall, the pivot is not part of the graded outcome (a note, a comment,
                          a log line): the two probes below do not judge that item
duplicated_write          the pivot played twice in a row (a second song queued); played only within
                          the item's declared budget (``max_tool_calls`` or ``--budget``); judged
                          when the gold calls the pivot's tool more than once with different
                          arguments (a tool that adds one element per call), the second call
                          succeeded, the server did not say it changed nothing, and the end-state
                          digest differs from the gold's
reordered_writes          the pivot moved before the gold's first write (payment before approval;
                          the second song queued first); judged when the end-state digest differs
                          from the gold's and either the pivot was **refused** in the new order
                          (the gold's outcome then lacks it) or every write it moved before is a
                          call of the **same tool** (a sequence of one action: a queue, a
                          playlist) *and* the task asks for an order (:data:`ASKS_ORDER` in the
                          item's user messages: "best first", "in order", "ranked"); never when
                          the new order of the writes is one of the item's ``alternatives``
========================= ==========================================================================

**Severity**: both probes are ``must_lower`` (``_severity``): the pivot is graded (the control) and the
end state differs from the gold's, so a correct grader's score falls by some amount; a grader that
pays the gold's score counts duplicates, ignores the order, or counts a refused write as done.

**Order only** (issue 37: a shortlist of three candidates, each added by one call, stored as a list and
graded as a set, was judged when the honest set grader paid the other order): the same tool's writes in
another order, all accepted, leave the same multiset of elements; only their order differs, which the
digest cannot tell apart from a changed outcome. Such a reorder is judged only where the item's user
messages ask for an order (:data:`ASKS_ORDER`); the gold's items show nothing else about it. What that
leaves out: a task that wants an order without saying so in those words, and a tool whose later call
overwrites an earlier one (the last status set wins), where another order is a different outcome.

**What the digest cannot tell** (the trade-off, ``docs/doctor.md``): the end-state digest changes with any
difference, relevant or not. Four restrictions keep irrelevant ones out: a pivot the grader does not
grade is never judged (two identical notes: ``write_removal``); a repeat is judged only for a tool the
gold calls several times with different arguments (a second payment that only an audit log records is
not; a single extra transfer is ``superset_end_state``'s question); two writes of *different* tools in
another order are judged only when the moved write was refused (a log's order, two valid orders of a
booking); an order listed among the item's ``alternatives`` is never judged. What stays: a tool the gold
calls several times whose graded effect is a *set* while the state also keeps a list or a log (tags added
twice or in another order, an audit log of every grant) is judged as if the order or the repeat
mattered; such a task should list the other order as an alternative, or its tools should not record a
repeat that changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ._answers import prompt_texts
from ._generic import _canonical, _ContextProbe
from ._probes import HACK, ProbeContext, Steps, declared_budget, is_write_tool

__all__ = ["ASKS_ORDER", "ORDER_ADVICE", "ORDER_ITEMS", "DuplicatedWrite", "ReorderedWrites", "WriteRemoval",
           "asks_order", "order_probes"]

#: At most this many items per probe of this module (one rollout each).
ORDER_ITEMS = 6

#: Words of a user message that ask for an order of the writes (``reordered_writes`` of one tool's calls).
ASKS_ORDER = re.compile(r"\b(?:(?:best|worst|highest|lowest|newest|oldest|most|least|\w+est)(?:\s+[\w-]+){0,2}\s+first|in (?:(?!(?:any|either|whatever|arbitrary|random|no)\b)\w+ )?order(?! to)|"
                        r"(?:ascending|descending|chronological|alphabetical|reverse)\w*|ranked|ranking|sorted|"
                        r"one after (?:the )?other|first\W+then|in sequence|in turn)\b", re.IGNORECASE)

ORDER_ADVICE = {
    "duplicated_write": "the gold's write played twice earns the gold's score: compare the end state with the "
                        "gold's as a sequence or multiset (a second song queued, a second refund is a change), "
                        "not as a set of distinct values",
    "reordered_writes": "the gold's writes in another order earn the gold's score: grade the order where the "
                        "task asks for one (a playlist in rating order), and only writes the tools accepted "
                        "(a payment refused before its approval is no payment): read the end state, not the "
                        "calls made",
}


def _key(call: Mapping[str, Any]) -> tuple[str, str]:
    return str(call.get("name")), _canonical(call.get("arguments") or {})


class _OrderProbe(_ContextProbe):
    """Shared: the items (gold writes, at most ``max_items``) and each item's pivot (module docstring)."""

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = ORDER_ITEMS,
                 removal: WriteRemoval | None = None, **kwargs: Any) -> None:
        super().__init__(write_tools, reason="the gold changes nothing, the change is not defined for its writes "
                         "(or passes the item's declared budget), or the probe's "
                         f"{max_items} items are already chosen", **kwargs)
        self.max_items, self.removal = max_items, removal
        self._chosen: dict[int, int] = {}

    #: Items need at least this many gold writes that changed state.
    min_writes = 1

    def select(self, min_writes: int) -> set[int]:
        """The first ``max_items`` items with at least ``min_writes`` gold writes that changed state."""
        out: list[int] = []
        for i, item in enumerate(self._context.items):
            if len(out) < self.max_items and self._has_gold(item) and len(self.writes_of(item)) >= min_writes:
                out.append(i)
        return set(out)

    def prepare(self, context: ProbeContext) -> None:
        """Choose the items (:meth:`select` with :attr:`min_writes`)."""
        super().prepare(context)
        self._chosen = dict.fromkeys(self.select(self.min_writes), 0)

    def pivot(self, item: Mapping[str, Any]) -> tuple[int, int | None] | None:
        """``(position of the pivot, position of the write before it or None)`` in the gold's calls; item
        number ``i`` of the dataset with ``n >= 2`` writes takes write ``1 + i mod (n - 1)``."""
        index = self._context.index_of(item)
        if index is None or index not in self._chosen:
            return None
        writes = self.writes_of(item)
        if not writes:
            return None
        if len(writes) == 1:
            return writes[0], None
        k = 1 + index % (len(writes) - 1)
        return writes[k], writes[k - 1]

    def variant(self, item: Mapping[str, Any]) -> list[dict[str, Any]] | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def applies(self, item: Mapping[str, Any]) -> bool:
        """One of the chosen items whose change is defined."""
        return self._has_gold(item) and self.variant(item) is not None

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The changed gold calls, one per turn."""
        return [[a] for a in self.variant(item) or []]

    def graded(self, item: Mapping[str, Any]) -> bool:
        """Whether leaving the pivot out lowered the score (``write_removal``)."""
        index = self._context.index_of(item)
        return self.removal is not None and index is not None and index in self.removal.lowered

    def valid_order(self, item: Mapping[str, Any]) -> bool:
        """Whether the variant's writes, in order, are those of one of the item's ``alternatives``."""
        played = [_key(c) for c in self.variant(item) or [] if is_write_tool(str(c.get("name")), self.write_tools)]
        for alt in item.get("alternatives") or []:
            calls = alt.get("actions") if isinstance(alt, Mapping) else None
            if isinstance(calls, list) and played == [_key(c) for c in calls if isinstance(c, Mapping)
                                                      and is_write_tool(str(c.get("name")), self.write_tools)]:
                return True
        return False

    def judged(self, item: Mapping[str, Any]) -> bool:
        """Only where the pivot is graded and the variant is not a listed alternative."""
        return self.graded(item) and not self.valid_order(item)

    not_judged_reason = ("not judged: leaving the write out did not lower the score (it is not graded: a note, a "
                         "log line), or the new order is one of the item's alternatives")

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """``{"write": "tool(arg=value, ...)", "before": ...}``: the pivot played (and the write it now precedes)."""
        where = self.pivot(item)
        if where is None:
            return {}
        actions = item[self.actions_field]

        def text(c: Mapping[str, Any]) -> str:
            return f"{c['name']}({', '.join(f'{k}={v!r}' for k, v in (c.get('arguments') or {}).items())})"[:160]
        out = {"write": text(actions[where[0]])}
        if where[1] is not None and isinstance(self, ReorderedWrites):
            out["before"] = text(actions[self.writes_of(item)[0]])
        return out


class WriteRemoval(_OrderProbe):
    """``write_removal`` (module table): the gold without its pivot. :attr:`lowered` holds the items where
    that lowered the score."""

    control = True

    def __init__(self, write_tools: Collection[str] | None = None, **kwargs: Any) -> None:
        super().__init__(write_tools, **kwargs)
        self.lowered: set[int] = set()

    def prepare(self, context: ProbeContext) -> None:
        """The items of both probes: those ``duplicated_write`` plays and those ``reordered_writes`` plays."""
        _ContextProbe.prepare(self, context)
        self._chosen = dict.fromkeys(self.select(DuplicatedWrite.min_writes) | self.select(ReorderedWrites.min_writes),
                                     0)

    def variant(self, item: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        """The gold's calls without the pivot."""
        where = self.pivot(item)
        if where is None:
            return None
        return [a for k, a in enumerate(item[self.actions_field]) if k != where[0]]

    def record(self, context: ProbeContext, scores: Mapping[int, float], gold: Mapping[int, float | None]) -> None:
        """Keep the items whose score fell below the gold's."""
        self.lowered = {i for i, s in scores.items() if gold.get(i) is not None and s < float(gold[i] or 0.0) - 1e-6}


class DuplicatedWrite(_OrderProbe):
    """``duplicated_write`` (module table)."""

    must_lower = True
    changes_end_state = True

    def variant(self, item: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        """The gold's calls with the pivot twice in a row; ``None`` past the item's declared budget."""
        where = self.pivot(item)
        actions = list(item[self.actions_field])
        budget = declared_budget(item, self._context.budget)
        if where is None or (budget is not None and len(actions) + 1 > budget):
            return None
        p = where[0]
        return [*actions[:p + 1], actions[p], *actions[p + 1:]]

    def judged(self, item: Mapping[str, Any]) -> bool:
        """As for every probe here, and only where the gold calls the pivot's tool more than once with
        different arguments (it adds one element per call: a song to a queue). A tool the gold calls once
        (a payment) may rightly ignore a repeat that only an audit log records, and the digest cannot tell
        that log from the outcome."""
        where = self.pivot(item)
        if where is None or not super().judged(item):
            return False
        name = item[self.actions_field][where[0]].get("name")
        return len({_key(item[self.actions_field][k]) for k in self.writes_of(item)
                    if item[self.actions_field][k].get("name") == name}) > 1

    not_judged_reason = ("not judged: leaving the write out did not lower the score (a note, a log line), the gold "
                         "calls its tool once (a repeat may only add a log line), or the order is an alternative")

    def counterfactual(self, item: Mapping[str, Any], calls: Sequence[Any]) -> bool:
        """Whether the second call succeeded and the server did not say it changed nothing."""
        where = self.pivot(item)
        if where is None or len(calls) <= where[0] + 1:
            return False
        second = calls[where[0] + 1]
        return bool(getattr(second, "ok", False)) and getattr(second, "changed", None) is not False


class ReorderedWrites(_OrderProbe):
    """``reordered_writes`` (module table)."""

    min_writes = 2

    must_lower = True
    changes_end_state = True

    def _front(self, item: Mapping[str, Any]) -> int:
        """Where the pivot goes: the position of the gold's first write that changed state."""
        return self.writes_of(item)[0]

    def variant(self, item: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        """The gold's calls with the pivot moved before the gold's first write; ``None`` with one write."""
        where = self.pivot(item)
        if where is None or where[1] is None:
            return None
        p, q = where[0], self._front(item)
        actions = list(item[self.actions_field])
        rest = [a for k, a in enumerate(actions) if k != p]
        return [*rest[:q], actions[p], *rest[q:]]

    def counterfactual(self, item: Mapping[str, Any], calls: Sequence[Any]) -> bool:
        """Whether the new order can matter to the outcome: the pivot was refused (it succeeded in the gold
        replay), or every write it moved before is a call of the same tool and the task asks for an order
        (:data:`ASKS_ORDER`; module docstring, *order only*)."""
        where = self.pivot(item)
        if where is None or where[1] is None:
            return False
        actions = item[self.actions_field]
        pivot, q = actions[where[0]], self._front(item)
        played = calls[q] if len(calls) > q else None
        if played is not None and getattr(played, "name", None) == pivot.get("name") \
                and not getattr(played, "ok", True):
            return True
        jumped = [actions[k] for k in self.writes_of(item) if q <= k < where[0]]
        return all(a.get("name") == pivot.get("name") for a in jumped) and asks_order(item)


def asks_order(item: Mapping[str, Any]) -> bool:
    """Whether one of the item's user messages asks for an order (:data:`ASKS_ORDER`)."""
    return any(ASKS_ORDER.search(t) for t in prompt_texts(item, ("user",)))


def order_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name (the control first; each ``intent`` ``hack``)."""
    removal = WriteRemoval(write_tools, **fields)
    out: dict[str, Any] = {"write_removal": removal,
                           "duplicated_write": DuplicatedWrite(write_tools, removal=removal, **fields),
                           "reordered_writes": ReorderedWrites(write_tools, removal=removal, **fields)}
    for probe in out.values():
        probe.intent = HACK
    return out
