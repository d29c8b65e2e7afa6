"""Evidence of work for a retail rollout, as pure functions of plain data.

"Evidence of work" means: **what the final answer states was returned by the
tools in this rollout**, and the outcomes the task needs (the customer
identified, a hand-over to a human agent) happened in it — never "the
rollout called the same tools as the gold". Any valid path passes: a
customer identified by email where the gold used name + zip, extra reads,
writes in another order that end in the same state.

Rules (each makes the rollout score 0.0; see :func:`evidence_reasons`):

* **identified** (store rule 1): when the gold identifies a customer, some
  call of this rollout to :data:`AUTH_TOOLS` returned that customer's user id.
* **hand-over**: when the gold transfers the customer to a human agent, the
  rollout did so too (the hand-over is an outcome the database cannot show).
* **facts from the tools** (store rule 7): every ``communicate_info`` fact the
  answer states appears in the output of a successful call of this rollout,
  (counts excepted: :func:`needs_evidence`), and every *figure* of the answer (a token of the normalised answer holding a
  decimal point or at least three digits: prices, order/item/tracking ids)
  appears in the customer's message or in such an output.

Calls are plain data: dicts ``{"name", "arguments", "output", "error"}`` or
objects with those attributes (``rft_sdk.ToolCallRecord``, the emulator's
``ToolCallResult``); a call counts as successful when it has an output and no
error (and, when it has one, a 2xx ``status``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._db import BaseDB, RetailView
from ._text import contains, normalize_text
from ._tools import RetailError, call_tool

__all__ = ["AUTH_TOOLS", "PASTE_RUN", "TRANSFER_TOOL", "Call", "GoldFacts", "as_call", "evidence_reasons", "figures",
           "gold_facts", "needs_evidence", "pasted_output", "replay_calls"]

#: The tools that identify a customer (either one is a valid path).
AUTH_TOOLS = ("find_user_id_by_email", "find_user_id_by_name_zip")
TRANSFER_TOOL = "transfer_to_human_agents"

#: A figure token is ``[#a-z_]*\d[\w.\-]*`` (:func:`_figure_tokens` finds them in linear time: that expression
#: searched with ``re.findall`` backtracks over every start of a long run of letters, quadratic in its length).
_DIGIT = re.compile(r"\d")
_FIGURE_TAIL = re.compile(r"[\w.\-]*")
_FIGURE_LEAD = frozenset("#_abcdefghijklmnopqrstuvwxyz")
#: Characters of a tool output that, found verbatim in the answer, make it a paste (JSON keys and
#: quotes interleave every field of a record, so prose that quotes a value never runs this long).
PASTE_RUN = 40


@dataclass(frozen=True)
class Call:
    """One tool call as the grader reads it: ``output`` is ``None`` unless it succeeded."""

    name: str
    arguments: Mapping[str, Any]
    output: str | None


def as_call(call: Any) -> Call:
    """A :class:`Call` from a dict or a record object (see the module docstring)."""
    get = call.get if isinstance(call, Mapping) else (lambda key, default=None: getattr(call, key, default))
    arguments = get("arguments") or {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            arguments = {}
    status = get("status")
    ok = get("error") is None and (status is None or 200 <= int(status) < 300)
    output = get("output")
    return Call(str(get("name", "")), arguments if isinstance(arguments, Mapping) else {},
                output if ok and isinstance(output, str) else None)


def replay_calls(view: RetailView, actions: Iterable[Mapping[str, Any]]) -> list[Call]:
    """Run ``[{"name", "arguments"}]`` in order on ``view`` and record what each returned (``None`` on error)."""
    out = []
    for action in actions:
        arguments = action.get("arguments") or {}
        if isinstance(arguments, str):
            arguments = json.loads(arguments)
        try:
            output: str | None = call_tool(view, str(action["name"]), arguments)
        except RetailError:
            output = None
        out.append(Call(str(action["name"]), arguments, output))
    return out


@dataclass(frozen=True)
class GoldFacts:
    """Outcomes of the gold run the database does not hold.

    Attributes:
        user_id: the customer the gold identified (last successful auth call), or ``None``.
        transfers: whether the gold hands the customer over to a human agent.
    """

    user_id: str | None
    transfers: bool


_FACTS_PREFIX = "facts\x00"
_CACHE_MAX = 1024


def gold_facts(actions: Sequence[Mapping[str, Any]], base: BaseDB) -> GoldFacts:
    """The :class:`GoldFacts` of ``actions`` run on a fresh view of ``base`` (cached on ``base``)."""
    key = _FACTS_PREFIX + json.dumps(actions, sort_keys=True)
    cached = base.gold_cache.get(key)
    if cached is None:
        calls = replay_calls(base.view(), actions)
        users = [c.output for c in calls if c.name in AUTH_TOOLS and c.output is not None]
        cached = {"user_id": users[-1] if users else None,
                  "transfers": any(c.name == TRANSFER_TOOL and c.output is not None for c in calls)}
        if len(base.gold_cache) >= _CACHE_MAX:
            base.gold_cache.clear()
        base.gold_cache[key] = cached
    return GoldFacts(cached["user_id"], cached["transfers"])


def _figure_tokens(text: str) -> Iterator[str]:
    r"""What ``re.findall(r"[#a-z_]*\d[\w.\-]*", text)`` finds, in one pass: from each digit, back over
    the ``[#a-z_]`` run before it (not before the previous token's end), forward over ``[\w.\-]``."""
    pos = 0
    while (digit := _DIGIT.search(text, pos)) is not None:
        start = digit.start()
        while start > pos and text[start - 1] in _FIGURE_LEAD:
            start -= 1
        end = _FIGURE_TAIL.match(text, digit.end()).end()  # type: ignore[union-attr]  # [..]* always matches
        yield text[start:end]
        pos = end


def figures(answer: str) -> list[str]:
    """The figures of ``answer``: tokens of :func:`normalize_text` with a decimal point or >= 3 digits.

    ``"Refund $1,234.50 to gift_card_7 for #W123; 20 hours"`` → ``["1234.5", "gift_card_7"... ]`` minus
    tokens with fewer than three digits and no decimal point (``"20"``, ``"gift_card_7"``).
    """
    out = []
    for token in _figure_tokens(normalize_text(answer)):
        token = token.rstrip(".-")
        digits = sum(ch.isdigit() for ch in token)
        if digits >= 3 or re.search(r"\d\.\d", token):
            out.append(token)
    return list(dict.fromkeys(out))


def pasted_output(answer: str, outputs: Iterable[str], run: int = PASTE_RUN) -> bool:
    """Whether ``answer`` holds ``run`` consecutive characters of one of ``outputs`` verbatim.

    Every window of ``run`` characters of the output, at a stride of ``run // 2``, is looked
    for in the answer, so any verbatim copy of ``1.5 * run`` characters or more is found.
    """
    if len(answer) < run:
        return False
    step = max(1, run // 2)
    return any(text[i:i + run] in answer for text in outputs if len(text) >= run
               for i in range(0, len(text) - run + 1, step))


def needs_evidence(fact: str) -> bool:
    """Whether a ``communicate_info`` fact must be returned by a tool call: all but counts.

    A count (an integer below 100: "10 t-shirt options") is derived by reading a
    list, never returned verbatim by a tool, so it cannot be required to be.
    """
    return not (fact.strip().isdigit() and int(fact) < 100)


def _user_text(item: Mapping[str, Any]) -> str:
    parts = []
    for m in item.get("messages") or []:
        if isinstance(m, Mapping) and m.get("role") == "user" and isinstance(m.get("content"), str):
            parts.append(m["content"])
    return "\n".join(parts)


def evidence_reasons(item: Mapping[str, Any], answer: str, calls: Iterable[Any], base: BaseDB) -> list[str]:
    """Why the rollout shows no evidence of work (empty list: it does); the rules of the module docstring.

    Args:
        item: the dataset line (``actions``, ``communicate_info``, ``messages``).
        answer: the final answer text.
        calls: the rollout's tool calls (dicts or record objects).
        base: the base database (for the gold's outcomes).
    """
    made = [as_call(c) for c in calls]
    outputs = [c.output for c in made if c.output is not None]
    facts = gold_facts(item["actions"], base)
    reasons = []
    if facts.user_id is not None and not any(c.name in AUTH_TOOLS and c.output is not None
                                             and c.output.strip() == facts.user_id for c in made):
        reasons.append(f"the customer ({facts.user_id}) was never identified by {' or '.join(AUTH_TOOLS)}")
    if facts.transfers and not any(c.name == TRANSFER_TOOL and c.output is not None for c in made):
        reasons.append("the task needs a transfer to a human agent and the rollout made none")
    required = item.get("communicate_info") or []
    said = normalize_text(answer)
    returned = _Normalized(outputs)
    unsupported = [s for s in required if needs_evidence(s) and contains(said, s)
                   and not any(contains(o, s) for o in returned)]
    reasons += [f"the answer states {s!r}, which no tool call of this rollout returned" for s in unsupported]
    stated = {normalize_text(s).strip() for s in required}
    figs = [f for f in figures(answer) if f not in stated]
    if figs:
        prompt = normalize_text(_user_text(item))
        made_up = [f for f in figs if not contains(prompt, f) and not any(contains(o, f) for o in returned)]
        if made_up:
            reasons.append(f"the answer states figures no tool call returned (store rule 7): {made_up[:5]}")
    return reasons


class _Normalized:
    """The outputs, each passed through :func:`normalize_text` once, on first use (most searches stop early)."""

    def __init__(self, texts: Sequence[str]) -> None:
        self._texts = list(texts)
        self._done: list[str] = []

    def __iter__(self) -> Iterator[str]:
        for i, text in enumerate(self._texts):
            if i == len(self._done):
                self._done.append(normalize_text(text))
            yield self._done[i]
