"""``rft top URL``: live view of a tool server's metrics while a hosted or emulated run is going.

Polls ``GET URL/metrics`` (Prometheus text, bearer token from ``--token-env``)
every ``--interval`` seconds and redraws: rollouts in flight, calls/s, error
rate and p50/p95/p99 latency per tool, calls per rollout and the score
distribution (docs/observability.md). ``--once`` prints one frame and exits.
Needs rich: ``pip install "rft-sdk[observe]"``. Exit status 0 on Ctrl-C or
after ``--once``; 2 when the server cannot be read (unreachable, 401, not
Prometheus text).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import httpx

from ._frame import Samples, build_frame, parse_metrics

__all__ = ["HELP", "add_arguments", "run"]

HELP = "live terminal view of a tool server's /metrics (rollouts, calls/s, errors, latency, scores)"
INSTALL_HINT = 'pip install "rft-sdk[observe]"'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``rft top``."""
    parser.add_argument("url", metavar="URL", help="base URL of the tool server, e.g. https://tools.example.com")
    parser.add_argument("--token-env", default=None, metavar="VAR",
                        help="send 'Authorization: Bearer $VAR' (the token stays out of shell history)")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between polls (default 2)")
    parser.add_argument("--once", action="store_true", help="print one frame (rates since start) and exit")


class ScrapeError(Exception):
    """``GET /metrics`` failed; the message says why."""


def scrape(client: httpx.Client, url: str) -> Samples:
    """One parsed scrape of ``url/metrics``. Raises :class:`ScrapeError` with a readable reason."""
    try:
        r = client.get(url.rstrip("/") + "/metrics", headers={"Accept": "text/plain"})
    except httpx.HTTPError as exc:
        raise ScrapeError(f"cannot reach {url}: {exc}") from exc
    if r.status_code == 401:
        raise ScrapeError(f"{url}/metrics answered 401: pass the token with --token-env VAR")
    if r.status_code != 200:
        raise ScrapeError(f"{url}/metrics answered HTTP {r.status_code}")
    try:
        return parse_metrics(r.text)
    except ValueError as exc:
        raise ScrapeError(f"{url}/metrics is not Prometheus text ({exc}); is it an rft-sdk >= 0.3 server?") from exc


def render(client: httpx.Client, url: str, prev: tuple[Samples, float] | None) -> tuple[Any, tuple[Samples, float]]:
    """Scrape once and return ``(renderable, (samples, monotonic time))`` for the next call."""
    from ._view import render_frame

    samples, now = scrape(client, url), time.monotonic()
    frame = build_frame(samples, prev[0] if prev else None, now - prev[1] if prev else None)
    return render_frame(frame, url), (samples, now)


def run(args: argparse.Namespace) -> int:
    """Run ``rft top``; returns the exit status."""
    try:
        from rich.console import Console
        from rich.live import Live
    except ImportError as exc:
        print(f"rft top: needs rich ({exc}); install it with: {INSTALL_HINT}", file=sys.stderr)
        return 2
    headers = {}
    if args.token_env:
        token = os.environ.get(args.token_env)
        if not token:
            print(f"rft top: environment variable {args.token_env!r} is unset or empty", file=sys.stderr)
            return 2
        headers["Authorization"] = f"Bearer {token}"
    if args.interval <= 0:
        print(f"rft top: --interval must be > 0, got {args.interval}", file=sys.stderr)
        return 2
    console = Console()
    with httpx.Client(headers=headers, timeout=10.0) as client:
        try:
            view, prev = render(client, args.url, None)
            if args.once:
                console.print(view)
                return 0
            with Live(view, console=console, auto_refresh=False, screen=False) as live:
                while True:
                    time.sleep(args.interval)
                    view, prev = render(client, args.url, prev)
                    live.update(view, refresh=True)
        except ScrapeError as exc:
            print(f"rft top: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            return 0
