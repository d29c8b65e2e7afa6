"""Build ``data/train.jsonl`` and ``data/test.jsonl`` from the sample repository's history.

``python -m examples.code_edit.build_dataset`` (offline; the ``shelfkit`` sample of
``examples/_repos``). ``--source PATH [--package NAME] --out DIR`` builds the
same items from a local clone of a real repository instead (e.g. more-itertools).

One item per recent first-parent commit (last ``--recent``, default 60) whose change touches the
package, tests or docs (version bumps, CI-only and packaging-only changes are skipped). Item fields
besides ``messages``: ``commit``/``parent`` (sha of the change and of the tree before it),
``gold_files`` (files the commit changed), ``tool_budget``, and for reference replay ``actions`` (one
``git_log`` per gold file that exists before the change, a ``list_dir`` of the
folder of a new one) and ``reference_answer`` (``{"files": gold}`` as JSON).
Every other item goes to the test split.
"""

from __future__ import annotations

import argparse
import json
import posixpath
from pathlib import Path
from typing import Any

from .._common import build_dataset_main
from .._repos import bare_repo, git, mainline, package

__all__ = ["SYSTEM_PROMPT", "build_items", "main"]

DATA_DIR = Path(__file__).resolve().parent / "data"
RECENT = 60  # the most recent mainline commits used
SYSTEM_PROMPT = (
    "You plan code changes in the Python repository {name}. Given a request, explore the "
    "repository with the read-only tools (call several at once when they are independent) and answer "
    'with JSON {"files": [...]}: the repository-relative paths of every file the change must edit or '
    "create, and nothing else. Tool calls are limited; do not read more than you need."
)
_SKIP_PREFIXES = (".github/", "requirements/")
_SKIP_FILES = {"Makefile", "pyproject.toml", "setup.cfg", "tox.ini", "MANIFEST.in"}


def _keep(entry: dict[str, Any]) -> bool:
    files = entry["changed_files"]
    relevant = [f for f in files if not f.startswith(_SKIP_PREFIXES) and f not in _SKIP_FILES]
    return bool(relevant) and len(files) <= 8 and "version" not in entry["request"].lower()


def build_items(recent: int = RECENT) -> list[dict[str, Any]]:
    """The items, oldest commit first."""
    items = []
    repo = bare_repo()
    for entry in mainline()[-recent:]:
        if not _keep(entry):
            continue
        before = set(git(repo, "ls-tree", "-r", "--name-only", entry["parent"]).split())
        gold = sorted(entry["changed_files"])
        actions = [{"name": "git_log", "arguments": {"path": f, "max_count": 5}} if f in before else
                   {"name": "list_dir", "arguments": {"path": posixpath.dirname(f) or "."}} for f in gold]
        items.append({
            "messages": [{"role": "system", "content": SYSTEM_PROMPT.replace("{name}", package())},
                         {"role": "user", "content": entry["request"]}],
            "commit": entry["commit"], "parent": entry["parent"],
            "gold_files": gold, "tool_budget": max(8, len(actions) + 4),
            "actions": actions, "reference_answer": json.dumps({"files": gold}),
        })
    return items


def main(argv: list[str] | None = None) -> int:
    """Write both splits; returns 0."""
    def recent(p: argparse.ArgumentParser) -> None:
        p.add_argument("--recent", type=int, default=RECENT, help=f"last N commits (default {RECENT})")

    return build_dataset_main(argv, doc=__doc__ or "", data_dir=DATA_DIR, add_arguments=recent,
                              build=lambda args: build_items(args.recent))


if __name__ == "__main__":
    raise SystemExit(main())
