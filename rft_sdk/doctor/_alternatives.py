"""Valid alternative solutions: other paths to the same outcome that the grader must accept.

A grader that rejects a correct solution because it took another path (the
customer identified by email where the gold used name + zip; extra reads; the
same writes in another order) pushes the policy away from correct behaviour —
the *gradeable* principle fails on it. Two sources:

* the item field ``alternatives`` (:data:`ALTERNATIVES_FIELD`): a list of
  ``{"name": str, "actions": [{"name", "arguments"}], "reference_answer": str}``
  (``name`` optional, default ``"alternative_<k>"``; ``reference_answer``
  optional, default the item's). Each is replayed like the gold;
* user probes whose ``intent`` is ``"valid"`` (``_probes``), run on the items they apply to.

Each must score at least the job's ``pass_threshold``; a discarded rollout counts
as rejected. A rollout cut off by ``max_episode_steps`` before its answer is not
a grader's fault: it is counted as ``truncated`` (the job allows fewer turns
than a valid solution needs — a warning of its own).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rft_sdk.emulator import ClientSettings, PolicyStep, ReinforcementJob, make_tool_call, run_rollouts, turns_taken

from ._probes import VALID, probe_applies

__all__ = ["ALTERNATIVES_FIELD", "AlternativeReplay", "check_alternatives", "read_alternatives"]

ALTERNATIVES_FIELD = "alternatives"


def read_alternatives(items: Sequence[Mapping[str, Any]], field: str = ALTERNATIVES_FIELD
                      ) -> list[list[dict[str, Any]]]:
    """Per item, its validated alternatives (``[]`` when the field is absent).

    Raises:
        ValueError: a malformed entry (the message names the item and the entry).
    """
    out: list[list[dict[str, Any]]] = []
    for i, item in enumerate(items):
        alts = item.get(field)
        if alts is None:
            out.append([])
            continue
        if not isinstance(alts, list):
            raise ValueError(f"item {i}: {field!r} must be a list of {{'actions': [...]}} objects")
        for k, alt in enumerate(alts):
            where = f"item {i}: {field}[{k}]"
            if not isinstance(alt, Mapping) or not isinstance(alt.get("actions"), list):
                raise ValueError(f"{where} needs an 'actions' list")
            bad = [c for c in alt["actions"] if not isinstance(c, Mapping) or not isinstance(c.get("name"), str)]
            if bad:
                raise ValueError(f"{where}: actions must be {{'name': str, 'arguments': dict}}, got {bad[0]!r}")
            for key in ("name", "reference_answer"):
                if key in alt and not isinstance(alt[key], str):
                    raise ValueError(f"{where}: {key!r} must be a string")
        out.append([dict(a) for a in alts])
    return out


class AlternativeReplay:
    """Replays alternative number ``k`` of an item, one call per turn, then its answer (``intent`` valid).

    Args:
        k: which entry of the item's ``alternatives`` to play.
        field: the item field holding the alternatives.
        answer_field: the item's reference answer field (used when the alternative has none).
    """

    intent = VALID

    def __init__(self, k: int, field: str = ALTERNATIVES_FIELD, answer_field: str = "reference_answer") -> None:
        self.k, self.field, self.answer_field = k, field, answer_field

    def applies(self, item: Mapping[str, Any]) -> bool:
        """Whether the item has an alternative number ``k``."""
        alts = item.get(self.field)
        return isinstance(alts, list) and len(alts) > self.k

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, item: dict[str, Any],
                  trace_id: str) -> PolicyStep:
        """Call number ``turn`` of the alternative, or its answer after the last one."""
        alt = item[self.field][self.k]
        turn = turns_taken(messages, item)
        if turn < len(alt["actions"]):
            call = alt["actions"][turn]
            return PolicyStep(tool_calls=[make_tool_call(call["name"], call.get("arguments", {}))])
        return PolicyStep(content=str(alt.get("reference_answer", item.get(self.answer_field, ""))))


async def check_alternatives(items: Sequence[Mapping[str, Any]], job: ReinforcementJob,
                             valid_probes: Mapping[str, Any] | None = None, *, field: str = ALTERNATIVES_FIELD,
                             settings: ClientSettings | None = None, max_concurrency: int = 32
                             ) -> dict[str, Any]:
    """Replay every alternative and run every valid probe; collect those scored below ``pass_threshold``.

    Returns:
        ``{"checked": int, "rejected": [{"item", "path", "score", "reasons"}], "truncated":
        [{"item", "path"}], "by_path": {path: {"checked", "rejected", "truncated"}}}``; ``path``
        is the alternative's name or the probe's.

    Raises:
        ValueError: malformed alternatives (see :func:`read_alternatives`).
    """
    alts = read_alternatives(items, field)
    threshold = job.grader.pass_threshold
    plays: list[tuple[Any, Any]] = [(AlternativeReplay(k, field), None) for k in range(max(map(len, alts), default=0))]
    plays += [(probe, name) for name, probe in (valid_probes or {}).items()]
    checked, rejected, truncated = 0, [], []
    by_path: dict[str, dict[str, int]] = {}
    for probe, probe_name in plays:
        index = [i for i, item in enumerate(items) if probe_applies(probe, item)]
        if not index:
            continue
        results = await run_rollouts([dict(items[i]) for i in index], probe, job, samples_per_item=1,
                                     max_concurrency=max_concurrency, settings=settings)
        for r in results:
            i = index[r.item_index]
            path = probe_name or str(alts[i][probe.k].get("name") or f"alternative_{probe.k}")
            row = by_path.setdefault(path, {"checked": 0, "rejected": 0, "truncated": 0})
            if r.truncated:
                row["truncated"] += 1
                truncated.append({"item": i, "path": path})
                continue
            row["checked"] += 1
            checked += 1
            if r.discarded or r.score is None or r.score < threshold:
                row["rejected"] += 1
                reasons = (r.grade_details or {}).get("reasons") or ([f"discarded: {r.discard_reason}"]
                                                                     if r.discarded else [])
                rejected.append({"item": i, "path": path, "score": r.score, "reasons": list(reasons)[:3]})
    return {"checked": checked, "rejected": sorted(rejected, key=lambda x: (x["item"], x["path"])),
            "truncated": truncated, "by_path": dict(sorted(by_path.items()))}
