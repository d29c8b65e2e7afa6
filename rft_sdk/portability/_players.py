"""Gold-trajectory players: one per surface, each through that surface's own client.

A player is ``async def play(target: Target, items: list[dict]) -> list[float]``: for
every item it starts one rollout on its surface, makes the item's gold tool calls
(``actions``: ``[{"name", "arguments"}]``, in order) and ends the episode with the
item's ``reference_answer``; it returns the reward its surface gave each rollout.
Players are found by name: the built-ins below, then the ``rft_sdk.portability``
entry-point group (``name = "module:play"``), so a package adding a surface adds its
player by declaring it.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Awaitable, Callable
from importlib.metadata import entry_points
from typing import Any

import anyio

from ..surfaces import HostedClient, new_trace_id
from ._target import Target, replay_actions

__all__ = ["BUILTIN_PLAYERS", "ENTRY_POINT_GROUP", "Target", "load_player", "player_names"]

ENTRY_POINT_GROUP = "rft_sdk.portability"


Player = Callable[[Target, list[dict[str, Any]]], Awaitable[list[float]]]


async def play_hosted(target: Target, items: list[dict[str, Any]]) -> list[float]:
    """The hosted wire itself (``POST /tools/{name}``, ``POST /grade``), as a hosted service sends it."""
    scores = []
    async with HostedClient.over_http(target.base_url, token=target.token) as client:
        for item in items:
            trace_id = new_trace_id()
            for action in replay_actions(item):
                await client.call_tool(trace_id, action["name"], action.get("arguments") or {}, item)
            scores.append((await client.grade(trace_id, item["reference_answer"], item, target.grader)).score)
    return scores


async def play_mcp(target: Target, items: list[dict[str, Any]]) -> list[float]:
    """The official ``mcp`` client as its docstring shows it, ``mcp.Client`` in its default mode (``"auto"``, mcp
    2.x), which negotiates the stateless revision (2026-07-28) with the server: one ``start_rollout`` per item, the
    returned ``rollout_id`` passed with every call, then ``POST /grade`` of the rollout's trace_id
    (``docs/mcp.md``). A server or client that falls back to a session-based revision plays like
    :func:`play_mcp_legacy` (the calls' ``_meta`` names the trace_id)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from ..mcp import HANDLE_ARGUMENT, START_TOOL, TRACE_META_KEY

    scores = []
    async with HostedClient.over_http(target.base_url, token=target.token) as grader:
        for item in items:
            http = httpx2.AsyncClient(headers=target.headers, timeout=60)
            async with http, Client(streamable_http_client(target.base_url + target.mcp_path,
                                                          http_client=http)) as client:
                handle: dict[str, Any] = {}
                trace_id = None
                if any(tool.name == START_TOOL for tool in (await client.list_tools()).tools):
                    started = await client.call_tool(START_TOOL, {})
                    if started.is_error or not started.structured_content:
                        raise RuntimeError(f"{START_TOOL} failed: {started.content}")
                    handle = {HANDLE_ARGUMENT: started.structured_content[HANDLE_ARGUMENT]}
                    trace_id = started.structured_content["trace_id"]
                for action in replay_actions(item):
                    result = await client.call_tool(action["name"], {**(action.get("arguments") or {}), **handle})
                    trace_id = (result.meta or {}).get(TRACE_META_KEY, trace_id)
                if trace_id is None:  # a session with no tool call: still a rollout of its own
                    trace_id = new_trace_id()
            scores.append((await grader.grade(trace_id, item["reference_answer"], item, target.grader)).score)
    return scores


async def play_mcp_legacy(target: Target, items: list[dict[str, Any]]) -> list[float]:
    """The official ``mcp`` client's session API (``ClientSession`` over streamable HTTP, 2.x or 1.x): a
    session-based revision (up to 2025-11-25), one session per item, graded by its trace_id."""
    from mcp.client.session import ClientSession

    scores = []
    async with HostedClient.over_http(target.base_url, token=target.token) as grader:
        for item in items:
            async with _mcp_streams(target) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                trace_id = None
                for action in replay_actions(item):
                    result = await session.call_tool(action["name"], action.get("arguments") or {})
                    meta = getattr(result, "meta", None) or {}
                    trace_id = meta.get("rft/trace_id", trace_id)
                if trace_id is None:  # no tool call: the session still names the rollout
                    trace_id = new_trace_id()
                scores.append((await grader.grade(trace_id, item["reference_answer"], item, target.grader)).score)
    return scores


def _mcp_streams(target: Target) -> Any:
    url = target.base_url + target.mcp_path
    try:  # mcp 2.x: headers through an httpx2 client
        import httpx2
        from mcp.client.streamable_http import streamable_http_client
    except ImportError:  # mcp 1.x
        from mcp.client.streamable_http import streamablehttp_client  # type: ignore[attr-defined]

        return _first_two(streamablehttp_client(url, headers=target.headers))
    return _with_client(httpx2.AsyncClient(headers=target.headers, timeout=60), streamable_http_client, url)


class _first_two:
    def __init__(self, cm: Any) -> None:
        self.cm = cm

    async def __aenter__(self) -> Any:
        streams = await self.cm.__aenter__()
        return streams[0], streams[1]

    async def __aexit__(self, *exc: Any) -> Any:
        return await self.cm.__aexit__(*exc)


class _with_client:
    def __init__(self, http: Any, factory: Any, url: str) -> None:
        self.http, self.factory, self.url = http, factory, url

    async def __aenter__(self) -> Any:
        await self.http.__aenter__()
        self.cm = self.factory(self.url, http_client=self.http)
        streams = await self.cm.__aenter__()
        return streams[0], streams[1]

    async def __aexit__(self, *exc: Any) -> Any:
        try:
            await self.cm.__aexit__(*exc)
        finally:
            await self.http.__aexit__(*exc)


#: items per ``GRPOTrainer`` run of the ``trl`` player (its generation batch is this many items x 2 rollouts)
TRL_ITEMS_PER_RUN = 20


async def play_trl(target: Target, items: list[dict[str, Any]]) -> list[float]:
    """TRL's own ``GRPOTrainer`` environment loop (:func:`._trl_loop.trl_trainer_rollouts`: ``trainer.train()`` for
    one step, TRL rendering the prompts, parsing the calls, calling ``ToolServerEnvironment``'s methods and
    ``grader_reward``; the model scripted) over up to :data:`TRL_ITEMS_PER_RUN` items per run, 2 rollouts per item
    (GRPO's smallest group). An item's score is its rollouts' reward as TRL recorded it when they agree, NaN when
    not (the rollouts of one item played the same calls)."""
    from ._trl_loop import trl_trainer_rollouts

    scores: list[float] = []
    for start in range(0, len(items), TRL_ITEMS_PER_RUN):
        chunk = items[start:start + TRL_ITEMS_PER_RUN]

        def run(chunk: list[dict[str, Any]] = chunk) -> dict[str, Any]:
            return trl_trainer_rollouts(target.base_url, target.token, target.grader, chunk, generations=2)

        try:
            out = await anyio.to_thread.run_sync(run)
        except ValueError as exc:
            raise RuntimeError(f"the trl player cannot play items {start}-{start + len(chunk) - 1}: {exc}") from exc
        rewards: list[list[float]] = [[] for _ in chunk]
        for rollout in out["rollouts"]:
            rewards[rollout["index"]].append(float(rollout["reward"]))
        scores += [r[0] if r and all(x == r[0] for x in r) else float("nan") for r in rewards]
    return scores


async def play_openenv(target: Target, items: list[dict[str, Any]]) -> list[float]:
    """OpenEnv's own ``MCPToolClient``: ``reset(item=...)``, a ``CallToolAction`` step per gold action,
    then ``submit_answer`` (the episode's reward)."""
    from openenv.core.env_server.mcp_types import CallToolAction
    from openenv.core.mcp_client import MCPToolClient

    scores = []
    for item in items:
        async with MCPToolClient(base_url=target.base_url + target.openenv_path, headers=target.headers) as env:
            await env.reset(item=item)
            for action in replay_actions(item):
                await env.step(CallToolAction(tool_name=action["name"], arguments=action.get("arguments") or {}))
            result = await env.step(CallToolAction(tool_name="submit_answer",
                                                   arguments={"answer": item["reference_answer"]}))
            scores.append(float(result.reward) if result.reward is not None else float("nan"))
    return scores


async def play_verifiers(target: Target, items: list[dict[str, Any]]) -> list[float]:
    """verifiers 0.4: ``vf-eval rft-verifiers`` (``_players_trainers.play_verifiers_v1``); verifiers 0.1.x: its own
    ``env.evaluate`` over :func:`rft_sdk.integrations.verifiers.load_environment`. The model is a gold-replay
    chat-completions server on 127.0.0.1 (:class:`~._gold_llm.ScriptedLLM`)."""
    import os
    from importlib.metadata import version

    if tuple(int(p) for p in version("verifiers").split(".")[:2] if p.isdigit()) >= (0, 4):
        from ._players_trainers import play_verifiers_v1

        return await play_verifiers_v1(target, items)
    import verifiers as vf

    from ..integrations.verifiers import load_environment
    from ..testing import run_server
    from ._gold_llm import ScriptedLLM

    llm = ScriptedLLM(items)
    env = load_environment(target.base_url, token=target.token, grader=target.grader, eval_dataset=items,
                           max_turns=max(len(replay_actions(i)) for i in items) + 2)
    os.environ.setdefault("RFT_GOLD_LLM_KEY", "gold")
    with run_server(llm.app) as llm_url:
        client = vf.ClientConfig(client_type="openai_chat_completions", api_base_url=llm_url + "/v1",
                                 api_key_var="RFT_GOLD_LLM_KEY", max_retries=0)
        results = await env.evaluate(client=client, model="gold-replay", num_examples=len(items),
                                     rollouts_per_example=1, max_concurrent=-1, on_progress=[])
    outputs = results["outputs"] if isinstance(results, dict) else results.outputs
    by_task = {}
    for state in outputs:
        info = state.get("info") or {}
        by_task[json.loads(info["rft_item"]).get("task_id")] = float(state.get("reward"))
    return [by_task.get(item.get("task_id"), float("nan")) for item in items]


async def play_nemo_gym(target: Target, items: list[dict[str, Any]]) -> list[float]:
    """NeMo Gym's own agent and rollout collection (``_players_eco2.play_nemo_gym``)."""
    from ._players_eco2 import play_nemo_gym as play

    return await play(target, items)


async def play_eval_protocol(target: Target, items: list[dict[str, Any]]) -> list[float]:
    """Eval Protocol's rollout-processor contract and evaluator (``_players_eco2.play_eval_protocol``)."""
    from ._players_eco2 import play_eval_protocol as play

    return await play(target, items)


async def play_verl(target: Target, items: list[dict[str, Any]]) -> list[float]:
    """verl's own tool classes (``_players_trainers.play_verl``)."""
    from ._players_trainers import play_verl as play

    return await play(target, items)


async def play_art(target: Target, items: list[dict[str, Any]]) -> list[float]:
    """OpenPipe ART's own types (``_players_trainers.play_art``)."""
    from ._players_trainers import play_art as play

    return await play(target, items)


BUILTIN_PLAYERS: dict[str, tuple[Player, str | None]] = {
    "hosted": (play_hosted, None),
    "mcp": (play_mcp, "mcp"),
    "mcp_legacy": (play_mcp_legacy, "mcp"),
    "trl": (play_trl, "trl"),
    "openenv": (play_openenv, "openenv"),
    "verifiers": (play_verifiers, "verifiers"),
    "nemo_gym": (play_nemo_gym, "nemo-gym"),
    "eval_protocol": (play_eval_protocol, "eval-protocol"),
    "verl": (play_verl, None),  # verl itself is the user's install (docs/verl.md), no extra brings it
    "art": (play_art, "art"),
}


def player_names() -> list[str]:
    """Every player name: built-ins, then the entry-point group's."""
    return [*BUILTIN_PLAYERS, *(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)
                                if ep.name not in BUILTIN_PLAYERS)]


def load_player(name: str) -> tuple[Player, str | None]:
    """``(play, extra)`` for a player name.

    Raises:
        ValueError: no such player.
    """
    if name in BUILTIN_PLAYERS:
        return BUILTIN_PLAYERS[name]
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            module, _, attr = ep.value.split("[")[0].strip().partition(":")
            return getattr(importlib.import_module(module), attr), (ep.extras[0] if ep.extras else None)
    raise ValueError(f"no portability player {name!r}; choices: {player_names()}")
