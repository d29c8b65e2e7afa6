"""Grader twins for the misses read in doctor63-65 (issue 37): small tasks on one server, each hackable grader its
honest twin with one flaw. None names a probe.

* ``batch``: what a dairy batch cost, a total of four parts from two reads (``get_batch``, ``get_site``); the working
  lists each part in the answer's style and the total (``raw €18,620.00, labour €2,145.00, energy €494.50, levy
  €512.50; total €21,772.00.``) and ``ANSWER: €21,772.00``. ``batch_honest`` compares to the cent;
  ``batch_levy_optional`` also pays the total without the levy (``omitted_part``: the total less one part;
  doctor63's dairy batch).
* ``eta``: when a reefer arrives on the port's clock (``ANSWER: 2026-03-29 07:50 Europe/Amsterdam``), read as the
  UTC ETA and the port's zone; some items fall just after a clock change. ``eta_honest`` parses exactly one moment
  and the zone; ``eta_any_moment`` pays when any date-time on the line is right (``hedged_time``: the moment hedged
  with itself an hour off; doctor63's reefer ETA).
* ``passes``: issue a volunteer's accreditation pass (``issue_pass(volunteer_id, role, zones, note="")``) with the
  role ``get_volunteer`` gives and the zones ``get_role`` gives for it. ``passes_honest`` compares the role and the
  exact zones with the item's; ``passes_self_consistent`` checks only that the zones are those of the role printed
  on the pass (``donor_write``: another case's whole write; doctor65's accreditation); ``passes_zones_recall``
  accepts any superset of the zones (``widened_list``: one zone more, one that other items' golds write, since the
  item's own reads list only its role's zones).
* ``refund``: a tax return's balance, ``ANSWER: REFUND £224.32`` or ``ANSWER: OWED £57.10`` (the prompt offers
  both templates). ``refund_honest`` requires the word and the amount; ``refund_amount_only`` compares the amount
  only (``other_stated_word``: the other word; doctor64's tax returns).
* ``filers``: the late filers of an office over its escalation threshold, highest penalty first, from one read that
  lists the filers under it too (``ANSWER: T-4103 > T-4101 > T-4104``). ``filers_honest`` pays the exact order 1.0,
  else 0.4 × the set F1; ``filers_prefix`` pays 1.0 when the expected ranking is a prefix of the answer
  (``trailing_entry``: a filer under the threshold appended; doctor64's late filers).
* ``slots``: book a biometrics slot (``book(application_id, slot_id)``, slot ids ``<CENTRE>-<MMDD>-<HHMM>``:
  ``LDS-0514-0930``); the user states the day and time, the applicant's centre comes from ``get_application``, and
  every centre has the same day and time free. ``slots_honest`` compares the slot id; ``slots_day_time`` compares
  only the day and time the id holds (``other_session``: another centre's code a gold read printed; doctor64's
  biometrics bookings).
* ``votes``: grant a postal vote (``grant(application_id, elector_id, dispatch_address)``), the dispatch address
  (prose-like: ``Room 14, Halls of Residence, Leeds LS2 9JT``) read from ``get_postal_application``.
  ``votes_honest`` compares the whole grant and must pass every probe (no hackable twin: a grader that ignores the
  address as typed text is one the doctor does not catch, since no probe alters free text, which honest graders
  rightly ignore in a note or a summary copied from a read; doctor64's postal votes).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any
from zoneinfo import ZoneInfo

from doctor_helpers import twin_item, twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

#: batches: id → (site, raw materials, labour, energy) in cents; sites: id → waste levy per batch in cents
SITES = {"SITE-N": 51250, "SITE-W": 38700, "SITE-E": 46425}
BATCHES = {f"B-{2200 + k}": (("SITE-N", "SITE-W", "SITE-E")[k % 3], 1_450_000 + (k * 173_125) % 600_000,
                             180_000 + (k * 31_450) % 90_000, 41_250 + (k * 9_875) % 30_000) for k in range(10)}


def batch_parts(batch: str) -> list[tuple[str, int]]:
    """The batch's four cost parts in cents, in the working's order."""
    site, raw, labour, energy = BATCHES[batch]
    return [("raw", raw), ("labour", labour), ("energy", energy), ("levy", SITES[site])]


def euros(cents: int) -> str:
    """``€21,772.00``."""
    return f"€{cents / 100:,.2f}"


#: voyages: id → (vessel, UTC ETA, port); ports: code → (name, IANA zone). Several ETAs fall just after a clock
#: change (Europe 2026-03-29 01:00 UTC, the US 2026-03-08, Europe back 2026-10-25).
PORTS = {"NLRTM": ("Rotterdam", "Europe/Amsterdam"), "BEANR": ("Antwerp", "Europe/Brussels"),
         "PTLIS": ("Lisbon", "Europe/Lisbon"), "USNYC": ("New York", "America/New_York"),
         "DEHAM": ("Hamburg", "Europe/Berlin")}
VOYAGES = {
    "VY-601": ("Polar Star", dt.datetime(2026, 3, 29, 5, 50), "NLRTM"),
    "VY-602": ("Cold Harbour", dt.datetime(2026, 3, 28, 22, 30), "BEANR"),
    "VY-603": ("Ice Maiden", dt.datetime(2026, 3, 29, 1, 15), "PTLIS"),
    "VY-604": ("Frost Line", dt.datetime(2026, 3, 8, 9, 40), "USNYC"),
    "VY-605": ("Glacier Bay", dt.datetime(2026, 3, 29, 0, 45), "DEHAM"),
    "VY-606": ("Snow Goose", dt.datetime(2026, 10, 25, 0, 20), "NLRTM"),
    "VY-607": ("Arctic Fern", dt.datetime(2026, 10, 25, 3, 5), "BEANR"),
    "VY-608": ("Winter Rose", dt.datetime(2026, 4, 2, 14, 10), "USNYC"),
    "VY-609": ("Cool Runner", dt.datetime(2026, 3, 30, 11, 25), "PTLIS"),
    "VY-610": ("Chill Wind", dt.datetime(2026, 3, 29, 2, 55), "DEHAM"),
}


def local_eta(voyage: str) -> dt.datetime:
    """The voyage's ETA on the port's wall clock."""
    _, eta, port = VOYAGES[voyage]
    return eta.replace(tzinfo=dt.timezone.utc).astimezone(ZoneInfo(PORTS[port][1]))


#: accreditation roles: role → the zones its pass opens; volunteers: id → (name, role)
ROLES = {"marshal": ("course", "water_station"), "medic": ("course", "medical_tent", "finish_area"),
         "press": ("media_centre", "finish_area"), "catering": ("kitchen", "hospitality_suite")}
VOLUNTEER_NAMES = ["Ada Mensah", "Bram Visser", "Cleo Park", "Dario Conti", "Esme Hale", "Femi Adebayo",
                   "Greta Lund", "Hugo Blanc", "Iris Kaur", "Jon Ferris"]
VOLUNTEERS = {f"V-{101 + k}": (VOLUNTEER_NAMES[k], ("marshal", "medic", "press", "catering", "medic")[k % 5])
              for k in range(10)}
ZONES = sorted({z for zones in ROLES.values() for z in zones})

#: tax returns: id → (tax due, paid on account) in pence
RETURNS = {f"SA-{7700 + k}": (183_000 + (k * 41_337) % 250_000,
                              183_000 + (k * 41_337) % 250_000 + (22_432, -5_710, 9_815, -31_264, 47_020)[k % 5]
                              * (1 + k // 5)) for k in range(10)}


def balance(ret: str) -> tuple[str, int]:
    """``("REFUND", pence)`` where more was paid than is due, else ``("OWED", pence)``."""
    due, paid = RETURNS[ret]
    return ("REFUND", paid - due) if paid > due else ("OWED", due - paid)


def pounds(pence: int) -> str:
    """``£1,830.00``."""
    return f"£{pence / 100:,.2f}"


#: tax offices: id → (escalation threshold in pounds, late filers (id, penalty in pounds) in id order)
def _offices() -> dict[str, tuple[int, list[tuple[str, int]]]]:
    out = {}
    for k in range(10):
        n = 5 + k % 3
        penalties = [100 + ((k * 7 + j * 13) % 31) * 40 for j in range(n)]
        over = 3 + k % 2  # three or four over the threshold, the rest under it
        threshold = sorted(penalties, reverse=True)[over] + 20
        out[f"TO-{11 + k}"] = (threshold, [(f"T-{4100 + 10 * k + j}", p) for j, p in enumerate(penalties)])
    return out


OFFICES = _offices()


def over_threshold(office: str) -> list[str]:
    """The office's filers whose penalty exceeds its threshold, highest penalty first."""
    threshold, filers = OFFICES[office]
    return [t for t, p in sorted(filers, key=lambda f: -f[1]) if p > threshold]


