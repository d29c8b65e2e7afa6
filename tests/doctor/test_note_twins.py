"""The note twins (``note_twins``) through the doctor against one real server: the honest grader (the note holds
the diet asked for) passes every probe without a warning; the hackable one (*a* note exists) fails through
``unread_note``, which the honest twin passes. (A grader that ignores the note altogether pays a note on another
pet, and ``altered_writes`` fails it: the user asked for the note.)"""

from __future__ import annotations

from typing import Any

import pytest
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts
from note_twins import TWINS, job_for, make_items, make_server

from rft_sdk.doctor._requested_note import NEUTRAL_NOTE, requested_words

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, Any]]:
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


def test_a_grader_reading_the_note_passes_with_the_probe_played(verdicts):
    assert_quiet(verdicts["diet_read"])
    row = verdicts["diet_read"]["probes"]["unread_note"]
    assert row["verdict"] == "pass" and row["played"], row
    assert all(p["to"] == NEUTRAL_NOTE and p["score"] == 0.0 for p in row["played"].values())


def test_a_grader_that_only_needs_a_note_fails_through_the_unread_note(verdicts):
    ev = verdicts["note_exists"]
    assert "unread_note" in ev["failed_probes"], ev["failed_probes"]
    played = ev["probes"]["unread_note"]["played"].values()
    assert played and all(p["judged"] and p["score"] == 1.0 for p in played)  # the note dropped scored less


def test_requested_words_are_the_users_own():
    assert requested_words("grain-free diet", "Biscuit is on a grain-free diet, please note it.") \
        == {"grain-free", "diet"}
    assert requested_words("anxious around cats", "Please board Rex for 3 nights.") == set()
