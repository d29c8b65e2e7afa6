"""Codebase research (the Qodo pattern): ``rft serve examples.code_research.app:server``.

Questions about the sample library's repository (``examples/_repos``) whose
complete answer must contain known facts (``build_dataset``). Each rollout gets a sandbox holding
the repository (hard-link farm; the tools are read-only). Tools: ``search``
(regular expression over the files), ``find_symbol`` (where a function or
class is defined), ``read_file``, ``list_dir``.

Grader ``research`` (default): recall of the item's ``facts`` in the final
answer (normalised matching: case-insensitive, whole tokens, backticks and
punctuation ignored), minus 0.05 per tool call past the item's
``tool_budget`` (at most 0.5) — the long tail of >15 calls per sample that
Qodo's training removed. The sandbox is released after grading.
"""

from __future__ import annotations

import re

from rft_sdk import Grade, GradingContext, Rollout, ToolError, ToolServer, grader, rewards, tool
from rft_sdk.sandbox import Sandbox, SandboxLimits

from .._common import pool_factory
from .._repo_tools import grep as _grep
from .._repo_tools import list_dir as _list_dir
from .._repo_tools import read_file as _read_file
from .._repos import template

__all__ = ["fact_found", "find_symbol", "grade_research", "list_dir", "pool", "read_file", "search", "server"]

COST_PER_EXTRA_CALL = 0.05
MAX_BUDGET_PENALTY = 0.5
_TOKEN = re.compile(r"[a-z0-9_./-]+")

pool = pool_factory(copy="hardlink", limits=SandboxLimits(timeout_s=10, memory_bytes=512 * 1024**2))


def _box(rollout: Rollout) -> Sandbox:
    return pool().for_rollout(rollout, template(rollout.item["commit"]))


@tool
def search(pattern: str, path: str, *, rollout: Rollout) -> str:
    """Search files under path ("." for all) for an extended regular expression; file:line:text."""
    return _grep(_box(rollout), pattern, path)


@tool
def find_symbol(name: str, *, rollout: Rollout) -> str:
    """Where a function or class is defined: file:line:definition for each match."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ToolError(f"{name!r} is not a Python identifier")
    return _grep(_box(rollout), rf"^\s*(async\s+)?(def|class)\s+{name}\b", ".")


@tool
def read_file(path: str, start_line: int, max_lines: int, *, rollout: Rollout) -> str:
    """Read lines of a file of the repository (1-based start_line, at most 400 lines)."""
    return _read_file(_box(rollout), path, start_line, max_lines)


@tool
def list_dir(path: str, *, rollout: Rollout) -> str:
    """List a directory of the repository ("." for the root); directories end with "/"."""
    return _list_dir(_box(rollout), path)


def _tokens(text: str) -> set[str]:
    text = text.lower().replace("`", " ").replace("'", " ").replace('"', " ")
    return {t.strip("./-") for t in _TOKEN.findall(text)} | set(_TOKEN.findall(text))


def fact_found(fact: str, answer_tokens: set[str]) -> bool:
    """Whether ``fact`` (normalised to lower case) is one whole token of the answer."""
    return fact.lower() in answer_tokens


@grader(name="research", default=True, score_range=(0.0, 1.0))
def grade_research(ctx: GradingContext) -> Grade:
    """Fact recall minus the tool-budget penalty; releases the sandbox.

    Raises:
        ValueError: the item has no non-empty ``facts`` list.
    """
    try:
        facts = ctx.item.get("facts")
        if not isinstance(facts, list) or not facts:
            raise ValueError("research items need a non-empty 'facts' list")
        tokens = _tokens(ctx.output_text)
        missing = [f for f in facts if not fact_found(f, tokens)]
        recall = 1.0 - len(missing) / len(facts)
        g = Grade(recall, {"recall": recall}, [f"missing facts: {missing}"] if missing else [])
        penalty = rewards.budget_penalty(ctx.count(), int(ctx.item.get("tool_budget", 6)), COST_PER_EXTRA_CALL,
                                         MAX_BUDGET_PENALTY)
        return rewards.apply_penalty(g, "tool_budget", penalty)
    finally:
        pool().release(ctx.trace_id)


server = ToolServer(tools=[search, find_symbol, read_file, list_dir], graders=[grade_research])