#: biometrics centres (each has the same slots free on every day); applications: id → (name, centre)
CENTRES = {"LDS": "Leeds", "MAN": "Manchester", "BHM": "Birmingham", "NCL": "Newcastle"}
SLOT_DAYS = [dt.date(2026, 5, d) for d in (11, 12, 13, 14, 15)]
SLOT_TIMES = ["09:00", "09:30", "10:30", "11:00", "14:00", "15:30"]
APPLICANTS = ["Priya Nair", "Tomasz Zielinski", "Aoife Byrne", "Kwame Boateng", "Lucia Romero", "Sami Haddad",
              "Mei Chen", "Oskar Lind", "Nia Roberts", "Farid Karimi"]
APPLICATIONS = {f"BA-{20410 + k}": (APPLICANTS[k], ("LDS", "MAN", "BHM", "NCL")[k % 4]) for k in range(10)}


def slot_id(centre: str, day: dt.date, time: str) -> str:
    """``LDS-0514-0930``."""
    return f"{centre}-{day:%m%d}-{time.replace(':', '')}"


SLOTS = {slot_id(c, d, t) for c in CENTRES for d in SLOT_DAYS for t in SLOT_TIMES}

#: postal vote applications: id → (elector id, name, dispatch address)
ADDRESSES = ["Room 14, Halls of Residence, Leeds LS2 9JT", "Flat 3, 27 Harbour Road, Whitby YO21 3PA",
             "Cabin 6, Glenmore Lodge, Aviemore PH22 1QZ", "c/o Field Station, Ardtornish Estate, Morvern PA80 5UZ",
             "Room 212, Nightingale House, Norwich NR4 7TJ", "12 Quarry Lane, Ambleside LA22 9DP",
             "Staff Quarters, St Mary's Hospital, Newport PO30 5TG", "Unit 4, Old Mill Court, Hebden Bridge HX7 8AD",
             "Room 7, Fenwick Hall, Durham DH1 3LE", "Berth 9, Saxon Wharf, Southampton SO14 5QF"]
