"""Both hosted dialects on one server, over real uvicorn: Azure AI Foundry's single tool URL,
bare-argument tool tests, ``X-Functions-Key``/``api-key`` tokens, grades without ``trace_id``
or with only ``output_json``, a grader behind a secret path, and honest 413 trajectories.

Request bodies are those of the public samples: ``microsoft-foundry/fine-tuning``,
``Demos/Agentic_RFT_PrivatePreview/RFT_ToolCall/README.md`` (§2.3 and §4: tool call
wrapper, direct-argument curl test, grader body) and ``RFT_EndpointGrader/function_app.py``
(a grader reading only ``sample`` and ``item``); ``docs/hosted-protocol.md`` for OpenAI.
"""

from __future__ import annotations

import asyncio
import json
import logging

import httpx
import pytest
from sdk_helpers import new_trace

from rft_sdk import Grade, GradingContext, Rollout, ToolServer
from rft_sdk.protocol import GRADE_DETAILS_HEADER, MAX_BODY_BYTES
from rft_sdk.testing import run_server

TOKEN = "tok-" + "a" * 24
SECRET = "grader-secret-" + "b" * 24
CATALOG = [{"sku": "JKT-URB-009", "name": "Urban Puffer", "price": 149.50},
           {"sku": "JKT-ALP-001", "name": "Alpine Light Jacket", "price": 179.99}]
# Azure sample README §4.1: the wrapper the training service sends
AZURE_TOOL_CALL = {"type": "function_call", "id": "fc_123", "call_id": "call_123", "name": "search_catalog",
                   "arguments": "{\"query\":\"Urban Puffer\",\"top_k\":3}", "trace_id": "trace_abc", "item": {}}
# Azure sample README §2.3 (B): the direct-argument test of a tool endpoint
AZURE_BARE_ARGS = {"query": "Urban Puffer", "top_k": 1}
# Azure sample README §2.3 (A) / §4.3, and the same without trace_id (RFT_EndpointGrader reads sample and item)
AZURE_GRADE = {"sample": {"output_text": "JKT-URB-009"}, "item": {"reference_answer": "JKT-URB-009"},
               "trace_id": "trace_test"}


def _build(**kwargs) -> ToolServer:
    server = ToolServer(auth_tokens=[TOKEN], auth_env_var=None, **kwargs)
    server.seen = []

    @server.tool
    def search_catalog(query: str, top_k: int = 3, *, rollout: Rollout) -> dict:
        """Search the catalog.

        Args:
            query: words of the product name.
            top_k: most items returned.
        """
        server.seen.append((rollout.trace_id, rollout.call_id, dict(rollout.state)))
        rollout.state["searches"] = rollout.state.get("searches", 0) + 1
        words = query.lower().split()
        return {"items": [i for i in CATALOG if all(w in i["name"].lower() for w in words)][:top_k]}

    @server.tool
    def dump(n: int) -> str:
        """Return ``n`` bytes of text.

        Args:
            n: length.
        """
        return "x" * n

    @server.grader(default=True)
    def exact(ctx: GradingContext) -> Grade:
        """1.0 when the answer equals item["reference_answer"]; reports what it saw."""
        ok = ctx.output_text.strip() == str(ctx.item.get("reference_answer", ""))
        return Grade(1.0 if ok else 0.0, {"calls": float(ctx.count())},
                     [f"traced={ctx.traced}", f"text={ctx.output_text}"])

    return server


@pytest.fixture(scope="module")
def live():
    server = _build(grader_secret=SECRET)
    with run_server(server) as url, httpx.Client(base_url=url, timeout=10,
                                                 headers={"X-Functions-Key": TOKEN}) as client:
        yield server, client


