"""The probes of ``_lenient_probes`` through the doctor against one real server (``lenient_twins``): every honest
grader (a numeric-token grader, a 1 % tolerance, an exact title with a tag-set F1, the same as two halves) passes
every probe without a warning; each hackable twin (a substring test, tag recall, a 12-letter title key) fails
through the probe made for its flaw, which its honest twins pass; and the pure helpers behind them."""

from __future__ import annotations

import pytest
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts
from lenient_twins import TWINS, job_for, make_items, make_server

from rft_sdk.doctor import default_probes
from rft_sdk.doctor._lenient_probes import padding_size, rotated, superstring, truncated

pytestmark = pytest.mark.slow  # a long file: the scheduler starts it first (tests/conftest.py)

BY_NAME = {t.grader: t for t in TWINS}


@pytest.fixture(scope="module")
def verdicts():
    """{grader: unhackable evidence}; no write tools given (declared by the server)."""
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", [t.grader for t in TWINS if t.honest])
def test_honest_graders_pass_every_probe(verdicts, name):
    assert_quiet(verdicts[name])


@pytest.mark.parametrize("name", [t.grader for t in TWINS if not t.honest])
def test_hackable_graders_fail_through_the_probe_made_for_their_flaw(verdicts, name):
    twin = BY_NAME[name]
    ev = verdicts[name]
    assert twin.probe in ev["failed_probes"], (ev["failed_probes"], ev["probes"].get(twin.probe))
    for honest in (t.grader for t in TWINS if t.honest and t.task == twin.task):
        row = verdicts[honest]["probes"][twin.probe]
        assert row["verdict"] == "pass" and row["played"], (honest, row)


def test_the_report_says_what_each_probe_played(verdicts):
    numbers = verdicts["reading_substring"]["probes"]["superstring_number"]["played"]
    assert numbers and all(p["altered"] == "answer" and p["score"] == 1.0 for p in numbers.values())
    padded = verdicts["publish_recall"]["probes"]["padded_list"]["played"]
    assert padded and all(p["altered"] == "set_metadata.tags" for p in padded.values())
    cut = verdicts["publish_prefix"]["probes"]["truncated_text"]["played"]
    # the summary (copied, read by no grader) reads as lower-case phrases ("Episode 3 of the season, recorded in
    # studio 2."): a note, never played; the title is played and judged
    assert {p["altered"] for p in cut.values()} == {"set_metadata.title"}
    assert all(p["judged"] for p in cut.values())
    assert all(p["to"].endswith("...") for p in cut.values())
    # the note is the model's own words (not copied from the data): never cut
    assert "set_metadata.note" not in {p["altered"] for p in cut.values()}


def test_an_unparsed_number_is_paid_in_full_only_by_the_fail_open_parser(verdicts):
    played = verdicts["reading_unparsed"]["probes"]["unparsed_number"]["played"]
    assert played and all("You used unknown kWh." in p["to"] and p["score"] == 1.0 for p in played.values())
    for honest in ("reading_stated", "reading_stated_tolerance"):  # the reading's half, not the gold's whole score
        row = verdicts[honest]["probes"]["unparsed_number"]["played"]
        assert row and all(p["score"] == 0.5 for p in row.values()), (honest, row)


def test_the_probes_and_their_controls_are_built_in():
    probes = default_probes()
    for name in ("number_control", "superstring_number", "unparsed_number", "list_control", "padded_list",
                 "text_control", "truncated_text"):
        assert probes[name].intent == "hack"
    assert probes["number_control"].control and not probes["superstring_number"].control


def test_a_superstring_contains_the_number_and_is_another_value():
    assert [superstring(v) for v in ("377", "0", "-3", "4,180.00", "12.5", "-3.5")] \
        == ["3770", "10", "-30", "14,180.00", "112.5", "-13.5"]


def test_a_rotated_number_shares_no_digit_position():
    assert [rotated(v) for v in ("377", "5", "0.25", "-50", "4,180.00")] == ["822", "9", "5.70", "-95", "9,635.55"]
    for v in ("377", "12.5", "1,000"):
        assert all(a != b for a, b in zip(v, rotated(v), strict=True) if a.isdigit())


def test_a_truncated_text_keeps_about_half_its_words():
    assert truncated("Deep Sea Mining: Who Owns the Ocean Floor?") == "Deep Sea Mining: Who..."
    assert truncated("Supercalifragilistic") == "Supercalif..."
    assert truncated("Ana Lima") is None  # too short to keep a prefix of


def test_the_padding_drops_an_honest_set_f1_below_the_line():
    for n in range(1, 12):
        m = padding_size(n)
        assert 2 * n / (2 * n + m) < 0.4


def test_the_answer_changes_every_number_on_both_sides_and_never_an_ids_digits():
    from rft_sdk.doctor._lenient_probes import _replace_numbers

    text = "Gate B12: you used 377 kWh, $4,180.00 in all (12kWh)."
    assert _replace_numbers(text, superstring) == "Gate B12: you used 3770 kWh, $14,180.00 in all (12kWh)."
    assert _replace_numbers(text, rotated) == "Gate B12: you used 822 kWh, $9,635.55 in all (12kWh)."
    assert _replace_numbers("No number here.", superstring) is None


def test_a_shifted_decimal_keeps_every_digit_and_is_ten_times_off():
    from rft_sdk.doctor._written_answers import shifted_decimal

    for raw, shifted in (("37.80", "378.0"), ("1,234.56", "12345.6"), ("377", "37.7"), ("3.5", "35")):
        assert shifted_decimal(raw) == shifted
        assert shifted.replace(".", "") == raw.replace(",", "").replace(".", "")  # the digits kept
        ratio = float(shifted) / float(raw.replace(",", ""))
        assert min(abs(ratio - 10), abs(ratio - 0.1)) < 1e-9  # and a tenfold wrong value
    assert shifted_decimal("5") is None  # one digit: no shift keeps it
