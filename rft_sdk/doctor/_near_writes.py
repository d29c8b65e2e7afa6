"""Near misses of the *outcome* where the gold writes (issue 37, outside suites' misses): a written number
a grader's loose tolerance pays (a setpoint 1.5 °C off, a consumption card 0.5 L/100 km off), a stated
number beside the writes paid the same way (a length 0.5 m off), and the whole task done on *another
entity* that looks the same (the zone next door growing the same crop). ``neighbour_value`` (integers
±1), ``adv_near_miss`` (answers of items that write nothing) and ``altered_writes`` (one argument of one
write) never play these: a non-integer written number, a number stated beside writes, every write
retargeted at once.

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
near_value_control        a control, never judged: one non-integer number the gold writes (a JSON
                          float argument, or a string argument holding one value number with a
                          decimal point: ``"7.87 L/100km"``; never the write's target, never free
                          text), or a JSON integer of at least :data:`INTEGER_MIN` (pence, grams:
                          :func:`integer_moves`), moved by :data:`CONTROL_FACTOR` times the near
                          move below: a plainly wrong value
near_value                the same number moved by the near move (:func:`near_moves`); judged
                          ``must_lower`` (the gold's whole score is reward) only where the control
                          scored less than the gold (the number is graded), the write was accepted
                          and the end state differs from the gold's
precise_written_value     the same number (a JSON float written at that precision) moved
                          :data:`PRECISE_WRITTEN_UNITS` units of the precision its argument's own
                          description states (``measure_cm: the finished measurement in
                          centimetres, to 0.1 cm``: ``78.5`` → ``78.8``), else a sentence of the
                          prompt naming the argument (:func:`prompt_precision`: ``the toe depth to
                          the centimetre`` for ``toe_depth_m``: ``18.42`` → ``18.45``), inside the near move;
                          judged as ``near_value`` (doctor41's tailor: a 1 cm tolerance)
stated_near_control       a control, never judged: on items whose gold writes, the gold's calls,
                          then the reference with every non-integer value number moved by
                          :data:`CONTROL_FACTOR` times the near move
near_stated_value         the same with every such number moved by the near move; judged
                          ``must_lower`` only where the control scored less than the gold
sibling_entity            every gold call's argument that names the task's entity (the first
                          argument of the gold's first write, a value the user message names:
                          zone ``Z1``) set to another entity with the same *used* attributes (the
                          fields of the entity's record, read by the gold, whose values the gold
                          passes on to a later call: ``crop: tomato`` → ``crop_profile(crop=
                          "tomato")``), found in the other items' gold replays (their reads of the
                          same tool with that argument); then the reference answer. Judged on the
                          plain line where every retargeted write was accepted and the end state
                          differs from the gold's
========================= ==========================================================================

**The near move** (:func:`near_moves`), of a number ``v`` stated with ``p`` as one unit of its last digit
(``4.35``: 0.01; ``24.0``: 0.1): ``d = max(3 % of |v| cut to a multiple of p, plus one p; 10 p)``: strictly past 3 %, so a
3 % tolerance with its bound included refuses it (``54.00`` moves ``1.63``, not ``1.62``); written
with the gold's decimals; up on even turns, down on odd ones where the control's move keeps the sign.
Where it comes from: 3 % is ``adv_near_miss``'s relative move (``_near_probes.NEAR_SHIFT``: beyond the
relative tolerances float comparison uses, 1e-9 to 1e-2); ten units of the last stated digit is one unit
of the digit before it, so the moved value differs from the gold's even after both are rounded to one
digit fewer than the gold states (a grader that forgives the last digit still refuses it). What no careful
grader tolerates: a tolerance wider than both. Integers under :data:`INTEGER_MIN` are not moved
(``neighbour_value`` plays ±1 where a count or position has no tolerance); larger ones move by the same rule with a
unit of 1.

**Why the honest twin stays silent.** The control finds where the number is graded at all (a note's
figure, an unread stated value keeps the gold's score there, and the probe is not judged); a grader
within the stated precision refuses the moved value and the score falls (honest partial credit for the
rest of the outcome is no reward: ``must_lower`` asks only that it falls). ``sibling_entity`` leaves the
asked entity untouched: an honest end-state grader scores the task undone; the plain line leaves partial
credit up to half-way for a right answer. The entity is one the user message names, so a task that lets
the model choose among equals (any free slot) is never played.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ._answers import prompt_texts
from ._generic import _ContextProbe, _free_text, _parameters
from ._lenient_probes import _Control, _Judged
from ._near_probes import NEAR_SHIFT, _format_like, stated_precision, value_number, value_numbers
from ._probes import HACK, ProbeContext, Steps, is_write_tool
from ._scope import _json_values

__all__ = ["CONTROL_FACTOR", "INTEGER_MIN", "NEAR_UNITS_WRITTEN", "NEAR_WRITE_ADVICE", "NearStatedValue", "NearValue",
           "NearValueControl", "PRECISE_WRITTEN_UNITS", "PreciseWrittenValue", "SIBLING_ITEMS", "SiblingEntity",
           "StatedNearControl", "argument_precision", "integer_moves", "near_moves", "near_write_probes"]

#: The near move is at least this many units of the number's last stated digit (one unit of the digit before).
NEAR_UNITS_WRITTEN = 10
#: The control moves the number this many times as far (3 % becomes 30 %: plainly wrong).
CONTROL_FACTOR = 10
#: ``sibling_entity`` plays at most this many items.
SIBLING_ITEMS = 6

NEAR_WRITE_ADVICE = {
    "near_value": "a written number moved a few percent (or ten units of its last digit) earns the full score: "
                  "compare it with the tolerance of its stated precision (half a unit of the last digit), "
                  "never a loose absolute or relative one",
    "precise_written_value": "a written number a few units of the precision its argument states off (78.8 cm for "
                             "78.5 cm, to 0.1 cm) earns the full score: compare it at that precision, never within a "
                             "whole unit",
    "near_stated_value": "a stated number moved a few percent (or ten units of its last digit) earns the full "
                         "score: compare it with the tolerance of its stated precision, never a loose one",
    "sibling_entity": "the task done on another entity with the same attributes (the zone next door growing the "
                      "same crop) earns reward: check WHICH entity was changed (the one the task names), not "
                      "only that some entity has the right attributes",
}

_EPS = 1e-6


def _decimal_text(value: Any) -> str | None:
    """The text of a non-integer number as the gold states it: a float's shortest repr (``24.0``), or a
    string's one value number with a decimal point; ``None`` otherwise (an int, an exponent, no point)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        text = repr(value)
        return text if math.isfinite(value) and "." in text and "e" not in text.lower() else None
    return None


