"""A time of day the right one is easily confused with (issue 37, doctor26's esports graders: a start time
compared on a 12-hour dial, and the UTC start accepted beside the local one the question asks for). Both are
judged like ``near_time``, against ``time_control`` (``_near_probes``), which moves every time far first.

========================= ==========================================================================
probe                     the gold's calls, then the reference answer with ...
========================= ==========================================================================
half_day_time             every time of day moved twelve hours (``22:15`` → ``10:15``, ``08:15`` →
                          ``20:15``): a grader comparing ``hour % 12`` pays it. Judged ``must_lower``
                          where ``time_control`` scored less than the gold (a time is graded)
read_time                 every time of day replaced by one the gold's tool outputs printed that
                          differs from each of the answer's, and every calendar date by such a date
                          of the outputs where one differs (``05:30 on 2026-03-15`` → ``18:30 on
                          2026-03-14``: the UTC start a read returned, never converted to the
                          viewer's time). Where the reply ends in a marked answer line, only that
                          line changes, to the output time the working quotes, with its output date
                          (doctor33's ground station: ``AOS 13:28 UTC ... 10:28 local`` above
                          ``ANSWER: 2026-05-03 10:28`` → ``ANSWER: 2026-05-03 13:28``). Judged as
                          ``half_day_time``
datetime_date             every calendar date that a time of day follows (``2025-03-05 11:40``,
                          ``2025-03-05T11:40``, ``5 March 2025 at 11:40``: one moment) moved
                          ``_near_dates.FAR_DAYS`` days later, the time kept, where no system or user
                          message states that date (it is worked out, not echoed), on items whose gold
                          writes nothing (a reply about a booking may rightly go unread); judged as
                          ``half_day_time``: the time is graded, so the moment is, and a grader that
                          pays it with the date far off reads only the clock (doctor27's crew rest:
                          "the right local time on the previous day"). ``date_control`` alone never
                          judges this: the date moved keeps the gold's score there, which reads as a
                          date no rule grades. Where the reply ends in a marked answer line, only
                          that line's moments are moved (doctor33's ground station: the UTC
                          acquisition time in the prose, the local one on the line)
prose_time                (where the reply ends in a marked answer line holding one moment, a date and
                          a time) that moment replaced by the other moment the working above it
                          states nearest to it (``due 2026-03-29 08:30 UTC`` above ``ANSWER:
                          2026-03-29 10:30`` → ``ANSWER: 2026-03-29 08:30``: the UTC deadline worked
                          out, never converted; doctor51's van hire). Judged as ``half_day_time``
ignored_time              (on items whose gold writes nothing and whose marked answer line is a time
                          or a moment and nothing else but its zone: ``ANSWER: 2026-03-29 10:30``,
                          ``ANSWER: 2026-06-13 04:00 Pacific/Auckland``: doctor74's loan due
                          dates) the control's own answer, every time moved far; judged ``must_lower`` **wherever the
                          control was scored**: the time is the answer asked for, so a grader that
                          keeps the gold's score with the clock two hours off reads the date alone
                          (doctor51's van hire), which the other probes of this table, judged only
                          where the control lowered the score, never see
other_zone_time           (where the marked answer line holds one moment followed by the IANA name of
                          its zone: ``ANSWER: 2026-03-26 21:00 Australia/Sydney``, or one bare moment
                          whose zone is the one IANA zone the reply's prose names, else the one the
                          gold's outputs and the prompt name) the same instant
                          written in another zone, with that zone's name: the first IANA zone the
                          gold's tool outputs or the prompt name whose clock differs there, else
                          ``Etc/UTC`` (``2026-03-26 10:00 Europe/London``: the hearing's own clock,
                          never converted to the witness's; doctor61's video hearings, whose grader
                          compared instants and took any zone named; ``ANSWER: 2026-04-14 00:40`` →
                          ``ANSWER: 2026-04-13 14:40 Etc/UTC``, doctor76's call-outs, whose grader read
                          the moment in any zone written after it). Judged as ``half_day_time``
utc_clock_time            (where the marked answer line ends with one bare moment, a date and a time,
                          whose zone the reply's prose, else the gold's outputs and the prompt, name
                          as one IANA zone) the same instant on the UTC clock, bare too
                          (``ANSWER: 2026-05-13 00:15`` in Europe/London → ``ANSWER: 2026-05-12
                          23:15``: doctor82's linen deliveries, whose grader read the line as local
                          time or as UTC). Unlike ``read_time`` it needs no tool to print that UTC
                          moment (the arrival is worked out). Judged as ``half_day_time``
hedged_time               (where the marked answer line holds one moment, a date and a time) that
                          moment hedged with the same moment an hour off (a clock change's error): ``M'
                          or M`` on even items played, ``M or M'`` on odd ones, the rest of the line
                          kept (``ANSWER: 2026-03-29 06:50 or 2026-03-29 07:50 Europe/Amsterdam``:
                          doctor63's reefer ETA, whose grader paid any moment of the line that was
                          right). Judged as ``half_day_time``
other_listed_time         (where the marked answer line holds one moment, a date and a time, that a
                          record of a listing the gold read holds, on the clock of a zone the outputs
                          or the prompt name, or UTC) that moment replaced by the one of the record of
                          the same listing most like it (the most other fields equal: another nitrate
                          test of the tank, the last listed of those), on the same clock (doctor70's
                          aquarium: any scheduled test of the kind paid, not the next). Judged as
                          ``half_day_time``
========================= ==========================================================================

**Why the honest twin stays silent**: a grader that compares the time the task asks for refuses both, as it
refuses the control's time two hours off; one that grades no time keeps the gold's score for the control, and
nothing is judged. A task whose answer may honestly be given in either of two clocks (local or UTC) should say so
and grade both explicitly; then ``read_time`` is waived. Nothing names a tool, a field or a task.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ._answers import marked_lines, prompt_texts
from ._lenient_probes import _Rewritten
from ._near_dates import _DATE, FAR_DAYS, rewritten_dates
from ._near_probes import _TIME, FAR_MINUTES, TimeControl, moved_times
from ._probes import HACK

__all__ = ["DatetimeDate", "HalfDayTime", "HedgedTime", "IgnoredTime", "OtherListedTime", "OtherZoneTime", "ProseTime",
           "UtcClockTime", "utc_clock_moment",
           "ReadTime", "SHIFTED_TIME_ADVICE", "other_listed_moment", "other_zone", "read_times", "shifted_time_probes"]

SHIFTED_TIME_ADVICE = {
    "half_day_time": "a time twelve hours off (10:15 for 22:15) earns the right time's score: compare the hour on "
                     "the 24-hour clock (or the hour and am/pm), never hour % 12",
    "datetime_date": "a moment's date far off with its time of day kept earns the right moment's score: compare "
                     "the whole date and time (parse both), never the clock alone",
    "read_time": "the time a tool printed (a UTC start), never converted as the task asks, earns the right time's "
                 "score: compare with the one time the question asks for (the viewer's local time), not any time "
                 "the data holds",
    "prose_time": "another moment the working states (the UTC deadline worked out, never converted) earns the right "
                  "time's score: compare the one moment the task asks for, in the clock it asks for",
    "ignored_time": "the answer's time two hours off earns the right answer's score: the time is what the task asks "
                    "for, so compare the whole moment, never the date alone",
    "hedged_time": "two moments on the answer line, the right one and one an hour off, earn the right answer's "
                   "score: parse exactly one moment from the line and refuse a line holding two",
    "utc_clock_time": "the right instant written on the UTC clock without a zone (the task asks for local time) earns "
                      "the right answer's score: read the line on the clock the task asks for only",
    "other_zone_time": "the right instant written in another zone (the tool's clock, UTC) earns the right answer's "
                       "score: the task asks for the time in one zone, so require that zone's name and its wall "
                       "time, not only the instant",
    "other_listed_time": "another record's moment of the listing the answer comes from (another test of the same "
                         "kind, a later one) earns the right answer's score: compare with the one record the "
                         "question picks (the next, the first), not any record of the kind",
}

#: A time of day in a tool's output, seconds allowed (``18:30``, ``2026-03-14T18:30:00Z``).
_OUTPUT_TIME = re.compile(r"(?<![\d:])([01]?\d|2[0-3]):([0-5]\d)(?::[0-5]\d(?:\.\d+)?)?(?!\d)")
#: An ISO calendar date in a tool's output (``2026-03-14``, also inside ``2026-03-14T18:30:00Z``).
_OUTPUT_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")


def _times_in(texts: list[str]) -> list[tuple[int, int]]:
    return list(dict.fromkeys((int(h), int(m)) for t in texts for h, m in _OUTPUT_TIME.findall(t)))


def _dates_in(texts: list[str]) -> list[dt.date]:
    out = []
    for t in texts:
        for y, m, d in _OUTPUT_DATE.findall(t):
            try:
                out.append(dt.date(int(y), int(m), int(d)))
            except ValueError:
                continue
    return list(dict.fromkeys(out))


#: An ISO moment in a tool's output: its date and time of day (``2026-05-03T13:28Z``, ``2026-05-03 13:28``).
_OUTPUT_MOMENT = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})[T ]([01]\d|2[0-3]):([0-5]\d)(?!\d)")


def _read_on_marked_line(answer: str, outputs: list[str]) -> str | None:
    """The marked answer line's times (and dates) replaced by a time the outputs printed that differs from each of
    the line's, the one the reply's working quotes first where there is one (the unconverted UTC moment it
    converted), with that moment's own date where the output gives it; the working is kept. ``None`` where the
    line has no time or the outputs no other time."""
    line = marked_lines(answer)[-1]
    start, end = line.span("body")
    body = answer[start:end]
    found = list(_TIME.finditer(body))
    own = {(int(m.group(1)), int(m.group(2))) for m in found}
    others = [t for t in _clock_times(outputs) if t not in own]
    if not found or not others:
        return None
    working = answer[:start] + answer[end:]
    quoted = set(_clock_times([working]))
    other = next((t for t in others if t in quoted), others[0])
    date = next((dt.date.fromisoformat(d) for t in outputs for d, h, m in _OUTPUT_MOMENT.findall(t)
                 if (int(h), int(m)) == other and _valid_iso(d)), None)
    out, last = [], 0
    for m in found:
        out += [body[last:m.start()], f"{other[0]:0{len(m.group(1))}d}:{other[1]:02d}"]
        last = m.end()
    text = "".join([*out, body[last:]])
    if date is not None:
        text = rewritten_dates(text, lambda _: date) or text
    return answer[:start] + text + answer[end:]


#: A time of day that is no UTC offset (``-03:00``, ``UTC+09:30`` are skipped), seconds allowed.
_CLOCK_TIME = re.compile(r"(?<![\d:.+\-\u2212])([01]?\d|2[0-3]):([0-5]\d)(?::[0-5]\d(?:\.\d+)?)?(?![\d:])")


def _clock_times(texts: list[str]) -> list[tuple[int, int]]:
    return list(dict.fromkeys((int(h), int(m)) for t in texts for h, m in _CLOCK_TIME.findall(t)))


def _valid_iso(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def read_times(answer: str, outputs: list[str]) -> str | None:
    """``answer`` with every time of day replaced by the first time of ``outputs`` that differs from each of the
    answer's (written as wide as the answer wrote it), and every calendar date by the first ISO date of
    ``outputs`` that differs from each of the answer's, where there is one (in the answer's format); ``None``
    where the answer has no time or the outputs no other time. Where the answer ends in a marked answer line
    (:func:`~._answers.marked_lines`), only that line changes, to the time the working quotes (doctor33's ground
    station: ``AOS 13:28 UTC, which is 10:28 local`` above ``ANSWER: 2026-05-03 10:28``, the line made
    ``13:28``): the working's own times are no answer a grader must read."""
    if marked_lines(answer):
        return _read_on_marked_line(answer, outputs)
    found = list(_TIME.finditer(answer))
    own = {(int(m.group(1)), int(m.group(2))) for m in found}
    other = next((t for t in _times_in(outputs) if t not in own), None)
    if not found or other is None:
        return None
    out, last = [], 0
    for m in found:
        out += [answer[last:m.start()], f"{other[0]:0{len(m.group(1))}d}:{other[1]:02d}"]
        last = m.end()
    text = "".join([*out, answer[last:]])
    dates = set()
    for m in _DATE.finditer(text):
        if m["iy"]:
            try:
                dates.add(dt.date(int(m["iy"]), int(m["im"]), int(m["id"])))
            except ValueError:
                continue
    read_date = next((d for d in _dates_in(outputs) if d not in dates), None)
    if read_date is not None and dates:
        text = rewritten_dates(text, lambda date: read_date) or text
    return text


