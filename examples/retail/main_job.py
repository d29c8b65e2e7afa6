"""The flagship run: ``python -m examples.retail.main_job`` (what ``make demo`` runs).

1. Start the retail tool server as a real process (``rft serve
   examples.retail.app:server`` on 127.0.0.1, free port) and wait for ``/healthz``.
2. Validate the test split by the hosted dataset rules.
3. Run the local emulator over it, several samples per item, concurrently, with
   (a) reference replay of the gold calls and (b) perturbed replay (one write
   call per rollout dropped or altered) — or, given ``--model-base-url``, with
   an OpenAI-compatible model (baseline evaluation).
4. Print one comparison table and a perturbation table; write the JSONL
   traces and reports under ``runs/<timestamp>/``; stop the server (also on
   Ctrl-C or error).

``--backend`` picks where the rollouts' database lives: ``memory`` (the
in-memory overlay of ``examples.retail.app``), ``sqlite`` or ``postgres``
(``examples.retail.sql.app``: one SQL database per rollout, docs/database.md;
postgres uses ``--postgres-url`` or starts a throwaway server). The tables
are the same whichever backend runs them.

Exit status: 0 when every check holds (reference replay all 1.0, every
state-changing perturbation 0.0, every no-op perturbation 1.0), else 1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from rft_sdk.testing import postgres_server, serve_process

from ._db import DATA_DIR
from ._perturb import changes_end_state, make_perturb
from ._tools import WRITE_TOOLS

__all__ = ["main", "perturbation_rows"]

ROOT = Path(__file__).resolve().parents[2]


def perturbation_rows(items: list[dict[str, Any]], results: list[Any]) -> dict[str, dict[str, Any]]:
    """Per perturbation kind: ``{"rollouts", "changed", "unchanged", "changed_scores",
    "unchanged_scores"}``, with "changed" decided independently of the server by
    replaying the rollout's dispatched calls on a fresh view (:func:`changes_end_state`)."""
    rows: dict[str, dict[str, Any]] = defaultdict(lambda: {"rollouts": 0, "changed": 0, "unchanged": 0,
                                                            "changed_scores": [], "unchanged_scores": []})
    for r in results:
        if r.discarded:
            continue
        calls = [{"name": c.name, "arguments": c.arguments} for c in r.tool_calls]
        changed = changes_end_state(items[r.item_index], calls)
        row = rows[r.perturbation or "none"]
        row["rollouts"] += 1
        row["changed" if changed else "unchanged"] += 1
        row["changed_scores" if changed else "unchanged_scores"].append(r.score)
    return dict(sorted(rows.items()))


def _perturbation_table(rows: dict[str, dict[str, Any]]) -> Table:
    table = Table(title="Perturbations (perturbed replay)")
    table.add_column("change")
    table.add_column("call", no_wrap=True, min_width=len("exchange_delivered_order_items.new_item_ids"))
    for col in ("rollouts", "changed state", "score (changed)", "no-op", "score (no-op)"):
        table.add_column(col, justify="right")

    def mean(xs: list[float]) -> str:
        return f"{sum(xs) / len(xs):.3f}" if xs else "–"

    for kind, row in rows.items():
        change, _, call = kind.partition(" ")  # "dropped modify_user_address" -> ("dropped", "modify_user_address")
        table.add_row(change, call, str(row["rollouts"]), str(row["changed"]), mean(row["changed_scores"]),
                      str(row["unchanged"]), mean(row["unchanged_scores"]))
    return table


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m examples.retail.main_job", description=__doc__.split("\n")[0])
    p.add_argument("--split", choices=("train", "test"), default="test")
    p.add_argument("--samples", type=int, default=4, help="samples per item (default 4)")
    p.add_argument("--concurrency", type=int, default=32, help="rollouts in flight (default 32)")
    p.add_argument("--limit", type=int, default=None, help="only the first N items")
    p.add_argument("--runs-dir", type=Path, default=Path("runs"), help="parent of the run folder")
    p.add_argument("--seed", type=int, default=0, help="perturbation seed")
    p.add_argument("--backend", choices=("memory", "sqlite", "postgres"), default="memory",
                   help="where each rollout's database lives (default memory)")
    p.add_argument("--postgres-url", default=None,
                   help="with --backend postgres: a server whose role may CREATE DATABASE (default: start a "
                        "throwaway one; needs the PostgreSQL server binaries)")
    p.add_argument("--model-base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")
    p.add_argument("--model", help="model name (with --model-base-url)")
    p.add_argument("--api-key", default=None, help="bearer token (default $OPENAI_API_KEY)")
    args = p.parse_args(argv)
    if args.model_base_url and not args.model:
        p.error("--model-base-url needs --model")
    if args.samples < 1 or args.concurrency < 1:
        p.error("--samples and --concurrency must be >= 1")
    return args


