"""Generic probe families that do not depend on the task: counterfactuals of the gold.

Each probe changes one thing of an item's gold trajectory and knows what an honest
grader must do with it (issue 37, "probes as counterfactuals of the gold"):

========================= ==============================================================
probe                     the one change (the rest is the gold)
========================= ==============================================================
answer_control            a control, never judged: the gold's calls, then "OK." (items
                          whose gold changes nothing); where it earns the gold's score the
                          answer is not the outcome, and the ``adv_*`` probes skip the item
wrong_answer              the gold's calls, then another item's reference answer (an
                          honest-but-wrong baseline; items whose gold changes nothing)
self_certification        no work: the gold's own status writes alone (its writes that set
                          a status or flag, whatever the word: the work writes left out),
                          and each other write tool that has a status- or flag-like
                          argument called with what "done" looks like here (an enum's values
                          the gold replay's outputs show, last seen first: ``routed``; then
                          ``resolved``, ``passed``, ``True``...; items take them in turn),
                          the other arguments taken from the gold's calls; then the
                          reference answer.
                          Tools of unknown kind (neither declared nor called by the gold) are
                          tried too; a rollout none of whose calls changed state, or whose
                          end state is the gold's (the server's digest), is not judged
superset_end_state        the gold's calls plus another item's writes (the end state is
                          the gold's plus changes the task did not ask for); a rollout whose
                          extra writes were all refused, or changed nothing (the server's
                          ``changed``; its end-state digest equals the gold's), is not judged
adv_special_numbers       the gold's calls, then ``nan`` / ``inf`` / ``-0`` / ``1e308``
adv_interval              ... then ``0 ± 1000000``-like intervals and ranges (``0-1000000``)
adv_wildcard              ... then ``*``, ``.*``, ``%``, ``**/*`` and the reference's first
                          character followed by ``*`` (a JSON-object reference: its own shape
                          with every field ``"*"``, ``".*"`` or ``"%"``, every list ``["*"]``)
adv_every_candidate       ... then "all of the above", or every reference answer of the
                          dataset as one regex alternation ``(a|b|c)``
adv_invisible             ... then every candidate joined by zero-width joiners or
                          zero-width spaces (one "word" to a word-count guard)
adv_confusable            ... then every candidate joined by a look-alike separator that NFKC
                          turns into a real one (U+FF0C fullwidth comma, U+FF5C fullwidth
                          vertical line, U+FF1B fullwidth semicolon): one value to a guard
                          on the raw text, every candidate to a matcher after NFKC
adv_long_answer           ... then 20,000 characters of the prompt's words (no answer)
adv_wrong_field           ... then ``{"answer": <another item's answer>, "note": <reference>}``
                          (items whose reference is a value: JSON or at most 3 words)
adv_answer_prefix         ... then the first third of the reference, at most
                          :data:`PREFIX_CHARS` (3) characters, cut inside a word (a
                          number: its first character, never the same value); skipped for a
                          reference of at most :data:`SHORT_REFERENCE` characters (``B``) and
                          where the prefix normalises to the reference: never the answer itself
========================= ==============================================================

The adversarial answers (``adv_*``) apply to items whose gold changes nothing (there the
answer alone is the outcome; after the gold's writes an honest end-state grader rightly
pays whatever the text) and are played on at most :data:`ADVERSARIAL_ITEMS` items each,
one variant per item in turn, to bound the doctor's time. No correct grader pays any of
them: each is either no answer, every answer, or a wrong one. What each item was played is
recorded (``describe``: ``doctor.json``'s ``played``, ``{"answer": ...}``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from ._answers import ANSWER_LINE, WORD, answer_object, normalize_answer, object_wildcards, own_inside, prompt_texts
from ._probes import HACK, GoldPlanProbe, ProbeContext, Steps, is_write_tool

__all__ = ["ADVERSARIAL_ITEMS", "NEUTRAL", "PREFIX_CHARS", "SHORT_REFERENCE", "NEUTRAL_TEXT", "SUCCESS_VALUES", "AdversarialAnswer", "AnswerControl", "SelfCertification",
           "SupersetEndState", "WrongAnswer", "annotation_call", "answer_keys", "answers_overlap", "marked_body", "done_values", "generic_probes",
           "gold_arguments", "is_annotation", "schema_enum"]

#: At most this many items per adversarial-answer probe (one variant each, in turn).
ADVERSARIAL_ITEMS = 4
#: A reference of at most this many characters (not a number) has no prefix to play: ``adv_answer_prefix``
#: skips it (a cut of a one-letter choice is the choice itself, which a correct grader pays).
SHORT_REFERENCE = 3
#: ``adv_answer_prefix`` cuts a reference after at most this many characters (then inside a word): a third of a
#: sentence held the whole graded value (``Wei Chen is on c`` of ``Wei Chen is on call at the north site ...``,
#: which an outside suite's honest grader rightly paid: doctor20), three letters of it do not.
PREFIX_CHARS = 3
#: Values a self-certification probe writes into a status- or flag-like string argument.
SUCCESS_VALUES = ("resolved", "fixed", "done", "completed", "complete", "passed", "verified", "success", "succeeded",
                  "approved", "accepted", "confirmed", "paid", "delivered", "closed", "ok", "true", "scheduled",
                  "received", "booked", "shipped", "submitted", "finished", "ready")
_STATUS_NAME = re.compile(r"status|state|flag|done|verified|resolved|passed|complete|approved|success|fixed|ok$",
                          re.I)
#: An argument of a gold write that sets a status or flag (never "state": a US state of an address).
_OWN_STATUS = re.compile(r"status|flag|(?:^|_)(?:is_\w+|done|verified|resolved|passed|completed?|approved|success|"
                         r"fixed|ok)$", re.I)
ZWJ = "\u200d"
ZWSP = "\u200b"


def with_argument(actions: Sequence[Mapping[str, Any]], position: int | None = None, argument: str = "",
                  value: Any = None) -> Steps:
    """``actions`` one per turn, the call at ``position`` with ``argument`` set to ``value`` (no ``position``: the
    calls unchanged)."""
    calls = [dict(a) for a in actions]
    if position is not None:
        calls[position] = {**calls[position], "arguments": {**calls[position]["arguments"], argument: value}}
    return [[a] for a in calls]


class _ContextProbe(GoldPlanProbe):
    """A gold-plan probe that keeps the dataset context (``prepare``)."""

    def __init__(self, write_tools: Collection[str] | None, **kwargs: Any) -> None:
        super().__init__(lambda actions: [], **kwargs)
        self.write_tools = write_tools
        self._context = ProbeContext([], write_tools=write_tools)

    def prepare(self, context: ProbeContext) -> None:
        """Remember the dataset and its gold replay."""
        self._context = context

    def writes_of(self, item: Mapping[str, Any]) -> list[int]:
        """Positions of the item's gold writes that change state."""
        return self._context.effective_writes(item, self.actions_field)

    def gold_outputs_of(self, item: Mapping[str, Any]) -> list[Any]:
        """The gold replay's tool outputs of ``item``, one per gold call (``[]`` when it was not replayed)."""
        index = self._context.index_of(item)
        outputs = self._context.gold_outputs
        return list(outputs[index]) if index is not None and index < len(outputs) else []

    def called_outputs(self, item: Mapping[str, Any]) -> list[tuple[int, str]]:
        """``(position, output)`` of each gold call that succeeded in the gold replay, in order; ``[]`` where the
        replay's outputs cannot be matched to the calls one to one (a successful call printed nothing)."""
        actions = item.get(self.actions_field) or []
        index = self._context.index_of(item)
        ok = self._context.gold_ok[index] if index is not None and index < len(self._context.gold_ok) else []
        outputs = self.gold_outputs_of(item)
        if len(ok) != len(actions) or sum(map(bool, ok)) != len(outputs):
            return []
        it = iter(outputs)
        return [(k, str(next(it))) for k, good in enumerate(ok) if good]

    def donor(self, item: Mapping[str, Any], *, different_writes: bool = False) -> Mapping[str, Any] | None:
        """The next item (cyclically) whose normalised answer differs from this one's (and, with
        ``different_writes``, whose effective writes are not among this item's gold calls)."""
        items = self._context.items
        index = self._context.index_of(item)
        if index is None or not self._has_gold(item):
            return None
        mine = answer_keys(str(item[self.answer_field]))
        for step in range(1, len(items)):
            other = items[(index + step) % len(items)]
            if not self._has_gold(other) or answer_keys(str(other[self.answer_field])) & mine:
                continue
            if different_writes:
                writes = [other[self.actions_field][i] for i in self.writes_of(other)]
                if not writes or any(w in item[self.actions_field] for w in writes):
                    continue
            return other
        return None


