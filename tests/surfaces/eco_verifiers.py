"""Run verifiers' own evaluation loop (``env.evaluate``) against a tool server; print JSON per rollout.

Run with the interpreter of the venv that has verifiers (``.venv-eco``):
``python -m tests.surfaces.eco_verifiers BASE_URL LLM_URL DATASET N ROLLOUTS [TOKEN] [MAX_TURNS]``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

import verifiers as vf


async def main() -> None:
    base_url, llm_url, dataset, n, rollouts = sys.argv[1:6]
    token = sys.argv[6] if len(sys.argv) > 6 else None
    max_turns = int(sys.argv[7]) if len(sys.argv) > 7 else 20
    env = vf.load_environment("rft_sdk.integrations.verifiers", base_url=base_url, token=token,
                              eval_dataset=dataset, max_turns=max_turns)
    os.environ["SCRIPTED_LLM_KEY"] = "scripted"
    # verifiers' defaults otherwise (max_retries 10, connect_timeout 5 s), as its docs show the client: with
    # max_retries=0, one failed request to the scripted model fails its rollout, and stop 53's CI lost one rollout
    # on a loaded machine (its error was not printed; test_verifiers.py prints it now)
    client = vf.ClientConfig(client_type="openai_chat_completions", api_base_url=llm_url + "/v1",
                             api_key_var="SCRIPTED_LLM_KEY")
    results = await env.evaluate(client=client, model="scripted-gold", num_examples=int(n),
                                 rollouts_per_example=int(rollouts), max_concurrent=-1, on_progress=[],
                                 state_columns=["trace_id"])
    out = []
    for state in results["outputs"] if isinstance(results, dict) and "outputs" in results else results.outputs:
        get = state.get if isinstance(state, dict) else (lambda k, d=None, s=state: getattr(s, k, d))
        info = get("info") or {}
        item = json.loads(info["rft_item"]) if isinstance(info, dict) and "rft_item" in info else {}
        out.append({"trace_id": get("trace_id"), "reward": get("reward"), "metrics": get("metrics"),
                    "task_id": item.get("task_id"), "error": str(get("error")) if get("error") else None})
    print(json.dumps({"verifiers": vf.__version__, "rollouts": out}))


asyncio.run(main())
