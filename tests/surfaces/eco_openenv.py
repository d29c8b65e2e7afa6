"""Drive the OpenEnv surface with OpenEnv's own client (``MCPToolClient``); print JSON per episode.

Run with the interpreter of the venv that has ``openenv`` (``.venv-eco``):
``python -m tests.surfaces.eco_openenv BASE_URL TOKEN SCRIPT_JSON`` where SCRIPT_JSON is
``{"episodes": [{"index": int, "calls": [[name, arguments, raw_or_null], ...], "answer": str|null}],
"parallel": bool}``; every episode runs in its own session (all at once when ``parallel``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version

from openenv.core.env_server.mcp_types import CallToolAction
from openenv.core.mcp_client import MCPToolClient


async def episode(base_url: str, token: str, spec: dict) -> dict:
    async with MCPToolClient(base_url=base_url, headers={"Authorization": f"Bearer {token}"}) as env:
        reset = await env.reset(index=spec["index"])
        steps = []
        result = None
        for name, arguments, raw in spec["calls"]:
            action = CallToolAction(tool_name=name, arguments=arguments,
                                    metadata={"raw_arguments": raw} if raw is not None else {})
            result = await env.step(action)
            obs = result.observation
            steps.append({"done": result.done, "reward": result.reward, "metadata": result.metadata,
                          "error": obs.error.model_dump(mode="json") if obs.error else None,
                          "result": obs.result})
            if result.done:
                break
        if spec.get("answer") is not None and not (result is not None and result.done):
            result = await env.step(CallToolAction(tool_name="submit_answer", arguments={"answer": spec["answer"]}))
        state = await env.state()
        return {"index": spec["index"], "trace_id": (reset.metadata or {}).get("trace_id"),
                "reset_tools": [t.name for t in reset.observation.tools], "steps": steps,
                "reward": result.reward if result else None, "done": result.done if result else False,
                "metadata": result.metadata if result else None, "step_count": state.step_count}


async def capacity(base_url: str, token: str, hold: int) -> dict:
    """Open ``hold`` sessions and keep them; then one more (refused at capacity); close one; then one more."""
    headers = {"Authorization": f"Bearer {token}"}
    held = [MCPToolClient(base_url=base_url, headers=headers) for _ in range(hold)]
    for client in held:
        await client.__aenter__()
        await client.reset()
    extra = MCPToolClient(base_url=base_url, headers=headers)
    try:
        await extra.__aenter__()
        await extra.reset()
        refused = None
    except Exception as exc:  # OpenEnv's client raises on the server's refusal
        refused = f"{type(exc).__name__}: {exc}"
    finally:
        await extra.close()
    await held.pop().close()
    again = MCPToolClient(base_url=base_url, headers=headers)
    async with again:
        after_close = (await again.reset()).metadata["trace_id"]
    for client in held:
        await client.close()
    return {"refused": refused, "after_close": after_close}


async def main() -> None:
    base_url, token, script = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    if "capacity" in script:
        print(json.dumps(await capacity(base_url, token, int(script["capacity"]))))
        return
    specs = script["episodes"]
    if script.get("parallel", True):
        results = await asyncio.gather(*(episode(base_url, token, s) for s in specs), return_exceptions=True)
    else:
        results = [await episode(base_url, token, s) for s in specs]
    out = [r if not isinstance(r, BaseException) else {"exception": f"{type(r).__name__}: {r}"} for r in results]
    print(json.dumps({"openenv": version("openenv"), "episodes": out}))


asyncio.run(main())
