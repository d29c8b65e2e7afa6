"""Reports: a rich summary table, a side-by-side comparison, and files on disk.

``write_report(out_dir, results, summary)`` writes ``summary.json``,
``rollouts.jsonl`` (one line per rollout), ``score_hist.png``,
``tool_calls_hist.png`` and ``report.html`` (PNGs embedded as base64).
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

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from rich.console import Console
from rich.table import Table

from ._rollout import RolloutResult

__all__ = ["comparison_table", "print_comparison", "print_summary", "summary_table", "write_report"]


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


def _histogram(path: Path, values: Sequence[float], title: str, xlabel: str, integer_bins: bool) -> bytes:
    """Write the histogram PNG to ``path`` and return its bytes (embedded in ``report.html``)."""
    fig = Figure(figsize=(5, 3.2), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    if values:
        if integer_bins:
            lo, hi = int(min(values)), int(max(values))
            bins: Any = [x - 0.5 for x in range(lo, hi + 2)]
        else:
            bins = 20
        ax.hist(values, bins=bins, color="#4C72B0", edgecolor="white")
    else:
        ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("rollouts")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    path.write_bytes(buf.getvalue())
    return buf.getvalue()


def write_report(out_dir: str | Path, results: Sequence[RolloutResult], summary: Mapping[str, Any],
                 include_extra: bool = False) -> dict[str, Path]:
    """Write the run's files into ``out_dir`` (created if missing).

    Returns:
        ``{"summary", "rollouts", "score_hist", "tool_calls_hist", "html"}`` → paths.

    Raises:
        OSError: the directory or a file cannot be written.
    """
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
    imgs = "".join(f'<figure><img alt="{key}" src="data:image/png;base64,{base64.b64encode(png).decode()}"></figure>'
                   for key, png in pngs.items())
    rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in _rows(summary))
    paths["html"].write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>rft emulate report</title>"
        "<style>body{font-family:sans-serif;margin:2em}td{padding:2px 12px}"
        "figure{display:inline-block;margin:0 1em}</style></head><body>"
        f"<h1>rft emulate report{' – ' + html.escape(str(summary['label'])) if summary.get('label') else ''}</h1>"
        f"<table>{rows}</table>{imgs}<p>Raw data: summary.json, rollouts.jsonl.</p></body></html>\n",
        encoding="utf-8")
    return paths
