"""``rft nemo-gym``: the NeMo Gym resources-server directory that points NeMo Gym at a tool server.

::

    rft nemo-gym --app examples.retail.app:server --dataset train.jsonl --dataset test.jsonl --out gym/
    rft nemo-gym --url http://10.0.0.5:8000 --dataset train.jsonl --out gym/

writes, under ``OUT/resources_servers/NAME/`` (``NAME`` default ``rft_task``), what
``gym env start`` (``ng_run``) needs (``docs/nemo_gym.md``):

* ``configs/NAME.yaml``: three server instances, as NeMo Gym 0.7's configs declare them —
  ``NAME_resources_server`` (``resources_servers.NAME``: this tool server; ``host``/``port``
  of ``--url``, or chosen by NeMo Gym for ``--app``), ``NAME_simple_agent``
  (``responses_api_agents.simple_agent``, its ``datasets``, ``model_server`` ``policy_model``)
  and ``NAME_environment_server`` (``environment_servers.legacy_agent``, which rollout
  collection dispatches to);
* ``app.py``: the process NeMo Gym starts for the resources server — ``--app``: it runs
  ``rft serve APP --surfaces nemo_gym`` on the host/port NeMo Gym assigned; ``--url``: it
  checks that the running server answers ``/healthz`` and waits (NeMo Gym calls the URL);
* ``requirements.txt`` (NeMo Gym builds the server's venv from it, ``uv pip install -r`` in
  this folder): ``nemo-gym`` and ``rft-sdk`` as a wheel this command builds into
  ``wheels/`` at run time (``./wheels/rft_sdk-*.whl``: installs where no index has
  ``rft-sdk``; ``--rft-sdk`` names a wheel or a requirement instead, :mod:`._bundle`);
* ``data/STEM.jsonl`` per ``--dataset``: NeMo Gym rows — ``responses_create_params``
  (``input`` = the item's ``messages`` as Responses input, ``tools`` = its tools as Responses
  function tools), ``agent_ref`` and ``rft_item`` (the hosted item, verbatim: the surface
  hands it to every tool call and to the grader).

Exit status: 0 written; 1 the rft-sdk wheel could not be built or copied (the message says why and
what to pass instead); 2 bad arguments or a dataset line that is not a JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from ..exceptions import RFTError
from ._bundle import bundle_rft_sdk

__all__ = ["HELP", "add_arguments", "nemo_gym_row", "responses_input", "responses_tools", "run"]

HELP = "write the NeMo Gym resources-server config, launcher and dataset for a tool server (docs/nemo_gym.md)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's options."""
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--app", metavar="MODULE:ATTR", help="NeMo Gym starts `rft serve MODULE:ATTR --surfaces nemo_gym`")
    where.add_argument("--url", help="a running server serving the nemo_gym surface (NeMo Gym calls it)")
    parser.add_argument("--dataset", action="append", required=True, metavar="JSONL",
                        help="hosted dataset (repeatable); 'train' in its name makes a train split, 'test'/'val' a "
                             "validation split, anything else an example split")
    parser.add_argument("--out", required=True, help="NeMo Gym's working directory (where you run ng_run)")
    parser.add_argument("--name", default="rft_task", help="resources server name (default rft_task)")
    parser.add_argument("--max-steps", type=int, default=20,
                        help="model turns per rollout for NeMo Gym's simple_agent (default 20)")
    parser.add_argument("--rft-sdk", default=None, metavar="WHEEL_OR_REQUIREMENT",
                        help="how the server's venv gets rft-sdk: a .whl path (copied into wheels/) or a requirement "
                             "string used as is (e.g. 'rft-sdk==0.2.0' where your index has it); default: a wheel "
                             "built now from this rft-sdk checkout")
    parser.add_argument("--license", default="TBD", help="dataset license for train/validation splits (NeMo Gym "
                                                         "requires one; default TBD)")


def responses_input(messages: list[Any]) -> list[dict[str, Any]]:
    """Chat-completions ``messages`` as Responses API ``input`` items (``EasyInputMessage``,
    ``function_call``, ``function_call_output``)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "tool":
            out.append({"type": "function_call_output", "call_id": str(message.get("tool_call_id") or ""),
                        "output": str(message.get("content") or "")})
            continue
        content = message.get("content")
        if content:
            out.append({"role": role, "content": content})
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            out.append({"type": "function_call", "call_id": str(call.get("id") or ""),
                        "name": str(function.get("name") or ""), "arguments": str(function.get("arguments") or "{}")})
    return out


def responses_tools(tools: list[Any]) -> list[dict[str, Any]]:
    """Chat-completions tool definitions as Responses API function tools (``FunctionToolParam``)."""
    out = []
    for tool in tools:
        function = tool.get("function", tool) if isinstance(tool, dict) else {}
        if not function.get("name"):
            continue
        out.append({"type": "function", "name": function["name"], "description": function.get("description") or "",
                    "parameters": function.get("parameters") or {"type": "object", "properties": {}},
                    "strict": False})
    return out


def nemo_gym_row(item: dict[str, Any], agent: str, tools: list[Any]) -> dict[str, Any]:
    """One NeMo Gym dataset row for a hosted ``item`` (see the module docstring)."""
    return {"responses_create_params": {"input": responses_input(item.get("messages") or []),
                                        "tools": responses_tools(item.get("tools") or tools)},
            "agent_ref": {"type": "responses_api_agents", "name": agent}, "rft_item": item}


def _split_type(stem: str) -> str:
    lowered = stem.lower()
    if "train" in lowered:
        return "train"
    return "validation" if "test" in lowered or "val" in lowered else "example"


def _server_tools(args: argparse.Namespace) -> list[Any]:
    if args.app:
        from .._cli_commands import load_app

        return list(load_app(args.app).dataset_tools("chat_completions"))
    import httpx

    response = httpx.get(args.url.rstrip("/") + "/tools", timeout=30)
    response.raise_for_status()
    return list(response.json()["tools"])


_MANAGED = '''"""Started by NeMo Gym for the resources server: `rft serve {app} --surfaces nemo_gym` (generated by rft nemo-gym)."""
import os
import sys

from nemo_gym.global_config import get_first_server_config_dict, get_global_config_dict

config = get_first_server_config_dict(get_global_config_dict(), os.environ["NEMO_GYM_CONFIG_PATH"])
os.execv(sys.executable, [sys.executable, "-m", "rft_sdk", "serve", {app!r}, "--surfaces", "nemo_gym",
                          "--host", str(config.host), "--port", str(config.port), "--workers", "1"])
'''
_EXTERNAL = '''"""Started by NeMo Gym for the resources server, which runs elsewhere: {url} (generated by rft nemo-gym).