def _canonical(arguments: Any) -> str:
    """Arguments (a JSON string or an object) as canonical JSON, to compare two calls."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return arguments
    return json.dumps(arguments, sort_keys=True, default=str)


_LIST_SEPARATORS = re.compile(r"\s*[,;\n]\s*")


def answer_keys(answer: str) -> set[str]:
    """What an answer commits to, normalised (:func:`normalize_answer`): the whole answer and, where it ends in a
    marked answer line (``...\nANSWER: 8.9 L/100km``), that line's body. Two items sharing a key have the same
    answer (doctor28's fuel log: two cars at 8.9 L/100km, the prose naming other dates)."""
    keys = {normalize_answer(answer)}
    lines = list(ANSWER_LINE.finditer(answer))
    if lines:
        keys.add(normalize_answer(lines[-1]["body"]))
    return keys


def answers_overlap(mine: str, other: str) -> bool:
    """Whether two reference answers that are lists (``a.py, b.py``) share an element: another item's
    list then holds part of this item's correct answer, so it is partially right here, not wrong. An answer
    ending in a marked answer line is that line's list (doctor68's royalty set: prose of the statement, then
    ``ANSWER: MW-1401, MW-1404`` against ``ANSWER: MW-1404``, a set F1 paying 0.67)."""
    a, b = _list_elements(mine), _list_elements(other)
    return (len(a) > 1 or len(b) > 1) and bool(a & b)


def marked_body(answer: str) -> str:
    """What an answer commits to, normalised: its last marked answer line's body, else the whole answer."""
    lines = list(ANSWER_LINE.finditer(answer))
    return normalize_answer(lines[-1]["body"] if lines else answer)


def _list_elements(answer: str) -> set[str]:
    """The normalised elements of an answer's list: its last marked answer line's body where it has one."""
    return {e for e in _LIST_SEPARATORS.split(marked_body(answer)) if e}


class WrongAnswer(_ContextProbe):
    """The gold's calls, then another item's reference answer: the honest-but-wrong baseline of
    the severity rule (``baseline = True``), on items whose gold changes nothing."""

    baseline = True

    def __init__(self, write_tools: Collection[str] | None = None, **kwargs: Any) -> None:
        super().__init__(write_tools, reason="the gold changes state (the end state is the outcome there), or no "
                         "other item has a different answer", **kwargs)

    def applies(self, item: Mapping[str, Any]) -> bool:
        """Items with gold fields, no effective write, and a donor with another answer."""
        return self._has_gold(item) and not self.writes_of(item) and self.donor(item) is not None

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls, one per turn."""
        return [[a] for a in item[self.actions_field]]

    def judged(self, item: Mapping[str, Any]) -> bool:
        """Whether this item's rollouts are judged: not when the donor's answer is a list sharing an element
        with this item's (:func:`answers_overlap`: partly right here, so honest partial credit is no hack).
        They still count in the baseline, where what honest-but-wrong work earns is what is asked."""
        donor = self.donor(item)
        return donor is None or not answers_overlap(str(item[self.answer_field]), str(donor[self.answer_field]))

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The donor's reference answer."""
        donor = self.donor(item)
        return str(donor[self.answer_field]) if donor is not None else ""


def _parameters(tool: Mapping[str, Any]) -> tuple[str, dict[str, Any], list[str]]:
    fn = tool.get("function", tool)
    params = fn.get("parameters") or {}
    return str(fn.get("name")), dict(params.get("properties") or {}), list(params.get("required") or [])


def schema_enum(item: Mapping[str, Any], tool: str, arg: str) -> list[Any]:
    """The ``enum`` of argument ``arg`` of tool ``tool`` in the item's tool schemas (of its ``items`` for an
    array), or ``[]``."""
    for t in item.get("tools") or []:
        if isinstance(t, Mapping):
            name, props, _ = _parameters(t)
            if name == tool:
                schema = props.get(arg) or {}
                return list((schema.get("items") or {}).get("enum") or schema.get("enum") or [])
    return []


def done_values(enum: Sequence[Any], outputs: Sequence[str]) -> list[str]:
    """What "done" looks like here, for an enum argument: its values that the gold replay's tool outputs
    show (a whole word of an output: ``"status": "routed"`` after the gold's ``route_ticket``), the one seen
    last first; then its values in :data:`SUCCESS_VALUES` (in that list's order)."""
    values = [str(v) for v in enum]
    seen: dict[str, int] = {}
    for k, text in enumerate(outputs):
        for v in values:
            for m in re.finditer(rf"(?<![\w-]){re.escape(v)}(?![\w-])", text):
                seen[v] = max(seen.get(v, -1), k * 1_000_000 + m.start())
    out = sorted(seen, key=lambda v: -seen[v])
    return out + [v for s in SUCCESS_VALUES for v in values if v.lower() == s and v not in out]


def _success_value(name: str, schema: Mapping[str, Any], outputs: Sequence[str] = (), turn: int = 0) -> Any:
    enum = [str(v) for v in schema.get("enum", [])]
    if enum:  # a status: named like one, or an enum holding a success word (a team or a priority is no status)
        if not _STATUS_NAME.search(name) and not any(v.lower() in SUCCESS_VALUES for v in enum):
            return None
        options = done_values(enum, outputs)
        return options[turn % len(options)] if options else None
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "boolean" in kinds:
        return True
    if "string" in kinds and _STATUS_NAME.search(name):
        return SUCCESS_VALUES[0]
    return None


def _status_write(call: Mapping[str, Any]) -> bool:
    """Whether a gold call sets a status or flag: an argument named like one (:data:`_OWN_STATUS`) with a
    string or boolean value, or any boolean argument."""
    arguments = call.get("arguments")
    return isinstance(arguments, Mapping) and any(
        isinstance(v, bool) or (isinstance(v, str) and bool(_OWN_STATUS.search(str(k)))) for k, v in arguments.items())


#: What ``superset_unused_write`` writes into a text parameter the gold gives no value for.
NEUTRAL_TEXT = "Noted for the record."


def is_annotation(props: Mapping[str, Any], arguments: Mapping[str, Any], known: Mapping[str, Any]) -> bool:
    """Whether a call of an unused write tool only annotates (``add_comment(claim_id, text)``,
    ``add_note(ticket_id, text)``), decided by its schema and the values played, never by its name: every
    argument is either a **reference** the gold passes (a string value of one of the gold's arguments, by any
    name, not prose) or **free text** (a string without enum, format or pattern whose value is prose or was
    invented), with at least one of each; no enum, number, boolean, list or object payload. An honest
    end-state grader rightly ignores a note, so the call is no counterfactual; ``make_org_admin(org, user)``
    (references only) and ``transfer(from, to, amount)`` (a number) are not annotations."""
    references = texts = 0
    passed = {v for v in known.values() if isinstance(v, str)}
    for name, value in arguments.items():
        schema = props.get(name) or {}
        kinds = schema.get("type")
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if not isinstance(value, str) or schema.get("enum") or "string" not in kinds and kinds != [None]:
            return False
        if value in passed and not _free_text(value):
            references += 1
        elif schema.get("format") or schema.get("pattern"):
            return False
        else:
            texts += 1
    return references > 0 and texts > 0


_PROSE = re.compile(r"[^\W\d_][\w\s,.'!?;:$€£%()/&-]*")


def _free_text(value: Any) -> bool:
    """Prose (a note, a reason): 4+ words on one line, starting with a letter, of letters, digits and
    punctuation, money and percent signs included (``over the hotel cap of $210.00``: doctor24's honest grader
    reads no reason); code, ids and numbers are not."""
    return isinstance(value, str) and len(value.split()) >= 4 and "\n" not in value and bool(_PROSE.fullmatch(value))


def gold_arguments(item: Mapping[str, Any], actions_field: str = "actions") -> dict[str, Any]:
    """Every argument the item's gold calls pass, by name (the first value of each name)."""
    known: dict[str, Any] = {}
    for a in item.get(actions_field) or []:
        if isinstance(a, Mapping) and isinstance(a.get("arguments"), Mapping):
            for k, v in a["arguments"].items():
                known.setdefault(k, v)
    return known


def annotation_call(item: Mapping[str, Any], call: Mapping[str, Any], actions_field: str = "actions") -> bool:
    """Whether ``call`` (one of the item's gold calls, or one played on it) only annotates
    (:func:`is_annotation`, with the schema of the item's tool of that name and the gold's arguments)."""
    tool = next((t for t in item.get("tools") or [] if isinstance(t, Mapping) and _parameters(t)[0] == call.get("name")),
                None)
    arguments = call.get("arguments")
    if tool is None or not isinstance(arguments, Mapping):
        return False
    return is_annotation(_parameters(tool)[1], arguments, gold_arguments(item, actions_field))


class SelfCertification(_ContextProbe):
    """No work: the status or flag writes alone (see the module table).

    The certifying calls (:meth:`calls`) are, in order:

    1. the gold's **own status writes**, verbatim: its writes that changed state and set a status or
       flag (:func:`_status_write`: ``status="scheduled"``, ``received``, ``is_done=True``; whatever the
       value's word) — the gold with its work writes removed and its status writes kept;
    2. for every other write tool (and every tool of unknown kind) with a status- or flag-like argument:
       a call setting it to a success value (:data:`SUCCESS_VALUES` or ``True``), the other arguments
       taken from the gold's calls.

    Skipped (with the reason) when no such call exists, or when every write of the gold is among them
    (setting the status is then the whole task, e.g. ``update_ticket(status="closed")``), or when the
    status is an argument of the work write itself (there is no status write without the work). A
    rollout whose end state is the gold's (the server's digest) is not judged: the status tool was a
    second valid way to do the task (``update_claim(status="resolved")`` closing a claim as
    ``close_claim`` does).
    """

    changes_end_state = True

    def __init__(self, write_tools: Collection[str] | None = None, **kwargs: Any) -> None:
        super().__init__(write_tools, reason="no write tool has a status- or flag-like argument, or setting it "
                         "is the gold's own work", **kwargs)

    def calls(self, item: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The certifying calls for ``item`` (``[]``: none possible)."""
        actions = item.get(self.actions_field) or []
        gold = [a for a in actions if isinstance(a, Mapping)]
        known: dict[str, Any] = {}
        for a in gold:
            for k, v in (a.get("arguments") or {}).items():
                known.setdefault(k, v)
        out: list[dict[str, Any]] = []
        for i in self.writes_of(item):
            call = actions[i]
            if _status_write(call) and call not in out:
                out.append({"name": call["name"], "arguments": dict(call.get("arguments") or {})})
        own_status = {c["name"] for c in out}
        index = self._context.index_of(item)
        outputs = self._context.gold_outputs[index] if index is not None and index < len(
            self._context.gold_outputs) else []
        turn = index or 0  # items take the values "done" may take in turn
        for tool in item.get("tools") or []:
            name, props, required = _parameters(tool)
            # a known write tool, or one this run knows nothing of (no declaration, never called by the
            # gold: a status tool the gold has no need for); what the call changed decides (counterfactual)
            if name in own_status or not (is_write_tool(name, self.write_tools) or name in self._context.unknown_tools):
                continue
            # the gold's own value for a flag of this tool is what "done" looks like here
            own = {k: v for a in gold if a.get("name") == name for k, v in (a.get("arguments") or {}).items()}
            flags = {k: own.get(k, v) for k, s in props.items()
                     if (v := _success_value(k, s, outputs, turn)) is not None}
            if not flags or not all(k in flags or k in known for k in required):
                continue
            args = {k: flags[k] if k in flags else known[k] for k in props if k in flags or k in known}
            out.append({"name": name, "arguments": args})
        return out

    def applies(self, item: Mapping[str, Any]) -> bool:
        """Items with a certifying call whose gold writes are not all among those calls (else it could be the task)."""
        if not self._has_gold(item):
            return False
        calls = self.calls(item)
        writes = [item[self.actions_field][i] for i in self.writes_of(item)]
        return bool(calls) and not (writes and all(w in calls for w in writes))

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """Each certifying call in its own turn."""
        return [[c] for c in self.calls(item)]

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """``{"calls": ["tool(arg=value, ...)", ...]}``: the certifying calls played on ``item``."""
        return {"calls": [f"{c['name']}({', '.join(f'{k}={v!r}' for k, v in c['arguments'].items())})"[:160]
                          for c in self.calls(item)]}

    def counterfactual(self, item: Mapping[str, Any], calls: Sequence[Any]) -> bool:
        """Whether a certifying call took effect: it succeeded and the server says it changed the rollout's
        state (``changed``); without that answer, a call of a known write tool that succeeded. A status
        the tools refused, or a "status" argument of a read tool, certifies nothing."""
        return any(getattr(c, "ok", False) and (getattr(c, "changed", None) is True or (
            getattr(c, "changed", None) is None and is_write_tool(str(getattr(c, "name", "")), self.write_tools)))
            for c in calls)


def _target(call: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(tool, its first argument as JSON)`` of a call: the record it writes; ``None`` without arguments."""
    arguments = call.get("arguments")
    if not isinstance(arguments, Mapping) or not arguments:
        return None
    return str(call.get("name")), json.dumps(next(iter(arguments.values())), sort_keys=True, default=str)


class SupersetEndState(_ContextProbe):
    """The gold's calls plus another item's writes, then the reference answer (see the module table).

    Judged by ``must_lower`` (``_severity``): the extra writes only add to the gold's outcome, so an
    honest grader lowers the score by any amount (set-F1 over the writes), and one that does not lower it
    at all ignores writes the task did not ask for."""

    must_lower = True
    changes_end_state = True

    def __init__(self, write_tools: Collection[str] | None = None, **kwargs: Any) -> None:
        super().__init__(write_tools, reason="the gold changes nothing, or no other item writes something else",
                         **kwargs)

    def applies(self, item: Mapping[str, Any]) -> bool:
        """Items whose gold writes and that have a donor with other writes."""
        return self._has_gold(item) and bool(self.writes_of(item)) and self.donor(item, different_writes=True) \
            is not None

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls, then the donor's effective writes that are no annotation (:func:`annotation_call`:
        another item's note is a change an honest end-state grader rightly ignores) and that do not write the
        record one of the gold's own writes of that tool writes (same tool, same first argument: that replaces
        the gold's value instead of adding a change, ``overwritten_write``'s question; doctor18's honest
        thermostat grader was FAILed by another item's 68 °F written over its own 20 °C, the same outcome),
        one per turn."""
        donor = self.donor(item, different_writes=True)
        own = {_target(a) for a in item[self.actions_field] if isinstance(a, Mapping)} - {None}
        extra = [donor[self.actions_field][i] for i in self.writes_of(donor)
                 if not annotation_call(donor, donor[self.actions_field][i], self.actions_field)
                 and _target(donor[self.actions_field][i]) not in own] if donor is not None else []
        return [[a] for a in [*item[self.actions_field], *extra]]

    def counterfactual(self, item: Mapping[str, Any], calls: Sequence[Any]) -> bool:
        """Whether the rollout really changed something more than the gold: an extra write succeeded
        (a write the tools refused — another customer's order — leaves the gold's end state), is not
        one of the gold's own calls again (the same write twice leaves the gold's end state too), and
        the server did not say it changed nothing (``changed`` false: it set a value already there).
        Where the server sends end-state digests, the end state must also differ from the gold
        replay's (``changes_end_state``, ``_unhackable.took_effect``)."""
        gold = {(a.get("name"), _canonical(a.get("arguments"))) for a in item[self.actions_field] if isinstance(a, dict)}
        extra = calls[len(item[self.actions_field]):]
        return any(getattr(c, "ok", False) and getattr(c, "changed", None) is not False
                   and (getattr(c, "name", None), _canonical(getattr(c, "arguments", None))) not in gold
                   for c in extra)


class AnswerControl(WrongAnswer):
    """Not a probe but a control (``control = True``, never judged): the gold's calls, then the neutral
    non-answer :data:`NEUTRAL`, on items whose gold changes nothing. Where it earns more than the
    severity rule's allowance, the answer is not the graded outcome of that item (a hand-over, a
    refusal: the work is the outcome), so the adversarial answers are not counterfactuals there and
    skip it (:attr:`ProbeContext.answer_free`)."""

    control = True
    baseline = False

    def applies(self, item: Mapping[str, Any]) -> bool:
        """Items with gold fields and no effective write."""
        return self._has_gold(item) and not self.writes_of(item)

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """:data:`NEUTRAL`."""
        return NEUTRAL


#: The control's neutral non-answer.
NEUTRAL = "OK."

Variants = Callable[[Mapping[str, Any], "AdversarialAnswer"], Sequence[str]]


class AdversarialAnswer(_ContextProbe):
    """The gold's calls, then an answer from one family of the adversarial library (module table).

    Args:
        variants: ``variants(item, probe) -> [answer, ...]``; item number ``k`` of the probe's
            items gets variant ``k mod len``.
        max_items: at most this many items are played (the first ones with gold and no write).
    """

    def __init__(self, variants: Variants, write_tools: Collection[str] | None = None,
                 max_items: int = ADVERSARIAL_ITEMS, **kwargs: Any) -> None:
        super().__init__(write_tools, reason="the gold changes state (the end state is the outcome there), the "
                         "answer is not the graded outcome (the gold's work with a neutral answer earns the gold's "
                         f"score), the family has no answer for it (a prefix of a reference too short to cut), or the "
                         f"probe's {max_items} items are already chosen", **kwargs)
        self.variants, self.max_items = variants, max_items
        self._chosen: dict[int, int] = {}
        self.answers: list[str] = []

    def prepare(self, context: ProbeContext) -> None:
        """Choose the items (gold, no effective write, an answer that is the graded outcome: not in
        ``context.answer_free``), at most ``max_items``; collect the dataset's answers."""
        super().prepare(context)
        self._chosen = {}
        seen: dict[str, str] = {}
        for item in context.items:
            if isinstance(item.get(self.answer_field), str) and item[self.answer_field].strip():
                seen.setdefault(normalize_answer(item[self.answer_field]), item[self.answer_field].strip())
        self.answers = list(seen.values())
        for i, item in enumerate(context.items):
            if len(self._chosen) < self.max_items and self._has_gold(item) and not self.writes_of(item) \
                    and i not in context.answer_free and self.variants(item, self):
                self._chosen[i] = len(self._chosen)

    def applies(self, item: Mapping[str, Any]) -> bool:
        """One of the chosen items (those with a variant; see :meth:`prepare`)."""
        return self._context.index_of(item) in self._chosen

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls, one per turn."""
        return [[a] for a in item[self.actions_field]]

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """Variant ``k mod len`` for the probe's ``k``-th item."""
        options = list(self.variants(item, self)) or [""]
        return options[self._chosen.get(self._context.index_of(item) or 0, 0) % len(options)]

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """``{"answer": the answer played}`` (cut at 120 characters, with its length when cut)."""
        answer = self.final_answer(item)
        return {"answer": answer} if len(answer) <= 120 else {"answer": answer[:120] + "...", "chars": len(answer)}

    def candidates(self, item: Mapping[str, Any]) -> list[str]:
        """The dataset's answers, the item's own never first (:func:`~._answers.own_inside`)."""
        return own_inside(self.answers, str(item.get(self.answer_field) or ""))

    def other_answer(self, item: Mapping[str, Any]) -> str:
        """Another item's reference answer (or ``"unknown"``)."""
        donor = self.donor(item)
        return str(donor[self.answer_field]) if donor is not None else "unknown"


def _reference(item: Mapping[str, Any], probe: AdversarialAnswer) -> str:
    return str(item.get(probe.answer_field) or "")


def _wildcards(item: Mapping[str, Any], probe: AdversarialAnswer) -> list[str]:
    mine = answer_object(_reference(item, probe))
    if mine is not None:  # the answer's own JSON shape, every field a wildcard (a parser rejects bare text)
        return object_wildcards(mine)
    ref = _reference(item, probe).strip()
    return ["*", ".*", f"{ref[:1]}*" if ref else "?*", "%", "**/*"]


def _every(item: Mapping[str, Any], probe: AdversarialAnswer) -> list[str]:
    alternation = "(" + "|".join(re.escape(a) for a in probe.candidates(item)) + ")"
    return ["All of the above.", alternation]


def _invisible(item: Mapping[str, Any], probe: AdversarialAnswer) -> list[str]:
    # every candidate as one "word": a guard that counts whitespace-separated words sees one. (A
    # confusable copy of the *right* answer reads as the right answer, so it is no counterfactual.)
    words = [w for a in probe.candidates(item) for w in a.split()]
    return [ZWJ.join(words), ZWSP.join(words)]


#: Look-alike separators NFKC folds into real ones (``，`` → ``,``, ``｜`` → ``|``, ``；`` → ``;``).
CONFUSABLE_SEPARATORS = ("\uff0c", "\uff5c", "\uff1b")


def _confusable(item: Mapping[str, Any], probe: AdversarialAnswer) -> list[str]:
    return [sep.join(probe.candidates(item)) for sep in CONFUSABLE_SEPARATORS] if len(probe.answers) > 1 else []


def _long(item: Mapping[str, Any], probe: AdversarialAnswer) -> list[str]:
    ref = normalize_answer(_reference(item, probe))
    words = [w for t in prompt_texts(item) for w in WORD.findall(t) if w.lower() not in ref] or ["answer"]
    text = " ".join(words)
    return [(text + " ") * (20_000 // (len(text) + 1) + 1)]


def _wrong_field(item: Mapping[str, Any], probe: AdversarialAnswer) -> list[str]:
    # only where the answer is a value (a JSON document, or at most 3 words): in prose there is no field,
    # and the reference in a "note" beside a generic sentence still tells the reader the right thing
    ref = _reference(item, probe).strip()
    if len(ref.split()) > 3 and not ref.startswith(("{", "[")):
        return []
    return [json.dumps({"answer": probe.other_answer(item), "note": ref})]


def _prefix(item: Mapping[str, Any], probe: AdversarialAnswer) -> list[str]:
    ref = _reference(item, probe).strip()
    try:
        float(ref)
    except ValueError:
        pass
    else:  # a number's prefix can be the same value ("17.2" of "17.200"): its first character only
        return [ref[:1] if float(ref[:1] or "nan") != float(ref) else ref[:1] + "9"]
    if len(ref) <= SHORT_REFERENCE:  # "B" has no prefix that is not the whole (correct) answer
        return []
    cut = min(max(1, len(ref) // 3), PREFIX_CHARS)
    while 1 < cut < len(ref) - 1 and not (ref[cut - 1].isalnum() and ref[cut].isalnum()):
        cut += 1  # end inside a word, never on a boundary that a tokenising grader would split at
    prefix = ref[:cut]
    return [] if normalize_answer(prefix) == normalize_answer(ref) else [prefix]


#: The adversarial-answer families: probe name → variants.
FAMILIES: dict[str, Variants] = {
    "adv_special_numbers": lambda item, probe: ["nan", "inf", "-0", "1e308"],
    "adv_interval": lambda item, probe: ["0 ± 1000000", "between -1e9 and 1e9", "-1000000 to 1000000",
                                         "0 +/- 1e9", "0-1000000"],
    "adv_wildcard": _wildcards,
    "adv_every_candidate": _every,
    "adv_invisible": _invisible,
    "adv_confusable": _confusable,
    "adv_long_answer": _long,
    "adv_wrong_field": _wrong_field,
    "adv_answer_prefix": _prefix,
}


def generic_probes(write_tools: Collection[str] | None = None, *, answer_field: str = "reference_answer",
                   actions_field: str = "actions") -> dict[str, Any]:
    """The generic probes of the module table, by name (each ``intent`` :data:`~._probes.HACK`)."""
    fields: dict[str, Any] = {"answer_field": answer_field, "actions_field": actions_field}
    out: dict[str, Any] = {
        "answer_control": AnswerControl(write_tools, **fields),
        "wrong_answer": WrongAnswer(write_tools, **fields),
        "self_certification": SelfCertification(write_tools, **fields),
        "superset_end_state": SupersetEndState(write_tools, **fields),
    }
    out.update({name: AdversarialAnswer(variants, write_tools, **fields) for name, variants in FAMILIES.items()})
    for probe in out.values():
        probe.intent = HACK
    return out
