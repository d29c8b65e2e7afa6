"""``rft_sdk.answer_line``: the body of a reply's last marked line, and ``None`` wherever the reply commits to no
one answer (no marked line, marked lines that disagree, an empty one); then a grader using it on a real server."""

from __future__ import annotations

import pytest

from rft_sdk import GradingContext, ToolServer, answer_line
from rft_sdk.testing import TestClient


@pytest.mark.parametrize(("text", "body"), [
    ("ANSWER: yes", "yes"),
    ("I checked the book.\nANSWER: no", "no"),
    ("  answer :\tYes  ", "Yes"),                                # case of the marker, spaces; the body's case kept
    ("**ANSWER:** 06:01, 5.9 m", "06:01, 5.9 m"),                # bold around the marker
    ("**ANSWER**: 06:01", "06:01"),
    ("**ANSWER: 06:01**", "06:01"),                              # the whole line bold
    ("ANSWER: **06:01**", "06:01"),                              # the body bold
    ("ANSWER:**06:01**", "06:01"),
    ("ANSWER: Yes.", "Yes"),                                     # one trailing period
    ("ANSWER: 3.", "3"),
    ("ANSWER: **yes.**", "yes"),
    ("ANSWER: 3.5", "3.5"),
    ("ANSWER: wait...", "wait.."),                               # one period only
    ("ANSWER: **a** and **b**", "**a** and **b**"),              # several bold parts: kept as written
    ("ANSWER: 5\nsome prose\n**Answer:** 5.", "5"),              # marked lines that agree: the last one's body
    ("ANSWER: Dune\nANSWER: dune", "dune"),                      # case folded to compare
    ("ANSWER: 10  km\nANSWER: 10 km", "10 km"),                  # whitespace runs collapsed to compare
    ("ANSWER: 1\r\nANSWER: 1\r\n", "1"),
])
def test_the_body_of_the_last_marked_line(text: str, body: str) -> None:
    assert answer_line(text) == body


@pytest.mark.parametrize("text", [
    "",
    "The answer is yes.",                                        # no marked line
    "The ANSWER: yes",                                           # the marker must start the line
    "- ANSWER: yes",
    "> ANSWER: yes",
    "## ANSWER: yes",
    "ANSWERS: yes",                                              # another word
    "ANSWER = yes",                                              # no colon
    "ANSWER - yes",
    "**ANSWER: yes",                                             # unbalanced bold
    "ANSWER**: yes",
    "**ANSWER**:** yes",
    "ANSWER:",                                                   # an empty body
    "**ANSWER:**",
    "ANSWER: .",
    "ANSWER: yes\nANSWER: no",                                   # marked lines that disagree
    "ANSWER: no\nANSWER: yes",
    "ANSWER: 06:01\nprose\n**ANSWER:** 06:02",
    "ANSWER:\nANSWER: yes",                                      # an empty one disagrees with any other
    "ANSWER: yes\nANSWER:",
])
def test_none_where_the_reply_commits_to_no_one_answer(text: str) -> None:
    assert answer_line(text) is None


def test_another_marker() -> None:
    assert answer_line("FINAL   answer: 12", marker="Final answer") == "12"
    assert answer_line("ANSWER: 12", marker="Final answer") is None
    assert answer_line("PAYOUT: 3182.28\nANSWER: 1", marker="PAYOUT") == "3182.28"
    assert answer_line("A.B: x", marker="A.B") == "x" and answer_line("AxB: x", marker="A.B") is None  # escaped


@pytest.mark.parametrize("marker", ["", "  ", "ANSWER:", "ANS\nWER"])
def test_a_marker_with_a_colon_or_a_line_break_or_nothing_is_refused(marker: str) -> None:
    with pytest.raises(ValueError, match=r"marker must be the word\(s\) before the colon.*marker='ANSWER'"):
        answer_line("ANSWER: x", marker=marker)


def test_text_that_is_not_a_string_is_refused() -> None:
    with pytest.raises(TypeError, match="got NoneType and str: pass the reply's text"):
        answer_line(None)  # type: ignore[arg-type]


def test_a_grader_using_it_scores_zero_when_the_reply_commits_to_no_one_answer() -> None:
    server = ToolServer(auth_env_var=None)

    @server.grader
    def exact(ctx: GradingContext) -> float:
        body = answer_line(ctx.output_text)
        return float(body is not None and body.lower() == ctx.item["expected"])

    item = {"messages": [{"role": "user", "content": "Is Dune available? End with ANSWER: yes or ANSWER: no."}],
            "expected": "yes"}
    with TestClient(server) as client:
        scores = [client.grade(None, reply, item=item).score for reply in (
            "It is on the shelf.\n**ANSWER:** Yes.", "ANSWER: no", "ANSWER: no\nANSWER: yes", "Yes, it is.")]
    assert scores == [1.0, 0.0, 0.0, 0.0]
