"""Play hosted items through verl's own tool classes; print JSON per rollout. Run in ``.venv-verl`` (by path: verl's
wheel ships a top-level ``tests`` package): ``python tests/surfaces/eco_verl.py BASE_URL LLM_URL DATASET N ROLLOUTS
TOKEN``. What runs: ``rft_sdk.portability._players_trainers.verl_rollouts`` (verl's tool registry,
``ToolAgentLoop._call_tool``, ``AgentData``; the reward function called as verl's reward manager calls it).
"""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version

from rft_sdk.portability._players_trainers import verl_rollouts


async def main() -> None:
    base_url, llm_url, dataset, n, rollouts, token = sys.argv[1:7]
    with open(dataset, encoding="utf-8") as lines:
        items = [json.loads(line) for line in lines if line.strip()][: int(n)]
    out = await verl_rollouts(base_url, token, "retail", llm_url, items, int(rollouts))
    print(json.dumps({"verl": version("verl"), "rollouts": out}))


asyncio.run(main())