def near_moves(raw: str, down: bool) -> tuple[float, float] | None:
    """``(near value, control value)`` of the number ``raw`` (digits, thousands separators, a decimal
    point: ``"4.35"``, ``"1,234.50"``): moved by the near move ``d`` (module docstring) and by
    :data:`CONTROL_FACTOR` ``× d``, down when ``down`` and the control keeps the sign, else up; ``None``
    for a number without a decimal point or zero."""
    text = raw.replace(",", "")
    if "." not in text:
        return None
    value = float(text)
    if not value or not math.isfinite(value):
        return None
    decimals = len(text.split(".")[1])
    unit = 10.0 ** -decimals
    # strictly past 3 %: one stated unit beyond it (54.00 moves 1.63, not 1.62: a careful 3 % tolerance, with
    # its bound included, must not pay the near move — tests/doctor adv_value_twins' permit_three_percent)
    d = max((math.floor(round(NEAR_SHIFT * abs(value) / unit, 6)) + 1) * unit, NEAR_UNITS_WRITTEN * unit)
    sign = -1 if down and abs(value) > CONTROL_FACTOR * d else 1
    sign *= 1 if value > 0 else -1  # "up" is away from zero
    return round(value + sign * d, decimals), round(value + sign * CONTROL_FACTOR * d, decimals)


def _moved_text(raw: str, down: bool, control: bool) -> str | None:
    moves = near_moves(raw, down)
    if moves is None:
        return None
    decimals = len(raw.replace(",", "").split(".")[1])
    return _format_like(raw, abs(moves[1 if control else 0]), decimals)


