"""``rft validate`` warns where a line's prompt states a tool-call budget that is not its ``max_tool_calls``
(``rft_sdk._validation._stated_budget``, docs/gold-items.md "budget in the prompt"), and says nothing where the
numbers agree, where no number is stated or where the line has no budget."""

from __future__ import annotations

from typing import Any

import pytest

from rft_sdk._validation._gold import check_gold
from rft_sdk._validation._report import Report
from rft_sdk._validation._stated_budget import stated_budgets


def _line(prompt: Any, budget: int | None = 3, role: str = "user") -> dict[str, Any]:
    line: dict[str, Any] = {"messages": [{"role": role, "content": prompt}],
                            "actions": [{"name": "get_book", "arguments": {"book_id": "b1"}}],
                            "reference_answer": "ANSWER: shelf 4"}
    if budget is not None:
        line["max_tool_calls"] = budget
    return line


def _warnings(*lines: dict[str, Any]) -> list[tuple[tuple[int, ...], str, str]]:
    report = Report("openai", "train.jsonl")
    check_gold(list(lines), report)
    return [(f.lines, f.field, f.message) for f in report.findings if f.severity == "warning"]


@pytest.mark.parametrize(("prompt", "stated"), [
    ("Which shelf holds b1? You may make at most 4 tool calls.", [4]),
    ("Use no more than five tool calls; a refused call counts too.", [5]),
    ("You have a budget of 4 calls.", [4]),
    ("Tool-call budget: 2.", [2]),
    ("Answer within 6 metered tool calls.", [6]),
    ("2 tool calls at most, please.", [2]),
])
def test_a_stated_budget_that_differs_from_max_tool_calls_warns(prompt: str, stated: list[int]) -> None:
    assert stated_budgets(_line(prompt)) == stated
    found = _warnings(_line(prompt))
    assert len(found) == 1
    lines, field, message = found[0]
    assert lines == (1,) and field == "max_tool_calls"
    assert f"budget of {stated[0]} tool call(s) but max_tool_calls is 3" in message


@pytest.mark.parametrize("prompt", [
    "Which shelf holds b1? You may make at most 3 tool calls.",           # the numbers agree
    "You have a budget of three calls.",                                   # as a word, agreeing
    [{"type": "text", "text": "At most 3 tool calls."}],                   # a list of parts, agreeing
    "Which shelf holds b1?",                                               # no number stated
    "Take at most 4 books; the desk answers up to 40 calls an hour.",      # numbers, but no budget of tool calls
])
def test_no_warning_where_the_numbers_agree_or_none_is_stated(prompt: Any) -> None:
    assert _warnings(_line(prompt)) == []


def test_no_warning_without_max_tool_calls_and_the_system_message_counts() -> None:
    assert _warnings(_line("At most 4 tool calls.", budget=None)) == []
    assert len(_warnings(_line("At most 4 tool calls.", role="system"))) == 1
    # an assistant turn is not the prompt
    line = _line("Which shelf holds b1?")
    line["messages"] = [{"role": "assistant", "content": "I may make at most 4 tool calls."}, *line["messages"]]
    assert _warnings(line) == []
