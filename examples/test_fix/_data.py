"""The make-the-tests-pass task's repository states, built from the shared repository (``examples._repos``).

For an item (a commit of the sample repository that changed code and tests), the
rollout's template is the tree *at* the commit with the changed code files put
back to their state before it (new code files removed): the new tests are
present and fail until the code change is made again.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from .._repos import _atomic_dir, bare_repo, cache_dir, export_tree, git

__all__ = ["code_patch", "is_test_file", "restore_tests", "template_for"]


def is_test_file(path: str) -> bool:
    """Files under ``tests/`` count as tests; everything else is code."""
    return path.startswith("tests/")


def _revert_code(commit: str, parent: str, code_files: list[str], dest: Path) -> None:
    export_tree(commit, dest)
    before = set(git(bare_repo(), "ls-tree", "-r", "--name-only", parent).split())
    for path in code_files:
        target = dest / path
        if path in before:
            target.write_bytes(subprocess.run(["git", f"--git-dir={bare_repo()}", "show", f"{parent}:{path}"],
                                              check=True, capture_output=True).stdout)
        else:
            target.unlink(missing_ok=True)


def template_for(item: dict[str, Any]) -> Path:
    """The cached template directory of ``item`` (see the module docstring)."""
    final = cache_dir() / f"testfix-{item['commit'][:16]}"
    return _atomic_dir(final, lambda tmp: _revert_code(item["commit"], item["parent"], item["code_files"], tmp))


def code_patch(item: dict[str, Any]) -> str:
    """The unified diff of the item's code files (parent → commit): the reference fix."""
    return git(bare_repo(), "diff", "--no-color", item["parent"], item["commit"], "--", *item["code_files"])


def restore_tests(item: dict[str, Any], dest: Path) -> None:
    """Write the commit's version of every test file into ``dest`` (undoes any edit of the tests)."""
    for path in item["test_files"]:
        data = subprocess.run(["git", f"--git-dir={bare_repo()}", "show", f"{item['commit']}:{path}"],
                              check=True, capture_output=True).stdout
        (dest / path).parent.mkdir(parents=True, exist_ok=True)
        (dest / path).write_bytes(data)
