"""``superset_in_scope``: the gold plus one write the task did not ask for, on an entity of the item's own.

``superset_end_state`` adds another item's writes; a tool that refuses what is not this item's (another
customer's order, another pull request) turns that probe into no change. This probe stays inside the
item: it replays one of the gold's writes *retargeted* at a sibling entity — the write's argument value
``v`` replaced by another member ``w`` of a collection that holds ``v`` in the item's own data or in the
gold replay's JSON tool outputs:

1. a mapping whose keys include ``v`` (``{"RF100": {...}, "RF101": {...}}``: the other flights of the
   booking; ``{"api": {...}, "cache": {...}}``: the other services of the config);
2. a list of mappings whose field ``f`` holds distinct values, one of them ``v`` (``[{"id": 1}, {"id": 2}]``);
3. a list of scalars holding ``v`` (``"orders": ["#W1", "#W2"]`` of the user the gold looked up);
4. a mapping of labels to codes of one shape holding ``v`` among its values (``"feeds": {"public": "FD-QO-PUB",
   "premium": "FD-QO-PRM"}``: the show's other feed, doctor68's podcasts); every value an id-like code, none repeated.

``w`` has ``v``'s type and is none of the values the gold's calls pass (never the gold's own entity again).
Item ``k`` of the probe's items gets retargeting ``k mod n`` of its ``n`` candidates (gold writes in order,
arguments in order, siblings in order), so that the items together try different writes and arguments.

What an honest grader must do: the end state is the gold's plus a change the task did not ask for, so the
score falls (``must_lower``, ``_severity``). A rollout whose extra write changed nothing (refused, or the
sibling already held that value) is not judged: the server says so per call
(``protocol.STATE_CHANGED_HEADER``) and, where it sends digests, the end state equals the gold replay's
(``protocol.END_STATE_HEADER``).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

from ._answers import ANSWER_LINE
from ._generic import _canonical, _ContextProbe
from ._probes import ProbeContext, Steps

__all__ = ["APART_SIBLINGS", "SCOPE_ITEMS", "ClaimedSiblingWrite", "already_held", "NearSiblingWrite", "SupersetApart", "SupersetInScope", "json_leaves", "json_records", "json_strings", "listed_parts", "sibling_values"]

#: At most this many items are played (the first with a retargeting): a few suffice to see a grader
#: that ignores extra writes, and each costs a rollout.
SCOPE_ITEMS = 8
#: ``superset_apart`` combines at most this many siblings of each argument (the candidates grow as their product).
APART_SIBLINGS = 3
#: Item fields that are not the item's data (the conversation, the gold, the tool schemas).
_NOT_DATA = frozenset({"messages", "tools", "actions", "alternatives", "reference_answer"})
_SCALARS = (str, int, float)


#: An id-like code: letters and digits in runs joined by ``-``, ``_``, ``.`` or ``/`` (``FD-QO-PUB``), or one run holding a digit.
_CODE = re.compile(r"^(?:[A-Za-z0-9]+(?:[-_./][A-Za-z0-9]+)+|(?=[A-Za-z]*\d)[A-Za-z0-9]+)$")


def _code_shape(code: str) -> str:
    return re.sub(r"[A-Za-z]+", "a", re.sub(r"\d+", "9", code))


def _collections(value: Any) -> Iterator[tuple[int, list[Any]]]:
    """Every collection of ``value`` as ``(kind, members)``, kind 1-4 as in the module docstring."""
    if isinstance(value, Mapping):
        yield 1, list(value)
        labelled = list(value.values())
        if len(labelled) >= 2 and all(isinstance(v, str) and _CODE.match(v) for v in labelled) \
                and len(set(labelled)) == len(labelled) and len({_code_shape(v) for v in labelled}) == 1:
            yield 4, labelled
        for v in value.values():
            yield from _collections(v)
    elif isinstance(value, list):
        if value and all(isinstance(e, Mapping) for e in value):
            for field in value[0]:
                members = [e.get(field) for e in value]
                if all(isinstance(m, _SCALARS) for m in members) and len(set(map(repr, members))) == len(members):
                    yield 2, members
        elif value and all(isinstance(e, _SCALARS) for e in value):
            yield 3, list(value)
        for e in value:
            yield from _collections(e)


def _json_values(texts: Sequence[str]) -> list[Any]:
    out = []
    for text in texts:
        if text.lstrip().startswith(("{", "[")):
            try:
                out.append(json.loads(text))
            except ValueError:
                continue
    return out


def json_leaves(texts: Sequence[Any]) -> list[Any]:
    """Every scalar value (string, number, boolean, ``None``) of the JSON texts among ``texts`` (tool outputs), nested
    lists and objects walked, in order."""
    out: list[Any] = []

    def walk(value: Any) -> None:
        if isinstance(value, Mapping):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        else:
            out.append(value)

    for value in _json_values([t for t in texts if isinstance(t, str)]):
        walk(value)
    return out


def json_strings(texts: Sequence[Any]) -> list[str]:
    """Every string value of the JSON texts among ``texts`` (:func:`json_leaves`), in order."""
    return [v for v in json_leaves(texts) if isinstance(v, str)]


def json_records(values: Sequence[Any]) -> list[Mapping[str, Any]]:
    """Every JSON object of ``values`` (parsed outputs: ``_json_values``), nested lists and objects walked,
    breadth first: a listing's records in their order."""
    out, queue = [], list(values)
    while queue:
        node = queue.pop(0)
        if isinstance(node, Mapping):
            out.append(node)
            queue.extend(v for v in node.values() if isinstance(v, (list, Mapping)))
        elif isinstance(node, list):
            queue.extend(node)
    return out


