"""Helpers for tests and local runs: an in-process client, and servers on a real socket.

- ``TestClient(server)`` calls a ``ToolServer``'s tools and graders in process
  (Starlette's test client underneath): ``client.call(tool, trace_id=..., **args)``,
  ``client.grade(...)``, ``client.trajectory(trace_id)``, ``client.db_diff(trace_id)``
  (``docs/first-task.md``).
- ``run_server(app)`` starts a real uvicorn server on 127.0.0.1 in a background
  thread of this process, waits until it accepts connections, yields its base
  URL and shuts it down on exit.
- ``postgres_server()`` initdb's and starts a throwaway PostgreSQL on a free
  port of 127.0.0.1, yields its URL and deletes it on exit (``rft_sdk.PostgresDatabase`` tests).
- ``RedisServer(directory)`` / ``redis_server()`` run a throwaway ``redis-server``
  on 127.0.0.1 (killable and restartable over the same data; the context
  manager uses a temporary directory and an append-only file).
- ``serve_process("module:attr")`` runs ``rft serve`` as a child process (its
  own interpreter and event loop, several workers possible), waits for
  ``/healthz``, yields its base URL and terminates it on exit.

Integration tests, the emulator's checks, the main job and the benchmarks use
them so they talk real HTTP to real endpoints.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from tenacity import Retrying, retry_if_exception_type, stop_after_delay, wait_fixed

from ._db import postgres_server
from ._test_client import Call, GoldRun, TestClient
from .exceptions import RFTError

__all__ = ["Call", "GoldRun", "RedisServer", "TestClient", "free_port", "postgres_server", "redis_server",
           "run_server", "serve_process"]


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


class _NotReady(Exception):
    """The child server does not answer its health check yet."""


@contextlib.contextmanager
def serve_process(
    app: str,
    *args: str,
    host: str = "127.0.0.1",
    port: int | None = None,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    startup_timeout: float = 30.0,
    health_path: str = "/healthz",
) -> Iterator[str]:
    """Run ``python -m rft_sdk serve APP`` as a child process; yield ``"http://host:port"``.

    Args:
        app: ``"module:attr"`` of a ``ToolServer`` (importable from ``cwd``).
        *args: extra ``rft serve`` options, e.g. ``"--workers", "2"``.
        host: interface to bind; keep the default loopback address in tests.
        port: TCP port; ``None`` picks a free one.
        cwd: working directory of the child (on its ``sys.path``); default: this one.
        env: extra environment variables for the child (added to this process's).
        startup_timeout: seconds to wait until ``GET health_path`` answers 200.
        health_path: the readiness probe (``ToolServer`` serves ``/healthz``).

    The child is terminated on exit (killed after 10 s if it does not stop).

    Raises:
        RuntimeError: the child exited, or was not healthy within ``startup_timeout``.
    """
    port = port or free_port(host)
    cmd = [sys.executable, "-m", "rft_sdk", "serve", app, "--host", host, "--port", str(port),
           "--log-level", "warning", *args]
    proc = subprocess.Popen(cmd, cwd=cwd, env={**os.environ, **(env or {})})
    base_url = f"http://{host}:{port}"

    def probe() -> None:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with status {proc.returncode}: {' '.join(cmd)}")
        try:
            if httpx.get(base_url + health_path, timeout=1.0).status_code != 200:
                raise _NotReady
        except httpx.TransportError as exc:
            raise _NotReady from exc

    try:
        try:
            for attempt in Retrying(stop=stop_after_delay(startup_timeout), wait=wait_fixed(0.1),
                                    retry=retry_if_exception_type(_NotReady), reraise=True):
                with attempt:
                    probe()
        except _NotReady:
            raise RuntimeError(f"server not healthy within {startup_timeout}s: {' '.join(cmd)}") from None
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


#: ``appendfsync`` policies redis-server accepts (redis.conf).
APPENDFSYNC = ("always", "everysec", "no")


class RedisServer:
    """One ``redis-server`` over ``directory`` on ``127.0.0.1:port``.

    Args:
        directory: where Redis writes its append-only file (kept across restarts).
        port: TCP port; ``None`` picks a free one (kept across restarts).
        appendonly: run with an append-only file (``--appendonly yes``); ``False`` runs with no
            persistence at all (``--save ""`` either way: no RDB snapshots).
        appendfsync: ``"always"`` (the production templates' setting), ``"everysec"`` or ``"no"``.
        extra: more ``redis-server`` command-line arguments, e.g. ``("--requirepass", "s3cret")``.
        startup_timeout: seconds :meth:`start` waits for a ``PING`` to answer.

    Use as a context manager (started on enter if it is not running, stopped on exit) or call
    :meth:`start`, :meth:`kill` and :meth:`stop` yourself.

    Raises:
        RFTError: ``redis-server`` is not on ``PATH`` (at construction), or did not answer within
            ``startup_timeout`` (from :meth:`start`).
        ValueError: ``appendfsync`` is not one of :data:`APPENDFSYNC`.
    """

    def __init__(self, directory: str | Path, *, port: int | None = None, appendonly: bool = True,
                 appendfsync: str = "everysec", extra: tuple[str, ...] = (), startup_timeout: float = 10.0) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RFTError("redis-server is not installed (apt-get install redis-server, or brew install redis)")
        if appendfsync not in APPENDFSYNC:
            raise ValueError(f"appendfsync={appendfsync!r}: expected one of {APPENDFSYNC}")
        self.directory = Path(directory)
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.startup_timeout = startup_timeout
        persistence = ["--appendonly", "yes", "--appendfsync", appendfsync] if appendonly else ["--appendonly", "no"]
        self.command = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                        "--dir", str(self.directory), *persistence, *extra]
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def running(self) -> bool:
        """Whether the process is alive."""
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> str:
        """Start the process and wait until it answers ``PING`` (loading its data included); return :attr:`url`."""
        import redis

        proc = self.proc = subprocess.Popen(self.command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def probe() -> None:
            if proc.poll() is not None:
                raise RFTError(f"redis-server exited with status {proc.returncode}: {' '.join(self.command)}")
            try:
                redis.Redis.from_url(self.url).ping()
            except (redis.ConnectionError, redis.BusyLoadingError) as exc:
                raise _NotReady(str(exc)) from exc

        try:
            for attempt in Retrying(stop=stop_after_delay(self.startup_timeout), wait=wait_fixed(0.02),
                                    retry=retry_if_exception_type(_NotReady), reraise=True):
                with attempt:
                    probe()
        except _NotReady:
            self.stop()
            raise RFTError(f"redis-server did not answer on port {self.port} within {self.startup_timeout} s: "
                           f"{' '.join(self.command)}") from None
        return self.url

    def kill(self) -> None:
        """SIGKILL the process (no shutdown save: the harshest restart) and reap it."""
        proc = self.proc
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM the process (Redis saves on shutdown) and reap it; SIGKILL after 10 s."""
        proc = self.proc
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self) -> RedisServer:
        if not self.running:
            self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


@contextlib.contextmanager
def redis_server(*, appendonly: bool = True, appendfsync: str = "everysec",
                 extra: tuple[str, ...] = ()) -> Iterator[RedisServer]:
    """A started :class:`RedisServer` over a temporary directory (removed on exit) on a free port.

    Raises:
        RFTError: as :class:`RedisServer`.
    """
    with tempfile.TemporaryDirectory(prefix="rft-redis-") as directory, \
            RedisServer(directory, appendonly=appendonly, appendfsync=appendfsync, extra=extra) as server:
        yield server
