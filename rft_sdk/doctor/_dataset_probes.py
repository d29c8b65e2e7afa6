"""The probes that need the whole dataset (``prepare``): answer-space dump (alone, and after the gold's
work), cross-item replay, altered writes.

See the table of ``_suite`` for what each plays and why it cannot be a solution.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from rft_sdk.emulator import PolicyStep, make_tool_call, turns_taken

from ._answers import (
    ANSWER_LINE,
    TOKEN,
    WORD,
    answer_object,
    enum_values,
    normalize_answer,
    object_dump,
    own_inside,
    prompt_texts,
)
from ._generic import _canonical, _free_text, _parameters, _status_write, annotation_call, schema_enum
from ._probes import HACK, GoldPlanProbe, ProbeContext, Steps, is_write_tool
from ._scope import _NOT_DATA, _json_values, sibling_values

__all__ = ["DONOR_WINDOW", "MAX_DUMP_CHARS", "AlteredWrites", "AnswerSpaceDump", "CrossItemReplay", "WorkThenDump",
           "described_prose", "has_wildcard", "item_values", "prose_fields", "template_fields"]

#: Largest answer-space dump, characters (the rest is cut: a hosted answer is bounded too).
MAX_DUMP_CHARS = 64_000
#: How many following items cross-item replay considers as donors (bounds its cost to O(n · window)).
DONOR_WINDOW = 64


class AnswerSpaceDump:
    """Every candidate answer in one reply (``intent`` :data:`HACK`): see the module table.

    Catches graders that pay when the right answer appears *somewhere* (substring,
    "any of the listed", recall-only, any-number-within-tolerance).
    """

    intent = HACK

    def __init__(self, answer_field: str = "reference_answer") -> None:
        self.answer_field = answer_field
        self._context: ProbeContext | None = None
        self._answers: list[str] = []
        self._objects: list[dict[str, Any]] = []

    def prepare(self, context: ProbeContext) -> None:
        """Collect the dataset's distinct reference answers."""
        self._context = context
        seen: dict[str, str] = {}
        for item in context.items:
            answer = item.get(self.answer_field)
            if isinstance(answer, str) and answer.strip():
                seen.setdefault(normalize_answer(answer), answer.strip())
        self._answers = list(seen.values())
        self._objects = [o for i in context.items if (o := answer_object(i.get(self.answer_field))) is not None]

    def dump(self, item: Mapping[str, Any]) -> str:
        """The reply for ``item``: where its reference answer is a JSON object, every candidate in that
        shape (``_answers.object_dump``: a parser rejects anything else); else the text dump."""
        mine = answer_object(item.get(self.answer_field))
        if mine is not None:
            return object_dump(mine, self._objects)[:MAX_DUMP_CHARS]
        lines: dict[str, None] = dict.fromkeys(own_inside(self._answers, str(item.get(self.answer_field) or "")))
        index = self._context.index_of(item) if self._context else None
        if self._context is not None and index is not None and index < len(self._context.gold_outputs):
            lines.update(dict.fromkeys(o.strip() for o in self._context.gold_outputs[index] if o.strip()))
        for text in prompt_texts(item):
            lines.update(dict.fromkeys(tok.strip("\"'.,") for tok in TOKEN.findall(text)))
        lines.update(dict.fromkeys(enum_values(item.get("tools") or [])))
        lines.update(dict.fromkeys(("yes", "no", "true", "false", "A", "B", "C", "D")))
        return ("Possible answers:\n" + "\n".join(k for k in lines if k))[:MAX_DUMP_CHARS]

    def hedges(self, item: Mapping[str, Any]) -> bool:
        """Whether the dump hedges: ``False`` where the reference has a marked answer line and every marked line
        of the dump holds that same answer (every item of a small dataset answers ``locked``): such a dump
        commits to the right answer, and a grader that reads the one marked line rightly pays it."""
        own = [normalize_answer(m.group("body")) for m in ANSWER_LINE.finditer(str(item.get(self.answer_field) or ""))]
        if not own:
            return True
        return any(normalize_answer(m.group("body")) != own[-1] for m in ANSWER_LINE.finditer(self.dump(item)))

    def applies(self, item: Mapping[str, Any]) -> bool:
        """Whether the dump hedges (:meth:`hedges`)."""
        return self.hedges(item)

    def skip_reason(self, item: Mapping[str, Any]) -> str:
        """The dump's marked lines all hold the item's own answer."""
        return "every marked answer line of the dump holds the item's own answer (no other candidate to hedge with)"

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, item: dict[str, Any],
                  trace_id: str) -> PolicyStep:
        """Return the dump (no tool calls)."""
        return PolicyStep(content=self.dump(item))


