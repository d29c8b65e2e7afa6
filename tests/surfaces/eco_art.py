"""Play hosted items with ART's own types; print JSON per rollout. Run in ``.venv-art`` (by path: the venv has a
top-level ``tests`` package): ``python tests/surfaces/eco_art.py BASE_URL LLM_URL DATASET N ROLLOUTS TOKEN``.
What runs: ``rft_sdk.portability._players_trainers.art_rollouts`` (``art.Model`` pointed at the scripted server,
``rft_sdk.integrations.art.rollout`` gathered by ``art.gather_trajectory_groups``, all in flight).
"""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version

from rft_sdk.portability._players_trainers import art_rollouts


async def main() -> None:
    base_url, llm_url, dataset, n, rollouts, token = sys.argv[1:7]
    with open(dataset, encoding="utf-8") as lines:
        items = [json.loads(line) for line in lines if line.strip()][: int(n)]
    out = await art_rollouts(base_url, token, "retail", llm_url, items, int(rollouts))
    print(json.dumps({"art": version("openpipe-art"), "rollouts": out}))


asyncio.run(main())
