"""Another listed choice (issue 37, doctor14's ``mailroom__size_blind``, doctor16's ``moving__any_fitting_truck``,
doctor17's ``allotment__any_plot_of_member``): the task picks one of the entities a read lists by a rule
(the smallest free truck that holds the load, the plot the member asked for), and a grader checks only that
the entity written is *a* valid-looking one. ``altered_writes`` retargets a write at the first sibling it
finds, which the tools often refuse (a truck too small), so such a grader is never paid there.

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
other_listed_choice       one argument of one gold write whose gold value a read before the write
                          listed among others of its kind (``_scope.sibling_values`` of the gold
                          replay's JSON outputs: the trucks ``list_trucks`` showed; else, for an
                          id with a digit, the other tokens of its shape in a plain-text output
                          that shows it: ``P03 (20 m2); P05 (30 m2)``), set to another of them: the ``k``-th item played takes sibling
                          ``k mod n``, so different ones are tried, those whose id holds the gold's
                          first (``kite-express`` for ``kite``: a grader comparing ids with ``in``
                          pays it, doctor20); then the reference with the
                          gold's entity, where it names it, named as the one written, and each
                          figure it states that derives from the entity's record restated for
                          the one written (:func:`restated_figures`: ``U03 for 3 months: $135.00``
                          → ``U05 for 3 months: $165.00``). Judged
                          where the end state differs from the gold's. Intent **shortcut**:
                          rewarded, it WARNs, it does not FAIL; only on items that list no
                          ``alternatives``
unlisted_choice           the same on items that list ``alternatives`` (the dataset says which
                          other paths are valid, and none writes this sibling: a listed one is
                          never played): intent **hack** (doctor26's print farm: a printer of the
                          job's material with the wrong nozzle)
named_listed_choice       the same change where the user's own words tell the sibling apart: a word
                          (3+ letters) of a user message that the gold's listed record holds and the
                          sibling's does not (``for her Transit van``: ``MD71 RRA (Ford Transit van)``
                          beside ``MD19 KLP (Honda Civic)``, :func:`record_texts`). Intent **hack**:
                          the user named the entity (doctor27's parking permits)
ranked_listed_choice      the same change where the prompt, or a gold tool output, states the rule that
                          ranks the listed entities (:data:`RANKING`: the nearest, the cheapest, the
                          earliest free, the fewest shifts: doctor36's polling station; the first of a
                          kind in the list: doctor53's gliding club):
                          the sibling is the **runner-up**, the listed record most like the gold's
                          (:func:`runner_up`: the same zero/non-zero and true/false fields, the
                          nearest numbers and clock times; a record is the listing's, else the
                          read of that entity alone: :func:`read_records`), never a tie (equal on
                          every field but its id and names); the
                          answer restated as above, its text fields too (``10:30`` → ``11:00``,
                          ``Gate 12`` → ``Big top bar``); a later gold write's number that derives
                          from the gold entity's record restated for the runner-up's too
                          (:func:`restated_writes`: ``charge_difference(amount_pence=1400)``, the seat's
                          6200 less the 4800 paid, becomes 6800 less 4800 for a seat at 6800: doctor65's
                          seat moves). Intent **hack**: the prompt asked for one entity and the gold's
                          end state is the only right one
========================= ==========================================================================

**Why a runner-up** (doctor23's ``barber__any_slot``, doctor24's ``volunteers__twin_b``): a grader that checks
only that the slot booked is a free one, or that the post is within 0.5 km of the nearest, pays the next-best
entity; the ``k``-th sibling is often full, and the tools refuse it. **What it can get wrong, and the guard**: a
task whose rule ties (two posts equally near, two lockers of one size) accepts either, so a sibling equal to
the gold's on every field but its id and names is never played; one whose answer names the entity through a read the gold did not make (the supplier of
another product) cannot be restated, and that grader scores the mismatch low (no alarm, a miss).

**Why the figures too** (doctor17's ``storage__self_consistent``): a grader that checks the answer against the
model's own write (the total quoted is the written unit's price times the months) and never that the write was
the right one pays any listed unit whose quote is consistent; the name alone swapped left the gold's total
beside the other unit, and that grader scored it 0. A figure is restated only where it is one of the listed
record's numbers, or one of them times a number the user message states (the months); others stay as they are.

**Why a WARN** (``other_listed_choice``). A grader paid by another listed entity either checks too little (any truck that fits, where
the task asks for the smallest), or the task really accepts any of them and the dataset does not say so:
then the item should list the others as ``alternatives`` (``gradeable`` checks they are paid), and the WARN
says which. An honest grader that compares the end state with the gold's, or re-derives the rule, scores
the other choice low and stays silent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from typing import Any

from ._answer_numbers import styled
from ._answers import prompt_texts
from ._dataset_probes import AlteredWrites, value_shape
from ._near_probes import value_numbers
from ._probes import SHORTCUT, Steps
from ._scope import _json_values, json_leaves, sibling_values
from ._value_probes import _Capped

__all__ = ["CHOICE_ADVICE", "RANKING", "NamedListedChoice", "OtherListedChoice", "RankedListedChoice", "choice_probes",
           "listed_records", "read_records", "record_texts", "restated_figures", "restated_text", "runner_up"]

_TOKEN = re.compile(r"[\w-]+")

#: A prompt that ranks the entities it asks for: one of them is right, the others are not.
RANKING = re.compile(r"\b(?:nearest|closest|cheapest|least expensive|lowest|earliest|soonest|smallest|largest|"
                     r"biggest|highest|latest|shortest|longest|fastest|quickest|fewest|most recent|newest|oldest|"
                     r"first (?:free|open|available|empty)|"
                     # list order as the rule: "the first glider of that type in the fleet list" (doctor53's gliding)
                     r"first (?:[\w-]+ ){1,6}(?:in|on) the (?:[\w-]+ )?(?:list|listing|rota|register))\b", re.I)

CHOICE_ADVICE = {
    "other_listed_choice": "another entity a read listed (another truck, plot or locker than the gold's) earns the "
                           "gold's score: check the rule that picks the entity (the smallest that fits, the one "
                           "asked for) or compare with the gold's end state; if the task accepts any of them, list "
                           "the others as the item's alternatives",
    "unlisted_choice": "another entity a read listed, which the item's own alternatives do not list, earns the "
                       "gold's score: check the rule that picks the entity (material, size, level), or list every "
                       "entity the task accepts as an alternative",
    "named_listed_choice": "another entity a read listed, which the user's own words tell apart from the one asked "
                           "for (their Transit van, not their Civic), earns the gold's score: check the entity "
                           "written is the one the user named (or compare with the gold's end state)",
    "ranked_listed_choice": "the runner-up entity (the next nearest, cheapest or earliest a read listed, with its "
                            "answer restated) earns the gold's score though the prompt asks for the best: re-derive "
                            "the rule from the listing (or compare the end state with the gold's), not only that "
                            "the entity written is a valid one",
}


class OtherListedChoice(_Capped):
    """``other_listed_choice`` (module table)."""

    no_candidate = ("the gold changes nothing, or no write has an argument whose value a read before it listed "
                    "among others of its kind")
    #: restate the record's text fields in the answer too (:func:`restated_text`)
    restate_text = False
    #: play only items that list ``alternatives`` (True), only items that do not (False), or every item (None)
    with_alternatives: bool | None = None

    def own_candidates(self, item: Mapping[str, Any], writes: Collection[int] | None = None) -> list[dict[str, Any]]:
        """:meth:`AlteredWrites.candidates` whose new value is a sibling listed by the gold's reads before the
        write (the item's turn picks which)."""
        alternatives = item.get("alternatives")
        if self.with_alternatives is not None and (isinstance(alternatives, list) and bool(alternatives)) \
                != self.with_alternatives:
            return []
        index = self._context.index_of(item)
        self._turn = index or 0
        self._listed: list[Any] = []
        self._texts: list[str] = []
        outputs = self._context.gold_outputs[index] if index is not None and index < len(
            self._context.gold_outputs) else []
        out = []
        for position in sorted(self._context.effective_writes(item, self.actions_field) if writes is None
                               else writes):
            self._listed = _json_values(outputs[:position])
            self._texts = [o for o in outputs[:position] if isinstance(o, str)]
            out += [o for o in AlteredWrites.candidates(self, item, [position]) if o["source"] == "listed choice"]
        self._listed, self._texts = [], []
        return out

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The reference with the gold's entity, where it names it (a whole word), named as the one written, and
        its figures derived from the entity's listed record restated for the other's (:func:`restated_figures`);
        with :attr:`restate_text`, its text fields too (:func:`restated_text`), whatever the id's type (a slot
        number's start time)."""
        reference = str(item.get(self.answer_field) or "")
        option = self.choice(item)
        named = option is not None and isinstance(option["from"], str) and isinstance(option["to"], str)
        if option is None or not (named or self.restate_text):
            return reference
        index = self._context.index_of(item)
        outputs = self._context.gold_outputs[index] if index is not None and index < len(
            self._context.gold_outputs) else []
        records = listed_records(option["from"], option["to"], _json_values(outputs[:option["position"]]))
        if records is not None:
            factors = [float(m.group().replace(",", "")) for text in prompt_texts(item, ("user",))
                       for m in value_numbers(text)]
            reference = restated_figures(reference, *records, factors)
            if self.restate_text:
                reference = restated_text(reference, *records, option["from"])
        if not named:
            return reference
        return re.sub(rf"(?<![\w-]){re.escape(option['from'])}(?![\w-])", lambda m: option["to"], reference)

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """As ``altered_writes``', with the answer played."""
        described = super().describe(item)
        return {**described, "answer": self.final_answer(item)[:160]} if described else described

    def _new_value(self, tool: str, arg: str, value: Any, sources: list[Any], exclude: Collection[str],
                   arguments: Mapping[str, Any] | None = None) -> tuple[Any, str] | None:
        """Sibling ``turn mod n`` of :meth:`listed_siblings`; source ``"listed choice"``."""
        siblings = self.listed_siblings(tool, arg, value, exclude)
        return (siblings[getattr(self, "_turn", 0) % len(siblings)], "listed choice") if siblings else None

    def listed_siblings(self, tool: str, arg: str, value: Any, exclude: Collection[str]) -> list[Any]:
        """The siblings of ``value`` that the reads before the write listed, with its :func:`value_shape` (or
        holding its id, those first); never one this item's gold passes to the same argument."""
        taken = self._taken.get((tool, arg), set())
        listed = [v for v in sibling_values(value, getattr(self, "_listed", []), exclude)
                  if json.dumps(v, sort_keys=True) not in taken]
        # its shape, or any shape holding the gold's id (kite-express beside kite: doctor20's freight)
        siblings = [v for v in listed if value_shape(v) == value_shape(value)
                    or (isinstance(v, str) and isinstance(value, str) and value and value.casefold() in v.casefold())]
        if not siblings and isinstance(value, str) and value.strip():  # a listing in plain text: "P03 (20 m2); P05"
            siblings = [t for t in _listed_tokens(value, getattr(self, "_texts", []))
                        if json.dumps(t) not in taken and json.dumps(t) not in exclude]
        if siblings and isinstance(value, str) and value:  # one whose id holds the gold's first: kite-express, kite
            siblings.sort(key=lambda v: not (isinstance(v, str) and value.casefold() in v.casefold()))
        return siblings


class RankedListedChoice(OtherListedChoice):
    """``ranked_listed_choice`` (module table): :class:`OtherListedChoice` on the items whose prompt ranks the
    entities (:data:`RANKING`), with the :func:`runner_up` for sibling."""

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The altered gold calls, the other writes passing the gold's entity under the same argument passing the
        runner-up too (doctor73's release: staging, then production, one build), and the later writes' numbers that
        derive from the entity's record restated for the runner-up's (:func:`restated_writes`), one per turn."""
        steps = super().plan(item)
        option = self.choice(item)
        index = self._context.index_of(item)
        if option is None or index is None or index >= len(self._context.gold_outputs):
            return steps
        writes = set(self._context.effective_writes(item, self.actions_field))
        argument = str(option.get("altered", "")).partition(".")[2]
        for k in sorted(writes - {option["position"]}):  # the same choice carried through: staging, then production
            call = steps[k][0] if k < len(steps) else None
            arguments = call.get("arguments") if isinstance(call, Mapping) else None
            if isinstance(arguments, Mapping) and argument and arguments.get(argument) == option["from"]:
                steps[k] = [{**call, "arguments": {**arguments, argument: option["to"]}}]  # type: ignore[dict-item]
        outputs = self._context.gold_outputs[index]
        listed = _json_values(outputs[:option["position"]])
        records = listed_records(option["from"], option["to"], listed) or read_records(option["from"], option["to"],
                                                                                        listed)
        if records is None:
            return steps
        known = {abs(float(v)) for v in json_leaves(list(outputs)) if isinstance(v, (int, float))
                 and not isinstance(v, bool)}
        actions = restated_writes([step[0] for step in steps], [k for k in writes if k > option["position"]],
                                  *records, known)
        return [[a] for a in actions]

    #: let :func:`runner_up` pick a tie too (``excused_listed_choice``: judged against the same choice unexcused)
    ties = False
    no_candidate = ("the prompt states no rule that ranks the listed entities (the nearest, the cheapest, the "
                    "earliest), or no write's argument is an entity a read listed with its record beside others")
    restate_text = True

    def own_candidates(self, item: Mapping[str, Any], writes: Collection[int] | None = None) -> list[dict[str, Any]]:
        """:meth:`OtherListedChoice.own_candidates` where a system or user message matches :data:`RANKING`."""
        index = self._context.index_of(item)
        outputs = self._context.gold_outputs[index] if index is not None and index < len(
            self._context.gold_outputs) else []
        if not any(RANKING.search(t) for t in [*prompt_texts(item), *(o for o in outputs if isinstance(o, str))]):
            return []
        return super().own_candidates(item, writes)

    def _new_value(self, tool: str, arg: str, value: Any, sources: list[Any], exclude: Collection[str],
                   arguments: Mapping[str, Any] | None = None) -> tuple[Any, str] | None:
        """The :func:`runner_up` of ``value`` among the siblings the reads before the write listed with records; where
        the gold read every one of them (to rank them: doctor36's polling station), among those it read but never
        wrote to this argument."""
        taken = self._taken.get((tool, arg), set())
        listed = getattr(self, "_listed", [])
        best = None
        for excluded in (exclude, ()):
            siblings = [v for v in sibling_values(value, listed, excluded)
                        if json.dumps(v, sort_keys=True) not in taken]
            best = runner_up(value, siblings, listed, ties=self.ties)
            if best is not None:
                break
        return None if best is None else (best, "listed choice")


_CLOCK = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*$")


def _minutes(value: Any) -> int | None:
    m = _CLOCK.match(value) if isinstance(value, str) else None
    return int(m[1]) * 60 + int(m[2]) if m else None


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return _minutes(value)


def _weight(a: Any, b: Any) -> float:
    """How unlike two values of one field of two listed records are: 0 alike; 2 where one is zero, false or
    empty and the other not (a full slot beside a free one); the relative gap of two numbers (clock times
    ``HH:MM`` as minutes); else 1 for two different values."""
    if bool(a) != bool(b):
        return 2.0
    x, y = _number(a), _number(b)
    if x is not None and y is not None:
        return abs(x - y) / (abs(x) + abs(y)) if x != y else 0.0
    return 0.0 if a == b else 1.0


def _named(value: Any) -> bool:
    """A value that names rather than ranks: text of 4+ characters without a digit (a post's name)."""
    return isinstance(value, str) and len(value.strip()) >= 4 and not any(c.isdigit() for c in value)


def runner_up(value: Any, siblings: list[Any], sources: list[Any], *, ties: bool = False) -> Any | None:
    """The sibling of ``value`` whose listed record (:func:`listed_records`) is most like ``value``'s (the
    sum of :func:`_weight` over the fields both have); never a **tie**, a record equal to the gold's on every
    field but its id and its names (:func:`_named`: another locker of the same size, another post as near),
    which a rule may accept, unless ``ties`` (a probe judged against the same choice without its one change);
    ``None`` when no sibling has a record. First listed wins a draw."""
    scored = []
    for position, other in enumerate(siblings):
        for records in (listed_records(value, other, sources), read_records(value, other, sources)):
            if records is None:
                continue
            mine, theirs = records
            shared = [k for k in mine if k in theirs]
            ranked = [k for k in shared if mine[k] not in (value, other) and theirs[k] not in (value, other)
                      and not (_named(mine[k]) and _named(theirs[k]))]
            if not ties and all(mine[k] == theirs[k] for k in ranked):
                continue  # a tie: the rule may accept either
            scored.append((sum(_weight(mine[k], theirs[k]) for k in shared), position, other))
            break
    return min(scored, key=lambda t: t[:2])[2] if scored else None


def read_records(value: Any, other: Any, sources: list[Any]) -> tuple[Mapping[str, Any], Mapping[str, Any]] | None:
    """The records of ``value`` and ``other`` where each is a read of its own (``get_staff("S-11")`` →
    ``{"staff_id": "S-11", "prior_shifts": 3}``, doctor36's polling station: the listing names the members, one
    read per member gives the figures the rule ranks): the one top-level object of ``sources`` whose field holds
    ``value`` and the one whose same field holds ``other``; ``None`` otherwise."""
    objects = [o for o in sources if isinstance(o, Mapping)]
    for field in dict.fromkeys(k for o in objects for k in o):
        mine = [o for o in objects if o.get(field) == value]
        theirs = [o for o in objects if o.get(field) == other]
        if len(mine) == 1 and len(theirs) == 1:
            return mine[0], theirs[0]
    return None


def restated_text(text: str, record: Mapping[str, Any], other: Mapping[str, Any], written: Any) -> str:
    """``text`` with each text field of ``record`` (2+ characters, not ``written``: the id is renamed by the
    caller) that it holds as a whole token replaced by the same field of ``other``, longest first:
    ``"booked at 10:30"`` with ``{"start": "10:30"}`` and ``{"start": "11:00"}`` → ``"booked at 11:00"``."""
    pairs = sorted(((str(record[k]), str(other[k])) for k in record
                    if isinstance(record[k], str) and isinstance(other.get(k), str) and record[k] != other[k]
                    and len(record[k].strip()) >= 2 and record[k] != written), key=lambda p: -len(p[0]))
    for old, new in pairs:
        text = re.sub(rf"(?<![\w:.-]){re.escape(old)}(?![\w:-])", new.replace("\\", "\\\\"), text)
    return text


def _listed_tokens(value: str, texts: list[str]) -> list[str]:
    """The other tokens (runs of letters, digits, ``_`` and ``-``) of the outputs in ``texts`` that show
    ``value`` as a token, with ``value``'s :func:`value_shape` and holding a digit, in order: the other entries
    of a plain-text listing (``"P03 (20 m2); P05 (30 m2)"``: ``P05``)."""
    if not any(c.isdigit() for c in value):
        return []
    out: dict[str, None] = {}
    spaced = len(value.split()) > 1
    pattern = _char_pattern(value) if spaced else None
    for text in texts:
        if pattern is not None:  # a value of several words (a plate "MD71 RRA"): others of its exact character classes
            found = [m.group() for m in pattern.finditer(text)]
            if value in found:
                out.update(dict.fromkeys(t for t in found if t != value))
            continue
        tokens = _TOKEN.findall(text)
        if value in tokens:
            out.update(dict.fromkeys(t for t in tokens if t != value and value_shape(t) == value_shape(value)))
    return list(out)


def _char_pattern(value: str) -> re.Pattern[str]:
    """A whole-token pattern of ``value``'s characters by class, each run's length kept: ``"MD71 RRA"`` →
    ``[A-Z]{2}[0-9]{2} [A-Z]{3}``; other characters literal."""
    parts = []
    for run in re.finditer(r"[A-Z]+|[a-z]+|[0-9]+|[^A-Za-z0-9]", value.strip()):
        text = run.group()
        cls = "[A-Z]" if text.isupper() and text.isalpha() else "[a-z]" if text.isalpha() else \
            "[0-9]" if text.isdigit() else None
        parts.append(f"{cls}{{{len(text)}}}" if cls else re.escape(text))
    return re.compile(r"(?<![\w-])" + "".join(parts) + r"(?![\w-])")


def listed_records(value: Any, other: Any, sources: list[Any]) -> tuple[Mapping[str, Any], Mapping[str, Any]] | None:
    """The records of ``value`` and ``other`` in the first listing of ``sources`` that holds both, or ``None``: a
    mapping's values under those keys (``{"U03": {...}, "U05": {...}}``), the two objects of a list whose same
    field holds them (``[{"unit": "U03", ...}, {"unit": "U05", ...}]``), or, in a mapping of labels to codes, each
    one's label as ``{"label": ...}`` (``{"public": "FD-QO-PUB", "premium": "FD-QO-PRM"}``: doctor68's feeds)."""
    stack = list(sources)
    while stack:
        node = stack.pop(0)
        if isinstance(node, Mapping):
            if isinstance(value, str) and isinstance(other, str) and isinstance(node.get(value), Mapping) \
                    and isinstance(node.get(other), Mapping):
                return node[value], node[other]
            labels = {v: k for k, v in node.items() if isinstance(v, str) and isinstance(k, str)}
            if isinstance(value, str) and isinstance(other, str) and value in labels and other in labels \
                    and len(labels) == len(node):  # labels of codes: {"public": "FD-QO-PUB", "premium": "FD-QO-PRM"}
                return {"label": labels[value]}, {"label": labels[other]}
            stack.extend(node.values())
        elif isinstance(node, list):
            objects = [e for e in node if isinstance(e, Mapping)]
            for field in objects[0] if objects else ():
                mine = [e for e in objects if e.get(field) == value]
                theirs = [e for e in objects if e.get(field) == other]
                if len(mine) == 1 and len(theirs) == 1:
                    return mine[0], theirs[0]
            stack.extend(node)
    return None


def restated_writes(actions: list[dict[str, Any]], positions: Collection[int], record: Mapping[str, Any],
                    other: Mapping[str, Any], known: Collection[float]) -> list[dict[str, Any]]:
    """``actions`` with each number argument of the calls at ``positions`` that derives from a number field of
    ``record`` restated from the same field of ``other``: equal to the field (the field's value), or the field
    plus or less a number of ``known`` (a figure the reads returned: ``1400`` = the seat's ``6200`` less the
    ``4800`` paid → ``6800 - 4800``); the first field that differs between the two records and derives it wins;
    an ``int`` stays an ``int`` where the result is whole."""
    fields = [k for k, v in record.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
              and isinstance(other.get(k), (int, float)) and not isinstance(other.get(k), bool) and other[k] != v]
    out = list(actions)
    for position in positions:
        call = out[position]
        arguments = call.get("arguments")
        if not isinstance(arguments, Mapping):
            continue
        changed = dict(arguments)
        for name, x in arguments.items():
            if not isinstance(x, (int, float)) or isinstance(x, bool):
                continue
            for k in fields:
                offset = x - record[k]
                if offset == 0 or any(_close(abs(offset), n) for n in known):
                    new = other[k] + offset
                    changed[name] = int(new) if isinstance(x, int) and float(new).is_integer() else new
                    break
        if changed != arguments:
            out[position] = {**call, "arguments": changed}
    return out


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def restated_figures(text: str, record: Mapping[str, Any], other: Mapping[str, Any], factors: list[float]) -> str:
    """``text`` with each value number (``_near_probes.value_numbers``: not an id, a date or a time) that is a
    number field of ``record``, or one times a number of ``factors`` (those the user message states: the
    months), replaced by the same field of ``other`` times the same factor, in the number's own format
    (its decimals, more where the new value needs them; thousands separators); the first such field of
    ``record`` wins, exact before multiplied; a number equal to one of ``factors`` is kept (given, not derived).
    ``"$135.00"`` with ``record`` ``{"monthly": 45}``, ``other`` ``{"monthly": 55}`` and factor 3: ``"$165.00"``."""
    fields = [k for k, v in record.items() if isinstance(v, (int, float)) and not isinstance(v, bool) and v
              and isinstance(other.get(k), (int, float)) and not isinstance(other.get(k), bool)]
    out, last = [], 0
    for m in value_numbers(text):
        raw = m.group()
        x = float(raw.replace(",", ""))
        if any(_close(x, f) for f in factors):
            continue  # a number the user stated (the months) is given, not derived from the record
        new = next((float(other[k]) for k in fields if _close(x, float(record[k]))), None)
        if new is None:
            new = next((float(other[k]) * f for k in fields for f in factors
                        if f not in (0.0, 1.0) and _close(x, float(record[k]) * f)), None)
        if new is not None:
            out += [text[last:m.start()], styled(new, m)]  # 45 → 55.5, not 56
            last = m.end()
    return "".join([*out, text[last:]])


#: Words too common to tell two listed records apart (``_prompt_words``).
_COMMON = frozenset("the and for with from this that her his their our your you are was has have not but".split())


def _words(text: str) -> set[str]:
    return {w.casefold() for w in re.findall(r"[^\W\d_]{3,}", text)} - _COMMON


def record_texts(value: Any, other: Any, texts: list[str], sources: list[Any]) -> tuple[str, str] | None:
    """The text of ``value``'s and ``other``'s records in the listing a read printed: their JSON records'
    string fields (:func:`listed_records`), else, in the first plain-text output showing both, what follows
    each up to the next listed entity, the end of its line or a ``;`` (``"MD71 RRA (Ford Transit van);
    MD19 KLP (Honda Civic)"`` → ``"(Ford Transit van)"``, ``"(Honda Civic)"``); ``None`` where neither is."""
    records = listed_records(value, other, sources)
    if records is not None:
        return tuple(" ".join(str(v) for k, v in r.items() if isinstance(v, str) and v not in (value, other))
                     for r in records)  # type: ignore[return-value]
    if not (isinstance(value, str) and isinstance(other, str)):
        return None
    for text in texts:
        found = {v: m for v in (value, other)
                 if (m := re.search(rf"(?<![\w-]){re.escape(v)}(?![\w-])", text)) is not None}
        if len(found) < 2:
            continue
        starts = sorted(m.start() for m in found.values())
        return _segment(text, found[value], starts), _segment(text, found[other], starts)
    return None


def _segment(text: str, m: re.Match[str], starts: list[int]) -> str:
    """What follows ``m`` in ``text`` up to the next of ``starts``, the end of its line or a ``;``."""
    end = min([t for t in starts if t > m.start()] + [len(text)])
    return re.split(r"[;\n]", text[m.end():end], maxsplit=1)[0]


class NamedListedChoice(OtherListedChoice):
    """``named_listed_choice`` (module table): :class:`OtherListedChoice` with a sibling the user's own words
    tell apart from the gold's entity: a word (3+ letters) of a user message that the gold's listed record
    holds and the sibling's does not (``"for her Transit van"``, the gold's ``MD71 RRA (Ford Transit van)``
    beside ``MD19 KLP (Honda Civic)``: doctor27's parking permits). The user asked for that one, so the other
    is wrong whatever the task accepts: intent **hack**."""

    no_candidate = ("no write has an argument whose value a read before it listed among others of its kind with a "
                    "record the user's words tell apart (a word of the user message in the gold's record only)")

    def own_candidates(self, item: Mapping[str, Any], writes: Collection[int] | None = None) -> list[dict[str, Any]]:
        """:meth:`OtherListedChoice.own_candidates` with the user's words at hand."""
        self._said: set[str] = set().union(*(_words(t) for t in prompt_texts(item, ("user",))))
        try:
            return super().own_candidates(item, writes)
        finally:
            self._said = set()

    def _new_value(self, tool: str, arg: str, value: Any, sources: list[Any], exclude: Collection[str],
                   arguments: Mapping[str, Any] | None = None) -> tuple[Any, str] | None:
        """The first of :meth:`listed_siblings`, from sibling ``turn mod n`` on (at most 8 tried), whose record the
        user's words tell apart from the gold's (:func:`record_texts`)."""
        said: set[str] = getattr(self, "_said", set())
        siblings = self.listed_siblings(tool, arg, value, exclude) if said else []
        turn = getattr(self, "_turn", 0)
        for k in range(min(len(siblings), 8)):
            other = siblings[(turn + k) % len(siblings)]
            texts = record_texts(value, other, getattr(self, "_texts", []), getattr(self, "_listed", []))
            if texts is not None and (_words(texts[0]) & said) - _words(texts[1]):
                return other, "listed choice"
        return None


def choice_probes(write_tools: Collection[str] | None = None, *, answer_field: str = "reference_answer",
                  actions_field: str = "actions") -> dict[str, Any]:
    """The probes of the module table, by name (``other_listed_choice``: ``intent`` ``shortcut``, it WARNs, on items
    that list no ``alternatives``; ``unlisted_choice``, the same on items that list them: ``hack``, as the item
    says which other paths are valid; ``ranked_listed_choice``: ``hack``)."""
    probe = OtherListedChoice(write_tools, answer_field, actions_field)
    probe.intent, probe.with_alternatives = SHORTCUT, False
    unlisted = OtherListedChoice(write_tools, answer_field, actions_field)
    unlisted.with_alternatives = True
    unlisted.no_candidate = ("the item lists no alternatives (other_listed_choice plays it, as a WARN), or no write "
                             "has an argument whose value a read before it listed among others of its kind")
    return {"other_listed_choice": probe, "unlisted_choice": unlisted,
            "ranked_listed_choice": RankedListedChoice(write_tools, answer_field, actions_field),
            "named_listed_choice": NamedListedChoice(write_tools, answer_field, actions_field)}
