"""The request path's speed options keep every guarantee: ``@tool(blocking=False)``, the
orjson decoder's fallbacks, in-place trajectories, ``rft serve --gc``/``--loop``/``--http``."""

from __future__ import annotations

import gc
import json
import threading

import httpx
import pytest

from rft_sdk import Rollout, ToolCallRecord, ToolServer, tool
from rft_sdk._wire._json import _refuse_constant, loads_strict
from rft_sdk.cli import GC_MODES, SERVE_GC, _build_parser, tune_gc
from rft_sdk.exceptions import ToolDefinitionError


def _call(call_id: str, trace_id: str = "t1", **arguments: object) -> dict[str, object]:
    return {"type": "function_call", "call_id": call_id, "trace_id": trace_id, "arguments": json.dumps(arguments)}


def _server_recording_threads() -> tuple[ToolServer, dict[str, int]]:
    threads: dict[str, int] = {}
    server = ToolServer(auth_env_var=None)

    @server.tool(blocking=False)
    def on_loop(rollout: Rollout) -> str:
        """Record the thread it runs on."""
        threads["on_loop"] = threading.get_ident()
        return "ok"

    @tool
    def in_thread(rollout: Rollout) -> str:
        """Record the thread it runs on."""
        threads["in_thread"] = threading.get_ident()
        return "ok"

    server.add_tool(in_thread)
    return server, threads


async def test_blocking_false_runs_on_the_loop_and_the_default_in_a_worker_thread() -> None:
    server, threads = _server_recording_threads()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as client:
        for name in ("on_loop", "in_thread"):
            r = await client.post(f"/tools/{name}", json=_call(f"c-{name}"))
            assert r.status_code == 200, r.text
            assert r.json()["output"] == "ok"
    assert threads["on_loop"] == threading.get_ident()  # ASGITransport runs the app on this thread's loop
    assert threads["in_thread"] != threading.get_ident()
    assert server.tools["on_loop"].blocking is False and server.tools["on_loop"].on_loop
    assert server.tools["in_thread"].blocking is True and not server.tools["in_thread"].on_loop


async def test_blocking_false_tool_keeps_validation_errors_and_replay() -> None:
    @tool(name="add", blocking=False)
    def add(n: int, rollout: Rollout) -> str:
        """Add ``n`` to the rollout's counter."""
        if n < 0:
            raise ValueError("negative")
        rollout.state["total"] = rollout.state.get("total", 0) + n
        return str(rollout.state["total"])

    server = ToolServer([add], auth_env_var=None)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as client:
        first = await client.post("/tools/add", json=_call("c1", n=2))
        replay = await client.post("/tools/add", json=_call("c1", n=2))
        bad = await client.post("/tools/add", json=_call("c2", n="x"))
        raised = await client.post("/tools/add", json=_call("c3", n=-1))
        second = await client.post("/tools/add", json=_call("c4", n=3))
    assert first.json()["output"] == "2" and replay.content == first.content
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_arguments"
    assert raised.status_code == 400 and "ValueError: negative" in raised.json()["error"]["message"]
    assert second.json()["output"] == "5"  # the raising call rolled its state back
    stored = await server.store.load("t1")
    assert stored is not None and [r.call_id for r in stored.trajectory] == ["c1", "c2", "c3", "c4"]


async def test_tool_sees_a_tuple_snapshot_of_earlier_calls() -> None:
    seen: list[tuple[str, ...]] = []

    @tool(name="look", blocking=False)
    def look(rollout: Rollout) -> str:
        """Record the call_ids recorded before this call."""
        assert isinstance(rollout.trajectory, tuple)
        seen.append(tuple(r.call_id for r in rollout.trajectory))
        return "ok"

    server = ToolServer([look], auth_env_var=None)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as client:
        for i in range(3):
            assert (await client.post("/tools/look", json=_call(f"c{i}"))).status_code == 200
    assert seen == [(), ("c0",), ("c0", "c1")]