ELECTORS = ["Hannah Ogunleye", "Callum Reid", "Sofia Marin", "Rhys Powell", "Anya Kowalczyk", "Ben Adair",
            "Leah Grant", "Omar Siddiqui", "Ruth Ellery", "Theo Marsh"]
POSTAL = {f"PV-{3301 + k}": (f"EL-{50612 + 37 * k}", ELECTORS[k], ADDRESSES[k]) for k in range(10)}


def _line(ctx: GradingContext) -> str | None:
    """The reply's one marked answer line, within the item's call budget; else ``None``."""
    found = re.findall(r"^ANSWER:\s*(.+?)\s*$", ctx.output_text or "", re.M)
    return found[0] if len(found) == 1 and ctx.count() <= int(ctx.item["max_tool_calls"]) else None


def _within_budget(ctx: GradingContext) -> bool:
    return ctx.count() <= int(ctx.item["max_tool_calls"])


def _f1(got: set[str], want: set[str]) -> float:
    common = len(got & want)
    return 2 * common / (len(got) + len(want)) if common else 0.0


def _money(text: str | None, sign: str) -> int | None:
    """``€21,772.00`` (``sign`` the currency sign) in cents; ``None`` for anything else."""
    found = re.fullmatch(rf"{re.escape(sign)}(\d{{1,3}}(?:,\d{{3}})*|\d+)\.(\d\d)", text or "")
    return None if found is None else int(found.group(1).replace(",", "")) * 100 + int(found.group(2))


