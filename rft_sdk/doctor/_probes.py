"""The probe contract: policies that play one behaviour through the real endpoints, and what their reward means.

A probe is any emulator policy — ``async act(messages, tools, *, item,
trace_id) -> PolicyStep`` — with these optional attributes:

``intent`` (str, default :data:`HACK`)
    What the probe's behaviour is, and so what a reward for it means:

    * :data:`HACK` — it does **not** achieve the task (no answer, a wrong
      entity, a wrong value written, a claim without work, every candidate at
      once). Reward for it makes the *unhackable* principle **FAIL**. A plain
      policy loaded with ``--probes MODULE:ATTR`` is a hack unless it says
      otherwise, so probe packs need nothing more than ``act``.
    * :data:`SHORTCUT` — it achieves the task, wastefully (ten times the calls)
      or without visible work (the right answer, no tool call). Reward for it is a
      **WARN** with advice (add a budget, hold out items, vary the answer) —
      unless the item declares a tool-call budget (:func:`declared_budget`) that
      the rollout exceeded: reward past a declared budget is a **FAIL**.
    * :data:`VALID` — a valid solution by another path ("must pass"). It is run
      by the *gradeable* principle: scoring below the job's ``pass_threshold`` on
      an item it applies to makes gradeable **FAIL** (the grader rejects a
      correct solution).

``applies(item) -> bool``
    Items on which the behaviour is not defined are skipped (``read_only`` on an
    item whose gold writes nothing: there, reading only is the right answer).

``skip_reason(item) -> str``
    Why ``applies`` is false for ``item`` — shown in the report, counted per reason.

``prepare(context: ProbeContext) -> None``
    Called once before the probe's rollouts with the whole dataset and the gold
    replay (for probes that need other items: cross-item replay, answer-space dump).

A probe that does not define ``intent`` as one of :data:`INTENTS` is refused
(``ValueError`` naming it). The built-in suite is in ``_suite``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rft_sdk.emulator import PolicyStep, make_tool_call, turns_taken

__all__ = [
    "BUDGET_FIELD",
    "HACK",
    "INTENTS",
    "READ_PREFIXES",
    "SHORTCUT",
    "VALID",
    "GoldPlanProbe",
    "ProbeContext",
    "TextProbe",
    "declared_budget",
    "is_write_tool",
    "item_key",
    "probe_applies",
    "probe_intent",
    "readable_output",
    "skip_reason",
]

HACK = "hack"
SHORTCUT = "shortcut"
VALID = "valid"
#: The values a probe's ``intent`` may take.
INTENTS = (HACK, SHORTCUT, VALID)

#: The dataset field holding an item's declared tool-call budget (a non-negative int).
BUDGET_FIELD = "max_tool_calls"

#: A tool whose name starts with one of these is taken as read-only when no
#: explicit write-tool list is given (a heuristic; pass ``write_tools`` to be exact).
READ_PREFIXES = ("get", "find", "list", "search", "read", "lookup", "fetch", "calculate", "compute",
                 "query", "describe", "check", "count", "think", "view", "show", "grep", "inspect", "browse",
                 "git_log", "git_show", "git_diff", "git_status", "git_blame", "run_test", "run_lint", "lint")

DONE_TEXT = "Done: I have completed your request exactly as you asked, and everything is confirmed."


def is_write_tool(name: str, write_tools: Collection[str] | None = None) -> bool:
    """Whether tool ``name`` changes state: in ``write_tools`` when given, else not a :data:`READ_PREFIXES` name."""
    if write_tools is not None:
        return name in write_tools
    return not name.lower().startswith(READ_PREFIXES)


def probe_intent(probe: Any, name: str = "probe") -> str:
    """``probe.intent`` (default :data:`HACK`).

    Raises:
        ValueError: an ``intent`` outside :data:`INTENTS` (the message names the probe).
    """
    intent = getattr(probe, "intent", HACK)
    if intent not in INTENTS:
        raise ValueError(f"probe {name!r}: intent {intent!r} is not one of {list(INTENTS)}")
    return str(intent)


def probe_applies(probe: Any, item: Mapping[str, Any]) -> bool:
    """``probe.applies(item)`` when the probe defines it, else ``True``."""
    applies = getattr(probe, "applies", None)
    return True if applies is None else bool(applies(item))


def skip_reason(probe: Any, item: Mapping[str, Any]) -> str:
    """``probe.skip_reason(item)`` when defined, else a generic sentence."""
    explain = getattr(probe, "skip_reason", None)
    return str(explain(item)) if explain is not None else "the probe's applies(item) is false"


def declared_budget(item: Mapping[str, Any], budget: int | None = None) -> int | None:
    """The tool-call budget a task declares: the item's ``max_tool_calls``, else ``budget`` (``--budget``).

    Raises:
        ValueError: a ``max_tool_calls`` that is not a non-negative integer.
    """
    value = item.get(BUDGET_FIELD, budget)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{BUDGET_FIELD} must be a non-negative integer, got {value!r}")
    return value


def item_key(item: Mapping[str, Any]) -> str:
    """SHA-256 of the item's canonical JSON: how a probe finds an item of its :class:`ProbeContext`."""
    return hashlib.sha256(json.dumps(item, sort_keys=True, default=str).encode()).hexdigest()


