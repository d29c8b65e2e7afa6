"""The round-63 twins (``round63_twins``) through the doctor against one real server: each honest grader passes
every probe without a warning; each hackable twin fails through its probe, which its honest twin played and passed.
And the pieces under the probes."""

from __future__ import annotations

import pytest
from doctor_helpers import twin_tests
from round63_twins import TWINS, job_for, make_items, make_server

pytestmark = pytest.mark.slow

verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)


def _item(system: str, answer: str) -> dict:
    return {"messages": [{"role": "system", "content": system}, {"role": "user", "content": "Where does SA-7700 stand?"}],
            "reference_answer": answer}


def test_the_answer_lines_word_is_swapped_for_another_the_prompts_templates_offer():
    from rft_sdk.doctor._answer_line import other_stated_word

    answer = "Tax due is £1,830.00 and £2,054.32 was paid, so £224.32 comes back.\nANSWER: REFUND £224.32"
    swapped = "Tax due is £1,830.00 and £2,054.32 was paid, so £224.32 comes back.\nANSWER: OWED £224.32"
    # two templates joined by "or"
    either = "End with one line `ANSWER: REFUND £amount` or `ANSWER: OWED £amount`."
    assert other_stated_word(_item(either, answer), answer) == [swapped]
    # one template with alternatives
    alternatives = "End with one line `ANSWER: (REFUND|OWED) £amount`."
    assert other_stated_word(_item(alternatives, answer), answer) == [swapped]
    assert other_stated_word(_item(alternatives, "x\nANSWER: OWED £57.10"), "x\nANSWER: OWED £57.10") == [
        "x\nANSWER: REFUND £57.10"]
    # the reference's word is no template word: nothing to swap
    due = "x\nANSWER: DUE £57.10"
    assert other_stated_word(_item(either, due), due) == []
    # a template offering one word only: no other to swap in
    single = "End with one line `ANSWER: REFUND £amount`."
    assert other_stated_word(_item(single, answer), answer) == []


def test_only_a_ranking_gets_the_excluded_entry_at_its_end():
    from rft_sdk.doctor._excluded_entry import excluded_entry_line

    listing = ('{"office_id": "TO-11", "filers": [{"taxpayer_id": "T-4100", "penalty_gbp": 100}, '
               '{"taxpayer_id": "T-4101", "penalty_gbp": 620}, {"taxpayer_id": "T-4102", "penalty_gbp": 1140}]}')
    ranking = "Over it: T-4102 £1,140, T-4101 £620.\nANSWER: T-4102 > T-4101"
    assert excluded_entry_line(ranking, [listing], at_end=True) == (
        "Over it: T-4102 £1,140, T-4101 £620.\nANSWER: T-4102 > T-4101 > T-4100")
    assert excluded_entry_line(ranking, [listing]) == "Over it: T-4102 £1,140, T-4101 £620.\nANSWER: T-4100 > T-4102 > T-4101"
    # a comma list is no ranking: nothing at its end (in front, as excluded_entry plays it)
    listed = "Over it: T-4102 and T-4101.\nANSWER: T-4102, T-4101"
    assert excluded_entry_line(listed, [listing], at_end=True) is None
    assert excluded_entry_line(listed, [listing]) == "Over it: T-4102 and T-4101.\nANSWER: T-4100, T-4102, T-4101"
    # no read lists another entry: nothing to add
    assert excluded_entry_line(ranking, ['{"filers": [{"taxpayer_id": "T-4102"}, {"taxpayer_id": "T-4101"}]}'],
                               at_end=True) is None