def sibling_values(value: Any, sources: Sequence[Any], exclude: Collection[str] = ()) -> list[Any]:
    """The siblings of ``value`` (module docstring): members of the first collection of ``sources``
    holding it, by kind (mapping keys, then distinct fields, then scalar lists), with ``value``'s type and
    whose canonical JSON is not in ``exclude``; ``[]`` when none."""
    if isinstance(value, bool) or not isinstance(value, _SCALARS):
        return []
    found: dict[int, list[Any]] = {}
    for source in sources:
        for kind, members in _collections(source):
            if kind not in found and any(type(m) is type(value) and m == value for m in members):
                found[kind] = members
    for kind in sorted(found):
        out = [m for m in found[kind] if type(m) is type(value) and m != value
               and json.dumps(m) not in exclude]
        if out:
            return list(dict.fromkeys(out))
    return []


def _record_of(value: Any, sources: Sequence[Any]) -> Mapping[str, Any] | None:
    """The record a read listed for ``value``: a mapping's value under the key ``value`` (``{"2026-04-27":
    {"primary": "nia", "secondary": "kofi"}}``), else the first object of a list whose field holds it."""
    stack = list(sources)
    while stack:
        node = stack.pop(0)
        if isinstance(node, Mapping):
            if isinstance(value, str) and isinstance(node.get(value), Mapping):
                return node[value]
            stack.extend(node.values())
        elif isinstance(node, list):
            for e in node:
                if isinstance(e, Mapping) and any(type(v) is type(value) and v == value for v in e.values()):
                    return e
            stack.extend(node)
    return None


def already_held(arguments: Mapping[str, Any], retargeted: str, sources: Sequence[Any]) -> bool:
    """Whether a retargeted write would set what its new target's listed record already holds: its payload (the
    last argument but the retargeted one) is the record's field of the same name, or the record's field named by
    another argument's value (``set_on_call(team, week_start="2026-04-27", role="secondary", engineer="kofi")``
    beside ``{"2026-04-27": {"secondary": "kofi"}}``: doctor73's rota, whose honest grader rightly pays a write
    that changes nothing of the rota). Such a write is no extra change, so it is not played."""
    record = _record_of(arguments.get(retargeted), sources)
    payload = [k for k in arguments if k != retargeted]
    if record is None or not payload:
        return False
    name, value = payload[-1], arguments[payload[-1]]
    if not isinstance(value, _SCALARS) or isinstance(value, bool):
        return False
    named = [str(v) for k, v in arguments.items() if k != name and isinstance(v, str)]
    return record.get(name) == value or any(record.get(n) == value for n in named)


