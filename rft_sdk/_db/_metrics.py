"""Figures of a rollout-database backend, exported on the server's ``/metrics``.

Registered on the ``ToolServer``'s own Prometheus registry (``Metrics.registry``)
when the database is attached:

* ``rft_db_clone_seconds{backend, source}``: time to get a new rollout its
  database; ``source`` is ``pool`` (a warm clone claimed) or ``cold``.
* ``rft_db_open_seconds{backend}``: per-call overhead of opening the rollout's
  database (clone included on a first call): connect, ``BEGIN``, replay check.
* ``rft_db_events_total{backend, event}``: ``created_pool``, ``created_cold``,
  ``dropped_graded``, ``dropped_expired``, ``refused_limit``,
  ``replayed_from_database``, ``commit_failed``, ``unavailable`` (the database did not answer: 503).
* ``rft_db_live{backend}``, ``rft_db_pool_ready{backend}``: per-rollout
  databases alive and warm clones ready, as last counted by this process
  (every sweep interval, and at each admission).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterator, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

__all__ = ["DatabaseMetrics"]

_BUCKETS = (.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1.0, 2.5, 5.0, 10.0)


class DatabaseMetrics:
    """Counters and histograms of one backend in one process (thread-safe)."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.events: defaultdict[str, int] = defaultdict(int)
        self.counts: dict[str, int] = {"live": 0, "pool": 0}
        self._lock = threading.Lock()
        self.registry = CollectorRegistry(auto_describe=True)
        self._histograms(self.registry)

    def _histograms(self, registry: CollectorRegistry) -> None:
        self._clone = Histogram("rft_db_clone_seconds", "Time to give a new rollout its database (source: pool "
                                "or cold clone), seconds", ["backend", "source"], registry=registry,
                                buckets=_BUCKETS)
        self._open = Histogram("rft_db_open_seconds", "Per-call time to open the rollout's database (connect, "
                               "BEGIN, replay check; the clone on a first call), seconds", ["backend"],
                               registry=registry, buckets=_BUCKETS)
        self.open_latency = self._open.labels(self.backend)
        registry.register(_Collector(self))

    def register(self, registry: CollectorRegistry) -> None:
        """Move the figures onto ``registry`` (the server's); what was counted so far is kept."""
        if registry is self.registry:
            return
        self.registry = registry
        self._histograms(registry)

    @property
    def clone_latency(self) -> Any:
        """The ``rft_db_clone_seconds`` histogram (``.labels(source)``)."""
        return _Labelled(self._clone, self.backend)

    def event(self, name: str, by: int = 1) -> None:
        """Add ``by`` to event counter ``name``."""
        with self._lock:
            self.events[name] += by

    def set_counts(self, counts: Mapping[str, int]) -> None:
        """Remember the backend's last counts (``live``, ``pool``)."""
        with self._lock:
            self.counts = {"live": int(counts.get("live", 0)), "pool": int(counts.get("pool", 0))}


class _Labelled:
    def __init__(self, histogram: Histogram, backend: str) -> None:
        self.histogram, self.backend = histogram, backend

    def labels(self, source: str) -> Any:
        return self.histogram.labels(self.backend, source)


class _Collector:
    def __init__(self, metrics: DatabaseMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        m = self.metrics
        events = CounterMetricFamily("rft_db_events", "Rollout database events", labels=["backend", "event"])
        with m._lock:
            items, counts = sorted(m.events.items()), dict(m.counts)
        for name in ("created_pool", "created_cold", "dropped_graded", "dropped_expired", "refused_limit"):
            if name not in dict(items):
                items.append((name, 0))
        for name, value in sorted(items):
            events.add_metric([m.backend, name], value)
        yield events
        live = GaugeMetricFamily("rft_db_live", "Per-rollout databases alive (last count of this process)",
                                 labels=["backend"])
        live.add_metric([m.backend], counts["live"])
        yield live
        pool = GaugeMetricFamily("rft_db_pool_ready", "Warm clones ready to be claimed (last count)",
                                 labels=["backend"])
        pool.add_metric([m.backend], counts["pool"])
        yield pool
