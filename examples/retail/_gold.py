"""Complete τ²-bench's gold calls into a full demonstration, and derive valid alternative solutions.

τ²-bench judges the database only, so its gold lists often leave out the
reads: task 36's gold is one ``modify_pending_order_items`` call, yet its
answer must state the camera's price. A reference trajectory for RL must be a
solution a policy can imitate, and the retail grader requires that the facts
an answer states were returned by a tool call of the rollout
(``_evidence``). :func:`complete_actions` therefore adds, without changing
the end state:

1. the identification step (store rule 1) when the gold has none: by email when
   the customer's message gives it, else by name + zip;
2. for every ``communicate_info`` fact no gold call returns, the first read that
   returns it (the customer's profile, orders, their products, then any product);
3. the arithmetic of :data:`CALCULATIONS` for facts that are sums or differences
   (worked out by hand from the database; each expression is checked against the
   fact it must return).

:func:`alternatives` lists other valid solutions of an item, each checked to end
in the gold's database: the other identification method, extra reads, the writes
in reverse order when that ends in the same state, and a reworded answer.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ._db import BaseDB
from ._evidence import AUTH_TOOLS, needs_evidence, replay_calls
from ._grading import gold_view
from ._text import mentions, normalize_text
from ._tools import WRITE_TOOLS

__all__ = ["CALCULATIONS", "alternatives", "complete_actions", "task_user"]

Action = dict[str, Any]

#: task id -> calls appended to the gold so it returns its computed facts (prices from db.json).
CALCULATIONS: dict[str, list[Action]] = {
    # savings of exchanging the pet bed and the office chair for their cheapest variants
    "19": [{"name": "calculate", "arguments": {"expression": "195.11 - 180.93 + 499.28 - 471.82"}}],
    # refund of the two cancelled orders and the four returned items
    "54": [{"name": "calculate", "arguments": {"expression": (
        "268.77 + 1161.04 + 211.11 + 49.3 + 258.36 + 511.63 + 543.68 + 336.71 + 258.32 + 47.76")}}],
    # both grills of order #W8668939
    "76": [{"name": "get_order_details", "arguments": {"order_id": "#W8668939"}},
           {"name": "calculate", "arguments": {"expression": "985.66 + 953.39"}}],
    # the two laptop exchanges' price differences, netted
    "95": [{"name": "calculate", "arguments": {"expression": "167.87 - 60.78"}}],
    # the three returned items of order #W1679211
    "108": [{"name": "calculate", "arguments": {"expression": "50.88 + 52.03 + 244.02"}}],
}


def task_user(actions: Sequence[Mapping[str, Any]], base: BaseDB, user_message: str = "") -> str | None:
    """The customer of a task: the gold's first identification result, else the owner of a record the
    gold reads or writes, else the user whose email, or first name, last name and zip, the message gives."""
    for call in replay_calls(base.view(), actions):
        if call.name in AUTH_TOOLS and call.output is not None:
            return call.output
    for action in actions:
        arguments = action.get("arguments") or {}
        if "user_id" in arguments:
            return str(arguments["user_id"])
        order = base.tables["orders"].get(arguments.get("order_id", ""))
        if order is not None:
            return str(order["user_id"])
    text = user_message.lower()
    for user in base.tables["users"].values():
        name = user["name"]
        if user["email"].lower() in text or all(
                v.lower() in text for v in (name["first_name"], name["last_name"], user["address"]["zip"])):
            return str(user["user_id"])
    return None


def _auth(user: Mapping[str, Any], by_email: bool) -> Action:
    if by_email:
        return {"name": "find_user_id_by_email", "arguments": {"email": user["email"]}}
    name = user["name"]
    return {"name": "find_user_id_by_name_zip", "arguments": {
        "first_name": name["first_name"], "last_name": name["last_name"], "zip": user["address"]["zip"]}}


def _first_write(actions: Sequence[Mapping[str, Any]]) -> int:
    return next((i for i, a in enumerate(actions) if a["name"] in WRITE_TOOLS), len(actions))


def _outputs(actions: Sequence[Mapping[str, Any]], base: BaseDB) -> list[str]:
    return [c.output for c in replay_calls(base.view(), actions) if c.output is not None]


def _candidate_reads(user_id: str | None, base: BaseDB) -> list[Action]:
    reads: list[Action] = []
    products: list[str] = []
    if user_id is not None:
        reads.append({"name": "get_user_details", "arguments": {"user_id": user_id}})
        for order_id in base.tables["users"][user_id]["orders"]:
            reads.append({"name": "get_order_details", "arguments": {"order_id": order_id}})
            products += [line["product_id"] for line in base.tables["orders"][order_id]["items"]]
    products += list(base.tables["products"])
    reads += [{"name": "get_product_details", "arguments": {"product_id": p}} for p in dict.fromkeys(products)]
    return reads


def complete_actions(task: Mapping[str, Any], user_message: str, base: BaseDB) -> list[Action]:
    """The gold calls of ``task`` completed into a full demonstration (see the module docstring).

    Raises:
        ValueError: a fact no read or calculation returns (the data changed: extend :data:`CALCULATIONS`).
    """
    criteria = task["evaluation_criteria"]
    actions: list[Action] = [{"name": a["name"], "arguments": copy.deepcopy(a["arguments"])}
                             for a in criteria["actions"]]
    user_id = task_user(actions, base, user_message)
    if user_id is not None and not any(a["name"] in AUTH_TOOLS for a in actions):
        user = base.tables["users"][user_id]
        actions.insert(0, _auth(user, user["email"].lower() in user_message.lower()))
    actions += copy.deepcopy(CALCULATIONS.get(str(task["id"]), []))
    for fact in [f for f in criteria.get("communicate_info") or [] if needs_evidence(f)]:
        if any(mentions(out, fact) for out in _outputs(actions, base)):
            continue
        cut = next((i + 1 for i, a in enumerate(actions) if a["name"] in AUTH_TOOLS), 0)
        cut = min(cut, _first_write(actions))
        for read in _candidate_reads(user_id, base):
            before = actions[:cut] + [read] + actions[cut:]
            if any(mentions(out, fact) for out in _outputs(before, base)):
                actions = before
                break
            after = actions + [read]
            if any(mentions(out, fact) for out in _outputs(after, base)):
                actions = after
                break
        else:
            raise ValueError(f"task {task['id']}: no tool call returns {fact!r}; add it to CALCULATIONS")
    return actions


def _same_end_state(actions: Sequence[Mapping[str, Any]], gold: list[Action], base: BaseDB) -> bool:
    view = base.view()
    replay_calls(view, actions)
    return not view.diff(gold_view(gold, base))


def _reworded(answer_facts: Sequence[str]) -> str:
    def money(fact: str) -> str:
        norm = normalize_text(fact).strip()
        try:
            return f"${float(norm):,.2f}" if "." in norm else fact
        except ValueError:
            return fact

    text = "All done, exactly as you confirmed."
    if answer_facts:
        text += " You asked about: " + ", ".join(money(f) for f in answer_facts) + "."
    return text


def alternatives(actions: list[Action], communicate_info: Sequence[str], base: BaseDB) -> list[dict[str, Any]]:
    """Other valid solutions of an item: ``[{"name", "actions", "reference_answer"?}]``.

    Each one ends in the database of ``actions`` (checked) and states the same facts.
    Kinds: ``auth_by_email`` / ``auth_by_name_zip`` (the other identification method, one
    call in place of every identification call of the gold), ``extra_reads`` (two more
    reads after the identification), ``reordered_writes`` (the writes in reverse order,
    only when that ends in the same state), ``reworded_answer`` (another wording and
    money format of the same facts).

    Raises:
        ValueError: a derived alternative does not end in the gold's database (a bug).
    """
    out: list[dict[str, Any]] = []
    user_id = task_user(actions, base)
    auth = [i for i, a in enumerate(actions) if a["name"] in AUTH_TOOLS]
    if user_id is not None and auth:
        by_email = actions[auth[-1]]["name"] != "find_user_id_by_email"
        swapped = [a for i, a in enumerate(actions) if i not in auth]
        swapped.insert(auth[0], _auth(base.tables["users"][user_id], by_email))
        out.append({"name": "auth_by_email" if by_email else "auth_by_name_zip", "actions": swapped})
        extra = [{"name": "list_all_product_types", "arguments": {}},
                 {"name": "get_user_details", "arguments": {"user_id": user_id}}]
        out.append({"name": "extra_reads", "actions": actions[:auth[-1] + 1] + extra + actions[auth[-1] + 1:]})
    writes = [i for i, a in enumerate(actions) if a["name"] in WRITE_TOOLS]
    if len(writes) >= 2:
        reordered = list(actions)
        for i, j in zip(writes, reversed(writes)):
            reordered[i] = actions[j]
        if reordered != actions and _same_end_state(reordered, actions, base):
            out.append({"name": "reordered_writes", "actions": reordered})
    out.append({"name": "reworded_answer", "actions": list(actions), "reference_answer": _reworded(communicate_info)})
    for alt in out:
        if not _same_end_state(alt["actions"], actions, base):
            raise ValueError(f"alternative {alt['name']!r} does not end in the gold's database")
    return out