def test_tool_call_record_round_trips_and_is_immutable() -> None:
    record = ToolCallRecord(call_id="c1", id="fc_1", name="add", arguments={"n": [1, 2]}, output="3", error=None,
                            status=200, started_at=1.5, latency_s=0.25)
    data = record.to_dict()
    assert data == {"call_id": "c1", "id": "fc_1", "name": "add", "arguments": {"n": [1, 2]}, "output": "3",
                    "error": None, "status": 200, "started_at": 1.5, "latency_s": 0.25}
    data["arguments"]["n"].append(9)  # a deep copy: the record is unchanged
    assert record.arguments == {"n": [1, 2]}
    assert ToolCallRecord.from_dict(record.to_dict()) == record and record.ok
    with pytest.raises(AttributeError):
        record.status = 500  # type: ignore[misc]


@pytest.mark.parametrize("text", ["123456789012345678901234567890", '{"a": 123456789012345678901}',
                                  "-98765432109876543210"])
def test_integers_beyond_64_bits_stay_exact(text: str) -> None:
    assert loads_strict(text) == json.loads(text)
    assert loads_strict(text.encode()) == json.loads(text)


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}', "{", "[1,]", '{"a": 1} x'])
def test_refusals_are_the_stdlib_ones(text: str) -> None:
    with pytest.raises(ValueError) as refused:
        loads_strict(text.encode())
    with pytest.raises(ValueError) as stdlib:
        json.loads(text.encode(), parse_constant=_refuse_constant)
    assert str(refused.value) == str(stdlib.value)


def test_depth_limit_holds_on_the_fast_path() -> None:
    assert loads_strict(b"[" * 64 + b"]" * 64, max_depth=64) is not None
    with pytest.raises(ValueError, match="deeper than 64"):
        loads_strict(b"[" * 65 + b"]" * 65, max_depth=64)
    brackets_in_strings = b'{"a": "' + b"[" * 200 + b'"}'  # many brackets, none nesting
    assert loads_strict(brackets_in_strings, max_depth=64) == {"a": "[" * 200}


def test_tune_gc_modes() -> None:
    threshold, callbacks = gc.get_threshold(), list(gc.callbacks)
    try:
        with pytest.raises(ValueError, match="generational"):
            tune_gc("fast")
        tune_gc("default")
        assert gc.get_threshold() == threshold and gc.get_freeze_count() == 0
        tune_gc("freeze")
        assert gc.get_freeze_count() > 0 and gc.get_threshold()[0] == 10_000
        gc.unfreeze()
        gc.set_threshold(*threshold)
        tune_gc("generational")
        assert gc.get_freeze_count() > 0 and len(gc.callbacks) == len(callbacks) + 1
        gc.unfreeze()
        gc.collect()  # the callback freezes what survives a full collection
        assert gc.get_freeze_count() > 0
    finally:
        gc.callbacks[:] = callbacks
        gc.unfreeze()
        gc.set_threshold(*threshold)


def test_serve_flags_parse_and_refuse_unknown_values() -> None:
    parser = _build_parser("serve")
    args = parser.parse_args(["serve", "app:server", "--gc", "freeze", "--loop", "uvloop", "--http", "httptools"])
    assert (args.gc, args.loop, args.http) == ("freeze", "uvloop", "httptools")
    defaults = parser.parse_args(["serve", "app:server"])
    assert (defaults.gc, defaults.loop, defaults.http) == (None, "auto", "auto")  # None: SERVE_GC for one worker
    assert SERVE_GC == "freeze"
    assert set(GC_MODES) == {"default", "freeze", "generational"}
    with pytest.raises(SystemExit) as exited:
        parser.parse_args(["serve", "app:server", "--gc", "off"])
    assert exited.value.code == 2


def test_invalid_name_is_refused_with_blocking_false_too() -> None:
    with pytest.raises(ToolDefinitionError):
        @tool(name="no spaces allowed", blocking=False)
        def bad() -> str:
            """Never registered."""
            return ""
