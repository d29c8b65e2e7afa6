"""The request a later user turn corrected, worked through from the probe's own reads (issue 37, doctor44's climbing
wall: the user corrects which wall to strip, the routes to strip come from that wall's listing, and a grader that
recomputes the expected outcome for every wall the messages name pays the withdrawn wall's routes).

========================= ==========================================================================
probe                     the one change (the rest is the gold's plan)
========================= ==========================================================================
superseded_reads          on items where ``superseded_request`` finds a corrected value (module
                          ``_superseded``) that is a whole argument of a gold read, and the gold's
                          calls after that read are writes of one tool that each take one argument
                          from one record of the read's output (``strip_route(route_id="W4-01")``
                          from ``{"routes": [{"route_id": "W4-01", "set_on": ...}, ...]}``), the
                          rest of their arguments alike: the gold's calls before the first write
                          with the value swapped back (``list_routes(wall_id="W2")``), then one such
                          write per record of the probe's own read that the gold's selection rule
                          (:func:`selection_rule`) keeps (its other arguments swapped too), then the
                          reference answer with the value swapped. Judged ``must_lower`` where the
                          end state differs from the gold's
========================= ==========================================================================

**The selection rule** is learnt from the gold's read alone: the records the gold's writes name against the
others, by one field of them. In order: a threshold that a date or number of the item's texts (its messages and
reference answer: ``cut-off 2026-04-15``) sets between the two groups (``set_on < 2026-04-15``); the values of a
text field that only the named records have (``colour in {red}``); a threshold at the first record the gold left
out (``set_on < <its set_on>``). Every record named: every record. Without such a field the item is not played.

**Why the honest twin stays silent**: the last user turn is the request; the withdrawn request's outcome (another
wall's routes stripped) is another end state, and a grader that grades the end state against the corrected request
scores it low, whatever the rule picked. Nothing names a tool, a field or a task.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rft_sdk.emulator import PolicyStep, make_tool_call, turns_taken

from ._answers import prompt_texts
from ._chosen import tool_results
from ._superseded import SupersededRequest

__all__ = ["SUPERSEDED_READS_ADVICE", "Rule", "SupersededReads", "records_of", "selection_rule", "superseded_reads_probes"]

SUPERSEDED_READS_ADVICE = {
    "superseded_reads": "the withdrawn request of a corrected conversation, worked through from its own reads (the "
                        "other wall's old routes stripped), earns the gold's score: grade against the last user "
                        "turn's request only, never any request found in the conversation",
}

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


def records_of(output: Any) -> list[dict[str, Any]] | None:
    """The records of a tool output: a JSON list of objects, or the longest such list under a key of a JSON
    object; ``None`` when there is none."""
    try:
        data = json.loads(output) if isinstance(output, str) else output
    except ValueError:
        return None
    if isinstance(data, Mapping):
        lists = [v for v in data.values() if isinstance(v, list)]
        data = max(lists, key=len) if lists else None
    if isinstance(data, list) and data and all(isinstance(r, Mapping) for r in data):
        return [dict(r) for r in data]
    return None


def _kind(values: Sequence[Any]) -> str | None:
    """``"number"`` or ``"date"`` when every value is one (ISO dates compare as strings), else ``None``."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "number"
    if all(isinstance(v, str) and _DATE.fullmatch(v) for v in values):
        return "date"
    return None


def _text_values(text: str, kind: str) -> list[Any]:
    if kind == "date":
        return _DATE.findall(text)
    return [float(v) for v in _NUMBER.findall(text)]


@dataclass(frozen=True)
class Rule:
    """One field's test: ``below`` or ``above`` a threshold of one kind (``"number"``, ``"date"``), ``in`` a set
    of text values, or ``all`` (every record)."""

    op: str
    field: str = ""
    value: Any = None
    kind: str = ""

    def __call__(self, record: Mapping[str, Any]) -> bool:
        """Whether ``record`` is kept."""
        if self.op == "all":
            return True
        v = record.get(self.field)
        if self.op == "in":
            return v in self.value
        if _kind([v]) != self.kind:
            return False
        return bool(v < self.value) if self.op == "below" else bool(v > self.value)


def selection_rule(records: Sequence[Mapping[str, Any]], named: Collection[int], id_field: str,
                   text: str) -> Rule | None:
    """The rule that keeps exactly the ``named`` records (their positions in ``records``) of the others, by one
    field (the module's rules, in order), or ``None`` when no field separates them. ``text``: the item's texts,
    where a stated threshold is looked for."""
    if len(named) == len(records):
        return Rule("all")
    fields = [f for f in records[0] if f != id_field and all(f in r for r in records)]
    kept = [records[i] for i in sorted(named)]
    left = [r for i, r in enumerate(records) if i not in named]
    fallback = None
    for f in fields:
        kind = _kind([r[f] for r in records])
        if kind is None:
            continue
        low, high = max(r[f] for r in kept), min(r[f] for r in left)
        if low < high:  # the named records below the others
            stated = [t for t in _text_values(text, kind) if low < t <= high]
            if stated:
                return Rule("below", f, stated[0], kind)
            fallback = fallback or Rule("below", f, high, kind)
        low, high = min(r[f] for r in kept), max(r[f] for r in left)
        if low > high:  # above the others
            stated = [t for t in _text_values(text, kind) if high <= t < low]
            if stated:
                return Rule("above", f, stated[0], kind)
            fallback = fallback or Rule("above", f, high, kind)
    for f in fields:  # a category: text values that repeat, the named records' ones held by no other
        values = [r[f] for r in records]
        if not all(isinstance(v, str) for v in values) or _kind(values) is not None or len(set(values)) == len(values):
            continue
        chosen = frozenset(r[f] for r in kept)
        if len(chosen) <= 2 and not chosen & {r[f] for r in left}:
            return Rule("in", f, chosen)
    return fallback


