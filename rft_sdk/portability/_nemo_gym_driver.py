"""Drive a tool server's ``nemo_gym`` surface with NeMo Gym's own servers and rollout collection.

Run with an interpreter that has ``nemo-gym`` (``.venv-eco2``)::

    python -m rft_sdk.portability._nemo_gym_driver BASE_URL DATASET WORKDIR N REPEATS [--llm-url URL]
        [--max-steps TURNS] [--bad-calls '{"0": [["tool", "raw arguments"], ...]}']

What runs, all NeMo Gym 0.7's own code (``docs/nemo_gym.md``), as ``ng_run`` starts it:

1. ``rft nemo-gym --url BASE_URL --dataset DATASET --out WORKDIR`` writes the resources-server
   directory; its config is merged with NeMo Gym's ``vllm_model`` config by NeMo Gym's
   ``GlobalConfigDictParser`` (``policy_base_url`` = the gold-replay chat-completions server,
   :class:`~._gold_llm.ScriptedLLM`, started here on 127.0.0.1 unless ``--llm-url``);
2. NeMo Gym's ``vllm_model``, ``simple_agent`` and ``legacy_agent`` servers are started as
   ``ng_run`` starts them (``python app.py`` with ``NEMO_GYM_CONFIG_DICT``/``NEMO_GYM_CONFIG_PATH``);
3. ``ng_collect_rollouts`` (``+agent_name``, ``+limit=N``, ``+num_repeats=REPEATS``) collects the
   rollouts: per rollout the agent seeds a session, runs the model/tool loop against the
   surface and calls ``/verify``.

Prints one JSON line: ``{"nemo_gym": version, "rollouts": [{"task_id", "reward", "trace_id",
"mask_sample", "failure_kind", "reward_components", "tool_calls"}]}``.
What it skips of ``ng_run``: Ray, the head server and per-server ``uv`` venvs (every server runs
in this interpreter's environment).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

__all__ = ["main", "nemo_gym_rollouts"]

_NAME = "rft_task"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(port: int, proc: subprocess.Popen[bytes], what: str, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"NeMo Gym's {what} exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.2)
    raise RuntimeError(f"NeMo Gym's {what} did not listen on 127.0.0.1:{port} within {timeout}s")


def _global_config(workdir: Path, llm_url: str) -> Any:
    from nemo_gym.global_config import GlobalConfigDictParser, GlobalConfigDictParserConfig
    from omegaconf import OmegaConf

    initial = OmegaConf.create({
        "config_paths": [f"resources_servers/{_NAME}/configs/{_NAME}.yaml",
                         "responses_api_models/vllm_model/configs/vllm_model.yaml"],
        "policy_base_url": llm_url + "/v1", "policy_api_key": "gold", "policy_model_name": "scripted-gold",
        "default_host": "127.0.0.1"})
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        return GlobalConfigDictParser().parse(GlobalConfigDictParserConfig(
            initial_global_config_dict=initial, skip_load_from_cli=True, skip_load_from_dotenv=True))
    finally:
        os.chdir(cwd)


@contextlib.contextmanager
def _servers(config: Any, workdir: Path) -> Iterator[dict[str, Any]]:
    """Start NeMo Gym's model, agent and environment servers as ``ng_run`` does (all three at once, then
    wait until each listens); yield the config dict."""
    import nemo_gym
    from omegaconf import OmegaConf

    root = Path(nemo_gym.__file__).resolve().parent.parent
    text = OmegaConf.to_yaml(config)
    plain: dict[str, Any] = OmegaConf.to_container(config, resolve=True)
    procs: list[subprocess.Popen[bytes]] = []
    started: list[tuple[int, subprocess.Popen[bytes], str]] = []
    try:
        for top, kind, impl in (("policy_model", "responses_api_models", "vllm_model"),
                                (f"{_NAME}_simple_agent", "responses_api_agents", "simple_agent"),
                                (f"{_NAME}_environment_server", "environment_servers", "legacy_agent")):
            server_dir = root / kind / impl
            env = {**os.environ, "NEMO_GYM_CONFIG_DICT": text, "NEMO_GYM_CONFIG_PATH": top}
            proc = subprocess.Popen([sys.executable, str(server_dir / "app.py")], cwd=server_dir, env=env,
                                    stdout=subprocess.DEVNULL, stderr=sys.stderr)
            procs.append(proc)
            started.append((int(plain[top][kind][impl]["port"]), proc, f"{kind}/{impl}"))
        for port, proc, what in started:
            _wait(port, proc, what)
        yield plain
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


def nemo_gym_rollouts(base_url: str, dataset: str, workdir: Path, limit: int, repeats: int,
                      llm_url: str, max_steps: int = 20) -> list[dict[str, Any]]:
    """Collect ``limit`` items x ``repeats`` rollouts through NeMo Gym (see the module docstring);
    ``max_steps``: the simple_agent's model turns per rollout."""
    from omegaconf import OmegaConf

    from ..surfaces._nemo_gym_config import add_arguments, run

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    with contextlib.redirect_stdout(sys.stderr):
        written = run(parser.parse_args(["--url", base_url, "--dataset", dataset, "--out", str(workdir),
                                         "--name", _NAME, "--max-steps", str(max_steps)]))
    if written:
        raise RuntimeError("rft nemo-gym failed")
    config = _global_config(workdir, llm_url)
    stem = Path(dataset).stem
    output = workdir / "rollouts.jsonl"
    with _servers(config, workdir) as plain:
        collection = {**plain, "agent_name": f"{_NAME}_simple_agent",
                      "input_jsonl_fpath": str(workdir / "resources_servers" / _NAME / "data" / f"{stem}.jsonl"),
                      "output_jsonl_fpath": str(output), "limit": limit, "num_repeats": repeats,
                      "num_samples_in_parallel": limit * repeats}
        env = {**os.environ, "NEMO_GYM_CONFIG_DICT": OmegaConf.to_yaml(OmegaConf.create(collection))}
        done = subprocess.run([str(Path(sys.executable).with_name("ng_collect_rollouts"))], cwd=workdir, env=env,
                              capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            raise RuntimeError(f"ng_collect_rollouts failed ({done.returncode}): {done.stdout[-3000:]}"
                               f"{done.stderr[-3000:]}")
    rows = [json.loads(line) for line in output.read_text().splitlines() if line.strip()]
    out = []
    for row in rows:
        item = row.get("rft_item") or {}
        calls = [o.get("name") for o in (row.get("response") or {}).get("output") or []
                 if isinstance(o, dict) and o.get("type") == "function_call"]
        out.append({"task_id": item.get("task_id"), "reward": row.get("reward"), "trace_id": row.get("trace_id"),
                    "mask_sample": row.get("mask_sample"), "failure_kind": row.get("failure_kind"),
                    "reward_components": row.get("reward_components"), "tool_calls": calls,
                    "task_index": row.get("_ng_task_index"), "rollout_index": row.get("_ng_rollout_index")})
    return out


def main() -> None:
    """Command line: see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base_url")
    parser.add_argument("dataset")
    parser.add_argument("workdir")
    parser.add_argument("limit", type=int)
    parser.add_argument("repeats", type=int)
    parser.add_argument("--llm-url", default=None)
    parser.add_argument("--max-steps", type=int, default=20)
    parser.add_argument("--bad-calls", default="{}", help="ScriptedLLM bad_calls as JSON {index: [[name, raw]]}")
    args = parser.parse_args()
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    if args.llm_url:
        rollouts = nemo_gym_rollouts(args.base_url, args.dataset, workdir, args.limit, args.repeats, args.llm_url,
                                     args.max_steps)
    else:
        from ..testing import run_server
        from ._gold_llm import ScriptedLLM

        items = [json.loads(line) for line in Path(args.dataset).read_text().splitlines() if line.strip()]
        bad = {int(k): [(str(n), str(r)) for n, r in v] for k, v in json.loads(args.bad_calls).items()}
        with run_server(ScriptedLLM(items, bad_calls=bad).app) as llm_url:
            rollouts = nemo_gym_rollouts(args.base_url, args.dataset, workdir, args.limit, args.repeats, llm_url,
                                         args.max_steps)
    print(json.dumps({"nemo_gym": version("nemo-gym"), "rollouts": rollouts}))


if __name__ == "__main__":
    main()
