"""Helpers for tests and local runs: serve an ASGI app on a real socket.

``run_server`` starts a real uvicorn server on 127.0.0.1 in a background
thread, waits until it accepts connections, yields its base URL and shuts it
down on exit. Integration tests, the emulator's checks and the benchmarks use
it so they talk real HTTP to real endpoints.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn

__all__ = ["free_port", "run_server"]


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port on ``host`` that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def run_server(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    startup_timeout: float = 10.0,
    **uvicorn_options: Any,
) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a daemon thread; yield ``"http://host:port"``.

    Args:
        app: any ASGI application (a ``ToolServer``, a Starlette app, ...).
        host: interface to bind; keep the default loopback address in tests.
        port: TCP port; ``None`` picks a free one.
        startup_timeout: seconds to wait for the server to accept connections.
        **uvicorn_options: passed to ``uvicorn.Config`` (e.g. ``log_level``).

    Raises:
        RuntimeError: the server did not start within ``startup_timeout``.
    """
    port = port or free_port(host)
    uvicorn_options.setdefault("log_level", "warning")
    config = uvicorn.Config(app, host=host, port=port, lifespan="auto", **uvicorn_options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"uvicorn did not start on {host}:{port} within {startup_timeout}s")
        time.sleep(0.01)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
