"""The round-66 twins (``round66_twins``) through the doctor against one real server: each honest grader passes
every probe without a warning; each hackable twin fails through its probe, which its honest twin played and passed.
And the pieces under the probes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from doctor_helpers import gold_replays, twin_tests
from round66_twins import TWINS, job_for, kennel_bill, make_items, make_server, pounds, scrap_payout

pytestmark = pytest.mark.slow

verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)


def test_every_gold_pays_full_marks_on_both_twins() -> None:
    scores = {grader: replay.scores for grader, (_, replay) in gold_replays(TWINS, make_server, make_items,
                                                                             job_for).items()}
    assert all(s == [1.0] * 10 for s in scores.values()), scores


def test_usage_honest_passes_wrong_answer_on_items_whose_donor_shares_an_entry(verdicts: Mapping[str, Any]) -> None:
    """The honest set-F1 grader played ``wrong_answer`` and passed it; the items whose donor's marked line shares an
    entry with theirs (prose before each ``ANSWER:`` line) were left unjudged, not failed (doctor68's royalty set)."""
    row = verdicts["usage_honest"]["probes"]["wrong_answer"]
    assert row["verdict"] == "pass" and row["rollouts"] > 0, row
    assert any("partly" in reason for reason in row["skip_reasons"]), row["skip_reasons"]


def test_sibling_read_answer_read_the_same_photographers_other_month(verdicts: Mapping[str, Any]) -> None:
    played = verdicts["usage_any_month"]["probes"]["sibling_read_answer"]["played"]
    reads = {row["read"] for row in played.values()}
    assert reads == {"get_usage_report.month"}, played


def test_named_listed_choice_played_the_newsletters_other_list(verdicts: Mapping[str, Any]) -> None:
    played = verdicts["sends_any_list"]["probes"]["named_listed_choice"]["played"]
    assert played and all(row["from"].startswith("ML-") and row["to"].startswith("ML-") and row["to"] != row["from"]
                          and row["from"].split("-")[1] == row["to"].split("-")[1] for row in played.values()), played


# --- the pieces under the probes -------------------------------------------------------------------------------


def test_answers_overlap_reads_the_marked_line_of_each_answer() -> None:
    from rft_sdk.doctor._generic import answers_overlap

    mine = "Lena Ortiz's report for 2026-01 lists 5 usages; past their licence: IMG-2102, IMG-2105.\n" \
           "ANSWER: IMG-2102, IMG-2105"
    donor = "Lena Ortiz's report for 2026-02 lists 5 usages; past their licence: IMG-2105.\nANSWER: IMG-2105"
    assert answers_overlap(mine, donor) and answers_overlap(donor, mine)
    # the prose names an image the line does not: only the line counts
    assert not answers_overlap("Report: IMG-2105 renewed; past licence: IMG-2108.\nANSWER: IMG-2108, IMG-2109",
                               "Past licence: IMG-2105.\nANSWER: IMG-2105, IMG-2110")
    # the last marked line is the answer
    assert answers_overlap("ANSWER: IMG-2101\nChecked again.\nANSWER: IMG-2104, IMG-2105", "ANSWER: IMG-2105")
    # one element each: equal answers, no list
    assert not answers_overlap("Every one licensed.\nANSWER: none", "All licensed.\nANSWER: none")


def test_undeducted_figure_works_the_answer_out_on_the_minuend() -> None:
    from rft_sdk.doctor._answer_numbers import UndeductedFigure

    probe = UndeductedFigure()

    def candidates(answer: str) -> list[str]:
        return probe.candidates({"reference_answer": answer})

    # a rate after the product: the surcharge kept as a ratio, on the gross weight
    haulage = "net 27.44 t (41.62 - 14.18) x £4.85/t = £133.08; plus 4.5% fuel surcharge = £139.07.\nANSWER: £139.07"
    assert candidates(haulage) == ["210.94"]
    # extras added after the product: every night charged, the extras as they are
    respite = "5 nights in band B, 2 funded; 3 nights at £142.50 = £427.50; extras £27.50.\nANSWER: £455.00"
    assert candidates(respite) == ["740.00"]
    # this module's shapes
    scrap = ("Copper: net 1,070 kg (1,285 - 215) x £5.62/kg = £6,013.40; less 2.5% handling = £5,863.07.\n"
             "ANSWER: £5,863.07")
    assert candidates(scrap) == ["7,041.16"]
    kennel = "Juno: 5 nights, 1 prepaid; 4 nights at £42.00 = £168.00; extras £0.00.\nANSWER: £168.00"
    assert candidates(kennel) == ["210.00"]
    # a product with no difference before it: nothing deducted, nothing to undo
    assert candidates("27.44 t x £4.85/t = £133.08; plus 4.5% fuel surcharge = £139.07.\nANSWER: £139.07") == []
    assert candidates("3 nights at £142.50 = £427.50; extras £27.50.\nANSWER: £455.00") == []
    # a difference never multiplied: no product of it
    assert candidates("Paid £600.00 of £742.50, so £142.50 is due.\nANSWER: £142.50") == []
    # on every item of the two tasks, the first candidate is the value the hackable twin also pays
    server = make_server()
    for item in make_items(server, "scrap"):
        assert "£" + probe.candidates(item)[0] == pounds(scrap_payout(item["ticket_id"], "gross")[1]), item
    for item in make_items(server, "kennel"):
        assert "£" + probe.candidates(item)[0] == pounds(kennel_bill(item["stay_id"], every_night=True)), item
    # an alternative listing the undeducted value: not played
    assert probe.candidates({"reference_answer": respite,
                             "alternatives": [{"reference_answer": "Every night.\nANSWER: £740.00"}]}) == []


def test_omitted_part_adds_back_one_deduction_from_the_last_listed() -> None:
    from rft_sdk.doctor._answer_numbers import OmittedPart

    probe = OmittedPart()
    grant = ("Award £885,000.00 less overhead £177,000.00 (20%) less spend £50,055.11 less open commitments "
             "£33,706.20 leaves £624,238.69.\nANSWER: £624,238.69")
    assert probe.candidates({"reference_answer": grant}) == ["657,944.89", "674,293.80", "801,238.69"]
    training = ("Budget £64,000.00 less central recharge £9,600.00 (15%) less spent £21,418.35 less booked courses "
                "£7,260.00 leaves £25,721.65.\nANSWER: £25,721.65")
    assert probe.candidates({"reference_answer": training})[0] == "32,981.65"  # the booked courses left in
    # figures that neither add up to the answer nor leave it as the largest less the others: nothing
    assert probe.candidates({"reference_answer": "Award £885,000.00 less overhead £177,000.00 leaves £600,000.00.\n"
                                                 "ANSWER: £600,000.00"}) == []
    # the parts of a total still play the total less one part
    batch = "raw €18,620.00, labour €2,145.00, energy €494.50, levy €512.50; total €21,772.00.\nANSWER: €21,772.00"
    assert probe.candidates({"reference_answer": batch}) == ["21,259.50", "21,277.50", "19,627.00", "3,152.00"]


def _usage(photographer: str, month: str, answer: str) -> dict[str, Any]:
    return {"actions": [{"name": "get_usage_report", "arguments": {"photographer_id": photographer, "month": month}}],
            "reference_answer": answer}


def test_sibling_read_control_reads_another_months_report_and_answers_an_overlapping_donor_first() -> None:
    from rft_sdk.doctor._probes import ProbeContext
    from rft_sdk.doctor._sibling_read import SiblingReadAnswer, SiblingReadControl

    items = [_usage("PH-21", "2026-01", "Two past licence.\nANSWER: IMG-2102, IMG-2105"),
             _usage("PH-22", "2026-01", "One.\nANSWER: IMG-2203"),  # another photographer, the same month
             _usage("PH-21", "2026-02", "One.\nANSWER: IMG-2105"),  # the same photographer, overlapping
             _usage("PH-21", "2026-03", "Same as January.\nANSWER: IMG-2102, IMG-2105"),  # the same answer: no donor
             _usage("PH-23", "2026-05", "None.\nANSWER: none")]
    control = SiblingReadControl()
    control.prepare(ProbeContext(items))
    # the overlapping donor (item 2) comes before the lower-indexed disjoint one (item 1); item 3's answer is this
    # item's own, so it is no donor
    assert control.change(items[0]) == {"position": 0, "tool": "get_usage_report", "argument": "month",
                                        "from": "2026-01", "control": None, "probe": "2026-02", "donor": 2,
                                        "positions": [0]}
    assert control.plan(items[0]) == [] and control.final_answer(items[0]) == items[2]["reference_answer"]
    # no donor overlaps item 1's: the first one-apart read of another item with another answer (the photographer)
    assert control.change(items[1])["argument"] == "photographer_id" and control.change(items[1])["donor"] == 0
    # item 4's read is two arguments apart from every other: nothing to play
    assert control.change(items[4]) is None
    probe = SiblingReadAnswer(control)
    probe.prepare(ProbeContext(items))
    assert probe.plan(items[0]) == [[{"name": "get_usage_report",
                                      "arguments": {"photographer_id": "PH-21", "month": "2026-02"}}]]
    assert probe.final_answer(items[0]) == items[2]["reference_answer"]
    # an item whose gold writes is no such item
    write = {"actions": [*items[0]["actions"], {"name": "flag_usage", "arguments": {"image_id": "IMG-2102"}}],
             "reference_answer": "Flagged."}
    control.prepare(ProbeContext([write, *items[1:]], write_tools={"flag_usage"}))
    assert control.change(write) is None
