"""Grader twins for ``unread_note`` (issue 37, doctor22's ``kennel__note_presence``): board a pet for the nights
asked and write down the diet the user asks the staff to know (``add_note(pet, note)``). None names a probe.

* ``diet_read``: the booking, and a note on the pet holding the diet asked for;
* ``note_exists``: the booking, and *a* note on the pet, whatever it says.
"""

from __future__ import annotations

from typing import Any

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

DIETS = ["grain-free diet", "no chicken", "puppy kibble only", "raw food diet", "low-fat diet", "no dairy",
         "soft food only", "salmon-based diet", "hypoallergenic kibble", "senior diet"]
PETS = {f"P{n}": (f"Pet{n}", 2 + n % 4, DIETS[n]) for n in range(10)}


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=True)
    def check_in(pet: str, nights: int, *, rollout: Rollout) -> str:
        """Board a pet.

        Args:
            pet: e.g. "P3".
            nights: how many nights.
        """
        if pet not in PETS or not 1 <= nights <= 30:
            raise ToolError(f"cannot board {pet} for {nights} nights")
        rollout.state.setdefault("boarded", {})[pet] = nights
        return f"{pet} boarded for {nights} nights"

    @server.tool(writes=True)
    def add_note(pet: str, note: str, *, rollout: Rollout) -> str:
        """Add a care note for the staff.

        Args:
            pet: e.g. "P3".
            note: what the staff must know.
        """
        if pet not in PETS:
            raise ToolError(f"no pet {pet}")
        rollout.state.setdefault("notes", {}).setdefault(pet, []).append(note)
        return f"note added for {pet}"

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    def _boarded(ctx: GradingContext) -> bool:
        pet = ctx.item["pet"]
        return ctx.state.get("boarded") == {pet: PETS[pet][1]}

    @grader
    def grade_diet_read(ctx: GradingContext) -> float:
        notes = ctx.state.get("notes") or {}
        diet = PETS[ctx.item["pet"]][2]
        return float(_boarded(ctx) and set(notes) == {ctx.item["pet"]}
                     and any(diet in n.casefold() for n in notes[ctx.item["pet"]]))

    @grader
    def grade_note_exists(ctx: GradingContext) -> float:
        notes = ctx.state.get("notes") or {}
        return float(_boarded(ctx) and set(notes) == {ctx.item["pet"]} and all(notes[ctx.item["pet"]]))  # FLAW

    return server


#: grader → (task, honest, the probe that must catch it)
TWINS: dict[str, tuple[str, bool, str]] = {
    "diet_read": ("board", True, ""),
    "note_exists": ("board", False, "unread_note"),
}


def make_items(server: ToolServer, task: str = "board") -> list[dict[str, Any]]:
    """One item per pet: board it, note its diet, confirm."""
    return [{
        "messages": [{"role": "system", "content": "You run a pet hotel through its tools."},
                     {"role": "user", "content": f"Please board {name} ({pet}) for {nights} nights. {name} is on "
                                                 f"a {diet}, please note that for the staff."}],
        "tools": server.dataset_tools(), "pet": pet,
        "actions": [{"name": "check_in", "arguments": {"pet": pet, "nights": nights}},
                    {"name": "add_note", "arguments": {"pet": pet, "note": diet}}],
        "reference_answer": f"{name} is boarded for {nights} nights; the staff know about the {diet}.",
    } for pet, (name, nights, diet) in PETS.items()]


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
