"""Principle 2, production-like: the dataset looks like the traffic the model will serve.

Inputs: the dataset and an optional production log, JSONL, one request per
line: ``{"messages": [chat messages, assistant tool_calls included], "tool_calls":
[{"name": ...}] (optional)}``. The prompt of a log line is its messages
before the first assistant message; its tool calls are those of its
assistant messages (chat ``tool_calls[].function.name``) plus ``tool_calls``.
On the dataset side the prompt is the item's ``messages`` and the calls are
the item's gold ``actions`` when every item has them, else the calls of the
recorded rollouts.

Features and their drift statistic (see ``_drift``): prompt length in
estimated tokens (PSI + KS), tool calls per rollout (PSI + KS), tool mix
(PSI over tool names), language (PSI over the dominant Unicode script of the
prompt's letters, a proxy for language), vocabulary (Jensen–Shannon distance
of the word distributions; the out-of-vocabulary share is reported too).
A feature is out of bounds when its PSI exceeds ``max_psi`` (default 0.25,
"significant shift") or, for vocabulary, its JS distance exceeds
``max_js`` (default 0.5, this tool's choice: no published cut-off exists).
Without a log the verdict is ``None`` ("not checked"), never a pass.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rft_sdk.emulator import RolloutResult, estimate_tokens

from ._common import has_reference, message_text
from ._drift import js_distance, ks_statistic, psi_categorical, psi_numeric
from ._result import Finding, PrincipleResult

__all__ = ["ProductionLogError", "check_production_like", "load_production_log"]

_WORD = re.compile(r"[^\W\d_]+")


class ProductionLogError(ValueError):
    """The production log cannot be read; the message names the line."""


def load_production_log(path: str | Path) -> list[dict[str, Any]]:
    """Read a production log JSONL (shape in the module docstring).

    Raises:
        ProductionLogError: unreadable file, invalid JSON, or a line without a ``messages`` list.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProductionLogError(f"cannot read production log {path}: {exc}") from exc
    out = []
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ProductionLogError(f"{path}: line {n}: invalid JSON at column {exc.colno}: {exc.msg}") from None
        if not isinstance(line, dict) or not isinstance(line.get("messages"), list):
            raise ProductionLogError(f"{path}: line {n}: expected an object with a 'messages' list")
        out.append(line)
    if not out:
        raise ProductionLogError(f"{path}: no requests in the production log")
    return out


def _prompt(messages: Sequence[Mapping[str, Any]]) -> str:
    parts = []
    for m in messages:
        if not isinstance(m, Mapping) or m.get("role") == "assistant":
            break
        if m.get("role") in ("system", "developer", "user"):
            parts.append(message_text(m.get("content")))
    return "\n".join(parts)


def _log_calls(line: Mapping[str, Any]) -> list[str]:
    names = []
    for m in line.get("messages", []):
        if isinstance(m, Mapping) and m.get("role") == "assistant":
            for c in m.get("tool_calls") or []:
                fn = c.get("function") if isinstance(c, Mapping) else None
                name = fn.get("name") if isinstance(fn, Mapping) else (c.get("name") if isinstance(c, Mapping) else None)
                if isinstance(name, str):
                    names.append(name)
    for c in line.get("tool_calls") or []:
        if isinstance(c, Mapping) and isinstance(c.get("name"), str):
            names.append(c["name"])
    return names


def _script(text: str) -> str:
    scripts = Counter(unicodedata.name(ch, "UNKNOWN").split(" ")[0] for ch in text if ch.isalpha())
    return scripts.most_common(1)[0][0] if scripts else "NONE"


def _features(prompts: list[str], calls: list[list[str]] | None) -> dict[str, Any]:
    words: Counter[str] = Counter(w.lower() for p in prompts for w in _WORD.findall(p))
    return {"prompt_tokens": [float(estimate_tokens(p)) for p in prompts],
            "language": [_script(p) for p in prompts], "vocabulary": words,
            "calls_per_rollout": None if calls is None else [float(len(c)) for c in calls],
            "tool_mix": None if calls is None else [n for c in calls for n in c]}


def _dataset_calls(items: Sequence[Mapping[str, Any]], rollouts: Sequence[RolloutResult] | None
                   ) -> tuple[list[list[str]] | None, str]:
    if has_reference(items):
        return [[a["name"] for a in i["actions"]] for i in items], "gold actions"
    if rollouts:
        return [[c.name for c in r.tool_calls] for r in rollouts], "recorded rollouts"
    return None, "none"