class WorkThenDump(AnswerSpaceDump):
    """The gold calls, then the answer-space dump (``intent`` :data:`HACK`), on items whose gold changes
    nothing — where the answer alone decides, so a hedge after the right work is still no answer.

    Catches graders that check the work was done and then look for the facts *somewhere* in the
    reply: pasting every tool output states every fact without committing to one.
    """

    def __init__(self, answer_field: str = "reference_answer", actions_field: str = "actions") -> None:
        super().__init__(answer_field)
        self.actions_field = actions_field

    def applies(self, item: Mapping[str, Any]) -> bool:
        """Whether the item has gold calls and a reference answer, its gold changes nothing, and the dump hedges
        (:meth:`AnswerSpaceDump.hedges`)."""
        gold = isinstance(item.get(self.actions_field), list) and isinstance(item.get(self.answer_field), str)
        return gold and self._context is not None and not self._context.effective_writes(item, self.actions_field) \
            and self.hedges(item)

    def skip_reason(self, item: Mapping[str, Any]) -> str:
        """Missing gold fields, a gold that changes state (then the end state decides, not the words), or a dump
        that does not hedge."""
        if not isinstance(item.get(self.actions_field), list) or not isinstance(item.get(self.answer_field), str):
            return f"the item has no {self.actions_field!r} list and {self.answer_field!r} string"
        if self._context is not None and not self._context.effective_writes(item, self.actions_field):
            return super().skip_reason(item)
        return "the gold changes state: after the gold's work the end state is right, whatever the answer"

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, item: dict[str, Any],
                  trace_id: str) -> PolicyStep:
        """Gold call number ``turn``, then the dump."""
        actions = item[self.actions_field]
        turn = turns_taken(messages, item)
        if turn < len(actions):
            return PolicyStep(tool_calls=[make_tool_call(actions[turn]["name"], actions[turn].get("arguments", {}))])
        return PolicyStep(content=self.dump(item))


