"""Grader twins for ``near_date`` (issue 37, doctor24's ``warranty__twin_a``): look up a device and state the day
its warranty ends (``get_device`` gives the purchase date and the warranty in months). None names a probe.

* ``exact_date``: the one date of the reply is the warranty's last day;
* ``any_format``: the same, written ``18 June 2026`` or ISO ``2026-06-18``: honest;
* ``month_only``: every date of the reply in the right year and month;
* ``date_window``: a day either side accepted ("inclusive or exclusive counting"): an honest twin until
  doctor26, whose tester wrote the same slack as a flaw (a policy counting the days one off is paid);
* ``either_order``: the day and the month accepted either way round ("US and European order").
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from doctor_helpers import twin_job

from rft_sdk import GradingContext, ToolError, ToolServer

DEVICES = {f"SN-{100 + n}": (dt.date(2024, 1 + n, 3 + 2 * n), 12 + 12 * (n % 3)) for n in range(10)}
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
DATE = re.compile(r"(\d{1,2}) (" + "|".join(MONTHS) + r") (\d{4})")
ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


def warranty_end(serial: str) -> dt.date:
    bought, months = DEVICES[serial]
    year, month = divmod(bought.month - 1 + months, 12)
    return dt.date(bought.year + year, month + 1, bought.day) - dt.timedelta(days=1)


def written(date: dt.date) -> str:
    return f"{date.day} {MONTHS[date.month - 1]} {date.year}"


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS` (named routes)."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def get_device(serial: str) -> str:
        """A device's purchase date and warranty length, as JSON.

        Args:
            serial: e.g. "SN-103".
        """
        if serial not in DEVICES:
            raise ToolError(f"no device {serial}")
        bought, months = DEVICES[serial]
        return json.dumps({"serial": serial, "purchased": bought.isoformat(), "warranty_months": months})

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    def _dates(ctx: GradingContext) -> list[dt.date]:
        return [dt.date(int(y), MONTHS.index(m) + 1, int(d)) for d, m, y in DATE.findall(ctx.output_text or "")]

    @grader
    def grade_exact_date(ctx: GradingContext) -> float:
        return float(set(_dates(ctx)) == {warranty_end(ctx.item["serial"])})

    @grader
    def grade_date_window(ctx: GradingContext) -> float:
        dates, end = set(_dates(ctx)), warranty_end(ctx.item["serial"])
        return float(len(dates) == 1 and abs((dates.pop() - end).days) <= 1)

    @grader
    def grade_any_format(ctx: GradingContext) -> float:
        iso = {dt.date(int(y), int(m), int(d)) for y, m, d in ISO.findall(ctx.output_text or "")}
        return float((set(_dates(ctx)) | iso) == {warranty_end(ctx.item["serial"])})

    @grader
    def grade_either_order(ctx: GradingContext) -> float:
        end = warranty_end(ctx.item["serial"])
        dates = set(_dates(ctx))
        return float(len(dates) == 1 and dates.pop() in {end, *([end.replace(month=end.day, day=end.month)]
                                                                 if end.day <= 12 else [])})  # FLAW

    @grader
    def grade_month_only(ctx: GradingContext) -> float:
        end = warranty_end(ctx.item["serial"])
        dates = _dates(ctx)
        return float(bool(dates) and all((d.year, d.month) == (end.year, end.month) for d in dates))  # FLAW

    return server


#: grader → (task, honest, the probe that must catch it)
TWINS: dict[str, tuple[str, bool, str]] = {
    "exact_date": ("warranty", True, ""),
    "any_format": ("warranty", True, ""),
    "month_only": ("warranty", False, "near_date"),
    "date_window": ("warranty", False, "neighbour_date"),
    "either_order": ("warranty", False, "swapped_date"),
}


def make_items(server: ToolServer, task: str = "warranty") -> list[dict[str, Any]]:
    """One item per device: read it, state the warranty's last day."""
    return [{
        "messages": [{"role": "system", "content": "You answer warranty questions through the tools."},
                     {"role": "user", "content": f"Until when is my device {serial} under warranty?"}],
        "tools": server.dataset_tools(), "serial": serial,
        "actions": [{"name": "get_device", "arguments": {"serial": serial}}],
        "reference_answer": f"Your device {serial} is under warranty until {written(warranty_end(serial))}.",
    } for serial in DEVICES]


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