# -- 1. dialects ---------------------------------------------------------------------------------
def test_single_url_dispatches_on_the_body_name(live):
    server, client = live
    body = {**AZURE_TOOL_CALL, "trace_id": new_trace()}
    r = client.post("/tools", json=body)
    assert r.status_code == 200
    assert r.json() == {"type": "function_call_output", "call_id": "call_123", "id": "fc_123",
                        "output": json.dumps({"items": [CATALOG[0]]}, separators=(",", ":"))}
    assert client.post("/tools", json=body).content == r.content  # replayed like /tools/{name}
    assert client.post(f"/tools/{body['name']}", json={**body, "call_id": "call_124"}).status_code == 200
    assert server.seen[-1][2] == {"searches": 1}  # same rollout state across both URLs


@pytest.mark.parametrize("body, status, field_or_code", [
    ({**AZURE_TOOL_CALL, "name": "nope"}, 404, "unknown_tool"),
    ({k: v for k, v in AZURE_TOOL_CALL.items() if k != "name"}, 422, "name"),
    ({**AZURE_TOOL_CALL, "name": 5}, 422, "name"),
])
def test_single_url_refuses_a_missing_or_unknown_name(live, body, status, field_or_code):
    _, client = live
    r = client.post("/tools", json=body)
    assert r.status_code == status
    error = r.json()["error"]
    assert error["code"] == field_or_code or [d["field"] for d in error["details"]] == [field_or_code]


def test_bare_arguments_run_one_stateless_call(live):
    server, client = live
    stats = server.store.stats()
    answers = [client.post("/tools/search_catalog", json=AZURE_BARE_ARGS) for _ in range(2)]
    assert [a.status_code for a in answers] == [200, 200]
    assert answers[0].json() == {"type": "function_call_output", "call_id": None, "id": None,
                                 "output": json.dumps({"items": [CATALOG[0]]}, separators=(",", ":"))}
    assert server.seen[-2:] == [("", None, {}), ("", None, {})]  # fresh empty state each time
    assert server.store.stats() == stats  # nothing stored
    r = client.post("/tools/search_catalog", json={"query": "x", "top_k": "many"})
    assert r.status_code == 422 and [d["field"] for d in r.json()["error"]["details"]] == ["top_k"]


def test_grade_without_trace_id_and_with_only_output_json(live):
    _, client = live
    no_trace = {k: v for k, v in AZURE_GRADE.items() if k != "trace_id"}
    r = client.post("/grade", json=no_trace)
    assert r.status_code == 200 and r.json() == {"score": 1.0}
    assert json.loads(r.headers[GRADE_DETAILS_HEADER])["reasons"][0] == "traced=False"
    r = client.post("/grade", json=AZURE_GRADE)
    assert r.json() == {"score": 1.0}
    assert json.loads(r.headers[GRADE_DETAILS_HEADER])["reasons"][0] == "traced=True"
    only_json = {"sample": {"output_json": {"sku": "JKT-URB-009"}}, "item": {"reference_answer": "x"}}
    r = client.post("/grade", json=only_json)
    assert r.status_code == 200 and r.json() == {"score": 0.0}
    assert json.loads(r.headers[GRADE_DETAILS_HEADER])["reasons"][1] == 'text={"sku":"JKT-URB-009"}'


# -- 2. auth that fits each service -------------------------------------------------------------
@pytest.mark.parametrize("headers, status", [
    ({"Authorization": f"Bearer {TOKEN}"}, 200), ({"X-Functions-Key": TOKEN}, 200), ({"api-key": TOKEN}, 200),
    ({"Authorization": TOKEN}, 401), ({"X-Functions-Key": f"Bearer {TOKEN}"}, 401),
    ({"api-key": TOKEN[:-1]}, 401), ({}, 401),
])
def test_token_headers_of_each_service(live, headers, status):
    _, client = live
    r = httpx.post(str(client.base_url).rstrip("/") + "/tools/search_catalog", json=AZURE_BARE_ARGS,
                   headers=headers)
    assert r.status_code == status
    if status == 401:
        assert r.json()["error"]["code"] == "unauthorized" and TOKEN not in r.text