def _replace_decimals(text: str, down: bool, control: bool) -> str | None:
    """``text`` with every value number that has a decimal point moved (:func:`near_moves`), integers and
    identifiers kept; ``None`` when there is none."""
    found = [m for m in value_numbers(text) if "." in m.group()]
    if not found:
        return None
    out, last = [], 0
    for m in found:
        new = _moved_text(m.group(), down, control)
        if new is None:
            return None
        out += [text[last:m.start()], new]
        last = m.end()
    return "".join([*out, text[last:]])


#: ``near_value`` moves written integers of at least this size too (an amount in cents or pence, a weight in
#: kilograms): one unit either way may be rounding, ten units and 3 % are not.
INTEGER_MIN = 1000


def integer_moves(value: int, down: bool) -> tuple[int, int] | None:
    """``(near value, control value)`` of an integer ``value`` with ``|value| >= INTEGER_MIN``: moved by
    ``d = max(floor(3 % of |value|) + 1, NEAR_UNITS_WRITTEN)`` (strictly past 3 %, as :func:`near_moves`) and by
    ``CONTROL_FACTOR × d``, down when ``down`` and the control keeps the sign, else up (away from zero);
    ``None`` for a smaller one (``neighbour_value`` plays ±1 there)."""
    if abs(value) < INTEGER_MIN:
        return None
    d = max(math.floor(NEAR_SHIFT * abs(value)) + 1, NEAR_UNITS_WRITTEN)
    sign = (-1 if down and abs(value) > CONTROL_FACTOR * d else 1) * (1 if value > 0 else -1)
    return value + sign * d, value + sign * CONTROL_FACTOR * d


def _written_change(value: Any, down: bool) -> dict[str, Any] | None:
    """``{"control", "probe"}`` for a written argument value holding one non-integer number, or an integer of at
    least :data:`INTEGER_MIN` (doctor36's auction: a buyer's premium in pence accepted within one point of its
    rate), else ``None``."""
    if isinstance(value, int) and not isinstance(value, bool):
        whole = integer_moves(value, down)
        return None if whole is None else {"probe": whole[0], "control": whole[1]}
    raw = _decimal_text(value)
    if raw is not None:
        moves = near_moves(raw, down)
        return None if moves is None else {"probe": moves[0], "control": moves[1]}
    if not isinstance(value, str) or _free_text(value) or len(value_numbers(value)) != 1:
        return None
    m = value_number(value)
    if m is None or "." not in m.group():
        return None
    near, wrong = _moved_text(m.group(), down, False), _moved_text(m.group(), down, True)
    if near is None or wrong is None:
        return None
    return {"probe": value[:m.start()] + near + value[m.end():], "control": value[:m.start()] + wrong + value[m.end():]}


def _turn(control: _Control, item: Mapping[str, Any]) -> int:
    """The item's turn among the control's chosen items (while choosing: the number chosen so far)."""
    index = control._context.index_of(item)
    return sorted(control.items).index(index) if index in control.items else len(control.items)


