"""A write's list with one member too many (issue 37, doctor38's ``shore_excursions__twin_b``): the gold books the
guests going ashore (``guest_ids=["G-8142-1", "G-8142-3"]``), and a grader that checks ``expected <= booked``
("everyone going is on it") pays the booking of the whole cabin, the guest who stays aboard included. ``padded_list``
pads with many plausible values, which a tool that takes only its own entity's members refuses; this adds **one**
member of the item's own.

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
widened_list              one gold write's list argument (of strings or integers) with one more
                          member: a sibling of its members (``_scope.sibling_values``: another member
                          of the collection in the item's data or the gold's JSON tool outputs that
                          holds them, the record-mate the gold read and left out; where the item
                          holds none, a member other items' golds write in that argument: doctor65's
                          accreditation zones) that no gold call passes; item ``k`` takes the
                          candidates in turn, on at most
                          :data:`~._scope.SCOPE_ITEMS` items. Judged ``must_lower`` where the write
                          took effect and the end state differs from the gold's
donor_write               one gold write with every argument but those naming the item's own entity
                          (a value a system or user message states: ``volunteer_id="V-101"``) and its
                          free text (a note, kept as the gold wrote it) taken
                          from another item's gold write of the same tool that differs in each of
                          them (``role="marshal", zones=["course", "water_station"]`` for a medic):
                          a whole, self-consistent write for the wrong case; item ``k`` takes the
                          ``k``-th donor; judged as ``widened_list`` (doctor65's accreditation: a pass
                          whose zones match the role printed on it, the role never checked)
========================= ==========================================================================

**Why the honest twin stays silent**: the end state holds a member the task did not ask for (a paid place for a
guest who stays aboard), and a grader that compares the list (or the end state) scores it below the gold, by any
amount (set F1 over the members pays ``2n / (2n + 1)``). A tool that refuses the extra member (an age limit) leaves
nothing to judge. Nothing names a tool, a field or a task.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ._answers import prompt_texts
from ._dataset_probes import described_prose, has_wildcard
from ._generic import _canonical, _free_text
from ._probes import HACK, ProbeContext, Steps
from ._scope import _NOT_DATA, SCOPE_ITEMS, SupersetInScope, _arguments, _json_values, sibling_values

__all__ = ["WIDENED_LIST_ADVICE", "DonorWrite", "ReplacedGoldWrite", "WidenedList", "widened_list_probes"]

WIDENED_LIST_ADVICE = {
    "donor_write": "another case's whole write (its role and the zones that go with it) for the item's own entity "
                   "earns the gold's score: check each value against the item's case (compare with the gold's end "
                   "state), not only that the write is consistent with itself",
    "widened_list": "a write's list with one extra member of the item's own (the whole cabin booked where two go "
                    "ashore) earns the gold's score: compare the list (or the end state) for equality, not "
                    "'every expected member is in it'",
}


class ReplacedGoldWrite(SupersetInScope):
    """A gold write replaced by a variant of itself (``must_lower``): subclasses give :meth:`candidates`
    (``{"name", "arguments", "position"}``: the gold write at ``position`` replaced by that call)."""

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """``{"altered": "tool.argument", "from": gold value, "to": played value}`` (the first argument changed);
        ``{}`` when not chosen."""
        if not self.applies(item):
            return {}
        call = self.extra(item)
        gold = _arguments(item[self.actions_field][call["position"]].get("arguments"))
        name = next(k for k, v in call["arguments"].items() if gold.get(k) != v)
        return {"altered": f"{call['name']}.{name}", "from": gold[name], "to": call["arguments"][name]}

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls, the chosen write replaced, one per turn."""
        call = self.extra(item)
        calls = [dict(a) for a in item[self.actions_field]]
        calls[call["position"]] = {"name": call["name"], "arguments": call["arguments"]}
        return [[a] for a in calls]

    def counterfactual(self, item: Mapping[str, Any], calls: Sequence[Any]) -> bool:
        """Whether the replacing write succeeded and did not say it changed nothing."""
        call = self.extra(item)
        want = (call["name"], _canonical(call["arguments"]))
        return any(getattr(c, "ok", False) and getattr(c, "changed", None) is not False
                   and (getattr(c, "name", None), _canonical(getattr(c, "arguments", None))) == want for c in calls)


