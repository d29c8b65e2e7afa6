"""The doctor's outputs: ``doctor.json``, ``doctor.html`` (verdicts and advice first, PNG plots
embedded: ``_report_html``) and a rich table.

Plots use matplotlib's Agg canvas directly (no global backend switch), as
the emulator's report does.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from rich.console import Console
from rich.table import Table

from ._doctor import DoctorReport
from ._report_html import doctor_html

__all__ = ["doctor_table", "print_doctor", "probe_table", "write_doctor_report"]

_VERDICT = {True: ("PASS", "green"), False: ("FAIL", "red"), None: ("NOT CHECKED", "yellow")}
_PROBE_VERDICT = {"pass": ("PASS", "green"), "warn": ("WARN", "yellow"), "fail": ("FAIL", "red"),
                  "skipped": ("SKIPPED", "dim"), "waived": ("WAIVED", "dim")}


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _principle_verdict(p: Any) -> tuple[str, str]:
    """PASS / WARN (passed with a warning finding) / FAIL / NOT CHECKED, and its colour."""
    if p.passed is True and any(f.severity == "warn" for f in p.findings):
        return "WARN", "yellow"
    return _VERDICT[p.passed]


def doctor_table(report: DoctorReport, title: str = "rft doctor") -> Table:
    """One row per principle: verdict and the one-line evidence summary."""
    table = Table(title=title)
    table.add_column("principle")
    table.add_column("verdict")
    table.add_column("evidence")
    for name, p in report.principles.items():
        text, style = _principle_verdict(p)
        table.add_row(name, f"[{style}]{text}[/]", p.summary)
    return table


def probe_table(report: DoctorReport) -> Table | None:
    """One row per probe: intent, mean score, pass rate, rewarded items, verdict; ``None`` when unhackable was not run.

    Waived probes (``--skip-probes``) are listed last as ``WAIVED``.
    """
    p = report.principles.get("unhackable")
    if p is None or "probes" not in p.evidence:  # not run (e.g. the policy's rollouts were discarded)
        return None
    ev = p.evidence
    table = Table(title=f"probes (rewarded: score > baseline + {ev['hack_share']:.0%} of (gold − baseline); a hack fails, a shortcut "
                        f"warns, when rewarded on > {ev['hack_threshold']:.0%} of items)")
    for col in ("probe", "intent", "mean score", "pass rate", "rewarded", "rollouts", "verdict"):
        table.add_column(col, justify="left" if col in ("probe", "intent") else "right")
    for name, row in ev["probes"].items():
        text, style = _PROBE_VERDICT[row["verdict"]]
        table.add_row(name, row["intent"], _fmt(row["mean_score"]), _fmt(row["pass_rate"]), str(len(row["items"])),
                      str(row["rollouts"]), f"[{style}]{text}[/]")
    for name in ev.get("waived_probes", []):
        table.add_row(name, "", "–", "–", "–", "0", "[dim]WAIVED[/]")
    return table


def print_doctor(report: DoctorReport, console: Console | None = None, *, findings: bool = True) -> None:
    """Print the principle table, the probe table and (optionally) every non-info finding with its advice."""
    console = console or Console()
    console.print(doctor_table(report))
    probes = probe_table(report)
    if probes is not None:
        console.print(probes)
    if findings:
        for name, p in report.principles.items():
            for f in p.findings:
                if f.severity != "info":
                    console.print(f"[bold]{name}[/] {f.severity}: {f.message}\n  → {f.advice}", highlight=False)


def _png(fig: Figure) -> bytes:
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _figure() -> tuple[Figure, Any]:
    fig = Figure(figsize=(6, 3.4), dpi=100)
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def _plots(report: DoctorReport) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    un = report.principles.get("unhackable")
    if un is not None and "probes" in un.evidence:
        fig, ax = _figure()
        rows = un.evidence["probes"]
        names = list(rows)
        vals = [rows[n]["mean_score"] or 0.0 for n in names]
        colour = {"fail": "#C44E52", "warn": "#DD8452"}
        ax.barh(names, vals, color=[colour.get(rows[n]["verdict"], "#4C72B0") for n in names])
        ax.set_xlabel("mean score of the probe")
        ax.set_title("Probes (red: fail, orange: warn)")
        ax.invert_yaxis()
        out["probes"] = _png(fig)
    le = report.principles.get("learnable")
    if le is not None and any(r["scores"] for r in le.evidence.get("items", [])):  # nothing graded: no plot
        fig, ax = _figure()
        rows = sorted((r for r in le.evidence["items"] if r["scores"]),
                      key=lambda r: sum(r["scores"]) / len(r["scores"]))
        xs = range(len(rows))
        means = [sum(r["scores"]) / len(r["scores"]) for r in rows]
        ax.vlines(xs, [min(r["scores"]) for r in rows], [max(r["scores"]) for r in rows], color="#999999")
        ax.plot(xs, means, "o", color="#4C72B0", markersize=3, label="mean")
        ax.set_xlabel("item (sorted by mean score)")
        ax.set_ylabel("score (min–max, mean)")
        ax.set_title("Learnable: score spread per item")
        out["learnable"] = _png(fig)
    pr = report.principles.get("production_like")
    if pr is not None and pr.evidence.get("features"):
        fig, ax = _figure()
        feats = pr.evidence["features"]
        names = list(feats)
        ax.bar(names, [feats[n]["value"] for n in names],
               color=["#C44E52" if feats[n]["out_of_bounds"] else "#4C72B0" for n in names])
        ax.plot(names, [feats[n]["bound"] for n in names], "k_", markersize=20, label="bound")
        ax.set_ylabel("PSI / JS distance")
        ax.tick_params(axis="x", labelrotation=20)
        ax.set_title("Production-like: drift per feature")
        out["production"] = _png(fig)
    return out


def write_doctor_report(out_dir: str | Path, report: DoctorReport) -> dict[str, Path]:
    """Write ``doctor.json``, ``doctor.html`` and one PNG per plot into ``out_dir`` (created if missing).

    Returns:
        ``{"json", "html", <plot name>...}`` → paths.

    Raises:
        OSError: the directory or a file cannot be written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "doctor.json", "html": out / "doctor.html"}
    paths["json"].write_text(json.dumps(report.to_dict(), indent=2, default=str) + "\n", encoding="utf-8")
    plots = _plots(report)
    for name, png in plots.items():
        paths[name] = out / f"doctor_{name}.png"
        paths[name].write_bytes(png)
    paths["html"].write_text(doctor_html(report, plots, _principle_verdict, _PROBE_VERDICT), encoding="utf-8")
    return paths
