"""Domain-aware perturbations of a gold action list, and their effect on end state.

:func:`make_perturb` builds the ``perturb(actions, rng) -> (actions, description)``
callback of ``rft_sdk.emulator.PerturbedReplayPolicy``: one write call of
the plan is either dropped or altered the way a careless agent would (wrong
variant, wrong refund method, a typo in the address, the other cancel reason).
:func:`changes_end_state` tells, independently of the server, whether a
perturbed run of calls ends in a database different from the gold one.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

from ._db import BaseDB, load_base_db
from ._grading import apply_actions, gold_view
from ._tools import CANCEL_REASONS, WRITE_TOOLS

__all__ = ["changes_end_state", "make_perturb"]

Perturb = Callable[[list[dict[str, Any]], random.Random], tuple[list[dict[str, Any]], str]]


def _alter(action: dict[str, Any], base: BaseDB, rng: random.Random) -> tuple[dict[str, Any], str] | None:
    """An altered copy of one write call and what changed, or ``None`` if no alteration applies."""
    name, args = action["name"], copy.deepcopy(action["arguments"])
    if name == "cancel_pending_order":
        args["reason"] = next(r for r in CANCEL_REASONS if r != args["reason"])
        return {"name": name, "arguments": args}, "reason"
    if "address1" in args:
        args["address1"] = args["address1"] + " Unit 2"
        return {"name": name, "arguments": args}, "address1"
    if "new_item_ids" in args and args["new_item_ids"]:
        k = rng.randrange(len(args["new_item_ids"]))
        product = base.tables["products"][base.item_to_product[args["item_ids"][k]]]
        others = [i for i, v in product["variants"].items()
                  if v["available"] and i not in (args["item_ids"][k], args["new_item_ids"][k])]
        if others:
            args["new_item_ids"][k] = rng.choice(sorted(others))
            return {"name": name, "arguments": args}, "new_item_ids"
    if name == "return_delivered_order_items" and len(args["item_ids"]) > 1:
        args["item_ids"].pop(rng.randrange(len(args["item_ids"])))
        return {"name": name, "arguments": args}, "item_ids"
    return None


def make_perturb(base: BaseDB | None = None, alter_share: float = 0.5) -> Perturb:
    """The perturbation callback: drop (share ``1 - alter_share``) or alter one write call.

    Description strings: ``"dropped <tool>"``, ``"altered <tool>.<argument>"`` or
    ``"unchanged (no write call)"``. Falls back to dropping when the chosen call
    has no alteration.
    """
    base = base or load_base_db()

    def perturb(actions: list[dict[str, Any]], rng: random.Random) -> tuple[list[dict[str, Any]], str]:
        writes = [i for i, a in enumerate(actions) if a["name"] in WRITE_TOOLS]
        if not writes:
            return actions, "unchanged (no write call)"
        i = rng.choice(writes)
        if rng.random() < alter_share:
            altered = _alter(actions[i], base, rng)
            if altered is not None:
                return actions[:i] + [altered[0]] + actions[i + 1:], f"altered {actions[i]['name']}.{altered[1]}"
        return actions[:i] + actions[i + 1:], f"dropped {actions[i]['name']}"

    return perturb


def changes_end_state(item: dict[str, Any], calls: list[dict[str, Any]], base: BaseDB | None = None) -> bool:
    """Whether running ``calls`` (``[{"name", "arguments": dict | JSON str}]``) on a fresh
    view ends in a database different from the item's gold ``actions``."""
    base = base or load_base_db()
    view = base.view()
    apply_actions(view, calls)  # decodes JSON-string arguments itself
    return bool(view.diff(gold_view(item["actions"], base)))