async def _run(args: argparse.Namespace, base_url: str, run_dir: Path, console: Console) -> int:
    from rft_sdk.emulator import (
        OpenAICompatiblePolicy,
        PerturbedReplayPolicy,
        ReferenceReplayPolicy,
        emulate,
        load_dataset,
        print_comparison,
    )

    from .app import server

    dataset = DATA_DIR / f"retail_{args.split}.jsonl"
    items = load_dataset(dataset, server.tools)  # read and validated once; emulate() gets the items
    steps = max(len(item["actions"]) for item in items) + 1
    job = server.job_config(base_url, max_episode_steps=steps)
    (run_dir / "job.json").write_text(json.dumps(job, indent=2) + "\n", encoding="utf-8")
    console.print(f"dataset {dataset.name}: {len(items[: args.limit])} items valid; tool server {base_url}")
    # emulate() applies ``limit`` itself, after validating every line (the hosted minimum counts them all)
    common = dict(samples_per_item=args.samples, max_concurrency=args.concurrency, limit=args.limit)

    if args.model_base_url:
        policy = OpenAICompatiblePolicy(args.model_base_url, args.model, args.api_key)
        try:
            run = await emulate(items, job, policy, out_dir=run_dir / "model", label=args.model, **common)
        finally:
            await policy.aclose()
        print_comparison({args.model: run.summary}, console)
        return 0

    t0 = time.perf_counter()
    ref = await emulate(items, job, ReferenceReplayPolicy(), out_dir=run_dir / "reference",
                        label="reference", **common)
    pert_policy = PerturbedReplayPolicy(WRITE_TOOLS, perturb=make_perturb(), seed=args.seed)
    pert = await emulate(items, job, pert_policy, out_dir=run_dir / "perturbed", label="perturbed", **common)
    elapsed = time.perf_counter() - t0
    print_comparison({"reference replay": ref.summary, "perturbed replay": pert.summary}, console)
    rows = perturbation_rows(items, pert.results)
    console.print(_perturbation_table(rows))
    (run_dir / "perturbations.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")

    ref_scores = [r.score for r in ref.results]
    checks = {
        "reference replay scores 1.0 on every rollout": all(s == 1.0 for s in ref_scores),
        "every state-changing perturbation scores 0.0": all(
            s == 0.0 for row in rows.values() for s in row["changed_scores"]),
        "every no-op perturbation scores 1.0": all(
            s == 1.0 for row in rows.values() for s in row["unchanged_scores"]),
        "no rollout discarded": not any(r.discarded for r in ref.results + pert.results),
    }
    for text, ok in checks.items():
        console.print(f"[{'green' if ok else 'red'}]{'PASS' if ok else 'FAIL'}[/] {text}")
    n = len(ref.results) + len(pert.results)
    console.print(f"{n} rollouts in {elapsed:.1f}s; traces and reports in {run_dir}")
    return 0 if all(checks.values()) else 1


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status (130 on Ctrl-C)."""
    args = _parse(argv)
    console = Console()
    if not console.is_terminal:  # wide enough for the tables when piped or captured
        console = Console(width=120)
    run_dir = args.runs_dir / time.strftime("%Y%m%d-%H%M%S")
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        with contextlib.ExitStack() as stack:
            app, env = "examples.retail.app:server", {}
            if args.backend != "memory":
                app, env = "examples.retail.sql.app:server", {"RETAIL_DB": args.backend}
                if args.backend == "sqlite":
                    env["RETAIL_DB_DIR"] = str((run_dir / "db").resolve())
                else:
                    env["RETAIL_PG_URL"] = args.postgres_url or stack.enter_context(postgres_server())
            console.print(f"backend: {args.backend}")
            base_url = stack.enter_context(serve_process(app, cwd=ROOT, env=env, startup_timeout=120))
            return asyncio.run(_run(args, base_url, run_dir, console))
    except KeyboardInterrupt:
        console.print("interrupted; tool server stopped")
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
