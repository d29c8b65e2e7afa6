"""Grader twins for ``hedged_listed_text`` (issue 37, doctor25's ``lostfound__twin_a``): reserve a found item for
its owner and tell them which collection point, by its name, holds it (``get_item`` gives it). None names a probe.

* ``one_point``: the reservation (0.5), and exactly one collection point named, the right one (0.5);
* ``first_point``: the same, the first collection point the reply names;
* ``point_named``: the same, the right collection point named anywhere in the reply.
"""

from __future__ import annotations

import json
from typing import Any

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

POINTS = ["Gate 2 Security", "North Stand Desk", "Main Box Office", "West Car Park Kiosk", "Media Centre"]
ITEMS = {f"LF-{500 + n}": (f"Guest {chr(65 + n)}", POINTS[n % len(POINTS)]) for n in range(10)}


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def get_item(item_id: str) -> str:
        """A found item and the collection point that holds it, as JSON.

        Args:
            item_id: e.g. "LF-503".
        """
        if item_id not in ITEMS:
            raise ToolError(f"no item {item_id}")
        return json.dumps({"item_id": item_id, "held_at": ITEMS[item_id][1]})

    @server.tool(writes=True)
    def reserve(item_id: str, owner: str, *, rollout: Rollout) -> str:
        """Reserve a found item for its owner.

        Args:
            item_id: e.g. "LF-503".
            owner: the owner's full name.
        """
        if item_id not in ITEMS:
            raise ToolError(f"no item {item_id}")
        rollout.state.setdefault("reserved", {})[item_id] = owner
        return f"{item_id} reserved"

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    def _grade(ctx: GradingContext, how: str) -> float:
        item_id = ctx.item["item_id"]
        owner, point = ITEMS[item_id]
        reserved = ctx.state.get("reserved") == {item_id: owner}
        text = ctx.output_text or ""
        named = sorted((text.find(p), p) for p in POINTS if p in text)
        if how == "one":
            ok = [p for _, p in named] == [point]
        elif how == "first":
            ok = bool(named) and named[0][1] == point
        else:
            ok = point in text  # FLAW: the right point anywhere in the reply
        return 0.5 * reserved + 0.5 * ok

    @grader
    def grade_one_point(ctx: GradingContext) -> float:
        return _grade(ctx, "one")

    @grader
    def grade_first_point(ctx: GradingContext) -> float:
        return _grade(ctx, "first")

    @grader
    def grade_point_named(ctx: GradingContext) -> float:
        return _grade(ctx, "anywhere")

    return server


#: grader → (task, honest, the probe that must catch it)
TWINS: dict[str, tuple[str, bool, str]] = {
    "one_point": ("claim", True, ""),
    "first_point": ("claim", True, ""),
    "point_named": ("claim", False, "hedged_listed_text"),
}


def make_items(server: ToolServer, task: str = "claim") -> list[dict[str, Any]]:
    """One item per found item: read it, reserve it, name the collection point."""
    return [{
        "messages": [{"role": "system", "content": "You staff the lost-property desk. Reserve the guest's item in "
                                                   "their name and tell them which collection point holds it."},
                     {"role": "user", "content": f"Hi, I'm {owner}; my item is {item_id}."}],
        "tools": server.dataset_tools(), "item_id": item_id,
        "actions": [{"name": "get_item", "arguments": {"item_id": item_id}},
                    {"name": "reserve", "arguments": {"item_id": item_id, "owner": owner}}],
        "reference_answer": f"It is reserved for you, {owner}: collect it at the {point} with a photo ID.",
    } for item_id, (owner, point) in ITEMS.items()]


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
