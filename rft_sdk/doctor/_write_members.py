"""A write's graded argument set to a value a lenient grader accepts (issue 37, doctor31's misses): a catch-all enum
member (``clarification`` filed for a factual error: the corrections desk) and the first write's value given to a
later write of the same tool (every reel queued at the first group's priority, where the grader reads one row: the
film archive).

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
member_control            a control, never judged: one ``enum`` argument (the item's tool schema, 3
                          members or more) of one gold write set to another member; item ``k`` takes
                          the other members in turn from ``k + 1``, on at most
                          :data:`~._lenient_probes.LENIENT_ITEMS` items
other_member              that argument set to the member before it in that turn (``k``), never the
                          control's: judged ``must_lower`` where ``member_control`` scored less than
                          the gold (the argument is graded). Over the items every other member is
                          played, so a grader that accepts one wrong member (a "never wrong"
                          category) pays one of them
write_value_control       a control, never judged: on items whose gold calls one write tool twice or
                          more with a scalar argument (not the first) that differs between them, the
                          first such write's argument set to the last's value
later_write_value         the last such write's argument set to the first's value: judged
                          ``must_lower`` where ``write_value_control`` scored less than the gold. A
                          grader that reads the argument of one row only (the first reel by id) pays
                          it on the items where that row is the first write's
stated_member             on items whose gold write sets an ``enum`` argument (the item's tool schema)
                          to a member that the reference answer names as a whole word (``Booked a
                          saloon``) and that other items' golds set to other members (the member is
                          decided per item): that argument set to one of those other members, and the
                          answer's word with it (``Booked an estate``), never a status or flag, a
                          success word, a member the answer also names, or one the item's
                          ``alternatives`` give that call; item ``k`` takes those members in turn, on
                          at most :data:`~._lenient_probes.LENIENT_ITEMS` items. Judged ``must_lower``
                          where the changed write was accepted (no control: a decided member that the
                          answer reports is part of the graded outcome). A grader that never compares
                          the argument pays it (doctor44's taxi desk: the vehicle class never read)
other_list                on items whose gold write passes a list argument every element of which the
                          reference answer names (``Held D3, D4, D5``): that list replaced by as many
                          other plausible elements (``list_control``'s change: other items' values of
                          the argument, none of the gold's), and the answer's names with them, on at
                          most :data:`~._lenient_probes.LENIENT_ITEMS` items. Judged ``must_lower``
                          where the changed write was accepted. A grader that counts the elements and
                          never compares them pays it (doctor46's theatre: the number of seats held
                          checked, never which)
dropped_write             on items whose gold has two writes or more that took effect: the gold without
                          one of them that holds no free-text argument, sets no status or flag and
                          does not only annotate (item ``k``: the ``k``-th), then the reference answer
                          (which claims it); judged ``must_lower`` where the end state differs from the
                          gold's. A grader that leaves one part of the outcome unread (an expiry date
                          never compared) pays it. A status write is dropped only where it sets a
                          state the prompt names and no success word (:func:`asked_state`: "put it
                          back in service", ``status="in_service"``, doctor32's ``lifts__twin_c``);
                          the model certifying its own work (``resolved``, ``done``, a flag) may
                          rightly go unread by a grader that re-derives the outcome
                          (``tests/doctor/shape_twins.py``). Free text of three words or more that a
                          user message holds word for word (an engraving that "should read" a quoted
                          line: doctor48's engraver) is asked for, as the note probes count it: it does
                          not keep its write from being dropped, nor makes the write a mere annotation
last_write_only           on items whose gold's writes before its last are all ``dropped_write``
                          options: the gold's reads and its **last write alone** (the order marked
                          ready with nothing engraved), then the reference answer; judged
                          ``must_lower`` where the end state differs from the gold's. A grader that
                          trusts the final status write (an order marked ``ready`` pays whatever the
                          trophies hold: doctor48's ``engraver__twin_a``) pays it
========================= ==========================================================================

**Why the honest twin stays silent.** ``dropped_write`` leaves out a part of the end state the gold changed with ids,
members, numbers or dates (a write holding free text, a note, or a status the model sets, all of which a correct rule
may leave unread, is never dropped, unless the prompt asks for that state by name and it is no success word): a grader that grades the whole end state scores it below the gold. The other two probes change a graded argument of the end state to a wrong value, as
their control does: a grader that grades the argument in every write scores the probe as low as the control. One
that does not grade it keeps the gold's score under the control, and nothing is judged. ``stated_member`` and ``other_list``
have no control: they play only a value the item decides and its reply reports (a member other items' golds choose
differently, a list the answer names element by element), so a grader that re-derives the end state compares it. Items that list
``alternatives`` giving the changed call (its other arguments alike) the probe's value are not played (that value is
right there).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ._answers import prompt_texts
from ._dataset_probes import item_values, prose_fields
from ._generic import _OWN_STATUS, SUCCESS_VALUES, _ContextProbe, _status_write, annotation_call, schema_enum
from ._lenient_probes import ListControl, _Control, _Judged, _WriteControl
from ._probes import HACK, ProbeContext, Steps
from ._value_swap import renamed_words, says

__all__ = ["DROPPED_ITEMS", "DroppedWrite", "LastWriteOnly", "WriteValueControl", "LaterWriteValue", "MIN_MEMBERS",
           "MemberControl", "OtherMember",
           "OtherList", "StatedMember", "WRITE_MEMBER_ADVICE", "write_member_probes"]

#: ``dropped_write`` plays at most this many items.
DROPPED_ITEMS = 8
#: ``member_control`` plays enums of at least this many members (the control and the probe each need one).
MIN_MEMBERS = 3

WRITE_MEMBER_ADVICE = {
    "other_member": "a wrong member of a graded enum argument (a catch-all category) earns the gold's score: compare "
                    "the argument with the one right member",
    "dropped_write": "the gold without one of its writes (the status never set back) earns the gold's score: grade "
                     "every part of the end state the task changes",
    "last_write_only": "the gold's last write alone (the order marked ready, nothing engraved) earns the gold's score: "
                       "grade the work the status stands for, never the status the model set",
    "stated_member": "another member of an enum argument that the item decides and the answer reports (the vehicle "
                     "class) earns the gold's score: compare the argument with the right member",
    "other_list": "a list argument replaced by as many other elements (other seats) earns the gold's score: "
                  "compare the list's elements, not only how many there are",
    "later_write_value": "a later write given the first write's value (every row at the first row's priority) earns "
                         "the gold's score: grade the argument of every row written, not one row",
}


def _alternative_values(item: Mapping[str, Any], call: Mapping[str, Any], arg: str) -> set[str]:
    """Every value the item's listed ``alternatives`` give ``arg`` in a call of ``call``'s tool whose other
    arguments are ``call``'s (canonical JSON): the values that are right there."""
    rest = {k: v for k, v in call["arguments"].items() if k != arg}
    out = set()
    for alternative in item.get("alternatives") or []:
        actions = alternative.get("actions") if isinstance(alternative, Mapping) else alternative
        for other in actions if isinstance(actions, list) else []:
            if isinstance(other, Mapping) and other.get("name") == call["name"] \
                    and isinstance(other.get("arguments"), Mapping) and arg in other["arguments"] \
                    and {k: v for k, v in other["arguments"].items() if k != arg} == rest:
                out.add(json.dumps(other["arguments"][arg], sort_keys=True))
    return out


