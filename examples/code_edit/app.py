"""Code-edit planning (the Cognition pattern): ``rft serve examples.code_edit.app:server``.

From a user request (a commit's subject in the sample repository, or a pull
request's title in a real one built with ``--source``), the model names the files of the repository that must be edited. Every rollout
gets its own sandbox holding the repository at the commit before the change
(hard-link farm of a cached tree: the tools are read-only); the read tools are
cheap and independent, so a policy can call several in parallel in one turn.

Grader ``code_edit`` (default): F1 of the answered files against the files the
real commit changed, minus 0.05 per tool call beyond the item's
``tool_budget`` (at most 0.5); the sandbox is released after grading.
"""

from __future__ import annotations

import json
import re

from rft_sdk import Grade, GradingContext, Rollout, ToolServer, grader, rewards, tool
from rft_sdk.sandbox import Sandbox, SandboxLimits

from .._common import pool_factory
from .._repo_tools import grep as _grep
from .._repo_tools import list_dir as _list_dir
from .._repo_tools import read_file as _read_file
from .._repos import bare_repo, template

__all__ = ["code_edit", "git_log", "grep", "list_dir", "parse_files", "pool", "read_file", "server"]

COST_PER_EXTRA_CALL = 0.05
MAX_BUDGET_PENALTY = 0.5


pool = pool_factory(copy="hardlink", limits=SandboxLimits(timeout_s=10, memory_bytes=512 * 1024**2),
                    ro_paths=lambda: [bare_repo()])  # git_log reads the history, read-only


def _box(rollout: Rollout) -> Sandbox:
    return pool().for_rollout(rollout, template(rollout.item["parent"]))


@tool
def list_dir(path: str, *, rollout: Rollout) -> str:
    """List a directory of the repository ("." for the root); directories end with "/"."""
    return _list_dir(_box(rollout), path)


@tool
def read_file(path: str, start_line: int, max_lines: int, *, rollout: Rollout) -> str:
    """Read lines of a file of the repository (1-based start_line, at most 400 lines)."""
    return _read_file(_box(rollout), path, start_line, max_lines)


@tool
def grep(pattern: str, path: str, *, rollout: Rollout) -> str:
    """Search files under path ("." for all) for an extended regular expression; file:line:text."""
    return _grep(_box(rollout), pattern, path)


@tool
def git_log(path: str, max_count: int, *, rollout: Rollout) -> str:
    """The most recent commits (hash, date, subject) that changed a file or directory."""
    box = _box(rollout)
    res = box.run(["git", "-c", "safe.directory=*", f"--git-dir={bare_repo()}", "log", f"--max-count={max(1, min(max_count, 50))}",
                   "--format=%h %ad %s", "--date=short", rollout.item["parent"], "--", box.relpath(path)])
    return res.stdout.strip() or "no commits"


_PATH = re.compile(r"[A-Za-z0-9_./-]+\.[A-Za-z0-9]+|[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+")


def parse_files(answer: str, output_json: object = None) -> list[str]:
    """The file paths of a final answer: JSON ``{"files": [...]}`` or ``[...]``,
    else every path-looking token; ``./`` and surrounding quotes/backticks removed."""
    data = output_json
    if data is None:
        try:
            data = json.loads(answer)
        except ValueError:
            data = None
    if isinstance(data, dict):
        data = data.get("files")
    raw = [x for x in data if isinstance(x, str)] if isinstance(data, list) else _PATH.findall(answer)
    return sorted({p.strip().strip("`'\"").removeprefix("./") for p in raw if p.strip()})


@grader(name="code_edit", default=True, score_range=(0.0, 1.0))
def code_edit(ctx: GradingContext) -> Grade:
    """F1 over files, minus the tool-budget penalty; releases the rollout's sandbox.

    Raises:
        ValueError: the item lacks ``gold_files``.
    """
    try:
        gold = ctx.item.get("gold_files")
        if not isinstance(gold, list):
            raise ValueError("code_edit items need 'gold_files' (list of paths)")
        predicted = parse_files(ctx.output_text, ctx.output_json)
        prf = rewards.precision_recall_f1(predicted, gold)
        g = Grade(prf.f1, {"precision": prf.precision, "recall": prf.recall, "f1": prf.f1},
                  [f"missed {sorted(set(gold) - set(predicted))}"] if prf.recall < 1 else [])
        penalty = rewards.budget_penalty(ctx.count(), int(ctx.item.get("tool_budget", 10)), COST_PER_EXTRA_CALL,
                                         MAX_BUDGET_PENALTY)
        return rewards.apply_penalty(g, "tool_budget", penalty)
    finally:
        pool().release(ctx.trace_id)


server = ToolServer(tools=[list_dir, read_file, grep, git_log], graders=[code_edit])
