"""Make the tests pass (the Cosine pattern): ``rft serve examples.test_fix.app:server``.

Each rollout gets a sandbox holding the sample library (``examples/_repos``) at
a commit with that commit's code change reverted and its new tests present. Tools read, search,
edit (``apply_patch``, ``write_file``), run tests and run the linter in the
sandbox, with the limits of ``rft_sdk.sandbox``.

Grader ``test_fix`` (default), Cosine's strict layering:

1. the grader takes from the rollout's tree only the library source files it
   changed (never tests, ``conftest.py``, pytest/tox/setup configuration,
   ``sitecustomize``, ``.pth``), puts them in a clean copy of the repository at
   the task's commit, and runs the item's ``fail_to_pass`` and ``pass_to_pass``
   tests there through a runner that reports over a private channel with a
   nonce; the verdict is decided here, outside the process under test (late
   writes, forged lines and an exit status that contradicts the report are
   tamper evidence) — see ``_grading.py`` and ``_report_plugin.py``. It trusts
   nothing the trajectory claims;
2. the change itself is read for test-tampering constructs (``tamper_judge``:
   frame walking, plugin registration, ``atexit``, ``sys.modules`` patching,
   ``os._exit``, reading the grader's environment, an always-equal ``__eq__``,
   ...): any construct the change adds scores 0 (sub-score ``tamper``), with a
   reason naming it and where;
3. 0 unless every one of them passes; else ``0.8 + 0.2 · judge``, where the judge scores
   self-validation (ran the tests and the linter after the last edit,
   reproduced the failure first). The judge is ``SelfValidationJudge``
   (deterministic, offline) unless ``$RFT_JUDGE_BASE_URL`` and
   ``$RFT_JUDGE_MODEL`` name an OpenAI-compatible endpoint (``LLMJudge``).

More than ``MAX_TOOL_CALLS`` tool calls score 0 (``rft doctor``'s tool-spam
probe, the gold calls repeated ten times, scored 1.0 without the cap). Both
sandboxes are released after grading. ``rft doctor --probes
rft_sdk.doctor.packs:pytest`` plays the known tampering families against it.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Mapping
from typing import Any

import anyio.to_thread

from rft_sdk import Grade, GradingContext, Rollout, ToolError, ToolServer, grader, rewards, tool
from rft_sdk.sandbox import Sandbox, SandboxLimits, SandboxPathError

from .._common import pool_factory
from .._repo_tools import grep as _grep
from .._repo_tools import list_dir as _list_dir
from .._repo_tools import read_file as _read_file
from .._repos import package
from ._data import template_for
from ._grading import candidate_changes, describe, grading_key, run_clean, verdict
from .tamper_judge import tamper_findings

__all__ = ["MAX_TOOL_CALLS", "PYTEST_ENV", "RUBRIC", "SelfValidationJudge", "grade_fix", "judge", "pool", "server"]

EDIT_TOOLS = frozenset({"apply_patch", "write_file"})
BASE, BONUS = 0.8, 0.2
MAX_TOOL_CALLS = 30
LINT_RULES = "E9,F63,F7,F82"  # flake8's "stop the build" set: syntax errors, undefined names
MAX_TOOL_OUTPUT = 20_000  # characters of test/linter output shown to the model (the tail)
# the sample's tests need no pytest plugin; not loading the environment's saves ~1.5 s a run
PYTEST_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
RUBRIC = (
    "The agent already made the tests pass. Score how well it validated its own work: 1.0 when, after "
    "its last edit, it ran the tests and the linter and read their output (and ideally reproduced the "
    "failure before editing); 0.5 when it only ran the tests after the last edit; 0 when it never "
    "checked its work after editing."
)


pool = pool_factory(limits=SandboxLimits(timeout_s=120, cpu_s=120, memory_bytes=2 * 1024**3))


def _box(rollout: Rollout) -> Sandbox:
    return pool().for_rollout(rollout, template_for(rollout.item))


def _tail(text: str) -> str:
    return text if len(text) <= MAX_TOOL_OUTPUT else "...\n" + text[-MAX_TOOL_OUTPUT:]


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
def apply_patch(patch: str, *, rollout: Rollout) -> str:
    """Apply a unified diff (paths relative to the repository root, a/ b/ prefixes allowed)."""
    res = _box(rollout).run(["git", "apply", "--whitespace=nowarn", "--recount", "-"], stdin=patch.encode(),
                            timeout_s=20)
    if not res.ok:
        raise ToolError(f"patch does not apply: {res.stderr.strip()[:2000]}")
    return "patch applied"


@tool
def write_file(path: str, content: str, *, rollout: Rollout) -> str:
    """Create or overwrite a file of the repository with content."""
    _box(rollout).write_text(path, content)
    return f"wrote {len(content.encode())} bytes to {path}"


def _targets(box: Sandbox, target: str) -> list[str]:
    parts = target.split() or ["tests"]
    for part in parts:
        if part.startswith("-"):
            raise ToolError(f"{part!r}: options are not accepted, only files, folders and node ids")
        box.relpath(part.split("::")[0])
    return parts


@tool
def run_tests(target: str, *, rollout: Rollout) -> str:
    """Run pytest on space-separated files, folders or node ids ("tests" for all); the output's tail."""
    box = _box(rollout)
    res = box.run([sys.executable, "-m", "pytest", "-q", "--tb=short", "-p", "no:cacheprovider",
                   *_targets(box, target)], env={} if rollout.item.get("autoload_plugins") else PYTEST_ENV)
    return _tail(res.text())


