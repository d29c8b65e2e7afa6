"""Build ``data/train.jsonl`` and ``data/test.jsonl``: real commits that changed code and tests.

``python -m examples.test_fix.build_dataset`` (offline; runs the selected tests in the sandbox,
~1 min on the sample). ``--source PATH [--package NAME] [--recent N] --out DIR`` builds the same
items from a local clone of a real repository instead (e.g. more-itertools, or this repository:
``--source . --package rft_sdk``; minutes).

Candidates: first-parent commits of the ``shelfkit`` sample (``examples/_repos``) that changed
``<package>/*.py`` and ``tests/*.py``. Every test run happens in the sandbox, exactly as the
grader runs it (``_grading.run_clean``: a clean copy, the report plugin, per-test outcomes):

1. the template (code reverted, the commit's tests present), running the commit's changed test
   files whole;
2. the template plus the commit's own code files — the gold change — the same files.

``fail_to_pass``: the test functions whose lines the commit changed (by the AST of the test file
at the commit) that fail in run 1 and pass in run 2; ``pass_to_pass``: the other tests of those
files that pass in both (at most 50). A candidate without a ``fail_to_pass`` test is dropped, and
so is one whose gold does not pass the grader's own verdict in run 2 (the gold scores 1.0 inside
the sandbox by construction). Items: ``messages`` (the request = the commit's subject),
``commit``/``parent``, ``code_files``, ``test_files``, ``fail_to_pass``, ``pass_to_pass``,
``autoload_plugins`` (real repositories may need their pytest plugins), and for reference replay
``actions`` (run the tests, apply the real code diff, run the tests, run the linter) and
``reference_answer``. Every other item goes to the test split; each split needs 10 items (the
hosted minimum), else the builder stops with an error naming what it found. ``--verify-gold``
also replays every kept gold through a served grader (``rft serve examples.test_fix.app:server``)
and prints its score.
"""

from __future__ import annotations

import argparse
import ast
import os
import posixpath
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rft_sdk.sandbox import SandboxLimits, SandboxPool

from .._common import build_dataset_main
from .._repos import bare_repo, git, mainline, package
from ._data import code_patch, is_test_file, template_for
from ._grading import TestRun, may_touch, run_clean, verdict

__all__ = ["SYSTEM_PROMPT", "candidate_tests", "main"]

DATA_DIR = Path(__file__).resolve().parent / "data"
SYSTEM_PROMPT = (
    "You are a coding agent in a checkout of the Python library {name}. New tests describe "
    "a change that is not implemented yet. Make the change in the library code (not in the tests) so "
    "the tests pass. You can read, search, apply a unified diff, run tests and run the linter. Prove "
    "your work: run the tests and the linter after your last edit. Answer with a short summary."
)
MAX_PASS_TO_PASS = 50  # pass_to_pass tests kept per item
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.M)


def candidate_tests(commit: str, parent: str, test_file: str) -> list[str]:
    """Node ids of the test functions in ``test_file`` whose lines ``commit`` changed."""
    source = git(bare_repo(), "show", f"{commit}:{test_file}")
    diff = git(bare_repo(), "diff", "-U0", parent, commit, "--", test_file)
    changed: set[int] = set()
    for m in _HUNK.finditer(diff):
        start, count = int(m.group(1)), int(m.group(2) or 1)
        changed.update(range(start, start + max(count, 1)))
    ids = []
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in ast.parse(source).body:
        scopes = [(node, [])] if isinstance(node, functions) else (
            [(f, [node.name]) for f in node.body if isinstance(f, functions)]
            if isinstance(node, ast.ClassDef) else [])
        for fn, prefix in scopes:
            if fn.name.startswith("test") and changed & set(range(fn.lineno, (fn.end_lineno or fn.lineno) + 1)):
                ids.append("::".join([test_file, *prefix, fn.name]))
    return ids


def _gold_files(item: dict[str, Any]) -> dict[str, bytes | None]:
    """The commit's version of each code file (``None``: the commit deleted it)."""
    files: dict[str, bytes | None] = {}
    for path in item["code_files"]:
        blob = subprocess.run(["git", f"--git-dir={bare_repo()}", "show", f"{item['commit']}:{path}"],
                              capture_output=True)
        files[path] = blob.stdout if blob.returncode == 0 else None
    return files


def _function_passed(run: TestRun, wanted: str) -> bool | None:
    cases = [c for c in run.collected if c == wanted or c.startswith(wanted + "[")]
    return all(run.passed(c) for c in cases) if cases else None