class NearValueControl(_Control):
    """``near_value_control`` (module table)."""

    reason = ("the gold changes nothing, no write of it has a non-integer number (or an integer of 1000 or more) "
              "besides its target, or the probe's items are already chosen")
    changes_end_state = True

    def options(self, item: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Every (effective gold write, argument besides the first) holding a non-integer number."""
        actions = item.get(self.actions_field) or []
        down = _turn(self, item) % 2 == 1
        out = []
        for i in self._context.effective_writes(item, self.actions_field):
            call = actions[i] if i < len(actions) else None
            if not isinstance(call, Mapping) or not isinstance(call.get("arguments"), Mapping):
                continue
            for arg, value in list(call["arguments"].items())[1:]:
                found = _written_change(value, down)
                if found is not None:
                    out.append({"position": i, "tool": str(call["name"]), "argument": arg, "from": value, **found})
        return out

    def change(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """Option ``k mod n`` for the ``k``-th chosen item (the numbers shared out over the items)."""
        options = self.options(item)
        return options[_turn(self, item) % len(options)] if options else None

    def counterfactual(self, item: Mapping[str, Any], calls: Sequence[Any]) -> bool:
        """Whether the changed write was accepted."""
        found = self.change(item)
        if found is None or len(calls) <= found["position"]:
            return False
        return bool(getattr(calls[found["position"]], "ok", False))


class NearValue(_Judged, NearValueControl):
    """``near_value`` (module table): ``must_lower`` where ``near_value_control`` scored less than the gold."""

    must_lower = True


#: ``precise_written_value`` moves the written number this many units of the precision its argument states.
PRECISE_WRITTEN_UNITS = 3


def argument_precision(item: Mapping[str, Any], tool: str, argument: str) -> float | None:
    """The precision under one unit that the description of ``tool``'s ``argument`` in the item's tool schemas
    states (``to 0.1 cm`` → 0.1, ``to the cent`` → 0.01: :func:`~._near_probes.stated_precision`), or ``None``."""
    for schema in item.get("tools") or []:
        name, properties, _ = _parameters(schema) if isinstance(schema, Mapping) else ("", {}, [])
        if name == tool and isinstance(properties.get(argument), Mapping):
            found = stated_precision([str(properties[argument].get("description") or "")])
            return found if found is not None and found < 1 else None
    return None


#: A precision a message states as a unit (``the toe depth to the centimetre``), its scale in the dimension's base
#: unit (metre, kilogram, litre).
_UNIT_PRECISION = re.compile(r"\bto the (?:nearest )?(?P<unit>millimet(?:re|er)|centimet(?:re|er)|met(?:re|er)|"
                             r"gram(?:me)?|kilogram(?:me)?|millilit(?:re|er)|lit(?:re|er))s?\b", re.I)
_UNIT_SCALE = {"millimet": ("length", 0.001), "centimet": ("length", 0.01), "met": ("length", 1.0),
               "gram": ("mass", 0.001), "kilogram": ("mass", 1.0), "millilit": ("volume", 0.001),
               "lit": ("volume", 1.0)}
#: An argument's unit, from its name's last part (``toe_depth_m``: metres).
_ARGUMENT_UNIT = {"mm": ("length", 0.001), "cm": ("length", 0.01), "m": ("length", 1.0), "km": ("length", 1000.0),
                  "g": ("mass", 0.001), "kg": ("mass", 1.0), "ml": ("volume", 0.001), "l": ("volume", 1.0)}


def prompt_precision(item: Mapping[str, Any], argument: str) -> float | None:
    """The precision under one unit that a sentence of a system or user message states for ``argument``, where the
    sentence names a word of the argument's name (three letters or more, its unit part left out): a number
    (``the weight to 0.1 kg``: :func:`~._near_probes.stated_precision`) or, where the name ends in a unit
    (``toe_depth_m``), a unit of the same dimension (``the toe depth to the centimetre`` → 0.01); else ``None``
    (doctor59's pile register: the depth asked for to the centimetre in the prompt, a 0.5 m slack paid)."""
    parts = [w for w in argument.casefold().split("_") if w]
    unit = _ARGUMENT_UNIT.get(parts[-1]) if len(parts) > 1 else None
    words = [w for w in (parts[:-1] if unit else parts) if len(w) >= 3]
    found: list[float] = []
    for text in prompt_texts(item):
        for sentence in re.split(r"[.;\n](?!\d)", text):
            folded = sentence.casefold()
            if not words or not any(re.search(rf"\b{re.escape(w)}", folded) for w in words):
                continue
            stated = stated_precision([sentence])
            if stated is not None and stated < 1:
                found.append(stated)
            for m in _UNIT_PRECISION.finditer(sentence):
                key = next(k for k in sorted(_UNIT_SCALE, key=len, reverse=True) if m["unit"].casefold().startswith(k))
                dimension, scale = _UNIT_SCALE[key]
                if unit is not None and unit[0] == dimension and scale / unit[1] < 1:
                    found.append(scale / unit[1])
    return min(found) if found else None


class PreciseWrittenValue(_Judged, NearValueControl):
    """``precise_written_value`` (module table): ``must_lower`` where ``near_value_control`` scored less than the
    gold."""

    must_lower = True

    def change(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """The control's change with :data:`PRECISE_WRITTEN_UNITS` units of the argument's stated precision on
        the probe's side; ``None`` where the argument states none, or the gold's float is not written at it."""
        found = self.reference.change(item)
        value = None if found is None else found["from"]
        if found is None or not isinstance(value, float) or not math.isfinite(value):
            return None
        precision = argument_precision(item, found["tool"], found["argument"])
        if precision is None:
            precision = prompt_precision(item, found["argument"])
        if precision is None or abs(round(value / precision) * precision - value) > precision / 100:
            return None
        places = max(0, -math.floor(math.log10(precision) + 1e-9))
        down = _turn(self.reference, item) % 2 == 1 and value - PRECISE_WRITTEN_UNITS * precision >= 0
        return {**found, "probe": round(value + (-1 if down else 1) * PRECISE_WRITTEN_UNITS * precision, places)}


class StatedNearControl(_Control):
    """``stated_near_control`` (module table)."""

    reason = ("the gold changes nothing (adv_near_miss plays the answer there), the reference states no "
              "non-integer value number, or the probe's items are already chosen")

    def change(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """The reference with its non-integer value numbers moved (control: ten times as far)."""
        answer = item.get(self.answer_field)
        if not isinstance(answer, str) or not self._context.effective_writes(item, self.actions_field):
            return None
        down = _turn(self, item) % 2 == 1
        probe, control = _replace_decimals(answer, down, False), _replace_decimals(answer, down, True)
        if probe is None or control is None:
            return None
        return {"position": None, "from": answer, "control": control, "probe": probe}

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The changed answer."""
        _, value = self._value(item)
        return str(value) if value is not None else str(item[self.answer_field])


class NearStatedValue(_Judged, StatedNearControl):
    """``near_stated_value`` (module table): ``must_lower`` where ``stated_near_control`` scored less than the
    gold."""

    must_lower = True


def _records(outputs: Sequence[str]) -> list[dict[str, Any]]:
    """The top-level scalar fields of each JSON-object output (one record per output)."""
    out = []
    for value in _json_values(outputs):
        if isinstance(value, Mapping):
            out.append({str(k): v for k, v in value.items() if isinstance(v, (str, int, float))
                        and not isinstance(v, bool)})
    return out


def _named(value: Any, texts: Sequence[str]) -> bool:
    """Whether ``value`` (a string or an int) appears as a whole token in one of ``texts``."""
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        return False
    pattern = re.compile(rf"(?<![\w-]){re.escape(str(value))}(?![\w-])")
    return any(pattern.search(t) for t in texts)


class SiblingEntity(_ContextProbe):
    """``sibling_entity`` (module table)."""

    changes_end_state = True

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = SIBLING_ITEMS,
                 **kwargs: Any) -> None:
        super().__init__(write_tools, reason="the gold changes nothing, its first write's target is no entity the "
                         "user message names, no other item's gold read shows an entity with the same used "
                         "attributes, or the probe's items are already chosen", **kwargs)
        self.max_items = max_items
        self._chosen: dict[int, dict[str, Any]] = {}
        self._read_cache: dict[int, list[tuple[Mapping[str, Any], dict[str, Any]]]] = {}

    def _reads(self, index: int) -> list[tuple[Mapping[str, Any], dict[str, Any]]]:
        """``(gold read call, its output's record)`` for item ``index``: the gold replay's outputs aligned with
        the calls that succeeded (``[]`` where they cannot be aligned: an empty output is not kept); computed
        once per item of the prepared dataset."""
        if index not in self._read_cache:
            self._read_cache[index] = self._own_reads(index)
        return self._read_cache[index]

    def _own_reads(self, index: int) -> list[tuple[Mapping[str, Any], dict[str, Any]]]:
        item = self._context.items[index]
        actions = item.get(self.actions_field) or []
        ok = self._context.gold_ok[index] if index < len(self._context.gold_ok) else []
        outputs = self._context.gold_outputs[index] if index < len(self._context.gold_outputs) else []
        done = [i for i, k in enumerate(ok) if k]
        if len(ok) != len(actions) or len(done) != len(outputs):
            return []
        out = []
        for i, text in zip(done, outputs):
            call = actions[i]
            if not isinstance(call, Mapping) or is_write_tool(str(call.get("name")), self.write_tools) \
                    or not isinstance(call.get("arguments"), Mapping):
                continue
            records = _records([text])
            if records:
                out.append((call, records[0]))
        return out

    def _option(self, index: int) -> dict[str, Any] | None:
        item = self._context.items[index]
        if not self._has_gold(item):
            return None
        actions = item[self.actions_field]
        writes = self.writes_of(item)
        if not writes or not isinstance(actions[writes[0]].get("arguments"), Mapping) \
                or not actions[writes[0]]["arguments"]:
            return None
        target = next(iter(actions[writes[0]]["arguments"].values()))
        user = prompt_texts(item, ("user",))
        if not _named(target, user):
            return None
        mine = [(c, r) for c, r in self._reads(index) if target in c["arguments"].values()]
        if not mine:
            return None
        call, record = mine[0]
        later = [v for a in actions[actions.index(call) + 1:] if isinstance(a, Mapping)
                 for v in (a.get("arguments") or {}).values()]
        used = {f: v for f, v in record.items() if v != target and any(
            type(v) is type(w) and (v == w or (isinstance(v, str) and v.casefold() == str(w).casefold()))
            for w in later)}
        if not used:
            return None
        arg = next(k for k, v in call["arguments"].items() if v == target)
        passed = {json.dumps(v, default=str) for a in actions if isinstance(a, Mapping)
                  for v in (a.get("arguments") or {}).values()}
        alternatives = json.dumps(item.get("alternatives") or [], default=str)
        for step in range(1, len(self._context.items)):
            j = (index + step) % len(self._context.items)
            for other, rec in self._reads(j):
                if other.get("name") != call.get("name"):
                    continue
                sibling = other["arguments"].get(arg)
                if type(sibling) is not type(target) or sibling == target or json.dumps(sibling) in passed \
                        or json.dumps(sibling) in alternatives:
                    continue
                if all(rec.get(f) == v for f, v in used.items()):
                    return {"target": target, "sibling": sibling, "attributes": used, "from_item": j}
        return None

    def prepare(self, context: ProbeContext) -> None:
        """Choose the first ``max_items`` items with a sibling entity."""
        super().prepare(context)
        self._chosen, self._read_cache = {}, {}
        for i in range(len(context.items)):
            if len(self._chosen) >= self.max_items:
                break
            option = self._option(i)
            if option is not None:
                self._chosen[i] = option

    def choice(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """The retargeting played on ``item`` (``None``: not chosen)."""
        index = self._context.index_of(item)
        return self._chosen.get(index) if index is not None else None

    def applies(self, item: Mapping[str, Any]) -> bool:
        """One of the chosen items."""
        return self.choice(item) is not None

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls with every argument equal to the target set to the sibling."""
        option = self.choice(item)
        if option is None:
            return []
        out = []
        for a in item[self.actions_field]:
            arguments = {k: (option["sibling"] if type(v) is type(option["target"]) and v == option["target"] else v)
                         for k, v in (a.get("arguments") or {}).items()}
            out.append([{**a, "arguments": arguments}])
        return out

    def counterfactual(self, item: Mapping[str, Any], calls: Sequence[Any]) -> bool:
        """Whether every retargeted gold write was accepted."""
        writes = self.writes_of(item)
        return bool(writes) and all(w < len(calls) and bool(getattr(calls[w], "ok", False)) for w in writes)

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """``{"from": target, "to": sibling, "attributes": the used attributes both share}``."""
        option = self.choice(item)
        if option is None:
            return {}
        return {"from": option["target"], "to": option["sibling"],
                "attributes": {k: str(v)[:60] for k, v in option["attributes"].items()}}


def near_write_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name (each control before its probe; each ``intent`` ``hack``)."""
    written, stated = NearValueControl(write_tools, **fields), StatedNearControl(write_tools, **fields)
    out: dict[str, Any] = {
        "near_value_control": written,
        "near_value": NearValue(written, write_tools, **fields),
        "precise_written_value": PreciseWrittenValue(written, write_tools, **fields),
        "stated_near_control": stated,
        "near_stated_value": NearStatedValue(stated, write_tools, **fields),
        "sibling_entity": SiblingEntity(write_tools, **fields),
    }
    for probe in out.values():
        probe.intent = HACK
    return out

