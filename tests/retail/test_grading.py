"""The end-state grader over all 114 τ²-bench retail tasks (pure functions)."""

from __future__ import annotations

import pytest

from examples.retail import WRITE_TOOLS, apply_actions, grade_retail, mentions, normalize_text, reference_answer


def _item(task):
    crit = task["evaluation_criteria"]
    return {"actions": [{"name": a["name"], "arguments": a["arguments"]} for a in crit["actions"]],
            "communicate_info": crit["communicate_info"]}


def test_reference_replay_scores_one_on_every_task(base, tasks):
    assert len(tasks) == 114
    for task in tasks.values():
        item = _item(task)
        view = base.view()
        apply_actions(view, item["actions"])
        grade = grade_retail(item, view.overlay, reference_answer(task), base)
        assert grade.score == 1.0, (task["id"], grade)
        assert grade.subscores == {"db_match": 1.0, "communicate_info": 1.0}


def test_every_dropped_write_scores_by_whether_it_changed_the_end_state(base, tasks, materialize):
    """Expectation from an independent full-database comparison (materialised dicts)."""
    checked = {"changed": 0, "unchanged": 0}
    full_gold = {}
    for task in tasks.values():
        item = _item(task)
        writes = [i for i, a in enumerate(item["actions"]) if a["name"] in WRITE_TOOLS]
        for index in writes:
            kept = item["actions"][:index] + item["actions"][index + 1:]
            view = base.view()
            apply_actions(view, kept)
            if task["id"] not in full_gold:
                gold = base.view()
                apply_actions(gold, item["actions"])
                full_gold[task["id"]] = gold.overlay
            same = materialize(base, view.overlay) == materialize(base, full_gold[task["id"]])
            grade = grade_retail(item, view.overlay, reference_answer(task), base)
            assert grade.score == (1.0 if same else 0.0), (task["id"], index, grade)
            checked["unchanged" if same else "changed"] += 1
    assert checked["changed"] > 100 and checked["unchanged"] >= 1, checked


def test_altered_write_scores_zero(base, tasks):
    task = tasks["17"]  # modify_pending_order_address to Suite 641
    item = _item(task)
    actions = [dict(a, arguments=dict(a["arguments"])) for a in item["actions"]]
    write = next(a for a in actions if a["name"] == "modify_pending_order_address")
    write["arguments"]["address2"] = "Suite 642"
    view = base.view()
    apply_actions(view, actions)
    grade = grade_retail(item, view.overlay, reference_answer(task), base)
    assert grade.score == 0.0 and grade.subscores["db_match"] == 0.0
    assert "orders/#W8665881" in grade.reasons[0]


def test_partial_credit_for_missing_information(base, tasks):
    task = tasks["19"]  # communicate_info: ["54.04", "41.64"]
    item = _item(task)
    view = base.view()
    apply_actions(view, item["actions"])
    half = grade_retail(item, view.overlay, "You save $54.04 that way.", base)
    none = grade_retail(item, view.overlay, "Done.", base)
    full = grade_retail(item, view.overlay, "Savings: 54.04 or 41.64", base)
    assert 0.0 < none.score < half.score < full.score == 1.0
    assert half.subscores["communicate_info"] == 0.5
    assert any("41.64" in r for r in half.reasons)
    wrong_db = grade_retail(item, {}, "Savings: 54.04 or 41.64", base)
    assert wrong_db.score == 0.0


@pytest.mark.parametrize("answer,required,found", [
    ("Your total is $1,234.50.", "1234.5", True),
    ("Your total is 1234.5", "1,234.50", True),
    ("It costs 481.50 dollars", "481.5", True),
    ("There are 10 options.", "10", True),
    ("There are 100 options.", "10", False),
    ("It is 10.5", "10", False),
    ("Paid with your MasterCard", "mastercard", True),
    ("Ships to 943 maple drive", "943 Maple Drive", True),
    ("Tracking: 746342064230", "746342064230", True),
    ("Tracking: 7463420642301", "746342064230", False),
])
def test_mentions_normalises_case_and_numbers(answer, required, found):
    assert mentions(answer, required) is found


def test_normalize_text():
    assert normalize_text("$1,234.50 and 60.00 and 0.10") == "1234.5 and 60 and 0.1"


def test_bad_items_raise():
    with pytest.raises(ValueError, match="actions"):
        grade_retail({"communicate_info": []}, {}, "x")
    with pytest.raises(ValueError, match="communicate_info"):
        grade_retail({"actions": [], "communicate_info": "10"}, {}, "x")


def test_db_match_keeps_tau2s_verdict_when_calls_are_graded(base, materialize):
    """With the rollout's calls given (the server's path), ``db_match`` is still τ²-bench's database
    verdict on the gold and on every one-write-dropped sequence, and the score follows it."""
    import json

    from examples.retail._db import DATA_DIR
    from examples.retail._evidence import replay_calls

    checked = {"changed": 0, "unchanged": 0}
    for split in ("train", "test"):
        for line in (DATA_DIR / f"retail_{split}.jsonl").read_text().splitlines():
            item = json.loads(line)
            gold = base.view()
            replay_calls(gold, item["actions"])
            writes = [i for i, a in enumerate(item["actions"]) if a["name"] in WRITE_TOOLS]
            for index in [None, *writes]:
                kept = [a for i, a in enumerate(item["actions"]) if i != index]
                view = base.view()
                calls = replay_calls(view, kept)
                same = materialize(base, view.overlay) == materialize(base, gold.overlay)
                grade = grade_retail(item, view.overlay, item["reference_answer"], base, calls=calls)
                assert grade.subscores["db_match"] == (1.0 if same else 0.0), (item["task_id"], index)
                if not same:
                    assert grade.score == 0.0
                elif index is None:
                    assert grade.score == 1.0, (item["task_id"], grade.reasons)
                if index is not None:
                    checked["unchanged" if same else "changed"] += 1
    assert checked["changed"] > 100 and checked["unchanged"] >= 1, checked
