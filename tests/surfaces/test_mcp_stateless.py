"""The stateless MCP revision (2026-07-28) through ``mcp.Client`` in its default mode, against a real ``rft serve``.

``mcp.Client(url)`` (mode ``"auto"``) negotiates 2026-07-28 with the server: no session, so the rollout is the
handle ``start_rollout`` mints. Ten retail test items, four rollouts of each in parallel (two gold, two gold minus
its last call): every reward equals the hosted wire's score of the trajectory the server recorded, and each
rollout's recorded trajectory is exactly its own calls.
"""

from __future__ import annotations

import json

import anyio
import httpx2
import pytest

pytest.importorskip("mcp")

from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from rft_sdk import Rollout
from rft_sdk.mcp import HANDLE_ARGUMENT, HANDLE_META_KEY, START_TOOL, TRACE_META_KEY
from rft_sdk.surfaces import HostedClient, new_trace_id
from rft_sdk.surfaces._mcp_handles import HANDLE_KEY_ENV_VAR, InvalidHandle, RolloutHandles
from rft_sdk.testing import serve_process

from .conftest import ITEMS, TOKEN, stored

OTHER_TOKEN = "another-valid-token"
PENDING_ORDER = "#W5918442"  # pending in the base database


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``rft serve tests.integrations.apps:retail_recorded --surfaces hosted,mcp`` with two valid tokens."""
    store_path = tmp_path_factory.mktemp("mcp_stateless") / "rollouts.db"
    env = {"RFT_AUTH_TOKENS": f"{TOKEN},{OTHER_TOKEN}", "RFT_TEST_STORE": str(store_path)}
    with serve_process("tests.integrations.apps:retail_recorded", "--surfaces", "hosted,mcp", env=env) as url:
        from rft_sdk import SQLiteStore

        yield url, SQLiteStore(store_path)


def hosted_replay_score(base_url: str, rollout, item: dict) -> float:
    """The hosted wire's score of the same trajectory: every recorded call re-sent (arguments verbatim) under a
    fresh trace_id with the item (an MCP call carries none), then graded with the item's reference answer."""
    async def replay() -> float:
        async with HostedClient.over_http(base_url, token=TOKEN) as client:
            trace_id = new_trace_id()
            for record in rollout.trajectory:
                await client.call_tool(trace_id, record.name, record.arguments, item)
            return (await client.grade(trace_id, item["reference_answer"], item)).score
    return anyio.run(replay)


