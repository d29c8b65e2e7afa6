"""Play hosted items with ART's own types; print JSON per rollout. Run in ``.venv-art`` (by path: the venv has a
top-level ``tests`` package): ``python tests/surfaces/eco_art.py BASE_URL LLM_URL DATASET N ROLLOUTS TOKEN``.

``art.Model`` pointed at the scripted chat-completions server (``inference_base_url``), ``rollout`` from
``rft_sdk.integrations.art`` gathered with ``art.gather_trajectory_groups`` (every rollout in flight at once).
"""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version

import art

from rft_sdk.integrations.art import HostedScenario, blend_ruler, rollout


async def main() -> None:
    base_url, llm_url, dataset, n, rollouts, token = sys.argv[1:7]
    model = art.Model(name="scripted-gold", project="rft-sdk-tests", inference_base_url=llm_url + "/v1",
                      inference_api_key="scripted", inference_model_name="scripted-gold")
    with open(dataset, encoding="utf-8") as lines:
        items = [json.loads(line) for line in lines if line.strip()][: int(n)]
    scenarios = [HostedScenario(item=item, base_url=base_url, token=token, grader="retail", max_turns=30)
                 for item in items]
    groups = await art.gather_trajectory_groups(
        (art.TrajectoryGroup(rollout(model, scenario) for _ in range(int(rollouts))) for scenario in scenarios),
        pbar_desc=None)
    groups = [await blend_ruler(group) for group in groups]  # weight 0: the grader's reward, no judge call
    out = [{"trace_id": t.metadata["trace_id"], "task_id": t.metadata["task_id"], "reward": t.reward,
            "metrics": {k: v for k, v in t.metrics.items() if k != "grader_score"},
            "grader_score": t.metrics["grader_score"], "type": type(t).__name__}
           for group in groups for t in group.trajectories]
    print(json.dumps({"art": version("openpipe-art"), "rollouts": out}))


asyncio.run(main())