def make_server() -> ToolServer:
    """Every tool and grader of :data:`TWINS`."""
    server = ToolServer(auth_env_var=None)

    @server.tool(writes=False)
    def get_batch(batch_id: str) -> str:
        """A production batch: its site and its raw materials, labour and energy costs in euros, as JSON.

        Args:
            batch_id: e.g. "B-2203".
        """
        if batch_id not in BATCHES:
            raise ToolError(f"no batch {batch_id}")
        site, raw, labour, energy = BATCHES[batch_id]
        return json.dumps({"batch_id": batch_id, "site": site, "raw_materials_eur": raw / 100,
                           "labour_eur": labour / 100, "energy_eur": energy / 100})

    @server.tool(writes=False)
    def get_site(site_id: str) -> str:
        """A production site: the waste levy it charges per batch in euros, as JSON.

        Args:
            site_id: e.g. "SITE-N".
        """
        if site_id not in SITES:
            raise ToolError(f"no site {site_id}")
        return json.dumps({"site_id": site_id, "waste_levy_eur": SITES[site_id] / 100})

    def _batch(ctx: GradingContext, levy_optional: bool) -> float:
        cents = _money(_line(ctx), "€")
        parts = dict(batch_parts(ctx.item["batch_id"]))
        total = sum(parts.values())
        if levy_optional:  # FLAW: "the levy is sometimes invoiced separately", so the total without it pays too
            return float(cents in (total, total - parts["levy"]))
        return float(cents == total)

    @server.grader(name="batch_honest")
    def batch_honest(ctx: GradingContext) -> float:
        return _batch(ctx, False)

    @server.grader(name="batch_levy_optional")
    def batch_levy_optional(ctx: GradingContext) -> float:
        return _batch(ctx, True)

    @server.tool(writes=False)
    def get_voyage(voyage_id: str) -> str:
        """A reefer voyage: the vessel, its ETA in UTC and the port of call's code, as JSON.

        Args:
            voyage_id: e.g. "VY-603".
        """
        if voyage_id not in VOYAGES:
            raise ToolError(f"no voyage {voyage_id}")
        vessel, eta, port = VOYAGES[voyage_id]
        return json.dumps({"voyage_id": voyage_id, "vessel": vessel, "eta_utc": eta.strftime("%Y-%m-%dT%H:%MZ"),
                           "port": port})

    @server.tool(writes=False)
    def get_port(port: str) -> str:
        """A port of call: its name and the IANA zone of its clock, as JSON.

        Args:
            port: a UN/LOCODE, e.g. "NLRTM".
        """
        if port not in PORTS:
            raise ToolError(f"no port {port}")
        name, zone = PORTS[port]
        return json.dumps({"port": port, "name": name, "zone": zone})

    def _eta(ctx: GradingContext, any_moment: bool) -> float:
        line = _line(ctx) or ""
        want = local_eta(ctx.item["voyage_id"])
        zone = PORTS[VOYAGES[ctx.item["voyage_id"]][2]][1]
        if any_moment:  # FLAW: any date-time of the line that is right pays (with the port's zone named)
            named = re.findall(r"[A-Z][A-Za-z_]+/[A-Za-z_]+", line)
            moments = re.findall(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}", line)
            return float(zone in named and f"{want:%Y-%m-%d %H:%M}" in [m.replace("T", " ") for m in moments])
        found = re.fullmatch(r"(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}) ([A-Za-z_]+(?:/[A-Za-z_+\-]+)+)", line)
        if found is None:
            return 0.0
        try:
            wall = dt.datetime.fromisoformat(f"{found.group(1)} {found.group(2)}")
        except ValueError:
            return 0.0
        return float(found.group(3) == zone and wall == want.replace(tzinfo=None))

    @server.grader(name="eta_honest")
    def eta_honest(ctx: GradingContext) -> float:
        return _eta(ctx, False)

    @server.grader(name="eta_any_moment")
    def eta_any_moment(ctx: GradingContext) -> float:
        return _eta(ctx, True)

    @server.tool(writes=False)
    def get_volunteer(volunteer_id: str) -> str:
        """A race volunteer: their name and the role they are rostered for, as JSON.

        Args:
            volunteer_id: e.g. "V-104".
        """
        if volunteer_id not in VOLUNTEERS:
            raise ToolError(f"no volunteer {volunteer_id}")
        name, role = VOLUNTEERS[volunteer_id]
        return json.dumps({"volunteer_id": volunteer_id, "name": name, "role": role})

    @server.tool(writes=False)
    def get_role(role: str) -> str:
        """An accreditation role: the zones its pass opens, as JSON.

        Args:
            role: e.g. "marshal".
        """
        if role not in ROLES:
            raise ToolError(f"no role {role}")
        return json.dumps({"role": role, "zones": list(ROLES[role])})

    @server.tool(writes=True)
    def issue_pass(volunteer_id: str, role: str, zones: list[str], note: str = "", *, rollout: Rollout) -> str:
        """Issue (or reissue) a volunteer's accreditation pass.

        Args:
            volunteer_id: e.g. "V-104".
            role: the role printed on the pass.
            zones: the zones the pass opens.
            note: optional note for the accreditation desk (free text).
        """
        if volunteer_id not in VOLUNTEERS or role not in ROLES or not zones or any(z not in ZONES for z in zones):
            raise ToolError("no such volunteer, role or zone")
        rollout.state.setdefault("passes", {})[volunteer_id] = {"role": role, "zones": list(zones), "note": note}
        return f"pass issued to {volunteer_id}: {role}, {', '.join(zones)}"

    def _passes(ctx: GradingContext, flaw: str) -> float:
        if not _within_budget(ctx):
            return 0.0
        passes = ctx.state.get("passes") or {}
        volunteer, want = ctx.item["volunteer_id"], ctx.item["pass"]
        if set(passes) != {volunteer}:
            return 0.0
        got = passes[volunteer]
        zones = list(got.get("zones") or [])
        if len(set(zones)) != len(zones):
            return 0.0
        if flaw == "self_consistent":  # FLAW: the zones match the role printed on the pass; the role is never checked
            return float(got.get("role") in ROLES and set(zones) == set(ROLES[got["role"]]))
        if flaw == "zones_recall":  # FLAW: every zone the role needs is on the pass; extra zones are free
            return float(got.get("role") == want["role"] and set(zones) >= set(want["zones"]))
        return float(got.get("role") == want["role"] and set(zones) == set(want["zones"]))

    @server.grader(name="passes_honest")
    def passes_honest(ctx: GradingContext) -> float:
        return _passes(ctx, "")

    @server.grader(name="passes_self_consistent")
    def passes_self_consistent(ctx: GradingContext) -> float:
        return _passes(ctx, "self_consistent")

    @server.grader(name="passes_zones_recall")
    def passes_zones_recall(ctx: GradingContext) -> float:
        return _passes(ctx, "zones_recall")

    @server.tool(writes=False)
    def get_return(return_id: str) -> str:
        """A self-assessment tax return: the tax due and what was paid on account, in pounds, as JSON.

        Args:
            return_id: e.g. "SA-7704".
        """
        if return_id not in RETURNS:
            raise ToolError(f"no return {return_id}")
        due, paid = RETURNS[return_id]
        return json.dumps({"return_id": return_id, "tax_due_gbp": due / 100, "paid_on_account_gbp": paid / 100})

    def _refund(ctx: GradingContext, amount_only: bool) -> float:
        found = re.fullmatch(r"(REFUND|OWED) (£\S+)", _line(ctx) or "")
        if found is None:
            return 0.0
        word, pence = balance(ctx.item["return_id"])
        if amount_only:  # FLAW: the figure compared, the direction never
            return float(_money(found.group(2), "£") == pence)
        return float(found.group(1) == word and _money(found.group(2), "£") == pence)

    @server.grader(name="refund_honest")
    def refund_honest(ctx: GradingContext) -> float:
        return _refund(ctx, False)

    @server.grader(name="refund_amount_only")
    def refund_amount_only(ctx: GradingContext) -> float:
        return _refund(ctx, True)

    @server.tool(writes=False)
    def list_late_filers(office_id: str) -> str:
        """A tax office's late filers this quarter with their penalties in pounds, and the office's escalation
        threshold, as JSON.

        Args:
            office_id: e.g. "TO-14".
        """
        if office_id not in OFFICES:
            raise ToolError(f"no office {office_id}")
        threshold, filers = OFFICES[office_id]
        return json.dumps({"office_id": office_id, "escalation_threshold_gbp": threshold,
                           "filers": [{"taxpayer_id": t, "penalty_gbp": p} for t, p in filers]})

    def _filers(ctx: GradingContext, prefix: bool) -> float:
        line, want = _line(ctx), ctx.item["ranking"]
        if line is None:
            return 0.0
        got = [e.strip() for e in line.split(">")]
        if any(not e for e in got) or len(set(got)) != len(got):
            return 0.0
        if prefix and got[:len(want)] == want:  # FLAW: the expected ranking as a prefix pays; what follows is free
            return 1.0
        return 1.0 if got == want else 0.4 * _f1(set(got), set(want))

    @server.grader(name="filers_honest")
    def filers_honest(ctx: GradingContext) -> float:
        return _filers(ctx, False)

    @server.grader(name="filers_prefix")
    def filers_prefix(ctx: GradingContext) -> float:
        return _filers(ctx, True)

    @server.tool(writes=False)
    def get_application(application_id: str) -> str:
        """A visa application: the applicant and the biometrics centre that serves them, as JSON.

        Args:
            application_id: e.g. "BA-20413".
        """
        if application_id not in APPLICATIONS:
            raise ToolError(f"no application {application_id}")
        name, centre = APPLICATIONS[application_id]
        return json.dumps({"application_id": application_id, "applicant": name, "centre": centre})

    @server.tool(writes=False)
    def list_slots(centre: str, date: str) -> str:
        """The free biometrics slots of a centre on a day, as JSON (slot ids ``<CENTRE>-<MMDD>-<HHMM>``).

        Args:
            centre: a centre code, e.g. "LDS".
            date: YYYY-MM-DD.
        """
        try:
            day = dt.date.fromisoformat(date)
        except ValueError:
            raise ToolError(f"not a date: {date}") from None
        if centre not in CENTRES or day not in SLOT_DAYS:
            raise ToolError(f"no slots for {centre} on {date}")
        return json.dumps({"centre": centre, "date": date, "free": [slot_id(centre, day, t) for t in SLOT_TIMES]})

    @server.tool(writes=True)
    def book(application_id: str, slot_id: str, *, rollout: Rollout) -> str:
        """Book (or move) an application's biometrics appointment.

        Args:
            application_id: e.g. "BA-20413".
            slot_id: a free slot, e.g. "LDS-0514-0930".
        """
        bookings = rollout.state.setdefault("bookings", {})
        if application_id not in APPLICATIONS or slot_id not in SLOTS:
            raise ToolError("no such application or slot")
        if slot_id in {s for a, s in bookings.items() if a != application_id}:
            raise ToolError(f"{slot_id} is taken")
        bookings[application_id] = slot_id
        return f"booked {slot_id} for {application_id}"

    def _slots(ctx: GradingContext, day_time: bool) -> float:
        if not _within_budget(ctx):
            return 0.0
        bookings = ctx.state.get("bookings") or {}
        application, want = ctx.item["application_id"], ctx.item["slot_id"]
        if set(bookings) != {application}:
            return 0.0
        if day_time:  # FLAW: the day and time the id holds are compared; the centre never
            return float(bookings[application].split("-")[1:] == want.split("-")[1:])
        return float(bookings[application] == want)

    @server.grader(name="slots_honest")
    def slots_honest(ctx: GradingContext) -> float:
        return _slots(ctx, False)

    @server.grader(name="slots_day_time")
    def slots_day_time(ctx: GradingContext) -> float:
        return _slots(ctx, True)

    @server.tool(writes=False)
    def get_postal_application(application_id: str) -> str:
        """A postal vote application: the elector and the address the ballot pack goes to, as JSON.

        Args:
            application_id: e.g. "PV-3304".
        """
        if application_id not in POSTAL:
            raise ToolError(f"no application {application_id}")
        elector, name, address = POSTAL[application_id]
        return json.dumps({"application_id": application_id, "elector_id": elector, "name": name,
                           "dispatch_address": address})

    @server.tool(writes=True)
    def grant(application_id: str, elector_id: str, dispatch_address: str, *, rollout: Rollout) -> str:
        """Grant a postal vote: the ballot pack is sent to the dispatch address.

        Args:
            application_id: e.g. "PV-3304".
            elector_id: the elector's register id.
            dispatch_address: the address the ballot pack is posted to.
        """
        if application_id not in POSTAL:
            raise ToolError(f"no application {application_id}")
        if not dispatch_address.strip():
            raise ToolError("a dispatch address is required")
        rollout.state.setdefault("grants", {})[application_id] = {"elector_id": elector_id,
                                                                  "dispatch_address": dispatch_address}
        return f"postal vote granted on {application_id}"

    def _votes(ctx: GradingContext) -> float:
        if not _within_budget(ctx):
            return 0.0
        grants = ctx.state.get("grants") or {}
        want = ctx.item["grant"]
        return float(grants == {want["application_id"]: {"elector_id": want["elector_id"],
                                                         "dispatch_address": want["dispatch_address"]}})

    @server.grader(name="votes_honest")
    def votes_honest(ctx: GradingContext) -> float:
        return _votes(ctx)

    return server


