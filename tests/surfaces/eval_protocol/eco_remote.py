"""Fireworks RFT's remote rollout server (``rft_sdk.integrations.eval_protocol``) driven with EP's own request builder.

Run in ``.venv-eco2``: ``python -m tests.surfaces.eval_protocol.eco_remote TOOLS_URL LLM_URL DATASET N ROLLOUTS TOKEN``.
For each of N items x ROLLOUTS rollouts (all at once): an ``EvaluationRow`` from ``hosted_rows`` with the ids EP
gives it, EP's ``build_init_request`` (what ``RemoteRolloutProcessor`` POSTs), ``POST /init``, then ``GET /status``
until terminated. Prints one JSON line: per rollout the status, the ``trace_id`` and the evaluator's score of the
trajectory (the rollout's messages plus the model's final answer, as the Fireworks trace would bring them back).
"""

import asyncio
import json
import sys
import uuid
from importlib.metadata import version

import httpx
from eval_protocol.models import Message, Status
from eval_protocol.pytest.tracing_utils import build_init_request
from eval_protocol.pytest.types import RolloutProcessorConfig

from rft_sdk.integrations.eval_protocol import evaluate_row, hosted_rows, remote_rollout_app
from rft_sdk.testing import run_server


async def main() -> None:
    tools_url, llm_url, dataset, n, rollouts, token = sys.argv[1:7]
    items = [json.loads(line) for line in open(dataset, encoding="utf-8") if line.strip()][: int(n)]
    config = RolloutProcessorConfig(completion_params={"model": "scripted-gold"}, mcp_config_path="",
                                    semaphore=asyncio.Semaphore(64))
    init_token = "init-" + uuid.uuid4().hex  # /init is authenticated (its own token) and calls only llm_url
    app = remote_rollout_app(tools_url, items, token=token, auth_tokens=[init_token], auth_env_var=None,
                             model_base_urls=[llm_url + "/v1"])
    with run_server(app) as remote:
        async with httpx.AsyncClient(base_url=remote, timeout=60,
                                     headers={"Authorization": f"Bearer {init_token}"}) as client:

            async def one(row, item):
                meta = row.execution_metadata
                meta.invocation_id, meta.experiment_id, meta.run_id = "inv", "exp", "run"
                meta.rollout_id = f"rollout-{uuid.uuid4().hex[:12]}"
                init = build_init_request(row, config, llm_url + "/v1")
                answer = await client.post("/init", json=init.model_dump(mode="json"))
                assert answer.status_code == 200, answer.text
                while True:
                    status = (await client.get("/status", params={"rollout_id": meta.rollout_id})).json()
                    if status["terminated"]:
                        break
                    await asyncio.sleep(0.1)
                meta.extra = {"trace_id": (status.get("info") or {}).get("trace_id")}
                row.messages.append(Message(role="assistant", content=item["reference_answer"]))
                row = await evaluate_row(row, tools_url, token=token)
                return {"task_id": item["task_id"], "status": Status.Code(status["status"]["code"]).name,
                        "trace_id": meta.extra["trace_id"], "score": row.evaluation_result.score}

            jobs = [one(row, item) for _ in range(int(rollouts)) for row, item in zip(hosted_rows(items), items)]
            results = await asyncio.gather(*jobs)
            unknown = await client.post("/init", json={**init_body(items, config, llm_url), "metadata": {
                "invocation_id": "i", "experiment_id": "e", "rollout_id": "r", "run_id": "u", "row_id": "nope"}})
    print(json.dumps({"eval_protocol": version("eval-protocol"), "rollouts": results,
                      "unknown_row": unknown.status_code}))


def init_body(items, config, llm_url):
    row = hosted_rows(items[:1])[0]
    meta = row.execution_metadata
    meta.invocation_id = meta.experiment_id = meta.run_id = meta.rollout_id = "x"
    return build_init_request(row, config, llm_url + "/v1").model_dump(mode="json")


asyncio.run(main())
