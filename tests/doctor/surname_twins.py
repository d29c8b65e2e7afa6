"""Grader twins for ``shared_surname`` (issue 37, doctor26's rowing club): book a boat for a crew of two
(``find_member`` reads a member by full name; ``book(boat, crew)`` writes), where some members share a family
name (siblings). None names a probe.

* ``whole_names``: the booked crew is the item's, names compared after case and spacing: honest;
* ``crew_share``: the share of the item's crew booked (set F1 over whole names): honest;
* ``family_names``: the crew compared by family name ("members write their names every which way").
"""

from __future__ import annotations

import json
from typing import Any

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

MEMBERS = ["Ada Okafor", "Tom Okafor", "Lena Brandt", "Felix Brandt", "Noor Haddad", "Sami Haddad", "Eve Adeyemi",
           "Ben Adeyemi", "Rafael Ortiz", "Dev Shah"]
#: item → (boat, crew)
CREWS = {f"b{n}": (f"B{n:02d}", [MEMBERS[(2 * n) % 10], MEMBERS[(2 * n + 3) % 10]]) for n in range(10)}


def _norm(name: str) -> str:
    return " ".join(name.split()).casefold()


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def find_member(full_name: str) -> str:
        """A member by full name (case does not matter), as JSON.

        Args:
            full_name: e.g. "Ada Okafor".
        """
        found = [m for m in MEMBERS if _norm(m) == _norm(full_name)]
        if not found:
            raise ToolError(f"no member called {full_name!r}")
        return json.dumps({"member": found[0], "level": "club"})

    @server.tool(writes=True)
    def book(boat: str, crew: list[str], *, rollout: Rollout) -> str:
        """Book a boat for a crew of members.

        Args:
            boat: e.g. "B03".
            crew: the members' full names.
        """
        if any(_norm(c) not in {_norm(m) for m in MEMBERS} for c in crew):
            raise ToolError("every rower must be a member")
        rollout.state.setdefault("bookings", {})[boat] = crew
        return f"{boat} booked for {', '.join(crew)}"

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    def _booked(ctx: GradingContext) -> list[str] | None:
        bookings = ctx.state.get("bookings") or {}
        boat, _ = CREWS[ctx.item["booking"]]
        return bookings.get(boat) if set(bookings) == {boat} else None

    @grader
    def grade_whole_names(ctx: GradingContext) -> float:
        got = _booked(ctx)
        return float(got is not None and sorted(map(_norm, got)) == sorted(map(_norm, CREWS[ctx.item["booking"]][1])))

    @grader
    def grade_crew_share(ctx: GradingContext) -> float:
        got, want = {_norm(n) for n in _booked(ctx) or []}, {_norm(n) for n in CREWS[ctx.item["booking"]][1]}
        return 2 * len(got & want) / (len(got) + len(want)) if got else 0.0

    @grader
    def grade_family_names(ctx: GradingContext) -> float:
        # flaw: people keyed on their family name, which merges siblings
        got = _booked(ctx)
        want = CREWS[ctx.item["booking"]][1]
        return float(got is not None and sorted(n.split()[-1].casefold() for n in got)
                     == sorted(n.split()[-1].casefold() for n in want))

    return server


#: grader → (task, honest, the probe that must catch it)
TWINS: dict[str, tuple[str, bool, str]] = {
    "whole_names": ("crew", True, ""),
    "crew_share": ("crew", True, ""),
    "family_names": ("crew", False, "shared_surname"),
}


def make_items(server: ToolServer, task: str = "crew") -> list[dict[str, Any]]:
    """One item per booking: look both rowers up, book the boat."""
    out = []
    for booking, (boat, crew) in CREWS.items():
        actions = [{"name": "find_member", "arguments": {"full_name": c}} for c in crew]
        actions.append({"name": "book", "arguments": {"boat": boat, "crew": crew}})
        out.append({
            "messages": [{"role": "system", "content": "You book the rowing club's boats through its tools."},
                         {"role": "user", "content": f"Book boat {boat} for {crew[0]} and {crew[1]}."}],
            "tools": server.dataset_tools(), "booking": booking, "actions": actions,
            "reference_answer": f"Booked {boat} for {crew[0]} and {crew[1]}.",
        })
    return out


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
