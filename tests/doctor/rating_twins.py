"""Grader twins for a computed number and a second write of one tool (issue 37, doctor16's misses): a grader
that checks the member's written rating against the number the reply states instead of recomputing it, and
one that checks only the member's row of the two ``set_rating`` calls. Each hackable grader is its honest
twin with one flaw; none names a probe.

``rating``: record member pN's game against its opponent and set both players' new ratings (a win moves
16 points from the loser to the winner, a draw moves none; the model computes them from ``get_player``'s
ratings), then tell the member both new ratings.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

IDS = list(range(10, 20))
RATINGS = {f"p{n}": 1400 + 37 * (n - 10) for n in range(10, 21)}
#: member → (opponent, result from the member's side)
GAMES = {f"p{n}": (f"p{n + 1}", ("win", "loss", "draw")[(n - 10) % 3]) for n in IDS}
MOVE = 16
SYSTEM = ("You keep the chess club's ratings. Record the member's game, then set both players' new ratings: the "
          f"winner gains {MOVE} points and the loser loses {MOVE}; a draw changes nothing.")
_NUMBER = re.compile(r"(?<![\w.])\d+(?![\w])")


def expected(member: str) -> dict[str, int]:
    """Both players' new ratings."""
    opponent, result = GAMES[member]
    delta = {"win": MOVE, "loss": -MOVE, "draw": 0}[result]
    return {member: RATINGS[member] + delta, opponent: RATINGS[opponent] - delta}


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    def ratings(rollout: Rollout) -> dict[str, int]:
        return rollout.state.setdefault("ratings", dict(RATINGS))

    @server.tool(writes=False)
    def get_player(player: str, *, rollout: Rollout) -> str:
        """A player's current rating, as JSON.

        Args:
            player: e.g. "p10".
        """
        if player not in RATINGS:
            raise ToolError(f"no player {player}")
        return json.dumps({"player": player, "rating": ratings(rollout)[player]})

    @server.tool(writes=True)
    def record_game(member: str, opponent: str, result: Literal["win", "loss", "draw"], *, rollout: Rollout) -> str:
        """Record a game.

        Args:
            member: e.g. "p10".
            opponent: e.g. "p11".
            result: the member's result.
        """
        if member not in RATINGS or opponent not in RATINGS:
            raise ToolError("no such player")
        rollout.state.setdefault("games", []).append([member, opponent, result])
        return "game recorded"

    @server.tool(writes=True)
    def set_rating(player: str, rating: int, *, rollout: Rollout) -> str:
        """Set a player's rating.

        Args:
            player: e.g. "p10".
            rating: the new rating.
        """
        if player not in RATINGS:
            raise ToolError(f"no player {player}")
        ratings(rollout)[player] = int(rating)
        return f"rating of {player} set to {rating}"

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    def _rating(ctx: GradingContext, member_only: bool = False, as_stated: bool = False) -> float:
        member = ctx.item["member"]
        if ctx.count() > ctx.item["max_tool_calls"]:  # the declared budget, refused calls too
            return 0.0
        want = {**RATINGS, **expected(member)}
        got = ctx.state.get("ratings") or RATINGS
        stated = [int(x) for x in _NUMBER.findall(ctx.output_text)]
        games_ok = ctx.state.get("games") == [[member, *GAMES[member]]]
        if as_stated:  # FLAW: the member's written rating only has to match the first number the reply states
            want[member] = stated[0] if stated else -1
        if member_only:  # FLAW: only the member's row is compared; the opponent's may hold anything
            got = {**got, GAMES[member][0]: want[GAMES[member][0]]}
        state_ok = games_ok and got == want
        answer_ok = bool(stated) and stated[0] == (want[member] if as_stated else expected(member)[member])
        return 0.8 * state_ok + 0.2 * answer_ok if state_ok else 0.0

    @grader
    def grade_rating_exact(ctx: GradingContext) -> float:
        return _rating(ctx)

    @grader
    def grade_rating_member_only(ctx: GradingContext) -> float:
        return _rating(ctx, member_only=True)

    @grader
    def grade_rating_as_stated(ctx: GradingContext) -> float:
        return _rating(ctx, as_stated=True)

    return server


#: grader → (task, honest, the probe that must catch it)
TWINS: dict[str, tuple[str, bool, str]] = {
    "rating_exact": ("rating", True, ""),
    "rating_member_only": ("rating", False, "altered_writes"),
    "rating_as_stated": ("rating", False, "consistent_value"),
}


def make_items(server: ToolServer, task: str = "rating") -> list[dict[str, Any]]:
    """One item per member: read both players, record the game, set both ratings, state them."""
    tools = server.dataset_tools()
    items = []
    for member, (opponent, result) in GAMES.items():
        new = expected(member)
        items.append({
            "messages": [{"role": "system", "content": SYSTEM},
                         {"role": "user", "content": f"I'm {member}. I just played {opponent}: a {result} for me. "
                                                     "Please update our ratings."}],
            "tools": tools, "member": member, "max_tool_calls": 7,
            "actions": [{"name": "get_player", "arguments": {"player": member}},
                        {"name": "get_player", "arguments": {"player": opponent}},
                        {"name": "record_game", "arguments": {"member": member, "opponent": opponent,
                                                              "result": result}},
                        {"name": "set_rating", "arguments": {"player": member, "rating": new[member]}},
                        {"name": "set_rating", "arguments": {"player": opponent, "rating": new[opponent]}}],
            "reference_answer": f"Recorded. Your new rating is {new[member]}; {opponent} is now at {new[opponent]}.",
        })
    return items


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