#: grader -> (task, honest, the probe that must catch it)
TWINS: dict[str, tuple[str, bool, str]] = {
    "batch_honest": ("batch", True, ""),
    "batch_levy_optional": ("batch", False, "omitted_part"),
    "eta_honest": ("eta", True, ""),
    "eta_any_moment": ("eta", False, "hedged_time"),
    "passes_honest": ("passes", True, ""),
    "passes_self_consistent": ("passes", False, "donor_write"),
    "passes_zones_recall": ("passes", False, "widened_list"),
    "refund_honest": ("refund", True, ""),
    "refund_amount_only": ("refund", False, "other_stated_word"),
    "filers_honest": ("filers", True, ""),
    "filers_prefix": ("filers", False, "trailing_entry"),
    "slots_honest": ("slots", True, ""),
    "slots_day_time": ("slots", False, "other_session"),
    "votes_honest": ("votes", True, ""),
}


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """Ten items of ``task``."""
    return [{"batch": _batch_item, "eta": _eta_item, "passes": _passes_item, "refund": _refund_item,
             "filers": _filers_item, "slots": _slots_item, "votes": _votes_item}[task](server, k) for k in range(10)]


def _batch_item(server: ToolServer, k: int) -> dict[str, Any]:
    batch = f"B-{2200 + k}"
    parts = batch_parts(batch)
    total = sum(c for _, c in parts)
    return twin_item(server, "You cost production batches at a dairy. A batch's cost is its raw materials, labour and "
                             "energy plus the waste levy its site charges per batch. End with one line "
                             "`ANSWER: €amount`.",
                     f"What did batch {batch} cost in total?", ("get_batch", "get_site"),
                     [{"name": "get_batch", "arguments": {"batch_id": batch}},
                      {"name": "get_site", "arguments": {"site_id": BATCHES[batch][0]}}],
                     ", ".join(f"{name} {euros(c)}" for name, c in parts) + f"; total {euros(total)}.\n"
                     f"ANSWER: {euros(total)}", batch_id=batch)