def test_grader_behind_a_secret_path_needs_no_header_and_is_never_logged(caplog):
    server = _build(grader_secret=SECRET)
    caplog.set_level(logging.DEBUG)
    with run_server(server, log_level="debug", log_config=None) as url:
        r = httpx.post(f"{url}/grade/s/{SECRET}", json=AZURE_GRADE)
        assert r.status_code == 200 and r.json() == {"score": 1.0}
        r = httpx.post(f"{url}/grade/s/{SECRET}/exact", json=AZURE_GRADE)
        assert r.status_code == 200 and r.json() == {"score": 1.0}
        for wrong in (SECRET[:-1], SECRET + "x", "-", ""):
            assert httpx.post(f"{url}/grade/s/{wrong}", json=AZURE_GRADE).status_code in (401, 404)
        assert httpx.post(f"{url}/grade", json=AZURE_GRADE).status_code == 401  # the header route still needs one
        assert httpx.post(f"{url}/tools/search_catalog", json=AZURE_BARE_ARGS).status_code == 401
    server_logs = "\n".join(r.getMessage()
                             for r in caplog.records if r.name.startswith(("uvicorn", "rft_sdk")))
    assert "/grade/s/-" in server_logs  # the access log saw the request, redacted
    assert SECRET[:-1] not in server_logs and TOKEN not in server_logs
    config = server.job_config("https://rft.example.com", token=TOKEN)["method"]["reinforcement"]
    assert config["grader"]["url"] == f"https://rft.example.com/grade/s/{SECRET}"
    assert config["grader"]["headers"] == {}
    assert config["tools"][0]["headers"] == {"Authorization": f"Bearer {TOKEN}"}


def test_no_secret_path_without_a_secret():
    server = _build()
    with run_server(server) as url:
        assert httpx.post(f"{url}/grade/s/{SECRET}", json=AZURE_GRADE).status_code == 401
    assert server.grader_spec("http://h")["url"] == "http://h/grade"


@pytest.mark.parametrize("secret", ["short", "has space" * 4, "ünïcode-secret-xxxxxx"])
def test_weak_grader_secret_is_refused(secret):
    with pytest.raises(ValueError, match="16 URL-safe characters"):
        ToolServer(grader_secret=secret, auth_env_var=None)


def test_unprotected_non_loopback_bind_warns(caplog):
    open_server = ToolServer(auth_env_var=None, tools=[lambda_tool])
    assert "WITHOUT authentication" in open_server.exposure_warning("0.0.0.0")
    assert open_server.exposure_warning("127.0.0.1") is None and open_server.exposure_warning("::1") is None
    assert _build().exposure_warning("0.0.0.0") is None  # tokens configured

    async def first_request() -> int:
        transport = httpx.ASGITransport(app=open_server)  # scope["server"] is ("rft.example.com", 80)
        async with httpx.AsyncClient(transport=transport, base_url="http://rft.example.com") as c:
            return (await c.get("/healthz")).status_code

    with caplog.at_level(logging.WARNING, logger="rft_sdk"):
        assert asyncio.run(first_request()) == 200
    assert "WITHOUT authentication" in caplog.text


def lambda_tool(x: int) -> int:
    """Return x.

    Args:
        x: a number.
    """
    return x


# -- 5. honest trajectories ---------------------------------------------------------------------
def test_output_over_the_limit_is_recorded_as_the_413_the_model_saw(live):
    server, client = live
    trace = new_trace()
    body = {"type": "function_call", "id": "fc_big", "call_id": "call_big", "name": "dump",
            "arguments": json.dumps({"n": MAX_BODY_BYTES}), "trace_id": trace, "item": {}}
    answers = [client.post("/tools/dump", json=body) for _ in range(2)]
    assert [a.status_code for a in answers] == [413, 413] and answers[0].content == answers[1].content
    assert answers[0].json()["error"]["code"] == "output_too_large" and "output" not in answers[0].json()
    small = {**body, "call_id": "call_small", "arguments": json.dumps({"n": 10})}
    assert client.post("/tools/dump", json=small).json()["output"] == "x" * 10
    record = asyncio.run(server.store.load(trace)).trajectory
    assert [(r.call_id, r.status, r.output is None) for r in record] == [("call_big", 413, True),
                                                                          ("call_small", 200, False)]
    assert "413" in record[0].error or "exceeds" in record[0].error
