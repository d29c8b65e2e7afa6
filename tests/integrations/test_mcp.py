"""The official ``mcp`` client against a real ``rft serve`` of the retail server with ``/mcp``."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest

pytest.importorskip("mcp")

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from examples.retail.app import server as retail_server
from rft_sdk.mcp import TRACE_HEADER, TRACE_META_KEY
from rft_sdk.testing import serve_process

TOKEN = "mcp-test-token"
PENDING_ORDER = "#W5918442"  # pending in the base database


@pytest.fixture(scope="module")
def base_url():
    with serve_process("tests.integrations.apps:retail_with_mcp", env={"RFT_AUTH_TOKENS": TOKEN}) as url:
        yield url


def _text(result) -> str:
    return "".join(part.text for part in result.content)


def test_mcp_requires_the_bearer_token(base_url):
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    denied = httpx.post(base_url + "/mcp", json=init, headers=headers)
    assert denied.status_code == 401
    assert denied.headers["www-authenticate"] == "Bearer"
    ok = httpx.post(base_url + "/mcp", json=init, headers={**headers, "Authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200
    assert ok.headers[TRACE_HEADER] == "trace_" + ok.headers["mcp-session-id"]


@pytest.mark.parametrize("header", [{"X-Functions-Key": TOKEN}, {"api-key": TOKEN}, {"Authorization": f"Bearer {TOKEN}"}])
def test_mcp_accepts_every_auth_header_the_hosted_routes_accept(base_url, header):
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    accept = {"Accept": "application/json, text/event-stream"}
    assert httpx.get(base_url + "/tools", headers=header).status_code == 200
    ok = httpx.post(base_url + "/mcp", json=init, headers={**accept, **header})
    assert ok.status_code == 200, ok.text
    wrong = httpx.post(base_url + "/mcp", json=init, headers={**accept, next(iter(header)): "wrong-token"})
    assert wrong.status_code == 401


def test_two_sessions_isolated_state_and_grading(base_url):
    async def scenario():
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as http:
            async with streamable_http_client(base_url + "/mcp", http_client=http) as (ra, wa), \
                    streamable_http_client(base_url + "/mcp", http_client=http) as (rb, wb), \
                    ClientSession(ra, wa) as a, ClientSession(rb, wb) as b:
                await a.initialize()
                await b.initialize()
                listed = await a.list_tools()
                schemas = {t.name: (t.description, t.input_schema) for t in listed.tools}
                hosted = {t["function"]["name"]: (t["function"]["description"], t["function"]["parameters"])
                          for t in retail_server.dataset_tools()}
                assert schemas == hosted

                cancelled = await a.call_tool("cancel_pending_order",
                                              {"order_id": PENDING_ORDER, "reason": "no longer needed"})
                assert not cancelled.is_error, _text(cancelled)
                in_a = await a.call_tool("get_order_status", {"order_id": PENDING_ORDER})
                in_b = await b.call_tool("get_order_status", {"order_id": PENDING_ORDER})
                assert "cancelled" in _text(in_a).lower()
                assert "pending" in _text(in_b).lower()
                trace_a, trace_b = in_a.meta[TRACE_META_KEY], in_b.meta[TRACE_META_KEY]
                assert trace_a != trace_b and trace_a.startswith("trace_")
                assert cancelled.meta[TRACE_META_KEY] == trace_a

                bad = await b.call_tool("get_order_status", {"order": PENDING_ORDER})
                assert bad.is_error
                assert json.loads(_text(bad))["error"]["code"] == "invalid_arguments"
                unknown = await b.call_tool("no_such_tool", {})
                assert unknown.is_error and "unknown_tool" in _text(unknown)
                return trace_a, trace_b

    trace_a, trace_b = anyio.run(scenario)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    body = {"sample": {"output_text": "cancelled"}, "item": {"answer": "cancelled"}, "trace_id": trace_a}
    graded = httpx.post(base_url + "/grade/order_status", json=body, headers=auth)
    assert graded.status_code == 200, graded.text
    assert graded.json() == {"score": 1.0}
    details = json.loads(graded.headers["x-rft-grade-details"])
    assert details["subscores"] == {"correct": 1.0, "called_lookup": 1.0}
    metrics = httpx.get(base_url + "/metrics?format=json", headers=auth).json()
    assert metrics["tools"]["cancel_pending_order"]["calls"] == 1
    assert metrics["counters"]["grades"] == 1


def test_mcp_only_surface_hides_the_hosted_routes():
    from rft_sdk import ToolServer
    from rft_sdk.mcp import mcp_app
    from rft_sdk.testing import run_server

    def echo(text: str) -> str:
        """Echo the text back.

        Args:
            text: what to echo.
        """
        return text

    tool_server = ToolServer(tools=[echo], auth_env_var=None)

    async def scenario(url):
        async with streamable_http_client(url + "/mcp") as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            assert [t.input_schema for t in listed.tools] == [tool_server.dataset_tools()[0]["function"]["parameters"]]
            result = await session.call_tool("echo", {"text": "hi"})
            assert not result.is_error and _text(result) == "hi"

    with run_server(mcp_app(tool_server)) as url:
        assert httpx.get(url + "/tools").status_code == 404
        anyio.run(scenario, url)


@pytest.mark.parametrize(("surfaces", "hosted_status"), [("hosted,mcp", 200), ("mcp", 404)])
def test_rft_serve_surfaces_flag_chooses_what_is_exposed(surfaces, hosted_status):
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    headers = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {TOKEN}"}
    with serve_process("examples.retail.app:server", "--surfaces", surfaces, env={"RFT_AUTH_TOKENS": TOKEN}) as url:
        ok = httpx.post(url + "/mcp", json=init, headers=headers)
        assert ok.status_code == 200 and ok.headers[TRACE_HEADER].startswith("trace_")
        assert httpx.get(url + "/tools", headers=headers).status_code == hosted_status


def test_unknown_surface_is_refused_with_the_choices():
    from rft_sdk import ToolServer

    with pytest.raises(ValueError, match=r"subset of \['hosted', 'mcp', 'nemo_gym', 'openenv'\], got unknown 'grpc'"):
        ToolServer(surfaces=["grpc"])
    with pytest.raises(ValueError, match="non-empty"):
        ToolServer(surfaces=[])