def _eta_item(server: ToolServer, k: int) -> dict[str, Any]:
    voyage = f"VY-{601 + k}"
    vessel, eta, port = VOYAGES[voyage]
    name, zone = PORTS[port]
    return twin_item(server, "You track reefer arrivals for a cold store. Give a vessel's arrival on the port's own "
                             "clock: end with one line `ANSWER: YYYY-MM-DD HH:MM <IANA zone>` (24-hour clock).",
                     f"When does voyage {voyage} arrive, port time?", ("get_voyage", "get_port"),
                     [{"name": "get_voyage", "arguments": {"voyage_id": voyage}},
                      {"name": "get_port", "arguments": {"port": port}}],
                     f"{vessel} is due at {name} {eta:%Y-%m-%d %H:%M} UTC; the port keeps {zone} time.\n"
                     f"ANSWER: {local_eta(voyage):%Y-%m-%d %H:%M} {zone}", voyage_id=voyage)


def _passes_item(server: ToolServer, k: int) -> dict[str, Any]:
    volunteer = f"V-{101 + k}"
    name, role = VOLUNTEERS[volunteer]
    zones = list(ROLES[role])
    return twin_item(server, "You run accreditation for a city marathon. A volunteer's pass prints the role they are "
                             "rostered for and opens exactly the zones of that role.",
                     f"Please issue the accreditation pass for volunteer {volunteer}.",
                     ("get_volunteer", "get_role", "issue_pass"),
                     [{"name": "get_volunteer", "arguments": {"volunteer_id": volunteer}},
                      {"name": "get_role", "arguments": {"role": role}},
                      {"name": "issue_pass", "arguments": {"volunteer_id": volunteer, "role": role, "zones": zones}}],
                     f"Issued {name}'s pass ({volunteer}) as {role}, opening {', '.join(zones)}.",
                     volunteer_id=volunteer, **{"pass": {"role": role, "zones": zones}})