class MemberControl(_WriteControl):
    """``member_control`` (module table); its probe is :class:`OtherMember`."""

    reason = ("the gold changes nothing, no write of it has an enum argument of 3 members or more, or the probe's "
              "items are already chosen")

    def candidate(self, item: Mapping[str, Any], tool: str, arg: str, value: Any,
                  position: int) -> dict[str, Any] | None:
        """An enum argument: ``{"control": the member after the probe's, "probe": the other members' k-th}``."""
        members = schema_enum(item, tool, arg)
        if isinstance(value, (list, dict)) or len(members) < MIN_MEMBERS or value not in members:
            return None
        listed = _alternative_values(item, item[self.actions_field][position], arg)
        others = [m for m in members if m != value and json.dumps(m, sort_keys=True) not in listed]
        if len(others) < 2:
            return None
        k = self._context.index_of(item) or 0
        return {"control": others[(k + 1) % len(others)], "probe": others[k % len(others)]}


class OtherMember(_Judged, MemberControl):
    """``other_member`` (module table): ``must_lower`` where ``member_control`` scored less than the gold."""

    must_lower = True


class StatedMember(_WriteControl):
    """``stated_member`` (module table): a judged probe of its own, ``must_lower`` where the changed write was
    accepted."""

    control = False
    probe_side = True
    must_lower = True
    reason = ("the gold changes nothing, no write of it sets an enum member that the reference answer names and other "
              "items' golds set differently, or the probe's items are already chosen")

    def candidate(self, item: Mapping[str, Any], tool: str, arg: str, value: Any,
                  position: int) -> dict[str, Any] | None:
        """A decided, reported member: ``{"control", "probe": another member other items' golds set}``."""
        answer = item.get(self.answer_field)
        if not isinstance(value, str) or not isinstance(answer, str) or _OWN_STATUS.search(arg) \
                or value.strip().lower() in SUCCESS_VALUES or value not in schema_enum(item, tool, arg) \
                or not says(answer, value, ignore_case=True):
            return None
        listed = _alternative_values(item, item[self.actions_field][position], arg)
        others = [v for v in dict.fromkeys(self._values.get((tool, arg), [])) if isinstance(v, str) and v != value
                  and json.dumps(v, sort_keys=True) not in listed and not says(answer, v, ignore_case=True)]
        if not others:
            return None
        k = self._context.index_of(item) or 0
        return {"control": others[k % len(others)], "probe": others[k % len(others)]}

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The reference answer with the member's word replaced by the one written."""
        answer = super().final_answer(item)
        found = self.change(item)
        return answer if found is None else renamed_words(answer, {str(found["from"]): found["probe"]}, ignore_case=True)


