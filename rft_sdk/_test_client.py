"""``rft_sdk.testing.TestClient``: call a ToolServer's tools and graders in process, the way the hosted service does.

Like Starlette's and FastAPI's ``TestClient`` (it is built on Starlette's): no
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
arguments, HTTP status, output or error, and latency. Database helpers read the
rollout's own database (a ``ToolServer(db=...)``): :meth:`TestClient.db_diff`
(rows changed against the template) and :meth:`TestClient.query` (read-only SQL).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
from starlette.testclient import TestClient as _StarletteClient

from ._db import DatabaseDiff, open_grading_view
from .exceptions import RFTError
from .protocol import GRADE_DETAILS_HEADER
from .surfaces._hosted import GradeAnswer

__all__ = ["Call", "GoldRun", "GradeAnswer", "TestClient"]

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
        self.http.__enter__()
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
        finished: later calls in it answer 409.

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

    def replay(self, item: Mapping[str, Any], *, grader: str | None = None) -> GoldRun:
        """Play ``item``'s gold (``actions`` then ``reference_answer``, ``rft_sdk.protocol.GoldItem``) on a
        fresh rollout and grade it: what ``rft validate``'s dry run does for one line.

        Raises:
            pydantic.ValidationError: the item's gold fields are malformed.
            RFTError: the item has no gold, or the grade failed.
        """
        from .protocol import GoldItem

        gold = GoldItem.model_validate(dict(item))
        if not gold.has_gold:
            raise RFTError("the item has no gold: it needs both actions and reference_answer")
        trace_id = self.new_trace_id()
        calls = [self.call(a.name, trace_id=trace_id, item=item, arguments=a.arguments) for a in gold.actions or []]
        return GoldRun(trace_id, calls, self.grade(trace_id, gold.reference_answer or "", item=item, grader=grader))

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