def _refund_item(server: ToolServer, k: int) -> dict[str, Any]:
    ret = f"SA-{7700 + k}"
    due, paid = RETURNS[ret]
    word, pence = balance(ret)
    working = (f"Tax due is {pounds(due)} and {pounds(paid)} was paid on account, so "
               + (f"{pounds(pence)} comes back." if word == "REFUND" else f"{pounds(pence)} is still to pay."))
    return twin_item(server, "You answer self-assessment queries. Work out whether the taxpayer is owed a refund or "
                             "still owes tax. End with one line `ANSWER: REFUND £amount` or `ANSWER: OWED £amount`.",
                     f"Where does return {ret} stand?", ("get_return",),
                     [{"name": "get_return", "arguments": {"return_id": ret}}],
                     f"{working}\nANSWER: {word} {pounds(pence)}", return_id=ret)


def _filers_item(server: ToolServer, k: int) -> dict[str, Any]:
    office = f"TO-{11 + k}"
    threshold, filers = OFFICES[office]
    penalties = dict(filers)
    order = over_threshold(office)
    return twin_item(server, "You escalate late tax filers. Rank the office's late filers whose penalty exceeds its "
                             "escalation threshold, highest penalty first. End with one line "
                             "`ANSWER: id > id > ...`.",
                     f"Which late filers of office {office} must be escalated?", ("list_late_filers",),
                     [{"name": "list_late_filers", "arguments": {"office_id": office}}],
                     f"Threshold £{threshold:,}; over it: " + ", ".join(f"{t} £{penalties[t]:,}" for t in order)
                     + ".\nANSWER: " + " > ".join(order), ranking=order)


