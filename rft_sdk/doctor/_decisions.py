"""One decision flipped, the total restated (issue 37, doctor23's ``timesheets__consistent_total``): the task
decides each entity of a listing with one of two write tools (``approve_entry`` / ``reject_entry``) and states a
total over one decision (``ANSWER: 31.5``, the approved hours). A grader that checks only that every entity got
*a* decision and that the total agrees with the decisions made pays any set of decisions with its own total:
approve everything, sum it, and be paid. ``altered_writes`` changes a decision but leaves the gold's total,
which that grader then refuses.

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
flipped_decision          where the gold writes entities of one listing with two write tools whose
                          first argument is the entity (``approve_entry(entry_id)``,
                          ``reject_entry(entry_id, reason)``) and its reference states the **sum**
                          of a number field of the listed records over the entities of one of them
                          (the approved hours): one entity of the other tool decided with that
                          one instead (its other arguments copied from the gold's own call of
                          that tool), and every number of the reference that is such a sum
                          restated with that entity's field moved across (``31.5`` → ``39.5``),
                          and each count of one side that differs from the other's (``2
                          approved, 3 rejected`` → ``3 approved, 2 rejected``); the items take
                          the entities in turn. Judged ``must_lower`` where the call was accepted
swapped_writes            where the gold makes two writes of one tool on different entities (the
                          first argument whose values differ: the SKU of two checkouts of one
                          member) whose other arguments differ in a number or a plain word
                          (``approve``/``reject``, an award; never only in ids or free text): those
                          other arguments exchanged between the two entities (A-1031 rejected with
                          A-1032's reason, A-1032 approved with A-1031's award), the entities'
                          names exchanged in the reference too. Counts per decision, totals and the
                          set of values stay the gold's. Judged on the plain line, with the
                          ``(k - 2) / k`` of the tool's ``k`` writes left right as the honest share
                          (doctor26's ledger grader: counts and dollars reconciled, not who got what)
========================= ==========================================================================

**Why the honest twin stays silent**: the flipped entity's decision is wrong by the task's own gold, so a grader
that checks the decisions (or the end state against the gold's) scores it lower, whatever the total says; only a
grader that checks nothing but the total's agreement with the decisions keeps the gold's score. Played only
where the relationship holds on the gold itself (the reference's number is that sum or count), so a total that
is no such sum is never restated. Nothing names a tool, a field or a task.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ._answer_numbers import styled
from ._generic import _ContextProbe
from ._near_probes import value_numbers
from ._probes import HACK, ProbeContext, Steps
from ._scope import _json_values, json_records

__all__ = ["DECISION_ADVICE", "DECISION_ITEMS", "FlippedDecision", "SwappedWrites", "decision_probes"]

#: At most this many items.
DECISION_ITEMS = 6

DECISION_ADVICE = {
    "flipped_decision": "one entity decided the other way, with the total restated to agree, earns the gold's "
                        "score: check each decision against the rule (or the end state against the gold's), not "
                        "only that the total agrees with the decisions made",
    "swapped_writes": "two entities' decisions (or values) exchanged earn the gold's score: check what each "
                      "entity got, not only the counts, totals or set of values over all of them",
}


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def _key(value: Any) -> str:
    return f"{type(value).__name__}:{value}"


def _listing(records: list[Mapping[str, Any]], entities: list[Any]) -> dict[str, Mapping[str, Any]] | None:
    """Per entity (:func:`_key`), its one record: the records of a field that holds each entity exactly once
    (``{"id": 7, "hours": 8.5, ...}`` for entity ``7``); ``None`` when no field does."""
    if not entities or any(isinstance(e, (bool, list, dict)) or e is None for e in entities):
        return None
    for field in dict.fromkeys(k for r in records for k in r):
        found: dict[str, list[Mapping[str, Any]]] = {}
        for r in records:
            if field in r and not isinstance(r[field], (bool, list, dict)):
                found.setdefault(_key(r[field]), []).append(r)
        if all(len(found.get(_key(e), [])) == 1 for e in entities):
            return {_key(e): found[_key(e)][0] for e in entities}
    return None


class FlippedDecision(_ContextProbe):
    """``flipped_decision`` (module table)."""

    must_lower = True
    changes_end_state = True

    def __init__(self, write_tools: Collection[str] | None = None, **kwargs: Any) -> None:
        super().__init__(write_tools, reason="the gold does not decide entities of one listing with two write tools "
                         "and state a sum or count over one of them, or the probe's items are already chosen",
                         **kwargs)
        self._chosen: set[int] = set()

    def prepare(self, context: Any) -> None:
        """Choose the first :data:`DECISION_ITEMS` items with a flip."""
        super().prepare(context)
        self._chosen = set()
        for i, item in enumerate(context.items):
            if len(self._chosen) < DECISION_ITEMS and self._has_gold(item) and self.flip(item) is not None:
                self._chosen.add(i)

    def applies(self, item: Mapping[str, Any]) -> bool:
        """One of the chosen items."""
        return self._context.index_of(item) in self._chosen

    def flip(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """``{"position", "call" (the new call), "from" (the gold call), "answer"}`` or ``None``."""
        actions = item.get(self.actions_field) or []
        index = self._context.index_of(item)
        reference = item.get(self.answer_field)
        if index is None or not isinstance(reference, str) or index >= len(self._context.gold_outputs):
            return None
        by_tool: dict[str, list[int]] = {}
        for i in self.writes_of(item):
            call = actions[i] if i < len(actions) else None
            if isinstance(call, Mapping) and isinstance(call.get("arguments"), Mapping) and call["arguments"]:
                by_tool.setdefault(str(call["name"]), []).append(i)
        if len(by_tool) != 2:
            return None
        first = {t: next(iter(actions[ps[0]]["arguments"])) for t, ps in by_tool.items()}
        if len(set(first.values())) != 1:
            return None
        key = next(iter(first.values()))
        before = min(p for ps in by_tool.values() for p in ps)  # the listing read before the first decision
        entities = {t: [actions[p]["arguments"][key] for p in ps] for t, ps in by_tool.items()}
        record = _listing(json_records(_json_values(list(self._context.gold_outputs[index])[:before])),
                          [e for es in entities.values() for e in es])
        if record is None:
            return None
        numbers = list(value_numbers(reference))
        k = sorted(self._chosen).index(index) if index in self._chosen else 0
        for tool, other in (tuple(by_tool), tuple(reversed(tuple(by_tool)))):
            mine = [record[_key(e)] for e in entities[tool]]
            theirs = [(p, record[_key(actions[p]["arguments"][key])]) for p in by_tool[other]]
            rest = [r for _, r in theirs]
            fields = [f for f in mine[0] if all(isinstance(r.get(f), (int, float)) and not isinstance(r.get(f), bool)
                                                for r in mine + rest)]
            position, flipped = theirs[k % len(theirs)]
            # per number of the reference, its new value: a sum of a field over either side first, then a count
            # where the two sides' counts differ (``2 approved, 2 rejected`` says nothing of which is which)
            sides = [(mine, 1.0), (rest, -1.0)]
            moves = [(sum(float(r[f]) for r in side), sign * float(flipped[f])) for f in fields for side, sign in sides]
            if len(mine) != len(rest):
                moves += [(float(len(side)), sign) for side, sign in sides]
            new_values = {}
            for m in numbers:
                stated = float(m.group().replace(",", ""))
                move = next((d for total, d in moves if d and _close(stated, total)), None)
                if move is not None:
                    new_values[m.start()] = (m, styled(stated + move, m))
            if not any(_close(float(m.group().replace(",", "")), sum(float(r[f]) for r in mine))
                       for m, _ in new_values.values() for f in fields) or not fields:
                continue  # the reference states no sum over the decided side: nothing to keep consistent
            answer, last = [], 0
            for start in sorted(new_values):
                m, text = new_values[start]
                answer += [reference[last:m.start()], text]
                last = m.end()
            template = actions[by_tool[tool][0]]["arguments"]
            call = {"name": tool, "arguments": {**template, key: actions[position]["arguments"][key]}}
            return {"position": position, "call": call, "from": actions[position],
                    "answer": "".join([*answer, reference[last:]])}
        return None

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls with the flipped one."""
        found = self.flip(item)
        actions = [dict(a) for a in item[self.actions_field]]
        if found is not None:
            actions[found["position"]] = found["call"]
        return [[a] for a in actions]

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The reference with the total restated."""
        found = self.flip(item)
        return found["answer"] if found is not None else str(item[self.answer_field])

    def counterfactual(self, item: Mapping[str, Any], calls: Sequence[Any]) -> bool:
        """Whether the flipped call was accepted."""
        found = self.flip(item)
        return found is not None and len(calls) > found["position"] and bool(getattr(calls[found["position"]],
                                                                                      "ok", False))

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """What was played: the call replaced, the call played and the answer."""
        found = self.flip(item)
        if found is None:
            return {}
        return {"altered": f"{found['from']['name']} → {found['call']['name']}",
                "from": re.sub(r"\s+", " ", str(found["from"]["arguments"]))[:120],
                "to": str(found["call"]["arguments"])[:120], "answer": found["answer"][:160]}


def _plain(value: Any) -> bool:
    """A number, or one plain word (letters only): a value that decides something, never an id or free text."""
    if isinstance(value, bool):
        return False
    return isinstance(value, (int, float)) or (isinstance(value, str) and value.strip().isalpha())


class SwappedWrites(_ContextProbe):
    """``swapped_writes`` (module table)."""

    def __init__(self, write_tools: Collection[str] | None = None, **kwargs: Any) -> None:
        super().__init__(write_tools, reason="no two gold writes of one tool on different entities whose other "
                         "arguments differ in a number or a plain word", **kwargs)
        self._pairs: dict[int, tuple[int, int, str] | None] = {}

    def prepare(self, context: ProbeContext) -> None:
        """Forget the pairs of an earlier dataset (:meth:`found` computes each item's once)."""
        super().prepare(context)
        self._pairs = {}

    def found(self, item: Mapping[str, Any]) -> tuple[int, int, str] | None:
        """``(i, j, entity argument)``: the first two effective gold writes of one tool, same argument names,
        whose *entity* (the first argument whose values differ: ``sku`` of ``checkout(member_id, sku, qty)``,
        the member shared) differs and whose other differing arguments include a :func:`_plain` value; ``None``
        without. Computed once per item of the prepared dataset."""
        index = self._context.index_of(item)
        if index is not None and index in self._pairs:
            return self._pairs[index]
        actions = item.get(self.actions_field) or []
        writes = [i for i in sorted(self.writes_of(item)) if i < len(actions) and isinstance(actions[i], Mapping)
                  and isinstance(actions[i].get("arguments"), Mapping) and len(actions[i]["arguments"]) >= 2]
        out = None
        for n, i in enumerate(writes):
            for j in writes[n + 1:]:
                a, b = actions[i], actions[j]
                if a.get("name") != b.get("name") or list(a["arguments"]) != list(b["arguments"]):
                    continue
                differing = [k for k in a["arguments"] if a["arguments"][k] != b["arguments"][k]]
                if len(differing) < 2:
                    continue
                entity = differing[0]
                if any(_plain(a["arguments"][k]) and _plain(b["arguments"][k]) for k in differing[1:]):
                    out = (i, j, entity)
                    break
            if out is not None:
                break
        if index is not None:
            self._pairs[index] = out
        return out

    def pair(self, item: Mapping[str, Any]) -> tuple[int, int] | None:
        """The positions of :meth:`found`'s two writes, or ``None``."""
        found = self.found(item)
        return None if found is None else found[:2]

    def applies(self, item: Mapping[str, Any]) -> bool:
        """Items with a :meth:`pair`."""
        return self._has_gold(item) and self.found(item) is not None

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls with the pair's other differing arguments exchanged (each write keeps its entity
        and the arguments both share)."""
        actions = [dict(a) for a in item[self.actions_field]]
        found = self.found(item)
        if found is not None:
            i, j, entity = found
            a, b = actions[i]["arguments"], actions[j]["arguments"]
            actions[i] = {**actions[i], "arguments": {**b, entity: a[entity]}}
            actions[j] = {**actions[j], "arguments": {**a, entity: b[entity]}}
        return [[a] for a in actions]

    def _names(self, item: Mapping[str, Any]) -> list[Any]:
        found = self.found(item)
        if found is None:
            return []
        actions = item[self.actions_field]
        return [actions[k]["arguments"][found[2]] for k in found[:2]]

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The reference with the two entities' names (where they are strings) exchanged, as whole words."""
        reference = str(item.get(self.answer_field) or "")
        names = self._names(item)
        if not names or not all(isinstance(n, str) and n for n in names):
            return reference
        swap = {names[0]: names[1], names[1]: names[0]}
        pattern = "|".join(re.escape(n) for n in sorted(swap, key=len, reverse=True))
        return re.sub(rf"(?<![\w-])(?:{pattern})(?![\w-])", lambda m: swap[m.group()], reference)

    def unchanged_share(self, item: Mapping[str, Any]) -> float:
        """``(k - 2) / k``: the share of the tool's ``k`` effective gold writes the swap leaves right."""
        found = self.found(item)
        if found is None:
            return 0.0
        actions = item[self.actions_field]
        name = actions[found[0]].get("name")
        k = sum(1 for i in self.writes_of(item) if i < len(actions) and isinstance(actions[i], Mapping)
                and actions[i].get("name") == name)
        return (k - 2) / k if k > 2 else 0.0

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """``{"swapped": "tool: entity <-> entity", "answer"}``."""
        found = self.found(item)
        if found is None:
            return {}
        names = [str(n) for n in self._names(item)]
        return {"swapped": f"{item[self.actions_field][found[0]].get('name')}.{found[2]}: {names[0]} <-> {names[1]}",
                "answer": self.final_answer(item)[:160]}


def decision_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name (``intent`` ``hack``)."""
    probe = FlippedDecision(write_tools, **fields)
    probe.intent = HACK
    swapped = SwappedWrites(write_tools, **fields)
    swapped.intent = HACK
    return {"flipped_decision": probe, "swapped_writes": swapped}
