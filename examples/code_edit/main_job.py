"""Code-edit planning end to end, offline: ``python -m examples.code_edit.main_job``.

Starts ``rft serve examples.code_edit.app:server`` on 127.0.0.1, runs the test
split through the emulator with four scripted policies, prints the comparison
table and the checks. Policies (each issues up to 4 parallel tool calls a turn):

* ``reference``: the gold exploration calls, then the gold file list (F1 = 1);
* ``missed file``: the same calls, one gold file left out (or, for a one-file
  change, a wrong file added);
* ``shotgun``: answers every file of the package, tests and docs (recall 1,
  precision near 0 — the reward hack an F1 grader must defeat);
* ``over budget``: the right answer after three times the tool budget of calls.

Exit status 0 when reference replay scores 1.0 everywhere and every other
policy scores below 1.0 on every rollout.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._common import PlanPolicy, main_job
from .._repos import bare_repo, git, package

__all__ = ["POLICIES", "main"]

DATA_DIR = Path(__file__).resolve().parent / "data"


def _missed(item: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    gold = item["gold_files"]
    files = gold[1:] if len(gold) > 1 else [*gold, "README.md" if gold != ["README.md"] else "pyproject.toml"]
    return item["actions"], json.dumps({"files": files})


def _shotgun(item: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    files = [f for f in git(bare_repo(), "ls-tree", "-r", "--name-only", item["parent"]).split()
             if f.startswith((package() + "/", "tests/", "docs/"))]
    return [{"name": "list_dir", "arguments": {"path": "."}}], json.dumps({"files": files})


def _over_budget(item: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    reads = [{"name": "read_file", "arguments": {"path": "README.md", "start_line": 1 + 10 * k, "max_lines": 10}}
             for k in range(3 * item["tool_budget"])]
    return reads, item["reference_answer"]


POLICIES = {"reference": PlanPolicy(parallel=4), "missed file": PlanPolicy(_missed, parallel=4),
            "shotgun": PlanPolicy(_shotgun, parallel=4), "over budget": PlanPolicy(_over_budget, parallel=4)}


def _checks(items: list[dict[str, Any]], runs: Mapping[str, Any]) -> dict[str, bool]:
    scores = {k: [r.score for r in run.results] for k, run in runs.items()}
    out = {"reference replay scores 1.0 on every rollout": all(s == 1.0 for s in scores["reference"])}
    for label in ("missed file", "shotgun", "over budget"):
        out[f"{label} scores below 1.0 on every rollout"] = all(s is not None and s < 1.0 for s in scores[label])
    out["no rollout discarded"] = not any(r.discarded for run in runs.values() for r in run.results)
    return out


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    from .app import server

    return main_job(argv, prog="python -m examples.code_edit.main_job", doc=__doc__ or "",
                    app="examples.code_edit.app:server", server=server, dataset_dir=DATA_DIR,
                    policies=POLICIES, checks=_checks)


if __name__ == "__main__":
    raise SystemExit(main())