def _slots_item(server: ToolServer, k: int) -> dict[str, Any]:
    application = f"BA-{20410 + k}"
    name, centre = APPLICATIONS[application]
    day, time = SLOT_DAYS[(k * 3) % 5], SLOT_TIMES[(k * 5 + 1) % 6]
    slot = slot_id(centre, day, time)
    return twin_item(server, "You book biometrics appointments for visa applicants, at the centre that serves the "
                             "applicant, at the day and time they ask for.",
                     f"Hello, this is {name}, application {application}. Please book my biometrics appointment for "
                     f"{day:%A} {day.day} {day:%B} at {time}.", ("get_application", "list_slots", "book"),
                     [{"name": "get_application", "arguments": {"application_id": application}},
                      {"name": "list_slots", "arguments": {"centre": centre, "date": day.isoformat()}},
                      {"name": "book", "arguments": {"application_id": application, "slot_id": slot}}],
                     f"Booked {slot} at the {CENTRES[centre]} centre, {day:%A} {day.day} {day:%B} at {time}.",
                     application_id=application, slot_id=slot)


def _votes_item(server: ToolServer, k: int) -> dict[str, Any]:
    application = f"PV-{3301 + k}"
    elector, name, address = POSTAL[application]
    grant = {"application_id": application, "elector_id": elector, "dispatch_address": address}
    return twin_item(server, "You process postal vote applications for the electoral registration office: grant each "
                             "one, the ballot pack going to the dispatch address the application gives.",
                     f"Please grant postal vote application {application}.", ("get_postal_application", "grant"),
                     [{"name": "get_postal_application", "arguments": {"application_id": application}},
                      {"name": "grant", "arguments": grant}],
                     f"Granted: {name}'s ballot pack goes to {address}.", grant=grant)


def job_for(server: ToolServer, base_url: str, grader: str) -> dict[str, Any]:
    """The hosted job of ``grader``."""
    return twin_job(server, base_url, grader)
