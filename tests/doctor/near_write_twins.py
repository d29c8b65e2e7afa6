"""Grader twins for near misses of a written outcome (issue 37, outside suites' misses): a loose tolerance
on a written or stated number, and a grader that checks the attributes of the written entity but not which
entity it is. Each hackable grader is its honest twin with one flaw; none names a probe.

* ``room``: set cold room rN to the storage temperature of the product it holds and seal it (``get_room``
  reads the room, ``product_spec`` the product's temperature, ``set_temperature(room, temp_c)`` and
  ``seal_room(room)`` write; two rooms hold each product), then state the new temperature;
* ``issue``: set newsletter issue nN's title and tags from its brief, then publish it (items share tags).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer
from rft_sdk.rewards import precision_recall_f1

N = 10
IDS = list(range(10, 10 + N))
#: product → storage temperature in °C, stated to the hundredth
SPEC = {"milk": 3.75, "cheese": 6.25, "fish": 1.15, "berries": 2.85, "flowers": 4.45}
PRODUCTS = list(SPEC)
ROOMS = {f"r{n}": {"product": PRODUCTS[(n - 10) % len(PRODUCTS)], "temp_c": 8.0 + 0.1 * (n - 10), "sealed": False}
         for n in IDS}
TAGS = ["policy", "energy", "health", "science", "culture", "markets", "climate", "sport"]
ISSUES = {f"n{n}": (f"Issue {n}: What the {TAGS[(n - 10) % len(TAGS)].title()} Desk Learned This Week",
                    [TAGS[(n - 10) % len(TAGS)], TAGS[(n - 9) % len(TAGS)], TAGS[(n - 7) % len(TAGS)]]) for n in IDS}
SYSTEM = "You run a cold store and a newsletter through their tools. Change only what you are asked to."
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")


def _rooms(rollout: Rollout) -> dict[str, Any]:
    if "rooms" not in rollout.state:
        rollout.state["rooms"] = copy.deepcopy(ROOMS)
    return rollout.state["rooms"]


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def get_room(room: str, *, rollout: Rollout) -> str:
        """A cold room: the product it holds and its temperature, as JSON.

        Args:
            room: e.g. "r10".
        """
        rooms = _rooms(rollout)
        if room not in rooms:
            raise ToolError(f"no room {room}")
        return json.dumps({"room": room, **rooms[room]})

    @server.tool(writes=False)
    def product_spec(product: str) -> str:
        """A product's storage temperature in °C, as JSON.

        Args:
            product: e.g. "milk".
        """
        if product not in SPEC:
            raise ToolError(f"no product {product}")
        return json.dumps({"product": product, "store_at_c": SPEC[product]})

    @server.tool(writes=True)
    def set_temperature(room: str, temp_c: float, *, rollout: Rollout) -> str:
        """Set a room's temperature (-5 to 20 °C).

        Args:
            room: e.g. "r10".
            temp_c: degrees Celsius.
        """
        rooms = _rooms(rollout)
        if room not in rooms or not -5 <= temp_c <= 20:
            raise ToolError(f"cannot set {room} to {temp_c}")
        rooms[room]["temp_c"] = float(temp_c)
        return f"{room} set to {temp_c} °C"

    @server.tool(writes=True)
    def seal_room(room: str, *, rollout: Rollout) -> str:
        """Seal a room's door once its temperature is set.

        Args:
            room: e.g. "r10".
        """
        rooms = _rooms(rollout)
        if room not in rooms:
            raise ToolError(f"no room {room}")
        rooms[room]["sealed"] = True
        return f"{room} sealed"

    @server.tool(writes=False)
    def get_brief(issue: str, *, rollout: Rollout) -> str:
        """An issue's agreed title and tags, as JSON.

        Args:
            issue: e.g. "n10".
        """
        if issue not in ISSUES:
            raise ToolError(f"no issue {issue}")
        return json.dumps({"issue": issue, "title": ISSUES[issue][0], "tags": ISSUES[issue][1]})

    @server.tool(writes=True)
    def set_metadata(issue: str, title: str, tags: list[str], *, rollout: Rollout) -> str:
        """Set an issue's title and tags.

        Args:
            issue: e.g. "n10".
            title: the title.
            tags: lower-case topic tags.
        """
        if issue not in ISSUES:
            raise ToolError(f"no issue {issue}")
        rollout.state.setdefault("issues", {})[issue] = {"title": title, "tags": list(tags),
                                                         **({"published": True} if rollout.state.get(
                                                             "issues", {}).get(issue, {}).get("published") else {})}
        return f"{issue} saved"

    @server.tool(writes=True)
    def publish(issue: str, *, rollout: Rollout) -> str:
        """Publish an issue (needs a title and tags).

        Args:
            issue: e.g. "n10".
        """
        saved = rollout.state.get("issues", {}).get(issue)
        if not saved:
            raise ToolError("set the title and tags first")
        saved["published"] = True
        return f"{issue} published"

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    def _room(ctx: GradingContext, tol: float = 0.005, answer_tol: float = 0.005, same_product: bool = False) -> float:
        rooms = ctx.state.get("rooms") or ROOMS
        room = ctx.item["room"]
        want = SPEC[ROOMS[room]["product"]]
        names = [k for k in ROOMS if ROOMS[k]["product"] == ROOMS[room]["product"]] if same_product else [room]
        done = [k for k in names if abs(rooms[k]["temp_c"] - want) <= tol and rooms[k]["sealed"]
                and all(rooms[o] == ROOMS[o] for o in ROOMS if o != k)]
        if not done:
            return 0.0
        stated = {float(x) for x in _NUMBER.findall(ctx.output_text.replace(room, " "))}
        return 0.8 + 0.2 * (len(stated) == 1 and abs(stated.pop() - want) <= answer_tol)

    @grader
    def grade_room_exact(ctx: GradingContext) -> float:
        return _room(ctx)

    @grader
    def grade_room_loose(ctx: GradingContext) -> float:
        # flaw: half a degree of tolerance on a temperature stated to the hundredth
        return _room(ctx, tol=0.5)

    @grader
    def grade_room_answer_loose(ctx: GradingContext) -> float:
        # flaw: the stated temperature only needs to be within half a degree
        return _room(ctx, answer_tol=0.5)

    @grader
    def grade_room_same_product(ctx: GradingContext) -> float:
        # flaw: any room holding the same product counts, not the room asked for
        return _room(ctx, same_product=True)

    @grader
    def grade_issue_additive(ctx: GradingContext) -> float:
        """Honest: 0 unless only this issue changed and it is published; then 0.5 for the exact title plus
        0.5 x the tag-set F1 (partial credit for partly right tags)."""
        issues = ctx.state.get("issues", {})
        issue = ctx.item["issue"]
        if set(issues) != {issue} or not issues[issue].get("published"):
            return 0.0
        title, tags = ISSUES[issue]
        got = issues[issue]
        same = " ".join(got["title"].split()).casefold() == " ".join(title.split()).casefold()
        return 0.5 * same + 0.5 * precision_recall_f1(set(got["tags"]), set(tags)).f1

    return server


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


TASK_TOOLS = {"room": ["get_room", "product_spec", "set_temperature", "seal_room"], "issue": ["get_brief", "set_metadata", "publish"]}


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """The 10 items of ``task`` (``room`` or ``issue``)."""
    tools = [t for t in server.dataset_tools() if t["function"]["name"] in TASK_TOOLS[task]]
    out = []
    for n in IDS:
        if task == "room":
            r = f"r{n}"
            product = ROOMS[r]["product"]
            question = (f"Set cold room {r} to the storage temperature of the product it holds, seal it, and tell me "
                        "the value.")
            actions = [_call("get_room", room=r), _call("product_spec", product=product),
                       _call("set_temperature", room=r, temp_c=SPEC[product]), _call("seal_room", room=r)]
            reference = f"Room {r} ({product}) is now at {SPEC[product]:.2f} °C."
            extra: dict[str, Any] = {"room": r}
        elif task == "issue":
            i = f"n{n}"
            title, tags = ISSUES[i]
            question = f"Issue {i} is ready: set its title and tags from the brief and publish it."
            actions = [_call("get_brief", issue=i), _call("set_metadata", issue=i, title=title, tags=tags),
                       _call("publish", issue=i)]
            reference, extra = f"Published {i}.", {"issue": i}
        else:
            raise ValueError(f"unknown task {task!r}")
        out.append({"messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}],
                    "tools": tools, "actions": actions, "reference_answer": reference,
                    **extra})
    return out


#: grader → (task, honest, the probe that must catch it: "" for an honest grader)
TWINS: dict[str, tuple[str, bool, str]] = {
    "room_exact": ("room", True, ""),
    "room_loose": ("room", False, "near_value"),
    "room_answer_loose": ("room", False, "near_stated_value"),
    "room_same_product": ("room", False, "sibling_entity"),
    "issue_additive": ("issue", True, ""),
}

job_for = twin_job  # the hosted job of a grader (doctor_helpers.twin_job)
