"""Reports: a rich summary table, a side-by-side comparison, and files on disk.

``write_report(out_dir, results, summary)`` writes ``summary.json``,
``rollouts.jsonl`` (one line per rollout), ``score_hist.png``,
``tool_calls_hist.png`` and ``report.html`` (PNGs embedded as base64; then a
per-item table, the failing rollouts with the grader's reasons and a trajectory
viewer, ``_report_html``). Score histograms span at least 0-1. Given a
step number per rollout (``steps=``: a training step or eval round) and at
least two distinct steps, it adds ``over_time.png`` and a per-step table (see
:func:`step_stats`): the distribution of tool calls per rollout and the p95
tool latency per step, the charts that show a policy's tool use settling.
Plots use matplotlib's Agg canvas directly, so no global backend is switched.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from rich.console import Console
from rich.table import Table

from ._report_html import STYLE, failing_table, item_table, trajectories
from ._rollout import RolloutResult

__all__ = ["comparison_table", "draw_histogram", "print_comparison", "print_summary", "step_stats", "summary_table", "write_report"]


def _fmt(value: Any, spec: str = ".3f") -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return format(value, spec)
    return str(value)


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value * 1000:.1f} ms"


def _rows(s: Mapping[str, Any], *, detail: bool = True) -> list[tuple[str, str]]:
    t, lr = s["tools"], s["learnability"]
    rows = [
        ("rollouts (graded / discarded)", f"{s['rollouts']} ({s['graded']} / {s['discarded']})"),
    ]
    if s.get("truncated"):  # only when it happened, so clean runs print the table they always did
        rows.append(("truncated at max_episode_steps", str(s["truncated"])))
    rows += [
        ("reward mean ± std", f"{_fmt(s['reward']['mean'])} ± {_fmt(s['reward']['std'])}"),
        (f"pass rate (score ≥ {s['pass_threshold']})", _fmt(s["pass_rate"])),
        ("tool calls per rollout", _fmt(t["calls_per_rollout"], ".2f")),
    ]
    rows += [(f"  {name}", _fmt(v, ".2f")) for name, v in t["calls_per_rollout_by_tool"].items()]
    tok = t["mean_tokens_per_tool_call"]
    rows += [
        (f"tokens per tool call, args / output [{t['token_estimate']}]",
         f"{_fmt(tok['arguments'], '.1f')} / {_fmt(tok['output'], '.1f')}"),
        ("tool latency p50 / p95 / p99",
         " / ".join(_ms(t["latency_s"][k]) for k in ("p50", "p95", "p99"))),
        ("tool errors", str(t["error_count"])),
    ]
    rows += [(f"  {kind}", str(v)) for kind, v in t["errors_by_kind"].items()]
    server = t.get("server") or {}
    if server.get("bottleneck"):  # only when it happened, so unhurried runs print the table they always did
        wait = server["queue_wait_s"]
        rows.append(("server was the bottleneck",
                     f"{server['calls_queued']} calls queued (mean {_ms(wait['mean'])}, max {_ms(wait['max'])}), "
                     f"{server['calls_retried']} retried"))
    rows.append(("discarded by reason", ", ".join(f"{k}: {v}" for k, v in s["discards_by_reason"].items()) or "none"))
    rows += [
        ("learnability: mean best-of-n − mean", _fmt(lr["mean_best_minus_mean"])),
        ("items whose samples all score the same", _fmt(lr["share_items_all_same"])),
    ]
    for name, sub in (s.get("subscores") or {}).items():
        rows.append((f"sub-score {name} (mean)", _fmt(sub["mean"])))
    if s.get("perturbations"):  # one sub-row per kind, like tools, so wide labels never wrap a cell
        rows.append(("perturbations", str(sum(s["perturbations"].values()))))
        if detail:
            rows += [(f"  {kind}", str(v)) for kind, v in s["perturbations"].items()]
    return rows


def summary_table(summary: Mapping[str, Any], title: str | None = None) -> Table:
    """A two-column rich table of one :func:`summarize` result."""
    table = Table(title=title or f"Emulator summary{' – ' + summary['label'] if summary.get('label') else ''}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for k, v in _rows(summary):
        table.add_row(k, v)
    return table


def print_summary(summary: Mapping[str, Any], console: Console | None = None) -> None:
    """Print :func:`summary_table` to ``console`` (default: stdout)."""
    (console or Console()).print(summary_table(summary))


def comparison_table(summaries: Mapping[str, Mapping[str, Any]], title: str = "Policy comparison") -> Table:
    """One rich table, one column per policy: ``{"reference": summary, "perturbed": summary}``.

    Rows are the union of the summaries' rows (per-tool rows differ between
    runs); a missing row shows ``–``.
    """
    per = {name: dict(_rows(s, detail=False)) for name, s in summaries.items()}
    keys: list[str] = []
    for rows in per.values():
        keys += [k for k in rows if k not in keys]
    table = Table(title=title)
    table.add_column("metric")
    for name in per:
        table.add_column(name, justify="right")
    for k in keys:
        table.add_row(k, *(per[name].get(k, "–") for name in per))
    return table


def print_comparison(summaries: Mapping[str, Mapping[str, Any]], console: Console | None = None) -> None:
    """Print :func:`comparison_table` to ``console`` (default: stdout)."""
    (console or Console()).print(comparison_table(summaries))


def draw_histogram(ax: Any, values: Sequence[float], integer_bins: bool) -> None:
    """Draw ``values`` on matplotlib axes ``ax``: whole-number bins and ticks for counts; for scores
    20 bins over at least 0-1 (so all-1.0 is one bar at 1.0, not an axis of 0.5-1.5)."""
    if not values:
        ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
        return
    if integer_bins:
        lo, hi = int(min(values)), int(max(values))
        ax.hist(values, bins=[x - 0.5 for x in range(lo, hi + 2)], color="#4C72B0", edgecolor="white")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlim(min(-0.5, lo - 0.5), hi + 0.5)
    else:
        lo_s, hi_s = min(0.0, min(values)), max(1.0, max(values))
        ax.hist(values, bins=20, range=(lo_s, hi_s), color="#4C72B0", edgecolor="white")
        pad = 0.02 * (hi_s - lo_s)
        ax.set_xlim(lo_s - pad, hi_s + pad)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def _histogram(path: Path, values: Sequence[float], title: str, xlabel: str, integer_bins: bool) -> bytes:
    """Write the histogram PNG to ``path`` and return its bytes (embedded in ``report.html``)."""
    fig = Figure(figsize=(5, 3.2), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    draw_histogram(ax, values, integer_bins)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("rollouts")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    path.write_bytes(buf.getvalue())
    return buf.getvalue()


def step_stats(results: Sequence[RolloutResult], steps: Sequence[int]) -> list[dict[str, Any]]:
    """Per-step figures, one dict per distinct step in ascending order.

    ``steps[i]`` is the step number of ``results[i]``. Shape::

        {"step": int, "rollouts": int, "tool_calls": [int per rollout],
         "calls_per_rollout": {"mean", "p50", "p95"}, "latency_p95_s": float | None,
         "reward_mean": float | None}

    Percentiles are numpy's default (linear, as :func:`summarize`); latency is
    over the step's calls that were sent (``attempts > 0``), seconds.

    Raises:
        ValueError: ``steps`` and ``results`` differ in length.
    """
    if len(steps) != len(results):
        raise ValueError(f"steps has {len(steps)} entries but there are {len(results)} results; give one "
                         "step number per result, in the same order")
    rows = []
    for step in sorted(set(steps)):
        group = [r for r, s in zip(results, steps) if s == step]
        calls = [len(r.tool_calls) for r in group]
        latencies = [c.latency_s for r in group for c in r.tool_calls if c.attempts > 0]
        scores = [r.score for r in group if r.score is not None]
        rows.append({
            "step": int(step), "rollouts": len(group), "tool_calls": calls,
            "calls_per_rollout": {"mean": float(np.mean(calls)), "p50": float(np.percentile(calls, 50)),
                                  "p95": float(np.percentile(calls, 95))},
            "latency_p95_s": float(np.percentile(latencies, 95)) if latencies else None,
            "reward_mean": float(np.mean(scores)) if scores else None,
        })
    return rows


def _over_time(path: Path, rows: Sequence[Mapping[str, Any]]) -> bytes:
    """Two panels: box plot of tool calls per rollout per step, p95 tool latency per step."""
    fig = Figure(figsize=(10, 3.4), dpi=100)
    FigureCanvasAgg(fig)
    calls_ax, lat_ax = fig.subplots(1, 2)
    xs = [row["step"] for row in rows]
    width = 0.6 * min((b - a for a, b in zip(xs, xs[1:])), default=1)
    calls_ax.boxplot([row["tool_calls"] for row in rows], positions=xs, widths=width, showfliers=True)
    calls_ax.plot(xs, [row["calls_per_rollout"]["mean"] for row in rows], "o-", color="#C44E52", label="mean")
    calls_ax.set_title("Tool calls per rollout")
    calls_ax.set_xlabel("step")
    calls_ax.set_ylabel("tool calls")
    calls_ax.legend(loc="upper right")
    points = [(row["step"], row["latency_p95_s"] * 1000) for row in rows if row["latency_p95_s"] is not None]
    if points:
        lat_ax.plot(*zip(*points), "o-", color="#4C72B0")
    else:
        lat_ax.text(0.5, 0.5, "no tool calls", ha="center", va="center", transform=lat_ax.transAxes)
    lat_ax.set_title("p95 tool latency")
    lat_ax.set_xlabel("step")
    lat_ax.set_ylabel("ms")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    path.write_bytes(buf.getvalue())
    return buf.getvalue()


def _step_table(rows: Sequence[Mapping[str, Any]]) -> str:
    head = "<tr><th>step</th><th>rollouts</th><th>calls/rollout mean</th><th>p50</th><th>p95</th>" \
           "<th>p95 latency</th><th>reward mean</th></tr>"
    body = "".join(
        f"<tr><td>{r['step']}</td><td>{r['rollouts']}</td><td>{_fmt(r['calls_per_rollout']['mean'], '.2f')}</td>"
        f"<td>{_fmt(r['calls_per_rollout']['p50'], '.1f')}</td><td>{_fmt(r['calls_per_rollout']['p95'], '.1f')}</td>"
        f"<td>{_ms(r['latency_p95_s'])}</td><td>{_fmt(r['reward_mean'])}</td></tr>" for r in rows)
    return f"<h2>Over time</h2><table>{head}{body}</table>"


def write_report(out_dir: str | Path, results: Sequence[RolloutResult], summary: Mapping[str, Any],
                 include_extra: bool = False, *, steps: Sequence[int] | None = None) -> dict[str, Path]:
    """Write the run's files into ``out_dir`` (created if missing).

    Args:
        steps: optional step number (training step or eval round) of each
            result, same order; with two or more distinct steps the report adds
            ``over_time.png`` and a per-step table (:func:`step_stats`).

    Returns:
        ``{"summary", "rollouts", "score_hist", "tool_calls_hist", "html"}`` → paths,
        plus ``"over_time"`` when drawn.

    Raises:
        OSError: the directory or a file cannot be written.
        ValueError: ``steps`` does not have one entry per result.
    """
    rows = step_stats(results, steps) if steps is not None else []
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"summary": out / "summary.json", "rollouts": out / "rollouts.jsonl",
             "score_hist": out / "score_hist.png", "tool_calls_hist": out / "tool_calls_hist.png",
             "html": out / "report.html"}
    paths["summary"].write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    with paths["rollouts"].open("w", encoding="utf-8") as fh:
        for r in results:
            fh.write(json.dumps(r.to_dict(include_extra), ensure_ascii=False) + "\n")
    scores = [r.score for r in results if r.score is not None]
    pngs = {
        "score_hist": _histogram(paths["score_hist"], scores, "Score per graded rollout", "score",
                                 integer_bins=False),
        "tool_calls_hist": _histogram(paths["tool_calls_hist"], [len(r.tool_calls) for r in results],
                                      "Tool calls per rollout", "tool calls", integer_bins=True),
    }
    over_time = ""
    if len(rows) >= 2:
        paths["over_time"] = out / "over_time.png"
        pngs["over_time"] = _over_time(paths["over_time"], rows)
        over_time = _step_table(rows)
    imgs = "".join(f'<figure><img alt="{key}" src="data:image/png;base64,{base64.b64encode(png).decode()}"></figure>'
                   for key, png in pngs.items())
    table = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in _rows(summary))
    threshold = float(summary["pass_threshold"])
    paths["html"].write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>rft emulate report</title>"
        f"<style>{STYLE}</style></head><body>"
        f"<h1>rft emulate report{' – ' + html.escape(str(summary['label'])) if summary.get('label') else ''}</h1>"
        f"<table>{table}</table>{imgs}{over_time}{item_table(summary, results)}"
        f"{failing_table(results, threshold)}{trajectories(results, threshold)}"
        "<p>Raw data: summary.json, rollouts.jsonl.</p></body></html>\n",
        encoding="utf-8")
    return paths