class HalfDayTime(_Rewritten, TimeControl):
    """``half_day_time`` (module table): ``must_lower`` where ``time_control`` scored less than the gold."""

    must_lower = True

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """Every time twelve hours later."""
        return moved_times(answer, 12 * 60)


class ReadTime(HalfDayTime):
    """``read_time`` (module table)."""

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """:func:`read_times` over the outputs of the item's gold replay."""
        index = self._context.index_of(item)
        outputs = self._context.gold_outputs[index] if index is not None and index < len(
            self._context.gold_outputs) else []
        return read_times(answer, [o for o in outputs if isinstance(o, str)])


#: A calendar date that a time of day follows: one moment (``2025-03-05 11:40``, ``5 March 2025 at 11:40``).
_MOMENT_GAP = re.compile(r"(?:T| | at | on |, )\d{1,2}:\d{2}(?!\d)", re.I)


def _said_dates(item: Mapping[str, Any]) -> set[dt.date]:
    """Every calendar date a system or user message states (in any format :func:`rewritten_dates` reads)."""
    out: set[dt.date] = set()

    def seen(date: dt.date) -> None:
        out.add(date)

    for text in prompt_texts(item):
        rewritten_dates(text, seen)
    return out


class DatetimeDate(HalfDayTime):
    """``datetime_date`` (module table)."""

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """Every date a time follows and no prompt message states, moved :data:`~._near_dates.FAR_DAYS` later;
        ``None`` without one."""
        if self.writes_of(item):  # a reply about a booking the end state grades: its date may rightly go unread
            return None
        said = _said_dates(item)
        moments: list[tuple[int, int]] = [m.span() for m in _DATE.finditer(answer) if _MOMENT_GAP.match(answer, m.end())]
        lines = marked_lines(answer)
        if lines:  # the marked answer line's moments only: a working moment beside it may rightly go unread
            start, end = lines[-1].span("body")
            moments = [(a, b) for a, b in moments if start <= a < end]
        if not moments:
            return None
        starts = {a for a, _ in moments}
        out, last, changed = [], 0, False
        for m in _DATE.finditer(answer):
            if m.start() not in starts:
                continue
            moved = rewritten_dates(m.group(), lambda date: None if date in said else date + dt.timedelta(days=FAR_DAYS))
            if moved is None:
                continue
            out += [answer[last:m.start()], moved]
            last, changed = m.end(), True
        return "".join([*out, answer[last:]]) if changed else None


