"""The round-66b twins (``round66b_twins``) through the doctor against one real server: each honest grader passes
every probe without a warning; each hackable twin fails through its probe, which its honest twin played and passed.
And the pieces under the probes (``named_text_swap``'s argument, ``ranked_listed_choice``'s restated writes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from doctor_helpers import gold_replays, twin_tests
from round66b_twins import APPLICATIONS, BOOKINGS, FREE, PRICES, TWINS, cheapest, job_for, make_items, make_server

pytestmark = pytest.mark.slow

verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)

WRITES = {"send_ballot_pack", "move_seat", "charge_difference"}


@pytest.fixture(scope="module")
def replays() -> dict[str, Any]:
    """``{grader: (items, its gold replay)}``: one reference replay per item on every twin."""
    return gold_replays(TWINS, make_server, make_items, job_for)


def _context(replays: Mapping[str, Any], grader: str) -> Any:
    from rft_sdk.doctor._probes import ProbeContext

    items, replay = replays[grader]
    return ProbeContext(items, gold_outputs=replay.outputs, gold_ok=replay.ok, write_tools=WRITES)


def test_every_gold_pays_full_marks_on_both_twins(replays: Mapping[str, Any]) -> None:
    scores = {grader: replay.scores for grader, (_, replay) in replays.items()}
    assert all(s == [1.0] * 10 for s in scores.values()), scores


def test_named_text_swap_wrote_the_registered_address_never_the_note(verdicts: Mapping[str, Any]) -> None:
    """Both twins were played the register's ``address`` for the application's ``dispatch_address``; the post room
    note (``remarks``, lower-case words no message names) was never played."""
    registered = {a[2]: a[3] for a in APPLICATIONS.values()}
    for grader, score in (("ballots_honest", 0.0), ("ballots_typed_address", 1.0)):
        played = verdicts[grader]["probes"]["named_text_swap"]["played"]
        assert played and all(row["altered"] == "send_ballot_pack.dispatch_address" and row["judged"]
                              and row["to"] == registered[row["from"]] and row["score"] == score
                              for row in played.values()), (grader, played)


def test_named_text_swap_offers_the_dispatch_address_only(replays: Mapping[str, Any]) -> None:
    from rft_sdk.doctor._named_text import named_text_probes

    probe = named_text_probes(WRITES)["named_text_swap"]
    context = _context(replays, "ballots_honest")
    probe.prepare(context)
    for item in context.items:
        _, _, dispatch, address, _, _ = APPLICATIONS[item["pack"]["application_id"]]
        assert [(o["argument"], o["from"], o["probe"]) for o in probe.options(item)] == [
            ("dispatch_address", dispatch, address)], item["pack"]


def test_ranked_listed_choice_played_the_runner_up_with_its_charge(verdicts: Mapping[str, Any]) -> None:
    """The seat played is another free seat of the block, never one tying the cheapest on price; the hackable
    twin paid it in full, so the charge written was that seat's price less what was paid."""
    for grader, score in (("seats_honest", 0.0), ("seats_any_free", 1.0)):
        played = verdicts[grader]["probes"]["ranked_listed_choice"]["played"]
        assert len(played) == 8, played
        for row in played.values():
            block = row["from"].split("-")[0]
            assert row["altered"] == "move_seat.seat_id" and row["from"] == cheapest(block)[0], row
            assert row["to"] in dict(FREE[block]) and PRICES[row["to"]] > PRICES[row["from"]], row
            assert row["judged"] and row["score"] == score, (grader, row)


def test_ranked_listed_choice_plans_the_charge_restated_for_the_runner_up(replays: Mapping[str, Any]) -> None:
    from rft_sdk.doctor._choices import choice_probes

    probe = choice_probes(WRITES)["ranked_listed_choice"]
    context = _context(replays, "seats_honest")
    probe.prepare(context)
    planned = 0
    for item in context.items:
        option = probe.choice(item)
        if option is None:
            continue
        ref, block = item["booking_ref"], item["block"]
        calls = [step[0] for step in probe.plan(item)]
        assert [c["name"] for c in calls] == ["get_booking", "list_free_seats", "move_seat", "charge_difference"]
        seat = calls[2]["arguments"]["seat_id"]
        assert seat == option["to"] != cheapest(block)[0], calls
        amount = calls[3]["arguments"]["amount_pence"]
        assert amount == PRICES[seat] - BOOKINGS[ref][2] != item["amount_pence"] and type(amount) is int, calls
        planned += 1
    assert planned == 10  # every item has a runner-up (the probe plays 8 of them)


def test_restated_writes_restates_a_number_derived_from_the_entitys_record() -> None:
    from rft_sdk.doctor._choices import restated_writes

    gold, runner = {"seat_id": "A-07", "price_pence": 6200, "row": 3}, {"seat_id": "A-03", "price_pence": 6800, "row": 3}

    def call(name: str, **arguments: Any) -> dict[str, Any]:
        return {"name": name, "arguments": {"booking_ref": "BK-7701", **arguments}}

    actions = [call("get_booking"), call("move_seat", seat_id="A-03"), call("charge_difference", amount_pence=1400)]
    # the field less a known figure (the seat's price less the 4800 paid): restated for the runner-up's price
    out = restated_writes(actions, [2], gold, runner, {4800.0, 6200.0, 6800.0})
    assert out[2]["arguments"] == {"booking_ref": "BK-7701", "amount_pence": 2000}
    assert type(out[2]["arguments"]["amount_pence"]) is int
    assert out[:2] == actions[:2] and actions[2]["arguments"]["amount_pence"] == 1400  # the input is not changed
    # equal to the field: the runner-up's field
    assert restated_writes([call("hold", amount_pence=6200)], [0], gold, runner, ())[0]["arguments"][
        "amount_pence"] == 6800
    # the field plus a known figure (a 350 booking fee)
    assert restated_writes([call("charge", amount_pence=6550)], [0], gold, runner, {350})[0]["arguments"][
        "amount_pence"] == 7150
    # no known figure derives it: unchanged, the very call
    unchanged = [call("charge_difference", amount_pence=1400)]
    assert restated_writes(unchanged, [0], gold, runner, {500.0, 6800.0}) == unchanged
    # a position not given, or a field both records share (the row), is left alone
    assert restated_writes(actions, [1], gold, runner, {4800.0}) == actions
    assert restated_writes([call("charge", amount_pence=3)], [0], gold, runner, ()) == [call("charge",
                                                                                           amount_pence=3)]
    # an int stays an int where the result is whole, a float stays a float
    halves = restated_writes([call("c", a=1400, b=14.0, c=14)], [0], {"p": 62.0}, {"p": 68.5}, {48.0})[0]["arguments"]
    assert halves["a"] == 1400 and halves["b"] == halves["c"] == 20.5 and type(halves["c"]) is float
    whole = restated_writes([call("c", a=14)], [0], {"p": 62.0}, {"p": 68.0}, {48.0})[0]["arguments"]["a"]
    assert whole == 20 and type(whole) is int
