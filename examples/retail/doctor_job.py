"""``rft doctor`` on the retail example: ``python -m examples.retail.doctor_job``.

1. Start the retail tool server as a real process (``rft serve
   examples.retail.app:server`` on 127.0.0.1, free port).
2. Write its job config and, as a stand-in for production traffic, a
   "production log" built from the *train* split (its prompts and gold tool
   calls; the doctor compares it with the test split). ``--production-log``
   passes a real one instead.
3. Run the four principles on the test split: the gold and every valid
   alternative path of the items (``alternatives``: the customer identified by
   email instead of name + zip and back, extra reads, reordered writes, a
   reworded answer) must score 1.0, and no probe may earn reward; the items'
   ``max_tool_calls`` is the declared budget. The learnable check needs a
   policy whose samples differ; without a model (``--model-base-url``) it uses
   :class:`NoisyReplayPolicy`: the gold plan, or with probability
   ``--mistake-rate`` a perturbed one (a write dropped or altered), which
   stands in for a model of middling skill.
4. Print the doctor tables and write ``runs/doctor-<timestamp>/doctor.{json,html}``.

Exit status: 0 when no principle fails, 1 otherwise (the ``rft doctor`` rule).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from rft_sdk.testing import serve_process

from ._db import DATA_DIR
from ._perturb import make_perturb
from ._tools import WRITE_TOOLS

__all__ = ["NoisyReplayPolicy", "main", "production_log_from"]

ROOT = Path(__file__).resolve().parents[2]


class NoisyReplayPolicy:
    """Per rollout: the reference replay, or (probability ``mistake_rate``) a perturbed replay.

    The choice is made once per ``trace_id`` from ``random.Random(f"{seed}:{trace_id}")``.

    Raises:
        ValueError: ``mistake_rate`` outside [0, 1].
    """

    def __init__(self, mistake_rate: float = 0.5, seed: int = 0) -> None:
        from rft_sdk.emulator import PerturbedReplayPolicy, ReferenceReplayPolicy

        if not 0 <= mistake_rate <= 1:
            raise ValueError(f"mistake_rate must be in [0, 1], got {mistake_rate}")
        self.mistake_rate, self.seed = mistake_rate, seed
        self._reference = ReferenceReplayPolicy()
        self._perturbed = PerturbedReplayPolicy(WRITE_TOOLS, perturb=make_perturb(), seed=seed)
        self._choice: dict[str, bool] = {}

    async def act(self, messages: list[dict], tools: list[dict], *, item: dict, trace_id: str) -> Any:
        """Delegate the turn to the policy chosen for this rollout."""
        if trace_id not in self._choice:
            self._choice[trace_id] = random.Random(f"{self.seed}:{trace_id}").random() < self.mistake_rate
        policy = self._perturbed if self._choice[trace_id] else self._reference
        return await policy.act(messages, tools, item=item, trace_id=trace_id)

    def end_rollout(self, trace_id: str) -> dict[str, Any] | None:
        """Forget the rollout; report the perturbation when one was made."""
        if self._choice.pop(trace_id, False):
            return self._perturbed.end_rollout(trace_id)
        return None


def production_log_from(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Production-log lines ``{"messages", "tool_calls": [{"name", "arguments"}]}`` from dataset items."""
    return [{"messages": item["messages"], "tool_calls": item.get("actions", [])} for item in items]


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m examples.retail.doctor_job", description=__doc__.split("\n")[0])
    p.add_argument("--samples", type=int, default=4, help="samples per item for the learnable check (default 4)")
    p.add_argument("--limit", type=int, default=None, help="only the first N test items (at least 10, the hosted minimum; a small subset drifts "
                        "from the train split, so production_like may fail)")
    p.add_argument("--mistake-rate", type=float, default=0.5, help="noisy replay: share of perturbed rollouts")
    p.add_argument("--production-log", type=Path, default=None, help="a real production log (default: train split)")
    p.add_argument("--runs-dir", type=Path, default=Path("runs"), help="parent of the run folder")
    p.add_argument("--model-base-url", help="OpenAI-compatible endpoint for the learnable check")
    p.add_argument("--model", help="model name (with --model-base-url)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.model_base_url and not args.model:
        p.error("--model-base-url needs --model")
    return args


async def _run(args: argparse.Namespace, base_url: str, run_dir: Path, console: Console) -> int:
    from rft_sdk.doctor import print_doctor, run_doctor, write_doctor_report
    from rft_sdk.emulator import OpenAICompatiblePolicy, load_dataset

    from .app import server

    items = load_dataset(DATA_DIR / "retail_test.jsonl", server.tools)[:args.limit]
    # turns for the longest valid path (gold or alternative), plus the answer
    steps = max(len(path["actions"]) for item in items for path in [item, *item.get("alternatives", [])]) + 1
    job = server.job_config(base_url, max_episode_steps=steps)
    (run_dir / "job.json").write_text(json.dumps(job, indent=2) + "\n", encoding="utf-8")
    log_path = args.production_log
    if log_path is None:
        log_path = run_dir / "production_log.jsonl"
        train = load_dataset(DATA_DIR / "retail_train.jsonl", server.tools)
        log_path.write_text("".join(json.dumps(line) + "\n" for line in production_log_from(train)), encoding="utf-8")
    policy: Any = (OpenAICompatiblePolicy(args.model_base_url, args.model) if args.model_base_url
                   else NoisyReplayPolicy(args.mistake_rate, args.seed))
    try:
        report = await run_doctor(items, job, policy=policy, production_log=log_path, samples=args.samples,
                                  write_tools=WRITE_TOOLS)
    finally:
        close = getattr(policy, "aclose", None)
        if close is not None:
            await close()
    print_doctor(report, console)
    paths = write_doctor_report(run_dir, report)
    console.print(f"wrote {paths['json']} and {paths['html']}")
    return report.exit_code


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status (130 on Ctrl-C)."""
    args = _parse(argv)
    console = Console()
    if not console.is_terminal:
        console = Console(width=140)
    run_dir = args.runs_dir / time.strftime("doctor-%Y%m%d-%H%M%S")
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        with serve_process("examples.retail.app:server", cwd=ROOT) as base_url:
            return asyncio.run(_run(args, base_url, run_dir, console))
    except KeyboardInterrupt:
        console.print("interrupted; tool server stopped")
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
