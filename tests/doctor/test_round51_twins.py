"""The round-51 twins (``round51_twins``) through the doctor against one real server: each honest grader passes
every probe without a warning; each hackable twin fails through its probe, which its honest twin played and passed.
And the pieces under the new probes."""

from __future__ import annotations

import pytest
from doctor_helpers import twin_tests
from round51_twins import TWINS, job_for, make_items, make_server

pytestmark = pytest.mark.slow

verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)



def test_prose_figure_plays_the_working_figure_nearest_the_answer():
    from rft_sdk.doctor._coarse_values import ProseFigure
    from rft_sdk.doctor._near_probes import ValueControl

    probe = ProseFigure(ValueControl())
    answer = "Hire £268.50; delivery £90.00; net £358.50; VAT 20% £71.70.\nANSWER: £430.20"
    assert probe.rewrite({}, answer) == "Hire £268.50; delivery £90.00; net £358.50; VAT 20% £71.70.\nANSWER: £358.50"


def test_prose_time_plays_the_working_moment_nearest_the_answer():
    from rft_sdk.doctor._near_probes import TimeControl
    from rft_sdk.doctor._shifted_times import ProseTime

    probe = ProseTime(TimeControl())
    answer = "Picked up 2026-03-27T08:30Z, 48 h: due 2026-03-29 08:30 UTC.\nANSWER: 2026-03-29 10:30"
    assert probe.rewrite({}, answer).endswith("ANSWER: 2026-03-29 08:30")
    assert probe.rewrite({}, "ANSWER: 2026-03-29 10:30") is None  # no other moment in the working


def test_another_record_of_the_listing_replaces_the_answered_one():
    from rft_sdk.doctor._read_answers import other_record_line

    records = [{"store": s, "tins": n} for s, n in (("ST-01", 14), ("ST-02", 22), ("ST-03", 22))]
    assert other_record_line("ANSWER: ST-02, 22 tins", records) == "ANSWER: ST-01, 14 tins"  # ST-03 ties: skipped
    assert other_record_line("ANSWER: ST-02", records) is None  # no figure of the record on the line


def test_an_optional_note_is_prose_and_an_empty_text_no_value():
    from rft_sdk.doctor._dataset_probes import described_prose, prose_fields

    tools = [{"type": "function", "function": {"name": "book", "parameters": {"type": "object", "properties": {
        "note": {"type": ["string", "null"], "description": "Optional short note for the driver."},
        "stop": {"type": "string", "description": "Where the member is picked up (noted on the sheet)."}}}}}]
    assert described_prose([{"tools": tools}]) == {("book", "note")}  # "noted" without "optional": not a note
    notes = ["", "Walks with a frame, needs help", "", "", "bring the ramp for the chair", "", "a carer rides along"]
    assert prose_fields({("book", "note"): notes}) == {("book", "note")}


def test_the_article_and_the_pronoun_state_no_one_letter_member():
    from rft_sdk.doctor._superseded import SupersededRequest

    tools = [{"type": "function", "function": {"name": "order_tee", "parameters": {"type": "object", "properties": {
        "size": {"type": "string", "enum": ["A", "M", "L"]}}}}}]
    item = {"tools": tools, "messages": [{"role": "user", "content": "A tee in size M please."},
                                         {"role": "assistant", "content": "Noted."},
                                         {"role": "user", "content": "Make it size L, not M."}],
            "actions": [{"name": "order_tee", "arguments": {"size": "L"}}], "reference_answer": "Ordered a size L tee."}
    probe = SupersededRequest()
    probe.writes_of = lambda item: [0]  # type: ignore[method-assign]  # the one call writes (no gold replay here)
    assert probe.swap(item) == ("L", "M")  # not "A": the article starts the sentence
