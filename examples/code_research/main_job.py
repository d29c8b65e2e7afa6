"""Codebase research end to end, offline: ``python -m examples.code_research.main_job``.

Starts ``rft serve examples.code_research.app:server`` on 127.0.0.1, runs the
test split through the emulator with four scripted policies and prints the
comparison table and the checks:

* ``reference``: ``find_symbol`` + ``read_file`` of the cited code, complete answer — 1.0;
* ``partial answer``: same calls, the answer leaves out its last sentence (the
  exceptions raised, or the functions raising) — recall < 1;
* ``no research``: answers at once with a plausible guess — low recall;
* ``long tail``: the complete answer after 16 tool calls — budget penalty.

Exit status 0 when reference replay scores 1.0 everywhere and every other
policy scores below 1.0 on every rollout.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._common import PlanPolicy, main_job
from .._repos import package

__all__ = ["POLICIES", "main"]

DATA_DIR = Path(__file__).resolve().parent / "data"


def _partial(item: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    return item["actions"], item["reference_answer"].rsplit(". ", 1)[0]


def _guess(item: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    return [], f"`{item['symbol']}` is in {package()}/__init__.py; it takes items and raises TypeError."


def _long_tail(item: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    extra = [{"name": "search", "arguments": {"pattern": item["symbol"], "path": p}}
             for p in (package(), "tests", "docs", "README.md")] * 4
    return [*item["actions"], *extra][:16], item["reference_answer"]


POLICIES = {"reference": PlanPolicy(), "partial answer": PlanPolicy(_partial),
            "no research": PlanPolicy(_guess), "long tail": PlanPolicy(_long_tail, parallel=4)}


def _checks(items: list[dict[str, Any]], runs: Mapping[str, Any]) -> dict[str, bool]:
    out = {"reference replay scores 1.0 on every rollout": all(r.score == 1.0 for r in runs["reference"].results)}
    for label in ("partial answer", "no research", "long tail"):
        out[f"{label} scores below 1.0 on every rollout"] = all(
            r.score is not None and r.score < 1.0 for r in runs[label].results)
    out["no rollout discarded"] = not any(r.discarded for run in runs.values() for r in run.results)
    return out


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    from .app import server

    return main_job(argv, prog="python -m examples.code_research.main_job", doc=__doc__ or "",
                    app="examples.code_research.app:server", server=server, dataset_dir=DATA_DIR,
                    policies=POLICIES, checks=_checks, samples=1)


if __name__ == "__main__":
    raise SystemExit(main())
