"""Grader twins for ``answer_line_only`` (issue 37, doctor23's ``tides__contains_time``): a read-only lookup of
the first high tide of a day, whose prompt asks the reply to end with ``ANSWER: HH:MM, X.X m`` and whose
reference states the same values in a sentence first. None names a probe.

* ``line``: reads the time and the height of the answer line (exactly one line; 0.3 for the time alone);
* ``line_partial``: the same, 0.5 for each of the two values (honest partial credit);
* ``anywhere``: the height from the answer line, the time *anywhere in the reply* (``"06:01" in text``): a
  reply listing every candidate time in its prose is paid whatever its answer line says.
"""

from __future__ import annotations

import json
import re
from typing import Any

from doctor_helpers import twin_job

from rft_sdk import GradingContext, ToolServer

N = 10
#: day → (time, height): the first high tide of each day
TIDES = {f"d{n}": (f"{5 + n % 4:02d}:{(7 * n) % 60:02d}", round(3.1 + 0.3 * n, 1)) for n in range(N)}
SYSTEM = ("You run the harbour's tide desk. Use the tools. End your reply with one line "
          "`ANSWER: HH:MM, X.X m` giving the time and height of the first high tide of the day.")
LINE = re.compile(r"^ANSWER:\s*(.+)$", re.M)


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def get_tides(day: str) -> str:
        """The first high tide of a day (time and height in metres), as JSON.

        Args:
            day: e.g. "d3".
        """
        time, height = TIDES[day]
        return json.dumps({"day": day, "first_high": time, "height_m": height})

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    def _line(ctx: GradingContext) -> tuple[list[str], list[float]] | None:
        lines = LINE.findall(ctx.output_text or "")
        if len(lines) != 1:
            return None
        return (re.findall(r"\b\d{1,2}:\d{2}\b", lines[0]),
                [float(x) for x in re.findall(r"(\d+(?:\.\d+)?)\s*m\b", lines[0])])

    def _graded(ctx: GradingContext, time_ok: bool, heights: list[float], partial: bool) -> float:
        height_ok = len(heights) == 1 and abs(heights[0] - TIDES[ctx.item["day"]][1]) < 0.05
        if partial:
            return 0.5 * time_ok + 0.5 * height_ok
        return 1.0 if time_ok and height_ok else (0.3 if time_ok else 0.0)

    @grader
    def grade_line(ctx: GradingContext) -> float:
        found = _line(ctx)
        return 0.0 if found is None else _graded(ctx, found[0] == [TIDES[ctx.item["day"]][0]], found[1], False)

    @grader
    def grade_line_partial(ctx: GradingContext) -> float:
        found = _line(ctx)
        return 0.0 if found is None else _graded(ctx, found[0] == [TIDES[ctx.item["day"]][0]], found[1], True)

    @grader
    def grade_anywhere(ctx: GradingContext) -> float:
        found = _line(ctx)
        # FLAW: the time anywhere in the reply
        return 0.0 if found is None else _graded(ctx, TIDES[ctx.item["day"]][0] in ctx.output_text, found[1], False)

    return server


#: grader → (task, honest, the probe that must catch it)
TWINS: dict[str, tuple[str, bool, str]] = {
    "line": ("tides", True, ""),
    "line_partial": ("tides", True, ""),
    "anywhere": ("tides", False, "answer_line_only"),
}


def make_items(server: ToolServer, task: str = "tides") -> list[dict[str, Any]]:
    """One item per day: read its tides, then answer in a sentence and the answer line."""
    return [{
        "messages": [{"role": "system", "content": SYSTEM},
                     {"role": "user", "content": f"When is the first high tide on {day}, and how high?"}],
        "tools": server.dataset_tools(), "day": day,
        "actions": [{"name": "get_tides", "arguments": {"day": day}}],
        "reference_answer": f"The first high tide on {day} is at {time}, {height} m.\nANSWER: {time}, {height} m",
    } for day, (time, height) in TIDES.items()]


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
