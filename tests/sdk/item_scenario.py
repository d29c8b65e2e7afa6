"""A tool server receiving the retail dataset line with every call, over a real socket: what each request
gets, what the tools saw and what was recorded. Run in process and (``python item_scenario.py --no-orjson``)
in a child where ``import orjson`` fails: the two runs must print the same thing (``test_item_semantics``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RETAIL = ROOT / "examples" / "retail" / "data" / "retail_train.jsonl"


def retail_item() -> dict[str, Any]:
    with open(RETAIL, encoding="utf-8") as f:
        item: dict[str, Any] = json.loads(f.readline())
        return item


def run() -> dict[str, Any]:
    import httpx

    from rft_sdk import GradingContext, Rollout, ToolServer
    from rft_sdk.testing import run_server

    server = ToolServer(auth_env_var=None)
    seen: list[Any] = []

    @server.tool
    def note(text: str, rollout: Rollout) -> str:
        """Record a note (never reads the item).

        Args:
            text: the note.
        """
        seen.append(("note", rollout.call_id))
        rollout.state.setdefault("notes", []).append(text)
        return "ok"

    @server.tool
    async def task_id(rollout: Rollout) -> str:
        """Answer the item's first message role, and scribble on the item (never kept)."""
        first = rollout.item["messages"][0]["role"]
        rollout.item["scribbled"] = True
        seen.append(("task_id", rollout.call_id, "scribbled" in rollout.item, len(rollout.item)))
        return first

    @server.grader
    def grade(ctx: GradingContext) -> float:
        """1.0 when the item came back whole and two notes were taken."""
        seen.append(("grade", "scribbled" in ctx.item, len(ctx.item), [r.call_id for r in ctx.trajectory]))
        return 1.0 if len(ctx.state.get("notes", [])) == 2 and "scribbled" not in ctx.item else 0.0

    item = retail_item()
    other = {**item, "task_id": "another"}
    compact = json.dumps(item, separators=(",", ":"), ensure_ascii=False)
    spaced = json.dumps(item, indent=2)  # the same item, other bytes

    def call(call_id: str, trace_id: str, tool: str, item_text: str | None, **arguments: Any) -> bytes:
        head = json.dumps({"type": "function_call", "call_id": call_id, "trace_id": trace_id, "name": tool,
                           "arguments": json.dumps(arguments)})[:-1]
        return (head + ("" if item_text is None else ',"item":' + item_text) + "}").encode()

    steps = [
        ("first call, no item", "t0", call("c0", "t0", "note", None, text="a")),
        ("a later call brings the item: adopted", "t0", call("c1", "t0", "task_id", compact)),
        ("first call with the item", "t1", call("c0", "t1", "note", compact, text="a")),
        ("the item again (bytes reused)", "t1", call("c1", "t1", "task_id", compact)),
        ("the same item, other formatting", "t1", call("c2", "t1", "note", spaced, text="b")),
        ("another item under the same trace_id", "t1", call("c3", "t1", "note", json.dumps(other), text="x")),
        ("a retry of c1 (replayed)", "t1", call("c1", "t1", "task_id", compact)),
        ("item {} means none", "t1", call("c4", "t1", "task_id", "{}")),
    ]
    out: dict[str, Any] = {"steps": []}
    with run_server(server) as url, httpx.Client(base_url=url) as client:
        for label, _, content in steps:
            r = client.post(f"/tools/{json.loads(content)['name']}", content=content,
                            headers={"content-type": "application/json"})
            body = r.json()
            out["steps"].append([label, r.status_code, body.get("output"), (body.get("error") or {}).get("code")])
        g = client.post("/grade", content=json.dumps({"sample": {"output_text": "done"}, "item": item,
                                                      "trace_id": "t1"}).encode(),
                        headers={"content-type": "application/json"})
        out["grade"] = [g.status_code, g.json()]
        late = client.post("/tools/note", content=call("c9", "t1", "note", compact, text="late"),
                           headers={"content-type": "application/json"})
        out["late"] = [late.status_code, late.json()["error"]["code"]]
        # t2: graded with the item's bytes as its calls sent them (reused), then retried with other formatting:
        # the same request by value, so the same fingerprint: replayed, not refused
        for i, text in enumerate(["a", "b"]):
            client.post("/tools/note", content=call(f"c{i}", "t2", "note", compact, text=text),
                        headers={"content-type": "application/json"})
        regrades = []
        for item_text in (compact, compact, spaced):
            content = ('{"sample":{"output_text":"done"},"item":' + item_text + ',"trace_id":"t2"}').encode()
            g = client.post("/grade", content=content, headers={"content-type": "application/json"})
            regrades.append([g.status_code, g.json()])
        out["regrades"] = regrades
    out["seen"] = [list(s) for s in seen]
    out["counters"] = {k: v for k, v in server.metrics["counters"].items()
                       if k in ("item_conflicts", "replayed_calls", "tool_calls", "grades", "grades_replayed")}
    return out


if __name__ == "__main__":
    if "--no-orjson" in sys.argv:
        sys.modules["orjson"] = None  # type: ignore[assignment]  # import orjson raises ImportError
    result = run()
    import rft_sdk._wire._json

    result["orjson"] = rft_sdk._wire._json.orjson is not None
    print(json.dumps(result))
