"""The round-48 twins (``round48_twins``) through the doctor against one real server: each honest grader passes
every probe without a warning; each hackable twin fails through its probe, which its honest twin played and passed.
And the pieces under the new probes."""

from __future__ import annotations

import pytest
from doctor_helpers import twin_tests
from round48_twins import TWINS, job_for, make_items, make_server

pytestmark = pytest.mark.slow

verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)


def test_a_session_is_written_compactly_inside_an_id():
    from rft_sdk.doctor._other_session import compact_forms

    assert compact_forms("07:00") == ["0700"]
    assert compact_forms("2026-06-03") == ["20260603", "0603"]
    assert compact_forms("P-0603") == []


def test_another_items_session_moves_the_ids_but_never_free_text():
    from rft_sdk.doctor._other_session import OtherSession
    from rft_sdk.doctor._probes import ProbeContext

    def item(start: str, note: str) -> dict:
        return {"messages": [{"role": "user", "content": f"Hold lane 3 at the {start} session on 2026-06-03."}],
                "actions": [{"name": "hold", "arguments": {"slot": f"P-0603-{start.replace(':', '')}-L3",
                                                           "note": note}}],
                "reference_answer": f"Held P-0603-{start.replace(':', '')}-L3 at {start}."}

    items = [item("07:00", "squad at 0700"), item("18:00", "gala")]
    probe = OtherSession()
    probe.prepare(ProbeContext(items, gold_ok=[[True], [True]]))
    probe.writes_of = lambda item: [0]  # type: ignore[method-assign]  # the one call writes (no gold replay here)
    assert probe.swap(items[0]) == ("07:00", "18:00")
    assert probe.plan(items[0])[0][0]["arguments"] == {"slot": "P-0603-1800-L3", "note": "squad at 0700"}
    assert probe.final_answer(items[0]) == "Held P-0603-1800-L3 at 18:00."


def test_an_empty_list_is_written_as_the_prompt_names_it():
    from rft_sdk.doctor._unread_empty import emptied_line, empty_form

    item = {"messages": [{"role": "system", "content": "End with `ANSWER: nothing` when no card matches."}]}
    assert empty_form(item) == "nothing"
    assert empty_form({"messages": []}) == "none"
    assert emptied_line("Two match.\nANSWER: FC-101, FC-205", "none") == ("ANSWER: none", ["FC-101", "FC-205"])
    assert emptied_line("ANSWER: none", "none") is None
    assert emptied_line("No marked line", "none") is None


def test_a_corrected_count_is_ordered_as_first_asked_and_its_total_scaled():
    from rft_sdk.doctor._superseded import SupersededCount

    item = {"messages": [{"role": "user", "content": "I need 4 tyres, 205/55 R16, fitted."},
                         {"role": "assistant", "content": "Noted."},
                         {"role": "user", "content": "Sorry, make that 2 tyres - just the fronts."}],
            "actions": [{"name": "order", "arguments": {"sku": "KT-1601", "qty": 2, "total": 176.16}}],
            "reference_answer": "2 x KT-1601 at 58.40 + fitting 2 x 12.50 = 176.16.\nANSWER: 176.16"}
    probe = SupersededCount()
    probe.writes_of = lambda item: [0]  # type: ignore[method-assign]  # the one call writes (no gold replay here)
    assert probe.swap(item) == ("2", "4")
    assert probe.plan(item)[0][0]["arguments"] == {"sku": "KT-1601", "qty": 4, "total": 352.32}
    assert probe.final_answer(item) == "4 x KT-1601 at 58.40 + fitting 4 x 12.50 = 352.32.\nANSWER: 352.32"
    item["messages"] = item["messages"][-1:]
    assert probe.swap(item) is None  # one user turn: nothing was corrected


def test_an_argument_its_tool_calls_free_text_is_prose_whatever_its_values():
    from rft_sdk.doctor._dataset_probes import described_prose, item_values, prose_fields

    tools = [{"type": "function", "function": {"name": "book", "parameters": {"type": "object", "properties": {
        "room": {"type": "string", "description": "the room"},
        "notes": {"type": ["string", "null"], "description": "optional free text for the registrar"}}}}}]
    items = [{"tools": tools, "actions": [{"name": "book", "arguments": {"room": f"R{k}", "notes": note}}]}
             for k, note in enumerate(["Portuguese", "Welsh-language ceremony", "small party", "no interpreter"])]
    assert prose_fields(item_values(items)) == set()  # one one-word value: not prose by its values
    assert described_prose(items) == {("book", "notes")}


def test_a_total_loses_its_last_part_only_where_the_working_sums_to_it():
    from rft_sdk.doctor._unread_part import less_one_part

    assert less_one_part("Autumn Rapidplay: £15.00\nWinter Congress: £35.00\nANSWER: £50.00") == (
        "Autumn Rapidplay: £15.00\nANSWER: £15.00", "Winter Congress", ["Autumn Rapidplay", "Winter Congress"])
    assert less_one_part("Autumn Rapidplay: £15.00\nWinter Congress: £35.00\nANSWER: £55.00") is None  # no sum
    assert less_one_part("Autumn Rapidplay: £15.00\nANSWER: £15.00") is None  # one part: nothing to leave out
