"""Helpers for tests and local runs: an in-process client, and servers on a real socket.

- ``TestClient(server)`` calls a ``ToolServer``'s tools and graders in process
  (Starlette's test client underneath): ``client.call(tool, trace_id=..., **args)``,
  ``client.grade(...)``, ``client.trajectory(trace_id)``, ``client.state(trace_id)``,
  ``client.db_diff(trace_id)`` (``docs/first-task.md``).
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

``TestClient``: Like Starlette's and FastAPI's ``TestClient`` (it is built on Starlette's): no
socket and no server process, the same request pipeline as ``rft serve``
(authentication, argument checks, the rollout store, ``rollout.db``). Used as a
context manager it runs the server's lifespan (the rollout database starts and
stops with it)::

    from rft_sdk.testing import TestClient
    from app import server

    def test_lend_book():
        with TestClient(server) as client:
            trace = client.new_trace_id()      # a fresh rollout: a fresh copy of the database
            call = client.call("lend_book", trace_id=trace, book_id="b1", member="ada")
            assert call.ok, call.model_text
            assert [c.name for c in client.trajectory(trace)] == ["lend_book"]
            assert sorted(client.db_diff(trace).labels()) == ["books/b1", "loans/1"]
            assert client.grade(trace, "Lent", item=ITEM).score == 1.0

Each call is recorded per ``trace_id`` (:meth:`TestClient.trajectory`): its
arguments, HTTP status, output or error, and latency. :meth:`TestClient.state` reads the rollout's
``rollout.state`` (the stored JSON decoded) without grading it. Database helpers read the
rollout's own database (a ``ToolServer(db=...)``): :meth:`TestClient.db_diff`
(rows changed against the template) and :meth:`TestClient.query` (read-only SQL).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx
import uvicorn
from starlette.testclient import TestClient as _StarletteClient
from tenacity import Retrying, retry_if_exception_type, stop_after_delay, wait_fixed

from ._db import DatabaseDiff, open_grading_view, postgres_server
from .exceptions import RFTError
from .protocol import GRADE_DETAILS_HEADER
from .surfaces._hosted import GradeAnswer

__all__ = ["Call", "GoldRun", "GradeAnswer", "RedisServer", "TestClient", "free_port", "postgres_server", "redis_server",
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


# -- TestClient: a ToolServer in process ---------------------------------------------------------------
T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """One tool call made through :class:`TestClient`.

    Attributes:
        trace_id / call_id: the rollout and the call.
        name / arguments: the tool and the arguments sent (an object, or the JSON text sent verbatim).
        status: HTTP status (200, or the 4xx/5xx of ``rft_sdk.protocol.STATUS_MEANINGS``).
        output: the 200 answer's ``output`` string, else ``None``.
        body: the decoded JSON answer (``{"error": {"code", "message", "details"?}}`` on an error).
        latency_s: seconds from request to answer.
    """

    trace_id: str
    call_id: str
    name: str
    arguments: Any
    status: int
    output: str | None
    body: Any
    latency_s: float

    @property
    def ok(self) -> bool:
        """A 200 answer with an ``output``."""
        return self.status == 200 and self.output is not None

    @property
    def error_code(self) -> str | None:
        """``body["error"]["code"]`` of an error answer (e.g. ``"tool_error"``), else ``None``."""
        error = self.body.get("error") if isinstance(self.body, dict) else None
        return str(error.get("code")) if isinstance(error, dict) else None

    @property
    def model_text(self) -> str:
        """What the model would see: the output, or the serialized error body (hosted protocol §3)."""
        return self.output if self.output is not None else json.dumps(self.body, ensure_ascii=False)

    def json(self) -> Any:
        """The output decoded as JSON (a tool returning a dict or list is answered as JSON text).

        Raises:
            RFTError: the call failed (no output), or the output is not JSON.
        """
        if self.output is None:
            raise RFTError(f"{self.name} answered {self.status}: {self.model_text}")
        try:
            return json.loads(self.output)
        except ValueError as exc:
            raise RFTError(f"{self.name}'s output is not JSON: {self.output[:200]!r}") from exc


@dataclass(frozen=True)
class GoldRun:
    """:meth:`TestClient.replay` of an item's gold: its rollout, calls and grade."""

    trace_id: str
    calls: list[Call]
    grade: GradeAnswer


