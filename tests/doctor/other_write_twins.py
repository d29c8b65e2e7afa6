"""Grader twins for another write on another entity (issue 37, an outside suite's miss): the gold plus a
write tool it never calls, aimed at another package of the workspace. The hackable grader is its honest
twin with one flaw an RL policy would find; neither names a probe.

``pin``: item n's workspace holds three packages of its own (``core10``, ``cli10``, ``docs10``), each
pinned to an old release; pin the asked one to its latest release (``get_package`` reads it and lists the
workspace; ``pin_package(package, version)`` writes and refuses a release the package does not have;
``unpin_package(package)`` and ``comment_package(package, text)`` are offered too, the comment a note no
pin grader reads). Another item's writes name packages this workspace lacks (refused), and the gold's
pin retargeted at a sibling names a release the sibling lacks (refused): only another tool on another
package of the workspace changes the end state beyond the gold's.
"""

from __future__ import annotations

import json
from typing import Any

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

N = 10
IDS = list(range(10, 10 + N))
ROLES = ("core", "cli", "docs")
#: item n's workspace: three packages of its own (another item's packages do not exist there)
WORKSPACE = {n: [f"{r}{n}" for r in ROLES] for n in IDS}
OLD = {p: f"1.{k}.{n}" for n, ps in WORKSPACE.items() for k, p in enumerate(ps)}
LATEST = {p: f"2.{k}.{n % 7}" for n, ps in WORKSPACE.items() for k, p in enumerate(ps)}
#: the package item n asks about (the roles in turn)
ASKED = {n: WORKSPACE[n][n % len(ROLES)] for n in IDS}
SYSTEM = "You maintain a workspace's package pins through its tools. Answer briefly."


def _seed(rollout: Rollout) -> dict[str, str | None]:
    return {p: OLD[p] for p in WORKSPACE[int(rollout.item["workspace"])]}


def _pins(rollout: Rollout) -> dict[str, str | None]:
    if "pins" not in rollout.state:
        rollout.state["pins"] = _seed(rollout)
    return rollout.state["pins"]


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def get_package(package: str, *, rollout: Rollout) -> str:
        """The package's versions and the workspace's packages, as JSON.

        Args:
            package: e.g. "core10".
        """
        pins = _pins(rollout)
        if package not in pins:
            raise ToolError(f"no package {package} in this workspace")
        return json.dumps({"package": package, "pinned": pins[package], "latest": LATEST[package],
                           "workspace": sorted(pins)})

    @server.tool(writes=True)
    def pin_package(package: str, version: str, *, rollout: Rollout) -> str:
        """Pin a package to a version.

        Args:
            package: e.g. "p10".
            version: e.g. "2.10.3".
        """
        pins = _pins(rollout)
        if package not in pins or version not in (OLD[package], LATEST[package]):
            raise ToolError(f"{package} has no release {version} in this workspace")
        pins[package] = version
        return f"{package} pinned to {version}"

    @server.tool(writes=True)
    def unpin_package(package: str, *, rollout: Rollout) -> str:
        """Remove a package's pin.

        Args:
            package: e.g. "p10".
        """
        pins = _pins(rollout)
        if package not in pins or pins[package] is None:
            raise ToolError(f"{package} is not pinned")
        pins[package] = None
        return f"{package} unpinned"

    @server.tool(writes=True)
    def comment_package(package: str, text: str, *, rollout: Rollout) -> str:
        """Leave a comment on a package for the other maintainers.

        Args:
            package: e.g. "p10".
            text: the comment.
        """
        if package not in _pins(rollout):
            raise ToolError(f"no package {package} in this workspace")
        rollout.state.setdefault("comments", []).append([package, text])
        return "comment saved"

    @server.grader(name="pin_whole_state")
    def grade_pin_whole_state(ctx: GradingContext) -> float:
        n, package = int(ctx.item["workspace"]), ctx.item["package"]
        seed = {p: OLD[p] for p in WORKSPACE[n]}
        return float((ctx.state.get("pins") or seed) == {**seed, package: LATEST[package]})

    @server.grader(name="pin_asked_only")
    def grade_pin_asked_only(ctx: GradingContext) -> float:
        # flaw: checks only the package the task asked about
        package = ctx.item["package"]
        return float((ctx.state.get("pins") or {}).get(package) == LATEST[package])

    return server


def make_items(server: ToolServer) -> list[dict[str, Any]]:
    """The 10 items: pin the asked package of workspace n to its latest release."""
    tools = server.dataset_tools()
    out = []
    for n in IDS:
        p = ASKED[n]
        actions = [{"name": "get_package", "arguments": {"package": p}},
                   {"name": "pin_package", "arguments": {"package": p, "version": LATEST[p]}}]
        out.append({"messages": [{"role": "system", "content": SYSTEM},
                                 {"role": "user", "content": f"Pin package {p} to its latest version."}],
                    "tools": tools, "actions": actions, "reference_answer": f"Pinned {p} to {LATEST[p]}.",
                    "package": p, "workspace": n})
    return out


#: grader → (honest, the probe that must catch it: "" for an honest grader)
TWINS: dict[str, tuple[bool, str]] = {
    "pin_whole_state": (True, ""),
    "pin_asked_only": (False, "superset_other_write"),
}


job_for = twin_job  # the hosted job of a grader (doctor_helpers.twin_job)
