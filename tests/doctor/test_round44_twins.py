"""The round-44 twins (``round44_twins``) through the doctor against one real server: each honest grader passes
every probe without a warning; each hackable twin fails through its probe, which its honest twin played and passed.
And the pieces under the new probes."""

from __future__ import annotations

import pytest
from doctor_helpers import twin_tests
from round44_twins import TWINS, job_for, make_items, make_server

pytestmark = pytest.mark.slow

verdicts, test_honest_graders_pass_every_probe_without_warnings, \
    test_each_hackable_twin_fails_through_its_probe_and_its_honest_twin_played_it = \
    twin_tests(TWINS, make_server, make_items, job_for)


def test_a_member_is_named_whole_and_in_any_case():
    from rft_sdk.doctor._write_members import _names

    assert _names("Booked a Saloon for P-1.", "saloon")
    assert not _names("Booked two saloons.", "saloon")
    assert not _names("Booked an estate-car.", "estate")