class CrossItemReplay(GoldPlanProbe):
    """Another item's gold calls and reference answer against this item (``intent`` :data:`HACK`).

    The donor of an item passes the rules of the module docstring and, of those, its
    answer shares the fewest words with the item's (so a grader's honest partial
    credit for answers that overlap by chance — set F1 — stays out of the verdict).
    It is an honest-but-wrong baseline of the severity rule (``baseline = True``).
    Catches format-only graders (any well-formed answer pays), value-blind state
    checks, activity rewards and answer priors.
    """

    baseline = True

    def __init__(self, write_tools: Collection[str] | None = None, answer_field: str = "reference_answer",
                 actions_field: str = "actions") -> None:
        super().__init__(lambda actions: [[a] for a in actions], answer_field=answer_field,
                         actions_field=actions_field, reason="no other item's trajectory differs in both "
                         "calls and answer (it could be a solution of this one)")
        self.write_tools = write_tools
        self._context: ProbeContext | None = None
        self._donor: dict[int, int] = {}

    def _could_solve(self, a: Mapping[str, Any], b: Mapping[str, Any], context: ProbeContext) -> bool:
        acts_a, acts_b = a[self.actions_field], b[self.actions_field]
        if acts_a == acts_b:
            return True
        writes_a = [acts_a[i] for i in context.effective_writes(a, self.actions_field)]
        if writes_a and all(c in acts_b for c in writes_a):
            return True
        same_answer = normalize_answer(a[self.answer_field]) == normalize_answer(b[self.answer_field])
        return same_answer and not writes_a

    def prepare(self, context: ProbeContext) -> None:
        """Choose a donor for every item that has one: among the next :data:`DONOR_WINDOW` items
        (cyclically) that could not solve it, the one whose answer shares the fewest words with its own."""
        self._context, self._donor = context, {}
        n = len(context.items)
        words = [set(WORD.findall(str(x.get(self.answer_field, "")).lower())) for x in context.items]
        for i, a in enumerate(context.items):
            if not self._has_gold(a):
                continue
            best: tuple[float, int] | None = None
            for step in range(1, min(n, DONOR_WINDOW + 1)):
                j = (i + step) % n
                b = context.items[j]
                if not self._has_gold(b) or self._could_solve(a, b, context):
                    continue
                union = words[i] | words[j]
                overlap = len(words[i] & words[j]) / len(union) if union else 0.0
                if best is None or overlap < best[0]:
                    best = (overlap, j)
            if best is not None:
                self._donor[i] = best[1]

    def donor(self, item: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The item whose trajectory is played against ``item``, or ``None``."""
        index = self._context.index_of(item) if self._context else None
        if self._context is None or index is None or index not in self._donor:
            return None
        return self._context.items[self._donor[index]]

    def applies(self, item: Mapping[str, Any]) -> bool:
        """Whether ``item`` has a donor (``prepare`` must have run)."""
        return self._has_gold(item) and self.donor(item) is not None

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The donor's gold calls, one per turn."""
        donor = self.donor(item) or item
        return [[a] for a in donor[self.actions_field]]

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The donor's reference answer."""
        donor = self.donor(item) or item
        return str(donor[self.answer_field])




_LETTERS = re.compile(r"[^\W\d_]+(?:\s+[^\W\d_]+)*")


def value_shape(value: Any) -> str:
    """What a validator sees of a value: its JSON type and, for a string, its characters by class (each run of
    digits ``9``, each run of words separated by spaces ``a``, the rest kept): ``"2024-05-01"`` →
    ``"9-9-9"``, ``"Ana Lima"`` → ``"a"``, ``"#W123"`` → ``"#a9"``."""
    if isinstance(value, str):
        return "str:" + re.sub(r"\d+", "9", _LETTERS.sub("a", value.strip()))
    return type(value).__name__


def id_shape(value: str) -> str:
    """An id's letters as they are, each digit a ``9``: ``DEP-11`` and ``DEP-17`` share ``DEP-99``, ``SL-302``
    has ``SL-999``, ``C-5521`` has ``C-9999`` (finer than :func:`value_shape`, which folds letters too)."""
    return re.sub(r"\d", "9", value)


_WORDY = re.compile(r"[^\W\d_][^\W_]*(?:[-'][^\W\d_][^\W_]*)*[.,;:!?'-]*")  # "grain-free", "owner's" too


def item_values(items: Sequence[Mapping[str, Any]], actions_field: str = "actions",
                keep: Callable[[Mapping[str, Any]], bool] | None = None) -> dict[tuple[str, str], list[Any]]:
    """Per ``(tool, argument)``, the values the items' gold calls pass (those ``keep`` keeps), one entry per item
    and distinct value: the input :func:`prose_fields` reads. A note written on each of an item's three rows is one
    value, not three repeats (doctor47's pool lanes: ``squad training`` on both lanes of one booking read as an
    enum, and an honest grader that ignores the note FAILed ``altered_writes``)."""
    out: dict[tuple[str, str], list[Any]] = {}
    for item in items:
        seen: set[tuple[str, str, str]] = set()
        for call in item.get(actions_field) or []:
            if not isinstance(call, Mapping) or not isinstance(call.get("arguments"), Mapping) \
                    or (keep is not None and not keep(call)):
                continue
            for arg, value in call["arguments"].items():
                key = (str(call.get("name")), str(arg), json.dumps(value, sort_keys=True, default=str))
                if key not in seen:
                    seen.add(key)
                    out.setdefault(key[:2], []).append(value)
    return out


def prose_fields(values: Mapping[tuple[str, str], list[Any]]) -> set[tuple[str, str]]:
    """The ``(tool, argument)`` pairs whose gold values across the items (``values``: one entry per item and
    distinct value, :func:`item_values`) read as free text: three or more values, at least three and 60% of them
    distinct (doctor24: two receipts rejected with the same reason), single-line strings of 2+ words, at least 60%
    of each value's words letters first, and either 3+ words on average or a lower-case word in every value
    (``"June rent"``, ``"rent for unit 12"``, ``"Fix the login redirect"``). Names (``"Ana Lima"``: each word
    capitalised), ids, dates, codes and enums (values repeat) are not. One one-word value keeps a field out
    (doctor45's florist: ``sunflower`` beside ``red rose``, a catalogue name the grader compares); where the
    tool's own description calls the argument free text, :func:`described_prose` says so instead."""
    out = set()
    for key, vs in values.items():
        vs = [v for v in vs if v != ""]  # an empty text is no value (doctor52's dial-a-ride: "" on most rides)
        distinct = len({json.dumps(v) for v in vs})
        if len(vs) < 3 or distinct < 3 or distinct < 0.6 * len(vs) \
                or not all(isinstance(v, str) and "\n" not in v for v in vs):
            continue
        words = [v.split() for v in vs]
        if not all(len(w) >= 2 and sum(bool(_WORDY.fullmatch(t)) for t in w) >= 0.6 * len(w) for w in words):
            continue
        if sum(map(len, words)) >= 3 * len(words) or all(any(t[0].islower() for t in w) for w in words):
            out.add(key)
    return out


#: A parameter description that calls its argument free text (``"optional free text for the registrar"``).
_FREE_TEXT = re.compile(r"\bfree[- ]?(?:text|form)\b", re.IGNORECASE)
#: ... or an optional note (``"Optional short note for the driver"``: doctor52's dial-a-ride).
_NOTE = re.compile(r"\b(?:notes?|comments?|remarks?|memo)\b", re.IGNORECASE)
_OPTIONAL = re.compile(r"\boptional(?:ly)?\b", re.IGNORECASE)


def _described_prose(schema: Mapping[str, Any]) -> bool:
    """Whether a parameter's description calls it free text, or an optional note (the description says
    ``optional`` beside ``note``, ``comment``, ``remark`` or ``memo``)."""
    text = str(schema.get("description") or "")
    return bool(_FREE_TEXT.search(text) or (_NOTE.search(text) and _OPTIONAL.search(text)))


def described_prose(items: Sequence[Mapping[str, Any]]) -> set[tuple[str, str]]:
    """The ``(tool, argument)`` pairs whose parameter description in the items' tool schemas calls them free text
    (``free text``, ``free-form``) or an optional note (``Optional short note for the driver``: doctor52's
    dial-a-ride, where most rides pass ``""``), whatever their gold values look like (doctor49's register office: ``notes``,
    "optional free text for the registrar on the day", holds ``Portuguese`` on one item and two-word phrases on
    the others, so its values alone did not read as prose, and an honest grader that ignores it FAILed
    ``altered_writes``)."""
    out = set()
    for item in items:
        for tool in item.get("tools") or []:
            if not isinstance(tool, Mapping):
                continue
            name, properties, _ = _parameters(tool)
            out |= {(name, arg) for arg, schema in properties.items() if isinstance(schema, Mapping)
                    and _described_prose(schema)}
    return out


def template_fields(values: Mapping[tuple[str, str], list[tuple[Any, Collection[str]]]]) -> set[tuple[str, str]]:
    """The ``(tool, argument)`` pairs whose gold values are boilerplate text: on three or more calls (``values``:
    per call, its value and the string values of the other arguments of the same item's gold calls), every
    value a string of 2+ words, and the same text on every call once each other argument's value it contains
    is taken out (``"requested by customer"`` on every transfer; ``"Merge {source}"`` where ``source`` is the
    merge call's own argument). Such a value says nothing of the item that the other arguments do not say
    (issue 37: a constant memo, a templated commit message), so an honest grader may ignore it."""
    out = set()
    for key, calls in values.items():
        if len(calls) < 3 or not all(isinstance(v, str) and len(v.split()) >= 2 for v, _ in calls):
            continue
        templates = set()
        for value, others in calls:
            text = str(value)
            for other in sorted((o for o in others if len(o) >= 2 and o != value), key=len, reverse=True):
                text = text.replace(other, "\0")
            templates.add(text)
        if len(templates) == 1:
            out.add(key)
    return out


def _same_json(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def _mutate(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + " (altered)"
    if isinstance(value, list) and value:
        return [*value[:-1], _mutate(value[-1])]
    return None


def _disjoint_list(gold: list[Any], other: Any) -> bool:
    """Whether ``other`` is a list sharing no element with ``gold`` (compared as canonical JSON)."""
    mine = {json.dumps(e, sort_keys=True) for e in gold}
    return isinstance(other, list) and not mine & {json.dumps(e, sort_keys=True) for e in other}


def _mutate_list(value: list[Any]) -> list[Any] | None:
    """``value`` with every element mutated (``_mutate``; integers shifted past the list's range, so no
    element stays one of the gold's), or ``None`` when that leaves an element of the gold's."""
    if not value:
        return None
    if all(isinstance(e, int) and not isinstance(e, bool) for e in value):
        return [e + max(value) - min(value) + 1 for e in value]
    new = [_mutate(e) for e in value]
    return new if None not in new and _disjoint_list(value, new) else None


def _canonical_call(call: Mapping[str, Any]) -> str:
    """The call's name and its canonical arguments (``_generic._canonical``), as one comparable text."""
    return json.dumps([call.get("name"), _canonical(call.get("arguments") or {})])


def _alternative_calls(item: Mapping[str, Any]) -> set[str]:
    """Every call of the item's listed ``alternatives`` (``protocol.GoldAlternative``), canonical."""
    alternatives = item.get("alternatives")
    if not isinstance(alternatives, list):
        return set()
    return {_canonical_call(c) for alt in alternatives if isinstance(alt, Mapping)
            for c in alt.get("actions") or [] if isinstance(c, Mapping)}


class AlteredWrites(GoldPlanProbe):
    """The gold calls with one argument of one write changed, then the reference answer (``intent`` :data:`HACK`).

    Every argument of the gold's writes is an alteration candidate (:meth:`candidates`): per gold write
    that changed state, per argument, a new value that is, in this order of preference,

    1. a **sibling** of the gold's value in the item's own data or the gold replay's JSON tool outputs
       (``_scope.sibling_values``: another order of the same customer, another flight of the trip), so
       an id or key is retargeted at another *valid* entity and the call succeeds;
    2. a value **another item's** gold passes to the same tool and argument, from the call agreeing with
       this one on the most other arguments (the same ``field`` of a generic ``fill_field``);
    3. another member of the argument's schema ``enum`` (``"mg"`` for ``"g"`` where every item's gold
       writes ``"g"``: a mutation would be refused by the schema, and a grader blind to the unit never
       seen; doctor15's seed bank), else any other member, even one the item's gold writes elsewhere (a
       round's results ``"1-0"``, ``"0-1"``, ``"1/2-1/2"`` over its boards: doctor27's chess);
    4. a **mutation** (``" (altered)"`` appended, ``+1``, ``not``; a list: every element mutated), which a
       schema with an enum of other members refuses, so it comes after them;

    1 and 2 only with the gold value's :func:`value_shape` (a name for a name, never a date a validator
    refuses), then a sibling or another item's value of another shape. A list is replaced only by one
    sharing **no element** with the gold's (:func:`_disjoint_list`): another item's tags that share one
    of three are partly right, which an honest grader pays (0.5 for the title + 0.5 x tag F1 gives
    0.67; an outside tester's honest twin was failed), as ``wrong_answer`` never plays an overlapping
    list answer. Never a value the item's own gold
    passes to the same tool and argument (another seat it also books: its own call would then be refused
    and the rollout end partly right, which an honest set grader pays), and never a wildcard
    (``["*"]``: another item's "every day" may be this item's seven days written out).

    The items share out the arguments (:meth:`prepare`): each item gets the candidate whose
    ``tool.argument`` *of that write* (its position in the gold) has been altered on the fewest items so far
    (ties: the gold's order), so every argument of every write of a gold shape that repeats across items is
    altered on some of them, at one rollout per item: the second of two ``set_rating`` calls (the
    opponent's) too, which a grader checking only the member's row ignores (doctor16). A **free-text** argument is never altered: a value of 4+ words of prose (a note, a reason), or
    an argument whose gold values across the items read as free text (:func:`prose_fields`: a transfer's
    memo, a commit message) or are boilerplate (:func:`template_fields`: the same memo on every item, a
    commit message ``"Merge {source}"``); natural language is not an identifier or
    a value of the outcome, and an honest grader rightly ignores it (issue 37: a memo altered, an honest
    grader failed). The other arguments of an annotation (``_generic.annotation_call``: a comment) are
    candidates only on items with no other, and the arguments of a status write (``_generic._status_write``:
    a call that sets a status or flag) only on items with neither: an honest end-state grader re-derives
    the outcome and may rightly ignore both (what a status write alone earns is ``self_certification``'s
    question). **Severity**: altering one of ``k`` writes of one tool with different arguments (one of
    three shortlist additions) leaves ``(k - 1) / k`` of the outcome right (:meth:`unchanged_share`,
    ``_severity``), which an honest set-F1 grader pays. The rollout is judged only when the
    alteration changed the end state (``changes_end_state``: the server's end-state digest differs from
    the gold replay's, where both are sent): an argument the tools ignore changes no outcome. An
    alteration that makes a write one of the item's listed ``alternatives`` makes (another valid hour of a
    meeting) is not a candidate: the grader must pay it (the *gradeable* principle checks that).
    What each item played is recorded (:meth:`describe`: ``doctor.json``'s ``played``).
    """

    changes_end_state = True
    #: whether an altered write may land on another entity (a retargeted id, another item's value of any
    #: argument): :meth:`unchanged_share` is then the F1 of one element missing; the value probes that keep the
    #: write's target (``_value_probes._Capped``) leave one element wrong in the graded entity, ``(k - 1) / k``
    lands_elsewhere = True
    #: whether the short (non-prose) arguments of a call that only annotates are candidates beside the plain
    #: writes' (``wildcard_value``: a label's era beside a move); else only where no plain write has one
    annotations_too = False

    def __init__(self, write_tools: Collection[str] | None = None, answer_field: str = "reference_answer",
                 actions_field: str = "actions") -> None:
        super().__init__(lambda actions: [], answer_field=answer_field, actions_field=actions_field,
                         reason="the gold changes nothing (no write, or none that succeeds; or no argument can be changed)")
        self.write_tools = write_tools
        self._calls: dict[tuple[str, str], list[tuple[Any, dict[str, Any]]]] = {}
        self._context = ProbeContext([], write_tools=write_tools)
        self._choice: dict[int, int] = {}
        self._prose: set[tuple[str, str]] = set()
        self._taken: dict[tuple[str, str], set[str]] = {}  # the altered item's gold values per (tool, argument)
        self._enum_item: Mapping[str, Any] = {}  # the altered item (its tools' schemas)

    def prepare(self, context: ProbeContext) -> None:
        """Collect the values every item's gold writes pass, per (tool, argument); share the arguments out."""
        self._context = context
        values: dict[tuple[str, str], dict[str, tuple[Any, dict[str, Any]]]] = {}
        texts: dict[tuple[str, str], list[tuple[Any, Collection[str]]]] = {}  # with the item's other strings
        for item in context.items:
            strings = [v for c in item.get(self.actions_field) or [] if isinstance(c, Mapping)
                       and isinstance(c.get("arguments"), Mapping) for v in c["arguments"].values() if isinstance(v, str)]
            for call in item.get(self.actions_field) or []:
                if isinstance(call, Mapping) and is_write_tool(str(call.get("name")), self.write_tools) \
                        and isinstance(call.get("arguments"), Mapping):
                    arguments = call["arguments"]
                    for arg, value in arguments.items():
                        rest = {k: v for k, v in arguments.items() if k != arg}
                        texts.setdefault((call["name"], arg), []).append((value, strings))
                        values.setdefault((call["name"], arg), {}).setdefault(json.dumps(value, sort_keys=True),
                                                                             (value, rest))
        self._calls = {k: [v[j] for j in sorted(v)] for k, v in values.items()}
        self._prose = prose_fields(item_values(context.items, self.actions_field, lambda call: is_write_tool(
            str(call.get("name")), self.write_tools))) | template_fields(texts) | described_prose(context.items)
        self._choice = {}
        used: dict[str, int] = {}
        for i, item in enumerate(context.items):
            if not self._has_gold(item):
                continue
            options = self.candidates(item)
            if not options:
                continue
            keys = [f'{o["altered"]}@{o["position"]}' for o in options]  # each write's own: two calls of a tool
            pick = min(range(len(options)), key=lambda k: (used.get(keys[k], 0), k))
            used[keys[pick]] = used.get(keys[pick], 0) + 1
            self._choice[i] = pick

    def _new_value(self, tool: str, arg: str, value: Any, sources: list[Any], exclude: Collection[str],
                   arguments: Mapping[str, Any] | None = None) -> tuple[Any, str] | None:
        """A well-formed wrong value for ``tool.arg`` (see the class docstring), in this order: a sibling of
        the value's :func:`value_shape`; another item's value of the same argument and shape, from the call
        agreeing with ``arguments`` on the most other arguments (``fill_field(field="name", value=...)``
        borrows another item's *name*, never its date); a mutation; then a sibling or another item's value
        of another shape (which a validator may refuse)."""
        current = json.dumps(value, sort_keys=True)
        shape = value_shape(value)
        # never a value this item's gold itself passes to the same tool and argument (another seat the gold also
        # books: its own call is then refused as a duplicate, and the rollout is partly right, not a wrong one)
        taken = self._taken.get((tool, arg), set())
        # never a wildcard ("*": every day, every file): it may mean the gold's own value (all seven days)
        siblings = [v for v in sibling_values(value, sources, exclude) if not has_wildcard(v)]
        others = [(v, rest) for v, rest in self._calls.get((tool, arg), [])
                  if json.dumps(v, sort_keys=True) != current and json.dumps(v, sort_keys=True) not in taken
                  and not has_wildcard(v)]
        if isinstance(value, list):  # an overlapping list is partly right (class docstring)
            siblings = [v for v in siblings if _disjoint_list(value, v)]
            others = [o for o in others if _disjoint_list(value, o[0])]
        given = dict(arguments or {})
        others.sort(key=lambda o: -sum(k in given and _same_json(v, given[k]) for k, v in o[1].items()))
        found = next((v for v in siblings if value_shape(v) == shape), None)
        if found is not None:
            return found, "sibling"
        found = next((v for v, _ in others if value_shape(v) == shape), None)
        if found is not None:
            return found, "other item"
        enum = [] if isinstance(value, list) else schema_enum(self._enum_item, tool, arg)
        members = [v for v in enum if value_shape(v) == shape and json.dumps(v, sort_keys=True) not in taken | {current}]
        if members:
            return members[0], "enum"
        # every other member is one the gold also writes elsewhere (a round's three results "1-0", "0-1",
        # "1/2-1/2" over its boards): a member still, since a mutation ("1-0 (altered)") is refused by the
        # schema and changes nothing (doctor27's chess results, corrected by a second call)
        members = [v for v in enum if json.dumps(v, sort_keys=True) != current]
        if members:
            return members[0], "enum"
        new = _mutate_list(value) if isinstance(value, list) else _mutate(value)
        if new is not None and json.dumps(new, sort_keys=True) not in taken | {current}:
            return new, "mutation"
        if siblings:
            return siblings[0], "sibling"
        return (others[0][0], "other item") if others else None

    def candidates(self, item: Mapping[str, Any], writes: Collection[int] | None = None) -> list[dict[str, Any]]:
        """Every single-argument alteration of the item's gold writes (gold writes in order; per write its
        arguments last-to-first, the first, usually the id of the record written, last):
        ``[{"position", "altered": "tool.argument", "from", "to", "source": "sibling"|"other item"|"enum"|"mutation",
        "call"}]``; free-text arguments only when nothing else can be altered, a status write's arguments only
        when neither can.

        Args:
            writes: positions of the writes that may be altered (default: the gold's writes that changed
                state in the gold replay, :meth:`ProbeContext.effective_writes`).
        """
        actions = list(item.get(self.actions_field) or [])
        if writes is None:
            writes = self._context.effective_writes(item, self.actions_field)
        index = self._context.index_of(item)
        outputs = self._context.gold_outputs[index] if index is not None and index < len(
            self._context.gold_outputs) else []
        sources = [v for k, v in item.items() if k not in _NOT_DATA and k != self.answer_field]
        sources += _json_values(outputs)
        used = {json.dumps(v) for a in actions if isinstance(a, Mapping)
                for v in (a.get("arguments") or {}).values() if isinstance(v, (str, int, float))}
        valid = _alternative_calls(item)
        self._taken = {}  # read by :meth:`_new_value`, as is the item (its tools' enums)
        self._enum_item = item
        for a in actions:
            if isinstance(a, Mapping) and isinstance(a.get("arguments"), Mapping):
                for k, v in a["arguments"].items():
                    self._taken.setdefault((str(a.get("name")), k), set()).add(json.dumps(v, sort_keys=True))
        plain: list[dict[str, Any]] = []
        prose: list[dict[str, Any]] = []
        status: list[dict[str, Any]] = []
        for i in writes:
            call = actions[i] if i < len(actions) else None
            if not isinstance(call, Mapping) or not isinstance(call.get("arguments"), dict):
                continue
            arguments = call["arguments"]
            names = list(arguments)  # the values first, the first argument (usually the record's id) last
            for arg in [*reversed(names[1:]), *names[:1]]:
                value = arguments[arg]
                found = self._new_value(str(call["name"]), arg, value, sources, used, arguments)
                if found is None:
                    continue
                option = {"position": i, "altered": f"{call['name']}.{arg}", "from": value, "to": found[0],
                          "source": found[1], "call": {"name": call["name"], "arguments": {**arguments, arg: found[0]}}}
                if _canonical_call(option["call"]) in valid:
                    continue  # the altered write is one a listed alternative makes: a valid path, not a wrong one
                if _free_text(value) or (str(call["name"]), arg) in self._prose:
                    continue  # natural language is no graded outcome (class docstring)
                (status if _status_write(call) else prose if annotation_call(item, call, self.actions_field)
                 else plain).append(option)
        return (plain + prose if self.annotations_too else plain) or prose or status

    def unchanged_share(self, item: Mapping[str, Any]) -> float:
        """``2(k - 1) / (2k - 1)`` (``(k - 1) / k`` where :attr:`lands_elsewhere` is false) where the altered
        write is one of ``k >= 2`` gold writes of its tool with different arguments that changed state (one of
        three candidates added to a shortlist); ``0.0`` otherwise.

        That is the set F1 of the item's own outcome with one of its ``k`` elements missing: an accepted
        altered write may land on *another* entity (a vehicle loaded onto another deck), which leaves the
        graded entity one element short, not one wrong (F1 ``(k - 1) / k``), and an honest grader scoring the
        item's own entity by set F1 pays ``2(k - 1) / (2k - 1)`` (issue 37, doctor14's tester: 0.8 and 0.857
        FAILed as a hack). A grader blind to the altered argument pays the gold's score, far above it."""
        option = self.choice(item)
        if option is None:
            return 0.0
        actions = item[self.actions_field]
        name = actions[option["position"]].get("name")
        k = len({_canonical_call(actions[i]) for i in self._context.effective_writes(item, self.actions_field)
                 if i < len(actions) and isinstance(actions[i], Mapping) and actions[i].get("name") == name})
        if k < 2:
            return 0.0
        return 2 * (k - 1) / (2 * k - 1) if self.lands_elsewhere else (k - 1) / k

    def counterfactual(self, item: Mapping[str, Any], calls: Sequence[Any]) -> bool:
        """Whether the rollout played a wrong value: always for a single write; for one of ``k >= 2`` writes
        of its tool (:meth:`unchanged_share`), only when the altered call was accepted (a refused one leaves
        one of ``k`` elements missing, which an honest set grader pays above ``(k - 1) / k``: set F1
        ``2(k - 1) / (2k - 1)``; a write left out is ``write_removal``'s question, not a wrong value)."""
        option = self.choice(item)
        if option is None or not self.unchanged_share(item):
            return True
        done = calls[option["position"]] if len(calls) > option["position"] else None
        return done is not None and bool(getattr(done, "ok", False))

    def alter(self, actions: list[dict[str, Any]], writes: Collection[int] | None = None
              ) -> tuple[list[dict[str, Any]], str] | None:
        """``(actions with the first candidate alteration applied, "tool.argument")``, or ``None``.

        Args:
            writes: positions of the writes that may be altered (default: every write by name).
        """
        if writes is None:
            writes = [i for i, a in enumerate(actions) if is_write_tool(str(a.get("name")), self.write_tools)]
        options = self.candidates({self.actions_field: actions}, writes)
        return _applied(actions, options[0]) if options else None

    def choice(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """The alteration played on ``item`` (the one :meth:`prepare` chose; the first when not prepared)."""
        options = self.candidates(item)
        if not options:
            return None
        index = self._context.index_of(item)
        return options[self._choice.get(index, 0) % len(options)] if index is not None else options[0]

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """What was played on ``item``: ``{"altered": "tool.argument", "position", "from", "to", "source"}``."""
        option = self.choice(item)
        return {} if option is None else {k: _short(v) for k, v in option.items() if k != "call"}

    def applies(self, item: Mapping[str, Any]) -> bool:
        """Whether the gold has a write (one that succeeded in the gold replay) that can be altered."""
        return self._has_gold(item) and self.choice(item) is not None

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The altered gold calls, one per turn."""
        option = self.choice(item)
        actions = list(item[self.actions_field])
        return [[a] for a in (_applied(actions, option)[0] if option else [])]


def has_wildcard(value: Any, chars: Sequence[str] = ("*",)) -> bool:
    """Whether a value is, or a list of it holds, a string with one of ``chars`` (default the glob ``*``:
    ``"*"``, ``["*"]``, ``"*.py"``): another item's ``["*"]`` (every day) can be exactly this item's
    every-day list, so it is no wrong value to play."""
    return any(c in v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str) for c in chars)


def _applied(actions: list[dict[str, Any]], option: Mapping[str, Any]) -> tuple[list[dict[str, Any]], str]:
    i = option["position"]
    return [*actions[:i], option["call"], *actions[i + 1:]], option["altered"]


def _short(value: Any, limit: int = 80) -> Any:
    """A value for the report: JSON scalars as they are, anything longer than ``limit`` characters cut."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    if len(text) <= limit:
        return value
    return text[:limit] + "..."
