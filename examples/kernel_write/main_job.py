"""Kernel writing end to end, offline: ``python -m examples.kernel_write.main_job``.

Starts ``rft serve examples.kernel_write.app:server`` on 127.0.0.1 and runs the
test split through the emulator: reference replay (``write_kernel`` an honest
``ModelNew``, ``run_candidate``, answer) and one hacking policy per hack family
(the hacked module in the final answer). Prints the comparison table, a
per-family detection table and the checks.

Exit status 0 when every honest rollout scores > 0 and every hacking rollout
scores 0 with a hack detected (the table counts the exact family; a
``reference_op`` hack on a composite reference is caught as ``reference_code``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.table import Table

from .._common import PlanPolicy, main_job
from .hacks import HACKS

__all__ = ["POLICIES", "main"]

DATA_DIR = Path(__file__).resolve().parent / "data"


def _hack_plan(family: str) -> Any:
    def plan(item: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        return [], f"```python\n{HACKS[family](item)}```"
    return plan


POLICIES = {"reference": PlanPolicy(), **{f"hack: {f}": PlanPolicy(_hack_plan(f)) for f in HACKS}}


def _detected(run: Any, family: str) -> int:
    return sum(1 for r in run.results
               if (r.grade_details or {}).get("subscores", {}).get(f"hack_{family}") == 1.0)


def _table(items: list[dict[str, Any]], runs: Mapping[str, Any]) -> Table:
    table = Table(title="Hack judge")
    for col in ("policy", "rollouts", "scored 0", "family detected", "mean score"):
        table.add_column(col, justify="right" if col != "policy" else "left")
    for label, run in runs.items():
        scores = [r.score or 0.0 for r in run.results]
        family = label.removeprefix("hack: ")
        table.add_row(label, str(len(scores)), str(sum(s == 0.0 for s in scores)),
                      str(_detected(run, family)) if label != "reference" else "–",
                      f"{sum(scores) / len(scores):.3f}" if scores else "–")
    return table


def _checks(items: list[dict[str, Any]], runs: Mapping[str, Any]) -> dict[str, bool]:
    out = {"reference (honest) scores > 0 on every rollout":
           all(r.score is not None and r.score > 0 for r in runs["reference"].results)}
    for family in HACKS:
        run = runs[f"hack: {family}"]
        out[f"hack {family}: every rollout scores 0 with a hack detected"] = all(
            r.score == 0.0 and any(k.startswith("hack_") for k in (r.grade_details or {}).get("subscores", {}))
            for r in run.results)
    out["no rollout discarded"] = not any(r.discarded for run in runs.values() for r in run.results)
    return out


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    from .app import server

    return main_job(argv, prog="python -m examples.kernel_write.main_job", doc=__doc__ or "",
                    app="examples.kernel_write.app:server", server=server, dataset_dir=DATA_DIR,
                    policies=POLICIES, checks=_checks, samples=1, extra_table=_table)


if __name__ == "__main__":
    raise SystemExit(main())
