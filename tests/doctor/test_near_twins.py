"""The near-miss twins (``near_twins``) through the doctor against one real server: the honest graders
(exact position, exact letter, cents, a 1 % tolerance) pass every probe without a warning; each hackable
twin (position within ±1, a missing record taken for done, the modifier stripped, a 5 % tolerance, digits
only) fails through the probe made for it, which the honest twins of its task pass."""

from __future__ import annotations

import asyncio

import pytest
from near_twins import AMOUNTS, HONEST, TWINS, job_for, make_items, make_server

from rft_sdk.doctor import check_unhackable
from rft_sdk.doctor._near_probes import near_miss, scaled, stripped_modifiers, value_number
from rft_sdk.testing import run_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict]:
    """{grader: unhackable evidence}; no write tools given (declared)."""
    server = make_server()
    out = {}
    with run_server(server) as url:
        async def run_all() -> None:
            for grader, (task, _, _) in TWINS.items():
                out[grader] = (await check_unhackable(make_items(server, task), job_for(server, url, grader))).evidence
        asyncio.run(run_all())
    return out


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if t[1]])
def test_honest_graders_pass_every_probe_without_warnings(verdicts, name):
    ev = verdicts[name]
    assert ev["failed_probes"] == [], {p: (ev["probes"][p]["mean_score"], ev["probes"][p].get("played"))
                                       for p in ev["failed_probes"]}
    assert ev["warned_probes"] == []


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