def check_production_like(
    dataset: Sequence[Mapping[str, Any]],
    production_log: str | Path | Sequence[Mapping[str, Any]] | None = None,
    *,
    rollouts: Sequence[RolloutResult] | None = None,
    max_psi: float = 0.25,
    max_js: float = 0.5,
) -> PrincipleResult:
    """Compare the dataset with a production log, feature by feature.

    Args:
        dataset: the dataset items.
        production_log: a JSONL path or already-read lines; ``None`` → not checked.
        rollouts: recorded rollouts, for the dataset's tool calls when items carry no ``actions``.
        max_psi: PSI above which a feature is out of bounds.
        max_js: Jensen–Shannon distance above which the vocabulary is out of bounds.

    Returns:
        :class:`PrincipleResult` with evidence ``{"checked", "log_requests",
        "dataset_items", "dataset_calls_from", "features": {name: {"statistic",
        "value", "bound", "out_of_bounds", "dataset", "production"}},
        "out_of_bounds": [names]}``.

    Raises:
        ProductionLogError: the log cannot be read.
    """
    if production_log is None:
        return PrincipleResult("production_like", None, "not checked: no --production-log given",
                               {"checked": False, "features": {}, "out_of_bounds": []},
                               [Finding("warn", "no production log: drift between training data and real traffic "
                                        "was not checked", "pass a JSONL of real requests (--production-log) so "
                                        "the dataset can be compared with what the model will serve")])
    log = load_production_log(production_log) if isinstance(production_log, (str, Path)) else list(production_log)
    calls, source = _dataset_calls(dataset, rollouts)
    ds = _features([_prompt(i.get("messages", [])) for i in dataset], calls)
    log_calls = [_log_calls(line) for line in log]
    pr = _features([_prompt(line.get("messages", [])) for line in log], log_calls if calls is not None else None)
    features: dict[str, dict[str, Any]] = {}
    for name in ("prompt_tokens", "calls_per_rollout"):
        if ds[name] is None:
            continue
        features[name] = {"statistic": "psi", "value": psi_numeric(ds[name], pr[name]), "bound": max_psi,
                          "ks": ks_statistic(ds[name], pr[name]),
                          "dataset": {"mean": sum(ds[name]) / len(ds[name])},
                          "production": {"mean": sum(pr[name]) / len(pr[name])}}
    for name in ("tool_mix", "language"):
        if not ds[name] or not pr[name]:
            continue
        features[name] = {"statistic": "psi", "value": psi_categorical(ds[name], pr[name]), "bound": max_psi,
                          "dataset": dict(Counter(ds[name]).most_common(8)),
                          "production": dict(Counter(pr[name]).most_common(8))}
    total = sum(pr["vocabulary"].values())
    oov = sum(c for w, c in pr["vocabulary"].items() if w not in ds["vocabulary"])
    features["vocabulary"] = {"statistic": "js_distance", "value": js_distance(ds["vocabulary"], pr["vocabulary"]),
                              "bound": max_js, "oov_share": oov / total if total else 0.0,
                              "dataset": {"words": len(ds["vocabulary"])}, "production": {"words": len(pr["vocabulary"])}}
    for f in features.values():
        f["out_of_bounds"] = f["value"] > f["bound"]
    out = [n for n, f in features.items() if f["out_of_bounds"]]
    findings = [Finding("fail", f"{n}: {features[n]['statistic']} {features[n]['value']:.3f} > {features[n]['bound']}",
                        "the model would train on traffic unlike production; sample the training and eval items "
                        "from (anonymised) production requests") for n in out]
    if calls is None:
        findings.append(Finding("warn", "the dataset has no gold actions and no rollouts: tool features skipped",
                                "add 'actions' to items or run with a policy"))
    summary = (f"{len(out)} of {len(features)} features out of bounds" + (f": {', '.join(out)}" if out else "")
               + f" ({len(log)} production requests vs {len(dataset)} items)")
    evidence = {"checked": True, "log_requests": len(log), "dataset_items": len(dataset),
                "dataset_calls_from": source, "features": features, "out_of_bounds": out}
    return PrincipleResult("production_like", not out, summary, evidence, findings)
