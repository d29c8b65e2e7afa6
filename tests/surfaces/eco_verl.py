"""Play hosted items through verl's own agent loop; print JSON per rollout. Run in ``.venv-verl`` (by path: verl's
wheel ships a top-level ``tests`` package): ``python tests/surfaces/eco_verl.py BASE_URL DATASET N ROLLOUTS TOKEN``.
What runs: ``rft_sdk.portability._verl_loop.verl_agent_loop_rollouts`` (verl's tool registry, its agent-loop
config instantiated by hydra, ``ToolAgentLoop.run`` as ``HostedToolAgentLoop`` with a scripted token-level model,
the reward by verl's ``NaiveRewardManager.run_single``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version

from rft_sdk.portability._verl_loop import verl_agent_loop_rollouts


async def main() -> None:
    base_url, dataset, n, rollouts, token = sys.argv[1:6]
    with open(dataset, encoding="utf-8") as lines:
        items = [json.loads(line) for line in lines if line.strip()][: int(n)]
    out = await verl_agent_loop_rollouts(base_url, token, "retail", items, int(rollouts))
    print(json.dumps({"verl": version("verl"), "rollouts": out}))


asyncio.run(main())