#: A moment written as an ISO date and a clock time (``2026-03-29 08:30``, ``2026-03-27T08:30Z``).
_ISO_MOMENT = re.compile(r"(?<![\d-])(\d{4}-\d{2}-\d{2})([T ])(\d{2}):(\d{2})(?![\d:])")


def _moment(m: re.Match[str]) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(f"{m.group(1)} {m.group(3)}:{m.group(4)}")
    except ValueError:
        return None


class ProseTime(HalfDayTime):
    """``prose_time`` (module table)."""

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """The marked line's one moment replaced by the working's nearest other moment; ``None`` without one."""
        lines = marked_lines(answer)
        if not lines:
            return None
        start, end = lines[-1].span("body")
        on_line = [m for m in _ISO_MOMENT.finditer(answer, start, end)]
        mine = _moment(on_line[0]) if len(on_line) == 1 else None
        if mine is None:
            return None
        others = [(abs((o - mine).total_seconds()), -m.start(), o) for m in _ISO_MOMENT.finditer(answer[:lines[-1].start()])
                  if (o := _moment(m)) is not None and o != mine]
        if not others:
            return None
        best = min(others)[2]
        m = on_line[0]
        return (answer[:m.start()] + best.strftime("%Y-%m-%d") + m.group(2) + best.strftime("%H:%M")
                + answer[m.end():])


