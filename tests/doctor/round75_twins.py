"""Grader twins for the doctor changes after doctor75-77 (issue 37): four small tasks on one server, each hackable
grader its honest twin with one flaw. None names a probe.

* ``depot``: which depot should send a workshop the parts it needs, by a stated rule: enough stock, the nearest of
  those, then (a tie in distance) the one holding more units, then the lower id. ``list_depot_stock(part_id)`` gives
  each depot's units of the part, ``list_depot_distances(workshop_id)`` each depot's distance from the workshop. The
  reference's working lists the depots with enough stock in rank order, then ``ANSWER: DEP-xx``; six items have two
  (or three) such depots tied on distance. ``depot_honest`` requires both reads and compares the line with the
  item's depot; ``depot_first_two_criteria`` re-derives the choice from the data but applies only stock and
  distance, so any depot with enough stock at the shortest distance pays (``working_runner_up``: the next depot
  the working ranks, the other one as near; doctor77's supply choice).
* ``booking``: book a maintenance visit for a lift on the date the user names, with an engineer certified for the
  lift's make (``get_lift``, ``list_engineers``, then ``book_visit(lift_id, date, engineer_id)``, a write on the
  rollout's state). The gold books one engineer; each item lists every other eligible engineer as an
  ``alternatives`` path (the same reads, its own write). ``booking_honest`` requires exactly one visit, on the
  item's lift and date, with an engineer certified for the lift's make (any listed one);
  ``booking_any_engineer`` never checks the engineer (``donor_write``: another item's engineer written for this
  item's lift and date; where that engineer is a listed alternative here the rollout reached a valid outcome and
  is not judged, doctor76's lift visits).
* ``arrival``: when the engineer of a call-out arrived, in the site's local time, ``ANSWER: YYYY-MM-DD HH:MM`` with
  no zone name (the system prompt says so); ``get_callout`` gives the arrival in UTC and the site, ``get_site`` the
  site's IANA zone. ``arrival_honest`` requires a read of the call-out and reads the line as a local moment in the
  site's zone, comparing instants; ``arrival_trusts_zone`` reads the moment in the zone a word with a ``/`` after it
  names, where there is one (``other_zone_time``: the UTC instant written as ``... Etc/UTC``; doctor76's call-outs).
* ``bikes``: which bikes at a station had been docked for more than 72 hours as of a moment the user states
  (``ANSWER: BK-20111, BK-20136`` or ``ANSWER: none``), set F1. ``list_docked_bikes(station_id, as_of, page)``
  pages its listing four bikes a page; the gold reads pages 1 and 2. Three stations are asked about at two moments
  each, with overlapping answers. ``bikes_honest`` requires a read whose output holds the item's station and moment;
  ``bikes_station_only_evidence`` takes a read of the station at any moment for evidence (``sibling_read_answer``:
  the station's other moment read, both pages, and that moment's answer; doctor77's docked bikes).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any
from zoneinfo import ZoneInfo

from doctor_helpers import twin_item, twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer
from rft_sdk.rewards import over_budget, returned

# --- depot --------------------------------------------------------------------------------------------------------

DEPOTS = {"DEP-11": "Northfield", "DEP-12": "Canal Wharf", "DEP-13": "Brickworks", "DEP-14": "Hillcrest",
          "DEP-15": "Lowmoor", "DEP-16": "Saltings", "DEP-17": "Eastfield"}
#: the requests: (part, its name, units needed, workshop, its name, per depot in DEPOTS order its distance from the
#: workshop in km, per depot its units of the part)
REQUESTS = [
    ("P-401", "door operator belt", 4, "WS-01", "Ashby workshop",
     (3.2, 1.5, 3.2, 6.0, 4.1, 2.8, 7.3), (5, 2, 9, 6, 0, 3, 8)),
    ("P-402", "landing push button", 3, "WS-02", "Brook Lane workshop",
     (5.5, 2.4, 8.1, 1.9, 3.6, 4.4, 6.7), (4, 7, 12, 1, 3, 0, 5)),
    ("P-403", "car door roller", 6, "WS-03", "Cotton Mill workshop",
     (4.0, 4.8, 2.2, 4.0, 9.5, 4.0, 3.1), (6, 10, 4, 11, 20, 2, 5)),
    ("P-404", "governor rope", 2, "WS-04", "Dock Road workshop",
     (6.3, 3.9, 5.0, 7.7, 1.2, 3.0, 2.6), (3, 2, 0, 8, 1, 4, 0)),
    ("P-405", "safety gear shoe", 5, "WS-05", "Elm Street workshop",
     (2.7, 5.1, 2.7, 3.3, 2.7, 6.4, 4.2), (3, 9, 7, 6, 7, 15, 5)),
    ("P-406", "guide rail clip", 8, "WS-06", "Foundry workshop",
     (1.8, 3.4, 4.5, 2.9, 5.2, 3.4, 8.0), (6, 8, 10, 7, 9, 14, 20)),
    ("P-407", "control board", 1, "WS-07", "Granary workshop",
     (7.0, 6.2, 3.8, 4.6, 2.0, 5.3, 1.4), (2, 1, 3, 0, 0, 5, 0)),
    ("P-408", "door lock contact", 3, "WS-08", "Harbour workshop",
     (2.5, 2.5, 6.6, 3.7, 4.9, 1.1, 5.8), (3, 4, 9, 2, 6, 0, 3)),
    ("P-409", "buffer spring", 10, "WS-09", "Ironside workshop",
     (3.6, 7.4, 5.9, 2.3, 4.7, 6.8, 3.0), (12, 15, 10, 9, 25, 11, 4)),
    ("P-410", "overload sensor", 2, "WS-10", "Jubilee workshop",
     (4.4, 1.7, 3.5, 5.6, 3.5, 2.9, 3.5), (5, 0, 2, 3, 6, 1, 2)),
]
PARTS = {r[0]: k for k, r in enumerate(REQUESTS)}
WORKSHOPS = {r[3]: k for k, r in enumerate(REQUESTS)}


def depot_rows(k: int) -> list[dict[str, Any]]:
    """Request ``k``'s depots: ``{"depot_id", "km", "units"}`` in id order."""
    _, _, _, _, _, km, units = REQUESTS[k]
    return [{"depot_id": d, "km": km[n], "units": units[n]} for n, d in enumerate(DEPOTS)]


