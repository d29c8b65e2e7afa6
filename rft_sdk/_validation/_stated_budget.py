"""A tool-call budget stated in a line's prompt against the line's ``max_tool_calls`` (``rft validate``).

The model never sees ``max_tool_calls``; where the prompt states a budget, the grader enforces the number of
``max_tool_calls`` and the model learns the one it was told (``docs/gold-items.md``, "budget in the prompt").
A line whose ``system``, ``developer`` or ``user`` messages state a budget and none of the stated numbers is its
``max_tool_calls`` gets a **warning** (the run still happens). What counts as stating a budget, whole words in any
case, the number in digits or as a word from ``one`` to ``twenty``:

* ``at most``, ``no more than``, ``not more than``, ``up to``, ``a maximum of``, ``within`` before ``N tool
  calls`` (``at most 3 tool calls``; one of ``metered``, ``successful``, ``recorded``, ``total`` may stand
  before ``tool``);
* ``a budget of`` or ``a limit of`` before ``N calls`` or ``N tool calls`` (``a budget of 4 calls``);
* ``tool-call budget`` or ``call budget`` (or ``limit``), then ``of``, ``is``, ``:`` or ``=`` and ``N``;
* ``N tool calls at most`` (or ``maximum``).

A line without ``max_tool_calls`` or without such words is not checked; the numbers agreeing, nothing is said.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ._report import Report

__all__ = ["check_stated_budget", "stated_budgets"]

_WORDS = {w: n for n, w in enumerate(("one two three four five six seven eight nine ten eleven twelve thirteen "
                                      "fourteen fifteen sixteen seventeen eighteen nineteen twenty").split(), 1)}
_N = r"(?P<n>\d{1,4}|" + "|".join(_WORDS) + r")"
_KIND = r"(?:(?:metered|successful|recorded|total)\s+)?"
_TOOL_CALLS = _KIND + r"tool[\s-]*calls?"
_ANY_CALLS = _KIND + r"(?:tool[\s-]*)?calls?"
#: The phrasings of the module docstring, each with the number as group ``n``.
STATED_BUDGET = [re.compile(p, re.IGNORECASE) for p in (
    r"\b(?:at\s+most|no\s+more\s+than|not\s+more\s+than|up\s+to|a\s+maximum\s+of|within)\s+" + _N + r"\s+"
    + _TOOL_CALLS + r"\b",
    r"\b(?:budget|limit)\s+of\s+" + _N + r"\s+" + _ANY_CALLS + r"\b",
    r"\b(?:tool[\s-]*)?call\s+(?:budget|limit)\s*(?:of|is|:|=)\s*" + _N + r"\b",
    r"\b" + _N + r"\s+" + _TOOL_CALLS + r"\s+(?:at\s+most|maximum)\b",
)]
_PROMPT_ROLES = ("system", "developer", "user")


def _texts(item: Mapping[str, Any]) -> list[str]:
    """The text of every system, developer and user message (a list of parts: its text parts)."""
    out = []
    for message in item.get("messages") or []:
        if not isinstance(message, Mapping) or message.get("role") not in _PROMPT_ROLES:
            continue
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out += [p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str)]
    return out


def stated_budgets(item: Mapping[str, Any]) -> list[int]:
    """The tool-call budgets the line's prompt states (module docstring), in order, each once."""
    found: list[int] = []
    for text in _texts(item):
        for pattern in STATED_BUDGET:
            for m in pattern.finditer(text):
                word = m["n"].lower()
                n = _WORDS[word] if word in _WORDS else int(word)
                if n not in found:
                    found.append(n)
    return found


def check_stated_budget(item: Mapping[str, Any], budget: int | None, line: int, report: Report) -> None:
    """Warn where the prompt states a tool-call budget and none of the numbers it states is ``budget`` (the line's
    ``max_tool_calls``); nothing without a budget or without a stated one."""
    if budget is None:
        return
    stated = stated_budgets(item)
    if not stated or budget in stated:
        return
    said = " and ".join(str(n) for n in stated)
    report.add("warning", line, "max_tool_calls",
               f"the prompt states a budget of {said} tool call(s) but max_tool_calls is {budget}: the grader "
               f"enforces {budget} while the model is told {said}",
               "state the number of max_tool_calls in the prompt, or set max_tool_calls to the stated one "
               "(docs/gold-items.md, budget in the prompt)")
