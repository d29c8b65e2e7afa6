"""Unit tests of the TRL adapter's client logic (respx mocks the server; no trainer)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
import respx
from transformers.utils import get_json_schema

from examples.retail.app import server as retail_server
from rft_sdk.integrations._signatures import python_type, schema_method
from rft_sdk.integrations.trl import ToolServerEnvironment, hosted_dataset

BASE = "http://tools.test"
TOOLS = retail_server.dataset_tools()


def test_schema_methods_render_the_hosted_schema_for_trl():
    methods = {d["function"]["name"]: schema_method(d, lambda self, name, args: f"{name}:{args}") for d in TOOLS}
    env = type("Env", (), methods)()
    for definition in TOOLS:
        hosted = definition["function"]["parameters"]
        rendered = get_json_schema(getattr(env, definition["function"]["name"]))["function"]["parameters"]
        assert set(rendered["properties"]) == set(hosted["properties"])
        assert set(rendered.get("required", [])) == set(hosted.get("required", []))
        for name, prop in hosted["properties"].items():
            assert rendered["properties"][name]["type"] == prop["type"]
            assert rendered["properties"][name].get("items") == prop.get("items")
    assert env.get_order_status(order_id="#W1") == "get_order_status:{'order_id': '#W1'}"


def test_python_type_mapping_and_refusals():
    assert python_type({"type": ["string", "null"]}) == (str | None)
    assert python_type({"anyOf": [{"type": "integer"}, {"type": "null"}]}) == (int | None)
    assert python_type({"type": "array", "items": {"type": "number"}}) == list[float]
    with pytest.raises(ValueError, match="'tuple'"):
        python_type({"type": "tuple"})
    reset = {"type": "function", "function": {"name": "reset", "parameters": {"type": "object", "properties": {}}}}
    with pytest.raises(ValueError, match="'reset'"):
        schema_method(reset, lambda *a: "")


def _mock_tools(router):
    router.get(f"{BASE}/tools").respond(200, json={"tools": TOOLS})


@respx.mock
def test_tool_calls_use_the_hosted_wire_format_and_show_4xx_bodies():
    _mock_tools(respx)
    route = respx.post(f"{BASE}/tools/get_order_status").mock(side_effect=[
        httpx.Response(200, json={"type": "function_call_output", "output": "delivered"}),
        httpx.Response(422, json={"error": {"code": "invalid_arguments", "message": "bad"}}),
    ])
    factory = ToolServerEnvironment(BASE, token="t", tools=["get_order_status"])
    env = factory()
    item = {"messages": [{"role": "user", "content": "hi"}], "answer": "delivered"}
    assert env.reset(**hosted_dataset([item])[0]) is None
    assert env.get_order_status(order_id="#W1") == "delivered"
    body = json.loads(route.calls[0].request.content)
    assert body["type"] == "function_call" and body["name"] == "get_order_status"
    assert json.loads(body["arguments"]) == {"order_id": "#W1"}
    assert body["trace_id"] == env.trace_id and body["item"] == item
    assert route.calls[0].request.headers["authorization"] == "Bearer t"
    assert json.loads(env.get_order_status(order_id=7))["error"]["code"] == "invalid_arguments"
    assert env.tool_calls == 2 and not env.failed


@respx.mock
def test_5xx_is_retried_then_the_rollout_is_discarded():
    _mock_tools(respx)
    route = respx.post(f"{BASE}/tools/get_order_status").respond(503, json={"error": {"code": "store_unavailable"}})
    grade = respx.post(f"{BASE}/grade/g").respond(200, json={"score": 1.0})
    factory = ToolServerEnvironment(BASE, grader="g", tools=["get_order_status"])
    env = factory()
    env.reset(rft_item=json.dumps({"answer": "x"}))
    with pytest.raises(RuntimeError, match="rollout discarded"):
        env.get_order_status(order_id="#W1")
    assert route.call_count == 3
    assert asyncio.run(factory.grader_reward([[{"role": "assistant", "content": "x"}]], [env])) == [None]
    assert grade.call_count == 0


@respx.mock
def test_reward_is_the_grader_score_with_subscores_logged():
    _mock_tools(respx)
    grade = respx.post(f"{BASE}/grade").respond(200, json={"score": 0.5},
                                                headers={"x-rft-grade-details": '{"subscores":{"correct":0.5}}'})
    factory = ToolServerEnvironment(BASE)
    envs = [factory(), factory()]
    for env in envs:
        env.reset(rft_item=json.dumps({"answer": "x"}))
    metrics, extra = {}, {}
    completions = [[{"role": "assistant", "content": "final"}], "plain"]
    rewards = asyncio.run(factory.grader_reward(completions, envs, log_metric=metrics.__setitem__,
                                                log_extra=extra.__setitem__))
    assert rewards == [0.5, 0.5]
    sent = [json.loads(c.request.content) for c in grade.calls]
    assert sorted(s["sample"]["output_text"] for s in sent) == ["final", "plain"]
    assert {s["trace_id"] for s in sent} == {e.trace_id for e in envs}
    assert metrics["grader/correct"] == 0.5 and metrics["grader/discarded"] == 0.0
    assert extra["trace_id"] == [e.trace_id for e in envs]


def test_hosted_dataset_refuses_lines_without_messages():
    with pytest.raises(ValueError, match="line 2"):
        hosted_dataset([{"messages": [{"role": "user", "content": "a"}]}, {"tools": []}])
