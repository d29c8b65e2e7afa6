"""OpenTelemetry tracing: one trace per rollout, one span per tool call and per grade.

Configured only by the standard OpenTelemetry environment variables, read once
per process on the first ``ToolServer``; off, and without importing
``opentelemetry`` at all, when none of them asks for traces:

* on when ``OTEL_TRACES_EXPORTER`` is set to something other than ``none``, or
  when ``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``
  is set (then the exporter defaults to ``otlp``);
* off when ``OTEL_SDK_DISABLED=true``;
* exporters: ``otlp`` (OTLP/HTTP protobuf, the official
  ``opentelemetry-exporter-otlp-proto-http``, which itself reads the endpoint,
  headers, timeout and compression variables) and ``console``; the resource
  comes from ``OTEL_SERVICE_NAME`` / ``OTEL_RESOURCE_ATTRIBUTES``, batching from
  ``OTEL_BSP_*`` and sampling from ``OTEL_TRACES_SAMPLER(_ARG)``.

Trace layout (docs/observability.md). The hosted ``trace_id`` string is
mapped to the OpenTelemetry ids by SHA-256 of its UTF-8 bytes: trace id =
the first 16 bytes, root span id = the next 8 bytes (big-endian; a zero id
becomes 1). Every process (replicas, workers) derives the same ids, so the
spans of one rollout land in one trace without any shared state:

* ``execute_tool {name}`` (kind SERVER) per tool call and ``grade {grader}``
  (kind SERVER) per grading request, both children of the rollout span id;
* ``rollout`` (the root, with that derived span id), emitted once by the
  process that grades the rollout successfully, from the first recorded tool
  call's start to the end of the grade. A rollout that is never graded has no
  root span (trace viewers show its spans under a missing parent).
"""

from __future__ import annotations

import contextvars
import functools
import hashlib
import logging
import os
import threading
from typing import Any

__all__ = ["Tracing", "otel_ids", "set_error", "tracing_from_env"]

logger = logging.getLogger("rft_sdk")

INSTALL_HINT = 'pip install "rft-sdk[observe]"'
_ENABLING_VARS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
#: Per-context override of the next generated (trace id, span id): set only while the root span starts.
_FORCED_IDS: contextvars.ContextVar[tuple[int, int] | None] = contextvars.ContextVar("rft_forced_ids", default=None)


def otel_ids(trace_id: str) -> tuple[int, int]:
    """``(otel_trace_id, root_span_id)`` of a hosted ``trace_id``.

    Rule: ``d = sha256(trace_id.encode("utf-8")).digest()``; trace id =
    ``int.from_bytes(d[:16], "big")`` (128 bit), root span id =
    ``int.from_bytes(d[16:24], "big")`` (64 bit); an id that comes out 0
    (invalid in OpenTelemetry) is replaced by 1.
    """
    digest = hashlib.sha256(trace_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:16], "big") or 1, int.from_bytes(digest[16:24], "big") or 1


