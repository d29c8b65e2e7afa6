"""Build ``data/train.jsonl`` and ``data/test.jsonl``: real commits that changed code and tests.

``python -m examples.test_fix.build_dataset`` (offline; runs the selected tests, ~10 s on the
sample). ``--source PATH [--package NAME] --out DIR`` builds the same items from a local clone of
a real repository instead (e.g. more-itertools; minutes).

Candidates: first-parent commits of the ``shelfkit`` sample (``examples/_repos``) that changed
``<package>/*.py`` and ``tests/*.py``. The tests a candidate checks are
the test functions whose lines the commit changed (by the AST of the test file
at the commit); kept are those that FAIL on the template (code reverted, new
tests present) and PASS at the commit — ``fail_to_pass``; a candidate without
one is dropped. Items: ``messages`` (the request = the commit's subject),
``commit``/``parent``, ``code_files``, ``test_files``,
``fail_to_pass`` (pytest node ids), and for reference replay ``actions``
(run the tests, apply the real code diff, run the tests, run the linter) and
``reference_answer``. Every other item goes to the test split.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from .._common import build_dataset_main
from .._repos import bare_repo, export_tree, git, mainline, package
from ._data import code_patch, is_test_file, template_for

__all__ = ["SYSTEM_PROMPT", "candidate_tests", "main"]

DATA_DIR = Path(__file__).resolve().parent / "data"
SYSTEM_PROMPT = (
    "You are a coding agent in a checkout of the Python library {name}. New tests describe "
    "a change that is not implemented yet. Make the change in the library code (not in the tests) so "
    "the tests pass. You can read, search, apply a unified diff, run tests and run the linter. Prove "
    "your work: run the tests and the linter after your last edit. Answer with a short summary."
)
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
    for node in ast.parse(source).body:
        scopes = [(node, [])] if isinstance(node, ast.FunctionDef) else (
            [(f, [node.name]) for f in node.body if isinstance(f, ast.FunctionDef)]
            if isinstance(node, ast.ClassDef) else [])
        for fn, prefix in scopes:
            if fn.name.startswith("test") and changed & set(range(fn.lineno, (fn.end_lineno or fn.lineno) + 1)):
                ids.append("::".join([test_file, *prefix, fn.name]))
    return ids


def _run(cwd: Path, ids: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "--tb=no", "-rA", "-p", "no:cacheprovider", *ids],
                          cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})


def _item(entry: dict[str, Any]) -> dict[str, Any] | None:
    files = entry["changed_files"]
    code = [f for f in files if f.startswith(package() + "/") and f.endswith(".py")]
    tests = [f for f in files if is_test_file(f) and f.endswith(".py")]
    if not code or not tests:
        return None
    ids = [i for t in tests for i in candidate_tests(entry["commit"], entry["parent"], t)]
    if not ids:
        return None
    item = {"commit": entry["commit"], "parent": entry["parent"],
            "code_files": sorted(f for f in files if not is_test_file(f) and f.startswith(package() + "/")),
            "test_files": tests}
    before = _run(template_for(item), ids)
    failing = [i for i in ids if f"FAILED {i}" in before.stdout or f"ERROR {i}" in before.stdout]
    if not failing:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        export_tree(entry["commit"], Path(tmp))
        if _run(Path(tmp), failing).returncode != 0:
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
            **item, "fail_to_pass": failing, "actions": actions,
            "reference_answer": "Implemented the change; the new tests pass and the linter is clean."}


def build_items() -> list[dict[str, Any]]:
    """The items, oldest commit first (runs each candidate's tests twice)."""
    with ThreadPoolExecutor(2) as ex:
        return [i for i in ex.map(_item, mainline()) if i is not None]


def main(argv: list[str] | None = None) -> int:
    """Write both splits; returns 0."""
    def build(args: argparse.Namespace) -> list[dict[str, Any]]:
        items = build_items()
        shutil.rmtree(args.out / "__pycache__", ignore_errors=True)
        return items

    return build_dataset_main(argv, doc=__doc__ or "", data_dir=DATA_DIR, build=build)


if __name__ == "__main__":
    raise SystemExit(main())