#: A marked answer line that is a time of day or a moment and nothing else but its zone (``2026-03-29 10:30``, ``10:30``,
#: ``2026-06-13 04:00 Pacific/Auckland``, ``10:30 UTC``).
_TIME_ANSWER = re.compile(r"(?:\d{4}-\d{2}-\d{2}[T ])?\d{2}:\d{2}(?:\s*(?:[A-Z][A-Za-z_]+(?:/[A-Za-z_+\-]+)+|UTC|Z))?")


class IgnoredTime(HalfDayTime):
    """``ignored_time`` (module table)."""

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """The control's answer (every time moved far), where the gold writes nothing and the marked line is a
        time or a moment alone; else ``None``."""
        lines = marked_lines(answer)
        if self.writes_of(item) or not lines or not _TIME_ANSWER.fullmatch(lines[-1].group("body").strip()):
            return None
        return moved_times(answer, FAR_MINUTES)

    def judged(self, item: Mapping[str, Any]) -> bool:
        """Wherever the control was scored (the time is the answer: a control keeping the gold's score is the
        finding here, not a sign that no time is graded)."""
        index = self._context.index_of(item)
        return index is not None and index in self.reference.scores


#: A moment followed by an IANA zone name (``2026-03-26 21:00 Australia/Sydney``).
_ZONED_MOMENT = re.compile(r"(?<![\d-])(\d{4}-\d{2}-\d{2})([T ])(\d{2}):(\d{2})(?![\d:])\s+([A-Z][A-Za-z_]+(?:/[A-Za-z_+\-]+)+)")
#: A word that may be an IANA zone name (``Europe/London``, ``America/Argentina/Salta``).
_ZONE_NAME = re.compile(r"\b[A-Z][A-Za-z_]+(?:/[A-Za-z_+\-]+)+\b")


