"""Counters, Prometheus histograms and tracing hooks of one server process.

Exposed as ``ToolServer.metrics`` (JSON) and ``GET /metrics`` (Prometheus text
by default; JSON with ``?format=json`` or ``Accept: application/json``).
Metric names and the trace layout: docs/observability.md.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder

from ._tracing import Tracing, set_error, tracing_from_env

if TYPE_CHECKING:  # annotations only: the handlers hand their outcome over, nothing is imported back
    from ._calls import CallOutcome
    from ._grade_call import GradeOutcome

__all__ = ["KNOWN_EVENTS", "Metrics"]

#: Counter names the pipeline increments; exported as ``rft_events_total{event=...}`` (0 until first seen).
#: Each counts one thing: ``grader_errors`` only graders that raised or returned an invalid score (HTTP 500),
#: ``grade_conflicts`` grading requests refused 409 ``already_graded``, ``late_calls`` tool calls refused 409
#: after a grade, ``tool_timeouts`` calls past ``timeout_s`` (400), ``tool_queue_timeouts`` calls that found
#: no slot within ``queue_timeout_s`` (503), ``rollouts_evicted`` calls or grades of a rollout evicted in
#: progress (503), ``internal_errors`` unhandled exceptions (500), ``server_busy`` requests refused by
#: admission (503 with Retry-After, ``rft_sdk._server._admission``).
KNOWN_EVENTS = ("auth_failures", "bad_requests", "body_timeouts", "body_too_large", "call_id_conflicts",
                "client_disconnects", "grade_conflicts", "grader_errors", "grades", "grades_replayed",
                "internal_errors", "invalid_arguments", "late_calls", "method_not_allowed", "not_found",
                "replayed_calls", "rollouts_evicted", "server_busy", "store_errors", "tool_calls", "tool_errors",
                "tool_queue_timeouts", "tool_retryable_errors", "tool_timeouts", "unknown_grader", "unknown_tool")
_LATENCY_BUCKETS = (.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1.0, 2.5, 5.0, 10.0, 30.0)
_BYTES_BUCKETS = (16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576)
_CALLS_BUCKETS = (0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50, 100)
_SCORE_BUCKETS = tuple(round(0.1 * i, 1) for i in range(11))


def _text_bytes(value: Any) -> int:
    """UTF-8 size of a string, or of the compact JSON of anything else (``None`` is 0)."""
    if value is None:
        return 0
    if not isinstance(value, str):
        value = json.dumps(value, separators=(",", ":"))
    return len(value.encode("utf-8"))


def _start_ns(elapsed_s: float) -> int:
    """Unix nanoseconds ``elapsed_s`` seconds ago (a span's start, from a monotonic duration)."""
    return time.time_ns() - int(elapsed_s * 1e9)


class _EventsCollector:
    """Exports the JSON counters and the store's stats at scrape time."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self.store_stats: Mapping[str, int] = {}

    def collect(self) -> Iterator[Metric]:
        events = CounterMetricFamily("rft_events", "Pipeline events by name (the JSON view's counters)",
                                     labels=["event"])
        for name in sorted(set(KNOWN_EVENTS) | set(self.metrics.counters)):
            events.add_metric([name], self.metrics.counters.get(name, 0))
        yield events
        stats = dict(self.store_stats)
        if "rollouts" in stats:
            yield GaugeMetricFamily("rft_rollouts_in_flight", "Rollouts with state in the store (not yet "
                                    "graded and released, expired or evicted)", value=stats.pop("rollouts"))
        store = CounterMetricFamily("rft_store_events", "Store counters (evicted, expired, released)",
                                    labels=["event"])
        for name, value in sorted(stats.items()):
            store.add_metric([name], value)
        yield store


class Metrics:
    """Counters, histograms and trace spans of one server process (not shared between workers).

    Args:
        tracing: span factory; ``True`` (default): this process's
            :func:`rft_sdk._server._tracing.tracing_from_env` (off when the ``OTEL_*``
            variables ask for no traces); ``None`` or ``False``: no spans.

    ``snapshot()`` shape (the JSON view)::

        {"counters": {"tool_calls": int, "tool_errors": int, "tool_retryable_errors": int,
                      "invalid_arguments": int, "replayed_calls": int, "grades": int,
                      "grader_errors": int, "grades_replayed": int, "auth_failures": int,
                      "bad_requests": int, "body_too_large": int, ...},
         "tools": {name: {"calls": int, "errors": int, "latency_s_sum": float}},
         "store": {...store counters...}}

    ``registry`` is this server's own ``prometheus_client.CollectorRegistry``
    (never the global one), rendered by :meth:`exposition`.
    """

    def __init__(self, tracing: Tracing | None | bool = True) -> None:
        self.counters: defaultdict[str, int] = defaultdict(int)
        self.tools: defaultdict[str, dict[str, float]] = defaultdict(
            lambda: {"calls": 0, "errors": 0, "latency_s_sum": 0.0}
        )
        self.tracing: Tracing | None = tracing_from_env() if tracing is True else (tracing or None)
        self.registry = CollectorRegistry(auto_describe=True)
        self._events = _EventsCollector(self)
        self.registry.register(self._events)
        r = self.registry
        self.tool_latency = Histogram("rft_tool_latency_seconds", "Tool execution time (validation + function), "
                                      "seconds", ["tool"], registry=r, buckets=_LATENCY_BUCKETS)
        self.tool_outcomes = Counter("rft_tool_calls", "Executed tool calls by outcome (ok: HTTP 200; error: "
                                     "a model-visible 4xx)", ["tool", "outcome"], registry=r)
        self.args_bytes = Histogram("rft_tool_arguments_bytes", "Size of the call's arguments, UTF-8 bytes",
                                    ["tool"], registry=r, buckets=_BYTES_BUCKETS)
        self.output_bytes = Histogram("rft_tool_output_bytes", "Size of the output returned to the model, "
                                      "UTF-8 bytes", ["tool"], registry=r, buckets=_BYTES_BUCKETS)
        self.rollout_calls = Histogram("rft_rollout_tool_calls", "Tool calls in a rollout's trajectory, "
                                       "observed when it is graded", ["grader"], registry=r, buckets=_CALLS_BUCKETS)
        self.grade_latency = Histogram("rft_grade_latency_seconds", "Grading request time of successful, "
                                       "non-replayed grades, seconds", ["grader"], registry=r,
                                       buckets=_LATENCY_BUCKETS)
        self._tool_children: dict[str, tuple[Any, Any, Any, Any, Any]] = {}
        self.grade_score = Histogram("rft_grade_score", "Scores of successful, non-replayed grades",
                                     ["grader"], registry=r, buckets=_SCORE_BUCKETS)

    def tool_children(self, tool: str) -> tuple[Any, Any, Any, Any, Any]:
        """Labelled metrics of ``tool`` (latency, ok, error, arguments bytes, output bytes), cached:
        ``labels()`` takes a lock and a dict lookup that the per-call path need not repeat."""
        children = self._tool_children.get(tool)
        if children is None:
            children = (self.tool_latency.labels(tool), self.tool_outcomes.labels(tool, "ok"),
                        self.tool_outcomes.labels(tool, "error"), self.args_bytes.labels(tool),
                        self.output_bytes.labels(tool))
            self._tool_children[tool] = children
        return children

    # -- counters (called by the pipeline) -----------------------------------------------
    def incr(self, name: str, by: int = 1) -> None:
        """Add ``by`` to counter ``name``."""
        self.counters[name] += by

    def record_events(self, names: Sequence[str]) -> None:
        """Add one to each counter in ``names``."""
        for name in names:
            self.counters[name] += 1

    def tool_call(self, name: str, *, error: bool, latency_s: float, output_bytes: int = 0) -> None:
        """Record one executed call of tool ``name`` (latency in seconds, UTF-8 bytes of its output)."""
        stats = self.tools[name]
        stats["calls"] += 1
        stats["errors"] += int(error)
        stats["latency_s_sum"] += latency_s
        children = self.tool_children(name)
        children[0].observe(latency_s)
        children[2 if error else 1].inc()

    # -- per-request recording: one call at the end of each request (the request path's metrics stage) ----
    def record_call(self, tool: str, body: Mapping[str, Any], started: float, outcome: CallOutcome | None,
                    failure: BaseException | None = None) -> None:
        """Record one tool call of tool ``tool`` whose decoded request ``body`` started at ``started``
        (``time.perf_counter()`` seconds): its ``outcome`` (counters, the executed tool's latency and output size, the
        answer's status and bytes), or the ``failure`` it raised (answered by the edge's error handler,
        which counts its ``EndpointError.counter``). Emits the span ``execute_tool {tool}`` when tracing is
        on (docs/observability.md)."""
        if outcome is not None:
            self.record_events(outcome.events)
            if outcome.tool_s is not None:  # the tool was executed (not replayed, not refused before)
                self.tool_call(tool, error=outcome.status != 200, latency_s=outcome.tool_s,
                               output_bytes=outcome.output_bytes)
                if failure is None:  # answered: the sizes of what went in and out
                    children = self.tool_children(tool)
                    children[3].observe(_text_bytes(body.get("arguments")))
                    children[4].observe(outcome.output_bytes)
        if self.tracing is None:
            return
        total_s = time.perf_counter() - started
        trace_id, call_id = body.get("trace_id"), body.get("call_id")
        span = self.tracing.start_span(f"execute_tool {tool}", trace_id if isinstance(trace_id, str) else None, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": call_id if isinstance(call_id, str) else "",
            "rft.trace_id": trace_id if isinstance(trace_id, str) else ""}, _start_ns(total_s))
        if failure is not None or outcome is None:  # e.g. StoreError: answered 503 by the server
            if failure is not None:
                span.record_exception(failure)
                set_error(span, type(failure).__qualname__)
            span.end()
            return
        out_bytes = outcome.output_bytes if outcome.tool_s is not None else 0
        attributes: dict[str, Any] = {"http.response.status_code": outcome.status,
                                      "rft.tool.arguments_bytes": _text_bytes(body.get("arguments")),
                                      "rft.tool.output_bytes": out_bytes}
        if outcome.replayed:
            attributes["rft.replayed"] = True
        if outcome.tool_s is not None:
            attributes["rft.tool.duration_s"] = outcome.tool_s
            attributes["rft.store.duration_s"] = max(total_s - outcome.tool_s, 0.0)
        span.set_attributes(attributes)  # one call: each set_attribute takes the span's lock
        if outcome.status != 200:  # errors are rare: decode the body only then, for its error code
            error = json.loads(outcome.body).get("error")
            code = error.get("code") if isinstance(error, dict) else None
            set_error(span, str(code or outcome.status))
        span.end()

    def record_grade(self, grader: str, body: Mapping[str, Any], started: float, outcome: GradeOutcome | None,
                     failure: BaseException | None = None) -> None:
        """Record one grading request for grader ``grader`` (decoded request ``body``, started at
        ``started``, ``time.perf_counter()`` seconds): its ``outcome`` (counters; for a graded rollout its score, tool-call
        count and latency), or the ``failure`` it raised. Emits the span ``grade {grader}`` and, for a
        successful non-replayed grade of a traced rollout, the rollout's root span."""
        graded = outcome.graded if outcome is not None else None
        if outcome is not None:
            self.record_events(outcome.events)
        latency_s = time.perf_counter() - started
        if graded is not None:
            self.grade_score.labels(grader).observe(graded[2])
            self.rollout_calls.labels(grader).observe(graded[0])
            self.grade_latency.labels(grader).observe(latency_s)
        if self.tracing is None:
            return
        trace_id = body.get("trace_id")
        span = self.tracing.start_span(f"grade {grader}", trace_id if isinstance(trace_id, str) else None, {
            "rft.grader.name": grader, "rft.trace_id": trace_id if isinstance(trace_id, str) else ""},
            _start_ns(latency_s))
        if outcome is None:
            if failure is not None:
                span.record_exception(failure)
                set_error(span, type(failure).__qualname__)
            span.end()
            return
        span.set_attribute("http.response.status_code", 200)
        if outcome.replayed:
            span.set_attribute("rft.replayed", True)
        span.set_attribute("rft.grade.score", float(outcome.score))
        for key, value in ((outcome.details or {}).get("subscores") or {}).items():
            if isinstance(value, (int, float)):
                span.set_attribute(f"rft.grade.subscore.{key}", float(value))
        if graded is not None:
            span.set_attribute("rft.rollout.tool_calls", graded[0])
        span.end()
        if graded is not None and isinstance(trace_id, str):
            calls, first_start, score = graded
            end_ns = time.time_ns()
            start_s = first_start if first_start is not None else end_ns / 1e9 - latency_s
            self.tracing.emit_rollout(trace_id, start_s, end_ns, {
                "rft.trace_id": trace_id, "rft.grader.name": grader, "rft.grade.score": score,
                "rft.rollout.tool_calls": calls})

    # -- views ---------------------------------------------------------------------------
    def snapshot(self, store_stats: dict[str, int] | None = None) -> dict[str, Any]:
        """A JSON-serialisable copy of all counters."""
        return {
            "counters": dict(self.counters),
            "tools": {k: dict(v) for k, v in self.tools.items()},
            "store": dict(store_stats or {}),
        }

    def exposition(self, accept: str | None, fmt: str | None,
                   store_stats: dict[str, int] | None = None) -> tuple[bytes, str]:
        """``(body, content_type)`` for ``GET /metrics``.

        JSON (:meth:`snapshot`) when ``fmt == "json"`` or ``accept`` names
        ``application/json``; else the Prometheus text (or OpenMetrics, as the
        ``Accept`` header asks) format of :attr:`registry`.
        """
        if fmt == "json" or (accept and "application/json" in accept):
            return json.dumps(self.snapshot(store_stats)).encode(), "application/json"
        self._events.store_stats = store_stats or {}
        encoder, content_type = choose_encoder(accept or "")
        return encoder(self.registry), content_type
