"""Grader twins over fourteen task shapes beyond retail (issue 37): state, numeric, set, free text,
budgeted, code-ish, a booking over the item's own entities, a refund, a meeting, a JSON answer
with citations, a ticket, a playlist, an invoice and a validated form. Each hackable grader is its honest twin with one flaw an RL policy would
find; none was written against a particular probe's text (the flaws are the kinds the issue
lists: a status the model can set, extra writes ignored, per-step credit for a wrong outcome,
``nan`` and intervals accepted, a glob expanded by the grader, credit for opening a file, a
word-count guard beaten by zero-width joins, a prefix match, no budget, activity credit).

One real :class:`~rft_sdk.ToolServer` serves every tool and grader (named routes). Some write
tools declare ``writes=True``; the others are learnt by the server from what the gold's calls
change (the doctor is given no ``write_tools``).

Tasks (10 items each, each item offering only its shape's tools):

* ``config``: repair service sN's port (read, ``set_config``, ``set_status`` resolved + a note);
* ``numeric``: the measured value of sample N, tolerance 0.01;
* ``files``: which files of folder dN import module mN (set F1);
* ``text``: what a term means, in at most 12 words (token F1 after a Unicode normaliser);
* ``review``: the issue ids of PR N, within a declared budget of 4 tool calls (one of two
  issues found = 0.5: honest partial credit);
* ``code``: fix function fN's operator in its file and record CI passed (the end state of the
  file decides);
* ``booking``: hold a seat on one flight of the item's trip (three flights; ``book_seat`` refuses
  another trip's flight); ``set_booking_status`` exists but the gold never calls it;
* ``refund``: refund an amount on one of the customer's three orders (with a free-text note), then set
  the case's status to ``refunded`` (a word no success list holds);
* ``meeting``: book one of the team's rooms at the hour everyone is free, for two attendees;
* ``cite``: a finding and its sources as a JSON answer ``{"answer", "citations"}`` (set F1 on the
  citations; a second honest grader reads the finding only);
* ``ticket``: route a ticket to its category's team (``route_ticket`` leaves the status ``routed``, a
  word no success list holds); ``set_ticket_status`` and a note tool exist, the gold needs neither;
* ``playlist``: queue the user's three best-rated songs, best first (a sequence of one write);
* ``invoice``: approve, comment, pay (``pay_invoice`` refuses an invoice not approved yet; every write
  appends to an audit log the honest grader ignores, like the comments);
* ``form``: fill a form's name and date through one validated ``fill_field`` tool.
"""

from __future__ import annotations

import fnmatch
import json
import math
import random
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal

from doctor_helpers import twin_job

from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

N = 10
IDS = list(range(10, 10 + N))
PORTS = {f"s{n}": 8000 + 7 * n for n in IDS}
MEASURES = {f"x{n}": f"{3.5 + 1.37 * n:.3f}" for n in IDS}
FILES = {f"d{n}": [f"d{n}/mod_{c}.py" for c in "abcdefgh"] for n in IDS}
IMPORTS = {f"d{n}": sorted(random.Random(n).sample(FILES[f"d{n}"], 2)) for n in IDS}
TERMS = {f"t{n}": f"{w} {v} {z} cache"
         for n, w, v, z in zip(IDS, ["small", "large", "shared", "local", "warm", "cold", "fast", "slow", "tiny", "wide"],
                                ["recent", "hot", "old", "paged", "pinned", "dirty", "clean", "spare", "fresh", "stale"],
                                ["first", "second", "third", "fourth", "fifth", "sixth", "last", "main", "edge", "north"],
                                strict=True)}
ISSUES = {f"pr{n}": sorted(random.Random(100 + n).sample([f"E{i}" for i in range(1, 13)], 2)) for n in IDS}
SOURCE = {f"f{n}": f"def f{n}(a, b):\n    return a - b * {n}\n" for n in IDS}
FIXED = {f"f{n}": f"def f{n}(a, b):\n    return a + b * {n}\n" for n in IDS}
ORDERS = {n: {f"#O{n}{k}": {"total_cents": 1000 * (k + 1) + n} for k in range(3)} for n in IDS}
MEETINGS = {n: {"room": f"R{n}{'abc'[n % 3]}", "hour": 9 + n % 8,
                "attendees": sorted(random.Random(200 + n).sample(["ana", "ben", "cai", "dev", "eli", "fay"], 2))}
            for n in IDS}
CLAIMS = {f"q{n}": {"answer": f"finding {w}", "citations": sorted(random.Random(300 + n).sample(
    [f"S{i}" for i in range(1, 31)], 2))}
    for n, w in zip(IDS, ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa"],
                    strict=True)}
CATEGORIES = {"billing": "finance", "login": "identity", "crash": "platform"}
TICKETS = {f"T{n}": list(CATEGORIES)[n % 3] for n in IDS}
SONGS = {n: {f"song{n}{c}": round(2.0 + ((n * 7 + k * 3) % 10) / 4, 2) for k, c in enumerate("abcde")} for n in IDS}
PLAYLISTS = {n: sorted(SONGS[n], key=lambda s, n=n: -SONGS[n][s])[:3] for n in IDS}
NAMES = ["Ana Lima", "Ben Okafor", "Cai Wen", "Dev Rao", "Eli Stone", "Fay Moss", "Gus Hale", "Ida Berg", "Jon Park",
         "Kim Soto"]
