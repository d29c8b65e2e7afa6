"""The round-44 twins (``round44_twins``) through the doctor against one real server: each honest grader passes
every probe without a warning; each hackable twin fails through its probe, which its honest twin played and passed.
And the pieces under the new probes."""

from __future__ import annotations

import pytest
from doctor_helpers import twin_tests
from round44_twins import TWINS, job_for, make_items, make_server

pytestmark = pytest.mark.slow

verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)


def test_a_member_is_named_whole_and_in_any_case():
    from rft_sdk.doctor._value_swap import says

    assert says("Booked a Saloon for P-1.", "saloon", ignore_case=True)
    assert not says("Booked two saloons.", "saloon", ignore_case=True)
    assert not says("Booked an estate-car.", "estate", ignore_case=True)


def test_records_come_from_a_list_or_the_longest_list_under_a_key():
    from rft_sdk.doctor._superseded_reads import records_of

    assert records_of('[{"id": 1}, {"id": 2}]') == [{"id": 1}, {"id": 2}]
    assert records_of('{"wall": "W1", "tags": [], "routes": [{"id": "a"}, {"id": "b"}]}') == [{"id": "a"}, {"id": "b"}]
    assert records_of('{"wall": "W1"}') is None
    assert records_of("stripped W1-01") is None


def test_the_selection_rule_takes_a_stated_threshold_then_a_category_then_the_gap():
    from rft_sdk.doctor._superseded_reads import Rule, selection_rule

    routes = [{"id": f"R{k}", "set_on": f"2026-03-{10 + 3 * k:02d}", "colour": ("red", "blue")[k % 2]}
              for k in range(5)]
    stated = selection_rule(routes, {0, 1}, "id", "Strip what was set before the cut-off, 2026-03-15.")
    assert stated == Rule("below", "set_on", "2026-03-15", "date")
    assert [r["id"] for r in routes if stated(r)] == ["R0", "R1"]
    assert selection_rule(routes, {0, 1}, "id", "no date here") == Rule("below", "set_on", "2026-03-16", "date")
    assert selection_rule(routes, {3, 4}, "id", "") == Rule("above", "set_on", "2026-03-16", "date")
    assert selection_rule(routes, {0, 2, 4}, "id", "") == Rule("in", "colour", frozenset({"red"}))
    assert selection_rule(routes, {0, 3}, "id", "") is None  # no field tells them apart
    assert selection_rule(routes, set(range(5)), "id", "") == Rule("all")


def test_a_note_repeated_on_one_items_rows_is_one_value_and_reads_as_prose():
    from rft_sdk.doctor._dataset_probes import item_values, prose_fields

    notes = ["squad training", "swim leg drills", "year nine lessons", "gala warm up", "board practice"]
    items = [{"actions": [{"name": "hold", "arguments": {"slot": f"S{k}{lane}", "note": note}} for lane in (1, 2, 3)]}
             for k, note in enumerate(notes)]
    per_call = {("hold", "note"): [c["arguments"]["note"] for item in items for c in item["actions"]]}
    assert prose_fields(per_call) == set()  # 5 distinct of 15: read as an enum (doctor47's pool lanes)
    assert item_values(items)[("hold", "note")] == notes
    assert prose_fields(item_values(items)) == {("hold", "note")}


def test_a_corrected_day_inside_an_id_is_swapped_in_the_reply_too():
    from rft_sdk.doctor._superseded import SupersededRequest

    item = {"messages": [{"role": "user", "content": "Book 3 shelves on 2026-05-12."},
                         {"role": "assistant", "content": "Noted."},
                         {"role": "user", "content": "Sorry, make that 2026-05-14."}],
            "actions": [{"name": "book_shelves", "arguments": {"firing_id": "F-0514-B", "shelves": 3}}],
            "reference_answer": "Booked 3 shelves in F-0514-B on 2026-05-14."}
    probe = SupersededRequest()
    probe.writes_of = lambda item: [0]  # type: ignore[method-assign]  # the one call writes (no gold replay here)
    assert probe.swap(item) == ("2026-05-14", "2026-05-12")
    assert probe.plan(item)[0][0]["arguments"]["firing_id"] == "F-0512-B"
    assert probe.final_answer(item) == "Booked 3 shelves in F-0512-B on 2026-05-12."