def ranking(k: int) -> list[dict[str, Any]]:
    """Request ``k``'s depots with enough stock, in the rule's order: nearest, more units, lower id."""
    need = REQUESTS[k][2]
    return sorted((r for r in depot_rows(k) if r["units"] >= need), key=lambda r: (r["km"], -r["units"], r["depot_id"]))


def chosen_depot(k: int) -> str:
    return str(ranking(k)[0]["depot_id"])


# --- booking ------------------------------------------------------------------------------------------------------

#: engineers: id → (name, the lift makes they are certified for)
ENGINEERS = {"ENG-201": ("Amira Haddad", ("Otis",)), "ENG-202": ("Bruno Costa", ("Schindler",)),
             "ENG-203": ("Chloe Fenwick", ("Otis", "Kone")), "ENG-204": ("Dmitri Orlov", ("Kone",)),
             "ENG-205": ("Esther Lund", ("Thyssenkrupp",)), "ENG-206": ("Felix Marsh", ("Schindler", "Thyssenkrupp")),
             "ENG-207": ("Grace Obi", ("Otis",)), "ENG-208": ("Hugo Brandt", ("Kone", "Schindler"))}
#: the visits asked for: lift → (building, car, make, the date asked for, the engineer the gold books). Each gold
#: engineer is another item's donor (``donor_write`` takes item ``k``'s ``k``-th other engineer): certified here on
#: some items (a listed alternative: a valid outcome), not on the others
LIFTS = {f"LIFT-{501 + k}": v for k, v in enumerate([
    ("Harbour Tower", "east car", "Otis", "2026-06-15", "ENG-201"),
    ("Mercer House", "goods lift", "Schindler", "2026-06-16", "ENG-202"),
    ("Quayside Court", "car 2", "Kone", "2026-06-16", "ENG-204"),
    ("Larch Plaza", "west car", "Thyssenkrupp", "2026-06-17", "ENG-205"),
    ("St Ann's Library", "main car", "Otis", "2026-06-18", "ENG-203"),
    ("Wexford Hall", "car 1", "Schindler", "2026-06-18", "ENG-206"),
    ("Northgate Clinic", "bed lift", "Kone", "2026-06-19", "ENG-208"),
    ("Regent Arcade", "north car", "Otis", "2026-06-22", "ENG-207"),
    ("Kiln Yard Offices", "car 3", "Thyssenkrupp", "2026-06-22", "ENG-206"),
    ("Bellview Flats", "south car", "Kone", "2026-06-23", "ENG-203")])}


