"""Hosted-shaped tool and grade requests for the pattern examples' tests."""

from __future__ import annotations

import json
import uuid


def new_trace() -> str:
    """A fresh trace_id."""
    return "trace_" + uuid.uuid4().hex


async def call_tool(client, trace, name, args, item):
    """POST /tools/{name} exactly as the hosted service does."""
    cid = "call_" + uuid.uuid4().hex[:12]
    body = {"type": "function_call", "id": "fc_" + cid, "call_id": cid, "name": name,
            "arguments": json.dumps(args), "trace_id": trace, "item": item}
    return await client.post(f"/tools/{name}", json=body)


async def grade(client, trace, item, text):
    """POST /grade; returns (score, details)."""
    resp = await client.post("/grade", json={"sample": {"output_text": text}, "item": item, "trace_id": trace})
    assert resp.status_code == 200, resp.text
    return resp.json()["score"], json.loads(resp.headers.get("x-rft-grade-details", "{}"))
