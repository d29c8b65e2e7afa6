"""In-process counters exposed as ``ToolServer.metrics`` and ``GET /metrics``."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

__all__ = ["Metrics"]


class Metrics:
    """Counters of one server process (not shared between workers).

    ``snapshot()`` shape::

        {"counters": {"tool_calls": int, "tool_errors": int, "tool_retryable_errors": int,
                      "invalid_arguments": int, "replayed_calls": int, "grades": int,
                      "grader_errors": int, "grades_replayed": int, "auth_failures": int,
                      "bad_requests": int, "body_too_large": int, ...},
         "tools": {name: {"calls": int, "errors": int, "latency_s_sum": float}},
         "store": {...store counters...}}
    """

    def __init__(self) -> None:
        self.counters: defaultdict[str, int] = defaultdict(int)
        self.tools: defaultdict[str, dict[str, float]] = defaultdict(
            lambda: {"calls": 0, "errors": 0, "latency_s_sum": 0.0}
        )

    def incr(self, name: str, by: int = 1) -> None:
        """Add ``by`` to counter ``name``."""
        self.counters[name] += by

    def tool_call(self, name: str, *, error: bool, latency_s: float) -> None:
        """Record one executed call of tool ``name`` (latency in seconds)."""
        stats = self.tools[name]
        stats["calls"] += 1
        stats["errors"] += int(error)
        stats["latency_s_sum"] += latency_s

    def snapshot(self, store_stats: dict[str, int] | None = None) -> dict[str, Any]:
        """A JSON-serialisable copy of all counters."""
        return {
            "counters": dict(self.counters),
            "tools": {k: dict(v) for k, v in self.tools.items()},
            "store": dict(store_stats or {}),
        }