class WidenedList(ReplacedGoldWrite):
    """``widened_list`` (module table): ``must_lower``; the gold's write replaced, not a write added."""

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = SCOPE_ITEMS,
                 **kwargs: Any) -> None:
        super().__init__(write_tools, max_items, **kwargs)
        self._reason = ("the gold changes nothing, no write of it has a list argument whose members have a sibling "
                        "in the item's data or the gold's tool outputs, or the probe's "
                        f"{max_items} items are already chosen")

    def widened(self, item: Mapping[str, Any]) -> list[tuple[int, str, list[Any]]]:
        """Every ``(gold write position, argument, the list with one sibling added)`` of ``item``, in order."""
        outputs = self.gold_outputs_of(item)
        sources = [v for k, v in item.items() if k not in _NOT_DATA and k != self.answer_field]
        sources += _json_values([o for o in outputs if isinstance(o, str)])
        gold = item[self.actions_field]
        used = {json.dumps(v) for a in gold if isinstance(a, Mapping)
                for value in _arguments(a.get("arguments")).values()
                for v in (value if isinstance(value, list) else [value]) if isinstance(v, (str, int))}
        out = []
        for position in self.writes_of(item):
            for name, value in _arguments(gold[position].get("arguments")).items():
                if not isinstance(value, list) or not value or not all(
                        isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
                    continue
                siblings = list(dict.fromkeys(s for v in value for s in sibling_values(v, sources, used)))
                if not siblings and not has_wildcard(value):  # no record-mate in the item's data: a member other
                    # items' golds write there, never a wildcard (``"*"``: every day, which a list of all seven is)
                    siblings = [s for s in self._written_members(str(gold[position].get("name")), name)
                                if s not in value and json.dumps(s) not in used and not has_wildcard(s)]
                out += [(position, name, [*value, s]) for s in siblings]
        return out

    def _written_members(self, tool: str, argument: str) -> list[Any]:
        """The members of ``tool``'s list ``argument`` across the dataset's gold writes, in order (doctor65's
        accreditation: the zones other roles' passes open, where the item reads only its own role's)."""
        out: dict[str, Any] = {}
        for other in self._context.items:
            for call in other.get(self.actions_field) or []:
                value = _arguments(call.get("arguments")).get(argument) if isinstance(call, Mapping) \
                    and call.get("name") == tool else None
                for v in value if isinstance(value, list) else []:
                    if isinstance(v, (str, int)) and not isinstance(v, bool):
                        out.setdefault(json.dumps(v), v)
        return list(out.values())

    def candidates(self, item: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The widened writes (``{"name", "arguments", "position"}``)."""
        gold = item[self.actions_field]
        return [{"name": gold[p]["name"], "arguments": {**_arguments(gold[p].get("arguments")), name: value},
                 "position": p} for p, name, value in self.widened(item)]


class DonorWrite(ReplacedGoldWrite):
    """``donor_write`` (module table)."""

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = SCOPE_ITEMS,
                 **kwargs: Any) -> None:
        super().__init__(write_tools, max_items, **kwargs)
        self._prose: set[tuple[str, str]] = set()
        self._reason = ("the gold changes nothing, no other item's gold write of the same tool differs in every "
                        "argument but those naming the item's own entity, or the probe's "
                        f"{max_items} items are already chosen")

    def candidates(self, item: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The gold's writes with the other arguments of another item's write of that tool (module table)."""
        said = "\n".join(prompt_texts(item))
        gold, index = item[self.actions_field], self._context.index_of(item) or 0
        out = []
        for position in self.writes_of(item):
            args = _arguments(gold[position].get("arguments"))
            tool = str(gold[position].get("name"))
            own = {k for k, v in args.items() if isinstance(v, str) and v and v in said}
            rest = [k for k, v in args.items() if k not in own and v not in (None, "") and not _free_text(v)
                    and (tool, k) not in self._prose]  # a note no correct grader reads is kept as the gold wrote it
            if not own or not rest:
                continue
            donors = [d for other in self._context.items if other is not item
                      for d in self._writes_of_tool(other, tool)
                      if all(k in d and _canonical(d[k]) != _canonical(args[k]) for k in rest)]
            donors = list({_canonical({k: d[k] for k in rest}): d for d in donors}.values())
            if donors:
                donor = donors[index % len(donors)]
                out.append({"name": gold[position]["name"], "arguments": {**args, **{k: donor[k] for k in rest}},
                            "position": position})
        return out

    def prepare(self, context: ProbeContext) -> None:
        """Remember the arguments the tool schemas call free text, then choose the items."""
        self._prose = described_prose(context.items)
        super().prepare(context)

    def _writes_of_tool(self, item: Mapping[str, Any], tool: str) -> list[dict[str, Any]]:
        return [_arguments(a.get("arguments")) for a in item.get(self.actions_field) or []
                if isinstance(a, Mapping) and a.get("name") == tool]


def widened_list_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name (``intent`` ``hack``)."""
    out: dict[str, Any] = {"widened_list": WidenedList(write_tools, **fields),
                           "donor_write": DonorWrite(write_tools, **fields)}
    for probe in out.values():
        probe.intent = HACK
    return out
