"""Build the retail RFT datasets from τ²-bench's tasks.

``python -m examples.retail.build_dataset [--out DIR]`` writes
``retail_train.jsonl`` (74 items) and ``retail_test.jsonl`` (40 items), in
task order of ``split_tasks.json``. One line (hosted protocol §2)::

    {"messages": [{"role": "system", ...}, {"role": "user", ...}],
     "tools": [<15 tools, chat-completions format, from server.dataset_tools()>],
     "task_id": "0", "actions": [{"name", "arguments"}], "communicate_info": [str],
     "reference_answer": str, "max_tool_calls": int,
     "alternatives": [{"name": str, "actions": [...], "reference_answer": str (optional)}]}

``actions`` is τ²-bench's gold completed into a full demonstration (the
identification step and the reads that return every stated fact: ``_gold``);
``alternatives`` are other valid solutions ``rft doctor`` checks the grader
accepts; ``max_tool_calls`` is the declared tool-call budget the grader and
``rft doctor`` both read (``2 * len(actions) + 5``).

Deterministic: re-running recreates byte-identical files.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path
from typing import Any

from ._db import DATA_DIR, BaseDB, load_base_db
from ._gold import alternatives, complete_actions
from ._grading import call_budget
from ._render import SYSTEM_PROMPT, reference_answer, render_user_message

__all__ = ["build_items", "load_tasks", "main", "write_datasets"]

SPLITS = ("train", "test")


def load_tasks(data_dir: Path = DATA_DIR) -> tuple[dict[str, dict[str, Any]], dict[str, list[str]]]:
    """``({task_id: task}, {"train": [ids], "test": [ids]})`` from the packaged gzip files."""
    with gzip.open(data_dir / "tasks.json.gz", "rt", encoding="utf-8") as fh:
        tasks = {task["id"]: task for task in json.load(fh)}
    with gzip.open(data_dir / "split_tasks.json.gz", "rt", encoding="utf-8") as fh:
        splits = json.load(fh)
    for split in SPLITS:
        missing = [i for i in splits.get(split, []) if i not in tasks]
        if split not in splits or missing:
            raise ValueError(f"split {split!r} missing or names unknown tasks {missing[:5]}")
    return tasks, splits


def dataset_tools() -> list[dict[str, Any]]:
    """The 15 retail tools in chat-completions format (``get_order_status`` excluded)."""
    from .app import server  # needs rft_sdk; imported here so the data layer stays SDK-free

    return [t for t in server.dataset_tools("chat_completions") if t["function"]["name"] != "get_order_status"]


def build_items(task_ids: list[str], tasks: dict[str, dict[str, Any]], tools: list[dict[str, Any]],
                base: BaseDB | None = None) -> list[dict[str, Any]]:
    """Dataset lines for ``task_ids`` (see module doc)."""
    base = base or load_base_db()
    items = []
    for task_id in task_ids:
        task = tasks[task_id]
        criteria = task["evaluation_criteria"]
        user_message = render_user_message(task, base.view())
        actions = complete_actions(task, user_message, base)
        info = list(criteria.get("communicate_info") or [])
        items.append({
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": user_message},
            ],
            "tools": tools,
            "task_id": task_id,
            "actions": actions,
            "communicate_info": info,
            "reference_answer": reference_answer(task),
            "max_tool_calls": call_budget(actions),
            "alternatives": alternatives(actions, info, base),
        })
    return items


def write_datasets(out_dir: Path = DATA_DIR) -> dict[str, Path]:
    """Write ``retail_{train,test}.jsonl`` into ``out_dir``; returns ``{split: path}``."""
    tasks, splits = load_tasks()
    tools = dataset_tools()
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for split in SPLITS:
        path = out_dir / f"retail_{split}.jsonl"
        lines = [json.dumps(item, ensure_ascii=False) for item in build_items(splits[split], tasks, tools)]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths[split] = path
    return paths


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m examples.retail.build_dataset", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DATA_DIR, help="output folder (default: examples/retail/data)")
    args = parser.parse_args(argv)
    for split, path in write_datasets(args.out).items():
        count = sum(1 for _ in path.open(encoding="utf-8"))
        print(f"{split}: {count} items -> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