def _members(item: Mapping[str, Any]) -> frozenset[tuple[Any, int]]:
    """``{(key, id(value))}`` of ``item``: equal for two mappings holding the same objects under the same keys
    (an item and its shallow copies), whose :func:`item_key` is then the same."""
    return frozenset((k, id(v)) for k, v in item.items())


@dataclass
class ProbeContext:
    """What a probe's ``prepare`` sees: the dataset and its gold replay.

    Attributes:
        items: the dataset items, in order.
        gold_outputs: per item, the outputs of the successful tool calls of one
            reference replay (``[]`` for items without gold fields).
        gold_scores: per item, the reference replay's score (``None``: not replayed or discarded).
        gold_ok: per item, whether each gold call succeeded in that replay (``[]``: not replayed).
        write_tools: the state-changing tool names (``None``: the name heuristic).
        budget: the ``--budget`` default for items that declare none.
        answer_free: items whose answer is not the graded outcome (the ``answer_control`` earned the
            gold's score there), filled before the other probes prepare.
        gold_end_states: per item, the server's digest of the gold replay's end state
            (``protocol.END_STATE_HEADER``; ``None``: unknown).
        unknown_tools: tools whose kind (write or read) this run does not know: neither declared nor
            called successfully by the gold (``_unhackable.resolve_write_tools``).
        lists_free: items whose JSON answer's list fields are not graded (``structured_control``: replacing
            them kept the gold's score), filled before the other probes prepare.
        lists_checked: items ``structured_control`` graded (``answer_superset`` plays only those, when it ran).
    """

    items: Sequence[Mapping[str, Any]]
    gold_outputs: Sequence[Sequence[str]] = ()
    gold_scores: Sequence[float | None] = ()
    gold_ok: Sequence[Sequence[bool]] = ()
    write_tools: Collection[str] | None = None
    budget: int | None = None
    answer_free: set[int] = field(default_factory=set)
    gold_end_states: Sequence[str | None] = ()
    unknown_tools: Collection[str] = ()
    lists_free: set[int] = field(default_factory=set)
    lists_checked: set[int] = field(default_factory=set)
    _index: dict[str, int] = field(default_factory=dict, repr=False)
    _by_members: dict[frozenset[tuple[Any, int]], tuple[int, tuple[Any, ...]]] = field(
        default_factory=dict, repr=False, compare=False)

    def index_of(self, item: Mapping[str, Any]) -> int | None:
        """The position of ``item`` in :attr:`items` (by :func:`item_key`), or ``None``.

        An item of :attr:`items` itself, or a shallow copy of one (the rollouts' ``dict(item)``: the same
        keys holding the very same objects, so the same canonical JSON), is found by :func:`_members`
        without hashing its JSON again (``make doctor`` makes ~28,600 calls, each hashing a 16 KB retail item
        before); any other item by :func:`item_key`. Like the index, this takes the items as unchanged once
        indexed."""
        if not self._index:
            keys = [item_key(x) for x in self.items]
            self._index = {k: i for i, k in enumerate(keys)}
            # the member objects are kept with the entry, so their ids cannot be reused while it lives
            self._by_members = {_members(x): (self._index[k], tuple(x.values())) for x, k in zip(self.items, keys)}
        found = self._by_members.get(_members(item))
        return found[0] if found is not None else self._index.get(item_key(item))

    def effective_writes(self, item: Mapping[str, Any], actions_field: str = "actions") -> list[int]:
        """Positions of the gold's write calls that change state: every write by name
        (:func:`is_write_tool`), minus those that failed in the gold replay — τ²-bench's gold
        lists hold deliberate failing writes, and leaving one out or altering it changes nothing."""
        actions = item.get(actions_field) or []
        index = self.index_of(item)
        ok = self.gold_ok[index] if index is not None and index < len(self.gold_ok) else []
        return [i for i, a in enumerate(actions)
                if isinstance(a, Mapping) and is_write_tool(str(a.get("name")), self.write_tools)
                and (len(ok) != len(actions) or ok[i])]