def _client(url: str, token: str) -> tuple[httpx2.AsyncClient, Client]:
    """``mcp.Client`` in its default mode (``"auto"``), headers through an ``httpx2`` client as mcp 2.x documents."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return http, Client(streamable_http_client(url + "/mcp", http_client=http))


def _error(result) -> str:
    assert result.is_error
    return json.loads(result.content[0].text)["error"]["code"]


async def _play(url: str, item: dict, actions: list[dict]) -> tuple[str, list[tuple[str, dict]]]:
    """One rollout through a fresh default-mode client: start_rollout, the actions (handle as an argument)."""
    http, client = _client(url, TOKEN)
    async with http, client:
        assert client.session.protocol_version == "2026-07-28"  # what the default mode negotiated
        started = await client.call_tool(START_TOOL, {})
        assert not started.is_error
        handle, trace_id = started.structured_content[HANDLE_ARGUMENT], started.structured_content["trace_id"]
        made = []
        for action in actions:
            arguments = dict(action.get("arguments") or {})
            result = await client.call_tool(action["name"], {**arguments, HANDLE_ARGUMENT: handle})
            assert result.meta[TRACE_META_KEY] == trace_id
            made.append((action["name"], arguments))
    return trace_id, made


def test_default_client_ten_items_four_parallel_rollouts_score_like_the_hosted_wire(server):
    url, store = server
    plays: list[tuple[dict, bool, str, list]] = []

    async def run_item(item: dict) -> None:
        async def one(gold: bool) -> None:
            actions = item["actions"] if gold else item["actions"][:-1]
            trace_id, made = await _play(url, item, actions)
            plays.append((item, gold, trace_id, made))

        async with anyio.create_task_group() as group:
            for gold in (True, True, False, False):
                group.start_soon(one, gold)

    async def grade_all() -> list[float]:
        async with HostedClient.over_http(url, token=TOKEN) as hosted:
            return [(await hosted.grade(trace, item["reference_answer"], item)).score for item, _, trace, _ in plays]

    async def main() -> list[float]:
        for item in ITEMS[:10]:
            await run_item(item)
        return await grade_all()

    rewards = anyio.run(main)
    assert len(plays) == 40 and len({trace for _, _, trace, _ in plays}) == 40
    records = stored(store, [trace for _, _, trace, _ in plays])
    for (item, gold, trace, made), reward in zip(plays, rewards, strict=True):
        rollout, grades = records[trace]
        # isolation: the rollout recorded exactly its own calls, in order, with no other rollout's
        assert [(call.name, call.arguments) for call in rollout.trajectory] == made
        assert reward == hosted_replay_score(url, rollout, item), (item["task_id"], gold)
    by_item: dict[str, dict[bool, set[float]]] = {}
    for (item, gold, _, _), reward in zip(plays, rewards, strict=True):
        by_item.setdefault(item["task_id"], {}).setdefault(gold, set()).add(reward)
    assert all(scores[True] == {1.0} for scores in by_item.values())  # parallel golds never saw each other's writes
    assert sum(scores[False] != {1.0} for scores in by_item.values()) >= 5  # a missing last call shows


def test_the_handle_is_bound_to_the_credential_and_outlives_the_client(server):
    url, _ = server

    async def scenario() -> None:
        http, client = _client(url, TOKEN)
        async with http, client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert HANDLE_ARGUMENT in listed["get_order_status"].input_schema["required"]
            assert listed[START_TOOL].input_schema["properties"] == {}
            no_handle = await client.call_tool("get_order_status", {"order_id": PENDING_ORDER})
            assert _error(no_handle) == "no_rollout"
            handle = (await client.call_tool(START_TOOL, {})).structured_content[HANDLE_ARGUMENT]
            cancelled = await client.call_tool("cancel_pending_order", {
                "order_id": PENDING_ORDER, "reason": "no longer needed", HANDLE_ARGUMENT: handle})
            assert not cancelled.is_error, cancelled.content[0].text
            other = (await client.call_tool(START_TOOL, {})).structured_content[HANDLE_ARGUMENT]
            fresh = await client.call_tool("get_order_status", {"order_id": PENDING_ORDER, HANDLE_ARGUMENT: other})
            assert fresh.content[0].text == "pending"  # another rollout: its own database
            tampered = handle[:-2] + ("AA" if not handle.endswith("AA") else "BB")
            assert _error(await client.call_tool("get_order_status", {
                "order_id": PENDING_ORDER, HANDLE_ARGUMENT: tampered})) == "invalid_rollout"
            forged = "rh1." + "0" * 32 + "." + handle.rsplit(".", 1)[1]  # a valid tag moved to another trace id
            assert _error(await client.call_tool("get_order_status", {
                "order_id": PENDING_ORDER, HANDLE_ARGUMENT: forged})) == "invalid_rollout"
            mismatch = await client.call_tool("get_order_status", {"order_id": PENDING_ORDER, HANDLE_ARGUMENT: handle},
                                              meta={HANDLE_META_KEY: other})
            assert _error(mismatch) == "invalid_rollout"

        http, thief = _client(url, OTHER_TOKEN)  # a valid token of the server, but not the one that started it
        async with http, thief:
            stolen = await thief.call_tool("get_order_status", {"order_id": PENDING_ORDER, HANDLE_ARGUMENT: handle})
            assert _error(stolen) == "invalid_rollout"
            assert "cancelled" not in stolen.content[0].text

        http, again = _client(url, TOKEN)  # stateless: a new client (any connection) continues the rollout
        async with http, again:
            state = await again.call_tool("get_order_status", {"order_id": PENDING_ORDER},
                                          meta={HANDLE_META_KEY: handle})  # the handle in _meta instead
            assert not state.is_error and "cancelled" in state.content[0].text.lower()

    anyio.run(scenario)


def test_handshake_clients_keep_session_rollouts(server):
    url, _ = server

    async def scenario() -> None:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
        async with http, Client(streamable_http_client(url + "/mcp", http_client=http), mode="legacy") as client:
            assert client.session.protocol_version != "2026-07-28"
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert START_TOOL not in names
            schema = next(t for t in (await client.list_tools()).tools if t.name == "get_order_status").input_schema
            assert HANDLE_ARGUMENT not in schema["properties"]
            result = await client.call_tool("get_order_status", {"order_id": PENDING_ORDER})
            assert not result.is_error and result.meta[TRACE_META_KEY].startswith("trace_")

    anyio.run(scenario)


def test_plain_client_url_default_mode_on_a_server_without_tokens():
    """``mcp.Client(url)`` exactly as mcp's docstring shows it (no headers, default mode)."""
    from rft_sdk import ToolServer
    from rft_sdk.mcp import mcp_app
    from rft_sdk.testing import run_server

    notes: dict[str, list[str]] = {}

    def add_note(text: str, *, rollout: Rollout) -> str:
        """Add a note to this episode and return every note so far.

        Args:
            text: the note.
        """
        notes.setdefault(rollout.trace_id, []).append(text)
        return ",".join(notes[rollout.trace_id])

    tool_server = ToolServer(tools=[add_note], auth_env_var=None)

    async def scenario(url: str) -> None:
        async with Client(url + "/mcp") as client:
            a = (await client.call_tool(START_TOOL, {})).structured_content[HANDLE_ARGUMENT]
            b = (await client.call_tool(START_TOOL, {})).structured_content[HANDLE_ARGUMENT]
            await client.call_tool("add_note", {"text": "a1", HANDLE_ARGUMENT: a})
            await client.call_tool("add_note", {"text": "b1", HANDLE_ARGUMENT: b})
            last = await client.call_tool("add_note", {"text": "a2", HANDLE_ARGUMENT: a})
            assert last.content[0].text == "a1,a2"

    with run_server(mcp_app(tool_server)) as url:
        anyio.run(scenario, url)


