"""Counters, Prometheus histograms and tracing hooks of one server process.

Exposed as ``ToolServer.metrics`` (JSON) and ``GET /metrics`` (Prometheus text
by default; JSON with ``?format=json`` or ``Accept: application/json``).
Metric names and the trace layout: docs/observability.md.
"""

from __future__ import annotations

import contextvars
import json
import time
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder

from ._tracing import Tracing, set_error, tracing_from_env

__all__ = ["KNOWN_EVENTS", "Metrics"]

#: Counter names the pipeline increments; exported as ``rft_events_total{event=...}`` (0 until first seen).
#: Each counts one thing: ``grader_errors`` only graders that raised or returned an invalid score (HTTP 500),
#: ``grade_conflicts`` grading requests refused 409 ``already_graded``, ``late_calls`` tool calls refused 409
#: after a grade, ``tool_timeouts`` calls past ``timeout_s`` (400), ``tool_queue_timeouts`` calls that found
#: no slot within ``queue_timeout_s`` (503), ``rollouts_evicted`` calls or grades of a rollout evicted in
#: progress (503), ``internal_errors`` unhandled exceptions (500).
KNOWN_EVENTS = ("auth_failures", "bad_requests", "body_timeouts", "body_too_large", "call_id_conflicts",
                "client_disconnects", "grade_conflicts", "grader_errors", "grades", "grades_replayed",
                "internal_errors", "invalid_arguments", "late_calls", "method_not_allowed", "not_found",
                "replayed_calls", "rollouts_evicted", "store_errors", "tool_calls", "tool_errors",
                "tool_queue_timeouts", "tool_retryable_errors", "tool_timeouts", "unknown_grader", "unknown_tool")
_LATENCY_BUCKETS = (.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1.0, 2.5, 5.0, 10.0, 30.0)
_BYTES_BUCKETS = (16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576)
_CALLS_BUCKETS = (0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50, 100)
_SCORE_BUCKETS = tuple(round(0.1 * i, 1) for i in range(11))
_O = TypeVar("_O", bound="_Observation")
_current: contextvars.ContextVar[_Observation | None] = contextvars.ContextVar("rft_observation", default=None)


def _text_bytes(value: Any) -> int:
    """UTF-8 size of a string, or of the compact JSON of anything else (``None`` is 0)."""
    if value is None:
        return 0
    if not isinstance(value, str):
        value = json.dumps(value, separators=(",", ":"))
    return len(value.encode("utf-8"))


class _Observation:
    """One request being observed: a tool call or a grade (the span, when tracing is on)."""

    __slots__ = ("body", "metrics", "name", "output_bytes", "replayed", "span", "t0", "token", "tool_s", "graded")

    def __init__(self, metrics: Metrics, name: str, body: Mapping[str, Any]) -> None:
        self.metrics, self.name, self.body = metrics, name, body
        self.replayed = False
        self.span: Any = None
        self.tool_s: float | None = None
        self.output_bytes = 0
        self.graded: tuple[int, float | None, float] | None = None  # (calls, first call start unix s, score)
        self.t0 = 0.0
        self.token: contextvars.Token[_Observation | None] | None = None

    def __enter__(self: _O) -> _O:
        self.t0 = time.perf_counter()
        self.token = _current.set(self)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.token is not None:
            _current.reset(self.token)
        if exc is not None and self.span is not None:  # e.g. StoreError: answered 503 by the server
            self.span.record_exception(exc)
            set_error(self.span, type(exc).__qualname__)
            self.span.end()
            self.span = None


class ToolCallObservation(_Observation):
    """Yielded by :meth:`Metrics.observe_call`; call :meth:`result` with the answer."""

    __slots__ = ()

    def result(self, status: int, body: bytes) -> None:
        """Record the answer ``(status, encoded JSON body)`` of the call: sizes, span attributes, span end.

        Output bytes are the UTF-8 size of the tool's ``output`` string, reported by
        :meth:`Metrics.tool_call` (0 when the tool gave no output)."""
        m = self.metrics
        args_bytes, out_bytes = _text_bytes(self.body.get("arguments")), self.output_bytes
        if self.tool_s is not None:  # the tool was executed (not replayed, not rejected before)
            children = m.tool_children(self.name)
            children[3].observe(args_bytes)
            children[4].observe(out_bytes)
        span, self.span = self.span, None
        if span is None:
            return
        total_s = time.perf_counter() - self.t0
        attributes: dict[str, Any] = {"http.response.status_code": status, "rft.tool.arguments_bytes": args_bytes,
                                      "rft.tool.output_bytes": out_bytes}
        if self.replayed:
            attributes["rft.replayed"] = True
        if self.tool_s is not None:
            attributes["rft.tool.duration_s"] = self.tool_s
            attributes["rft.store.duration_s"] = max(total_s - self.tool_s, 0.0)
        span.set_attributes(attributes)  # one call: each set_attribute takes the span's lock
        if status != 200:  # errors are rare: decode the body only then, for its error code
            error = json.loads(body).get("error")
            code = error.get("code") if isinstance(error, dict) else None
            set_error(span, str(code or status))
        span.end()


