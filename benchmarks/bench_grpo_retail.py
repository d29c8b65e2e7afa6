"""Benchmark: does GRPO through the real retail endpoints beat SFT alone? (2 CPU cores)

A from-scratch byte-level TinyGPT gets a short, partial SFT warm start on gold
replays of the order-status task (recorded through the real tool endpoint),
then GRPO against the real uvicorn retail server (tool ``get_order_status``,
grader ``POST /grade/order_status``) until the wall-clock budget is spent.
Prints held-out success (greedy, all held-out orders) after SFT only and after
GRPO, side by side, with the time taken.

Run:  python3 benchmarks/bench_grpo_retail.py [--budget-s 600] [--out /tmp/bench_grpo]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main() -> int:
    """Run the benchmark; returns 0."""
    import torch

    from examples.retail.app import server
    from examples.retail.order_status_task import BENCH_TRAINING, build_items, order_status_job
    from rft_sdk.testing import run_server
    from rft_sdk.train import TrainConfig, train

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget-s", type=float, default=600.0, help="total wall-clock budget, seconds")
    parser.add_argument("--sft-steps", type=int, default=BENCH_TRAINING["sft_steps"],
                        help="SFT steps (short: a partial warm start)")
    parser.add_argument("--lr", type=float, default=BENCH_TRAINING["lr"], help="GRPO learning rate")
    parser.add_argument("--temperature", type=float, default=BENCH_TRAINING["temperature"],
                        help="GRPO sampling temperature")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="/tmp/bench_grpo", help="run folder (metrics, checkpoint, plot)")
    args = parser.parse_args()

    torch.set_num_threads(2)
    train_items, heldout = build_items(seed=0)
    # Reserve time for the final held-out evaluation (~10 s) inside the budget.
    cfg = TrainConfig(**{**BENCH_TRAINING, "seed": args.seed, "sft_steps": args.sft_steps, "lr": args.lr,
                         "temperature": args.temperature, "max_train_s": args.budget_s - 20, "progress": False})
    t0 = time.perf_counter()
    with run_server(server) as url:
        result = train(cfg, job=order_status_job(url), train_items=train_items, eval_items=heldout, out_dir=args.out)
    total = time.perf_counter() - t0
    grpo_rows = [r for r in result.metrics if r.get("phase") == "grpo"]
    print(json.dumps({"config": {k: v for k, v in cfg.to_dict().items() if k not in ("progress",)}}))
    print("held-out success over", result.eval_before["n"], "orders (greedy):")
    print(f"  SFT only ({cfg.sft_steps} steps)          : {result.eval_before['success']:.3f}")
    print(f"  SFT + GRPO ({len(grpo_rows)} steps)          : {result.eval_after['success']:.3f}")
    print(f"  ratio GRPO / SFT-only              : {result.eval_after['success'] / max(1e-9, result.eval_before['success']):.2f}")
    curve = [(r["step"], r["eval_success"]) for r in result.metrics if r.get("eval_success") is not None]
    print("  held-out curve (step, success)     :", curve)
    print(f"  wall-clock total                   : {total:.0f} s (budget {args.budget_s:.0f} s), torch threads 2")
    print(f"  files: {', '.join(str(p) for p in result.files.values())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
