"""The round-60 twins (``round60_twins``) through the doctor against one real server: each honest grader passes
every probe without a warning; each hackable twin fails through its probe, which its honest twin played and passed.
And the pieces under the probes."""

from __future__ import annotations

import pytest
from doctor_helpers import twin_tests
from round60_twins import TWINS, job_for, make_items, make_server

pytestmark = pytest.mark.slow

verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)


def test_a_ranking_is_cut_to_its_first_entry_and_a_short_one_is_not():
    from rft_sdk.doctor._answer_line import first_listed

    reference = "Finish times: Okafor 47.00 s, Nowak 48.37 s.\nANSWER: Okafor > Nowak > Byrne > Dahl"
    assert first_listed(reference) == ["Finish times: Okafor 47.00 s, Nowak 48.37 s.\nANSWER: Okafor"]
    assert first_listed("Times.\nANSWER: Okafor \u2192 Nowak \u2192 Byrne \u2192 Dahl") == ["Times.\nANSWER: Okafor"]
    # three entries are too few to cut (one of three right has set F1 0.5: an honest grader may pay that)
    assert first_listed("Times.\nANSWER: Okafor > Nowak > Byrne") == []
    # an entry of more than four words is prose, not a list
    assert first_listed("x\nANSWER: Okafor > Nowak > Byrne > Dahl and then the rest of the field") == []


def test_the_working_figure_is_the_answer_lines_one_number_and_another_of_the_working_in_its_style():
    from rft_sdk.doctor._answer_numbers import WorkingFigure, line_number

    answer = "EUR 12850.00 at 0.85377 is GBP 10,970.94; the fee is GBP 12.50.\nANSWER: GBP 10,958.44"
    assert line_number(answer).group() == "10,958.44"
    assert line_number("Owed 5.00 and 6.00.\nANSWER: 3.00 and 4.00") is None  # two numbers on the line
    assert line_number("The total is 12.50.") is None  # no marked line
    assert line_number("x\nANSWER: A-7103 > A-7102") is None  # ids' digits are no number
    item = {"messages": [{"role": "user", "content": "How much will transfer TR-5501 credit?"}],
            "reference_answer": answer}
    # the gross first (nearest), then the fee; the EUR amount (another currency) and the rate (other decimals) never
    assert WorkingFigure().candidates(item) == ["10,970.94", "12.50"]
    # a figure the prompt states is no working figure
    stated = {**item, "messages": [{"role": "user", "content": "The fee is GBP 12.50. How much will it credit?"}]}
    assert WorkingFigure().candidates(stated) == ["10,970.94"]


def test_another_zone_is_the_first_a_read_names_else_utc():
    from rft_sdk.doctor._shifted_times import other_zone

    answer = "The hearing starts 2026-03-26 10:00 UTC.\nANSWER: 2026-03-26 21:00 Australia/Sydney"
    assert other_zone(answer, ['{"venue_zone": "Europe/London"}']) == (
        "The hearing starts 2026-03-26 10:00 UTC.\nANSWER: 2026-03-26 10:00 Europe/London")
    assert other_zone(answer, []).endswith("ANSWER: 2026-03-26 10:00 Etc/UTC")
    # the answer's own zone named in a read is skipped; crossing midnight moves the date
    assert other_zone("x\nANSWER: 2026-03-26 05:00 Asia/Tokyo", ['{"zone": "Asia/Tokyo"}', "America/New_York"]) == (
        "x\nANSWER: 2026-03-25 16:00 America/New_York")
    assert other_zone("x\nANSWER: 2026-03-26 21:00", ["Europe/London"]) is None  # no zone on the line


def test_a_sack_id_in_the_prose_beside_answer_none_is_no_number():
    from rft_sdk.doctor._answer_numbers import only_number

    assert only_number("Every district in SK-3302 is covered.\nANSWER: none") is None
    assert only_number("Every district in the sack is covered: 3302.\nANSWER: none") is None  # prose, not the line
    assert only_number("Sack SK-3302 holds misrouted parcels.\nANSWER: 2").group() == "2"
    assert only_number("Tax owed: 4,180.00").group() == "4,180.00"
