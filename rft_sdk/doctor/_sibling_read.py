"""Another item's record read in place of this item's own (issue 37, doctor68's ``royalty_set__twin_c``: the grader
asks for evidence that the rollout read the writer's statement, not *that quarter's* statement, so a policy that
reads the writer's previous quarter and answers its works is paid the overlap of two quarters' sets, 0.8).

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
sibling_read_control      a control, never judged: on items whose gold writes nothing and whose answer
                          is graded (not ``answer_free``), where another item's gold reads the same
                          tool with arguments that differ from a gold read's in **one** argument only
                          (``get_statement(writer_id="W-101", quarter="2025-Q4")`` beside this item's
                          ``quarter="2025-Q3"``) and answers otherwise: the gold's calls **less that
                          read** (every call of the tool with that argument's value: all its pages),
                          then that item's reference answer (an item whose answer shares
                          entries with this one's first: where a partial score can tell)
sibling_read_answer       the same answer after the gold's calls with that read's argument set to the
                          other item's value in every page of the read (the other quarter's statement
                          read instead of this one's); judged ``must_not_raise`` against the control: reading a record that
                          is not the item's cannot earn more than not reading it. An honest grader
                          scores the two alike (its evidence is the item's own record, missing from
                          both; or it needs none and pays the answer alike); one whose evidence rule
                          names the entity but not the record (the writer, not the quarter) pays the
                          other record's answer after its read only
entity_read_control       a control, never judged: on the same items, where a gold read differs from
                          another item's gold read of the same tool in **one** string argument only
                          (``list_valves(station="PS-01")`` beside ``station="PS-03"``; a hotel's
                          batches of another day) and that item answers otherwise: the gold's calls
                          less that read (every page of it), then **this item's** reference answer
other_entity_read         the same answer after the gold's calls with that read's argument set to the
                          other item's value in every page; judged ``must_not_raise`` against the
                          control. An honest grader scores the two alike (its evidence, a read holding
                          the item's whole entity, is missing from both; or it needs none, contract
                          rule 15's "at most"); one whose evidence is any call of the read tool
                          (doctor69's valve register) or a read of part of the entity (doctor75's
                          club registrations, doctor82's hotel batches of any day) pays the right
                          answer after another record's read only. An answer of the item's own is
                          played too (since doctor75-83: items repeat across epochs, so a policy can
                          memorise it; the evidence check is what stops that)
========================= ==========================================================================

**What it can get wrong**: a grader that pays any successful read a little (an activity bonus) pays the probe's
read above the control's none. Nothing names a tool, a field or a task.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from typing import Any

from ._generic import answer_keys, answers_overlap
from ._lenient_probes import _Control, _NotRaised
from ._probes import HACK, Steps
from ._scope import _arguments

__all__ = ["SIBLING_READ_ADVICE", "EntityReadControl", "OtherEntityRead", "SiblingReadAnswer", "SiblingReadControl",
           "sibling_read_probes"]

SIBLING_READ_ADVICE = {
    "sibling_read_answer": "another item's record read in place of this item's (the same entity, another quarter or "
                           "day) makes that item's answer score more than no read at all: the evidence check names "
                           "the entity but not the record. Require the read of the item's own record (every argument "
                           "that tells it apart: the quarter, the date), or none",
    "other_entity_read": "the right answer after a read of another entity (another station's register) scores more "
                         "than after no read at all: the evidence check counts any call of the read tool. Require a "
                         "successful read whose output holds the item's own entity",
}


def _one_apart(a: Mapping[str, Any], b: Mapping[str, Any]) -> str | None:
    """The one argument whose string value differs between two argument sets with the same names, or ``None``."""
    if set(a) != set(b) or len(a) < 2:
        return None
    apart = [k for k in a if a[k] != b[k]]
    if len(apart) != 1 or not (isinstance(a[apart[0]], str) and isinstance(b[apart[0]], str)):
        return None
    return apart[0]


def _same_reads(actions: list[Any], tool: Any, argument: str, value: Any) -> list[int]:
    """Positions of every gold call of ``tool`` whose ``argument`` is ``value``: all pages of one read
    (``list_docked_bikes(station_id, as_of, page=1)`` and ``page=2``), which the probes change together: with one
    page left as it was, the rollout still holds a read of the item's own record (doctor77's docked bikes)."""
    return [k for k, a in enumerate(actions) if isinstance(a, Mapping) and a.get("name") == tool
            and _arguments(a.get("arguments")).get(argument) == value]


def _read_values(actions: list[Any], tool: Any) -> set[str]:
    """Every argument value, as a string, of the gold's calls of ``tool``."""
    return {str(v) for a in actions if isinstance(a, Mapping) and a.get("name") == tool
            for v in _arguments(a.get("arguments")).values()}