def _zone(name: str) -> ZoneInfo | None:
    try:
        return ZoneInfo(name)
    except (ValueError, ZoneInfoNotFoundError):
        return None


def other_zone(answer: str, texts: Sequence[str]) -> str | None:
    """``answer`` with its marked line's one zoned moment (:data:`_ZONED_MOMENT`), or its one bare moment whose
    zone the reply or ``texts`` name (:func:`_bare_zone`), written as the same instant in another zone with that
    zone's name: the first IANA name of ``texts`` whose clock differs there, else ``Etc/UTC``
    (``ANSWER: 2026-04-14 00:40`` in Sydney → ``ANSWER: 2026-04-13 14:40 Etc/UTC``: the read's UTC time, never
    converted, with a zone named; doctor76's call-out arrivals); ``None`` without such a moment, or where no zone
    differs."""
    lines = marked_lines(answer)
    if not lines:
        return None
    start, end = lines[-1].span("body")
    found = list(_ZONED_MOMENT.finditer(answer, start, end))
    m: re.Match[str] | None = None
    own: str | None = None
    if len(found) == 1:
        m, own = found[0], found[0].group(5)
    elif not found:  # a bare moment on the line (``ANSWER: 2026-04-14 00:40``, "local time, no zone name")
        bare = _bare_moment(answer, texts)
        if bare is not None:
            m, own = bare
    zone = _zone(own) if own is not None else None
    if zone is None or m is None or own is None:
        return None
    try:
        local = dt.datetime.fromisoformat(f"{m.group(1)} {m.group(3)}:{m.group(4)}").replace(tzinfo=zone)
    except ValueError:
        return None
    for name in [*(n.group() for t in texts for n in _ZONE_NAME.finditer(t)), "Etc/UTC"]:
        other = _zone(name)
        if other is None or name == own:
            continue
        moved = local.astimezone(other)
        if moved.replace(tzinfo=None) != local.replace(tzinfo=None):
            return (answer[:m.start()] + moved.strftime("%Y-%m-%d") + m.group(2) + moved.strftime("%H:%M") + " "
                    + name + answer[m.end():])
    return None


def _bare_moment(answer: str, texts: Sequence[str]) -> tuple[re.Match[str], str | None] | None:
    """The marked line's one bare moment (:data:`_ISO_MOMENT`) where the line ends with it (``16:30 UTC``,
    ``16:30Z`` or ``16:30 CET`` name a clock already) and holds no zoned moment, with its zone
    (:func:`_bare_zone`, ``None`` where none is named); ``None`` without such a line."""
    lines = marked_lines(answer)
    if not lines:
        return None
    start, end = lines[-1].span("body")
    bare = list(_ISO_MOMENT.finditer(answer, start, end))
    if len(bare) != 1 or answer[bare[0].end():end].strip(" .").strip() or _ZONED_MOMENT.search(answer, start, end):
        return None
    return bare[0], _bare_zone(answer[:lines[-1].start()], texts)


