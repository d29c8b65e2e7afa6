"""``rft portability``: the same gold trajectories through every surface, the same score from each.

::

    rft portability --dataset examples/retail/data/retail_test.jsonl --app examples.retail.app:server
    rft portability --dataset data.jsonl --url https://tools.example.com --token-env RFT_TOKEN
    rft portability --dataset ... --variant gold-minus-last --surfaces hosted,verifiers,verifiers@classic \
        --client-python verifiers=.venv-vf4/bin/python --client-python verifiers@classic=.venv-eco/bin/python

For each dataset item with gold ``actions`` and a ``reference_answer``, every surface's
player (:mod:`._players`: hosted wire, MCP in its default (stateless) mode and its session mode, TRL's
``GRPOTrainer`` loop, OpenEnv, verifiers, NeMo Gym, Eval Protocol, verl, ART — each through that ecosystem's own
client) runs one rollout of those calls (TRL: two, GRPO's smallest group; ``--variant gold``; ``gold-minus-last``:
all but the last, so that a surface scoring the wrong trajectory shows) and that answer; the command
prints, per item, the score each surface produced and whether they are identical, then one ``clients:`` line
naming the client package and version each surface was played with (and the interpreter, for
``--client-python``).
Exit status: 0 all identical, 1 some differ (or a surface gave no score), 2 a surface could not be played (its
client is not installed: the ``pip install`` is printed; its player failed: the error is printed) or bad arguments.
A surface may be named ``NAME@LABEL`` (player ``NAME``, column ``NAME@LABEL``) to play it twice, e.g. with two
client versions through two ``--client-python``.

``--app MODULE:ATTR`` starts ``rft serve MODULE:ATTR --surfaces hosted,mcp,openenv,nemo_gym`` with
this interpreter on a free loopback port; ``--url`` checks a running server (serving
``hosted``, and ``/mcp``, ``/openenv``, the ``nemo_gym`` routes for those surfaces; NeMo Gym's
servers send no credentials, so check ``nemo_gym`` on a server without tokens).
``--client-python SURFACE=PYTHON`` plays a surface in another interpreter (the ecosystems' clients
cannot all share one virtual environment: ``docs/surfaces.md``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import anyio

from .._cli_commands import env_secret
from ._gold_llm import ScriptedLLM
from ._players import load_player, player_names
from ._target import REPLAY_KEY, Target

__all__ = ["HELP", "VARIANTS", "ScriptedLLM", "add_arguments", "check", "run", "with_variant"]

HELP = "play the dataset's gold trajectories through every surface and compare the scores"

#: ``--variant``: which calls each rollout makes
VARIANTS = ("gold", "gold-minus-last")


def with_variant(items: list[dict[str, Any]], variant: str) -> list[dict[str, Any]]:
    """``items`` as played under ``variant``: ``gold`` unchanged; ``gold-minus-last`` each item with its gold
    ``actions`` but the last under ``REPLAY_KEY`` (:func:`~._target.replay_actions`; the grader still sees the gold).

    Raises:
        ValueError: an unknown variant.
    """
    if variant == "gold":
        return items
    if variant == "gold-minus-last":
        return [{**item, REPLAY_KEY: list(item["actions"][:-1])} for item in items]
    raise ValueError(f"unknown variant {variant!r}; choices: {VARIANTS}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's options."""
    parser.add_argument("--dataset", required=True, help="hosted JSONL; items need 'actions' and 'reference_answer'")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--app", metavar="MODULE:ATTR", help="serve this ToolServer for the check (rft serve)")
    where.add_argument("--url", help="a running server's base URL")
    parser.add_argument("--token-env", default=None, metavar="VAR", help="bearer token from $VAR")
    parser.add_argument("--grader", default=None, help="grader name (default: the server's default grader)")
    parser.add_argument("--surfaces", default=",".join(player_names()),
                        help=f"players to run, comma-separated (default: {','.join(player_names())})")
    parser.add_argument("--limit", type=int, default=None, help="first N items only")
    parser.add_argument("--variant", choices=VARIANTS, default="gold",
                        help="the calls each rollout makes: the gold actions, or all but the last (default: gold)")
    parser.add_argument("--client-python", action="append", default=[], metavar="SURFACE=PYTHON",
                        help="play SURFACE with the interpreter PYTHON, which has its client (repeatable; e.g. "
                             "nemo_gym=.venv-eco2/bin/python: the ecosystems' clients cannot share one venv)")
    parser.add_argument("--json", action="store_true", help="print the table as JSON")