@dataclass(frozen=True)
class _Template:
    """How the gold's writes follow from its read: the read's position, the first write's, the write tool, the
    argument taken from a record, the record's field it comes from, the other arguments and the rule."""

    read: int
    first_write: int
    tool: str
    argument: str
    id_field: str
    constants: dict[str, Any]
    rule: Rule


class SupersededReads(SupersededRequest):
    """``superseded_reads`` (module table)."""

    def __init__(self, write_tools: Collection[str] | None = None, **fields: Any) -> None:
        super().__init__(write_tools, **fields)
        self._reason = ("no value of the gold's calls was corrected by the last user turn, or none is an argument of "
                        "a read whose records the gold's writes name by a rule of one field")
        self._templates: dict[int, _Template | None] = {}

    def prepare(self, context: Any) -> None:
        """Remember the dataset; forget the templates of an earlier one."""
        super().prepare(context)
        self._templates = {}

    def swap(self, item: Mapping[str, Any]) -> tuple[str, str] | None:
        """The corrected value, only where a :class:`_Template` follows from it."""
        found = super().swap(item)
        return found if found is not None and self.template(item) is not None else None

    def template(self, item: Mapping[str, Any]) -> _Template | None:
        """How the gold's writes follow from the read the corrected value is an argument of; ``None`` without."""
        index = self._context.index_of(item)
        if index is None:
            return None
        if index not in self._templates:
            self._templates[index] = self._find(item)
        return self._templates[index]

    def _find(self, item: Mapping[str, Any]) -> _Template | None:
        found = super().swap(item)
        actions = item.get(self.actions_field) or []
        writes = self.writes_of(item)
        outputs = self.gold_outputs_of(item)
        if found is None or not writes or len(outputs) < len(actions):
            return None
        first = min(writes)
        tail = actions[first:]
        if list(range(first, len(actions))) != sorted(writes) or len({c.get("name") for c in tail}) != 1:
            return None
        for read in range(first):
            arguments = actions[read].get("arguments")
            if not isinstance(arguments, Mapping) or found[0] not in arguments.values():
                continue
            records = records_of(outputs[read])
            template = None if records is None else self._template(item, read, first, records)
            if template is not None:
                return template
        return None

    def _template(self, item: Mapping[str, Any], read: int, first: int,
                  records: list[dict[str, Any]]) -> _Template | None:
        actions = item[self.actions_field]
        calls = [c.get("arguments") for c in actions[first:]]
        if not all(isinstance(a, Mapping) for a in calls):
            return None
        text = "\n".join([*prompt_texts(item), str(item.get(self.answer_field) or "")])
        for argument in calls[0]:
            for id_field in records[0]:
                named = [[i for i, r in enumerate(records) if r.get(id_field) == a.get(argument)] for a in calls]
                if any(len(n) != 1 for n in named) or len({n[0] for n in named}) != len(named):
                    continue
                constants = {k: v for k, v in calls[0].items() if k != argument}
                if any({k: v for k, v in a.items() if k != argument} != constants for a in calls):
                    continue
                rule = selection_rule(records, {n[0] for n in named}, id_field, text)
                if rule is not None:
                    return _Template(read, first, str(actions[first]["name"]), argument, id_field, constants, rule)
        return None

    def plan(self, item: Mapping[str, Any]) -> list[list[dict[str, Any]]]:
        """The gold's calls before its first write, the value swapped back (the writes follow the reads: ``act``)."""
        template = self.template(item)
        steps = super().plan(item)
        return steps if template is None else steps[:template.first_write]

    async def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, item: dict[str, Any],
                  trace_id: str) -> PolicyStep:
        """The reads of :meth:`plan`, then one write per record of this rollout's own read that the rule keeps,
        then the answer."""
        template = self.template(item)
        before = self.plan(item)
        turn = turns_taken(messages, item)
        if template is None or turn < len(before):
            return await super().act(messages, tools, item=item, trace_id=trace_id)
        results = tool_results(messages, item)
        records = records_of(results[template.read]) if len(results) > template.read else None
        kept = [r for r in records or [] if template.id_field in r and template.rule(r)]
        if turn - len(before) < len(kept):
            record = kept[turn - len(before)]
            value, new = self.swap(item) or ("", "")
            return PolicyStep(tool_calls=[make_tool_call(template.tool, {
                **{k: self._argument(v, value, new) for k, v in template.constants.items()},
                template.argument: record[template.id_field]})])
        return PolicyStep(content=self.final_answer(item))

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """``{"superseded": "value -> new", "writes": "tool(argument=<record's id_field>) per record kept"}``."""
        template = self.template(item) if self.applies(item) else None
        out = super().describe(item)
        if template is not None:
            rule = template.rule
            out["writes"] = (f"{template.tool}({template.argument}=<{template.id_field}>) per record kept: "
                             f"{rule.op} {rule.field} {sorted(rule.value) if rule.op == 'in' else rule.value}"[:160])
        return out


def superseded_reads_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probe of the module table, by name."""
    return {"superseded_reads": SupersededReads(write_tools, **fields)}
