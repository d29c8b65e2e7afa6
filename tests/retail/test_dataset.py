"""The generated retail datasets: hosted format, rendering, determinism."""

from __future__ import annotations

import json
import re

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
            assert item["actions"] == [{"name": a["name"], "arguments": a["arguments"]} for a in gold["actions"]]
            assert item["communicate_info"] == gold["communicate_info"]
            assert all(mentions(item["reference_answer"], s) for s in item["communicate_info"])


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
