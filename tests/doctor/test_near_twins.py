"""The near-miss twins (``near_twins``) through the doctor against one real server: the honest graders
(exact position, exact letter, cents, a 1 % tolerance, a tide height to its stated 0.1 m or one unit either
way) pass every probe without a warning; each hackable twin (position within ±1, a missing record taken for
done, the modifier stripped, a 5 % tolerance, digits only, half a metre on a height) fails through the probe made for it, which the honest twins of its task pass."""

from __future__ import annotations

import pytest
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts
from near_twins import AMOUNTS, HONEST, TWINS, job_for, make_items, make_server

from rft_sdk.doctor._near_probes import (
    FAR_SHARE,
    covering_range,
    fraction_moved,
    last_component,
    loose_moved,
    moved_value,
    near_miss,
    one_value,
    scaled,
    stripped_modifiers,
    value_number,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict]:
    """{grader: unhackable evidence}; no write tools given (declared)."""
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if t[1]])
def test_honest_graders_pass_every_probe_without_warnings(verdicts, name):
    assert_quiet(verdicts[name])


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if not t[1]])
def test_hackable_graders_fail_through_their_probe_which_the_honest_twins_pass(verdicts, name):
    task, _, probe = TWINS[name]
    assert probe in verdicts[name]["failed_probes"], (verdicts[name]["failed_probes"], verdicts[name]["probes"][probe])
    for honest in HONEST[task]:
        assert verdicts[honest]["probes"][probe]["verdict"] == "pass", verdicts[honest]["probes"][probe]


def test_the_report_says_what_each_probe_played(verdicts):
    played = verdicts["slot_off_by_one"]["probes"]["neighbour_value"]["played"]
    assert played and all(p["altered"] == "place.position" and abs(p["to"] - p["from"]) == 1 for p in played.values())
    assert {p["to"] - p["from"] for p in played.values()} == {1, -1}
    replaced = verdicts["slot_missing_is_done"]["probes"]["replaced_write"]["played"]
    assert replaced and all(p["replaced"] == "place" and p["by"].startswith("remove(item=") for p in replaced.values())
    stripped = verdicts["mark_base_letter"]["probes"]["modifier_value"]["played"]
    assert stripped and all(p["to"] == p["from"][:-1] for p in stripped.values())
    later = verdicts["rule_hour_only"]["probes"]["component_value"]["played"]
    assert later and all(p["altered"] == "open_port.until" and p["to"][:3] == p["from"][:3] for p in later.values())
    ranged = verdicts["rule_port_range"]["probes"]["range_value"]["played"]
    assert ranged and all(p["altered"] == "open_port.port"
                      and p["to"] == f"0-{max(65535, 10 * int(p['from']))}" for p in ranged.values())


def test_the_last_component_moves_one_unit_and_keeps_the_width():
    assert [last_component(v) for v in ("19:30", "15.33", "1.4.3", "10.0.0.0/24", "2026-03-14", "19:59", "08:09")] \
        == ["19:31", "15.34", "1.4.4", "10.0.0.0/23", "2026-03-15", "19:58", "08:10"]
    # a time to the second (an honest grader may compare to the minute), a word, a lone integer: not played
    assert last_component("19:30:00") is None and last_component("B12") is None and last_component("12") is None


def test_a_covering_range_covers_the_value():
    assert covering_range("22") == "0-65535" and covering_range("90000") == "0-900000"
    assert covering_range("22-80") is None and covering_range("ssh") is None


def test_the_fraction_moves_the_cents_only_where_a_one_percent_tolerance_rejects_it():
    assert fraction_moved("Product p10 costs $15.33.") == ["Product p10 costs $15.63."]
    assert fraction_moved("$15.93") == ["$15.63"]  # up would carry into the dollars
    # 30 cents is under 1 % of $1,234.56 (an honest relative tolerance may cover it); one decimal: not played
    assert fraction_moved("$1,234.56") == [] and fraction_moved("15.3 kg") == [] and fraction_moved("Paid $1.50 of $2.00") == []
    for v in (12.87, 26.84):
        [text] = fraction_moved(f"${v:.2f}")
        moved = float(text[1:])
        assert int(moved) == int(v) and abs(moved - v) >= 0.01 * v