def _wanted_exporters(env: os._Environ[str] | dict[str, str]) -> list[str]:
    """Exporter names the environment asks for; empty = tracing off."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    names = [n.strip().lower() for n in env.get("OTEL_TRACES_EXPORTER", "").split(",") if n.strip()]
    if not names and any(env.get(v) for v in _ENABLING_VARS):
        names = ["otlp"]
    return [n for n in names if n != "none"]


class Tracing:
    """Starts the rollout, tool-call and grade spans on an SDK ``TracerProvider``.

    Args:
        tracer_provider: an ``opentelemetry.sdk.trace.TracerProvider`` built with
            :meth:`id_generator` (``tracing_from_env`` builds one from the
            environment; tests pass one with an in-memory exporter).
    """

    def __init__(self, tracer_provider: Any) -> None:
        from opentelemetry import trace
        from opentelemetry.context import Context
        from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, TraceFlags

        from .._version import __version__

        self.provider = tracer_provider
        self._tracer = tracer_provider.get_tracer("rft_sdk", __version__)
        self._trace, self._empty_context = trace, Context
        self._span_context, self._non_recording = SpanContext, NonRecordingSpan
        self._sampled = TraceFlags(TraceFlags.SAMPLED)
        self.SERVER, self.INTERNAL = SpanKind.SERVER, SpanKind.INTERNAL
        # the parent context of a rollout's spans is immutable: build it once per trace_id (bounded cache)
        self._parent = functools.lru_cache(maxsize=4096)(self._make_parent)

    @staticmethod
    def id_generator() -> Any:
        """An ``IdGenerator`` that is random except while the root span of a rollout starts."""
        from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

        class RolloutIdGenerator(RandomIdGenerator):
            """Random ids, but the derived ids (:func:`otel_ids`) for a rollout's root span."""

            def generate_span_id(self) -> int:
                forced = _FORCED_IDS.get()
                return forced[1] if forced else super().generate_span_id()

            def generate_trace_id(self) -> int:
                forced = _FORCED_IDS.get()
                return forced[0] if forced else super().generate_trace_id()

        return RolloutIdGenerator()

    def _make_parent(self, trace_id: str) -> Any:
        otel_trace, root_span = otel_ids(trace_id)
        ctx = self._span_context(otel_trace, root_span, is_remote=True, trace_flags=self._sampled)
        return self._trace.set_span_in_context(self._non_recording(ctx))

    def start_span(self, name: str, trace_id: str | None, attributes: dict[str, Any],
                   start_ns: int | None = None) -> Any:
        """Start (not activate) a SERVER span named ``name`` in the rollout's trace, at ``start_ns``
        (unix nanoseconds; ``None``: now).

        ``trace_id`` ``None`` (an invalid request) starts a span in a trace of its own.
        """
        context = self._parent(trace_id) if trace_id else None
        return self._tracer.start_span(name, context=context, kind=self.SERVER, attributes=attributes,
                                       start_time=start_ns)

    def emit_rollout(self, trace_id: str, start_s: float, end_ns: int, attributes: dict[str, Any]) -> None:
        """Emit the rollout's root span ``rollout`` with the derived ids (:func:`otel_ids`).

        ``start_s`` is unix seconds (the first tool call's ``started_at``), ``end_ns`` unix nanoseconds.
        """
        token = _FORCED_IDS.set(otel_ids(trace_id))
        try:
            span = self._tracer.start_span("rollout", context=self._empty_context(), kind=self.INTERNAL,
                                           attributes=attributes, start_time=int(start_s * 1e9))
        finally:
            _FORCED_IDS.reset(token)
        span.end(end_time=end_ns)


def set_error(span: Any, error_type: str) -> None:
    """Mark ``span`` (an OpenTelemetry span) failed: attribute ``error.type`` and status ERROR."""
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR))


_lock = threading.Lock()
_configured: list[Tracing | None] = []


def tracing_from_env() -> Tracing | None:
    """This process's :class:`Tracing`, built once from the ``OTEL_*`` variables; ``None`` when off.

    Off without importing ``opentelemetry`` when no variable asks for traces.
    When they do but the ``observe`` extra is missing, logs one warning naming
    the ``pip install`` line and stays off.
    """
    with _lock:
        if not _configured:
            _configured.append(_build(os.environ))
        return _configured[0]


def _build(env: os._Environ[str] | dict[str, str]) -> Tracing | None:
    names = _wanted_exporters(env)
    if not names:
        return None
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
    except ImportError as exc:
        logger.warning("OTEL_* environment variables ask for traces but %s; install it with: %s",
                       exc, INSTALL_HINT)
        return None
    provider = TracerProvider(resource=Resource.create(), id_generator=Tracing.id_generator())
    for name in names:
        if name == "otlp":
            protocol = env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
            if protocol and protocol != "http/protobuf":
                logger.warning("OTEL_EXPORTER_OTLP_PROTOCOL=%s is not supported; exporting OTLP over "
                               "http/protobuf", protocol)
            try:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            except ImportError as exc:
                logger.warning("OTEL_TRACES_EXPORTER=otlp but %s; install it with: %s", exc, INSTALL_HINT)
                continue
            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        elif name == "console":
            provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
        else:
            logger.warning("OTEL_TRACES_EXPORTER=%s is not supported (use otlp, console or none)", name)
    logger.info("rft_sdk tracing on: exporters %s", names)
    return Tracing(provider)
