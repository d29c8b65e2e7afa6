"""The parts of ``report.html`` a person reads first: per-item scores, failing rollouts, trajectories.

* :func:`item_table`: one row per item from ``summary["learnability"]["items"]``:
  graded samples, mean, best, worst and the population std (the spread GRPO
  learns from), with the discards of that item.
* :func:`failing_table`: rollouts that were discarded or scored below the job's
  ``pass_threshold``, each with the grader's reasons and sub-scores (its
  ``x-rft-grade-details``) or the discard reason and detail.
* :func:`trajectories`: a ``<details>`` per rollout (failing ones first, at most
  :data:`MAX_TRAJECTORIES`): every tool call with its arguments, status, output
  (cut to :data:`MAX_OUTPUT_CHARS`), latency and attempts, then the final answer.

Everything is escaped with :func:`html.escape`; the whole record stays in ``rollouts.jsonl``.
"""

from __future__ import annotations

import html
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ._rollout import RolloutResult

__all__ = ["MAX_OUTPUT_CHARS", "MAX_TRAJECTORIES", "STYLE", "failing_table", "item_table", "trajectories"]

#: Rollouts shown in the trajectory viewer (failing ones first); the rest are in rollouts.jsonl.
MAX_TRAJECTORIES = 200
#: Rows of the failing-rollouts table.
MAX_FAILING = 100
#: Characters of a tool output or answer shown in the viewer.
MAX_OUTPUT_CHARS = 2000

#: CSS of the report (tables, verdict colours, the viewer).
STYLE = ("body{font-family:sans-serif;margin:2em;max-width:1200px}td,th{padding:2px 10px;text-align:left;"
         "vertical-align:top}th{background:#eee}table{border-collapse:collapse;margin-bottom:1em}"
         "tr:nth-child(even){background:#fafafa}figure{display:inline-block;margin:0 1em}"
         ".bad{color:#b00}.ok{color:#070}pre{white-space:pre-wrap;word-break:break-word;margin:0;"
         "max-width:60em}details{margin:2px 0}summary{cursor:pointer}.num{text-align:right;white-space:nowrap}")


def _e(value: Any) -> str:
    return html.escape(str(value))


def _f(value: float | None, spec: str = ".3f") -> str:
    return "–" if value is None else format(value, spec)


def _failed(r: RolloutResult, threshold: float) -> bool:
    return r.discarded or r.score is None or r.score < threshold


def item_table(summary: Mapping[str, Any], results: Sequence[RolloutResult]) -> str:
    """``<h2>Per item</h2>`` and one row per item (0-based index): samples, mean, best, worst, std, discarded."""
    worst: dict[int, float] = {}
    for r in results:
        if r.score is not None and not r.discarded:
            worst[r.item_index] = min(worst.get(r.item_index, r.score), r.score)
    dropped = Counter(r.item_index for r in results if r.discarded)
    rows = "".join(
        f"<tr><td class=num>{row['item_index']}</td><td class=num>{row['n']}</td>"
        f"<td class=num>{_f(row['mean'])}</td><td class=num>{_f(row['best'])}</td>"
        f"<td class=num>{_f(worst.get(row['item_index']))}</td><td class=num>{_f(row['std'])}</td>"
        f"<td class='num{' bad' if dropped[row['item_index']] else ''}'>{dropped[row['item_index']]}</td></tr>"
        for row in summary["learnability"]["items"])
    return ("<h2>Per item</h2><p>Scores of each item's graded samples; std is the spread between them "
            "(0: every sample scored alike, nothing for GRPO to learn from on that item).</p>"
            "<table><tr><th>item</th><th>graded</th><th>mean</th><th>best</th><th>worst</th><th>std</th>"
            f"<th>discarded</th></tr>{rows}</table>")


def _reasons(r: RolloutResult) -> str:
    if r.discarded:
        return f"discarded: {r.discard_reason}: {r.discard_detail or ''}"
    details = r.grade_details or {}
    parts = [str(x) for x in details.get("reasons") or []]
    subs = details.get("subscores") or {}
    if subs:
        parts.append("sub-scores: " + ", ".join(f"{k}={v}" for k, v in subs.items()))
    if r.truncated:
        parts.append("truncated at max_episode_steps")
    return "; ".join(parts) or "(the grader gave no reasons)"


