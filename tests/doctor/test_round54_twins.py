"""The round-54 twins (``round54_twins``) through the doctor against one real server: each honest grader passes
every probe without a warning; each hackable twin fails through its probe, which its honest twin played and passed.
And the pieces under the new probes."""

from __future__ import annotations

import pytest
from doctor_helpers import twin_tests
from round54_twins import TWINS, job_for, make_items, make_server

pytestmark = pytest.mark.slow

verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)


def test_an_itemized_total_is_split_by_the_records_it_names():
    from rft_sdk.doctor._narrowed_read import itemized_parts

    records = [{"id": "WB-1", "date": "2026-04-06", "kind": "dust"}, {"id": "WB-2", "date": "2026-04-07",
                                                                      "kind": "dust"}]
    total, parts = itemized_parts("2 tickets: WB-1 £10.00 + £2.50 surcharge; WB-2 £7.25.\nANSWER: £19.75", records)
    assert total.group() == "19.75"
    assert parts == {0: ("WB-1", 12.5), 1: ("WB-2", 7.25)}
    # the parts do not add up to the total, or one record only is named: no itemization
    assert itemized_parts("WB-1 £10.00; WB-2 £7.25.\nANSWER: £19.75", records) is None
    assert itemized_parts("WB-1 £10.00.\nANSWER: £10.00", records) is None


def test_the_narrowed_read_ends_a_day_earlier_and_answers_the_days_kept():
    from rft_sdk.doctor._narrowed_read import NarrowedControl, NarrowedReadAnswer
    from rft_sdk.doctor._probes import ProbeContext

    listed = [{"id": "DL-1", "date": "2026-05-04", "pence": 100}, {"id": "DL-2", "date": "2026-05-05", "pence": 200}]
    item = {"messages": [{"role": "user", "content": "What is owed for 4-5 May?"}],
            "actions": [{"name": "list_deliveries", "arguments": {"account_id": "AC-1", "date_from": "2026-05-04",
                                                                  "date_to": "2026-05-05"}}],
            "reference_answer": "DL-1 £1.00; DL-2 £2.00.\nANSWER: £3.00"}
    import json

    context = ProbeContext([item], gold_ok=[[True]], gold_outputs=[[json.dumps(listed)]])
    control = NarrowedControl()
    control.writes_of = lambda item: []  # type: ignore[method-assign]  # no gold replay here
    control.prepare(context)
    assert control.change(item)["control"] == "ANSWER: £1.00"
    probe = NarrowedReadAnswer(control)
    probe.writes_of = control.writes_of  # type: ignore[method-assign]
    probe.prepare(context)
    assert probe.plan(item)[0][0]["arguments"]["date_to"] == "2026-05-04"
    # another read naming the left-out record: reading less would not hide it, so nothing is played
    item2 = {**item, "actions": [*item["actions"], {"name": "get_delivery", "arguments": {"delivery_id": "DL-2"}}]}
    context2 = ProbeContext([item2], gold_ok=[[True, True]], gold_outputs=[[json.dumps(listed), '{"id": "DL-2"}']])
    control.prepare(context2)
    assert control.change(item2) is None


def test_a_json_output_is_read_with_its_non_ascii_escapes_decoded():
    import json

    from rft_sdk.doctor._probes import readable_output

    text = json.dumps({"price": "£2,496.84", "name": "Zoë 😀", "quote": 'a"b\\u00e9', "control": "\x01"})
    assert "\\u00a3" in text  # json.dumps' default escapes the pound sign
    decoded = readable_output(text)
    assert json.loads(decoded) == json.loads(text)  # still the same JSON
    assert '"£2,496.84"' in decoded and "Zoë 😀" in decoded
    assert "\\u0001" in decoded and "\\\\u00e9" in decoded  # ASCII and escaped escapes stay as they were


def test_a_corrected_address_host_or_email_is_played_as_first_asked():
    from rft_sdk.doctor._superseded import SupersededRequest

    def item(first: str, last: str, value: str) -> dict:
        return {"messages": [{"role": "user", "content": first}, {"role": "assistant", "content": "Noted."},
                             {"role": "user", "content": last}],
                "actions": [{"name": "set_record", "arguments": {"name": "shop", "value": value}}],
                "reference_answer": f"shop now points at {value}."}

    probe = SupersededRequest()
    probe.writes_of = lambda item: [0]  # type: ignore[method-assign]  # the one call writes (no gold replay here)
    assert probe.swap(item("Point shop at 10.0.3.7.", "Sorry, 10.0.3.8 instead.", "10.0.3.8")) == ("10.0.3.8",
                                                                                                 "10.0.3.7")
    assert probe.swap(item("Alias it to old.example.com please", "No, to web.example.com.",
                           "web.example.com")) == ("web.example.com", "old.example.com")
    assert probe.swap(item("Send it to ann@example.org", "make that bob@example.org.",
                           "bob@example.org")) == ("bob@example.org", "ann@example.org")
    # a version number is no address
    assert probe.swap(item("Deploy v1.2.3.4 to shop", "No, 10.0.3.8.", "10.0.3.8")) is None


def test_a_written_values_precision_is_read_from_the_prompt_sentence_naming_it():
    from rft_sdk.doctor._near_writes import prompt_precision

    item = {"messages": [{"role": "system", "content": "Record the result and the toe depth to the centimetre. "
                                                       "Quote the fee to the penny."}]}
    assert prompt_precision(item, "toe_depth_m") == 0.01  # centimetres of a value in metres
    assert prompt_precision(item, "fee") == 0.01
    assert prompt_precision(item, "toe_depth_cm") is None  # whole units of its own: no move under one unit
    assert prompt_precision(item, "pile_id") is None  # no sentence names it
    assert prompt_precision(item, "toe_weight_kg") is None  # another dimension


def test_a_user_turn_written_as_a_list_of_parts_is_read_as_its_text():
    from rft_sdk.doctor._superseded import SupersededRequest

    item = {"messages": [{"role": "user", "content": [{"type": "text", "text": "Point shop at 10.0.3.7."}]},
                         {"role": "assistant", "content": "Noted."},
                         {"role": "user", "content": [{"type": "text", "text": "Sorry, 10.0.3.8 instead."}]}],
            "actions": [{"name": "set_record", "arguments": {"name": "shop", "value": "10.0.3.8"}}],
            "reference_answer": "shop now points at 10.0.3.8."}
    probe = SupersededRequest()
    probe.writes_of = lambda item: [0]  # type: ignore[method-assign]  # the one call writes (no gold replay here)
    assert probe.swap(item) == ("10.0.3.8", "10.0.3.7")
