"""The answer-line twins (``answer_line_twins``) through the doctor against one real server: the honest graders
(the answer line's time and height; 0.5 each) pass every probe without a warning; the hackable one (the time
anywhere in the reply) fails through ``answer_line_only``, which the honest twins pass. And the helper that
finds the marked line only where the prompt names its marker."""

from __future__ import annotations

from typing import Any

import pytest
from answer_line_twins import TWINS, job_for, make_items, make_server
from doctor_helpers import assert_quiet, twin_probes, twin_verdicts

from rft_sdk.doctor._answer_line import marked_line

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, Any]]:
    return twin_verdicts(make_server, make_items, job_for, TWINS, hackable_probes=twin_probes(TWINS))


@pytest.mark.parametrize("name", ["line", "line_partial"])
def test_honest_graders_pass_every_probe_without_warnings(verdicts, name):
    assert_quiet(verdicts[name])
    row = verdicts[name]["probes"]["answer_line_only"]
    assert row["verdict"] == "pass" and row["played"], row  # played, and paid no more than the control


def test_the_time_anywhere_in_the_reply_fails_through_the_answer_line_alone(verdicts):
    ev = verdicts["anywhere"]
    assert "answer_line_only" in ev["failed_probes"], ev["failed_probes"]
    played = ev["probes"]["answer_line_only"]["played"].values()
    for p in played:  # the prose keeps the gold's values; only the answer line changed
        assert p["to"].splitlines()[0] == p["from"].splitlines()[0] and p["to"] != p["from"], p
    assert {p["score"] for p in played} >= {1.0}


def test_the_marked_line_is_found_only_where_the_prompt_names_its_marker():
    reply = "It is at 06:01, 5.9 m.\nANSWER: 06:01, 5.9 m"
    line = marked_line(reply, ["End with one line `ANSWER: HH:MM`."])
    assert line is not None and line["body"] == "06:01, 5.9 m"
    assert marked_line(reply, ["Answer briefly."]) is None  # no marker named: the prose may be the answer
    assert marked_line("Final answer: 42", ["Give your final answer: a number."])["body"] == "42"