class TestClient:
    """An in-process client of a ``ToolServer`` (hosted routes), for tests.

    Args:
        server: the ``ToolServer`` (any ASGI app serving the hosted routes works for calls and grades).
        token: sent as ``Authorization: Bearer <token>`` (a server with ``auth_tokens``).
        headers: more headers for every request.
        raise_server_exceptions: re-raise an exception the app did not turn into an answer
            (Starlette's option; the SDK answers tool and grader failures itself, so this
            only fires on a bug outside them).

    Use it as ``with TestClient(server) as client:`` to run the server's lifespan
    (the rollout database's start and stop); without ``with`` each request runs alone.
    """

    __test__ = False  # not a pytest test class

    def __init__(self, server: Any, *, token: str | None = None, headers: Mapping[str, str] | None = None,
                 raise_server_exceptions: bool = True) -> None:
        sent = dict(headers or {})
        if token:
            sent["Authorization"] = f"Bearer {token}"
        self.server = server
        self.http = _StarletteClient(server, base_url="http://localhost"  # loopback: no exposure warning
                                    , headers=sent,
                                     raise_server_exceptions=raise_server_exceptions)
        self._calls: dict[str, list[Call]] = {}
        self._entered = False

    def __enter__(self) -> TestClient:
        """Start the server's lifespan (the rollout database, the store's check).

        Raises:
            RFTError: the server refused to start (the rollout database did not start, the store does not
                answer); the message names the reason and the fix, as ``rft serve`` prints it.
        """
        self.http.__enter__()
        refusal = getattr(self.server, "_startup_refusal", None)
        if refusal is not None:  # the lifespan has ended: answer its shutdown ourselves, or leaving would wait forever
            portal = self.http.portal
            assert portal is not None
            portal.call(self.http.stream_send.send, {"type": "lifespan.shutdown.complete"})
            self.http.__exit__(None, None, None)
            raise RFTError(f"the server did not start: {refusal}")
        self._entered = True
        return self

    def __exit__(self, *exc: Any) -> None:
        self._entered = False
        self.http.__exit__(*exc)

    # -- the hosted wire ----------------------------------------------------------------
    @staticmethod
    def new_trace_id() -> str:
        """A fresh rollout id, ``"trace_" + 32 hex`` (the hosted services' format)."""
        return f"trace_{uuid.uuid4().hex}"

    def tools(self) -> list[dict[str, Any]]:
        """``GET /tools``: the chat-completions tool definitions a dataset line offers."""
        response = self.http.get("/tools")
        response.raise_for_status()
        tools: list[dict[str, Any]] = response.json()["tools"]
        return tools

    def call(self, tool: str, /, *, trace_id: str | None = None, item: Mapping[str, Any] | None = None,
             arguments: Mapping[str, Any] | str | None = None, call_id: str | None = None, **kwargs: Any) -> Call:
        """Call ``tool`` in rollout ``trace_id`` (``POST /tools/{tool}``) and record it.

        Arguments are ``**kwargs``, or ``arguments=`` (a mapping, or JSON text sent verbatim, e.g.
        to test malformed input) when a parameter is named like one of this method's own.
        ``trace_id`` defaults to a fresh one (read it back from the answer); a fixed one names the
        same rollout, and so the same database, until it is graded or expires, also in a later test
        run: prefer :meth:`new_trace_id`. ``item`` is the dataset
        line (``rollout.item`` in the tool). An error answer is returned, not raised: assert on
        ``.ok``, ``.status``, ``.error_code``.

        Raises:
            ValueError: both ``arguments=`` and keyword arguments.
        """
        if arguments is not None and kwargs:
            raise ValueError("pass the tool's arguments as keywords or as arguments=, not both")
        sent: Any = dict(kwargs) if arguments is None else (
            arguments if isinstance(arguments, str) else dict(arguments))
        trace_id = trace_id or self.new_trace_id()
        hex_id = uuid.uuid4().hex
        call_id = call_id or f"call_{hex_id}"
        body: dict[str, Any] = {"type": "function_call", "id": f"fc_{hex_id}", "call_id": call_id, "name": tool,
                                "arguments": sent if isinstance(sent, str) else json.dumps(sent), "trace_id": trace_id}
        if item is not None:
            body["item"] = dict(item)
        start = time.perf_counter()
        response = self.http.post(f"/tools/{tool}", json=body)
        latency = time.perf_counter() - start
        try:
            payload: Any = response.json()
        except ValueError:
            payload = {"error": {"code": "invalid_response", "message": response.text[:1000]}}
        output = payload.get("output") if response.status_code == 200 and isinstance(payload, dict) else None
        call = Call(trace_id, call_id, tool, sent, response.status_code, output if isinstance(output, str) else None,
                    payload, latency)
        self._calls.setdefault(trace_id, []).append(call)
        return call

    def grade(self, trace_id: str | None, answer: str = "", *, item: Mapping[str, Any] | None = None,
              grader: str | None = None) -> GradeAnswer:
        """Grade rollout ``trace_id`` with the final ``answer`` (``POST /grade[/{grader}]``).

        ``trace_id=None`` grades without a rollout (Azure's grader test body). A graded rollout is
        finished: later calls in it answer 409. ``item`` is the dataset line the grader sees as
        ``ctx.item``: pass it again here, as the hosted service sends it with the grade too (``None``:
        ``{}``).

        Raises:
            RFTError: the grader answered anything but 200 (the status and body are in the message).
        """
        body: dict[str, Any] = {"sample": {"output_text": answer}, "item": dict(item or {})}
        if trace_id is not None:
            body["trace_id"] = trace_id
        response = self.http.post(f"/grade/{grader}" if grader else "/grade", json=body)
        if response.status_code != 200:
            raise RFTError(f"grade answered {response.status_code}: {response.text[:500]}")
        details = json.loads(response.headers.get(GRADE_DETAILS_HEADER) or "{}")
        return GradeAnswer(float(response.json()["score"]),
                     {str(k): float(v) for k, v in (details.get("subscores") or {}).items()},
                     [str(r) for r in details.get("reasons") or []])

    def trajectory(self, trace_id: str) -> list[Call]:
        """The calls made through this client in rollout ``trace_id``, in order (``[]`` when none)."""
        return list(self._calls.get(trace_id, []))

    def state(self, trace_id: str) -> dict[str, Any]:
        """Rollout ``trace_id``'s ``rollout.state`` as it is now: the stored state JSON decoded, what the
        grader would get as ``ctx.state`` were the rollout graded now (a fresh copy: changing it changes
        nothing). ``{}`` for a rollout whose calls stored nothing (a tool that keeps no state, or only
        refused calls: a refused call's changes are rolled back). Reading it neither grades nor releases
        the rollout, so later calls and the grade go on as before.

        Raises:
            RFTError: the store holds no rollout ``trace_id``: no call has been made in it yet (a grade
                would then see ``ctx.state == {}``), the id is mistyped, or the rollout was graded and its
                state released (read the state before :meth:`grade`, or keep it for a while with
                ``ToolServer(grade_retention_s=...)``); or the server has no rollout store (not a
                ``ToolServer``). The message names the ``trace_id`` and the case.
        """
        store = getattr(self.server, "store", None)
        if store is None or not hasattr(store, "load"):
            raise RFTError(f"cannot read the state of rollout {trace_id!r}: {type(self.server).__name__} has no "
                           "rollout store (TestClient.state needs a ToolServer)")

        async def load() -> tuple[Any, bool]:
            stored = await store.load(trace_id)
            graded = False
            if stored is None:
                with contextlib.suppress(NotImplementedError):  # a store of its own may keep no tombstones
                    graded = await store.graded_digest(trace_id) is not None
            return stored, graded

        stored, graded = self._run(load)
        if stored is None:
            if graded:
                raise RFTError(f"rollout {trace_id!r} was graded and its state released: read client.state() "
                               "before client.grade(), or keep graded rollouts with "
                               "ToolServer(grade_retention_s=...)")
            made = len(self._calls.get(trace_id, []))
            why = (f"none of the {made} call(s) this client made in it was recorded (an unknown tool, 404, or a "
                   "refused token, 401, records nothing), or the rollout expired" if made else
                   "no call has been made in it yet (a grade would see ctx.state == {}), or the trace_id is mistyped")
            raise RFTError(f"no rollout {trace_id!r} in the server's store: {why}")
        state: dict[str, Any] = json.loads(stored.state_json or "{}")
        return state

    def replay(self, item: Mapping[str, Any], *, grader: str | None = None,
               alternative: int | str | None = None) -> GoldRun:
        """Play ``item``'s gold (``actions`` then ``reference_answer``, ``rft_sdk.protocol.GoldItem``) on a
        fresh rollout and grade it: what ``rft validate``'s dry run does for one line.

        Args:
            item: the dataset line.
            grader: the grader's name (``None``: the default grader).
            alternative: play one of the item's ``alternatives`` instead of the gold: its index, or its
                ``name``; its ``actions``, then its ``reference_answer`` (the item's when it has none), as
                ``rft doctor`` plays it.

        Raises:
            pydantic.ValidationError: the item's gold fields are malformed.
            RFTError: the item has no gold, no such alternative, or the grade failed.
        """
        from .protocol import GoldItem

        gold = GoldItem.model_validate(dict(item))
        if not gold.has_gold:
            raise RFTError("the item has no gold: it needs both actions and reference_answer")
        actions, answer = gold.actions or [], gold.reference_answer or ""
        if alternative is not None:
            alternatives = gold.alternatives or []
            chosen = [a for i, a in enumerate(alternatives)
                      if (a.name == alternative if isinstance(alternative, str) else i == alternative)]
            if not chosen:
                names = [a.name if a.name is not None else i for i, a in enumerate(alternatives)]
                raise RFTError(f"the item has no alternative {alternative!r}: it has {len(alternatives)} "
                               f"({', '.join(map(repr, names)) or 'none'}); pass an index or a name")
            actions, answer = chosen[0].actions, chosen[0].reference_answer or answer
        trace_id = self.new_trace_id()
        calls = [self.call(a.name, trace_id=trace_id, item=item, arguments=a.arguments) for a in actions]
        return GoldRun(trace_id, calls, self.grade(trace_id, answer, item=item, grader=grader))

    # -- the rollout's database -----------------------------------------------------------
    def _run(self, fn: Callable[[], Awaitable[T]]) -> T:
        if self._entered and self.http.portal is not None:
            return self.http.portal.call(fn)
        return anyio.run(fn)

    def _database(self) -> Any:
        db = getattr(self.server, "db", None)
        if db is None:
            raise RFTError("the server has no rollout database (ToolServer(db=SQLiteDatabase(...)))")
        return db

    def db_diff(self, trace_id: str) -> DatabaseDiff:
        """Rows rollout ``trace_id`` changed in its database, template (``before``) against now (``after``);
        empty when it changed nothing or made no call (``RowChange``: ``table``, ``key``, ``kind``,
        ``label()``; ``DatabaseDiff.labels()``, ``.summary()``).

        Raises:
            RFTError: the server has no rollout database.
        """
        db = self._database()

        async def diff() -> DatabaseDiff:
            view = await open_grading_view(db, trace_id, {})
            try:
                return await view.diff()
            finally:
                await view.aclose()

        return self._run(diff)

    def query(self, trace_id: str, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of ``sql`` run read-only on rollout ``trace_id``'s database (the template's when it made
        no call yet), e.g. ``client.query(t, "SELECT copies FROM books WHERE id = ?", ["b1"])``.

        Raises:
            RFTError: the server has no rollout database.
            the driver's error: bad SQL, or a statement that writes (the connection is read-only).
        """
        db = self._database()

        async def rows() -> list[tuple[Any, ...]]:
            view = await open_grading_view(db, trace_id, {})
            try:
                conn = view.connection
                return await anyio.to_thread.run_sync(lambda: [tuple(r) for r in conn.execute(sql, params)])
            finally:
                await view.aclose()

        return self._run(rows)