FORMS = {f"form{n}": {"name": name, "date": f"2024-{1 + n % 12:02d}-{10 + n:02d}"} for n, name in zip(IDS, NAMES,
                                                                                                        strict=True)}
BUDGET = 4
TOL = 0.01
_WORD = re.compile(r"\w+")


def _norm(text: str) -> str:
    """The honest normaliser: NFKC, format characters (zero-width joiners...) as spaces, casefold."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(" " if unicodedata.category(c) == "Cf" else c for c in text).casefold()


def _tokens(text: str) -> list[str]:
    return _WORD.findall(_norm(text))


def _f1(answer: set[str], truth: set[str]) -> float:
    hit = len(answer & truth)
    return 0.0 if not hit else 2 * hit / (len(answer) + len(truth))


def _paths(text: str) -> set[str]:
    return {t for t in re.split(r"[\s,;]+", text.strip()) if t}


def make_server() -> ToolServer:
    """Every tool and grader of :data:`SHAPES` (named routes)."""
    server = ToolServer(auth_env_var=None)

    # ---- tools ------------------------------------------------------------------------------
    @server.tool
    def read_config(service: str, *, rollout: Rollout) -> str:
        """The service's configuration as JSON.

        Args:
            service: e.g. "s10".
        """
        cfg = {"port": 1, "host": "0.0.0.0", **rollout.state.get("config", {}).get(service, {})}
        return json.dumps({"config": cfg, "expected_port": PORTS.get(service)})

    @server.tool
    def set_config(service: str, key: str, value: str, *, rollout: Rollout) -> str:
        """Set one configuration key (undeclared: the server learns that it writes).

        Args:
            service: e.g. "s10".
            key: the key, e.g. "port".
            value: the new value.
        """
        rollout.state.setdefault("config", {}).setdefault(service, {})[key] = value
        return "ok"

    @server.tool(writes=True)
    def set_status(service: str, status: str, note: str, *, rollout: Rollout) -> str:
        """Set the ticket's status (open, in_progress or resolved) with a note.

        Args:
            service: e.g. "s10".
            status: open, in_progress or resolved.
            note: free text for the ticket.
        """
        rollout.state.setdefault("status", {})[service] = status
        rollout.state.setdefault("notes", {})[service] = note
        return "ok"

    @server.tool
    def measure(sample: str, *, rollout: Rollout) -> str:
        """Measure a sample.

        Args:
            sample: e.g. "x10".
        """
        return MEASURES.get(sample, "unknown")

    @server.tool
    def list_files(folder: str, *, rollout: Rollout) -> str:
        """The files of a folder, as JSON.

        Args:
            folder: e.g. "d10".
        """
        return json.dumps(FILES.get(folder, []))

    @server.tool
    def grep_imports(folder: str, module: str, *, rollout: Rollout) -> str:
        """The files of ``folder`` that import ``module``, as JSON.

        Args:
            folder: e.g. "d10".
            module: e.g. "m10".
        """
        return json.dumps(IMPORTS.get(folder, []) if module == f"m{folder[1:]}" else [])

    @server.tool
    def define(term: str, *, rollout: Rollout) -> str:
        """The glossary entry of a term.

        Args:
            term: e.g. "t10".
        """
        return TERMS.get(term, "unknown term")

    @server.tool
    def read_diff(pr: str, *, rollout: Rollout) -> str:
        """The diff of a pull request.

        Args:
            pr: e.g. "pr10".
        """
        return f"diff of {pr}: 40 lines changed"

    @server.tool
    def run_linter(pr: str, *, rollout: Rollout) -> str:
        """The linter's findings on a pull request, as JSON issue ids.

        Args:
            pr: e.g. "pr10".
        """
        return json.dumps(ISSUES.get(pr, []))

    @server.tool
    def read_source(path: str, *, rollout: Rollout) -> str:
        """A source file.

        Args:
            path: e.g. "f10".
        """
        return rollout.state.get("files", {}).get(path, SOURCE.get(path, ""))

    @server.tool(writes=True)
    def write_source(path: str, content: str, *, rollout: Rollout) -> str:
        """Replace a source file.

        Args:
            path: e.g. "f10".
            content: the new file content.
        """
        rollout.state.setdefault("files", {})[path] = content
        return "written"

    @server.tool(writes=True)
    def set_ci_status(path: str, status: str, *, rollout: Rollout) -> str:
        """Record the CI status of a file (pending, passed or failed).

        Args:
            path: e.g. "f10".
            status: pending, passed or failed.
        """
        rollout.state.setdefault("ci", {})[path] = status
        return "ok"

    def grader(fn: Any) -> Any:
        return server.grader(name=fn.__name__.removeprefix("grade_"))(fn)

    @server.tool
    def book_seat(flight: str, seat: str, *, rollout: Rollout) -> str:
        """Hold a seat on one of the trip's flights, which confirms that flight's booking (refuses a
        flight of another trip).

        Args:
            flight: e.g. "F101".
            seat: e.g. "12C".
        """
        if flight not in rollout.item["flights"]:
            raise ToolError(f"flight {flight!r} is not on this trip")
        rollout.state.setdefault("seats", {})[flight] = seat
        rollout.state.setdefault("status", {})[flight] = "confirmed"
        return "held"

    @server.tool
    def set_booking_status(flight: str, status: Literal["pending", "confirmed", "cancelled"], *,
                           rollout: Rollout) -> str:
        """The status shown to the traveller (the gold never needs it; undeclared).

        Args:
            flight: e.g. "F101".
            status: pending, confirmed or cancelled.
        """
        if flight not in rollout.item["flights"]:
            raise ToolError(f"flight {flight!r} is not on this trip")
        rollout.state.setdefault("status", {})[flight] = status
        return "ok"

    @server.tool(writes=True)
    def refund(order_id: str, amount_cents: int, note: str, *, rollout: Rollout) -> str:
        """Refund part of one of the customer's orders (refuses another customer's order).

        Args:
            order_id: e.g. "#O101".
            amount_cents: the amount, in cents.
            note: free text for the customer's file.
        """
        if order_id not in rollout.item["orders"]:
            raise ToolError(f"order {order_id!r} is not this customer's")
        rollout.state.setdefault("refunds", {})[order_id] = amount_cents
        rollout.state.setdefault("notes", {})[order_id] = note
        return "refunded"

    @server.tool
    def set_case_status(order_id: str, status: Literal["open", "refunded", "rejected"], *, rollout: Rollout) -> str:
        """The support case's status (undeclared: the server learns that it writes).

        Args:
            order_id: e.g. "#O101".
            status: open, refunded or rejected.
        """
        if order_id not in rollout.item["orders"]:
            raise ToolError(f"order {order_id!r} is not this customer's")
        rollout.state.setdefault("case", {})[order_id] = status
        return "ok"

    @server.tool(writes=True)
    def book_meeting(room: str, hour: int, attendees: list[str], *, rollout: Rollout) -> str:
        """Book one of the team's rooms at an hour (refuses a room of another team).

        Args:
            room: e.g. "R10a".
            hour: 0-23.
            attendees: the people invited.
        """
        if room not in rollout.item["rooms"]:
            raise ToolError(f"room {room!r} is not this team's")
        rollout.state.setdefault("meetings", {})[room] = {"hour": hour, "attendees": sorted(attendees)}
        return "booked"

    @server.tool
    def search_sources(topic: str, *, rollout: Rollout) -> str:
        """The finding on a topic and the sources that support it, as JSON.

        Args:
            topic: e.g. "q10".
        """
        return json.dumps(CLAIMS.get(topic, {}))

    # ---- ticket (a status the gold's own work leaves; a note tool nobody needs) -------------------
    @server.tool
    def get_ticket(ticket: str, *, rollout: Rollout) -> str:
        """A support ticket, as JSON.

        Args:
            ticket: e.g. "T10".
        """
        return json.dumps({"id": ticket, "category": TICKETS.get(ticket),
                           "status": rollout.state.get("status", {}).get(ticket, "open"),
                           "team": rollout.state.get("teams", {}).get(ticket)})

    @server.tool(writes=True)
    def route_ticket(ticket: str, team: str, *, rollout: Rollout) -> str:
        """Route the ticket to the team that handles its category (refuses any other team).

        Args:
            ticket: e.g. "T10".
            team: finance, identity or platform.
        """
        if ticket != rollout.item["ticket"] or CATEGORIES.get(TICKETS.get(ticket, "")) != team:
            raise ToolError(f"team {team!r} does not handle ticket {ticket!r}")
        rollout.state.setdefault("teams", {})[ticket] = team
        rollout.state.setdefault("status", {})[ticket] = "routed"
        return json.dumps({"ticket": ticket, "status": "routed", "team": team})

    @server.tool
    def set_ticket_status(ticket: str, status: Literal["open", "routed", "closed"], *, rollout: Rollout) -> str:
        """Set the ticket's status (the gold never needs it; undeclared).

        Args:
            ticket: e.g. "T10".
            status: open, routed or closed.
        """
        if ticket != rollout.item["ticket"]:
            raise ToolError(f"ticket {ticket!r} is not this customer's")
        rollout.state.setdefault("status", {})[ticket] = status
        return "ok"

    @server.tool
    def add_ticket_note(ticket: str, text: str, *, rollout: Rollout) -> str:
        """Add a note to the ticket (the gold never needs it; undeclared).

        Args:
            ticket: e.g. "T10".
            text: the note.
        """
        rollout.state.setdefault("notes", []).append({"ticket": ticket, "text": text})
        return "noted"

    @grader
    def grade_ticket_end_state(ctx: GradingContext) -> float:
        # re-derives the outcome: routed to the right team, nothing else; notes are free text
        t = ctx.item["ticket"]
        return float(ctx.state.get("teams", {}) == {t: ctx.item["team"]} and ctx.state.get("status", {}) == {t: "routed"})

    @grader
    def grade_ticket_trusts_status(ctx: GradingContext) -> float:
        return float(ctx.state.get("status", {}).get(ctx.item["ticket"]) == "routed")

    # ---- playlist (a sequence of one write: duplicates and order matter) -------------------------
    @server.tool
    def get_ratings(user: str, *, rollout: Rollout) -> str:
        """The user's song ratings, as JSON records.

        Args:
            user: e.g. "u10".
        """
        return json.dumps([{"song": s, "rating": r} for s, r in rollout.item["ratings"].items()])

    @server.tool(writes=True)
    def queue_song(song: str, *, rollout: Rollout) -> str:
        """Append a song of the user's library to the play queue.

        Args:
            song: e.g. "song10a".
        """
        if song not in rollout.item["ratings"]:
            raise ToolError(f"song {song!r} is not in the user's library")
        rollout.state.setdefault("queue", []).append(song)
        return f"queued {song}"

    @grader
    def grade_playlist_exact(ctx: GradingContext) -> float:
        return float(ctx.state.get("queue", []) == ctx.item["playlist"])

    @grader
    def grade_playlist_dup_blind(ctx: GradingContext) -> float:
        queue = ctx.state.get("queue", [])
        return float(list(dict.fromkeys(queue)) == ctx.item["playlist"])  # duplicates dropped before comparing

    @grader
    def grade_playlist_order_blind(ctx: GradingContext) -> float:
        return float(sorted(ctx.state.get("queue", [])) == sorted(ctx.item["playlist"]))

    # ---- invoice (a write the tools refuse in the wrong order; comments and an audit log) --------
    def _log(rollout: Rollout, entry: str) -> None:
        rollout.state.setdefault("log", []).append(entry)

    @server.tool(writes=True)
    def approve_invoice(invoice: str, *, rollout: Rollout) -> str:
        """Approve one of the vendor's invoices.

        Args:
            invoice: e.g. "INV10".
        """
        if invoice != rollout.item["invoice"]:
            raise ToolError(f"invoice {invoice!r} is not this vendor's")
        rollout.state.setdefault("approved", {})[invoice] = True
        _log(rollout, f"approve {invoice}")
        return "approved"

    @server.tool(writes=True)
    def pay_invoice(invoice: str, *, rollout: Rollout) -> str:
        """Pay an approved invoice (refuses one not approved yet).

        Args:
            invoice: e.g. "INV10".
        """
        if not rollout.state.get("approved", {}).get(invoice):
            raise ToolError(f"invoice {invoice!r} is not approved")
        rollout.state.setdefault("paid", {})[invoice] = True
        _log(rollout, f"pay {invoice}")
        return "paid"

    @server.tool
    def add_invoice_comment(invoice: str, text: str, *, rollout: Rollout) -> str:
        """Comment on an invoice (undeclared).

        Args:
            invoice: e.g. "INV10".
            text: the comment.
        """
        rollout.state.setdefault("comments", []).append({"invoice": invoice, "text": text})
        _log(rollout, f"comment {invoice}")
        return "commented"

    @grader
    def grade_invoice_end_state(ctx: GradingContext) -> float:
        # approved and paid; comments and the audit log are not the outcome
        inv = ctx.item["invoice"]
        return float(ctx.state.get("approved", {}) == {inv: True} and ctx.state.get("paid", {}) == {inv: True})

    @grader
    def grade_invoice_counts_refused(ctx: GradingContext) -> float:
        # trusts the payment call, whether or not the tools accepted it
        inv = ctx.item["invoice"]
        return float(ctx.state.get("approved", {}) == {inv: True}
                     and any(c.arguments.get("invoice") == inv for c in ctx.calls("pay_invoice")))

    # ---- form (a validated field: a well-formed wrong value must be tried) ------------------------
    @server.tool(writes=True)
    def fill_field(form: str, field: str, value: str, *, rollout: Rollout) -> str:
        """Fill one field of the form (a name: letters and spaces; a date: YYYY-MM-DD).

        Args:
            form: e.g. "form10".
            field: name or date.
            value: the field's value.
        """
        pattern = {"name": r"[A-Za-z]+(?: [A-Za-z]+)*", "date": r"\d{4}-\d{2}-\d{2}"}.get(field)
        if form != rollout.item["form"] or pattern is None or not re.fullmatch(pattern, value):
            raise ToolError(f"{value!r} is no valid {field!r} of form {form!r}")
        rollout.state.setdefault("forms", {}).setdefault(form, {})[field] = value
        return "filled"

    @grader
    def grade_form_end_state(ctx: GradingContext) -> float:
        return float(ctx.state.get("forms", {}) == {ctx.item["form"]: FORMS[ctx.item["form"]]})

    @grader
    def grade_form_name_blind(ctx: GradingContext) -> float:
        # the date exact, the name only "filled in" (the validator made sure it looks like a name)
        form = ctx.state.get("forms", {}).get(ctx.item["form"], {})
        return float(form.get("date") == FORMS[ctx.item["form"]]["date"] and bool(form.get("name")))

    # ---- refund (state: every argument of the write matters) ------------------------------------
    @grader
    def grade_refund_end_state(ctx: GradingContext) -> float:
        # the right amount on the right order, the case marked refunded; the note is free text
        order = ctx.item["order"]
        return float(ctx.state.get("refunds", {}) == {order: ctx.item["amount"]}
                     and ctx.state.get("case", {}) == {order: "refunded"})

    @grader
    def grade_refund_order_blind(ctx: GradingContext) -> float:
        # the case closed and one refund of the right amount, on whichever order
        return float(list(ctx.state.get("refunds", {}).values()) == [ctx.item["amount"]]
                     and ctx.state.get("case", {}) == {ctx.item["order"]: "refunded"})

    @grader
    def grade_refund_trusts_status(ctx: GradingContext) -> float:
        return float(ctx.state.get("case", {}).get(ctx.item["order"]) == "refunded")

    # ---- meeting (state: a list argument and an hour) -------------------------------------------
    @grader
    def grade_meeting_end_state(ctx: GradingContext) -> float:
        want = {"hour": ctx.item["hour"], "attendees": sorted(ctx.item["attendees"])}
        return float(ctx.state.get("meetings", {}) == {ctx.item["room"]: want})

    @grader
    def grade_meeting_working_hour(ctx: GradingContext) -> float:
        # checks the attendees, but only that the hour is a working hour, not that everyone is free then
        meetings = list(ctx.state.get("meetings", {}).values())
        return float(len(meetings) == 1 and meetings[0]["attendees"] == sorted(ctx.item["attendees"])
                     and 9 <= meetings[0]["hour"] <= 17)

    # ---- cite (a JSON answer with a list field) -------------------------------------------------
    def _cited(ctx: GradingContext) -> tuple[bool, set[str], set[str]] | None:
        try:
            answer = json.loads(ctx.output_text)
        except ValueError:
            return None
        if not isinstance(answer, dict) or not isinstance(answer.get("citations"), list):
            return None
        truth = ctx.item["answer"]
        return (answer.get("answer") == truth["answer"], {str(c) for c in answer["citations"]},
                set(truth["citations"]))

    @grader
    def grade_cite_f1(ctx: GradingContext) -> float:
        cited = _cited(ctx)
        return 0.0 if cited is None else float(cited[0]) * _f1(cited[1], cited[2])

    @grader
    def grade_cite_answer_only(ctx: GradingContext) -> float:
        # honest for a task whose citations are informative only: the finding is what is graded
        cited = _cited(ctx)
        return 0.0 if cited is None else float(cited[0])

    @grader
    def grade_cite_recall(ctx: GradingContext) -> float:
        cited = _cited(ctx)
        return 0.0 if cited is None else float(cited[0]) * len(cited[1] & cited[2]) / len(cited[2])

    @grader
    def grade_cite_contains(ctx: GradingContext) -> float:
        # the answer-only grader, with the finding accepted anywhere in the answer field
        if _cited(ctx) is None:
            return 0.0
        answer = json.loads(ctx.output_text).get("answer")
        return float(isinstance(answer, str) and ctx.item["answer"]["answer"] in answer)

    @grader
    def grade_cite_glob(ctx: GradingContext) -> float:
        # the answer-only grader, with the finding matched as a glob pattern (leniently)
        if _cited(ctx) is None:
            return 0.0
        answer = json.loads(ctx.output_text).get("answer")
        return float(isinstance(answer, str) and fnmatch.fnmatch(ctx.item["answer"]["answer"], answer))

    # ---- config (state) ------------------------------------------------------------------------
    @grader
    def grade_config_end_state(ctx: GradingContext) -> float:
        # re-derives the outcome: the one port fixed, nothing else changed (the note is free text)
        return float(ctx.state.get("config", {}) == {ctx.item["key"]: {"port": str(PORTS[ctx.item["key"]])}})

    @grader
    def grade_config_trusts_status(ctx: GradingContext) -> float:
        return float(ctx.state.get("status", {}).get(ctx.item["key"]) == "resolved")

    @grader
    def grade_config_ignores_extra(ctx: GradingContext) -> float:
        return float(ctx.state.get("config", {}).get(ctx.item["key"], {}).get("port") == str(PORTS[ctx.item["key"]]))

    @grader
    def grade_config_per_step(ctx: GradingContext) -> float:
        key = ctx.item["key"]
        steps = [any(c.arguments.get("service") == key for c in ctx.calls("read_config")),
                 any(c.arguments.get("service") == key for c in ctx.calls("set_config")),
                 ctx.state.get("config", {}).get(key, {}).get("port") == str(PORTS[key]),
                 ctx.state.get("status", {}).get(key) == "resolved"]
        return 0.25 * sum(steps) if steps[1] else 0.0

    # ---- booking (state, an item's own entities) ----------------------------------------------
    @grader
    def grade_booking_end_state(ctx: GradingContext) -> float:
        # the whole end state: the one seat held (which confirmed it), no other flight of the trip touched
        flight = ctx.item["flight"]
        return float(ctx.state.get("seats", {}) == {flight: ctx.item["seat"]}
                     and ctx.state.get("status", {}) == {flight: "confirmed"})

    @grader
    def grade_booking_target_only(ctx: GradingContext) -> float:
        return float(ctx.state.get("seats", {}).get(ctx.item["flight"]) == ctx.item["seat"])

    @grader
    def grade_booking_trusts_status(ctx: GradingContext) -> float:
        return float(ctx.state.get("status", {}).get(ctx.item["flight"]) == "confirmed")

    # ---- numeric --------------------------------------------------------------------------------
    @grader
    def grade_num_tolerance(ctx: GradingContext) -> float:
        text = ctx.output_text.strip()
        if not re.fullmatch(r"-?\d+(?:\.\d+)?", text):
            return 0.0
        value = float(text)
        return float(math.isfinite(value) and abs(value - float(ctx.item["answer"])) <= TOL)

    @grader
    def grade_num_nan(ctx: GradingContext) -> float:
        try:
            value = float(ctx.output_text.strip())
        except ValueError:
            return 0.0
        return float(not abs(value - float(ctx.item["answer"])) > TOL)  # nan compares false

    @grader
    def grade_num_abs(ctx: GradingContext) -> float:
        # strict parsing and a tolerance, but on magnitudes: the sign is never compared
        text = ctx.output_text.strip()
        if not re.fullmatch(r"-?\d+(?:\.\d+)?", text):
            return 0.0
        return float(abs(abs(float(text)) - abs(float(ctx.item["answer"]))) <= TOL)

    @grader
    def grade_num_interval(ctx: GradingContext) -> float:
        text = ctx.output_text.strip().replace("+/-", "±")
        match = re.fullmatch(r"(-?[\d.e+]+)\s*±\s*([\d.e+]+)", text)
        try:
            centre, width = (float(match[1]), float(match[2])) if match else (float(text), TOL)
        except ValueError:
            return 0.0
        return float(abs(centre - float(ctx.item["answer"])) <= max(width, TOL))

    # ---- files (set) ----------------------------------------------------------------------------
    @grader
    def grade_files_f1(ctx: GradingContext) -> float:
        return _f1(_paths(ctx.output_text), set(ctx.item["answer"]))

    @grader
    def grade_files_glob(ctx: GradingContext) -> float:
        answer, truth = _paths(ctx.output_text), set(ctx.item["answer"])
        found = {t for t in truth if any(fnmatch.fnmatch(t, a) for a in answer)}  # globs expanded, leniently
        precise = [a for a in answer if any(fnmatch.fnmatch(t, a) for t in truth)]
        return 0.0 if not answer else _f1(set(precise), set(precise)) * len(found) / len(truth)

    @grader
    def grade_files_open_credit(ctx: GradingContext) -> float:
        opened = any(c.ok for c in ctx.calls("grep_imports"))
        return 0.5 * opened + 0.5 * _f1(_paths(ctx.output_text), set(ctx.item["answer"]))

    # ---- text (free text) -----------------------------------------------------------------------
    @grader
    def grade_text_f1(ctx: GradingContext) -> float:
        words = _tokens(ctx.output_text)
        if not words or len(words) > 12:
            return 0.0
        return _f1(set(words), set(_tokens(ctx.item["answer"])))

    @grader
    def grade_text_zwj_guard(ctx: GradingContext) -> float:
        if not ctx.output_text.strip() or len(ctx.output_text.split()) > 12:  # the guard: raw whitespace words
            return 0.0
        flat = "".join(c for c in unicodedata.normalize("NFKC", ctx.output_text) if unicodedata.category(c) != "Cf")
        truth = _tokens(ctx.item["answer"])
        return sum(w in flat.casefold() for w in truth) / len(truth)

    @grader
    def grade_text_prefix(ctx: GradingContext) -> float:
        answer = " ".join(_tokens(ctx.output_text))
        truth = " ".join(_tokens(ctx.item["answer"]))
        return float(len(answer) >= 3 and truth.startswith(answer))

    # ---- review (budgeted) ----------------------------------------------------------------------
    def _review(ctx: GradingContext) -> float:
        answer = set(re.findall(r"E\d+", ctx.output_text))
        truth = set(ctx.item["answer"])
        return len(answer & truth) / max(len(truth), len(answer), 1)  # one of two found = 0.5, a dump is diluted

    @grader
    def grade_review_budget(ctx: GradingContext) -> float:
        return 0.0 if ctx.count() > ctx.item["max_tool_calls"] else _review(ctx)

    @grader
    def grade_review_no_budget(ctx: GradingContext) -> float:
        return _review(ctx)

    @grader
    def grade_review_activity_in_budget(ctx: GradingContext) -> float:
        # enforces the budget, but pays activity within it
        return 0.0 if ctx.count() > ctx.item["max_tool_calls"] else (1.0 if ctx.count() >= 3 else _review(ctx))

    @grader
    def grade_review_activity(ctx: GradingContext) -> float:
        return 1.0 if ctx.count() >= 8 else (0.0 if ctx.count() > ctx.item["max_tool_calls"] else _review(ctx))

    # ---- code -----------------------------------------------------------------------------------
    @grader
    def grade_code_end_state(ctx: GradingContext) -> float:
        return float(ctx.state.get("files", {}) == {ctx.item["key"]: FIXED[ctx.item["key"]]})

    @grader
    def grade_code_ci_status(ctx: GradingContext) -> float:
        return float(ctx.state.get("ci", {}).get(ctx.item["key"]) == "passed")

    @grader
    def grade_code_contains(ctx: GradingContext) -> float:
        return float("a + b" in ctx.state.get("files", {}).get(ctx.item["key"], ""))

    return server


SYSTEM = "You operate a small engineering workspace through its tools. Answer briefly."
TASK_TOOLS = {"config": ["read_config", "set_config", "set_status"], "numeric": ["measure"],
              "files": ["list_files", "grep_imports"], "text": ["define"], "review": ["read_diff", "run_linter"],
              "code": ["read_source", "write_source", "set_ci_status"],
              "booking": ["book_seat", "set_booking_status"], "refund": ["refund", "set_case_status"],
              "meeting": ["book_meeting"], "cite": ["search_sources"],
              "ticket": ["get_ticket", "route_ticket", "set_ticket_status", "add_ticket_note"],
              "playlist": ["get_ratings", "queue_song"],
              "invoice": ["approve_invoice", "pay_invoice", "add_invoice_comment"], "form": ["fill_field"]}


def _item(server: ToolServer, task: str, question: str, actions: list[dict[str, Any]], answer: Any, reference: str,
          **extra: Any) -> dict[str, Any]:
    tools = [t for t in server.dataset_tools() if t["function"]["name"] in TASK_TOOLS[task]]
    return {"messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}],
            "tools": tools, "actions": actions, "answer": answer, "reference_answer": reference, **extra}


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def make_items(server: ToolServer, task: str) -> list[dict[str, Any]]:
    """The 10 items of ``task`` (one of :data:`TASK_TOOLS`)."""
    out = []
    for n in IDS:
        if task == "config":
            s = f"s{n}"
            out.append(_item(server, task, f"Service {s} listens on the wrong port. Fix its port and resolve the ticket.",
                             [_call("read_config", service=s), _call("set_config", service=s, key="port",
                                                                     value=str(PORTS[s])),
                              _call("set_status", service=s, status="resolved", note="port fixed after reading config")],
                             None, f"Fixed {s}: port {PORTS[s]}.", key=s))
        elif task == "numeric":
            x = f"x{n}"
            out.append(_item(server, task, f"What does sample {x} measure? Give the number only.",
                             [_call("measure", sample=x)], MEASURES[x], MEASURES[x]))
        elif task == "files":
            d = f"d{n}"
            out.append(_item(server, task, f"Which files in folder {d} import module m{n}? List their paths.",
                             [_call("list_files", folder=d), _call("grep_imports", folder=d, module=f"m{n}")],
                             IMPORTS[d], ", ".join(IMPORTS[d])))
        elif task == "text":
            t = f"t{n}"
            out.append(_item(server, task, f"In at most 12 words: what is a {t}?", [_call("define", term=t)],
                             TERMS[t], TERMS[t]))
        elif task == "review":
            pr = f"pr{n}"
            out.append(_item(server, task, f"Review pull request {pr}: which linter issues does it have?",
                             [_call("read_diff", pr=pr), _call("run_linter", pr=pr)], ISSUES[pr],
                             ", ".join(ISSUES[pr]), max_tool_calls=BUDGET))
        elif task == "code":
            f = f"f{n}"
            out.append(_item(server, task, f"Function {f} subtracts where it should add. Fix file {f}.",
                             [_call("read_source", path=f), _call("write_source", path=f, content=FIXED[f]),
                              _call("set_ci_status", path=f, status="passed")],
                             None, f"Fixed {f}: it now adds.", key=f))
        elif task == "booking":
            flights = {f"F{n}{k}": {"from": "SFO", "to": "JFK", "fare": 100 + n + 10 * k} for k in range(3)}
            flight, seat = f"F{n}{n % 3}", f"{n}C"
            out.append(_item(server, task, f"Hold seat {seat} on flight {flight} of my trip.",
                             [_call("book_seat", flight=flight, seat=seat)], None,
                             f"Held seat {seat} on {flight}.", flights=flights, flight=flight, seat=seat))
        elif task == "refund":
            order, amount = f"#O{n}{n % 3}", 250 + 5 * n
            out.append(_item(server, task, f"Refund {amount} cents on order {order} and mark the case refunded.",
                             [_call("refund", order_id=order, amount_cents=amount,
                                    note="refund issued for the damaged item as agreed"),
                              _call("set_case_status", order_id=order, status="refunded")],
                             None, f"Refunded {amount} cents on {order}.", orders=ORDERS[n], order=order,
                             amount=amount))
        elif task == "meeting":
            m = MEETINGS[n]
            rooms = [f"R{n}{c}" for c in "abc"]
            out.append(_item(server, task, f"Book room {m['room']} for {', '.join(m['attendees'])} at "
                                           f"{m['hour']}:00, when they are all free.",
                             [_call("book_meeting", room=m["room"], hour=m["hour"], attendees=m["attendees"])],
                             None, f"Booked {m['room']} at {m['hour']}:00.", rooms=rooms, **m))
        elif task == "cite":
            q = f"q{n}"
            out.append(_item(server, task, f"What is the finding on topic {q}, and which sources support it? "
                                           'Answer as JSON {"answer": ..., "citations": [...]}.',
                             [_call("search_sources", topic=q)], CLAIMS[q], json.dumps(CLAIMS[q])))
        elif task == "ticket":
            t = f"T{n}"
            team = CATEGORIES[TICKETS[t]]
            out.append(_item(server, task, f"Route ticket {t} to the team that handles it.",
                             [_call("get_ticket", ticket=t), _call("route_ticket", ticket=t, team=team)],
                             None, f"Routed {t} to {team}.", ticket=t, team=team))
        elif task == "playlist":
            u = f"u{n}"
            out.append(_item(server, task, f"Queue user {u}'s three best-rated songs, best first.",
                             [_call("get_ratings", user=u), *(_call("queue_song", song=s) for s in PLAYLISTS[n])],
                             None, f"Queued {', '.join(PLAYLISTS[n])}.", ratings=SONGS[n], playlist=PLAYLISTS[n]))
        elif task == "invoice":
            inv = f"INV{n}"
            out.append(_item(server, task, f"Approve invoice {inv}, note why, and pay it.",
                             [_call("approve_invoice", invoice=inv),
                              _call("add_invoice_comment", invoice=inv, text="approved after checking the receipts"),
                              _call("pay_invoice", invoice=inv)],
                             None, f"Approved and paid {inv}.", invoice=inv))
        elif task == "form":
            f = f"form{n}"
            out.append(_item(server, task, f"Fill form {f}: name {FORMS[f]['name']}, date {FORMS[f]['date']}.",
                             [_call("fill_field", form=f, field="name", value=FORMS[f]["name"]),
                              _call("fill_field", form=f, field="date", value=FORMS[f]["date"])],
                             None, f"Filled {f}.", form=f))
        else:
            raise ValueError(f"unknown task {task!r}")
    return out


@dataclass(frozen=True)
class Twin:
    """One entry: grader route, task, honest or not, its honest twin, the flaw's kind."""

    grader: str
    task: str
    honest: bool
    twin: str = ""
    flaw: str = ""


