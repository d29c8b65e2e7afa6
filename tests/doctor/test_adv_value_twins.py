"""The adversarial-value twins (``adv_value_twins``) through the doctor against one real server: the honest
graders (an exact fee, a 3 % tolerance on it, a permit graded on the end state only, an exact or 2 %
tolerant card, a band whose gold is a range, days compared after expanding ``"*"`` with golds that are
``"*"`` or every day, NFC or NFKC with case and whitespace folding, a curator's name matched without its
accents) pass every probe without a warning; each hackable twin (a fee band, a figure with an uncertainty,
days matched with ``fnmatch``, ASCII folding, a look-alike skeleton) fails through the probe made for it
(WARNs, for ``adv_ascii_fold``, a shortcut), which the honest twins of its task pass."""

from __future__ import annotations

import pytest
from adv_value_twins import HONEST, TWINS, job_for, make_items, make_server
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts

from rft_sdk.doctor import default_probes
from rft_sdk.doctor._adversarial_values import (
    ascii_folded,
    covering_interval,
    lookalike,
    proper_name,
    wrong_number,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict]:
    """{grader: unhackable evidence}; no write tools given (declared)."""
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if t[1]])
def test_honest_graders_pass_every_probe_without_warnings(verdicts, name):
    assert_quiet(verdicts[name])


@pytest.mark.parametrize("name", [g for g, t in TWINS.items() if not t[1]])
def test_hackable_graders_fail_through_their_probe_which_the_honest_twins_pass(verdicts, name):
    task, _, probe = TWINS[name]
    fired = verdicts[name]["warned_probes" if probe == "adv_ascii_fold" else "failed_probes"]  # a shortcut warns
    assert probe in fired, (fired, verdicts[name]["probes"][probe])
    for honest in HONEST[task]:
        assert verdicts[honest]["probes"][probe]["verdict"] == "pass", verdicts[honest]["probes"][probe]


def test_the_report_says_what_each_probe_played(verdicts):
    wild = verdicts["water_glob"]["probes"]["wildcard_value"]["played"]
    assert wild and all(p["altered"] == "program.days" and p["to"] in (["*"], [".*"], ["%"]) for p in wild.values())
    # the golds that are "*" (items 2 and 7) or every day (item 5) are never played: "*" is right there
    assert not {"2", "5", "7"} & set(wild)
    folded = verdicts["term_ascii"]["probes"]["folded_text"]["played"]
    assert {p["source"] for p in folded.values()} == {"accents stripped", "look-alikes"}
    ranged = verdicts["permit_fee_band"]["probes"]["interval_answer"]["played"]
    assert ranged and all(p["control_score"] == 0.5 for p in ranged.values())
    assert any("EUR" in p["answer"] and "-" in p["answer"] for p in ranged.values())
    # the permit graded on its end state only: the control earns the gold's score, so no interval can beat it
    assert verdicts["permit_only"]["probes"]["interval_answer"]["items"] == []
    # a band whose gold is a range has no single number to widen
    assert verdicts["band_exact"]["probes"]["interval_value"]["verdict"] == "skipped"


def test_folding_a_name_is_honest_and_folding_a_term_only_warns(verdicts):
    # a person named without the accents of the name: never played, the honest folding grader stays quiet
    assert verdicts["curator_folded"]["probes"]["adv_ascii_fold"]["verdict"] == "skipped"
    assert default_probes()["adv_ascii_fold"].intent == "shortcut"
    word = verdicts["word_ascii"]
    assert "adv_ascii_fold" in word["warned_probes"] and "adv_ascii_fold" not in word["failed_probes"]
    assert [proper_name(t) for t in ("Tomás Ibarra", "María de la Cruz", "São Paulo", "écrou de roue",
                                     "Zündkerze vorne", "Zürich")] == [True, True, True, False, False, False]


def test_a_covering_interval_covers_the_value_and_is_centred_elsewhere():
    assert [covering_interval("7.42", k) for k in range(6)] == [
        "14.84 ± 10000", "0-10000", "14.84 +/- 10000", "[0, 10000]", "0..10000", "0 to 10000"]
    assert covering_interval("90.00", 1) == "0-100000" and covering_interval("1,234.5", 0) == "2,469.0 ± 10000000"
    assert covering_interval("0", 0) == "1 ± 10000"  # never the value itself as the centre


def test_a_wrong_number_keeps_the_format_and_is_far_off():
    assert wrong_number("90.00") == "907.00" and wrong_number("7.42") == "81.20" and wrong_number("1,500") == "15,007"


def test_folding_strips_accents_and_lookalikes_swap_latin_letters():
    assert ascii_folded("Zündkerze") == "Zundkerze" and ascii_folded("soupape d'échappement") == "soupape d'echappement"
    assert ascii_folded("Kupplung") is None  # nothing to strip
    swapped = lookalike("Kupplung")
    assert swapped is not None and swapped != "Kupplung" and len(swapped) == len("Kupplung")
    assert swapped.casefold() != "kupplung" and lookalike("123") is None