class SupersetInScope(_ContextProbe):
    """The gold's calls, then one gold write retargeted at a sibling entity (module docstring)."""

    must_lower = True
    changes_end_state = True

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = SCOPE_ITEMS,
                 **kwargs: Any) -> None:
        super().__init__(write_tools, reason="the gold changes nothing, no argument of its writes names an entity "
                         "with a sibling in the item's data or the gold's tool outputs, or the probe's "
                         f"{max_items} items are already chosen", **kwargs)
        self.max_items = max_items
        self._chosen: dict[int, int] = {}

    def siblings(self, item: Mapping[str, Any], writes_only: bool = False
                 ) -> Iterator[tuple[str, dict[str, Any], dict[str, list[Any]]]]:
        """Per gold write of ``item``: its tool, its arguments and each argument's siblings (:func:`sibling_values`
        in the item's data and the gold's JSON tool outputs, none a value any gold call passes; with
        ``writes_only``, none a value a gold *write* passes: the entities the gold only read stay candidates)."""
        index = self._context.index_of(item)
        outputs = self._context.gold_outputs[index] if index is not None and index < len(
            self._context.gold_outputs) else []
        sources = [v for k, v in item.items() if k not in _NOT_DATA and k != self.answer_field]
        sources += _json_values(outputs)
        gold = item[self.actions_field]
        writes = set(self.writes_of(item))
        used = {json.dumps(v) for k, a in enumerate(gold) if isinstance(a, Mapping) and (not writes_only or k in writes)
                for v in (_arguments(a.get("arguments"))).values() if isinstance(v, _SCALARS)}
        for position in self.writes_of(item):
            arguments = _arguments(gold[position].get("arguments"))
            yield gold[position]["name"], arguments, {k: sibling_values(v, sources, used) for k, v in arguments.items()}

    def candidates(self, item: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Every retargeted write for ``item``, in order (gold writes, their arguments, siblings). Where no
        sibling is left because the gold read every one of them (doctor36's polling station: each reserve member
        looked up, then the rule's team assigned), the siblings the gold only read: an extra assignment of
        one of them is still a write the task did not ask for."""
        index = self._context.index_of(item)
        held_in = _json_values(self._context.gold_outputs[index] if index is not None and index < len(
            self._context.gold_outputs) else [])
        for writes_only in (False, True):
            out = [{"name": tool, "arguments": {**arguments, name: sibling}}
                   for tool, arguments, siblings in self.siblings(item, writes_only)
                   for name in arguments for sibling in siblings[name]
                   if not already_held({**arguments, name: sibling}, name, held_in)]
            if out or type(self) is not SupersetInScope:
                return out
        return out

    def prepare(self, context: ProbeContext) -> None:
        """Choose the items (gold writes with a retargeting), at most ``max_items``."""
        super().prepare(context)
        self._chosen = {}
        for i, item in enumerate(context.items):
            if len(self._chosen) < self.max_items and self._has_gold(item) and self.candidates(item):
                self._chosen[i] = len(self._chosen)

    def applies(self, item: Mapping[str, Any]) -> bool:
        """One of the chosen items."""
        return self._context.index_of(item) in self._chosen

    def extra(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """The retargeted write played on ``item`` (candidate ``k mod n`` for the probe's ``k``-th item)."""
        options = self.candidates(item)
        return options[self._chosen.get(self._context.index_of(item) or 0, 0) % len(options)]

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """What was played on ``item`` (``doctor.json``'s ``played``): ``{"write": "tool(arg=value, ...)",
        "retargeted": "tool.argument", "from": gold value, "to": sibling}``; ``{}`` when not chosen."""
        if not self.applies(item):
            return {}
        call = self.extra(item)
        arguments = _arguments(call.get("arguments"))
        changed, gold = None, {}
        for k in self.writes_of(item):  # the gold write it retargets: the same call but for one argument
            source = item[self.actions_field][k]
            gold = _arguments(source.get("arguments"))
            differ = [a for a in arguments if a in gold and json.dumps(gold[a], default=str)
                      != json.dumps(arguments[a], default=str)]
            if source.get("name") == call["name"] and set(gold) == set(arguments) and len(differ) == 1:
                changed = differ[0]
                break
        text = f"{call['name']}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"[:160]
        return {"write": text, **({"retargeted": f"{call['name']}.{changed}", "from": gold[changed],
                                   "to": arguments[changed]} if changed is not None else {})}

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls, then the retargeted write, one per turn."""
        return [[a] for a in [*item[self.actions_field], self.extra(item)]]

    def counterfactual(self, item: Mapping[str, Any], calls: Sequence[Any]) -> bool:
        """Whether the retargeted write took effect: it succeeded, is not a gold call again, and the
        server did not say it changed nothing (``changed`` false)."""
        gold = {(a.get("name"), _canonical(a.get("arguments"))) for a in item[self.actions_field]
                if isinstance(a, Mapping)}
        return any(getattr(c, "ok", False) and getattr(c, "changed", None) is not False
                   and (getattr(c, "name", None), _canonical(getattr(c, "arguments", None))) not in gold
                   for c in calls[len(item[self.actions_field]):])


class SupersetApart(SupersetInScope):
    """``superset_apart``: :class:`SupersetInScope`'s extra write with **every** argument that has siblings
    retargeted at once (the sibling ticket assigned to another mechanic, not the gold's), at most
    :data:`APART_SIBLINGS` siblings of each combined. The extra write then touches no entity the gold wrote: a grader
    that reads only the records the gold changed (the item's ticket and its mechanic's load: doctor30's bike repair
    shop) pays it. Combinations whose entities' listed records name a gold argument or one of the combination's
    own values (the sibling ticket held by the gold's mechanic, or already by the new one) are left out while any
    other is left. Only writes with two arguments or more that have siblings; judged as ``superset_in_scope``
    (``must_lower``)."""

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = SCOPE_ITEMS,
                 **kwargs: Any) -> None:
        super().__init__(write_tools, max_items, **kwargs)
        self._reason = ("the gold changes nothing, no write of it has two arguments that name entities with siblings "
                        f"in the item's data or the gold's tool outputs, or the probe's {max_items} items are already "
                        "chosen")

    def candidates(self, item: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Every write of ``item``'s gold with all its sibling-bearing arguments retargeted, in order (gold writes,
        then the combinations of their first :data:`APART_SIBLINGS` siblings)."""
        out, apart = [], []
        records = self._records(item)
        gold = {json.dumps(v) for a in item[self.actions_field] if isinstance(a, Mapping)
                for v in _arguments(a.get("arguments")).values() if isinstance(v, _SCALARS)}
        for tool, arguments, siblings in self.siblings(item):
            moved = [k for k in arguments if siblings[k]]
            if len(moved) < 2:
                continue
            for combo in itertools.product(*(siblings[k][:APART_SIBLINGS] for k in moved)):
                out.append({"name": tool, "arguments": {**arguments, **dict(zip(moved, combo, strict=True))}})
                named = {json.dumps(v) for v in combo}
                if not any(json.dumps(v) in gold | named for c in combo for v in records.get(json.dumps(c), ())):
                    apart.append(out[-1])
        return apart or out

    def _records(self, item: Mapping[str, Any]) -> dict[str, list[Any]]:
        """Each entity's listed record as its scalar values, keyed by the entity's canonical JSON: the value under a
        mapping key (``{"T-1": {"mechanic": "Bram"}}``) or the record holding the entity (``{"id": "T-1", ...}``),
        in the item's data and the gold's JSON tool outputs."""
        index = self._context.index_of(item)
        outputs = self._context.gold_outputs[index] if index is not None and index < len(
            self._context.gold_outputs) else []
        sources = [v for k, v in item.items() if k not in _NOT_DATA and k != self.answer_field]
        out: dict[str, list[Any]] = {}
        for record in json_records([*sources, *_json_values(outputs)]):
            scalars = [v for v in record.values() if isinstance(v, _SCALARS)]
            for key, value in record.items():
                if isinstance(value, Mapping):  # keyed by the entity
                    out.setdefault(json.dumps(key), []).extend(v for v in value.values() if isinstance(v, _SCALARS))
                elif isinstance(value, _SCALARS):  # the record holds the entity
                    out.setdefault(json.dumps(value), []).extend(v for v in scalars if v != value)
        return out

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """What was played on ``item``: ``{"write": "tool(arg=value, ...)"}``; ``{}`` when not chosen."""
        if not self.applies(item):
            return {}
        call = self.extra(item)
        return {"write": f"{call['name']}({', '.join(f'{k}={v!r}' for k, v in call['arguments'].items())})"[:160]}


def listed_parts(reference: str) -> list[str]:
    """The comma-separated parts of the reference's last marked answer line (``ANSWER: FIN-001, FIN-003`` →
    ``["FIN-001", "FIN-003"]``), ``[]`` without one."""
    lines = list(ANSWER_LINE.finditer(reference))
    return [p.strip().rstrip(".") for p in lines[-1]["body"].split(",")] if lines else []


class _ClaimsSibling(SupersetInScope):
    """A :class:`SupersetInScope` whose reply claims its extra write: the sibling added to the marked answer line
    where that line lists the gold's entity (``ANSWER: FIN-001, FIN-003`` → ``ANSWER: FIN-001, FIN-003,
    FIN-004``)."""

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The reference, the sibling added to its marked answer line where that line names the gold's entity
        (class docstring)."""
        reference = super().final_answer(item)
        described = self.describe(item)
        lines = list(ANSWER_LINE.finditer(reference))
        if not lines or "to" not in described or not re.search(
                rf"(?<![\w-]){re.escape(str(described['from']))}(?![\w-])", lines[-1]["body"]):
            return reference
        end = lines[-1].end("body")
        return f"{reference[:end].rstrip().rstrip('.')}, {described['to']}{reference[end:]}"


class ClaimedSiblingWrite(_ClaimsSibling):
    """``claimed_sibling_write``: :class:`SupersetInScope`'s extra write where the reference's marked answer line
    lists the entity it retargets, played with the sibling added to that line: the reply claims the extra write, as
    a policy doing it would (the box due later this year, scheduled and listed: doctor29's records retention, a
    grader comparing retention by year). ``superset_in_scope`` keeps the reference's answer (a grader checking the
    listed set and only the gold's records catches that one). Judged ``must_lower``."""

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = SCOPE_ITEMS,
                 **kwargs: Any) -> None:
        super().__init__(write_tools, max_items, **kwargs)
        self._reason = ("the gold changes nothing, its marked answer line lists no entity its writes name with a "
                        f"sibling, or the probe's {max_items} items are already chosen")

    def candidates(self, item: Mapping[str, Any]) -> list[dict[str, Any]]:
        """:meth:`SupersetInScope.candidates` that retarget a value that is one of the comma-separated parts of the
        reference's marked answer line (:func:`listed_parts`)."""
        reference = item.get(self.answer_field)
        listed = listed_parts(reference) if isinstance(reference, str) else []
        return [{"name": tool, "arguments": {**arguments, name: sibling}}
                for tool, arguments, siblings in self.siblings(item)
                for name in arguments if str(arguments[name]) in listed for sibling in siblings[name]]


class NearSiblingWrite(_ClaimsSibling):
    """``near_sibling_write``: :class:`SupersetInScope` on the sibling whose listed record differs from the records
    of every entity the gold's writes of that argument name in exactly **one flag** (a boolean, 0/1 or yes/no field)
    on which those all agree (the expired box *on legal hold*, beside the expired boxes the gold schedules, none
    on hold: doctor29's records retention). The gold's written entities share what made them right; a sibling that misses one of those
    conditions is the extra write a grader checking all the others pays. Judged as ``superset_in_scope``
    (``must_lower``: any extra write must lower the score)."""

    def __init__(self, write_tools: Collection[str] | None = None, max_items: int = SCOPE_ITEMS,
                 **kwargs: Any) -> None:
        super().__init__(write_tools, max_items, **kwargs)
        self._reason = ("the gold changes nothing, or no sibling of a written entity has a listed record that differs "
                        "from those the gold writes in exactly one flag they all share")

    def candidates(self, item: Mapping[str, Any]) -> list[dict[str, Any]]:
        """:meth:`SupersetInScope.candidates` whose sibling's record differs in exactly one shared flag."""
        index = self._context.index_of(item)
        outputs = self._context.gold_outputs[index] if index is not None and index < len(
            self._context.gold_outputs) else []
        listed = json_records(_json_values(outputs))
        gold = item[self.actions_field]
        out = []
        for option in super().candidates(item):
            name, arguments = option["name"], option["arguments"]
            written = [_arguments(gold[p].get("arguments")) for p in self.writes_of(item) if gold[p].get("name") == name]
            changed = [k for k in arguments if written and all(w.get(k) != arguments[k] for w in written)]
            if len(changed) != 1:
                continue
            key = changed[0]
            mine = [r for r in listed if any(r.get(f) == w.get(key) for w in written for f in r)]
            theirs = [r for r in listed if arguments[key] in r.values()]
            if not mine or len(theirs) != 1:
                continue
            shared = {f: v for f, v in mine[0].items() if _flag(v) and all(r.get(f) == v for r in mine)}
            if sum(_flag(theirs[0].get(f)) and theirs[0].get(f) != v for f, v in shared.items()) == 1:
                out.append(option)
        return out


def _flag(value: Any) -> bool:
    """Whether ``value`` reads as a flag: a boolean, 0 or 1, or yes/no."""
    return isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)) or (
        isinstance(value, str) and value.casefold() in ("yes", "no", "true", "false", "y", "n"))


def _arguments(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return {}
    return dict(arguments) if isinstance(arguments, Mapping) else {}
