"""A tool call and a grade flow one way (issue 35): followed from the handler, the request visits each
module of the request path once and returns to none it left.

What is measured. A real ``ToolServer`` (the hosted routes, the default ``MemoryStore``) answers one
hosted tool call of a rollout that already made a call (the steady state: the rollout is loaded, its
item compared, the tool run, the answer recorded and saved), the first call of a new rollout, and one
``POST /grade``, each driven through its ASGI entry by ``httpx.ASGITransport`` (in process, so the
profiler sees every frame). ``sys.setprofile`` and ``threading.setprofile`` record every Python frame
of a module under ``rft_sdk`` that is entered or left while the one request is served.

The definition, precisely:

* **the logical stack**: a frame is on it from its first ``call`` event until it really returns (a
  coroutine or generator that *suspends* — its ``return`` event stops at ``YIELD_VALUE`` — stays on it:
  an awaiting handler has not left; an ``async with`` block's context manager stays on it for the block);
* **a stay** of a module: a maximal interval during which at least one of its frames is on the logical
  stack. A module that calls deeper modules and gets control back is still in its stay (a call, not a
  return to a module it left); a module entered again after all its frames returned starts a second stay:
  the path *returned to a module it left*;
* **the rule**: every module of the request path has exactly one stay. The handler modules (``_app``
  at the edge, ``_calls``/``_grade_call`` for the call) are on the stack throughout and so have one stay
  by construction; every stage below them (read, admission, decode, store, item, tool invocation,
  metrics, encoding) is entered once, does all of its work, and is not entered again;
* **not counted**: (a) the user's tool or grader — frames entered while the tool's or grader's own function
  is on the stack (a tool reading ``rollout.item`` or ``rollout.state`` calls into the SDK's
  object API; that is the tool's step, not the path bouncing); (b) the *leaf codecs* listed in
  :data:`LEAVES`: modules of pure functions that call no other ``rft_sdk`` module (JSON text in, values
  out, like ``json.loads``), which every stage may use; a call into one is a function call, not a visit.

The sequence printed is the innermost ``rft_sdk`` module over time (consecutive repeats collapsed),
with the leaf codecs and the user's code left out: the shape a reader follows from the handler.
"""

from __future__ import annotations

import asyncio
import dis
import inspect
import sys
import threading
from collections import Counter
from types import FrameType
from typing import Any

import httpx

from rft_sdk import Rollout, ToolServer
from rft_sdk._server import _app

#: Leaf codecs: pure functions over JSON text and values, calling no other rft_sdk module (checked below:
#: while one of these is on the stack, no other rft_sdk module may be entered).
LEAVES = frozenset({"rft_sdk._wire._json"})
_GENERATOR_FLAGS = inspect.CO_COROUTINE | inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR
_YIELD = dis.opmap["YIELD_VALUE"]
#: Code of the user's tool and grader (filled by make_server): frames under them are the tool's step.
_USER_CODE: set[Any] = set()


class PathTrace:
    """Records stays and the innermost-module sequence of ``rft_sdk`` frames (see the module docstring)."""

    def __init__(self) -> None:
        self.live: dict[FrameType, str] = {}
        self.depth: Counter[str] = Counter()
        self.stays: Counter[str] = Counter()
        self.sequence: list[str] = []
        self.leaf_calls: list[tuple[str, str]] = []  # (leaf, module it entered): a leaf that is no leaf
        self.lock = threading.Lock()

    @staticmethod
    def _module(frame: FrameType) -> str:
        return frame.f_globals.get("__name__", "")

    def _innermost(self, frame: FrameType | None) -> str | None:
        while frame is not None:
            if frame.f_code in _USER_CODE:
                return None  # inside the user's tool: the tool's step
            name = self._module(frame)
            if name.startswith("rft_sdk") and name not in LEAVES:
                return name
            frame = frame.f_back
        return None

    def _in_user_code(self, frame: FrameType | None) -> bool:
        while frame is not None:
            if frame.f_code in _USER_CODE:
                return True
            frame = frame.f_back
        return False

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
        if self._in_user_code(frame.f_back):
            return
        if name in LEAVES:
            caller = self._leaf_caller(frame.f_back)
            if caller is not None:
                self.leaf_calls.append((caller, name))
            return
        if self._leaf_caller(frame.f_back) is not None:  # a leaf calling another module: it is no leaf
            self.leaf_calls.append((self._leaf_caller(frame.f_back) or "", name))
        if frame not in self.live:
            self.live[frame] = name
            if self.depth[name] == 0:
                self.stays[name] += 1
            self.depth[name] += 1
        self._note(name)

    def _leave(self, frame: FrameType, name: str) -> None:
        if frame not in self.live:
            return
        suspended = (frame.f_code.co_flags & _GENERATOR_FLAGS and frame.f_lasti >= 0
                     and frame.f_code.co_code[frame.f_lasti] == _YIELD)
        if not suspended:
            del self.live[frame]
            self.depth[name] -= 1
        current = self._innermost(frame.f_back)
        if current is not None:
            self._note(current)

    def _leaf_caller(self, frame: FrameType | None) -> str | None:
        """The leaf module on the real stack just above, when the nearest rft_sdk frame is a leaf's."""
        while frame is not None:
            name = self._module(frame)
            if name.startswith("rft_sdk"):
                return name if name in LEAVES else None
            frame = frame.f_back
        return None

    def _note(self, name: str) -> None:
        if not self.sequence or self.sequence[-1] != name:
            self.sequence.append(name)

    def revisited(self) -> dict[str, int]:
        """Modules with more than one stay, and how many."""
        return {name: count for name, count in sorted(self.stays.items()) if count > 1}

    def shown(self) -> str:
        return " -> ".join(name.removeprefix("rft_sdk.") for name in self.sequence)


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


async def _traced(client: httpx.AsyncClient, path: str, body: dict[str, Any]) -> tuple[PathTrace, httpx.Response]:
    trace = PathTrace()
    threading.setprofile(trace.profile)
    sys.setprofile(trace.profile)
    try:
        response = await client.post(path, json=body)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return trace, response


async def trace_requests() -> dict[str, PathTrace]:
    """Traces of: a steady-state tool call, the first call of a new rollout, and a grade."""
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


def test_a_tool_call_and_a_grade_flow_one_way() -> None:
    traces = asyncio.run(trace_requests())
    report = []
    for what, trace in traces.items():
        report.append(f"{what}: {len(trace.sequence)} stays in sequence: {trace.shown()}")
        if trace.revisited():
            report.append(f"  modules returned to after the path left them: {trace.revisited()}")
        if trace.leaf_calls:
            report.append(f"  leaf codecs that called another module: {sorted(set(trace.leaf_calls))}")
    print("\n".join(report))
    assert all(_app.__name__ in trace.stays for trace in traces.values()), "the tracer saw no request"
    bad = {what: (trace.revisited(), sorted(set(trace.leaf_calls))) for what, trace in traces.items()
           if trace.revisited() or trace.leaf_calls}
    assert not bad, "\n".join(report)
