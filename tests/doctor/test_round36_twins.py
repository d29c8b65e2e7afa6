"""The round-36 twins (``round36_twins``) through the doctor against one real server: each honest grader passes
every probe without a warning; each hackable twin fails through its probe, which its honest twin played and passed.
And the pieces under the new probes."""

from __future__ import annotations

import pytest
from doctor_helpers import twin_tests
from round36_twins import TWINS, job_for, make_items, make_server

from rft_sdk.doctor._missing_one import less_last_listed
from rft_sdk.doctor._near_writes import integer_moves
from rft_sdk.doctor._skipped_fee import deducted_amounts
from rft_sdk.doctor._superseded import _corrected_parts
from rft_sdk.doctor._utc_clock import stated_offset

pytestmark = pytest.mark.slow

verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)


def test_a_listed_answer_loses_its_last_element_only_with_three_or_more():
    assert less_last_listed("4 due.\nANSWER: A1, B2, C3, D4") == ("4 due.\nANSWER: A1, B2, C3", "D4", 4)
    assert less_last_listed("ANSWER: A1, B2") is None
    assert less_last_listed("no marked line: A1, B2, C3") is None


def test_offsets_fees_corrections_and_integer_moves_are_read_as_stated():
    assert stated_offset(['{"utc_offset": "+05:30"}']) == 330
    assert stated_offset(["Opens 09:00 UTC-05:00"]) == -300
    assert stated_offset(["no offset here, 14:00 local"]) is None
    assert deducted_amounts(["Refund less an admin fee of £10.00.", "Price £250.00"]) == [10.0]
    assert deducted_amounts(["Price £250.00, paid in full"]) == []
    before, after = _corrected_parts("at 10:30 local - no, sorry, make that 14:00 local")[0]
    assert "10:30" in before and "14:00" in after and "10:30" not in after
    assert _corrected_parts("No power needed; start at 10:30 local, 14:00 at the latest") == []  # "no" ends no request
    assert integer_moves(30000, False) == (30901, 39010) and integer_moves(999, False) is None