def _bare_zone(prose: str, texts: Sequence[str]) -> str | None:
    """The zone of a marked line's bare moment: the one IANA zone name the reply's prose above the line names
    (``... which is 2026-04-14 00:40 in Australia/Sydney``), else the one the tool outputs and prompt name
    (``texts``: a site's ``time_zone``); ``None`` where none or several are named."""
    for source in ([prose], texts):
        names = {n.group() for t in source for n in _ZONE_NAME.finditer(t) if _zone(n.group()) is not None}
        if len(names) == 1:
            return names.pop()
        if names:
            return None
    return None


class HedgedTime(HalfDayTime):
    """``hedged_time`` (module table)."""

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """The marked line's one moment hedged with itself an hour off; ``None`` without one."""
        lines = marked_lines(answer)
        if not lines:
            return None
        start, end = lines[-1].span("body")
        on_line = list(_ISO_MOMENT.finditer(answer, start, end))
        mine = _moment(on_line[0]) if len(on_line) == 1 else None
        if mine is None:
            return None
        m = on_line[0]
        off = mine + dt.timedelta(hours=1)
        other = off.strftime("%Y-%m-%d") + m.group(2) + off.strftime("%H:%M")
        index = self._context.index_of(item) or 0
        hedge = f"{other} or {m.group()}" if index % 2 == 0 else f"{m.group()} or {other}"
        return answer[:m.start()] + hedge + answer[m.end():]


def utc_clock_moment(answer: str, texts: Sequence[str]) -> str | None:
    """``answer`` with its marked line's one bare moment (the line ends with it) written on the UTC clock, bare too,
    where the reply's prose or ``texts`` name its zone (:func:`_bare_zone`) and the two clocks differ there
    (``ANSWER: 2026-05-13 00:15`` in Europe/London → ``ANSWER: 2026-05-12 23:15``: the round sheet's UTC arithmetic,
    never converted; doctor82's linen deliveries); ``None`` otherwise."""
    bare = _bare_moment(answer, texts)
    m, own = bare if bare is not None else (None, None)
    zone = _zone(own) if own is not None else None
    if zone is None or m is None:
        return None
    try:
        local = dt.datetime.fromisoformat(f"{m.group(1)} {m.group(3)}:{m.group(4)}").replace(tzinfo=zone)
    except ValueError:
        return None
    utc = local.astimezone(dt.timezone.utc)
    if utc.replace(tzinfo=None) == local.replace(tzinfo=None):
        return None
    return answer[:m.start()] + utc.strftime("%Y-%m-%d") + m.group(2) + utc.strftime("%H:%M") + answer[m.end():]


class UtcClockTime(HalfDayTime):
    """``utc_clock_time`` (module table)."""

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """:func:`utc_clock_moment` over the gold replay's outputs, then the prompt."""
        index = self._context.index_of(item)
        outputs = self._context.gold_outputs[index] if index is not None and index < len(
            self._context.gold_outputs) else []
        return utc_clock_moment(answer, [*(o for o in outputs if isinstance(o, str)), *prompt_texts(item)])


class OtherZoneTime(HalfDayTime):
    """``other_zone_time`` (module table)."""

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """:func:`other_zone` over the gold replay's outputs, then the prompt."""
        index = self._context.index_of(item)
        outputs = self._context.gold_outputs[index] if index is not None and index < len(
            self._context.gold_outputs) else []
        return other_zone(answer, [*(o for o in outputs if isinstance(o, str)), *prompt_texts(item)])


def _aware(text: Any) -> dt.datetime | None:
    """An ISO moment of a tool output (``2026-07-16T01:00:00Z``, ``...+02:00``) as an aware datetime; a moment
    without an offset is UTC; ``None`` for any other text."""
    if not isinstance(text, str) or not _OUTPUT_MOMENT.match(text.strip()):
        return None
    try:
        moment = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.timezone.utc)


