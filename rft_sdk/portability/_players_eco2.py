"""Gold-trajectory players of the NeMo Gym and Eval Protocol surfaces, and running any player in another interpreter.

The ecosystems' clients cannot all share one virtual environment (``docs/surfaces.md``): ``rft portability
--client-python nemo_gym=.venv-eco2/bin/python`` runs that surface's player in the interpreter that has its
client (:func:`play_in`: ``python -m rft_sdk.portability._players_eco2``, the target and items as JSON on
stdin, the scores as JSON on stdout), the other players in this one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import anyio

from ._target import Target, replay_actions

__all__ = ["play_eval_protocol", "play_in", "play_nemo_gym"]


async def play_nemo_gym(target: Target, items: list[dict[str, Any]]) -> list[float]:
    """NeMo Gym's own ``vllm_model``, ``simple_agent``, ``legacy_agent`` and ``ng_collect_rollouts`` against the
    ``nemo_gym`` surface, the model a gold-replay chat-completions server (``_nemo_gym_driver``). NeMo Gym's
    servers send no credentials: the server must serve this surface without tokens."""
    import nemo_gym  # noqa: F401  (the client must be here)

    from ..testing import run_server
    from ._gold_llm import ScriptedLLM
    from ._nemo_gym_driver import nemo_gym_rollouts

    with tempfile.TemporaryDirectory(prefix="rft-portability-nemo-") as tmp:
        dataset = Path(tmp) / "items.jsonl"
        dataset.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
        with run_server(ScriptedLLM(items).app) as llm_url:
            rollouts = await anyio.to_thread.run_sync(lambda: nemo_gym_rollouts(
                target.base_url, str(dataset), Path(tmp) / "gym", len(items), 1, llm_url))
    by_index = {r["task_index"]: r for r in rollouts}
    return [float(by_index[i]["reward"]) if i in by_index and not by_index[i]["mask_sample"] else float("nan")
            for i in range(len(items))]


async def play_eval_protocol(target: Target, items: list[dict[str, Any]]) -> list[float]:
    """Eval Protocol's ``RolloutProcessor`` contract (``ToolServerRolloutProcessor`` on ``hosted_rows``, LiteLLM to
    a gold-replay chat-completions server), scored by ``evaluate_row`` (the EP evaluator)."""
    from eval_protocol.pytest.types import RolloutProcessorConfig

    from ..integrations.eval_protocol import ToolServerRolloutProcessor, evaluate_row, hosted_rows
    from ..testing import run_server
    from ._gold_llm import ScriptedLLM

    rows = hosted_rows(items)
    processor = ToolServerRolloutProcessor(target.base_url, token=target.token)
    with run_server(ScriptedLLM(items).app) as llm_url:
        config = RolloutProcessorConfig(completion_params={"model": "openai/gold-replay", "base_url": llm_url + "/v1",
                                                           "api_key": "gold"},
                                        mcp_config_path="", semaphore=asyncio.Semaphore(16),
                                        steps=max(len(replay_actions(i)) for i in items) + 2)
        try:
            done = await asyncio.gather(*processor(rows, config))
        finally:
            await processor.acleanup()
    scored = [await evaluate_row(row, target.base_url, token=target.token, grader=target.grader) for row in done]
    return [r.evaluation_result.score if r.evaluation_result and r.evaluation_result.is_score_valid else float("nan")
            for r in scored]


async def play_in(python: str, name: str, target: Target, items: list[dict[str, Any]]) -> list[float]:
    """Run player ``name`` in interpreter ``python`` (see the module docstring).

    Raises:
        RuntimeError: the child failed (its stderr's tail in the message).
    """
    payload = json.dumps({"name": name, "target": dataclasses.asdict(target), "items": items})
    # litellm (eval-protocol) downloads a price list at import unless told to use its own copy
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP", "True")}
    done = await anyio.run_process([python, "-m", f"{__package__}._child"], input=payload.encode(), check=False, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"player {name!r} in {python} failed ({done.returncode}): "
                           f"{done.stderr.decode(errors='replace')[-2000:]}")
    scores: list[float] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return [float(s) for s in scores]
