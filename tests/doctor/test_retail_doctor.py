"""The doctor on the retail example: the hardened grader holds against every probe,
and the rules that closed the holes the doctor found are pinned at unit level."""

from __future__ import annotations

import json

from examples.retail import WRITE_TOOLS, grade_retail
from examples.retail._db import DATA_DIR
from examples.retail._grading import call_budget, gold_view
from examples.retail.doctor_job import production_log_from
from rft_sdk.doctor import check_gradeable, check_production_like, check_unhackable, default_probes
from rft_sdk.testing import run_server

#: test-split items the old grader gave full or half reward to an empty answer
#: (2: a transfer, 24: nothing to change, 22/25: information only), plus six ordinary ones.
SUBSET = [2, 22, 24, 25, 0, 1, 3, 4, 5, 6]


def _items(split="test"):
    return [json.loads(line) for line in (DATA_DIR / f"retail_{split}.jsonl").read_text().splitlines()]


class _Call:
    def __init__(self, name):
        self.name = name


def _gold_overlay(item):
    return gold_view(item["actions"]).overlay


def test_empty_answer_scored_one_before_and_zero_now():
    item = _items()[24]
    calls = [_Call(a["name"]) for a in item["actions"]]
    assert grade_retail(item, {}, "").score == 1.0  # the old rule (no calls given): the hole the doctor found
    grade = grade_retail(item, {}, "", calls=calls)
    assert grade.score == 0.0 and grade.subscores["process"] == 0.0
    assert any("empty" in r for r in grade.reasons)
    assert grade_retail(item, {}, item["reference_answer"], calls=calls).score == 1.0


def test_task_that_changes_nothing_needs_evidence_of_work():
    item = _items()[2]  # gold: identify, look up, transfer to a human agent
    assert grade_retail(item, {}, "score: 1").score == 1.0  # old rule
    grade = grade_retail(item, {}, "score: 1", calls=[])
    assert grade.score == 0.0 and any("no evidence of work" in r for r in grade.reasons)
    partial = [_Call(a["name"]) for a in item["actions"][:-1]]  # everything but the transfer
    assert grade_retail(item, {}, item["reference_answer"], calls=partial).score == 0.0
    full = [_Call(a["name"]) for a in item["actions"]]
    assert grade_retail(item, {}, item["reference_answer"], calls=full).score == 1.0


def test_tool_call_spam_over_the_budget_scores_zero():
    item = _items()[0]
    n = len(item["actions"])
    assert call_budget(item["actions"]) == 2 * n + 5
    overlay = _gold_overlay(item)
    ok = [_Call(a["name"]) for a in item["actions"]] + [_Call("get_user_details")] * (n + 5)
    assert grade_retail(item, overlay, item["reference_answer"], calls=ok).score == 1.0  # exactly at the budget
    spam = ok + [_Call("get_user_details")]
    grade = grade_retail(item, overlay, item["reference_answer"], calls=spam)
    assert grade.score == 0.0 and any("exceed the budget" in r for r in grade.reasons)


def test_train_split_stands_for_production_traffic():
    result = check_production_like(_items("test"), production_log_from(_items("train")))
    assert result.passed is True
    assert set(result.evidence["features"]) == {"prompt_tokens", "calls_per_rollout", "tool_mix", "language",
                                                "vocabulary"}


async def test_retail_server_is_gradeable_and_unhackable():
    from examples.retail.app import server

    items = [_items()[i] for i in SUBSET]
    probes = default_probes(WRITE_TOOLS)
    del probes["tool_spam"]  # ~50 calls per item; pinned by test_tool_call_spam_over_the_budget_scores_zero
    with run_server(server) as url:
        job = server.job_config(url, rate_limit=1000, max_episode_steps=max(len(i["actions"]) for i in items) + 1)
        gradeable = await check_gradeable(items, job, replays=1, regrades=1)
        unhackable = await check_unhackable(items, job, probes)
    assert gradeable.passed is True, gradeable.findings
    assert gradeable.evidence["gold_below_threshold_share"] == 0.0
    assert unhackable.passed is True, unhackable.findings
    rows = unhackable.evidence["probes"]
    assert {n: r["mean_score"] for n, r in rows.items()} == dict.fromkeys(probes, 0.0)
    assert rows["read_only"]["skipped_items"] == 4  # items 2, 22, 24, 25 need no write
