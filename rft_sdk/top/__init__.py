"""``rft top``: a live terminal view of a tool server's ``GET /metrics`` (Prometheus text).

``scrape`` / ``build_frame`` turn two scrapes into the numbers shown (core
dependencies only); ``render_frame`` draws them with rich (``rft-sdk[observe]``).
"""

from __future__ import annotations

from ._frame import Frame, ToolRow, build_frame, histogram_quantile, parse_metrics

__all__ = ["Frame", "ToolRow", "build_frame", "histogram_quantile", "parse_metrics"]