def test_handles_open_only_with_their_key_and_principal(monkeypatch):
    monkeypatch.setenv(HANDLE_KEY_ENV_VAR, "shared secret of every replica")
    one, two = RolloutHandles(), RolloutHandles()  # two workers with the same key
    handle, trace_id = one.mint("principal-a")
    assert two.open(handle, "principal-a") == trace_id and one.shared
    # the trace id (what the hosted routes take) is not readable from the handle (model-visible arguments)
    assert trace_id.removeprefix("trace_") not in handle and handle.split(".")[1] not in trace_id
    for bad_principal, handles in (("principal-b", two), ("", two), ("principal-a", RolloutHandles("other key"))):
        with pytest.raises(InvalidHandle):
            handles.open(handle, bad_principal)
    for malformed in ("", "rh1.", trace_id, handle + "x", handle.upper(), 42, None):
        with pytest.raises(InvalidHandle):
            one.open(malformed, "principal-a")
    monkeypatch.delenv(HANDLE_KEY_ENV_VAR)
    solo = RolloutHandles()
    assert not solo.shared and "secret" not in repr(solo)
    with pytest.raises(InvalidHandle):
        RolloutHandles().open(solo.mint("p")[0], "p")  # random per-process keys differ
    with pytest.raises(ValueError, match="empty"):
        RolloutHandles(b"")


def test_a_handshake_session_is_bound_to_the_token_that_opened_it(server):
    """Another valid token naming a session-based revision's session id gets the unknown-session answer: it can
    neither call tools in that rollout nor end it (an outside attack ran tokB's calls in tokA's session)."""
    import httpx

    url, _ = server
    accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    owner = {**accept, "Authorization": f"Bearer {TOKEN}"}
    other = {**accept, "Authorization": f"Bearer {OTHER_TOKEN}"}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    with httpx.Client(base_url=url, timeout=30) as http:
        opened = http.post("/mcp", json=init, headers=owner)
        session = opened.headers["mcp-session-id"]
        with_session = {"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
        http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers={**owner, **with_session})
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        assert http.post("/mcp", json=listing, headers={**other, **with_session}).status_code == 404
        assert http.delete("/mcp", headers={**other, **with_session}).status_code == 404
        mine = http.post("/mcp", json=listing, headers={**owner, **with_session})
        assert mine.status_code == 200 and "get_order_status" in mine.text  # the owner's session lives on
        assert http.delete("/mcp", headers={**owner, **with_session}).status_code < 400
        assert http.post("/mcp", json=listing, headers={**owner, **with_session}).status_code == 404
