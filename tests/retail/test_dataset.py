"""The generated retail datasets: hosted format, rendering, determinism."""

from __future__ import annotations

import json
import re

import pytest

from examples.retail import WRITE_TOOLS, mentions
from examples.retail._db import DATA_DIR
from examples.retail.app import server
from examples.retail.build_dataset import write_datasets


def _lines(split):
    return [json.loads(line) for line in (DATA_DIR / f"retail_{split}.jsonl").read_text().splitlines()]


def test_builder_is_byte_identical_to_committed_files(tmp_path):
    paths = write_datasets(tmp_path)
    for split, path in paths.items():
        assert path.read_bytes() == (DATA_DIR / f"retail_{split}.jsonl").read_bytes(), split


def test_items_follow_splits_and_hosted_format(splits, tasks):
    served = {t["function"]["name"] for t in server.dataset_tools()} - {"get_order_status"}
    for split in ("train", "test"):
        items = _lines(split)
        assert [i["task_id"] for i in items] == splits[split]
        for item in items:
            assert [m["role"] for m in item["messages"]] == ["system", "user"]
            assert {t["function"]["name"] for t in item["tools"]} == served
            assert all(t["type"] == "function" and t["function"]["strict"] is True for t in item["tools"])
            gold = tasks[item["task_id"]]["evaluation_criteria"]
            tau2 = [{"name": a["name"], "arguments": a["arguments"]} for a in gold["actions"]]
            added = list(item["actions"])
            for call in tau2:  # τ²-bench's gold is kept, in order; only reads were added
                added = added[added.index(call) + 1:] if call in added else pytest.fail(f"{call} dropped")
            extra = [a for a in item["actions"] if a not in tau2]
            assert not [a for a in extra if a["name"] in WRITE_TOOLS], item["task_id"]
            assert item["communicate_info"] == gold["communicate_info"]
            assert all(mentions(item["reference_answer"], s) for s in item["communicate_info"])
            assert item["max_tool_calls"] == 2 * len(item["actions"]) + 5
            assert {a["name"] for a in item["alternatives"]} >= {"reworded_answer"}


def test_completed_gold_keeps_the_tau2_end_state_and_states_only_returned_facts(base, tasks):
    from examples.retail._evidence import needs_evidence, replay_calls

    for item in _lines("train") + _lines("test"):
        gold = tasks[item["task_id"]]["evaluation_criteria"]
        completed, original = base.view(), base.view()
        outputs = [c.output for c in replay_calls(completed, item["actions"]) if c.output is not None]
        replay_calls(original, gold["actions"])
        assert not completed.diff(original), item["task_id"]
        for fact in filter(needs_evidence, item["communicate_info"]):
            assert any(mentions(out, fact) for out in outputs), (item["task_id"], fact)


def test_alternatives_are_valid_other_paths(base):
    from examples.retail._evidence import AUTH_TOOLS, replay_calls
    from examples.retail._grading import gold_view

    kinds = {}
    for item in _lines("train") + _lines("test"):
        gold = gold_view(item["actions"], base)
        for alt in item["alternatives"]:
            kinds[alt["name"]] = kinds.get(alt["name"], 0) + 1
            view = base.view()
            replay_calls(view, alt["actions"])
            assert not view.diff(gold), (item["task_id"], alt["name"])
            assert alt["actions"] != item["actions"] or "reference_answer" in alt
            if alt["name"].startswith("auth_by_"):
                method = "find_user_id_by_" + alt["name"].removeprefix("auth_by_")
                assert [a["name"] for a in alt["actions"] if a["name"] in AUTH_TOOLS] == [method]
                gold_auth = [a for a in item["actions"] if a["name"] in AUTH_TOOLS]
                assert gold_auth[-1]["name"] != method  # the gold identified the customer the other way
    assert kinds["auth_by_email"] >= 80 and kinds["auth_by_name_zip"] >= 20 and kinds["reordered_writes"] >= 40


def test_user_message_is_first_person_with_identity_and_confirmation(tasks):
    for item in _lines("train") + _lines("test"):
        text = item["messages"][1]["content"]
        known = tasks[item["task_id"]]["user_scenario"]["instructions"]["known_info"]
        for token in re.findall(r"\b\d{5}\b|[\w.]+@example\.com|\b[a-z]+_[a-z]+_\d{4}\b", known):
            assert token in text, (item["task_id"], token)
        assert not re.search(r"\bthe agent\b|\bYou are\b|\byour\b", text), (item["task_id"], text)
        writes = [a for a in item["actions"] if a["name"] in WRITE_TOOLS]
        if writes and "Please:\n" in text:
            assert "Yes, go ahead" in text
        assert "go ahead" in text.lower() or "transfer me" in text