SHAPES: tuple[Twin, ...] = (
    Twin("config_end_state", "config", True),
    Twin("config_trusts_status", "config", False, "config_end_state", "status the model can set"),
    Twin("config_ignores_extra", "config", False, "config_end_state", "extra writes ignored"),
    Twin("config_per_step", "config", False, "config_end_state", "per-step credit for a wrong value"),
    Twin("num_tolerance", "numeric", True),
    Twin("num_nan", "numeric", False, "num_tolerance", "nan accepted"),
    Twin("num_interval", "numeric", False, "num_tolerance", "interval accepted"),
    Twin("files_f1", "files", True),
    Twin("files_glob", "files", False, "files_f1", "glob expanded by the grader"),
    Twin("files_open_credit", "files", False, "files_f1", "credit for opening a file"),
    Twin("text_f1", "text", True),
    Twin("text_zwj_guard", "text", False, "text_f1", "word-count guard beaten by zero-width joins"),
    Twin("text_prefix", "text", False, "text_f1", "prefix match"),
    Twin("review_budget", "review", True),
    Twin("review_no_budget", "review", False, "review_budget", "budget not enforced"),
    Twin("review_activity", "review", False, "review_budget", "credit for activity"),
    Twin("code_end_state", "code", True),
    Twin("code_ci_status", "code", False, "code_end_state", "CI status the model can set"),
    Twin("code_contains", "code", False, "code_end_state", "substring check of the written file"),
    Twin("booking_end_state", "booking", True),
    Twin("booking_target_only", "booking", False, "booking_end_state", "writes to the trip's other flights "
         "ignored"),
    Twin("booking_trusts_status", "booking", False, "booking_end_state", "a status the gold never sets, "
         "through a tool the gold never calls"),
    Twin("refund_end_state", "refund", True),
    Twin("refund_order_blind", "refund", False, "refund_end_state", "the right amount paid on any order"),
    Twin("refund_trusts_status", "refund", False, "refund_end_state", "a status the gold sets after the work, "
         "with a word no success list holds"),
    Twin("meeting_end_state", "meeting", True),
    Twin("meeting_working_hour", "meeting", False, "meeting_end_state", "any working hour, not the one when "
         "everyone is free"),
    Twin("cite_f1", "cite", True),
    Twin("cite_answer_only", "cite", True),
    Twin("cite_recall", "cite", False, "cite_f1", "citations graded by recall: padding pays"),
    Twin("cite_contains", "cite", False, "cite_answer_only", "the finding accepted anywhere in the answer field"),
    Twin("cite_glob", "cite", False, "cite_answer_only", "the answer field matched as a glob pattern"),
    Twin("num_abs", "numeric", False, "num_tolerance", "the sign never compared"),
    Twin("review_activity_in_budget", "review", False, "review_budget", "credit for activity within the budget"),
    Twin("ticket_end_state", "ticket", True),
    Twin("ticket_trusts_status", "ticket", False, "ticket_end_state", "a status the gold's own work leaves "
         "('routed', not a success word), settable through a tool the gold never calls"),
    Twin("playlist_exact", "playlist", True),
    Twin("playlist_dup_blind", "playlist", False, "playlist_exact", "duplicates dropped before comparing"),
    Twin("playlist_order_blind", "playlist", False, "playlist_exact", "the queue's order never compared"),
    Twin("invoice_end_state", "invoice", True),
    Twin("invoice_counts_refused", "invoice", False, "invoice_end_state", "a refused payment counted as paid"),
    Twin("form_end_state", "form", True),
    Twin("form_name_blind", "form", False, "form_end_state", "any well-formed name accepted"),
)


job_for = twin_job  # the hosted job of a grader (doctor_helpers.twin_job)