def test_the_value_number_is_the_amount_not_an_identifier_date_or_time():
    assert value_number("The payable amount for claim CL-20413 is $5,363.07.").group() == "5,363.07"
    assert value_number("Invoice v12: $2,068.82 is due.").group() == "2,068.82"
    for text in ("on 2024-05-01 at 10:30", "item i10", "B+", "the 3rd"):
        assert value_number(text) is None, text
    # several figures: changing one leaves the others right (honest partial credit), so none is played
    assert value_number("Paid $12.50 of $40.00.") is None and near_miss("Paid $12.50 of $40.00.") == []


def test_a_near_miss_moves_the_value_three_percent_only_where_its_precision_is_finer():
    assert near_miss("Due: $5,363.07.") == ["Due: $5,523.96."]
    # 375 g stated to the gram: 3 % is 11 grams, under 20 units of the last digit (a measurement a
    # relative tolerance may rightly cover): not played; nor a round number or a one-digit one
    assert near_miss("You need 375 g of flour.") == [] and near_miss("About 1500.") == [] and near_miss("7") == []
    for v in AMOUNTS.values():
        [text] = near_miss(f"${v:,.2f}")
        moved = float(text[1:].replace(",", ""))
        assert 0.025 * v < moved - v < 0.035 * v


def test_scaled_answers_keep_the_digits_and_are_ten_times_off_or_more():
    out = scaled("Due: $5,363.07.")
    assert out == ["Due: $53,630.7.", "Due: $536,307.", "Due: $536.307."]
    for text in out:
        number = float(text.split("$")[1].rstrip(".").replace(",", ""))
        assert number / 5363.07 >= 10 or 5363.07 / number >= 10
    # a fraction's 100x is its percentage, a one-digit number has no point to move
    assert scaled("0.25") == [] and scaled("25%") == [] and scaled("7 items") == []


def test_stripped_modifiers_drop_grade_modifiers_only():
    assert stripped_modifiers("Student s10 has B+.") == ["Student s10 has B."]
    assert stripped_modifiers("AB+ blood") == ["AB blood"]
    assert stripped_modifiers("C++ and B-cell and a - b") == []



def test_the_one_value_is_every_place_an_answer_restates_its_figure():
    tide = "The next high tide is at 06:01, 5.9 m.\nANSWER: 06:01, 5.9 m"
    assert [m.group() for m in one_value(tide)] == ["5.9", "5.9"]  # the times are no value
    assert one_value("Paid $12.50 of $40.00.") == [] and one_value("on 2024-05-01 at 10:30") == []


def test_a_loose_value_is_just_past_an_honest_tolerance_and_the_control_far_past_it():
    # 6 % and 4 units of the last digit at least: past the 2-3 % an honest twin allows (adv_value_twins)
    fine = loose_moved("Invoice v12: $2,068.82 is due.")
    moved = float(fine.split("$")[1].split(" ")[0].replace(",", ""))
    assert 1.06 * 2068.82 <= moved < 1.0601 * 2068.82 and fine.endswith(" is due.")
    # every place moved alike, the time kept
    assert loose_moved("At 06:01, 5.9 m.\nANSWER: 06:01, 5.9 m") == "At 06:01, 6.3 m.\nANSWER: 06:01, 6.3 m"
    assert loose_moved("You need 375 g of flour.") == "You need 398 g of flour."
    assert loose_moved("7 items") == "11 items"
    assert moved_value("At 06:01, 5.9 m.", FAR_SHARE, 10) == "At 06:01, 8.9 m."
    # several figures, or none: not played
    assert loose_moved("Paid $12.50 of $40.00.") is None and loose_moved("item i10") is None


def test_a_neighbour_is_played_on_positions_and_counts_never_on_a_large_measured_integer():
    from rft_sdk.doctor._near_probes import NeighbourValue

    probe = NeighbourValue()
    assert probe._new_value("place", "position", 37, [], set()) == (38, "neighbour")
    # an odometer converted from miles (doctor27): a kilometre either way is honest rounding
    assert probe._new_value("log_inspection", "odometer_km", 50292, [], set()) is None
    assert probe._new_value("t", "flag", True, [], set()) is None
