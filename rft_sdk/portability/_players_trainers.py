"""Gold-trajectory players of the trainer integrations: verl (``rft_sdk.integrations.verl``, :mod:`._verl_loop`), OpenPipe ART
(``rft_sdk.integrations.art``) and verifiers 0.4 (``vf-eval rft-verifiers``), and the client versions
``rft portability`` prints.

Each plays through that ecosystem's own classes against a gold-replay chat-completions server on 127.0.0.1
(:class:`~._gold_llm.ScriptedLLM`; verl: a token-level scripted model, :mod:`._verl_loop`); run them with ``--client-python NAME=PYTHON`` naming the venv that has the
client (``make vf4`` / ``make verl`` / ``make art``: ``docs/surfaces.md``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import anyio

from ._target import Target, replay_actions

__all__ = ["CLIENT_PACKAGES", "art_rollouts", "client_version", "play_art", "play_verifiers_v1", "play_verl"]

#: the distribution whose version each player reports (``hosted``: rft-sdk's own client).
CLIENT_PACKAGES = {"hosted": "rft-sdk", "mcp": "mcp", "mcp_legacy": "mcp", "trl": "trl", "openenv": "openenv",
                   "verifiers": "verifiers", "nemo_gym": "nemo-gym", "eval_protocol": "eval-protocol", "verl": "verl",
                   "art": "openpipe-art"}


def client_version(name: str, python: str | None = None) -> str:
    """``"<distribution> <version>"`` of player ``name``'s client, in this interpreter or in ``python``
    (``"<distribution> not installed"`` when absent; a player from the entry-point group: its own name)."""
    package = CLIENT_PACKAGES.get(name, name)
    if python is None:
        try:
            return f"{package} {version(package)}"
        except PackageNotFoundError:
            return f"{package} not installed"
    code = ("import sys\nfrom importlib.metadata import version\ntry:\n print(version(sys.argv[1]))\n"
            "except Exception:\n print('not installed')")
    done = subprocess.run([python, "-c", code, package], capture_output=True, text=True, timeout=60, check=False)
    found = done.stdout.strip() or "not installed"
    return f"{package} {found}" if found != "not installed" else f"{package} not installed"


async def art_rollouts(base_url: str, token: str | None, grader: str | None, llm_url: str,
                       items: list[dict[str, Any]], rollouts: int = 1) -> list[dict[str, Any]]:
    """``rollouts`` ``art.Trajectory`` s per item from :func:`rft_sdk.integrations.art.rollout`, gathered by
    ``art.gather_trajectory_groups`` (all in flight), the model an ``art.Model`` whose inference URL is the
    scripted server. Returns ``[{"trace_id", "reward", "metrics", "task_id", "type"}]`` in item order."""
    import art

    from ..integrations.art import HostedScenario, blend_ruler, rollout

    model = art.Model(name="gold-replay", project="rft-portability", inference_base_url=llm_url + "/v1",
                      inference_api_key="gold", inference_model_name="gold-replay")
    scenarios = [HostedScenario(item=item, base_url=base_url, token=token, grader=grader,
                                max_turns=len(replay_actions(item)) + 2) for item in items]
    groups = await art.gather_trajectory_groups(
        (art.TrajectoryGroup(rollout(model, s) for _ in range(rollouts)) for s in scenarios), pbar_desc=None)
    groups = [await blend_ruler(group) for group in groups]  # weight 0: the grader's reward alone
    return [{"trace_id": t.metadata["trace_id"], "task_id": t.metadata["task_id"], "reward": t.reward,
             "metrics": {k: v for k, v in t.metrics.items() if k != "grader_score"}, "type": type(t).__name__}
            for group in groups for t in group.trajectories]


def _by_task(items: list[dict[str, Any]], results: list[dict[str, Any]]) -> list[float]:
    by_task = {str(r["task_id"]): float(r["reward"]) for r in results}
    return [by_task.get(str(item.get("task_id")), float("nan")) for item in items]


async def _with_llm(items: list[dict[str, Any]], play: Any) -> list[float]:
    from ..testing import run_server
    from ._gold_llm import ScriptedLLM

    with run_server(ScriptedLLM(items).app) as llm_url:
        return _by_task(items, await play(llm_url))


async def play_verl(target: Target, items: list[dict[str, Any]]) -> list[float]:
    """verl's agent loop and reward manager (:func:`._verl_loop.verl_agent_loop_rollouts`, its scripted model
    token-level), one trajectory per item."""
    from ._verl_loop import verl_agent_loop_rollouts

    return _by_task(items, await verl_agent_loop_rollouts(target.base_url, target.token, target.grader, items))


async def play_art(target: Target, items: list[dict[str, Any]]) -> list[float]:
    """ART's rollout types (:func:`art_rollouts`), one trajectory per item."""
    return await _with_llm(items, lambda url: art_rollouts(target.base_url, target.token, target.grader, url, items))


async def play_verifiers_v1(target: Target, items: list[dict[str, Any]]) -> list[float]:
    """verifiers 0.4's ``vf-eval rft-verifiers`` (the ``vf-eval`` beside this interpreter, verifiers' ``null``
    chat harness in a local subprocess runtime, ``--no-push``), one rollout per item; rewards read from its
    ``traces.jsonl``."""
    from ..testing import run_server
    from ._gold_llm import ScriptedLLM

    bin_dir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory(prefix="rft-portability-vf-") as tmp, \
            run_server(ScriptedLLM(items).app) as llm_url:
        dataset = Path(tmp) / "items.jsonl"
        dataset.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
        command = [str(bin_dir / "vf-eval"), "rft-verifiers", "--env.taskset.dataset", str(dataset),
                   "--env.taskset.task.url", target.base_url, "--env.agent.runtime.type", "subprocess",
                   "--client.base-url", llm_url + "/v1", "--client.api-key-var", "RFT_GOLD_LLM_KEY",
                   "-m", "gold-replay", "-r", "1", "--no-push", "--no-rich", "-o", str(Path(tmp) / "out")]
        if target.grader:
            command += ["--env.taskset.task.grader", target.grader]
        env = {**os.environ, "RFT_AUTH_TOKEN": target.token or "", "RFT_GOLD_LLM_KEY": "gold",
               "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"}
        done = await anyio.run_process(command, env=env, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"vf-eval failed ({done.returncode}): {done.stderr.decode(errors='replace')[-2000:]}")
        results = [{"task_id": t["task"]["data"]["item"].get("task_id"),
                    "reward": sum(r["score"] * r["weight"] for r in t["rewards"].values()) if t["rewards"]
                    else float("nan")}
                   for path in (Path(tmp) / "out").glob("*/traces.jsonl")
                   for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
                   for t in json.loads(line)["traces"]]
    return _by_task(items, results)