class TextProbe:
    """A probe that answers at once, without tool calls, with ``answer(item) -> str``.

    Args:
        answer: builds the final answer text from the dataset item.
        intent: see the module docstring (default :data:`HACK`).
        applies_if: ``applies_if(item) -> bool``; default every item.
        reason: the skip reason shown for items where ``applies_if`` is false.
    """

    def __init__(self, answer: Callable[[Mapping[str, Any]], str], *, intent: str = HACK,
                 applies_if: Callable[[Mapping[str, Any]], bool] | None = None, reason: str = "") -> None:
        self.answer, self.intent, self._applies_if, self._reason = answer, intent, applies_if, reason

    def applies(self, item: Mapping[str, Any]) -> bool:
        """``applies_if(item)`` (every item when not given)."""
        return True if self._applies_if is None else bool(self._applies_if(item))

    def skip_reason(self, item: Mapping[str, Any]) -> str:
        """The reason given at construction."""
        return self._reason or "not applicable"

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, item: dict[str, Any],
                  trace_id: str) -> PolicyStep:
        """Return the final answer (no tool calls)."""
        return PolicyStep(content=self.answer(item))


Steps = list[list[dict[str, Any]]]


class GoldPlanProbe:
    """A probe that replays a transformed copy of the item's gold calls, then answers.

    Args:
        transform: ``transform(actions) -> steps``: from the gold ``[{"name",
            "arguments"}]`` to a list of steps, each a list of calls issued in one turn.
        applies_if: ``applies_if(actions) -> bool``; items where it is false are skipped.
        answer_field: the item field answered at the end (the reference answer);
            :data:`DONE_TEXT` when absent.
        actions_field: the item field holding the gold calls.
        intent: see the module docstring (default :data:`HACK`).
        reason: the skip reason for items with gold fields where ``applies_if`` is false.
        answer: ``answer(item) -> str`` replacing the reference answer (e.g. an empty one).
    """

    def __init__(self, transform: Callable[[list[dict[str, Any]]], Steps],
                 applies_if: Callable[[list[dict[str, Any]]], bool] = lambda actions: True,
                 answer_field: str = "reference_answer", actions_field: str = "actions", *,
                 intent: str = HACK, reason: str = "the transformation is not defined for this item's gold calls",
                 answer: Callable[[Mapping[str, Any]], str] | None = None) -> None:
        self.transform, self.applies_if = transform, applies_if
        self.answer_field, self.actions_field = answer_field, actions_field
        self.intent, self._reason, self._answer = intent, reason, answer

    def _has_gold(self, item: Mapping[str, Any]) -> bool:
        return isinstance(item.get(self.actions_field), list) and isinstance(item.get(self.answer_field), str)

    def applies(self, item: Mapping[str, Any]) -> bool:
        """Whether the item carries gold calls and a reference answer, and ``applies_if`` holds."""
        return self._has_gold(item) and bool(self.applies_if(item[self.actions_field]))

    def skip_reason(self, item: Mapping[str, Any]) -> str:
        """Missing gold fields, or the reason given at construction."""
        if not self._has_gold(item):
            return f"the item has no {self.actions_field!r} list and {self.answer_field!r} string"
        return self._reason

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The steps this probe plays on ``item``."""
        return self.transform(list(item.get(self.actions_field) or []))

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The answer given after the last step."""
        if self._answer is not None:
            return self._answer(item)
        answer = item.get(self.answer_field)
        return answer if isinstance(answer, str) else DONE_TEXT

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, item: dict[str, Any],
                  trace_id: str) -> PolicyStep:
        """Return the calls of turn ``k`` of the plan, then the answer."""
        steps = self.plan(item)
        turn = turns_taken(messages, item)
        if turn < len(steps):
            return PolicyStep(tool_calls=[make_tool_call(c["name"], c.get("arguments", {})) for c in steps[turn]])
        return PolicyStep(content=self.final_answer(item))


#: A JSON ``\\uXXXX`` escape (surrogate pairs whole) that is not itself escaped.
_ESCAPE = re.compile(r"(?<!\\)\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})|(?<!\\)\\u([0-9a-f]{4})", re.IGNORECASE)


def readable_output(text: str) -> str:
    """A tool output with its JSON escapes of non-ASCII characters written as the characters (``\\u00a3`` → ``£``:
    ``json.dumps``' default ``ensure_ascii`` hides a currency sign from every probe that reads the figures and names
    an output prints, as a model reads them decoded); ASCII escapes (a quote, a control character) stay escaped, so a
    JSON output stays JSON."""
    def char(m: re.Match[str]) -> str:
        if m.group(1):  # a surrogate pair: one character past the BMP
            return chr(0x10000 + ((int(m.group(1), 16) - 0xD800) << 10) + int(m.group(2), 16) - 0xDC00)
        code = int(m.group(3), 16)
        return chr(code) if code >= 0x80 and not 0xD800 <= code <= 0xDFFF else m.group()
    return _ESCAPE.sub(char, text) if "\\u" in text else text
