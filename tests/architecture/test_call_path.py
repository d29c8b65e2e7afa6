"""A tool call and a grade flow one way (issue 35): followed from its handler, a request visits each
module of the request path once and returns to none it left.

What is measured. A real ``ToolServer`` (the hosted routes, the default ``MemoryStore``) answers one
hosted tool call of a rollout that already made calls (the steady state: the rollout is loaded, its item
compared, the tool run, the answer recorded and saved), the first call of a new rollout, and one
``POST /grade``, each driven through its ASGI entry by ``httpx.ASGITransport`` (in process, so the
profiler sees every frame). ``sys.setprofile`` and ``threading.setprofile`` record every Python frame of
a module under ``rft_sdk`` that is entered or left while that one request is served.

The definition, precisely:

* **the logical stack**: a frame is on it from its first ``call`` event until it really returns; a
  coroutine or generator that *suspends* (its ``return`` event stops at ``YIELD_VALUE``) stays on it, so
  an awaiting handler has not left, and an ``async with`` block's generator context manager (the
  admission slot) is on it for the whole block;
* **units**: a module, except that the modules of one lower package are one unit: ``rft_sdk._stores``
  (the store, whichever backend: its lock, codec and bookkeeping are its own business) and
  ``rft_sdk._definitions`` (the tool or grader's definition and invocation);
* **handlers**: ``rft_sdk._server._app`` (the edge: bytes in, response out) and the call handlers
  ``rft_sdk._server._calls`` / ``rft_sdk._server._grade_call``. A **stage** is a unit a handler frame
  calls directly (a new frame whose nearest enclosing ``rft_sdk`` frame is a handler's); consecutive
  calls into the same unit are one visit. The stage sequence is the request path as the handler
  orchestrates it;
* **rule 1, each stage once**: no unit appears twice in the stage sequence. One exception, by the issue's
  own pipeline: the store is visited twice, to load the rollout under its lock and to record the answer
  (and release the lock) — "rollout (loaded under its lock) → tool → recorded answer";
* **rule 2, no return to a module left**: once a stage's visit is over (the handler went on to the next
  stage), no frame of that unit is entered again at any depth (for example the store decoding through
  the body parser, or the item check reaching into the store's codec), except the store's one
  permitted second visit;
* **not counted**: (a) the user's tool or grader: frames entered while their own function is on the
  stack (a tool reading ``rollout.item`` or ``rollout.state`` calls into the SDK's object API: that is the
  tool's step); (b) the leaf codec ``rft_sdk._wire._json`` (:data:`LEAVES`): pure functions from JSON text
  to values and back, calling no other ``rft_sdk`` module (checked), used by every stage the way
  ``json.loads`` is; a call into it is a function call, not a visit.

Printed (``pytest -s``): the stage sequence, and the innermost ``rft_sdk`` module over time (consecutive
repeats collapsed, the leaf and the user's code left out), the shape a reader follows from the handler.
"""

from __future__ import annotations

import asyncio
import dis
import inspect
import sys
import threading
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import httpx

from rft_sdk import Rollout, SQLiteDatabase, ToolServer

#: Leaf codecs: pure functions over JSON text and values, calling no other rft_sdk module (checked below:
#: while one of these is on the stack, no other rft_sdk module may be entered).
LEAVES = frozenset({"rft_sdk._wire._json"})
#: Packages whose modules count as one unit.
PACKAGE_UNITS = ("rft_sdk._stores", "rft_sdk._definitions", "rft_sdk._db")
HANDLERS = frozenset({"rft_sdk._server._app", "rft_sdk._server._calls", "rft_sdk._server._grade_call"})
#: The one unit the pipeline visits twice: load the rollout under its lock, then record the answer.
TWICE = "rft_sdk._stores"
_GENERATOR_FLAGS = inspect.CO_COROUTINE | inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR
_YIELD = dis.opmap["YIELD_VALUE"]
#: Code of the user's tool and grader (filled by make_server): frames under them are the tool's step.
_USER_CODE: set[Any] = set()


def unit_of(module: str) -> str:
    for package in PACKAGE_UNITS:
        if module.startswith(package + "."):
            return package
    return module