def failing_table(results: Sequence[RolloutResult], threshold: float) -> str:
    """``<h2>Failing rollouts</h2>``: discarded or below ``threshold``, with the grader's reasons."""
    failing = [r for r in results if _failed(r, threshold)]
    if not failing:
        return f"<h2>Failing rollouts</h2><p class=ok>None: every rollout was graded at or above {threshold}.</p>"
    rows = "".join(
        f"<tr><td class=num>{r.item_index}</td><td class=num>{r.sample_index}</td>"
        f"<td class='num bad'>{_f(r.score)}</td><td><a href='#{_e(r.trace_id)}'>{_e(r.trace_id)}</a></td>"
        f"<td><pre>{_e(_reasons(r))}</pre></td></tr>" for r in failing[:MAX_FAILING])
    more = f"<p>and {len(failing) - MAX_FAILING} more (rollouts.jsonl)</p>" if len(failing) > MAX_FAILING else ""
    return (f"<h2>Failing rollouts ({len(failing)} of {len(results)})</h2><p>Discarded, or scored below the "
            f"pass threshold {threshold}; the reasons are the grader's (x-rft-grade-details) or the discard's.</p>"
            "<table><tr><th>item</th><th>sample</th><th>score</th><th>trace_id</th><th>reasons</th></tr>"
            f"{rows}</table>{more}")


def _pretty(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), indent=1, ensure_ascii=False)
    except ValueError:
        return arguments


def _call_output(c: Any) -> str:
    """What the model saw, prefixed by the error when the call failed (``ToolCallResult``)."""
    if c.ok or not c.error:
        return str(c.output)
    return f"{c.error}: {c.output}" if c.output else str(c.error)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_OUTPUT_CHARS else text[:MAX_OUTPUT_CHARS] + f" … ({len(text)} characters)"


def trajectories(results: Sequence[RolloutResult], threshold: float) -> str:
    """``<h2>Trajectories</h2>``: a ``<details>`` per rollout, failing first, then by item and sample."""
    ordered = sorted(results, key=lambda r: (not _failed(r, threshold), r.item_index, r.sample_index))
    parts = []
    for r in ordered[:MAX_TRAJECTORIES]:
        verdict = (f"discarded ({r.discard_reason})" if r.discarded else f"score {_f(r.score)}")
        cls = "bad" if _failed(r, threshold) else "ok"
        calls = "".join(
            f"<tr><td class=num>{n}</td><td>{_e(c.name)}</td><td><pre>{_e(_pretty(c.arguments))}</pre></td>"
            f"<td class='num{'' if c.ok else ' bad'}'>{_e(c.status if c.status is not None else '–')}</td>"
            f"<td><pre>{_e(_cut(_call_output(c)))}</pre></td>"
            f"<td class=num>{c.latency_s * 1000:.1f} ms</td><td class=num>{c.attempts}</td></tr>"
            for n, c in enumerate(r.tool_calls, 1))
        table = ("<table><tr><th>#</th><th>tool</th><th>arguments</th><th>status</th><th>output</th>"
                 f"<th>latency</th><th>attempts</th></tr>{calls}</table>" if calls else "<p>No tool call.</p>")
        answer = (r.sample or {}).get("output_text")
        parts.append(
            f"<details id='{_e(r.trace_id)}'><summary class={cls}>item {r.item_index}, sample {r.sample_index}: "
            f"{_e(verdict)}, {len(r.tool_calls)} call(s), {r.duration_s:.2f} s</summary>{table}"
            f"<p><b>final answer:</b></p><pre>{_e(_cut(answer)) if answer is not None else '–'}</pre>"
            f"<p><b>reasons:</b> {_e(_reasons(r))}</p></details>")
    more = (f"<p>Showing {MAX_TRAJECTORIES} of {len(results)} rollouts; all are in rollouts.jsonl.</p>"
            if len(results) > MAX_TRAJECTORIES else "")
    return f"<h2>Trajectories</h2><p>Each rollout's tool calls in order (failing rollouts first).</p>{more}{''.join(parts)}"