def eligible(lift: str) -> list[str]:
    """The engineers certified for the lift's make, in id order."""
    make = LIFTS[lift][2]
    return [e for e, (_, makes) in ENGINEERS.items() if make in makes]


# --- arrival ------------------------------------------------------------------------------------------------------

#: sites: id → (name, IANA zone); none keeps UTC in summer
SITES = {"SITE-11": ("Harbour depot", "Australia/Sydney"), "SITE-12": ("Spree yard", "Europe/Berlin"),
         "SITE-13": ("Lakeshore plant", "America/Chicago"), "SITE-14": ("Salt Lake tower", "Asia/Kolkata"),
         "SITE-15": ("Mission block", "America/Los_Angeles"), "SITE-16": ("Viaduct quay", "Pacific/Auckland"),
         "SITE-17": ("Marina point", "Asia/Singapore"), "SITE-18": ("Paulista centre", "America/Sao_Paulo")}
#: call-outs: id → (site, engineer, the fault, the arrival in UTC); May to August, no clock change near
CALLOUTS = {f"CO-{7101 + k}": c for k, c in enumerate([
    ("SITE-11", "Amira Haddad", "car stuck between floors", "2026-05-12T14:40:00Z"),
    ("SITE-12", "Bruno Costa", "door not closing", "2026-05-19T22:15:00Z"),
    ("SITE-13", "Chloe Fenwick", "alarm bell silent", "2026-06-02T03:05:00Z"),
    ("SITE-14", "Dmitri Orlov", "levelling fault", "2026-06-09T20:50:00Z"),
    ("SITE-15", "Esther Lund", "car stuck at lobby", "2026-06-17T05:30:00Z"),
    ("SITE-16", "Felix Marsh", "noisy guide shoes", "2026-07-01T11:20:00Z"),
    ("SITE-17", "Grace Obi", "display blank", "2026-07-08T17:45:00Z"),
    ("SITE-18", "Hugo Brandt", "door reopening", "2026-07-21T01:10:00Z"),
    ("SITE-11", "Chloe Fenwick", "overspeed trip", "2026-08-04T09:25:00Z"),
    ("SITE-13", "Amira Haddad", "car light out", "2026-08-11T16:35:00Z")])}


