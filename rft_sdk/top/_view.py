"""Draw one :class:`~rft_sdk.top.Frame` with rich (``rft-sdk[observe]``)."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ._frame import Frame

__all__ = ["render_frame"]


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value * 1000:.1f}"


def _num(value: float | None, spec: str = ".2f") -> str:
    return "–" if value is None else format(value, spec)


def render_frame(frame: Frame, url: str) -> Any:
    """A rich renderable: header line, per-tool table, rollouts table, score distribution, events."""
    window = (f"rates over the last {frame.window_s:.1f} s (percentiles and errors too, when calls came in it)"
              if frame.window_s else "since the server started")
    header = Text.assemble(("rft top ", "bold"), url, f"  ·  {window}\nrollouts in flight: ",
                           (str("–" if frame.rollouts_in_flight is None else frame.rollouts_in_flight), "bold cyan"))
    tools = Table(title="Tool calls", title_justify="left", expand=False)
    for col in ("tool", "calls", "calls/s", "errors %", "p50 ms", "p95 ms", "p99 ms"):
        tools.add_column(col, justify="left" if col == "tool" else "right")
    for row in frame.tools:
        rate = "–" if row.error_rate is None else f"{row.error_rate * 100:.1f}"
        tools.add_row(row.tool, str(row.calls), _num(row.calls_per_s, ".1f"), rate,
                      _ms(row.p50_s), _ms(row.p95_s), _ms(row.p99_s))
    if not frame.tools:
        tools.add_row("(no tool calls yet)", "", "", "", "", "", "")

    rollouts = Table(title="Graded rollouts", title_justify="left")
    rollouts.add_column("metric")
    rollouts.add_column("value", justify="right")
    rollouts.add_row("graded", str(frame.grades))
    rollouts.add_row("grades/s", _num(frame.grades_per_s, ".2f"))
    rollouts.add_row("tool calls per rollout: mean", _num(frame.calls_per_rollout_mean))
    rollouts.add_row("tool calls per rollout: p50 / p95",
                     f"{_num(frame.calls_per_rollout_p50, '.1f')} / {_num(frame.calls_per_rollout_p95, '.1f')}")
    rollouts.add_row("score: mean", _num(frame.score_mean, ".3f"))

    scores = Table(title="Score distribution", title_justify="left")
    scores.add_column("score ≤", justify="right")
    scores.add_column("rollouts", justify="right")
    scores.add_column("")
    peak = max((n for _, n in frame.score_buckets), default=0)
    for le, n in frame.score_buckets:
        if n or peak:
            scores.add_row("+Inf" if le == float("inf") else f"{le:g}", str(n), "█" * round(20 * n / peak) if peak else "")
    parts: list[Any] = [header, tools, rollouts]
    if peak:
        parts.append(scores)
    if frame.events:
        parts.append(Text("events: " + ", ".join(f"{k}={v}" for k, v in frame.events.items()), style="dim"))
    return Group(*parts)
