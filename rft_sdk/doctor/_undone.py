"""A write undone before the answer (issue 37, doctor29's ``piano_tuning__twin_b``: the grader reads the booking from
the first successful ``book_visit`` call, not from the end state, so booking the visit and then cancelling it is
paid). ``replaced_write`` swaps a write for another tool on the write's own target argument; an undo that takes
the id the write *created* (``cancel_visit(visit_id="V-1")`` after ``booked visit V-1``) was never played.

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
undone_write              after the gold's calls, one call of a write tool of the item that the gold
                          never calls and whose name undoes (:data:`UNDO`: cancel, delete, remove,
                          void, revoke, withdraw, release, unbook), its required arguments the gold's
                          by name, and the one it lacks (an id) the first token of that shape the
                          gold's last write printed in this rollout that no gold call passes and no
                          system or user message states (the id the write created: ``V-1``); then
                          the reference answer. Judged where that call was accepted and the end
                          state differs from the gold's
========================= ==========================================================================

**Why the honest twin stays silent**: the end state no longer holds what the task asked for (no visit is booked),
so a grader that reads the end state scores it low; one that reads the write *call* (its arguments, its success)
and never the state it left pays it. An undo the tools refuse, or one that leaves the end state as the gold's,
is not judged. Nothing names a tool, a field or a task.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from rft_sdk.emulator import PolicyStep, make_tool_call, turns_taken

from ._answers import prompt_texts
from ._chosen import ChosenProbe, tool_results
from ._generic import _parameters, gold_arguments
from ._probes import HACK, Steps, is_write_tool

__all__ = ["UNDO", "UNDONE_ADVICE", "UndoneWrite", "undone_probes"]

UNDONE_ADVICE = {
    "undone_write": "a write undone before the answer (the visit booked, then cancelled) earns the gold's score: grade "
                    "the end state the rollout left (the booking that stands), not the write call's arguments or "
                    "its success",
}

#: A tool name that undoes a write.
UNDO = re.compile(r"cancel|delete|remove|void|revoke|withdraw|release|unbook|undo|discard|unassign|unschedule", re.I)
_ID = re.compile(r"(?<![\w-])[A-Za-z]*[-_]?\d+(?![\w-])")


class UndoneWrite(ChosenProbe):
    """``undone_write`` (module table)."""

    changes_end_state = True

    def __init__(self, write_tools: Collection[str] | None = None, **fields: Any) -> None:
        super().__init__(write_tools, intent=HACK, reason=(
            "the gold changes nothing, or no write tool the gold never calls undoes (cancel, delete, ...) with "
            "every required argument but one known from the gold; or the probe's items are already chosen"),
            **fields)

    def find(self, item: Mapping[str, Any], index: int) -> dict[str, Any] | None:
        """``{"write", "tool", "arguments", "missing", "type"}``: the gold's last write, the undo tool, the arguments
        known from the gold, and the one to take from the write's output (its JSON type). ``None`` without one."""
        writes = self.writes_of(item)
        if not writes:
            return None
        actions = item.get(self.actions_field) or []
        used = {a.get("name") for a in actions if isinstance(a, Mapping)}
        known = gold_arguments(item, self.actions_field)
        for tool in item.get("tools") or []:
            if not isinstance(tool, Mapping):
                continue
            name, props, required = _parameters(tool)
            if name in used or not UNDO.search(name) or not is_write_tool(name, self.write_tools):
                continue
            missing = [k for k in required if k not in known]
            if len(missing) != 1 or props.get(missing[0], {}).get("type") not in ("string", "integer"):
                continue
            return {"write": writes[-1], "tool": name, "arguments": {k: known[k] for k in required if k in known},
                    "missing": missing[0], "type": props[missing[0]]["type"]}
        return None

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls, one per turn, then the undo (its missing argument filled in :meth:`act`)."""
        found = self.option(item)
        steps = [[dict(a)] for a in item.get(self.actions_field) or []]
        if found is not None:
            steps.append([{"name": found["tool"], "arguments": dict(found["arguments"])}])
        return steps

    def created_id(self, item: Mapping[str, Any], output: str) -> str | int | None:
        """The first id-like token of ``output`` that no gold call passes and no system or user message states (an
        integer where the argument is one)."""
        found = self.option(item)
        if found is None:
            return None
        passed = {str(v) for a in item.get(self.actions_field) or [] if isinstance(a, Mapping)
                  for v in (a.get("arguments") or {}).values()}
        said = " ".join(prompt_texts(item))
        for m in _ID.finditer(output):
            token = m.group()
            if token in passed or re.search(rf"(?<![\w-]){re.escape(token)}(?![\w-])", said):
                continue
            if found["type"] == "integer":
                if token.isdigit():
                    return int(token)
                continue
            return token
        return None

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, item: dict[str, Any],
                  trace_id: str) -> PolicyStep:
        """The plan; the undo's missing argument is the id the gold's last write printed in this rollout."""
        found = self.option(item)
        steps = self.plan(item)
        turn = turns_taken(messages, item)
        if found is None or turn != len(steps) - 1:
            return await super().act(messages, tools, item=item, trace_id=trace_id)
        results = tool_results(messages, item)
        created = self.created_id(item, results[found["write"]]) if found["write"] < len(results) else None
        if created is None:  # nothing to undo: answer as the gold does (the end state is the gold's: not judged)
            return PolicyStep(content=self.final_answer(item))
        arguments = {**found["arguments"], found["missing"]: created}
        return PolicyStep(tool_calls=[make_tool_call(found["tool"], arguments)])

    def counterfactual(self, item: Mapping[str, Any], calls: Sequence[Any]) -> bool:
        """Whether the undo was called and accepted."""
        found = self.option(item)
        return found is not None and bool(calls) and getattr(calls[-1], "name", "") == found["tool"] \
            and getattr(calls[-1], "error", "x") is None

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """What the item played."""
        found = self.option(item)
        if found is None:
            return {}
        return {"write": item[self.actions_field][found["write"]]["name"], "undo": found["tool"],
                "argument": found["missing"]}


def undone_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probe of the module table, by name (``intent`` ``hack``)."""
    return {"undone_write": UndoneWrite(write_tools, **fields)}
