"""``rft train --config cfg.json --out DIR``: SFT + GRPO against the job's endpoints.

Config file (JSON)::

    {"job": "job.json" | {...hosted job or its "reinforcement" object...},
     "train_items": "train.jsonl",          # dataset JSONL (or an inline list)
     "eval_items": "heldout.jsonl",         # optional
     "training": {...TrainConfig fields...}}  # optional; defaults otherwise

Relative paths are resolved against the config file's folder. The run folder
receives ``metrics.jsonl``, ``checkpoint.pt`` (last step), ``best.pt`` (best
held-out evaluation), ``reward_curve.png`` and ``summary.json`` (``eval_after``
refers to the last step, ``eval_best`` to ``best.pt``, ``budget_split`` says how
``max_train_s`` went between SFT and GRPO). Before any rollout the train items'
gold rows are checked against ``block_size`` (``_preflight``). Exit status 0 on
success, 2 on a bad config or rows that cannot fit ``block_size`` (one line with the fix).
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import re
import sys
from pathlib import Path
from typing import Any

__all__ = ["FORMATTER_CLASS", "HELP", "add_arguments", "config_keys_help", "load_run_config", "main", "run"]

#: One-line help shown by ``rft --help``.
HELP = "train a small policy with SFT + GRPO against your endpoints (needs the train extra)"


#: ``rft train --help`` keeps the config-key table's line breaks.
FORMATTER_CLASS = argparse.RawDescriptionHelpFormatter
_FIELD_LINE = re.compile(r"^\s+(\w+): [^=]+= .*?#\s*(.+)$")


def config_keys_help() -> str:
    """The keys of the config's ``"training"`` object with their defaults and meaning, read from
    ``TrainConfig`` (its fields and the comment beside each default), so the help cannot drift."""
    from ._config import TrainConfig

    comments: dict[str, str] = {}
    for line in inspect.getsource(TrainConfig).splitlines():
        if match := _FIELD_LINE.match(line):
            comments[match.group(1)] = match.group(2).strip()
    rows = [f"  {f.name} = {json.dumps(f.default) if not isinstance(f.default, tuple) else list(f.default)}"
            f"{'  ' + comments[f.name] if f.name in comments else ''}" for f in dataclasses.fields(TrainConfig)]
    return ('config file (JSON): {"job": PATH or {...}, "train_items": PATH.jsonl or [...], "eval_items": ..., '
            '"training": {...}}\nkeys of "training" (key = default  meaning):\n' + "\n".join(rows))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--config``, ``--out`` and overrides (``--steps``, ``--sft-steps``, ``--seed``, ``--max-train-s``)
    to ``parser``; its epilog lists every key of the config's ``"training"`` object."""
    parser.add_argument("--config", required=True, help="run config JSON (job, train_items, eval_items, training)")
    parser.add_argument("--out", required=True, help="run folder for checkpoints, metrics and the plot")
    parser.add_argument("--steps", type=int, default=None, help="override training.steps (GRPO steps)")
    parser.add_argument("--sft-steps", type=int, default=None, help="override training.sft_steps")
    parser.add_argument("--seed", type=int, default=None, help="override training.seed")
    parser.add_argument("--max-train-s", type=float, default=None,
                        help="override training.max_train_s (wall-clock budget, seconds; 0 = none, so a run of "
                             "--steps N is bit-reproducible)")
    parser.formatter_class = FORMATTER_CLASS
    parser.epilog = config_keys_help()


def _load_items(value: Any, base: Path, key: str) -> list[dict[str, Any]]:
    if isinstance(value, list):
        return value
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a JSONL path or a list of items")
    path = base / value
    items = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                try:
                    items.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}:{n}: not JSON ({exc.msg})") from exc
    return items


def load_run_config(path: str | Path) -> tuple[Any, list[dict[str, Any]], list[dict[str, Any]], Any]:
    """``(job, train_items, eval_items, TrainConfig)`` from a run config file.

    Raises:
        FileNotFoundError: config or a referenced file missing. ValueError: malformed config.
    """
    from ._config import TrainConfig

    path = Path(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "job" not in data or "train_items" not in data:
        raise ValueError(f"{path}: the config needs 'job' and 'train_items'")
    unknown = set(data) - {"job", "train_items", "eval_items", "training"}
    if unknown:
        raise ValueError(f"{path}: unknown keys {sorted(unknown)}")
    base = path.parent
    job = data["job"]
    if isinstance(job, str):
        job = json.loads((base / job).read_text(encoding="utf-8"))
    train_items = _load_items(data["train_items"], base, "train_items")
    eval_items = _load_items(data["eval_items"], base, "eval_items") if data.get("eval_items") else []
    return job, train_items, eval_items, TrainConfig.from_dict(dict(data.get("training") or {}))


def run(args: argparse.Namespace) -> int:
    """Run training as configured; print a one-line summary. Returns the exit status."""
    from ._trainer import train

    try:
        job, train_items, eval_items, cfg = load_run_config(args.config)
        overrides = {name: getattr(args, name, None) for name in ("steps", "sft_steps", "seed", "max_train_s")}
        chosen: dict[str, Any] = {k: v for k, v in overrides.items() if v is not None}
        if chosen.get("max_train_s") == 0:
            chosen["max_train_s"] = None  # 0: no time budget
        cfg = dataclasses.replace(cfg, **chosen)  # re-validates
    except (OSError, ValueError) as exc:
        print(f"rft train: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    from ._preflight import BlockSizeError

    try:
        result = train(cfg, job=job, train_items=train_items, eval_items=eval_items, out_dir=out)
    except BlockSizeError as exc:  # the pre-flight: before any rollout, or before the first SFT step
        print(f"rft train: {exc}", file=sys.stderr)
        return 2
    split = result.budget_split
    if cfg.max_train_s is not None:
        print(f"rft train: budget {cfg.max_train_s:g} s: SFT {split['sft_s']:g} s ({split['sft_steps_done']}/"
              f"{split['sft_steps']} steps, capped at {split['sft_cap_s']:g} s), GRPO {split['grpo_s']:g} s "
              f"({split['grpo_steps_done']}/{split['grpo_steps']} steps), evaluation {split['eval_s']:g} s",
              file=sys.stderr)
    summary = {"eval_before": result.eval_before, "eval_after": result.eval_after, "eval_best": result.eval_best,
               "steps_done": result.steps_done, "steps_fit": result.steps_fit, "budget_split": split,
               "files": {k: str(v) for k, v in result.files.items()}}
    (out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print(json.dumps(summary))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Standalone entry: ``python -m rft_sdk.train.cli --config … --out …``."""
    parser = argparse.ArgumentParser(prog="rft train", description=__doc__.splitlines()[0],
                                     formatter_class=FORMATTER_CLASS)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