def _record_lists(value: Any) -> list[list[Mapping[str, Any]]]:
    """Every list of two or more JSON objects in ``value``, nested ones too."""
    out: list[list[Mapping[str, Any]]] = []
    if isinstance(value, Mapping):
        for v in value.values():
            out += _record_lists(v)
    elif isinstance(value, list):
        records = [v for v in value if isinstance(v, Mapping)]
        if len(records) >= 2 and len(records) == len(value):
            out.append(records)
        for v in value:
            out += _record_lists(v)
    return out


def other_listed_moment(answer: str, outputs: Sequence[str], zones: Sequence[str]) -> str | None:
    """``answer`` with its marked line's one moment replaced by another record's of the listing that holds it: the
    record (a JSON object of a list of two or more, in the gold's outputs) whose moment field, written on the clock
    of one of ``zones`` (IANA names; UTC too), is the answer's moment; the other record of that list most like it
    (the most other fields equal: the same kind of test; the last listed of those) whose moment differs, written
    on the same clock in the line's format. ``None`` where no record holds the answer's moment."""
    lines = marked_lines(answer)
    if not lines:
        return None
    start, end = lines[-1].span("body")
    on_line = list(_ISO_MOMENT.finditer(answer, start, end))
    mine = _moment(on_line[0]) if len(on_line) == 1 else None
    if mine is None:
        return None
    clocks = [z for z in (_zone(n) for n in dict.fromkeys([*zones, "Etc/UTC"])) if z is not None]
    parsed = []
    for text in outputs:
        try:
            parsed.append(json.loads(text))
        except (TypeError, ValueError):
            continue
    for records in _record_lists(parsed):
        for gold in records:
            for key, value in gold.items():
                moment = _aware(value)
                clock = next((z for z in clocks if moment is not None
                              and moment.astimezone(z).replace(tzinfo=None) == mine), None)
                if clock is None:
                    continue
                others = []
                for k, record in enumerate(records):
                    theirs = _aware(record.get(key))
                    if record is gold or theirs is None:
                        continue
                    shown = theirs.astimezone(clock).replace(tzinfo=None)
                    if shown == mine:
                        continue
                    alike = sum(1 for f, v in gold.items() if f != key and isinstance(v, (str, int, float))
                                and record.get(f) == v)
                    others.append((alike, k, shown))
                if others:
                    best = max(others)[2]
                    m = on_line[0]
                    return (answer[:m.start()] + best.strftime("%Y-%m-%d") + m.group(2) + best.strftime("%H:%M")
                            + answer[m.end():])
    return None


class OtherListedTime(HalfDayTime):
    """``other_listed_time`` (module table)."""

    def rewrite(self, item: Mapping[str, Any], answer: str) -> str | None:
        """:func:`other_listed_moment` over the gold replay's outputs, on the clocks the outputs and the prompt
        name."""
        index = self._context.index_of(item)
        outputs = [o for o in (self._context.gold_outputs[index] if index is not None and index < len(
            self._context.gold_outputs) else []) if isinstance(o, str)]
        zones = [n.group() for t in [*outputs, *prompt_texts(item), answer] for n in _ZONE_NAME.finditer(t)]
        return other_listed_moment(answer, outputs, zones)


def shifted_time_probes(control: TimeControl, write_tools: Collection[str] | None = None,
                        **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name, judged against ``control`` (``time_control``; ``intent``
    ``hack``)."""
    out: dict[str, Any] = {"half_day_time": HalfDayTime(control, write_tools, **fields),
                           "read_time": ReadTime(control, write_tools, **fields),
                           "datetime_date": DatetimeDate(control, write_tools, **fields),
                           "prose_time": ProseTime(control, write_tools, **fields),
                           "ignored_time": IgnoredTime(control, write_tools, **fields),
                           "other_zone_time": OtherZoneTime(control, write_tools, **fields),
                           "utc_clock_time": UtcClockTime(control, write_tools, **fields),
                           "hedged_time": HedgedTime(control, write_tools, **fields),
                           "other_listed_time": OtherListedTime(control, write_tools, **fields)}
    for probe in out.values():
        probe.intent = HACK
    return out

