"""Helpers shared by the principle checks: inputs, rollouts by item, percentiles."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rft_sdk.emulator import TARGETS, ReinforcementJob, RolloutResult, load_dataset, load_job, validate_items

__all__ = ["TARGETS", "check_target", "has_gold", "has_reference", "load_inputs", "message_text", "percentiles",
           "scores_by_item"]


def check_target(target: str) -> str:
    """Return ``target`` if the emulator plays that hosted service (``TARGETS``: openai, azure).

    Raises:
        ValueError: any other name.
    """
    if target not in TARGETS:
        raise ValueError(f"target {target!r} is not a hosted service the emulator plays; use one of {list(TARGETS)}")
    return target


def load_inputs(dataset: str | Path | Sequence[Mapping[str, Any]],
                config: str | Path | Mapping[str, Any] | ReinforcementJob) -> tuple[list[dict[str, Any]], ReinforcementJob]:
    """The validated dataset items and job (a path is read; loaded items are validated the same way).

    Raises:
        DatasetError, JobConfigError: from the emulator's validators (hosted rules, 10 lines at least).
    """
    job = load_job(config)
    if isinstance(dataset, (str, Path)):
        items = load_dataset(dataset, job.tool_names)
    else:
        items = validate_items([dict(i) for i in dataset], job.tool_names)
    return items, job


def has_gold(item: Mapping[str, Any], actions_field: str = "actions", answer_field: str = "reference_answer") -> bool:
    """Whether the item carries gold ``actions`` (a list) and a ``reference_answer`` (a str)."""
    return isinstance(item.get(actions_field), list) and isinstance(item.get(answer_field), str)


def has_reference(items: Sequence[Mapping[str, Any]], actions_field: str = "actions",
                  answer_field: str = "reference_answer") -> bool:
    """Whether every item carries gold ``actions`` (a list) and a ``reference_answer`` (a str)."""
    return bool(items) and all(has_gold(i, actions_field, answer_field) for i in items)


def scores_by_item(results: Sequence[RolloutResult]) -> dict[int, list[float]]:
    """Graded scores per ``item_index`` (discarded rollouts left out)."""
    out: dict[int, list[float]] = defaultdict(list)
    for r in results:
        if not r.discarded and r.score is not None:
            out[r.item_index].append(r.score)
    return dict(out)


def percentiles(values: Sequence[float]) -> dict[str, float | None]:
    """``{"p50", "p95", "max"}`` (numpy's default linear interpolation); ``None`` each when empty."""
    if not values:
        return {"p50": None, "p95": None, "max": None}
    arr = np.asarray(values, dtype=float)
    return {"p50": float(np.percentile(arr, 50)), "p95": float(np.percentile(arr, 95)), "max": float(arr.max())}


def message_text(content: Any) -> str:
    """The text of a chat message ``content``: the string, or its text parts joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""
