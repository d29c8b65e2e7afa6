"""``doctor.html`` as a person reads it: the verdicts and the advice first, the figures after.

Order: a headline, one row per principle (verdict and its evidence line), what
to do (every fail and warn finding with its advice, fails first), discarded
rollouts of the policy's run, the probe table, the plots, then the run's
settings as a table and the less urgent (``info``) findings. The raw figures
stay in ``doctor.json``. Everything is escaped with :func:`html.escape`.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping
from typing import Any

from ._doctor import DoctorReport

__all__ = ["doctor_html"]

_CSS_COLOUR = {"green": "#070", "red": "#b00", "yellow": "#a60", "dim": "#777"}
_STYLE = ("body{font-family:sans-serif;margin:2em;max-width:1200px}td,th{padding:4px 12px;text-align:left;"
          "vertical-align:top}th{background:#eee}table{border-collapse:collapse;margin-bottom:1em}"
          "tr:nth-child(even){background:#fafafa}figure{display:inline-block;margin:0 1em}"
          "li{margin-bottom:.6em}.advice{color:#333}.num{text-align:right;white-space:nowrap}")


def _e(value: Any) -> str:
    return html.escape(str(value))


def _verdict(text: str, style: str) -> str:
    return f"<b style='color:{_CSS_COLOUR.get(style, style)}'>{_e(text)}</b>"


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _todo(report: DoctorReport) -> str:
    order = {"fail": 0, "warn": 1}
    items = sorted(((order[f.severity], name, f) for name, p in report.principles.items() for f in p.findings
                    if f.severity in order), key=lambda x: (x[0], x[1]))
    if not items:
        return "<h2>What to do</h2><p>Nothing: no principle raised a failure or a warning.</p>"
    rows = "".join(
        f"<li>{_verdict(f.severity.upper(), 'red' if f.severity == 'fail' else 'yellow')} <b>{_e(name)}</b>: "
        f"{_e(f.message)}" + (f"<br><span class=advice>→ {_e(f.advice)}</span>" if f.advice else "") + "</li>"
        for _, name, f in items)
    return f"<h2>What to do</h2><ol>{rows}</ol>"


def _discards(meta: Mapping[str, Any]) -> str:
    digest = meta.get("discards")
    if not digest or not digest.get("discarded"):
        return ""
    rows = "".join(f"<tr><td>{_e(r['reason'])}</td><td class=num>{r['count']}</td><td>item "
                   f"{r['example']['item_index']}, {_e(r['example']['trace_id'])}: {_e(r['example']['detail'])}</td></tr>"
                   for r in digest["top"])
    return (f"<h2>Discarded rollouts of the policy's run: {digest['discarded']} of {digest['rollouts']}</h2>"
            f"<table><tr><th>reason</th><th>count</th><th>example</th></tr>{rows}</table>")


def _probes(report: DoctorReport, verdicts: Mapping[str, tuple[str, str]]) -> str:
    p = report.principles.get("unhackable")
    if p is None or "probes" not in p.evidence:
        return ""
    ev = p.evidence
    rows = "".join(
        f"<tr><td>{_e(name)}</td><td>{_e(row['intent'])}</td><td class=num>{_fmt(row['mean_score'])}</td>"
        f"<td class=num>{_fmt(row['pass_rate'])}</td><td class=num>{len(row['items'])}</td>"
        f"<td class=num>{row['rollouts']}</td><td>{_verdict(*verdicts[row['verdict']])}</td></tr>"
        for name, row in ev["probes"].items())
    rows += "".join(f"<tr><td>{_e(name)}</td><td></td><td>–</td><td>–</td><td>–</td><td>0</td>"
                    f"<td>{_verdict('WAIVED', 'dim')}</td></tr>" for name in ev.get("waived_probes", []))
    return (f"<h2>Probes</h2><p>A probe is rewarded on an item when it scores above {ev['hack_share']:.0%} of the "
            f"gold's score; a hack fails, a shortcut warns, when rewarded on more than {ev['hack_threshold']:.0%} "
            "of items.</p><table><tr><th>probe</th><th>intent</th><th>mean score</th><th>pass rate</th>"
            f"<th>rewarded items</th><th>rollouts</th><th>verdict</th></tr>{rows}</table>")


def _meta(meta: Mapping[str, Any]) -> str:
    rows = "".join(f"<tr><td>{_e(k)}</td><td>{_e(v if not isinstance(v, (list, tuple)) else ', '.join(map(str, v)) or '–')}"
                   f"</td></tr>" for k, v in meta.items() if k != "discards")
    return f"<h2>Run settings</h2><table>{rows}</table>"


def _info(report: DoctorReport) -> str:
    items = "".join(f"<li><b>{_e(name)}</b>: {_e(f.message)}" + (f"<br><span class=advice>{_e(f.advice)}</span>"
                                                                  if f.advice else "") + "</li>"
                    for name, p in report.principles.items() for f in p.findings if f.severity == "info")
    return f"<details><summary>Other observations</summary><ul>{items}</ul></details>" if items else ""


def doctor_html(report: DoctorReport, plots: Mapping[str, bytes], principle_verdict: Any,
                probe_verdicts: Mapping[str, tuple[str, str]]) -> str:
    """The whole ``doctor.html`` (see the module docstring).

    Args:
        report: the doctor's verdicts. plots: name → PNG bytes (embedded as base64).
        principle_verdict: ``PrincipleResult -> (text, colour)`` (the terminal table's rule).
        probe_verdicts: a probe's verdict → (text, colour).
    """
    rows = "".join(
        f"<tr><td><b>{_e(name)}</b></td><td>{_verdict(*principle_verdict(p))}</td><td>{_e(p.summary)}</td></tr>"
        for name, p in report.principles.items())
    failed = [n for n, p in report.principles.items() if p.passed is False]
    checked = [n for n, p in report.principles.items() if p.passed is not None]
    headline = (f"{len(failed)} principle(s) fail: {', '.join(failed)}" if failed
                else "all principles checked hold" if checked else "no principle could be checked")
    digest = report.meta.get("discards") or {}
    if digest.get("discarded"):
        headline += f"; {digest['discarded']} of {digest['rollouts']} of the policy's rollouts discarded"
    imgs = "".join(f'<figure><img alt="{_e(k)}" src="data:image/png;base64,{base64.b64encode(v).decode()}"></figure>'
                   for k, v in plots.items())
    return ("<!doctype html><html><head><meta charset='utf-8'><title>rft doctor</title>"
            f"<style>{_STYLE}</style></head><body><h1>rft doctor: {_e(headline)}</h1>"
            "<table><tr><th>principle</th><th>verdict</th><th>evidence</th></tr>"
            f"{rows}</table>{_todo(report)}{_discards(report.meta)}{_probes(report, probe_verdicts)}"
            f"{'<h2>Plots</h2>' + imgs if imgs else ''}{_meta(report.meta)}{_info(report)}"
            "<p>Raw data: doctor.json.</p></body></html>\n")
