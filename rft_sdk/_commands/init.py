"""``rft init DIR``: scaffold a task that passes ``rft validate``, ``rft emulate`` and ``rft doctor`` as written.

Usage::

    rft init my_task [--port 8000]

Writes into ``DIR`` (created; refused when it exists and is not empty):

* ``app.py``: a ``ToolServer`` with a read tool (``get_book``) and a write tool
  (``lend_book``) on a real SQLite database per rollout (``rollout.db``; its files in
  ``$RFT_DB_DIR/<name>/`` when ``RFT_DB_DIR`` is set, else ``.rft-db/<name>/`` beside
  ``app.py``), and an end-state grader (``ctx.db.diff_gold`` against the gold actions);
* ``train.jsonl``: ten dataset lines with their tools and gold fields
  (``rft_sdk.protocol.GoldItem``: ``actions``, ``reference_answer``, ``task_id``);
* ``job.json``: the job's ``reinforcement`` object for a server on
  ``http://127.0.0.1:PORT`` (what ``rft emulate`` and ``rft doctor`` read);
* ``test_app.py``: pytest tests through ``rft_sdk.testing.TestClient``;
* ``.gitignore``: the rollout databases' default folder (``.rft-db/``) and run outputs (``runs/``).

Then it prints the next three commands. The dataset and the job are written by
the SDK from the generated server itself (``dataset_tools``, ``job_config``),
so they match it. Exit status: 0 written, 2 refused (one line saying why).
Declared as the ``init`` entry point of the ``rft_sdk.commands`` group; guide:
``docs/first-task.md``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
import uuid
from pathlib import Path
from typing import Any

from .._cli_commands import standalone_main
from ._scaffold import APP, BOOKS, GITIGNORE, MEMBERS, TEST

__all__ = ["DOCTOR_PRINCIPLES", "HELP", "add_arguments", "load_app_file", "main", "next_commands", "run", "scaffold"]

#: One-line help shown by ``rft --help``.
HELP = "scaffold a task folder (tools on SQLite, grader, dataset with gold, job, tests) that passes validate/emulate/doctor"
#: Lines of the dataset written (the hosted minimum).
LINES = 10
#: Each line's tool-call budget (the gold makes 2 calls), enforced by the generated grader.
MAX_TOOL_CALLS = 4
#: What ``rft doctor`` checks on the scaffold. *learnable* is left out: it needs a stochastic policy
#: (a model, temperature > 0), and the reference replay is deterministic (docs/first-task.md).
DOCTOR_PRINCIPLES = "gradeable,production_like,unhackable"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``init`` options to ``parser``."""
    parser.add_argument("dir", metavar="DIR", help="the folder to create (must be absent or empty)")
    parser.add_argument("--port", type=int, default=8000,
                        help="port the job's URLs point at: where you will run `rft serve` (default 8000)")


def _slug(folder: Path) -> str:
    """A template name for ``SQLiteDatabase(name=)`` from the folder's name: ``[a-z][a-z0-9_]{0,19}``."""
    text = re.sub(r"[^a-z0-9_]+", "_", folder.name.lower()).strip("_")
    if not text or not text[0].isalpha():
        text = f"task_{text}".rstrip("_")
    return text[:20].rstrip("_") or "task"


def _dataset_lines(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ten requests, each a read then a write: lend book ``b`` to member ``m``."""
    lines = []
    for k in range(LINES):
        book_id, title, _ = BOOKS[k % len(BOOKS)]
        member = MEMBERS[(k * 2 + k // len(BOOKS)) % len(MEMBERS)]
        lines.append({
            "messages": [
                {"role": "developer", "content": "You are the library's assistant. Use the tools; check that a "
                                                  "copy is available before lending it."},
                {"role": "user", "content": f"Hi, I'm {member}. Could I borrow {title} (book {book_id})?"},
            ],
            "tools": tools,
            "task_id": f"lend-{k + 1}",
            "actions": [{"name": "get_book", "arguments": {"book_id": book_id}},
                        {"name": "lend_book", "arguments": {"book_id": book_id, "member": member}}],
            "reference_answer": f"Done: {title} is lent to you, {member}.",
            "max_tool_calls": MAX_TOOL_CALLS,
        })
    return lines


def load_app_file(path: Path) -> Any:
    """The ``server`` of the generated ``app.py`` (imported under a unique module name, never cached)."""
    name = f"_rft_init_{uuid.uuid4().hex}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None  # a .py file path always has a loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pydantic resolve annotations through sys.modules
    try:
        spec.loader.exec_module(module)
        return module.server
    finally:
        sys.modules.pop(name, None)


def scaffold(folder: str | Path, *, port: int = 8000) -> list[Path]:
    """Write the task files into ``folder`` (created); return their paths.

    Raises:
        FileExistsError: ``folder`` exists and is not an empty directory.
        ValueError: ``port`` outside 1..65535.
    """
    root = Path(folder)
    if not 0 < port < 65536:
        raise ValueError(f"--port must be 1..65535, got {port}")
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise FileExistsError(f"{str(root)!r} exists and is not empty: choose a new folder")
    root.mkdir(parents=True, exist_ok=True)
    app = root / "app.py"
    app.write_text(APP.format(port=port, books=BOOKS, slug=_slug(root.resolve())), encoding="utf-8")
    server = load_app_file(app)
    dataset = root / "train.jsonl"
    dataset.write_text("".join(json.dumps(line) + "\n" for line in _dataset_lines(server.dataset_tools())),
                       encoding="utf-8")
    job = server.job_config(f"http://127.0.0.1:{port}")["method"]["reinforcement"]
    (root / "job.json").write_text(json.dumps(job, indent=2) + "\n", encoding="utf-8")
    (root / "test_app.py").write_text(TEST, encoding="utf-8")
    (root / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    return [app, dataset, root / "job.json", root / "test_app.py", root / ".gitignore"]


def next_commands(port: int) -> dict[str, str]:
    """The commands to run after ``rft init``, from inside the folder, by step name."""
    return {
        "validate": "rft validate train.jsonl --app app:server",
        "serve": f"rft serve app:server --port {port}",
        "emulate": "rft emulate --dataset train.jsonl --config job.json --out runs/reference",
        "perturbed": "rft emulate --dataset train.jsonl --config job.json --policy perturbed --write-tools lend_book "
                     "--out runs/perturbed",
        "doctor": f"rft doctor --dataset train.jsonl --config job.json --principles {DOCTOR_PRINCIPLES} "
                  "--out runs/doctor",
        "test": "pytest -q test_app.py",
    }


def run(args: argparse.Namespace) -> int:
    """Run ``rft init``; print what was written and the next commands; return the exit status."""
    try:
        written = scaffold(args.dir, port=args.port)
    except (FileExistsError, ValueError, OSError) as exc:
        print(f"rft init: {exc}", file=sys.stderr)
        return 2
    steps = next_commands(args.port)
    print(f"wrote {', '.join(p.name for p in written)} into {args.dir}\n\n"
          f"next, from {args.dir}:\n"
          f"  1. {steps['validate']}\n"
          f"       the dataset, its gold fields, and a dry run of every gold trajectory\n"
          f"  2. {steps['serve']}\n"
          f"       leave it running (another terminal)\n"
          f"  3. {steps['emulate']}\n"
          f"       every gold trajectory played as the hosted service would: reward 1.0\n"
          f"then: {steps['perturbed']}\n"
          f"      {steps['doctor']}\n"
          f"      {steps['test']}\n"
          f"guide: docs/first-task.md")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Standalone entry point: ``python -m rft_sdk._commands.init DIR``."""
    return standalone_main("rft init", HELP, add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