class PathTrace:
    """Records the stage sequence, returns to left stages, and the innermost-module sequence of the
    ``rft_sdk`` frames of one request (definitions: the module docstring)."""

    def __init__(self) -> None:
        self.live: set[FrameType] = set()
        self.live_units: Counter[str] = Counter()  # frames of each unit on the logical stack
        self.stages: list[str] = []  # units called directly by a handler, consecutive repeats merged
        self.returns: list[str] = []  # "unit (entered from module)" for every entry into a left stage
        self.leaf_calls: list[tuple[str, str]] = []  # (leaf, module it entered): a leaf that is no leaf
        self.sequence: list[str] = []
        self.lock = threading.Lock()

    @staticmethod
    def _module(frame: FrameType) -> str:
        return frame.f_globals.get("__name__", "")

    def _caller(self, frame: FrameType | None) -> str | None:
        """Module of the nearest ``rft_sdk`` frame at or above ``frame``; ``"user"`` while the user's code is
        anywhere on the stack (``rollout.item`` read by a tool in its worker thread is the tool's step)."""
        nearest = None
        while frame is not None:
            if frame.f_code in _USER_CODE:
                return "user"
            if nearest is None:
                name = self._module(frame)
                if name.startswith("rft_sdk"):
                    nearest = name
            frame = frame.f_back
        return nearest

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return"):
            return
        name = self._module(frame)
        if not name.startswith("rft_sdk"):
            return
        with self.lock:
            if event == "call":
                self._enter(frame, name)
            else:
                self._leave(frame, name)

    def _enter(self, frame: FrameType, name: str) -> None:
        caller = self._caller(frame.f_back)
        if caller == "user":
            return
        if caller in LEAVES and name not in LEAVES:
            self.leaf_calls.append((caller, name))
        if name in LEAVES:
            return
        self._note(name)
        if frame in self.live:  # a suspended coroutine or generator resumed: not a new visit
            return
        self.live.add(frame)
        unit = unit_of(name)
        on_stack = self.live_units[unit] > 0  # still in its stay: a call within it, not a return
        self.live_units[unit] += 1
        if caller is not None and caller in HANDLERS and unit_of(caller) != unit:
            if not on_stack and (not self.stages or self.stages[-1] != unit):
                self.stages.append(unit)
            return
        if unit in self.stages and self.stages[-1] != unit and unit not in HANDLERS and not on_stack:
            self.returns.append(f"{unit} (entered from {caller})")

    def _leave(self, frame: FrameType, name: str) -> None:
        if frame not in self.live:
            return
        suspended = (frame.f_code.co_flags & _GENERATOR_FLAGS and frame.f_lasti >= 0
                     and frame.f_code.co_code[frame.f_lasti] == _YIELD)
        if not suspended:
            self.live.discard(frame)
            self.live_units[unit_of(name)] -= 1
        caller = self._caller(frame.f_back)
        if caller is not None and caller != "user" and caller not in LEAVES:
            self._note(caller)

    def _note(self, name: str) -> None:
        if not self.sequence or self.sequence[-1] != name:
            self.sequence.append(name)

    def repeated(self) -> list[str]:
        """Units visited more than once as a stage (the store: more than twice)."""
        counts = Counter(self.stages)
        return sorted(unit for unit, count in counts.items() if count > (2 if unit == TWICE else 1))

    def problems(self) -> list[str]:
        found = [f"stage visited again: {unit}" for unit in self.repeated()]
        found += [f"returned to a stage it left: {entry}" for entry in dict.fromkeys(self.returns)]
        found += [f"leaf codec {leaf} called {other}" for leaf, other in dict.fromkeys(self.leaf_calls)]
        return found

    def shown(self, names: list[str]) -> str:
        return " -> ".join(name.removeprefix("rft_sdk.") for name in names)


def make_server() -> ToolServer:
    server = ToolServer(auth_env_var=None)

    @server.tool
    def add_to_cart(sku: str, qty: int = 1, *, rollout: Rollout) -> str:
        """Add units of a product to this rollout's cart.

        Args:
            sku: product SKU.
            qty: units to add.
        """
        cart = rollout.state.setdefault("cart", {})
        cart[sku] = cart.get(sku, 0) + qty
        return f"{rollout.item.get('task', '?')}: cart has {sum(cart.values())} items"

    @server.grader
    def cart_size(ctx: Any) -> float:
        """One point per three units in the cart, at most 1."""
        return min(1.0, sum(ctx.state.get("cart", {}).values()) / 3)

    _USER_CODE.update({add_to_cart.__code__, cart_size.__code__})
    return server


_ITEM = {"task": "buy jackets", "messages": [{"role": "user", "content": "x" * 3000}], "gold": [1, 2, 3]}


def _call(trace_id: str, call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "trace_id": trace_id, "id": f"fc_{call_id}",
            "name": "add_to_cart", "arguments": '{"sku": "JKT-1", "qty": 1}', "item": _ITEM}


#: The trace of the request being served now (``None`` between requests): worker threads, started before
#: it with :func:`_dispatch` as their profile function (``threading.setprofile`` reaches only threads
#: started after it), send it their events too.
_CURRENT: list[PathTrace | None] = [None]


