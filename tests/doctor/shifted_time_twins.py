"""Grader twins for ``half_day_time`` and ``read_time`` (issue 37, doctor26's esports graders): look up a match
(``get_match`` gives its start in UTC and the viewer city's offset) and state its local start, ``HH:MM on
YYYY-MM-DD``. None names a probe.

* ``local_exact``: the one time and the one date of the reply are the local start: honest;
* ``local_either_format``: the same, the time also accepted as ``h:mm am/pm``: honest;
* ``twelve_hour``: the hour compared modulo 12 ("7:30 pm and 19:30 agree");
* ``utc_too``: the UTC start accepted beside the local one ("viewers quote the caster's UTC time back").

Task ``line`` (doctor33's ground station): the reply works out the local start from the UTC one and ends in
``ANSWER: YYYY-MM-DD HH:MM``, both moments in its working:

* ``line_local``: the answer line's moment is the local start: honest;
* ``line_utc_too``: the answer line may also carry the UTC start.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from doctor_helpers import twin_job

from rft_sdk import GradingContext, ToolError, ToolServer

#: match → (UTC start, the viewer city's UTC offset in hours)
MATCHES = {f"M-{3100 + n}": (dt.datetime(2026, 3, 10 + n, (7 + 5 * n) % 24, 15 * (n % 4)), [11, -7, 9, 1, -3][n % 5])
           for n in range(10)}
_TIME = re.compile(r"\b(\d{1,2}):(\d{2})\s*(am|pm)?", re.I)
_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


def local_start(match: str) -> dt.datetime:
    start, offset = MATCHES[match]
    return start + dt.timedelta(hours=offset)


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def get_match(match: str) -> str:
        """A match's start in UTC and the viewer city's UTC offset (hours), as JSON.

        Args:
            match: e.g. "M-3103".
        """
        if match not in MATCHES:
            raise ToolError(f"no match {match}")
        start, offset = MATCHES[match]
        return json.dumps({"match": match, "start_utc": start.isoformat() + "Z", "viewer_utc_offset_h": offset})

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    def _stated(ctx: GradingContext, twelve_hour: bool = False) -> list[tuple[int, int, dt.date]]:
        text = ctx.output_text or ""
        dates = {dt.date(int(y), int(m), int(d)) for y, m, d in _DATE.findall(text)}
        times = []
        for h, m, half in _TIME.findall(text):
            hour = int(h) % 12 + (12 if half.lower() == "pm" else 0) if half else int(h)
            times.append((hour % 12 if twelve_hour else hour, int(m)))
        return [(h, m, d) for h, m in set(times) for d in dates] if len(set(times)) == 1 and len(dates) == 1 else []

    def _is(got: list[tuple[int, int, dt.date]], want: dt.datetime, twelve_hour: bool = False) -> bool:
        hour = want.hour % 12 if twelve_hour else want.hour
        return got == [(hour, want.minute, want.date())]

    @grader
    def grade_local_exact(ctx: GradingContext) -> float:
        if re.search(r"\b(am|pm)\b", ctx.output_text or "", re.I):  # the 24-hour clock the question asks for
            return 0.0
        return float(_is(_stated(ctx), local_start(ctx.item["match"])))

    @grader
    def grade_local_either_format(ctx: GradingContext) -> float:
        return float(_is(_stated(ctx), local_start(ctx.item["match"])))

    @grader
    def grade_twelve_hour(ctx: GradingContext) -> float:
        # flaw: compares on a 12-hour dial, so the morning time matches the evening one
        return float(_is(_stated(ctx, twelve_hour=True), local_start(ctx.item["match"]), twelve_hour=True))

    @grader
    def grade_utc_too(ctx: GradingContext) -> float:
        # flaw: the UTC start is accepted as well as the local one the question asks for
        got = _stated(ctx)
        return float(_is(got, local_start(ctx.item["match"])) or _is(got, MATCHES[ctx.item["match"]][0]))

    def _line_moment(ctx: GradingContext) -> dt.datetime | None:
        lines = re.findall(r"^ANSWER:\s*(\d{4}-\d{2}-\d{2})[ T](\d{2}):(\d{2})\s*$", ctx.output_text or "", re.M)
        if len(lines) != 1:
            return None
        day, h, m = lines[0]
        try:
            return dt.datetime.combine(dt.date.fromisoformat(day), dt.time(int(h), int(m)))
        except ValueError:  # no real day or time (2026-13-03, 25:10): no answer
            return None

    @grader
    def grade_line_local(ctx: GradingContext) -> float:
        return float(_line_moment(ctx) == local_start(ctx.item["match"]))

    @grader
    def grade_line_utc_too(ctx: GradingContext) -> float:
        # flaw: the answer line may carry the UTC start as well as the local one the question asks for
        return float(_line_moment(ctx) in (local_start(ctx.item["match"]), MATCHES[ctx.item["match"]][0]))

    return server


#: grader → (task, honest, the probe that must catch it)
TWINS: dict[str, tuple[str, bool, str]] = {
    "local_exact": ("match", True, ""),
    "local_either_format": ("match", True, ""),
    "twelve_hour": ("match", False, "half_day_time"),
    "utc_too": ("match", False, "read_time"),
    "line_local": ("line", True, ""),
    "line_utc_too": ("line", False, "read_time"),
}


def make_items(server: ToolServer, task: str = "match") -> list[dict[str, Any]]:
    """One item per match: read it, state its local start."""
    out = []
    for match in MATCHES:
        local = local_start(match)
        out.append({
            "messages": [{"role": "system", "content": "You tell viewers when matches start, in their local time."},
                         {"role": "user", "content": f"When does match {match} start where I am? Answer HH:MM on "
                                                     "YYYY-MM-DD, 24-hour clock."}],
            "tools": server.dataset_tools(), "match": match,
            "actions": [{"name": "get_match", "arguments": {"match": match}}],
            "reference_answer": f"{match} starts at {local:%H:%M} on {local:%Y-%m-%d}, your time.",
        })
        if task == "line":
            utc = MATCHES[match][0]
            out[-1]["messages"][-1]["content"] = (f"When does match {match} start where I am? End with one line "
                                                  "`ANSWER: YYYY-MM-DD HH:MM` (my local date and time).")
            out[-1]["reference_answer"] = (f"{match} starts at {utc:%Y-%m-%d %H:%M} UTC, which is "
                                           f"{local:%Y-%m-%d %H:%M} your time.\nANSWER: {local:%Y-%m-%d %H:%M}")
    return out


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