class SiblingReadControl(_Control):
    """``sibling_read_control`` (module table)."""

    reason = ("the gold writes, the answer is not the graded outcome (answer_control), no other item's gold reads "
              "the same tool with arguments differing in one argument only and answers otherwise, or the probe's "
              "items are already chosen")

    def _answered_read(self, item: Mapping[str, Any]) -> tuple[int, list[Any]] | None:
        """``(item index, gold actions)`` of an item both probes may play: in the dataset, its answer graded
        (not ``answer_free``), a string, and no gold write that changes anything; else ``None``."""
        index = self._context.index_of(item)
        if index is None or index in self._context.answer_free or not isinstance(item.get(self.answer_field), str) \
                or self._context.effective_writes(item, self.actions_field):
            return None
        return index, list(item.get(self.actions_field) or [])

    def _donors(self, index: int, keys: Any) -> Iterator[tuple[int, Mapping[str, Any]]]:
        """``(k, item)`` of every other item whose answer is a string sharing no entry (``answer_keys``) with
        ``keys``, this item's."""
        for k, other in enumerate(self._context.items):
            answer = other.get(self.answer_field)
            if k != index and isinstance(answer, str) and not answer_keys(answer) & keys:
                yield k, other

    def change(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """``{"position": the read, "tool", "argument", "from": its value, "probe": the other item's value,
        "donor": the other item's index}``: the last gold read with such a sibling, an other item whose answer
        shares entries with this one's first."""
        eligible = self._answered_read(item)
        if eligible is None:
            return None
        index, actions = eligible
        mine = str(item[self.answer_field])
        keys = answer_keys(mine)
        for position in range(len(actions) - 1, -1, -1):
            call = actions[position]
            if not isinstance(call, Mapping):
                continue
            tool, arguments = call.get("name"), _arguments(call.get("arguments"))
            read = _read_values(actions, tool)
            found: list[tuple[bool, int, str, str]] = []
            for k, other in self._donors(index, keys):
                answer = other[self.answer_field]
                for theirs in other.get(self.actions_field) or []:
                    if not isinstance(theirs, Mapping) or theirs.get("name") != tool:
                        continue
                    apart = _one_apart(arguments, _arguments(theirs.get("arguments")))
                    value = _arguments(theirs.get("arguments")).get(apart) if apart else None
                    if apart and isinstance(value, str) and value not in read:
                        found.append((not answers_overlap(mine, answer), k, apart, value))
                        break
            if found:
                _, donor, argument, value = min(found)
                return {"position": position, "tool": str(tool), "argument": argument, "from": arguments[argument],
                        "control": None, "probe": value, "donor": donor,
                        "positions": _same_reads(actions, tool, argument, arguments[argument])}
        return None

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls less the read."""
        found = self.change(item)
        actions = item[self.actions_field]
        return [[a] for k, a in enumerate(actions) if found is None or k not in found["positions"]]

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The other item's reference answer."""
        found = self.change(item)
        return str(item.get(self.answer_field) or "") if found is None else \
            str(self._context.items[found["donor"]][self.answer_field])

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """What was played: ``{"read": "tool.argument", "from", "to", "answer"}`` (``to`` empty: the read left out)."""
        found, value = self._value(item)
        if found is None:
            return {}
        return {"read": f"{found['tool']}.{found['argument']}", "from": str(found["from"])[:120],
                "to": "" if value is None else str(value)[:120], "answer": self.final_answer(item)[:160]}


class SiblingReadAnswer(_NotRaised, SiblingReadControl):
    """``sibling_read_answer`` (module table): ``must_not_raise`` against ``sibling_read_control``."""

    reference: SiblingReadControl

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls with the read's argument set to the other item's value."""
        found = self.change(item)
        actions = [dict(a) for a in item[self.actions_field]]
        if found is not None:
            for position in found["positions"]:
                call = actions[position]
                actions[position] = {**call, "arguments": {**_arguments(call.get("arguments")),
                                                           found["argument"]: found["probe"]}}
        return [[a] for a in actions]


class EntityReadControl(SiblingReadControl):
    """``entity_read_control`` (module table)."""

    reason = ("the gold writes, the answer is not the graded outcome (answer_control), no gold read differs from "
              "another item's gold read of the same tool in one argument only with another answer there, or the "
              "probe's items are already chosen")

    def change(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """``{"position": the read, "tool", "argument", "from", "probe": the other item's value, "positions"}``: the
        last gold read that another item's gold read of the same tool differs from in one string argument only
        (the entity, or one part of it: the day of a branch's report), that item answering otherwise; every
        page of the read changed together."""
        eligible = self._answered_read(item)
        if eligible is None:
            return None
        index, actions = eligible
        keys = answer_keys(str(item[self.answer_field]))
        for position in range(len(actions) - 1, -1, -1):
            call = actions[position]
            arguments = _arguments(call.get("arguments")) if isinstance(call, Mapping) else {}
            if not arguments:
                continue
            tool = call.get("name")
            read = _read_values(actions, tool)
            for k, other in self._donors(index, keys):
                for theirs in other.get(self.actions_field) or []:
                    given = _arguments(theirs.get("arguments")) if isinstance(theirs, Mapping) else {}
                    if not isinstance(theirs, Mapping) or theirs.get("name") != tool:
                        continue
                    if len(arguments) == 1:
                        argument = next(iter(arguments))
                        apart = argument if set(given) == {argument} and given[argument] != arguments[argument] \
                            else None
                    else:
                        apart = _one_apart(arguments, given)
                    value = given.get(apart) if apart else None
                    if apart and isinstance(value, str) and isinstance(arguments[apart], str) and value not in read:
                        return {"position": position, "tool": str(tool), "argument": apart,
                                "from": arguments[apart], "control": None, "probe": value, "donor": k,
                                "positions": _same_reads(actions, tool, apart, arguments[apart])}
        return None

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """This item's reference answer."""
        return str(item.get(self.answer_field) or "")


class OtherEntityRead(_NotRaised, EntityReadControl):
    """``other_entity_read`` (module table): ``must_not_raise`` against ``entity_read_control``."""

    reference: EntityReadControl

    plan = SiblingReadAnswer.plan


def sibling_read_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name (the control before its probe; ``intent`` ``hack``)."""
    control = SiblingReadControl(write_tools, **fields)
    entity = EntityReadControl(write_tools, **fields)
    out: dict[str, Any] = {"sibling_read_control": control,
                           "sibling_read_answer": SiblingReadAnswer(control, write_tools, **fields),
                           "entity_read_control": entity,
                           "other_entity_read": OtherEntityRead(entity, write_tools, **fields)}
    for probe in out.values():
        probe.intent = HACK
    return out
