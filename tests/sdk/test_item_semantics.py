"""The dataset item every hosted call carries: kept once per rollout, compared cheaply, decoded only when read,
another item under the same trace_id refused (409 ``item_conflict``) -- with and without orjson."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from item_scenario import retail_item, run

from rft_sdk import Rollout, ToolServer
from rft_sdk._wire._json import json_object

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def with_orjson():
    return run()


def test_the_item_is_kept_once_compared_and_refused_when_it_differs(with_orjson):
    steps = {label: rest for label, *rest in with_orjson["steps"]}
    assert steps["a later call brings the item: adopted"] == [200, "system", None]
    assert steps["the item again (bytes reused)"] == [200, "system", None]
    assert steps["the same item, other formatting"] == [200, "ok", None]  # same value: same item
    assert steps["another item under the same trace_id"] == [409, None, "item_conflict"]
    assert steps["a retry of c1 (replayed)"] == [200, "system", None]
    assert steps["item {} means none"] == [200, "system", None]  # the rollout's own item is used
    assert with_orjson["grade"] == [200, {"score": 1.0}] and with_orjson["late"] == [409, "already_graded"]
    # the refused call ran nothing and left nothing: the grader saw c0, c1, c2, c4 and an unscribbled item
    assert ["grade", False, len(retail_item()), ["c0", "c1", "c2", "c4"]] in with_orjson["seen"]
    assert not any(s[0] == "note" and s[1] == "c3" for s in with_orjson["seen"])
    assert with_orjson["counters"]["item_conflicts"] == 1 and with_orjson["counters"]["replayed_calls"] == 1
    # a grade whose item bytes were reused has the fingerprint of the same request decoded whole
    assert with_orjson["regrades"] == [[200, {"score": 1.0}]] * 3 and with_orjson["counters"]["grades_replayed"] == 2


def test_the_core_install_without_orjson_answers_the_same(with_orjson):
    child = subprocess.run([sys.executable, str(HERE / "item_scenario.py"), "--no-orjson"], capture_output=True,
                           text=True, timeout=120, cwd=HERE)
    assert child.returncode == 0, child.stderr
    without = json.loads(child.stdout)
    assert without.pop("orjson") is False  # really without it
    assert without == with_orjson


async def test_a_tool_that_never_reads_the_item_never_decodes_it(monkeypatch):
    decoded: list[int] = []
    monkeypatch.setattr("rft_sdk._server._items.json_object", lambda what, raw: decoded.append(len(raw)) or json_object(what, raw))
    monkeypatch.setattr("rft_sdk._stores._records.json_object",
                        lambda what, raw: decoded.append(len(raw)) or json_object(what, raw))
    server = ToolServer(auth_env_var=None)

    @server.tool
    async def bump(rollout: Rollout) -> str:
        """Count calls."""
        rollout.state["n"] = rollout.state.get("n", 0) + 1
        return str(rollout.state["n"])

    @server.tool
    async def read(rollout: Rollout) -> str:
        """Read the item."""
        return str(len(rollout.item["messages"]))

    item = json.dumps(retail_item()).encode()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://t") as client:
        for i, tool in enumerate(["bump", "bump", "bump", "read"]):
            content = (b'{"type":"function_call","call_id":"c%d","trace_id":"t1","name":"%s","arguments":"{}",'
                       b'"item":' % (i, tool.encode())) + item + b"}"
            r = await client.post(f"/tools/{tool}", content=content, headers={"content-type": "application/json"})
            assert r.status_code == 200, r.text
            if i < 3:
                assert decoded == [] and r.json()["output"] == str(i + 1)
    assert decoded == [len(item)] and r.json()["output"] == str(len(retail_item()["messages"]))
    assert server.items.get("t1") is not None  # the rollout's item bytes, kept for its next call
    stored = await server.store.load("t1")
    assert stored is not None and stored.held_item_json == item  # the store keeps the bytes as sent
