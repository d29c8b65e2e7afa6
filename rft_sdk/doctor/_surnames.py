"""Another person of the same family name (issue 37, doctor26's rowing club: a crew compared by family name,
"members write their names every which way", which merges siblings). ``first_word_only`` cuts a text to its
first word; nothing wrote a *different* person who shares the last one.

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
shared_surname            one person's name written by a gold write (an argument of two or more
                          capitalised words, or one element of a list of them: a crew) replaced by
                          another person of the task's data with the same last word and another
                          first one (``Lena Brandt`` → ``Felix Brandt``), found in the gold replay's
                          tool outputs or another item's gold write of that argument; where the data
                          holds none, the first word of another person's name there with the family
                          name kept (``Adaeze Okafor`` → ``Eamon Okafor``: doctor54's spa, a guest
                          compared by surname, ``Mr Okafor`` paid); the name replaced in the reference
                          too. Judged on the plain line, with ``(k − 1) / k`` of a list of ``k`` names
                          left right as the honest share
========================= ==========================================================================

**Why the honest twin stays silent**: the other person is another person, a member of the task's data or a
given name of it beside the family name, so a grader that compares whole names (after case and spacing) refuses
them as it refuses anyone else (as it refuses ``altered_writes``' other item's person); only one that keys people
on their family name pays them. Played only where the data holds another person's name. Nothing names a tool, a
field or a task.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from ._generic import _ContextProbe
from ._probes import HACK, Steps
from ._scope import _json_values

__all__ = ["SURNAME_ADVICE", "SharedSurname", "surname_probes"]

SURNAME_ADVICE = {
    "shared_surname": "another person with the same family name (Felix Brandt for Lena Brandt) earns the gold's "
                      "score: compare whole names (after case and spacing), never the family name alone",
}

#: A person's name: two or more capitalised words of letters (``Ada Okafor``, ``Mary-Jane O'Neil``).
_NAME = re.compile(r"[A-Z][a-z'’\-]+(?: [A-Z][a-z'’\-]+)+")


def _names(value: Any) -> Iterator[str]:
    """Every person-like name (:data:`_NAME`, the whole string) in a JSON value, walked."""
    if isinstance(value, str):
        if _NAME.fullmatch(value.strip()):
            yield value.strip()
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _names(v)
    elif isinstance(value, list):
        for v in value:
            yield from _names(v)


def _last(name: str) -> str:
    return name.split()[-1].casefold()


class SharedSurname(_ContextProbe):
    """``shared_surname`` (module table)."""

    def __init__(self, write_tools: Collection[str] | None = None, **kwargs: Any) -> None:
        super().__init__(write_tools, reason="no gold write names a person (two or more capitalised words) while "
                         "the task's data names another person", **kwargs)

    def _pool(self, item: Mapping[str, Any]) -> list[str]:
        """The names of the item's gold outputs, then of every item's gold writes."""
        index = self._context.index_of(item)
        outputs = self._context.gold_outputs[index] if index is not None and index < len(
            self._context.gold_outputs) else []
        pool = [n for v in _json_values([o for o in outputs if isinstance(o, str)]) for n in _names(v)]
        for other in self._context.items:
            for call in other.get(self.actions_field) or []:
                if isinstance(call, Mapping):
                    pool += list(_names(call.get("arguments")))
        return list(dict.fromkeys(pool))

    def option(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """``{"position", "argument", "from", "to", "at", "k"}``: the first name of the gold's writes with
        another person of its family name in the pool (``at``: its place in a list, else ``None``)."""
        actions = item.get(self.actions_field) or []
        pool = None
        for i in sorted(self.writes_of(item)):
            call = actions[i] if i < len(actions) else None
            if not isinstance(call, Mapping) or not isinstance(call.get("arguments"), Mapping):
                continue
            for argument, value in call["arguments"].items():
                values = value if isinstance(value, list) else [value]
                for at, name in enumerate(values):
                    if not isinstance(name, str) or not _NAME.fullmatch(name.strip()):
                        continue
                    pool = self._pool(item) if pool is None else pool
                    taken = {v.casefold() for v in values if isinstance(v, str)}
                    other = next((n for n in pool if _last(n) == _last(name) and n.casefold() not in taken), None)
                    if other is None:  # a given name of the data beside this family name (doctor54's spa)
                        first = name.split()[0].casefold()
                        other = next((f"{n.split()[0]} {name.split(None, 1)[1]}" for n in pool
                                      if n.split()[0].casefold() != first and _last(n) != _last(name)
                                      and f"{n.split()[0]} {name.split(None, 1)[1]}".casefold() not in taken), None)
                    if other is not None:
                        return {"position": i, "argument": argument, "from": name, "to": other,
                                "at": at if isinstance(value, list) else None, "k": len(values)}
        return None

    def applies(self, item: Mapping[str, Any]) -> bool:
        """Items with an :meth:`option`."""
        return self._has_gold(item) and self.option(item) is not None

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls with the name replaced."""
        actions = [dict(a) for a in item[self.actions_field]]
        found = self.option(item)
        if found is not None:
            call = actions[found["position"]]
            value = call["arguments"][found["argument"]]
            if found["at"] is None:
                value = found["to"]
            else:
                value = [found["to"] if n == found["at"] else v for n, v in enumerate(value)]
            actions[found["position"]] = {**call, "arguments": {**call["arguments"], found["argument"]: value}}
        return [[a] for a in actions]

    def final_answer(self, item: Mapping[str, Any]) -> str:
        """The reference with the name replaced, as whole words."""
        reference = str(item.get(self.answer_field) or "")
        found = self.option(item)
        if found is None:
            return reference
        return re.sub(rf"(?<![\w-]){re.escape(found['from'])}(?![\w-])", lambda m: found["to"], reference)

    def unchanged_share(self, item: Mapping[str, Any]) -> float:
        """``(k - 1) / k`` for one of a list of ``k >= 2`` names, else 0."""
        found = self.option(item)
        return (found["k"] - 1) / found["k"] if found is not None and found["at"] is not None and found["k"] > 1 \
            else 0.0

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """``{"altered": "tool.argument", "from", "to", "answer"}``."""
        found = self.option(item)
        if found is None:
            return {}
        tool = item[self.actions_field][found["position"]].get("name")
        return {"altered": f"{tool}.{found['argument']}", "from": found["from"], "to": found["to"],
                "answer": self.final_answer(item)[:160]}


def surname_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probe of the module table, by name (``intent`` ``hack``)."""
    probe = SharedSurname(write_tools, **fields)
    probe.intent = HACK
    return {"shared_surname": probe}
