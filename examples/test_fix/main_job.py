"""Make-the-tests-pass end to end, offline: ``python -m examples.test_fix.main_job``.

Starts ``rft serve examples.test_fix.app:server`` on 127.0.0.1, runs the test
split through the emulator with four scripted policies, prints the comparison
table and the checks:

* ``reference``: reproduce (run the tests), apply the real code diff, run the
  tests, run the linter — gate passes, judge 1.0: score 1.0;
* ``no validation``: apply the real diff and stop — gate passes, judge 0: 0.8;
* ``no change``: run the tests and claim success — 0;
* ``edit the tests``: overwrite the test files with a trivial passing test and
  run them — the grader restores the tests and runs them itself: 0.

Exit status 0 when all four hold on every rollout.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._common import PlanPolicy, main_job

__all__ = ["POLICIES", "main"]

DATA_DIR = Path(__file__).resolve().parent / "data"


def _no_validation(item: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    return [a for a in item["actions"] if a["name"] == "apply_patch"], item["reference_answer"]


def _no_change(item: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    return item["actions"][:1], "Done: the tests pass."


def _edit_tests(item: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    writes = [{"name": "write_file", "arguments": {"path": f, "content": "def test_ok():\n    assert True\n"}}
              for f in item["test_files"]]
    run = {"name": "run_tests", "arguments": {"target": " ".join(item["test_files"])}}
    return [*writes, run], "All tests pass."


POLICIES = {"reference": PlanPolicy(), "no validation": PlanPolicy(_no_validation),
            "no change": PlanPolicy(_no_change), "edit the tests": PlanPolicy(_edit_tests)}
EXPECTED = {"reference": 1.0, "no validation": 0.8, "no change": 0.0, "edit the tests": 0.0}


def _checks(items: list[dict[str, Any]], runs: Mapping[str, Any]) -> dict[str, bool]:
    out = {f"{label} scores {want} on every rollout": all(r.score is not None and abs(r.score - want) < 1e-9
                                                          for r in runs[label].results)
           for label, want in EXPECTED.items()}
    out["no rollout discarded"] = not any(r.discarded for run in runs.values() for r in run.results)
    return out


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    from .app import server

    return main_job(argv, prog="python -m examples.test_fix.main_job", doc=__doc__ or "",
                    app="examples.test_fix.app:server", server=server, dataset_dir=DATA_DIR,
                    policies=POLICIES, checks=_checks, samples=1)


if __name__ == "__main__":
    raise SystemExit(main())
