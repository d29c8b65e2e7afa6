"""Per-step metrics: a JSONL log and a reward-curve plot (matplotlib, Agg backend)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ._watch import eval_rank

__all__ = ["MetricsLog", "plot_rewards"]


class MetricsLog:
    """Append one JSON object per line to ``path`` (created, parents too); keeps the rows in ``rows``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("", encoding="utf-8")
        self.rows: list[dict[str, Any]] = []

    def write(self, row: dict[str, Any]) -> None:
        """Append ``row`` (non-finite floats are written as null)."""
        clean = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in row.items()}
        self.rows.append(clean)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(clean) + "\n")


def plot_rewards(rows: list[dict[str, Any]], path: str | Path, *, title: str = "GRPO reward") -> Path:
    """Plot ``reward_mean`` (train, per step) and ``eval_success`` (held-out) against ``step`` into a PNG.

    The best held-out evaluation (the weights kept as ``best.pt``) is marked with a star.

    Rows are dicts as written by :class:`MetricsLog`; rows lacking a key are skipped for that curve.
    Returns the path written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    train = [(r["step"], r["reward_mean"]) for r in rows if r.get("reward_mean") is not None and "step" in r]
    evals = [(r["step"], r["eval_success"]) for r in rows if r.get("eval_success") is not None and "step" in r]
    sampled = [(r["step"], r["eval_sampled_success"]) for r in rows
               if r.get("eval_sampled_success") is not None and "step" in r]
    if train:
        ax.plot(*zip(*train), label="train reward (mean of group samples)")
    if evals:
        ax.plot(*zip(*evals), "o--", label="held-out success (greedy)")
    if sampled:
        ax.plot(*zip(*sampled), "s:", label="held-out success (sampled, GRPO temperature)")
    if evals:
        at = dict(sampled)
        best = max(evals, key=lambda e: eval_rank(e[1], at.get(e[0])))  # first of the highest, as best.pt
        ax.plot([best[0]], [best[1]], "*", markersize=12, color="tab:red", label=f"best.pt (step {best[0]})")
    ax.set_xlabel("GRPO step")
    ax.set_ylabel("reward / success")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    plt.close(fig)
    return out
