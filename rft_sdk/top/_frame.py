"""The numbers of one ``rft top`` frame, computed from two scrapes of ``GET /metrics``.

Rates and the latency percentiles are over the window between the previous
scrape and this one when calls happened in it (``window_s``), else since the
server started. Percentiles follow Prometheus' ``histogram_quantile``: linear
interpolation inside the bucket holding the rank; a rank in the ``+Inf``
bucket answers the highest finite bound.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Sequence

from prometheus_client.parser import text_string_to_metric_families

__all__ = ["Frame", "ToolRow", "build_frame", "histogram_quantile", "parse_metrics"]

#: ``{(sample name, ((label, value), ...) sorted): value}``: one scrape.
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse_metrics(text: str) -> Samples:
    """Parse Prometheus text exposition into :data:`Samples` (``prometheus_client``'s parser)."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def histogram_quantile(q: float, buckets: Sequence[tuple[float, float]]) -> float | None:
    """The ``q`` quantile (0..1) of a histogram given as cumulative ``[(upper bound, count), ...]``.

    Returns ``None`` when the histogram is empty. Rule: Prometheus'
    ``histogram_quantile`` (lower bound of the first bucket is 0, or its upper
    bound when that is <= 0).
    """
    buckets = sorted(buckets)
    if not buckets or buckets[-1][1] <= 0:
        return None
    rank = q * buckets[-1][1]
    prev_bound, prev_count = 0.0, 0.0
    for i, (bound, count) in enumerate(buckets):
        if count >= rank and count > prev_count:
            if math.isinf(bound):
                return prev_bound if i else None
            lower = prev_bound if i else min(0.0, bound)
            return lower + (bound - lower) * (rank - prev_count) / (count - prev_count)
        prev_bound, prev_count = bound, count
    return prev_bound


def _histograms(samples: Samples, name: str, key: str) -> dict[str, list[tuple[float, float]]]:
    """``{label value of key: [(le, cumulative count), ...]}`` of histogram ``name``."""
    out: defaultdict[str, list[tuple[float, float]]] = defaultdict(list)
    for (sample, labels), value in samples.items():
        if sample == f"{name}_bucket":
            d = dict(labels)
            out[d.get(key, "")].append((float(d["le"]), value))
    return {k: sorted(v) for k, v in out.items()}


def _delta(cur: list[tuple[float, float]], prev: list[tuple[float, float]] | None) -> list[tuple[float, float]]:
    before = dict(prev or [])
    return [(le, count - before.get(le, 0.0)) for le, count in cur]


@dataclasses.dataclass
class ToolRow:
    """One tool's line: ``calls`` since start, ``calls_per_s`` and ``error_rate`` (0..1) over the window,
    latency percentiles in seconds (``None`` without calls)."""

    tool: str
    calls: int
    calls_per_s: float | None
    error_rate: float | None
    p50_s: float | None
    p95_s: float | None
    p99_s: float | None


@dataclasses.dataclass
class Frame:
    """Everything one ``rft top`` frame shows.

    ``score_buckets`` are non-cumulative ``[(upper bound, rollouts), ...]``
    over all graded rollouts; ``events`` the non-zero pipeline counters.
    """

    window_s: float | None
    rollouts_in_flight: int | None
    tools: list[ToolRow]
    grades: int
    grades_per_s: float | None
    calls_per_rollout_mean: float | None
    calls_per_rollout_p50: float | None
    calls_per_rollout_p95: float | None
    score_mean: float | None
    score_buckets: list[tuple[float, int]]
    events: dict[str, int]


def _sum(samples: Samples, name: str, **match: str) -> float:
    return sum(v for (n, labels), v in samples.items()
               if n == name and all(dict(labels).get(k) == want for k, want in match.items()))


def build_frame(cur: Samples, prev: Samples | None = None, window_s: float | None = None) -> Frame:
    """Compute a :class:`Frame` from this scrape and, for rates, the previous one ``window_s`` seconds ago."""
    windowed = prev is not None and bool(window_s)
    rows = []
    latency = _histograms(cur, "rft_tool_latency_seconds", "tool")
    before = _histograms(prev, "rft_tool_latency_seconds", "tool") if prev is not None else {}
    for tool, buckets in sorted(latency.items()):
        calls = _sum(cur, "rft_tool_calls_total", tool=tool)
        errors = _sum(cur, "rft_tool_calls_total", tool=tool, outcome="error")
        rate = None
        if windowed and prev is not None and window_s:
            d_calls = calls - _sum(prev, "rft_tool_calls_total", tool=tool)
            d_errors = errors - _sum(prev, "rft_tool_calls_total", tool=tool, outcome="error")
            rate = d_calls / window_s
            if d_calls > 0:  # percentiles and error rate of this window
                calls_w, errors_w, buckets = d_calls, d_errors, _delta(buckets, before.get(tool))
            else:
                calls_w, errors_w = calls, errors
        else:
            calls_w, errors_w = calls, errors
        rows.append(ToolRow(tool, int(calls), rate, errors_w / calls_w if calls_w else None,
                            *(histogram_quantile(q, buckets) for q in (0.5, 0.95, 0.99))))

    per_rollout = [b for bs in _histograms(cur, "rft_rollout_tool_calls", "grader").values() for b in bs]
    merged: defaultdict[float, float] = defaultdict(float)
    for le, count in per_rollout:
        merged[le] += count
    rollout_buckets = sorted(merged.items())
    grades = _sum(cur, "rft_rollout_tool_calls_count")
    score_merged: defaultdict[float, float] = defaultdict(float)
    for bs in _histograms(cur, "rft_grade_score", "grader").values():
        for le, count in bs:
            score_merged[le] += count
    cumulative = sorted(score_merged.items())
    score_buckets = [(le, int(c - (cumulative[i - 1][1] if i else 0))) for i, (le, c) in enumerate(cumulative)]
    scores_n = _sum(cur, "rft_grade_score_count")
    grades_rate = None
    if windowed and prev is not None and window_s:
        grades_rate = (grades - _sum(prev, "rft_rollout_tool_calls_count")) / window_s
    in_flight = cur.get(("rft_rollouts_in_flight", ()))
    events = {dict(labels)["event"]: int(v) for (n, labels), v in sorted(cur.items())
              if n == "rft_events_total" and v}
    return Frame(
        window_s=window_s if windowed else None,
        rollouts_in_flight=int(in_flight) if in_flight is not None else None,
        tools=rows,
        grades=int(grades),
        grades_per_s=grades_rate,
        calls_per_rollout_mean=_sum(cur, "rft_rollout_tool_calls_sum") / grades if grades else None,
        calls_per_rollout_p50=histogram_quantile(0.5, rollout_buckets),
        calls_per_rollout_p95=histogram_quantile(0.95, rollout_buckets),
        score_mean=_sum(cur, "rft_grade_score_sum") / scores_n if scores_n else None,
        score_buckets=score_buckets,
        events=events,
    )


