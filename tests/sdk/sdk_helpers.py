"""Shared helpers for rft_sdk tests: a small cart server built fresh per test, hosted-format bodies."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import rft_sdk
from rft_sdk import RetryableToolError, Rollout, ToolError, ToolServer

ROOT = Path(rft_sdk.__file__).resolve().parent.parent  # repository root, for a child's PYTHONPATH


def make_server(**kwargs) -> ToolServer:
    """A server with cart tools used across the tests (fresh state each time)."""
    server = ToolServer(auth_env_var=None, **kwargs)
    server.executions = []  # (trace_id, call_id) of every real execution

    @server.tool
    def add_to_cart(sku: str, qty: int = 1, *, rollout: Rollout) -> str:
        """Add an item to this rollout's cart.

        Args:
            sku: Product SKU, e.g. "JKT-URB-009".
            qty: Units to add.
        """
        server.executions.append((rollout.trace_id, rollout.call_id))
        cart = rollout.state.setdefault("cart", {})
        cart[sku] = cart.get(sku, 0) + qty
        return f"cart now has {sum(cart.values())} items"

    @server.tool
    async def increment(*, rollout: Rollout) -> dict:
        """Increment this rollout's counter (async, yields to the loop mid-update)."""
        value = rollout.state.get("n", 0)
        await asyncio.sleep(0)
        rollout.state["n"] = value + 1
        return {"n": rollout.state["n"]}

    @server.tool
    def fail(kind: str, *, rollout: Rollout) -> Any:
        """Fail in a chosen way after dirtying the state.

        Args:
            kind: one of "tool", "crash", "retry", "state", "nan", "nan_output".
        """
        rollout.state["dirty"] = True
        if kind == "tool":
            raise ToolError("Order not found")
        if kind == "retry":
            raise RetryableToolError("database busy")
        if kind == "state":
            rollout.state["bad"] = {1, 2}
            return "ok"
        if kind == "nan":  # JSON holds no NaN (RFC 8259)
            rollout.state["bad"] = float("nan")
            return "ok"
        if kind == "nan_output":  # nor may the output the model reads
            return {"litres": float("inf"), "note": "NaN is a word here"}
        raise ZeroDivisionError("division by zero")

    return server


def call_body(name: str, arguments, *, trace_id: str, call_id: str | None = None, **extra) -> dict:
    """An exact hosted-format tool call body (hosted protocol §3)."""
    call_id = call_id or f"call_{uuid.uuid4().hex[:12]}"
    body = {"type": "function_call", "id": f"fc_{call_id[5:]}", "call_id": call_id, "name": name,
            "arguments": arguments if not isinstance(arguments, dict) or extra.pop("as_object", False)
            else json.dumps(arguments),
            "trace_id": trace_id, "item": extra.pop("item", {"task": "t1"})}
    body.update(extra)
    return body


def new_trace() -> str:
    return "trace_" + uuid.uuid4().hex