NeMo Gym calls the host and port of this server's config entry; this process checks that the
tool server answers and then waits, so that NeMo Gym sees its resources server up.
"""
import time
import urllib.request

urllib.request.urlopen({health!r}, timeout=30).read()
print("rft-sdk nemo_gym surface is up at {url}", flush=True)
while True:
    time.sleep(3600)
'''


def run(args: argparse.Namespace) -> int:
    """Write the directory (see the module docstring); print where and the next commands."""
    name = args.name
    if not name.isidentifier():
        print(f"rft nemo-gym: --name must be an identifier, got {name!r}", file=sys.stderr)
        return 2
    root = Path(args.out) / "resources_servers" / name
    try:  # first: a refusal here writes nothing
        rft_sdk_line = bundle_rft_sdk(root, args.rft_sdk)
    except RFTError as exc:
        print(f"rft nemo-gym: {exc}", file=sys.stderr)
        return 1
    (root / "configs").mkdir(parents=True, exist_ok=True)
    (root / "data").mkdir(exist_ok=True)
    agent = f"{name}_simple_agent"
    tools: list[Any] | None = None
    datasets = []
    for path in args.dataset:
        rows = []
        for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            item = json.loads(line)
            if not isinstance(item, dict):
                print(f"rft nemo-gym: {path}:{number} is not a JSON object", file=sys.stderr)
                return 2
            if not item.get("tools") and tools is None:
                tools = _server_tools(args)
            rows.append(nemo_gym_row(item, agent, tools or []))
        stem = Path(path).stem
        target = root / "data" / f"{stem}.jsonl"
        target.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        split = {"name": stem, "type": _split_type(stem), "jsonl_fpath": f"resources_servers/{name}/data/{stem}.jsonl"}
        if split["type"] != "example":
            split["license"] = args.license
        datasets.append(split)
    resources: dict[str, Any] = {"entrypoint": "app.py", "domain": "agent", "verified": False,
                                 "description": "rft-sdk tool server (tools + endpoint grader) over the nemo_gym surface"}
    if args.url:
        parts = urlsplit(args.url)
        if parts.scheme != "http" or not parts.hostname or parts.path.strip("/"):
            print("rft nemo-gym: --url must be http://HOST:PORT (NeMo Gym calls a server at its root)", file=sys.stderr)
            return 2
        resources.update(host=parts.hostname, port=parts.port or 80)
        launcher = _EXTERNAL.format(url=args.url, health=args.url.rstrip("/") + "/healthz")
    else:
        launcher = _MANAGED.format(app=args.app)
    config = {
        f"{name}_resources_server": {"resources_servers": {name: resources}},
        agent: {"responses_api_agents": {"simple_agent": {
            "entrypoint": "app.py", "max_steps": args.max_steps,
            "resources_server": {"type": "resources_servers", "name": f"{name}_resources_server"},
            "model_server": {"type": "responses_api_models", "name": "policy_model"}, "datasets": datasets}}},
        f"{name}_environment_server": {"environment_servers": {"legacy_agent": {
            "entrypoint": "app.py", "agent_server": {"type": "responses_api_agents", "name": agent}}}},
    }
    (root / "configs" / f"{name}.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    (root / "app.py").write_text(launcher, encoding="utf-8")
    (root / "requirements.txt").write_text(f"nemo-gym>=0.7.0,<0.8\n{rft_sdk_line}\n# add the package that defines "
                                           "your ToolServer (for --app)\n", encoding="utf-8")
    print(f"wrote {root}/ (configs/{name}.yaml, app.py, requirements.txt naming {rft_sdk_line}, data/: "
          f"{', '.join(d['name'] for d in datasets)})")
    print(f"next (Python >= 3.13.14 and uv on PATH): cd {args.out} && gym env start --config "
          f"resources_servers/{name}/configs/{name}.yaml --model-type vllm_model --model-url URL --model MODEL "
          f"--model-api-key KEY   # then: gym eval run --no-serve --agent {agent} --input "
          f"resources_servers/{name}/data/STEM.jsonl --output rollouts.jsonl --num-repeats 4")
    return 0