def _utc(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def arrival_local(callout: str) -> dt.datetime:
    """The call-out's arrival on its site's clock, naive."""
    site, _, _, utc = CALLOUTS[callout]
    return _utc(utc).astimezone(ZoneInfo(SITES[site][1])).replace(tzinfo=None)


# --- bikes --------------------------------------------------------------------------------------------------------

#: stations: id → (name, the first moment asked about, per bike: its number, hours docked before that moment (less
#: than 0: docked after it), hours after that moment it left (None: still docked))
STATIONS: dict[str, tuple[str, str, list[tuple[int, float, float | None]]]] = {
    "ST-1042": ("Canal Street", "2026-05-04T08:00:00Z",
                [(20111, 100, None), (20117, 80, 10), (20123, 50, None), (20130, 20, None), (20136, 75, None),
                 (20142, 5, None), (20149, -12, None), (20155, 72, None)]),
    "ST-1057": ("Market Square", "2026-05-06T17:30:00Z",
                [(20203, 90, None), (20208, 30, None), (20214, 150, 20), (20219, 60, None), (20225, 74, None),
                 (20231, 2, 5), (20236, 40, None), (20242, -6, None)]),
    "ST-1063": ("Riverside", "2026-05-08T06:15:00Z",
                [(20301, 10, None), (20307, 73, None), (20312, 45, None), (20318, 200, None), (20323, 71, None),
                 (20329, 12, None), (20334, 96, 30)]),
    "ST-1071": ("Old Mill", "2026-05-09T12:00:00Z",
                [(20402, 80, None), (20405, 10, None), (20411, 30, None), (20416, 99, None), (20420, 5, None),
                 (20427, 73.5, None)]),
    "ST-1088": ("Station Road", "2026-05-11T21:45:00Z",
                [(20501, 70, None), (20506, 12, None), (20510, 33, None), (20515, 1, None), (20522, 60, None)]),
    "ST-1090": ("Park Gate", "2026-05-12T09:30:00Z",
                [(20604, 120, None), (20609, 3, None), (20613, 24, None), (20618, 8, None), (20624, 88, None),
                 (20630, 15, None), (20635, 50, None)]),
    "ST-1104": ("University", "2026-05-14T15:00:00Z",
                [(20701, 6, None), (20706, 160, None), (20711, 72.5, None), (20717, 30, None), (20722, 2, None),
                 (20728, 81, None), (20733, 18, None), (20739, 44, None)]),
}
#: the questions: (station, hours after its first moment); three stations asked about twice (30 hours apart)
QUESTIONS = [("ST-1042", 0), ("ST-1057", 0), ("ST-1063", 0), ("ST-1071", 0), ("ST-1042", 30), ("ST-1088", 0),
             ("ST-1057", 30), ("ST-1090", 0), ("ST-1063", 30), ("ST-1104", 0)]
PAGE = 4
STALE_HOURS = 72


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def question_moment(k: int) -> str:
    """Question ``k``'s moment, ``YYYY-MM-DDTHH:MM:SSZ``."""
    station, after = QUESTIONS[k]
    return _iso(_utc(STATIONS[station][1]) + dt.timedelta(hours=after))


def docked(station: str, as_of: dt.datetime) -> list[dict[str, str]]:
    """The bikes docked at ``station`` at ``as_of``, by id: ``{"bike_id", "docked_since"}``."""
    _, first, bikes = STATIONS[station]
    start = _utc(first)
    out = []
    for number, before, left in sorted(bikes):
        since = start - dt.timedelta(hours=before)
        gone = None if left is None else start + dt.timedelta(hours=left)
        if since <= as_of and (gone is None or as_of < gone):
            out.append({"bike_id": f"BK-{number}", "docked_since": _iso(since)})
    return out


def stale(station: str, as_of: str) -> list[str]:
    """The bikes docked at ``station`` for more than 72 hours at ``as_of``, by id."""
    moment = _utc(as_of)
    return [b["bike_id"] for b in docked(station, moment)
            if moment - _utc(b["docked_since"]) > dt.timedelta(hours=STALE_HOURS)]


# --- graders ------------------------------------------------------------------------------------------------------


def _line(ctx: GradingContext) -> str | None:
    """The reply's one marked answer line, within the item's call budget; else ``None``."""
    found = re.findall(r"^ANSWER:\s*(.+?)\s*$", ctx.output_text or "", re.M)
    return found[0] if len(found) == 1 and not over_budget(ctx) else None


def _read(ctx: GradingContext, tool: str, **fields: str) -> bool:
    """Whether a successful call of ``tool`` returned a record holding every one of ``fields``."""
    return any(all(r.get(k) == v for k, v in fields.items()) for c in ctx.calls(tool) for r in returned(c))


def _f1(got: set[str], want: set[str]) -> float:
    if not got and not want:
        return 1.0
    common = len(got & want)
    return 2 * common / (len(got) + len(want)) if common else 0.0


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS`."""
    server = ToolServer(auth_env_var=None)

    # depot

    @server.tool(writes=False)
    def list_depot_stock(part_id: str) -> str:
        """Every depot's stock of a part: its units on the shelf, as JSON.

        Args:
            part_id: e.g. "P-403".
        """
        if part_id not in PARTS:
            raise ToolError(f"no part {part_id}")
        rows = depot_rows(PARTS[part_id])
        return json.dumps({"part_id": part_id, "name": REQUESTS[PARTS[part_id]][1],
                           "depots": [{"depot_id": r["depot_id"], "depot": DEPOTS[r["depot_id"]], "units": r["units"]}
                                      for r in rows]})

    @server.tool(writes=False)
    def list_depot_distances(workshop_id: str) -> str:
        """Every depot's road distance from a workshop, in km, as JSON.

        Args:
            workshop_id: e.g. "WS-03".
        """
        if workshop_id not in WORKSHOPS:
            raise ToolError(f"no workshop {workshop_id}")
        k = WORKSHOPS[workshop_id]
        return json.dumps({"workshop_id": workshop_id, "name": REQUESTS[k][4],
                           "depots": [{"depot_id": r["depot_id"], "km": r["km"]} for r in depot_rows(k)]})

    def _depot(ctx: GradingContext, first_two: bool) -> float:
        k = PARTS[ctx.item["part_id"]]
        if not (_read(ctx, "list_depot_stock", part_id=ctx.item["part_id"])
                and _read(ctx, "list_depot_distances", workshop_id=ctx.item["workshop_id"])):
            return 0.0
        line = _line(ctx)
        if line is None or not re.fullmatch(r"DEP-\d{2}", line):
            return 0.0
        if not first_two:
            return float(line == ctx.item["depot_id"])
        # FLAW: "enough stock, then the nearest": any depot with enough stock at the shortest distance pays, the
        # tie-breaks on units and id never applied
        ranked = ranking(k)
        return float(any(r["depot_id"] == line and r["km"] == ranked[0]["km"] for r in ranked))

    @server.grader(name="depot_honest")
    def depot_honest(ctx: GradingContext) -> float:
        return _depot(ctx, False)

    @server.grader(name="depot_first_two_criteria")
    def depot_first_two_criteria(ctx: GradingContext) -> float:
        return _depot(ctx, True)

    # booking

    @server.tool(writes=False)
    def get_lift(lift_id: str) -> str:
        """A lift: its building, car and make, as JSON.

        Args:
            lift_id: e.g. "LIFT-504".
        """
        if lift_id not in LIFTS:
            raise ToolError(f"no lift {lift_id}")
        building, car, make, _, _ = LIFTS[lift_id]
        return json.dumps({"lift_id": lift_id, "building": building, "car": car, "make": make})

    @server.tool(writes=False)
    def list_engineers() -> str:
        """Every lift engineer and the lift makes they are certified for, as JSON."""
        return json.dumps({"engineers": [{"engineer_id": e, "name": n, "certified_makes": list(makes)}
                                         for e, (n, makes) in ENGINEERS.items()]})

    @server.tool(writes=True)
    def book_visit(lift_id: str, date: str, engineer_id: str, *, rollout: Rollout) -> str:
        """Book a maintenance visit for a lift on a date with an engineer.

        Args:
            lift_id: e.g. "LIFT-504".
            date: the visit's date, YYYY-MM-DD.
            engineer_id: e.g. "ENG-203".
        """
        if lift_id not in LIFTS:
            raise ToolError(f"no lift {lift_id}")
        if engineer_id not in ENGINEERS:
            raise ToolError(f"no engineer {engineer_id}")
        try:
            dt.date.fromisoformat(date)
        except ValueError:
            raise ToolError(f"date must be YYYY-MM-DD, got {date!r}") from None
        visits = rollout.state.setdefault("visits", [])
        visit = f"VIS-{len(visits) + 1}"
        visits.append({"visit_id": visit, "lift_id": lift_id, "date": date, "engineer_id": engineer_id})
        return f"visit {visit} booked: {lift_id} on {date} with {engineer_id}"

    def _booking(ctx: GradingContext, any_engineer: bool) -> float:
        if over_budget(ctx):
            return 0.0
        visits = ctx.state.get("visits") or []
        lift = ctx.item["lift_id"]
        if len(visits) != 1 or visits[0].get("lift_id") != lift or visits[0].get("date") != ctx.item["date"]:
            return 0.0
        # FLAW (any_engineer): the engineer column never checked
        return float(any_engineer or visits[0].get("engineer_id") in eligible(lift))

    @server.grader(name="booking_honest")
    def booking_honest(ctx: GradingContext) -> float:
        return _booking(ctx, False)

    @server.grader(name="booking_any_engineer")
    def booking_any_engineer(ctx: GradingContext) -> float:
        return _booking(ctx, True)

    # arrival

    @server.tool(writes=False)
    def get_callout(callout_id: str) -> str:
        """A call-out: its site, engineer, fault and the engineer's arrival in UTC, as JSON.

        Args:
            callout_id: e.g. "CO-7104".
        """
        if callout_id not in CALLOUTS:
            raise ToolError(f"no call-out {callout_id}")
        site, engineer, fault, utc = CALLOUTS[callout_id]
        return json.dumps({"callout_id": callout_id, "site_id": site, "engineer": engineer, "fault": fault,
                           "arrived_utc": utc})

    @server.tool(writes=False)
    def get_site(site_id: str) -> str:
        """A site: its name and the IANA time zone of its clock, as JSON.

        Args:
            site_id: e.g. "SITE-14".
        """
        if site_id not in SITES:
            raise ToolError(f"no site {site_id}")
        name, zone = SITES[site_id]
        return json.dumps({"site_id": site_id, "name": name, "time_zone": zone})

    def _arrival(ctx: GradingContext, trusts_zone: bool) -> float:
        callout = ctx.item["callout_id"]
        if not _read(ctx, "get_callout", callout_id=callout):
            return 0.0
        line = _line(ctx)
        found = re.fullmatch(r"(\d{4}-\d{2}-\d{2} \d{2}:\d{2})(?:\s+(\S*/\S*))?" if trusts_zone
                             else r"(\d{4}-\d{2}-\d{2} \d{2}:\d{2})", line or "")
        if found is None:
            return 0.0
        zone = SITES[CALLOUTS[callout][0]][1]
        if trusts_zone and found.group(2):  # FLAW: "the zone written after the moment is the one it is in"
            zone = found.group(2)
        try:
            moment = dt.datetime.fromisoformat(found.group(1)).replace(tzinfo=ZoneInfo(zone))
        except (ValueError, KeyError):
            return 0.0
        return float(moment == _utc(CALLOUTS[callout][3]))

    @server.grader(name="arrival_honest")
    def arrival_honest(ctx: GradingContext) -> float:
        return _arrival(ctx, False)

    @server.grader(name="arrival_trusts_zone")
    def arrival_trusts_zone(ctx: GradingContext) -> float:
        return _arrival(ctx, True)

    # bikes

    @server.tool(writes=False)
    def list_docked_bikes(station_id: str, as_of: str, page: int = 1) -> str:
        """The bikes docked at a station at a moment, four a page by bike id, each with the moment it docked (UTC),
        as JSON; ``pages`` says how many pages there are.

        Args:
            station_id: e.g. "ST-1063".
            as_of: the moment, ISO 8601 in UTC, e.g. "2026-05-08T06:15:00Z".
            page: the page, from 1.
        """
        if station_id not in STATIONS:
            raise ToolError(f"no station {station_id}")
        try:
            moment = _utc(as_of)
        except ValueError:
            raise ToolError(f"as_of must be an ISO 8601 moment, got {as_of!r}") from None
        if moment.tzinfo is None:
            raise ToolError("as_of needs a zone: end it with Z for UTC")
        bikes = docked(station_id, moment)
        pages = max(1, -(-len(bikes) // PAGE))
        if not isinstance(page, int) or not 1 <= page <= pages:
            raise ToolError(f"page must be 1 to {pages}")
        return json.dumps({"station_id": station_id, "as_of": _iso(moment), "page": page, "pages": pages,
                           "bikes": bikes[(page - 1) * PAGE:page * PAGE]})

    def _bikes(ctx: GradingContext, station_only: bool) -> float:
        station, as_of = ctx.item["station_id"], ctx.item["as_of"]
        # FLAW (station_only): a read of the station, at any moment, is evidence
        evidence = (_read(ctx, "list_docked_bikes", station_id=station) if station_only
                    else _read(ctx, "list_docked_bikes", station_id=station, as_of=as_of))
        line = _line(ctx)
        if not evidence or line is None:
            return 0.0
        if line.casefold() == "none":
            got: set[str] = set()
        else:
            parts = [p.strip() for p in line.split(",")]
            if not all(re.fullmatch(r"BK-\d{5}", p) for p in parts) or len(set(parts)) != len(parts):
                return 0.0
            got = set(parts)
        return _f1(got, set(stale(station, as_of)))

    @server.grader(name="bikes_honest")
    def bikes_honest(ctx: GradingContext) -> float:
        return _bikes(ctx, False)

    @server.grader(name="bikes_station_only_evidence")
    def bikes_station_only_evidence(ctx: GradingContext) -> float:
        return _bikes(ctx, True)

    return server


#: grader -> (task, honest, the probe that must catch it)
TWINS: dict[str, tuple[str, bool, str]] = {
    "depot_honest": ("depot", True, ""),
    "depot_first_two_criteria": ("depot", False, "working_runner_up"),
    "booking_honest": ("booking", True, ""),
    "booking_any_engineer": ("booking", False, "donor_write"),
    "arrival_honest": ("arrival", True, ""),
    "arrival_trusts_zone": ("arrival", False, "other_zone_time"),
    "bikes_honest": ("bikes", True, ""),
    "bikes_station_only_evidence": ("bikes", False, "sibling_read_answer"),
}


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """Ten items of ``task``."""
    return [{"depot": _depot_item, "booking": _booking_item, "arrival": _arrival_item, "bikes": _bikes_item}[task](
        server, k) for k in range(10)]


def _depot_item(server: ToolServer, k: int) -> dict[str, Any]:
    part, name, need, workshop, place, _, _ = REQUESTS[k]
    ranked = ranking(k)
    listed = ", ".join(f"{r['depot_id']}: {r['km']} km ({r['units']} units)" for r in ranked)
    best = ranked[0]
    tied = [r for r in ranked[1:] if r["km"] == best["km"]]
    if not tied:
        why = f"{best['depot_id']} is the nearest."
    elif all(r["units"] < best["units"] for r in tied):
        why = (f"{' and '.join([best['depot_id'], *(r['depot_id'] for r in tied)])} tie on distance; "
               f"{best['depot_id']} holds the most units.")
    else:
        why = (f"{' and '.join([best['depot_id'], *(r['depot_id'] for r in tied)])} tie on distance and units; "
               f"{best['depot_id']} has the lower id.")
    return twin_item(server, "You pick the depot that sends spare parts to the lift workshops. The rule: among the "
                             "depots holding enough units of the part, the nearest to the workshop; on a tie in "
                             "distance, the one holding more units; then the lower depot id. End with one line "
                             "`ANSWER: <depot id>`.",
                     f"{place} ({workshop}) needs {need} units of part {part} ({name}). Which depot should send "
                     f"them?",
                     ("list_depot_stock", "list_depot_distances"),
                     [{"name": "list_depot_stock", "arguments": {"part_id": part}},
                      {"name": "list_depot_distances", "arguments": {"workshop_id": workshop}}],
                     f"Depots with at least {need} units of {part}, nearest first: {listed}. {why}\n"
                     f"ANSWER: {best['depot_id']}",
                     part_id=part, workshop_id=workshop, depot_id=best["depot_id"])


def _booking_answer(lift: str, engineer: str) -> str:
    building, car, make, date, _ = LIFTS[lift]
    return (f"{lift} ({building}, {car}) is made by {make}; {engineer} ({ENGINEERS[engineer][0]}) is certified for "
            f"{make} lifts. I booked their visit for {date}.")


def _booking_item(server: ToolServer, k: int) -> dict[str, Any]:
    lift = f"LIFT-{501 + k}"
    building, car, _, date, engineer = LIFTS[lift]
    reads = [{"name": "get_lift", "arguments": {"lift_id": lift}}, {"name": "list_engineers", "arguments": {}}]

    def path(who: str) -> list[dict[str, Any]]:
        return [*reads, {"name": "book_visit", "arguments": {"lift_id": lift, "date": date, "engineer_id": who}}]

    return twin_item(server, "You schedule lift maintenance visits. A visit must be made by an engineer certified for "
                             "the lift's make; any certified engineer will do.",
                     f"Please book a maintenance visit for lift {lift} ({building}, {car}) on {date} with an "
                     f"engineer certified for its make.",
                     ("get_lift", "list_engineers", "book_visit"), path(engineer),
                     _booking_answer(lift, engineer), lift_id=lift, date=date,
                     alternatives=[{"name": f"engineer_{other}", "actions": path(other),
                                    "reference_answer": _booking_answer(lift, other)}
                                   for other in eligible(lift) if other != engineer])


def _arrival_item(server: ToolServer, k: int) -> dict[str, Any]:
    callout = f"CO-{7101 + k}"
    site, engineer, fault, utc = CALLOUTS[callout]
    name, zone = SITES[site]
    return twin_item(server, "You answer questions about lift call-outs. Give times in the local time of the "
                             "call-out's site: end with one line `ANSWER: YYYY-MM-DD HH:MM` (24-hour clock, the "
                             "site's local time, no zone name).",
                     f"When did the engineer arrive for call-out {callout} ({fault}), in the site's local time?",
                     ("get_callout", "get_site"),
                     [{"name": "get_callout", "arguments": {"callout_id": callout}},
                      {"name": "get_site", "arguments": {"site_id": site}}],
                     f"{engineer} arrived for {callout} at {utc[:16].replace('T', ' ')} UTC; {name} ({site}) keeps "
                     f"{zone} time, so that was {arrival_local(callout):%Y-%m-%d %H:%M} there.\n"
                     f"ANSWER: {arrival_local(callout):%Y-%m-%d %H:%M}", callout_id=callout)


def _bikes_item(server: ToolServer, k: int) -> dict[str, Any]:
    station, _ = QUESTIONS[k]
    name = STATIONS[station][0]
    as_of = question_moment(k)
    found = stale(station, as_of)
    count = len(docked(station, _utc(as_of)))
    prose = (f"{name} ({station}) held {count} bikes at that moment, over two pages; "
             + (f"{len(found)} had been docked for more than 72 hours." if found
                else "none had been docked for more than 72 hours."))
    return twin_item(server, "You answer questions about the bike-share docks. A bike is stale when it has been "
                             "docked for more than 72 hours. End with one line `ANSWER: <bike ids, comma-separated>`, "
                             "or `ANSWER: none`.",
                     f"Which bikes at station {station} ({name}) had been docked for more than 72 hours as of "
                     f"{as_of[:10]} {as_of[11:16]} UTC?",
                     ("list_docked_bikes",),
                     [{"name": "list_docked_bikes", "arguments": {"station_id": station, "as_of": as_of, "page": p}}
                      for p in (1, 2)],
                     f"{prose}\nANSWER: {', '.join(found) if found else 'none'}", station_id=station, as_of=as_of)


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
