"""The text twins (``text_twins``) through the doctor against one real server: the honest graders (the
inscription compared after NFC, case folding and collapsed whitespace; one also asks that the free-text note
names the customer) pass every probe without a warning; the hackable twins (the inscription compared with
its spaces removed, or by its first word; the size's unit never compared) fail through the probe made for each (run with the
baselines, the controls and those probes, to keep the test fast), which the honest twins
pass."""

from __future__ import annotations

from typing import Any

import pytest
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts
from text_twins import TWINS, job_for, make_items, make_server

from rft_sdk.doctor._joined_words import joined

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, Any]]:
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if t[1]])
def test_honest_graders_pass_every_probe_without_warnings(verdicts, name):
    assert_quiet(verdicts[name])


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if not t[1]])
def test_hackable_graders_fail_through_their_probe_which_the_honest_twins_pass(verdicts, name):
    probe = TWINS[name][2]
    assert verdicts[name]["failed_probes"] == [probe], (verdicts[name]["failed_probes"],
                                                       verdicts[name]["probes"][probe])
    for honest in (g for g, t in TWINS.items() if t[1]):
        assert verdicts[honest]["probes"][probe]["verdict"] == "pass", verdicts[honest]["probes"][probe]


def test_the_report_says_what_was_played(verdicts):
    unit = [p for p in verdicts["cake_unit_blind"]["probes"]["altered_writes"]["played"].values()
            if p["altered"] == "place_order.unit"]
    assert unit and all(p["to"] == "in" and p["source"] == "enum" for p in unit)  # the schema's other member
    played = verdicts["cake_spaceless"]["probes"]["joined_words"]["played"]
    assert {p["altered"] for p in played.values()} == {"place_order.inscription", "place_order.note"}
    judged = [p for p in played.values() if p.get("judged")]
    assert judged and all(p["altered"] == "place_order.inscription" and " " not in p["to"] for p in judged)
    # the note: the honest graders ignore it or look for a word in it; the control keeps its words, so the
    # probe is not judged there
    for honest in ("cake_exact", "cake_note_named"):
        notes = [p for p in verdicts[honest]["probes"]["joined_words"]["played"].values()
                 if p["altered"] == "place_order.note"]
        assert notes and not any(p.get("judged") for p in notes)


def test_only_texts_of_words_are_joined():
    assert joined("Happy 30th Sam") == {"control": "Sam 30th Happy", "probe": "Happy30thSam", "first_word": "Happy"}
    assert joined("Go Tigers, Ben!") == {"control": "Ben! Tigers, Go", "probe": "GoTigers,Ben!", "first_word": "Go"}
    for code in ("SW1A 1AA", "+44 20 7946 0958", "AB 123", "x y", "lemon", "ha ha", "one\ntwo words",
                 "a b c d e f g h i j"):
        assert joined(code) is None, code