@tool
def run_linter(path: str, *, rollout: Rollout) -> str:
    """Run the linter (ruff: syntax errors and undefined names, E9/F63/F7/F82) on space-separated paths."""
    box = _box(rollout)
    res = box.run([sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--select", LINT_RULES,
                   *_targets(box, path)], timeout_s=30)
    return _tail(res.text())


class SelfValidationJudge:
    """Deterministic stand-in for an LLM judge with ``RUBRIC``: 0.5 for running
    the tests after the last edit, 0.3 for running the linter after it, 0.2
    for running the tests before the first edit (reproducing the failure)."""

    async def judge(self, content: Mapping[str, Any]) -> rewards.JudgeVerdict:
        """Score ``content["trajectory"]`` (``[{"tool", "ok"}]``, in order)."""
        calls = [c for c in content.get("trajectory", []) if c.get("ok")]
        edits = [i for i, c in enumerate(calls) if c["tool"] in EDIT_TOOLS]
        last, first = (edits[-1], edits[0]) if edits else (-1, len(calls))
        after = {c["tool"] for c in calls[last + 1:]}
        parts = {"ran the tests after the last edit": 0.5 * ("run_tests" in after),
                 "ran the linter after the last edit": 0.3 * ("run_linter" in after),
                 "reproduced the failure before editing": 0.2 * any(c["tool"] == "run_tests"
                                                                    for c in calls[:first])}
        return rewards.JudgeVerdict(score=round(sum(parts.values()), 6), reasons=[k for k, v in parts.items() if v])


@functools.cache
def judge() -> rewards.Judge:
    """``LLMJudge`` when ``$RFT_JUDGE_BASE_URL`` and ``$RFT_JUDGE_MODEL`` are set, else ``SelfValidationJudge``."""
    base_url, model = os.environ.get("RFT_JUDGE_BASE_URL"), os.environ.get("RFT_JUDGE_MODEL")
    if base_url and model:
        return rewards.LLMJudge(base_url, model, RUBRIC)
    return SelfValidationJudge()


def _content(ctx: GradingContext) -> dict[str, Any]:
    return {"task": ctx.item["messages"][-1]["content"], "final_answer": ctx.output_text[:2000],
            "trajectory": [{"tool": c.name, "ok": c.ok, "arguments": str(c.arguments)[:300],
                            "output": (c.output or c.error or "")[-500:]} for c in ctx.trajectory]}


@grader(name="test_fix", default=True, score_range=(0.0, 1.0))
async def grade_fix(ctx: GradingContext) -> Grade:
    """0 unless the item's ``fail_to_pass`` and ``pass_to_pass`` tests all pass in a
    clean copy holding only the rollout's source changes (see the module docstring),
    else ``0.8 + 0.2 · judge``; releases the sandboxes.

    Raises:
        ValueError: the item lacks ``fail_to_pass``/``test_files``.
    """
    try:
        ids = ctx.item.get("fail_to_pass")
        if not isinstance(ids, list) or not ids or not isinstance(ctx.item.get("test_files"), list):
            raise ValueError("test_fix items need 'fail_to_pass' and 'test_files'")
        keep = [i for i in ctx.item.get("pass_to_pass") or [] if isinstance(i, str)]
        if ctx.count() > MAX_TOOL_CALLS:
            return Grade(0.0, {"tests_pass": 0.0, "tool_budget": 0.0},
                         [f"{ctx.count()} tool calls exceed the budget of {MAX_TOOL_CALLS}"])
        box = pool().get(ctx.trace_id)
        if box is None:
            return Grade(0.0, {"tests_pass": 0.0}, ["no tool was called: nothing changed"])
        template = template_for(ctx.item)
        try:
            changed, ignored = await anyio.to_thread.run_sync(candidate_changes, box, template, package())
        except (ValueError, SandboxPathError) as exc:  # an oversized or unreadable tree: nothing to grade
            return Grade(0.0, {"tests_pass": 0.0}, [str(exc)])
        notes = describe(changed, ignored)
        if not changed:
            return Grade(0.0, {"tests_pass": 0.0}, ["no change to the library's source files", *notes])
        original = {p: (template / p).read_bytes() if (template / p).is_file() else None for p in changed}
        if tampering := tamper_findings(changed, original):
            return Grade(0.0, {"tests_pass": 0.0, "tamper": 1.0}, [f"tamper {r}" for r in tampering[:8]] + notes)
        run = await anyio.to_thread.run_sync(functools.partial(
            run_clean, pool(), grading_key(ctx.trace_id), template, changed, [*ids, *keep],
            autoload=bool(ctx.item.get("autoload_plugins"))))
        ok, reasons = verdict(run, [*ids, *keep])
        g = await rewards.gated_judge(BASE, ok, judge(), _content(ctx), bonus=BONUS, name="self_validation",
                                      gate_name="tests_pass")
        return g if ok else Grade(g.score, g.subscores, [*g.reasons, *reasons[:5], *notes, run.output[-300:]])
    finally:
        pool().release(ctx.trace_id)


server = ToolServer(tools=[list_dir, read_file, grep, apply_patch, write_file, run_tests, run_linter],
                    graders=[grade_fix])
