"""The round-42 twins (``round42_twins``) through the doctor against one real server: each honest grader passes
every probe without a warning; each hackable twin fails through its probe, which its honest twin played and passed.
And the pieces under the new probes."""

from __future__ import annotations

import pytest
from doctor_helpers import twin_tests
from round42_twins import TWINS, job_for, make_items, make_server

pytestmark = pytest.mark.slow

verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)


def test_a_utc_clock_is_read_from_a_stamp_or_a_utc_field_only():
    from rft_sdk.doctor._literal_time import utc_clock

    assert utc_clock({"slot_id": "A", "start_utc": "2026-03-30T17:00:00Z"}) == ("2026-03-30", "17:00")
    assert utc_clock({"slot_id": "A", "start_utc": "17:00"}) == (None, "17:00")
    assert utc_clock({"slot_id": "A", "start": "17:00"}) is None  # no word of UTC: a local clock
    assert utc_clock({"start": "2026-03-30T17:00:00+02:00"}) is None


def test_a_value_is_written_as_zero_in_its_own_format():
    from rft_sdk.doctor._emptied_state import zeroed

    assert zeroed("Still wine: 6 x 75 cl + 6 x 75 cl = 9.00 L.\nANSWER: 9.00 L") == \
        "Still wine: 6 x 75 cl + 6 x 75 cl = 0.00 L.\nANSWER: 0.00 L"
    assert zeroed("ANSWER: 0.00 L") is None  # already zero: never played
    assert zeroed("ANSWER: C-1, C-4") is None  # no one value


def test_listed_figures_come_from_a_keyed_object_or_from_records():
    import json

    from rft_sdk.doctor._category_answer import listed_figures

    keyed = json.dumps({"packages_eur": {"Basic": "8.50", "Deluxe": "12.90"}, "levy_eur": "0.35"})
    assert listed_figures([keyed], ["Basic", "Deluxe", "Ultimate"]) == {"Basic": 8.5, "Deluxe": 12.9}
    records = json.dumps([{"package": "Basic", "price": 8.5}, {"package": "Deluxe", "price": 12.9}])
    assert listed_figures([records], ["Basic", "Deluxe"]) == {"Basic": 8.5, "Deluxe": 12.9}
    assert listed_figures([json.dumps({"Basic": "cheap"})], ["Basic", "Deluxe"]) == {}


def test_a_corrected_day_is_also_swapped_where_a_longer_id_writes_it():
    from rft_sdk.doctor._superseded import SupersededRequest

    probe = SupersededRequest()
    assert probe._argument("S-NG-0514-0900", "2026-05-14", "2026-05-12") == "S-NG-0512-0900"
    assert probe._argument("S-NG-0514-0900", "09:00", "10:30") == "S-NG-0514-1030"
    assert probe._argument("ROOM-105145", "2026-05-14", "2026-05-12") == "ROOM-105145"  # inside a longer number
    assert probe._argument(7, "2026-05-14", "2026-05-12") == 7


def test_a_written_date_and_time_moves_to_the_other_clock_across_midnight():
    from rft_sdk.doctor._utc_clock import _moved

    assert _moved("2026-08-02 23:35", 60) == "2026-08-03 00:35"
    assert _moved("2026-08-03T00:35", -60) == "2026-08-02T23:35"
    assert _moved("14:00", -60) == "13:00"


def test_an_amount_with_thousands_separators_is_one_entry_not_a_list():
    from rft_sdk.doctor._answers import listed_line
    from rft_sdk.doctor._repeated_entry import repeated_entry_lines

    assert listed_line("ANSWER: \u00a31,234.56")[2] == ["\u00a31,234.56"]
    assert repeated_entry_lines("Total.\nANSWER: \u00a31,234.56") is None  # docs44: was played as "\u00a31, \u00a31"
    assert listed_line("ANSWER: 12, 40, 7")[2] == ["12", "40", "7"]  # a list of numbers stays a list