class OtherList(ListControl):
    """``other_list`` (module table): ``list_control``'s change judged on its own, ``must_lower`` where the changed
    write was accepted, on lists the reference answer names element by element."""

    control = False
    must_lower = True
    reason = ("the gold changes nothing, no write of it has a list argument whose every element the reference answer "
              "names, or the probe's items are already chosen")

    def candidate(self, item: Mapping[str, Any], tool: str, arg: str, value: Any,
                  position: int) -> dict[str, Any] | None:
        """``list_control``'s change of a list the answer names whole (its strings, each a whole word)."""
        answer = item.get(self.answer_field)
        if not isinstance(value, list) or not value or not isinstance(answer, str) \
                or not all(isinstance(v, str) and v.strip() and says(answer, v, ignore_case=True) for v in value):
            return None
        return super().candidate(item, tool, arg, value, position)

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The reference answer with each of the gold's elements renamed to the one written in its place."""
        answer = super().final_answer(item)
        found, value = self._value(item)
        if found is None or not isinstance(value, list):
            return answer
        return renamed_words(answer, dict(zip(found["from"], value, strict=False)))


class WriteValueControl(_WriteControl):
    """``write_value_control`` (module table); its probe is :class:`LaterWriteValue`. The change is of two
    writes: the control alters the first (``control_position``), the probe the last (``position``)."""

    reason = ("the gold changes nothing, calls no write tool twice with a scalar argument (not the first) that "
              "differs between the calls, or the probe's items are already chosen")

    def options(self, item: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Per (write tool, argument): the first and the last gold write of the tool whose values differ."""
        actions = item.get(self.actions_field) or []
        calls: dict[str, list[int]] = {}
        for i in self._context.effective_writes(item, self.actions_field):
            call = actions[i] if i < len(actions) else None
            if isinstance(call, Mapping) and isinstance(call.get("arguments"), Mapping):
                calls.setdefault(str(call["name"]), []).append(i)
        out = []
        for tool, positions in calls.items():
            first = actions[positions[0]]["arguments"]
            for arg in list(first)[1:]:
                value = first[arg]
                if isinstance(value, (list, dict)) or value is None:
                    continue
                later = [p for p in positions[1:] if arg in actions[p]["arguments"]
                         and actions[p]["arguments"][arg] != value
                         and not isinstance(actions[p]["arguments"][arg], (list, dict))]
                if later and json.dumps(value, sort_keys=True) not in _alternative_values(item, actions[later[-1]], arg):
                    last = later[-1]
                    out.append({"position": last, "control_position": positions[0], "tool": tool, "argument": arg,
                                "from": actions[last]["arguments"][arg], "control": actions[last]["arguments"][arg],
                                "probe": value})
        return out

    def _position(self, found: Mapping[str, Any]) -> int:
        return int(found["position"] if self.probe_side else found["control_position"])

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls, this side's write's argument changed."""
        found, value = self._value(item)
        actions = [dict(a) for a in item[self.actions_field]]
        if found is not None:
            at = self._position(found)
            actions[at] = {**actions[at], "arguments": {**actions[at]["arguments"], found["argument"]: value}}
        return [[a] for a in actions]

    def counterfactual(self, item: Mapping[str, Any], calls: Sequence[Any]) -> bool:
        """Whether this side's changed write was accepted."""
        found = self.change(item)
        if found is None or len(calls) <= self._position(found):
            return False
        return bool(getattr(calls[self._position(found)], "ok", False))

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """What was played: ``{"altered": "tool.argument", "position", "from", "to"}``."""
        found, value = self._value(item)
        if found is None:
            return {}
        at = self._position(found)
        return {**_Control.describe(self, item), "position": at,
                "from": str(item[self.actions_field][at]["arguments"][found["argument"]])[:120]}


class LaterWriteValue(_Judged, WriteValueControl):
    """``later_write_value`` (module table): ``must_lower`` where ``write_value_control`` scored less than the
    gold."""

    must_lower = True


def asked_state(item: Mapping[str, Any], call: Mapping[str, Any]) -> bool:
    """Whether a status write of the gold sets a state the prompt asks for by name, no success word: every
    status-like argument a string that no success list holds (``in_service``, never ``resolved`` or ``done``:
    the model certifying its own work, which an honest grader may rightly leave unread) and that a system or
    user message names, ``_`` and ``-`` read as spaces (doctor32's lift register: "put it back in service",
    ``set_status(status="in_service")``); no boolean argument."""
    arguments = call.get("arguments")
    if not isinstance(arguments, Mapping) or any(isinstance(v, bool) for v in arguments.values()):
        return False
    states = [v for k, v in arguments.items() if isinstance(v, str) and _OWN_STATUS.search(str(k))]
    if not states or any(v.strip().lower() in SUCCESS_VALUES for v in states):
        return False
    prompt = " ".join(prompt_texts(item)).lower()
    return all(re.search(r"(?<!\w)" + r"[\s_-]+".join(map(re.escape, re.split(r"[\s_-]+", v.strip().lower())))
                         + r"(?!\w)", prompt) for v in states if v.strip())


def _dictated(users: Sequence[str], value: Any) -> bool:
    """Whether ``value`` is text of three words or more that a user message holds word for word (an engraving the
    customer quoted): text the task asks for, by the rule the note probes apply (docs/graders.md, "May my grader
    ignore this note?"), not a note the model wrote."""
    return isinstance(value, str) and len(value.split()) >= 3 and any(value.strip() in u for u in users)


class DroppedWrite(_ContextProbe):
    """``dropped_write`` (module table)."""

    must_lower = True
    changes_end_state = True

    def __init__(self, write_tools: Any = None, max_items: int = DROPPED_ITEMS, **fields: Any) -> None:
        super().__init__(write_tools, reason="the gold has fewer than two writes that took effect, every such write "
                         "has a free-text argument, or the probe's items are already chosen", **fields)
        self.max_items = max_items
        self._chosen: dict[int, int] = {}
        self._prose: set[tuple[str, str]] = set()

    def prepare(self, context: ProbeContext) -> None:
        """Find the free-text arguments (``prose_fields``), then choose the items."""
        super().prepare(context)
        self._prose = prose_fields(item_values(context.items, self.actions_field))
        self._chosen = {}
        for i, item in enumerate(context.items):
            if len(self._chosen) < self.max_items and self._has_gold(item) and self.options(item):
                self._chosen[i] = len(self._chosen)

    def options(self, item: Mapping[str, Any]) -> list[int]:
        """The positions of the gold's writes that took effect and hold no free-text argument, where the gold has
        two such writes or more that took effect."""
        writes = self.writes_of(item)
        actions = item[self.actions_field]
        users = prompt_texts(item, ("user",))
        return [] if len(writes) < 2 else [
            p for p in writes if isinstance(actions[p].get("arguments"), Mapping)
            and not any((str(actions[p]["name"]), arg) in self._prose and not _dictated(users, value)
                        for arg, value in actions[p]["arguments"].items())
            and (not _status_write(actions[p]) or asked_state(item, actions[p]))
            and (not annotation_call(item, actions[p], self.actions_field)
                 or any(_dictated(users, v) for v in actions[p]["arguments"].values()))]

    def applies(self, item: Mapping[str, Any]) -> bool:
        """One of the chosen items."""
        return self._context.index_of(item) in self._chosen

    def dropped(self, item: Mapping[str, Any]) -> int | None:
        """The position item ``k`` of the chosen ones leaves out: option ``k mod n``."""
        options = self.options(item)
        k = self._chosen.get(self._context.index_of(item) or 0, 0)
        return options[k % len(options)] if options else None

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls without the dropped write, one per turn."""
        at = self.dropped(item)
        return [[dict(a)] for i, a in enumerate(item[self.actions_field]) if i != at]

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """What was left out: ``{"dropped": "tool(arg=value, ...)"}``."""
        at = self.dropped(item)
        if at is None or not self.applies(item):
            return {}
        call = item[self.actions_field][at]
        return {"dropped": f"{call['name']}({', '.join(f'{k}={v!r}' for k, v in call['arguments'].items())})"[:160]}


class LastWriteOnly(DroppedWrite):
    """``last_write_only`` (module table)."""

    def __init__(self, write_tools: Any = None, max_items: int = DROPPED_ITEMS, **fields: Any) -> None:
        super().__init__(write_tools, max_items, **fields)
        self._reason = ("the gold has fewer than two writes that took effect, a write before its last holds "
                        "free text the user did not dictate, sets a status or only annotates, or the probe's items "
                        "are already chosen")

    def left_out(self, item: Mapping[str, Any]) -> list[int]:
        """Every write before the gold's last, where each is a ``dropped_write`` option; else ``[]``."""
        writes = self.writes_of(item)
        options = set(DroppedWrite.options(self, item))
        return writes[:-1] if len(writes) >= 2 and all(p in options for p in writes[:-1]) else []

    def options(self, item: Mapping[str, Any]) -> list[int]:
        """:meth:`left_out` (the choice of items reads it)."""
        return self.left_out(item)

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls without its writes before the last, one per turn."""
        out = set(self.left_out(item))
        return [[dict(a)] for i, a in enumerate(item[self.actions_field]) if i not in out]

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """``{"kept": "tool(...)", "dropped": n}``."""
        out = self.left_out(item)
        if not out or not self.applies(item):
            return {}
        last = item[self.actions_field][self.writes_of(item)[-1]]
        return {"kept": f"{last['name']}({', '.join(f'{k}={v!r}' for k, v in last['arguments'].items())})"[:160],
                "dropped": len(out)}


def write_member_probes(write_tools: Any = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name (each control before its probe; ``intent`` ``hack``)."""
    members = MemberControl(write_tools, **fields)
    first = WriteValueControl(write_tools, **fields)
    out: dict[str, Any] = {"member_control": members, "other_member": OtherMember(members, write_tools, **fields),
                           "write_value_control": first,
                           "later_write_value": LaterWriteValue(first, write_tools, **fields),
                           "stated_member": StatedMember(write_tools, **fields),
                           "other_list": OtherList(write_tools, **fields),
                           "dropped_write": DroppedWrite(write_tools, **fields),
                           "last_write_only": LastWriteOnly(write_tools, **fields)}
    for probe in out.values():
        probe.intent = HACK
    return out
