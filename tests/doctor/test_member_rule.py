"""``own_list_answer`` (``rft_sdk.doctor._member_rule``) on a small set task, at the level of what it plays: the rule is
read from the gold's reads, the list read is made for another entity, and the answer line is what the rule gives
over that list."""

from __future__ import annotations

import json
from typing import Any

from rft_sdk.doctor._member_rule import OwnListAnswer, string_lists
from rft_sdk.doctor._probes import ProbeContext

COVERAGE = {"DO-A": ["LS1", "LS2", "LS3"], "DO-B": ["BD1", "BD2"], "DO-C": ["YO1", "YO2"]}
SACKS = {"SK-1": ("DO-A", [("P-11", "LS1 1AA"), ("P-12", "BD1 2BB"), ("P-13", "LS3 3CC"), ("P-14", "YO2 4DD"),
                           ("P-15", "LS2 5EE")]),
         "SK-2": ("DO-B", [("P-21", "BD1 1AA"), ("P-22", "BD2 2BB")]),
         "SK-3": ("DO-C", [("P-31", "YO1 1AA"), ("P-32", "LS2 2BB"), ("P-33", "YO2 3CC")])}


def _sack(sack: str) -> str:
    depot, parcels = SACKS[sack]
    return json.dumps({"id": sack, "depot": depot, "parcels": [{"parcel": p, "postcode": c} for p, c in parcels]})


def _coverage(depot: str) -> str:
    return json.dumps({"depot": depot, "districts": COVERAGE[depot]})


def _items() -> tuple[list[dict[str, Any]], list[list[str]]]:
    items, outputs = [], []
    for sack, (depot, parcels) in SACKS.items():
        wrong = [p for p, c in parcels if c.split()[0] not in COVERAGE[depot]]
        items.append({"messages": [{"role": "user", "content": f"Which parcels of {sack} are misrouted?"}],
                      "actions": [{"name": "open_sack", "arguments": {"sack_id": sack}},
                                  {"name": "depot_coverage", "arguments": {"depot_id": depot}}],
                      "reference_answer": f"Checked {sack}.\nANSWER: " + (", ".join(wrong) or "none")})
        outputs.append([_sack(sack), _coverage(depot)])
    return items, outputs


def _probe() -> tuple[OwnListAnswer, list[dict[str, Any]]]:
    items, outputs = _items()
    probe = OwnListAnswer(write_tools=set())
    probe.prepare(ProbeContext(items, gold_ok=[[True, True]] * len(items), gold_outputs=outputs, write_tools=set()))
    return probe, items


def test_the_list_read_is_made_for_another_entity_and_the_answer_follows_the_rule():
    probe, items = _probe()
    found = probe.option(items[0])
    assert found is not None and found["argument"] == "depot_id" and found["from"] == "DO-A"
    assert found["rule"] == ("parcel", "postcode", 1, False)  # the first word of the postcode, not in the list
    assert probe.plan(items[0])[1][0]["arguments"] == {"depot_id": found["to"]}
    reply = probe.final_reply(items[0], [_sack("SK-1"), _coverage(found["to"])])
    expected = {"DO-B": "P-11, P-13, P-14, P-15", "DO-C": "P-11, P-12, P-13, P-15"}[found["to"]]
    assert reply == "Checked SK-1.\nANSWER: " + expected


def test_an_empty_set_is_written_as_the_dataset_writes_it_and_a_close_set_is_not_played():
    probe, items = _probe()
    found = probe.option(items[1])  # SK-2: every parcel covered, "none"
    assert found is not None and found["stated"] == "none"
    assert probe.final_reply(items[1], [_sack("SK-2"), _coverage("DO-A")]).endswith("ANSWER: P-21, P-22")
    # a list under which the rule gives the reference's own set (or one close to it): nothing to play
    assert probe.restated(items[0], _coverage("DO-A")) is None


def test_string_lists_are_the_json_lists_of_two_or_more_strings():
    assert string_lists('{"a": ["x", "y"], "b": [["z", "w"]], "c": ["one"], "d": [1, 2]}') == [["x", "y"], ["z", "w"]]
    assert string_lists("not json") == []