def _dispatch(frame: FrameType, event: str, arg: Any) -> None:
    trace = _CURRENT[0]
    if trace is not None and not threading.current_thread().name.startswith("rft-db-"):  # not the db's upkeep
        trace.profile(frame, event, arg)


async def _traced(client: httpx.AsyncClient, path: str, body: dict[str, Any]) -> tuple[PathTrace, httpx.Response]:
    trace = PathTrace()
    _CURRENT[0] = trace
    sys.setprofile(_dispatch)
    try:
        response = await client.post(path, json=body)
    finally:
        sys.setprofile(None)
        _CURRENT[0] = None
    return trace, response


def make_db_server(folder: Path) -> ToolServer:
    """A server whose tool writes to the rollout's own SQLite database (``rollout.db``)."""
    def setup(conn: Any) -> None:
        conn.execute("CREATE TABLE cart (sku TEXT PRIMARY KEY, qty INTEGER NOT NULL)")

    server = ToolServer(auth_env_var=None, db=SQLiteDatabase(setup=setup, dir=folder, name="path"))

    @server.tool
    def add_to_cart(sku: str, qty: int = 1, *, rollout: Rollout) -> str:
        """Add units of a product to this rollout's cart.

        Args:
            sku: product SKU.
            qty: units to add.
        """
        rollout.db.execute("INSERT INTO cart VALUES (?, ?) ON CONFLICT(sku) DO UPDATE SET qty = qty + ?",
                           (sku, qty, qty))
        return f"cart has {rollout.db.execute('SELECT sum(qty) FROM cart').fetchone()[0]} items"

    _USER_CODE.add(add_to_cart.__code__)
    return server


async def trace_requests(db_folder: Path | None = None) -> dict[str, PathTrace]:
    """Traces of: a steady-state tool call, the first call of a new rollout, and a grade; with ``db_folder``,
    a steady-state call and a first call of a server with a per-rollout SQLite database (made there)."""
    threading.setprofile(_dispatch)  # every worker thread started from here on reports to the current trace
    try:
        traces = await _trace_plain()
        if db_folder is not None:
            traces.update(await _trace_db(db_folder))
    finally:
        threading.setprofile(None)  # type: ignore[arg-type]
    return traces


async def _trace_db(folder: Path) -> dict[str, PathTrace]:
    server = make_db_server(folder)
    traces: dict[str, PathTrace] = {}
    assert server.db is not None
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as client:
            for call_id in ("c0", "c1"):  # warm: the template, the worker threads, the rollout's first call
                assert (await client.post("/tools/add_to_cart", json=_call("warm", call_id))).status_code == 200
            traces["db tool call"], response = await _traced(client, "/tools/add_to_cart", _call("warm", "c2"))
            assert response.status_code == 200, response.text
            assert response.json()["output"] == "cart has 3 items"
            traces["db first call"], response = await _traced(client, "/tools/add_to_cart", _call("fresh", "c0"))
            assert response.status_code == 200, response.text
            assert response.json()["output"] == "cart has 1 items"  # its own database: not the other's rows
    finally:
        server.db.close()
        server.db.drop_all()
    return traces


async def _trace_plain() -> dict[str, PathTrace]:
    server = make_server()
    traces: dict[str, PathTrace] = {}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as client:
        for call_id in ("c0", "c1"):  # warm: imports, caches, the rollout's first call
            assert (await client.post("/tools/add_to_cart", json=_call("warm", call_id))).status_code == 200
        traces["tool call"], response = await _traced(client, "/tools/add_to_cart", _call("warm", "c2"))
        assert response.status_code == 200, response.text
        traces["first call"], response = await _traced(client, "/tools/add_to_cart", _call("fresh", "c0"))
        assert response.status_code == 200, response.text
        grade = {"sample": {"output_text": "done"}, "item": _ITEM, "trace_id": "warm"}
        traces["grade"], response = await _traced(client, "/grade", grade)
        assert response.status_code == 200, response.text
    return traces


def test_a_tool_call_and_a_grade_flow_one_way(tmp_path: Path) -> None:
    traces = asyncio.run(trace_requests(tmp_path / "db"))
    report = []
    for what, trace in traces.items():
        report.append(f"{what}: stages ({len(trace.stages)}): {trace.shown(trace.stages)}")
        report.append(f"  innermost module over time ({len(trace.sequence)}): {trace.shown(trace.sequence)}")
        report.extend(f"  {problem}" for problem in trace.problems())
    print("\n".join(report))
    assert all(trace.stages for trace in traces.values()), "the tracer saw no request"
    assert not any(trace.problems() for trace in traces.values()), "\n".join(report)
