"""The rank twins (``rank_twins``) through the doctor against one real server: the honest graders (the whole
order where the task breaks ties; either order of level teams where it does not) pass every probe without a
warning; the grader that reads only the points down the ranking fails through ``tied_order``. And the ranking
reader under them."""

from __future__ import annotations

import pytest
from doctor_helpers import twin_tests
from rank_twins import TWINS, job_for, make_items, make_server

from rft_sdk.doctor._tied_order import OrderControl, ranked_entries

pytestmark = pytest.mark.slow

verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)


def test_a_ranking_line_is_split_and_only_entries_level_in_the_working_are_swapped():
    reply = "A 9 pts, B 6 pts, C 6 pts, D 3 pts\nRANKING: A > B > C > D"
    assert ranked_entries(reply)[2:] == (">", ["A", "B", "C", "D"])
    control, probe = object.__new__(OrderControl).variants(reply)
    assert control.endswith("RANKING: D > C > B > A") and probe.endswith("RANKING: A > C > B > D")
    assert object.__new__(OrderControl).variants("A 9, B 6, C 3\nRANKING: A > B > C") == (None, None)
    assert ranked_entries("ANSWER: 42") is None
