"""A small learnable task on the real retail data: "what is the status of order #W…?".

Each item needs exactly one tool call, ``get_order_status(order_id)``, and a
short exact answer (the order's status: ``pending``, ``processed``,
``delivered`` or ``cancelled``), graded by the retail server's named grader
``POST /grade/order_status`` (contract: docs/ARCHITECTURE.md, "Retail example ↔
trainer seam"). Orders are split into train and held-out sets, so held-out
success measures whether a policy learned the lookup, not the orders.

Item shape (one JSONL line of a hosted dataset)::

    {"messages": [{"role": "user", "content": "What is the status of order #W2611340?"}],
     "tools": [<chat-completions definition of get_order_status>],
     "order_id": "#W2611340", "answer": "processed",
     "actions": [{"name": "get_order_status", "arguments": {"order_id": "#W2611340"}}],
     "reference_answer": "processed"}

``actions``/``reference_answer`` follow the replay-policy fields of the
contract, so the trainer can build SFT demonstrations through the real endpoints.

Run ``python -m examples.retail.order_status_task --out DIR`` to write
``train.jsonl`` and ``heldout.jsonl``.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
from pathlib import Path
from typing import Any

from ._db import load_base_db

__all__ = [
    "BENCH_TRAINING",
    "GRADER_NAME",
    "PARAPHRASES",
    "QUESTION_TEMPLATES",
    "TOOL_NAME",
    "build_items",
    "load_orders",
    "order_status_job",
    "order_status_tool",
    "split_orders",
]

TOOL_NAME = "get_order_status"
GRADER_NAME = "order_status"
QUESTION_TEMPLATES = ("What is the status of order {order_id}?",)
# Harder variants (the order id sits at a different offset in each): pass templates=QUESTION_TEMPLATES + PARAPHRASES.
PARAPHRASES = (
    "Can you check order {order_id} for me?",
    "Status of my order {order_id}, please.",
)
# The settings of benchmarks/bench_grpo_retail.py, also written to train_config.json by main().
# SFT stops once its loss shows the order-id copy has been learned (a plateau near 0.25 nats/token, left
# after 300-400 steps at sft_lr 1e-3 for every seed measured; 1,200 is only a cap), then GRPO sharpens the
# sampling policy at a small peak lr with a KL penalty to the post-SFT policy (beta 0.04, DeepSeekMath's GRPO
# value, arXiv:2402.03300): without it greedy held-out success fell 1.000 -> 0.915 by step 25 (docs/training.md).
BENCH_TRAINING: dict[str, Any] = {"sft_steps": 1200, "sft_lr": 1e-3, "sft_target_loss": 0.05, "steps": 10_000,
                                  "max_train_s": 580.0, "items_per_step": 8, "group_size": 8, "lr": 2e-4,
                                  "beta": 0.04, "temperature": 0.7, "eval_every": 25, "eval_sampled": True}


def load_orders(db_path: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """The ``orders`` table of the τ²-bench retail ``db.json`` (``{order_id: order}``).

    Read with :func:`examples.retail.load_base_db` (``db_path``, default
    ``examples/retail/data/db.json.gz``; ``.gz`` is gunzipped), cached per process and shared
    with the retail server. Treat the result as read-only.

    Raises:
        FileNotFoundError: no database file found.
        ValueError: the file is not a retail database (``products``/``users``/``orders`` tables).
    """
    return (load_base_db() if db_path is None else load_base_db(str(db_path))).tables["orders"]


def order_status_tool() -> dict[str, Any]:
    """Chat-completions definition of ``get_order_status`` (the dataset's ``tools`` entry).

    A copy of the retail server's own definition (``server.dataset_tools()``), so the
    dataset describes exactly the endpoint the job calls.
    """
    from .app import server  # needs rft_sdk; imported here so the data layer stays SDK-free

    tool = next(t for t in server.dataset_tools("chat_completions") if t["function"]["name"] == TOOL_NAME)
    return copy.deepcopy(tool)  # the server's parameters schema must not be shared with the items


def split_orders(order_ids: list[str], *, heldout_fraction: float = 0.2, seed: int = 0) -> tuple[list[str], list[str]]:
    """Shuffle ``order_ids`` with ``seed`` and cut off ``heldout_fraction`` of them: ``(train, heldout)``.

    Raises:
        ValueError: ``heldout_fraction`` not in (0, 1), or too few orders for both sides.
    """
    if not 0.0 < heldout_fraction < 1.0:
        raise ValueError(f"heldout_fraction must be in (0, 1), got {heldout_fraction}")
    ids = sorted(order_ids)
    random.Random(seed).shuffle(ids)
    n_held = round(len(ids) * heldout_fraction)
    if n_held == 0 or n_held == len(ids):
        raise ValueError(f"cannot split {len(ids)} orders with heldout_fraction={heldout_fraction}")
    return ids[n_held:], ids[:n_held]


def _item(order: dict[str, Any], template: str, tool: dict[str, Any]) -> dict[str, Any]:
    oid, status = order["order_id"], order["status"]
    return {"messages": [{"role": "user", "content": template.format(order_id=oid)}],
            "tools": [tool], "order_id": oid, "answer": status,
            "actions": [{"name": TOOL_NAME, "arguments": {"order_id": oid}}], "reference_answer": status}


def build_items(orders: dict[str, dict[str, Any]] | None = None, *, heldout_fraction: float = 0.2, seed: int = 0,
                templates: tuple[str, ...] = QUESTION_TEMPLATES) -> tuple[list[dict], list[dict]]:
    """One question per order (template drawn with ``seed``), split by order: ``(train, heldout)``.

    Args:
        orders: ``{order_id: order}``; ``None`` loads them with :func:`load_orders`.
        heldout_fraction / seed: see :func:`split_orders`.
        templates: question formats with an ``{order_id}`` field.

    Raises:
        ValueError: no templates, or an order lacks ``order_id``/``status``.
    """
    if not templates:
        raise ValueError("need at least one question template")
    orders = load_orders() if orders is None else orders
    for key, order in orders.items():
        if "order_id" not in order or "status" not in order:
            raise ValueError(f"order {key!r} lacks 'order_id' or 'status'")
    train_ids, held_ids = split_orders(list(orders), heldout_fraction=heldout_fraction, seed=seed)
    rng = random.Random(seed + 1)
    tool = order_status_tool()
    build = lambda ids: [_item(orders[i], rng.choice(templates), tool) for i in ids]  # noqa: E731
    return build(train_ids), build(held_ids)


def order_status_job(base_url: str, *, headers: dict[str, str] | None = None,
                     max_episode_steps: int = 3, rate_limit: float = 500.0) -> dict[str, Any]:
    """Hosted job config (``{"method": {"type": "reinforcement", ...}}``) for the retail server at ``base_url``.

    Tool URL: ``{base_url}/tools/get_order_status``; grader: ``{base_url}/grade/order_status``
    (pass_threshold 1.0: the answer is either exact or wrong). ``rate_limit`` (grader calls per
    second) defaults above the hosted 50/s so local runs against a local server are not throttled.
    """
    from .app import server

    return {"method": {"type": "reinforcement", "reinforcement": {
        "tools": [t for t in server.job_tools(base_url, headers) if t["name"] == TOOL_NAME],
        "grader": server.grader_spec(base_url, GRADER_NAME, headers, rate_limit=rate_limit, pass_threshold=1.0),
        "max_episode_steps": max_episode_steps,
        "hyperparameters": {"compute_multiplier": 1.0, "n_epochs": 1, "batch_size": 16}}}}


def main(argv: list[str] | None = None) -> int:
    """CLI: write ``train.jsonl``, ``heldout.jsonl``, ``job.json`` and ``train_config.json`` under ``--out``.

    ``train_config.json`` is ready for ``rft train --config OUT/train_config.json --out RUN``
    against a retail server at ``--base-url``; its ``training`` block holds the settings of
    ``benchmarks/bench_grpo_retail.py`` (150 SFT steps, then GRPO for up to 580 s).
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--db", default=None, help="path to db.json or db.json.gz")
    parser.add_argument("--heldout-fraction", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--base-url", default="http://127.0.0.1:8000",
                        help="where the retail server runs (for job.json; default http://127.0.0.1:8000)")
    args = parser.parse_args(argv)
    train, held = build_items(load_orders(args.db), heldout_fraction=args.heldout_fraction, seed=args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, items in (("train.jsonl", train), ("heldout.jsonl", held)):
        with open(out / name, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(it) + "\n" for it in items)
    (out / "job.json").write_text(json.dumps(order_status_job(args.base_url), indent=2) + "\n", encoding="utf-8")
    training = {"seed": args.seed, **BENCH_TRAINING}
    config = {"job": "job.json", "train_items": "train.jsonl", "eval_items": "heldout.jsonl", "training": training}
    (out / "train_config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {len(train)} train and {len(held)} held-out items, job.json and train_config.json to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
