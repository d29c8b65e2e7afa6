"""The doctor on the retail example: the rewritten grader accepts every valid path (the customer
identified by email or by name + zip, extra reads, reordered writes, reworded answers), scores 0 on
every probe (the whole `make doctor` run, once), and the path-matching grader it replaces is caught by the
gradeable principle."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from retail_before import grade_before
from retail_before import server as before_server

from examples.retail import WRITE_TOOLS, grade_retail, load_base_db
from examples.retail._db import DATA_DIR
from examples.retail._evidence import replay_calls
from examples.retail.doctor_job import production_log_from
from rft_sdk.doctor import check_gradeable, check_production_like, default_probes
from rft_sdk.testing import run_server

#: test-split items: the four whose gold changes nothing (2: a transfer, 24: nothing to change,
#: 22/25: information only), then six ordinary ones.
SUBSET = [2, 22, 24, 25, 0, 1, 3, 4, 5, 9]
NO_CHANGE = [2, 22, 24, 25]


def _items(split="test"):
    return [json.loads(line) for line in (DATA_DIR / f"retail_{split}.jsonl").read_text().splitlines()]


def _play(item, actions, answer=None):
    """Run ``actions`` on a fresh view: (overlay, calls with outputs) as the server records them."""
    view = load_base_db().view()
    calls = replay_calls(view, actions)
    return view.overlay, calls, item["reference_answer"] if answer is None else answer


def _grade(item, actions, answer=None, *, before=False):
    overlay, calls, text = _play(item, actions, answer)
    if before:
        return grade_before(item, overlay, text, calls)
    return grade_retail(item, overlay, text, calls=calls)


def test_email_instead_of_name_zip_scores_one_now_and_zero_before():
    items = _items()
    for i in NO_CHANGE:
        alt = next(a for a in items[i]["alternatives"] if a["name"].startswith("auth_by_"))
        assert _grade(items[i], items[i]["actions"]).score == 1.0
        assert _grade(items[i], alt["actions"]).score == 1.0, (i, alt["name"])
        before = _grade(items[i], alt["actions"], before=True)
        assert before.score == 0.0 and any("never called" in r for r in before.reasons), i


def test_every_alternative_of_every_item_scores_one():
    checked = 0
    for item in _items("test") + _items("train"):
        for alt in item["alternatives"]:
            grade = _grade(item, alt["actions"], alt.get("reference_answer"))
            assert grade.score == 1.0, (item["task_id"], alt["name"], grade.reasons)
            checked += 1
    assert checked > 350


def test_the_answer_without_the_work_scores_zero_on_every_item():
    for item in _items():
        grade = _grade(item, [])
        assert grade.score == 0.0, item["task_id"]
    no_change = _items()[24]
    grade = _grade(no_change, [])
    assert grade.subscores["db_match"] == 1.0 and grade.subscores["process"] == 0.0  # the gate alone is vacuous
    assert any("never identified" in r for r in grade.reasons)


def test_facts_must_come_from_this_rollouts_calls():
    item = _items()[22]  # "302.67; 20 hours" from get_order_details / get_product_details
    auth = [a for a in item["actions"] if a["name"].startswith("find_user_id")]
    grade = _grade(item, auth)  # identified, but never read the order
    assert grade.score == 0.0 and any("'302.67', which no tool call" in r for r in grade.reasons)
    made_up = _grade(item, item["actions"], item["reference_answer"] + " Your refund of $123.45 is on its way.")
    assert made_up.score == 0.0 and any("123.45" in r and "rule 7" in r for r in made_up.reasons)
    prompt_figure = _grade(item, item["actions"], item["reference_answer"] + " Zip 77004 noted.")
    assert prompt_figure.score == 1.0  # figures the customer gave are grounded by the prompt


def test_pasting_tool_outputs_or_a_wall_of_text_is_not_an_answer():
    item = _items()[22]  # information only: the answer alone decides
    overlay, calls, _ = _play(item, item["actions"])
    outputs = [c.output for c in calls if c.output]
    for answer in ("\n".join(outputs), max(outputs, key=len), item["reference_answer"] + " " + "x" * 1500):
        grade = grade_retail(item, overlay, answer, calls=calls)
        assert grade.score == 0.0 and any("dump" in r or "pastes" in r for r in grade.reasons), grade.reasons
    quoted = item["reference_answer"] + ' Your order ships to "' + "Houston" + '".'
    assert grade_retail(item, overlay, quoted, calls=calls).score == 1.0  # quoting a value is not a paste


def test_another_customers_trajectory_and_a_missing_transfer_score_zero():
    items = _items()
    donor = items[25]  # information only, another customer
    grade = _grade(items[22], donor["actions"], donor["reference_answer"])
    assert grade.score == 0.0 and any("never identified" in r for r in grade.reasons)
    transfer = items[2]
    without = [a for a in transfer["actions"] if a["name"] != "transfer_to_human_agents"]
    grade = _grade(transfer, without)
    assert grade.score == 0.0 and any("transfer" in r for r in grade.reasons)


def test_empty_answer_and_spam_past_the_declared_budget_score_zero():
    item = _items()[0]
    assert item["max_tool_calls"] == 2 * len(item["actions"]) + 5
    assert _grade(item, item["actions"], "").score == 0.0
    reads = [a for a in item["actions"] if a["name"] not in WRITE_TOOLS]
    at_budget = item["actions"] + reads * 10
    at_budget = at_budget[:item["max_tool_calls"]]
    assert _grade(item, at_budget).score == 1.0
    over = _grade(item, at_budget + reads[:1])
    assert over.score == 0.0 and any("exceed the budget" in r for r in over.reasons)


def test_train_split_stands_for_production_traffic():
    result = check_production_like(_items("test"), production_log_from(_items("train")))
    assert result.passed is True
    assert set(result.evidence["features"]) == {"prompt_tokens", "calls_per_rollout", "tool_mix", "language",
                                                "vocabulary"}


def _job(server, url, items):
    steps = max(len(a["actions"]) for i in items for a in [i, *i["alternatives"]]) + 1
    return server.job_config(url, rate_limit=1000, max_episode_steps=steps)


async def test_the_path_matching_grader_is_caught_by_gradeable():
    items = [_items()[i] for i in SUBSET]
    with run_server(before_server) as url:
        result = await check_gradeable(items, _job(before_server, url, items), replays=1, regrades=1)
    assert result.passed is False
    rejected = {(r["item"], r["path"]) for r in result.evidence["alternatives_rejected"]}
    assert {i for i, path in rejected if path.startswith("auth_by_")} == {SUBSET.index(i) for i in NO_CHANGE}
    assert {i for i, _ in rejected} == {SUBSET.index(i) for i in NO_CHANGE}  # the writing items: end state decides
    assert any("never called" in " ".join(r["reasons"]) for r in result.evidence["alternatives_rejected"])


@pytest.mark.slow
@pytest.mark.timeout(960)  # its subprocess's own bound (900 s) decides first
def test_make_doctor_passes_all_four_principles(tmp_path):
    """``make doctor`` (``python -m examples.retail.doctor_job``) on the 40 test items, as a subprocess."""
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "examples.retail.doctor_job", "--runs-dir", str(tmp_path)],
                          cwd=root, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (path,) = tmp_path.glob("doctor-*/doctor.json")
    report = json.loads(path.read_text())
    assert {n: p["passed"] for n, p in report["principles"].items()} == {
        "gradeable": True, "production_like": True, "learnable": True, "unhackable": True}
    assert report["principles"]["gradeable"]["alternatives_rejected_count"] == 0
    assert report["principles"]["gradeable"]["alternatives_checked"] == 132
    unhackable = report["principles"]["unhackable"]
    probes = {n for n, p in default_probes().items() if not getattr(p, "control", False)}  # controls: no row
    assert unhackable["failed_probes"] == [] and unhackable["warned_probes"] == [] and set(unhackable["probes"]) == probes
    rows = unhackable["probes"]
    ran = {n: r for n, r in rows.items() if r["verdict"] != "skipped"}
    assert all(r["verdict"] == "pass" for r in ran.values()) and len(ran) >= 16
    # what is left is honest partial credit: the end state right and a fact missing earns half the gold,
    # never more (an adversarial answer after the gold's reads states no fact)
    # (other_entity_read plays the item's own right answer after another record's read: judged against its control,
    # the same answer with that read left out, it may rightly earn the gold's score where that read was not the
    # evidence, e.g. a product read beside the order's that returned the same facts; its verdict is checked above)
    assert all(score <= 0.5 for n, r in ran.items()
               if not n.startswith("written_") and n not in ("unparsed_number", "other_entity_read")
               for score in r["rewarded"].values()), {n: r["rewarded"] for n, r in ran.items() if r["rewarded"]}
    assert rows["other_entity_read"]["verdict"] == "pass" and rows["other_entity_read"]["rollouts"] > 0
    # the written_* answers and unparsed_number keep every fact but the figures (3 of 4 facts right earn 0.75),
    # and a figure left out earns the same (written_number_omitted): no more than half-way from it to the gold,
    # and below the gold's whole score (unparsed_number's line)
    assert all(score < 1.0 for score in ran["unparsed_number"]["rewarded"].values())
    assert ran["written_special_number"]["rollouts"] > 0
    assert rows["read_only"]["skipped_items"] == len(NO_CHANGE)  # items 2, 22, 24, 25 need no write
    # items 2 and 24 share their answer (a prior a policy can learn): the shortcut applies there only; items
    # 22 and 25 state their own figures
    assert rows["answer_without_work"]["rollouts"] == 2
    # on 2 (a hand-over) and 24 the gold's work with "OK." earns the gold's score: the answer is not the
    # outcome there, so the adversarial answers are played on 22 and 25 only
    assert unhackable["answer_free_items"] == [2, 24]
    assert rows["adv_special_numbers"]["rollouts"] == 2