async def check(target: Target, items: list[dict[str, Any]], surfaces: list[str],
                client_python: dict[str, str] | None = None) -> dict[str, list[float]]:
    """``{surface: [score per item]}``; a surface ``NAME@LABEL`` is player ``NAME``; ``client_python``: surfaces
    played in another interpreter (``_players_eco2.play_in``). Raises ``ImportError`` (with the extra named) when
    a client is missing, ``RuntimeError`` when a player in another interpreter failed."""
    from ._players_eco2 import play_in

    out: dict[str, list[float]] = {}
    for column in surfaces:
        name = column.partition("@")[0]
        play, extra = load_player(name)
        try:
            if column in (client_python or {}):
                out[column] = await play_in((client_python or {})[column], name, target, items)
                continue
            out[column] = await play(target, items)
        except ImportError as exc:
            hint = f'pip install "rft-sdk[{extra}]"' if extra else "its client package"
            raise ImportError(f"surface {name!r} cannot be played here ({exc}); it needs {hint} (or "
                              f"--client-python {name}=PYTHON naming an interpreter that has it)") from exc
    return out


def _table(items: list[dict[str, Any]], scores: dict[str, list[float]], variant: str) -> tuple[str, bool]:
    names = list(scores)
    header = ["item", *names, "identical"]
    rows, all_same = [], True
    for i, item in enumerate(items):
        values = [scores[n][i] for n in names]
        same = all(v == values[0] and not math.isnan(v) for v in values)
        all_same &= same
        rows.append([str(item.get("task_id", i)), *(f"{v:.4f}" for v in values), "yes" if same else "NO"])
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)) for row in [header, *rows]]
    lines.append(f"{sum(r[-1] == 'yes' for r in rows)}/{len(rows)} items scored identically on {len(names)} surfaces ({variant})")
    return "\n".join(lines), all_same


def run(args: argparse.Namespace) -> int:
    """Run the check; print the table (see the module docstring for the exit status)."""
    lines = Path(args.dataset).read_text(encoding="utf-8").splitlines()
    items = [json.loads(line) for line in lines if line.strip()]
    items = [i for i in items if isinstance(i.get("actions"), list) and isinstance(i.get("reference_answer"), str)]
    if args.limit is not None:
        items = items[:args.limit]
    if not items:
        print("rft portability: no item has gold 'actions' and a 'reference_answer'", file=sys.stderr)
        return 2
    try:
        token = env_secret(args.token_env)
    except ValueError as exc:
        print(f"rft portability: {exc}", file=sys.stderr)
        return 2
    surfaces = [s.strip() for s in args.surfaces.split(",") if s.strip()]
    try:
        for column in surfaces:
            load_player(column.partition("@")[0])
    except ValueError as exc:
        print(f"rft portability: {exc}", file=sys.stderr)
        return 2

    pythons = dict(spec.split("=", 1) for spec in args.client_python if "=" in spec)
    if len(pythons) != len(args.client_python):
        print("rft portability: --client-python takes SURFACE=PYTHON", file=sys.stderr)
        return 2
    if unknown := sorted(set(pythons) - set(surfaces)):
        print(f"rft portability: --client-python names {unknown}, not among --surfaces {surfaces}", file=sys.stderr)
        return 2
    items = with_variant(items, args.variant)

    def go(base_url: str) -> dict[str, list[float]]:
        target = Target(base_url, token=token, grader=args.grader)
        return anyio.run(check, target, items, surfaces, pythons)

    try:
        if args.url:
            scores = go(args.url.rstrip("/"))
        else:
            from ..testing import serve_process

            with serve_process(args.app, "--surfaces", "hosted,mcp,openenv,nemo_gym",
                               env={"RFT_AUTH_TOKENS": token or ""}) as url:
                scores = go(url)
    except (ImportError, RuntimeError) as exc:
        print(f"rft portability: {exc}", file=sys.stderr)
        return 2
    table, same = _table(items, scores, args.variant)
    from ._players_trainers import client_version

    versions = {column: client_version(column.partition("@")[0], pythons.get(column)) for column in scores}
    if args.json:
        print(json.dumps({"surfaces": list(scores), "variant": args.variant, "items": [i.get("task_id") for i in items],
                          "scores": scores, "identical": same, "clients": versions}))
    else:
        print(table)
        print("clients: " + ", ".join(f"{name}={versions[name]}" + (f" ({pythons[name]})" if name in pythons else "")
                                      for name in scores))
    return 0 if same else 1
