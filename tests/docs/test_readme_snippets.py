"""The README's Python snippets run as written, and the server they build behaves as described."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx

README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_namespace() -> dict:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) >= 2, "README lost its Python examples"
    namespace: dict = {"__name__": "readme"}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    return namespace


def _call(name: str, arguments: dict, trace_id: str, call_id: str) -> dict:
    return {"type": "function_call", "id": "fc_" + call_id, "call_id": call_id, "name": name,
            "arguments": json.dumps(arguments), "trace_id": trace_id, "item": {}}


async def test_readme_tool_and_grader_snippets_work_end_to_end():
    ns = _readme_namespace()
    server = ns["server"]
    auth = {"Authorization": "Bearer s3cret"}
    item = {"expected_cart": {"JKT-URB-009": 2}, "sku": "JKT-URB-009"}
    transport = httpx.ASGITransport(app=server)
    async with httpx.AsyncClient(transport=transport, base_url="http://t", headers=auth) as client:
        r = await client.post("/tools/add_to_cart", json=_call("add_to_cart", {"sku": "JKT-URB-009", "qty": 2},
                                                               "trace_a", "c1"))
        assert r.status_code == 200 and r.json()["output"] == "cart now has 2 items"
        r = await client.post("/tools/add_to_cart", json=_call("add_to_cart", {"sku": "X", "qty": 0},
                                                               "trace_a", "c2"))
        assert r.status_code == 400 and "qty must be at least 1" in r.text
        good = await client.post("/grade", json={"sample": {"output_text": "Added jkt-urb-009."},
                                                 "item": item, "trace_id": "trace_a"})
        none = await client.post("/grade", json={"sample": {"output_text": "hi"}, "item": item,
                                                 "trace_id": "trace_never_called"})
        denied = await client.post("/grade", headers={"Authorization": "Bearer wrong"},
                                   json={"sample": {"output_text": ""}, "item": item, "trace_id": "t"})
    # cart F1 = 1 (same key set), mention = 1 -> 0.8 * 1 + 0.2 * 1, gate passed (no checkout calls)
    assert good.status_code == 200 and abs(good.json()["score"] - 1.0) < 1e-9
    assert none.json() == {"score": 0.0}
    assert denied.status_code == 401
    assert server.dataset_tools()[0]["function"]["parameters"]["properties"]["sku"]["description"].startswith(
        "Product SKU")