def _item(entry: dict[str, Any], pool: SandboxPool, autoload: bool) -> dict[str, Any] | None:
    files = entry["changed_files"]
    present = set(git(bare_repo(), "ls-tree", "-r", "--name-only", entry["commit"]).split())
    code = [f for f in files if f.startswith(package() + "/") and f.endswith(".py")]
    tests = [f for f in files if is_test_file(f) and f.endswith(".py") and f in present
             and posixpath.basename(f).startswith("test")]
    if not code or not tests:
        return None
    ids = [i for t in tests for i in candidate_tests(entry["commit"], entry["parent"], t)]
    if not ids:
        return None
    item = {"commit": entry["commit"], "parent": entry["parent"],
            "code_files": sorted(f for f in files if not is_test_file(f) and f.startswith(package() + "/")),
            "test_files": tests, "autoload_plugins": autoload}
    if any(not may_touch(f, package()) for f in item["code_files"]):
        return None  # the change itself touches files the grader never takes from a rollout
    template = template_for(item)
    tag = entry["commit"][:12]
    before = run_clean(pool, f"build-before-{tag}", template, {}, tests, autoload=autoload, timeout_s=900)
    after = run_clean(pool, f"build-gold-{tag}", template, _gold_files(item), tests, autoload=autoload,
                      timeout_s=900)
    if not (before.ended and after.ended) or before.tampered or after.tampered:
        return None
    failing = [i for i in ids if _function_passed(before, i) is False and _function_passed(after, i)]
    if not failing:
        return None
    functions = sorted({c.split("[")[0] for c in after.collected} - set(ids))
    keep = [f for f in functions if _function_passed(before, f) and _function_passed(after, f)][:MAX_PASS_TO_PASS]
    if not verdict(after, [*failing, *keep])[0]:
        return None
    patch = code_patch(item)
    actions = [{"name": "run_tests", "arguments": {"target": " ".join(tests)}},
               {"name": "apply_patch", "arguments": {"patch": patch}},
               {"name": "run_tests", "arguments": {"target": " ".join(failing)}},
               {"name": "run_linter", "arguments": {"path": " ".join(f for f in item["code_files"]
                                                                     if f.endswith(".py"))}}]
    return {"messages": [{"role": "system", "content": SYSTEM_PROMPT.replace("{name}", package())},
                         {"role": "user", "content": f"{entry['request']}\n\nThe tests to make pass: "
                                                     f"{', '.join(failing)}"}],
            **item, "fail_to_pass": failing, "pass_to_pass": keep, "actions": actions,
            "reference_answer": "Implemented the change; the new tests pass and the linter is clean."}


def build_items(recent: int | None = None, *, autoload: bool = False) -> list[dict[str, Any]]:
    """The items, oldest commit first, from the last ``recent`` mainline commits (``None``: all);
    every test run in a sandbox (two per candidate commit)."""
    history = mainline()[-recent:] if recent else mainline()
    pool = SandboxPool(limits=SandboxLimits(timeout_s=900, cpu_s=1800, memory_bytes=8 * 1024**3, max_processes=512))
    try:
        with ThreadPoolExecutor(2) as ex:
            return [i for i in ex.map(lambda e: _item(e, pool, autoload), history) if i is not None]
    finally:
        pool.close()


def verify_gold(items: list[dict[str, Any]], env: dict[str, str] | None = None) -> list[tuple[str, float]]:
    """Replay each item's gold calls through a served ``examples.test_fix.app:server`` (a real
    ``rft serve`` child, sandboxed tools and grader) and grade; ``[(commit, score)]``."""
    import asyncio
    import json
    import uuid

    import httpx

    from rft_sdk.testing import serve_process

    async def play(client: httpx.AsyncClient, item: dict[str, Any]) -> float:
        trace = f"trace_{uuid.uuid4().hex}"
        for action in item["actions"]:
            cid = uuid.uuid4().hex[:16]
            body = {"type": "function_call", "id": f"fc_{cid}", "call_id": f"call_{cid}", "name": action["name"],
                    "arguments": json.dumps(action["arguments"]), "trace_id": trace, "item": item}
            (await client.post(f"/tools/{action['name']}", json=body)).raise_for_status()
        graded = await client.post("/grade", json={"sample": {"output_text": item["reference_answer"]},
                                                   "item": item, "trace_id": trace})
        graded.raise_for_status()
        return float(graded.json()["score"])

    async def play_all(url: str) -> list[tuple[str, float]]:
        async with httpx.AsyncClient(base_url=url, timeout=1800) as client:
            return [(item["commit"], await play(client, item)) for item in items]

    with serve_process("examples.test_fix.app:server", env=env) as url:
        return asyncio.run(play_all(url))


def main(argv: list[str] | None = None) -> int:
    """Write both splits; returns 0 (1 when ``--verify-gold`` finds a gold below 1.0; 2 with a message
    when a split would have fewer than 10 items)."""
    def recent(p: argparse.ArgumentParser) -> None:
        p.add_argument("--recent", type=int, default=None, help="only the last N mainline commits (default: all)")
        p.add_argument("--verify-gold", action="store_true",
                       help="also replay every gold through the served grader and print its score")

    def build(args: argparse.Namespace) -> list[dict[str, Any]]:
        items = build_items(args.recent, autoload=args.source is not None)
        shutil.rmtree(args.out / "__pycache__", ignore_errors=True)
        if args.verify_gold:
            env = {"RFT_EXAMPLES_REPO": os.environ.get("RFT_EXAMPLES_REPO", ""),
                   "RFT_EXAMPLES_PACKAGE": os.environ.get("RFT_EXAMPLES_PACKAGE", "")} if args.source else None
            scores = verify_gold(items, env)
            for commit, score in scores:
                print(f"gold {commit[:12]}: {score:.3f} (served grader, in the sandbox)")
            if any(score < 1.0 for _, score in scores):
                raise SystemExit(1)
        return items

    return build_dataset_main(argv, doc=__doc__ or "", data_dir=DATA_DIR, build=build, add_arguments=recent)


if __name__ == "__main__":
    raise SystemExit(main())