class GradeObservation(_Observation):
    """Yielded by :meth:`Metrics.observe_grade`; call :meth:`result` with the answer."""

    __slots__ = ()

    def result(self, status: int, score: float, details: Mapping[str, Any] | None) -> None:
        """Record a successful answer ``(status, score, details)``: grade latency, spans (grade and rollout root).

        A grading request that fails raises out of the ``with`` block instead; the
        span then records the exception (``__exit__``)."""
        payload = {"score": score}
        m = self.metrics
        latency_s = time.perf_counter() - self.t0
        if self.graded is not None:
            m.grade_latency.labels(self.name).observe(latency_s)
        span, self.span = self.span, None
        if span is None:
            return
        span.set_attribute("http.response.status_code", status)
        if self.replayed:
            span.set_attribute("rft.replayed", True)
        if isinstance(payload.get("score"), (int, float)):
            span.set_attribute("rft.grade.score", float(payload["score"]))
        for key, value in ((details or {}).get("subscores") or {}).items():
            if isinstance(value, (int, float)):
                span.set_attribute(f"rft.grade.subscore.{key}", float(value))
        if status != 200:
            error = payload.get("error")
            code = error.get("code") if isinstance(error, dict) else None
            set_error(span, str(code or status))
        trace_id = self.body.get("trace_id")
        if self.graded is not None:
            span.set_attribute("rft.rollout.tool_calls", self.graded[0])
        span.end()
        if self.graded is not None and isinstance(trace_id, str) and m.tracing is not None:
            calls, first_start, score = self.graded
            end_ns = time.time_ns()
            start_s = first_start if first_start is not None else end_ns / 1e9 - latency_s
            m.tracing.emit_rollout(trace_id, start_s, end_ns, {
                "rft.trace_id": trace_id, "rft.grader.name": self.name, "rft.grade.score": score,
                "rft.rollout.tool_calls": calls})


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
        if name in ("replayed_calls", "grades_replayed") and (obs := _current.get()) is not None:
            obs.replayed = True

    def tool_call(self, name: str, *, error: bool, latency_s: float, output_bytes: int = 0) -> None:
        """Record one executed call of tool ``name`` (latency in seconds, UTF-8 bytes of its output)."""
        stats = self.tools[name]
        stats["calls"] += 1
        stats["errors"] += int(error)
        stats["latency_s_sum"] += latency_s
        children = self.tool_children(name)
        children[0].observe(latency_s)
        children[2 if error else 1].inc()
        if (obs := _current.get()) is not None:
            obs.tool_s = latency_s
            obs.output_bytes = output_bytes

    def graded(self, grader: str, *, score: float, trajectory: Sequence[Any]) -> None:
        """Record one successful, non-replayed grade: its score and the rollout's tool-call count.

        ``trajectory`` is the rollout's ``ToolCallRecord`` sequence (its first
        ``started_at`` starts the rollout's root span).
        """
        self.grade_score.labels(grader).observe(score)
        self.rollout_calls.labels(grader).observe(len(trajectory))
        if (obs := _current.get()) is not None:
            first = getattr(trajectory[0], "started_at", None) if trajectory else None
            obs.graded = (len(trajectory), first, score)

    # -- per-request observation (called around the pipeline) ----------------------------
    def observe_call(self, tool: str, body: Mapping[str, Any]) -> ToolCallObservation:
        """Context manager around one tool call; call ``.result(status, body_bytes)`` inside it.

        Starts the span ``execute_tool {tool}`` when tracing is on.
        """
        obs = ToolCallObservation(self, tool, body)
        if self.tracing is not None:
            trace_id, call_id = body.get("trace_id"), body.get("call_id")
            obs.span = self.tracing.start_span(f"execute_tool {tool}", trace_id if isinstance(trace_id, str) else None, {
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
                "gen_ai.tool.call.id": call_id if isinstance(call_id, str) else "",
                "rft.trace_id": trace_id if isinstance(trace_id, str) else ""})
        return obs

    def observe_grade(self, grader: str, body: Mapping[str, Any]) -> GradeObservation:
        """Context manager around one grading request; call ``.result(200, score, details)`` inside it.

        Starts the span ``grade {grader}`` when tracing is on; a successful,
        non-replayed grade also emits the rollout's root span.
        """
        obs = GradeObservation(self, grader, body)
        if self.tracing is not None:
            trace_id = body.get("trace_id")
            obs.span = self.tracing.start_span(f"grade {grader}", trace_id if isinstance(trace_id, str) else None, {
                "rft.grader.name": grader, "rft.trace_id": trace_id if isinstance(trace_id, str) else ""})
        return obs

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
