"""``rft validate`` on the gold fields: each broken variant refused with its line and field, the good
dataset passing with no finding, and the dry run of every gold trajectory against a real server (the
``rft init`` scaffold: SQLite tools, an end-state grader)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from rft_sdk._commands.init import load_app_file, scaffold
from rft_sdk._commands.validate import validate
from rft_sdk.protocol import GoldItem, gold_item_schema

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, list[dict[str, Any]]]:
    root = tmp_path_factory.mktemp("gold") / "task"
    scaffold(root)
    items = [json.loads(line) for line in (root / "train.jsonl").read_text().splitlines()]
    return root, load_app_file(root / "app.py"), items


def check(task: tuple[Path, Any, list[dict[str, Any]]], edit: Any, tmp_path: Path, **options: Any
          ) -> list[tuple[str, tuple[int, ...], str, str]]:
    """Findings ``(severity, lines, field, message)`` of the scaffold's dataset after ``edit(items)``."""
    _, server, items = task
    items = copy.deepcopy(items)
    edit(items)
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    report = validate(path, app=server, **options)
    return [(f.severity, f.lines, f.field, f.message) for f in report.findings]


def fields(found: list[tuple[str, tuple[int, ...], str, str]], severity: str = "error") -> set[tuple[int, str]]:
    return {(lines[0] if lines else 0, field) for sev, lines, field, _ in found if sev == severity}


def test_the_good_dataset_has_no_finding_and_every_gold_is_replayed(task, tmp_path) -> None:
    _, server, items = task
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    report = validate(path, app=server)
    assert report.findings == [] and report.replayed == 10
    assert validate(path, app=server, replay=False).replayed is None
    # an alternative is a trajectory played too, and the summary counts it
    items = copy.deepcopy(items)
    items[0]["alternatives"] = [{"actions": items[0]["actions"]}]
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    assert validate(path, app=server).replayed == 11


@pytest.mark.parametrize(("name", "edit", "expected"), [
    ("actions not a list", lambda it: it[2].update(actions={"name": "get_book"}), (3, "actions")),
    ("unknown tool", lambda it: it[1]["actions"][1].update(name="lend_bok"), (2, "actions[1].name")),
    ("wrong argument name", lambda it: it[3]["actions"][0].update(arguments={"book": "b4"}),
     (4, "actions[0].arguments.book")),
    ("missing reference_answer", lambda it: it[4].pop("reference_answer"), (5, "reference_answer")),
    ("negative budget", lambda it: it[5].update(max_tool_calls=-1), (6, "max_tool_calls")),
    ("misspelt key", lambda it: it[6]["actions"][0].update(argument={}), (7, "actions[0].argument")),
    ("reference_answer not a string", lambda it: it[7].update(reference_answer=["x"]), (8, "reference_answer")),
    ("alternative naming an unknown tool",
     lambda it: it[8].update(alternatives=[{"actions": [{"name": "burn_book", "arguments": {}}]}]),
     (9, "alternatives[0].actions[0].name")),
])
def test_each_broken_gold_field_is_an_error_naming_line_and_field(task, tmp_path, name, edit, expected) -> None:
    found = check(task, edit, tmp_path)
    assert expected in fields(found), (name, found)
    assert all(lines == (expected[0],) for sev, lines, _, _ in found if sev == "error"), found  # only that line


def test_a_wrong_argument_name_suggests_the_right_one_and_names_the_missing_one(task, tmp_path) -> None:
    found = check(task, lambda it: it[3]["actions"][0].update(arguments={"book": "b4"}), tmp_path)
    messages = {field: message for _, _, field, message in found}
    assert "did you mean 'book_id'" in messages["actions[0].arguments.book"]
    assert "required argument 'book_id'" in messages["actions[0].arguments.book_id"]


def test_the_dry_run_refuses_a_gold_call_the_server_refuses(task, tmp_path) -> None:
    found = check(task, lambda it: it[0]["actions"][0].update(arguments={"book_id": 7}), tmp_path)
    assert fields(found) == {(1, "actions[0]")}
    assert "answered 422 invalid_arguments" in found[0][3] and "book_id" in found[0][3]


def test_a_gold_that_does_not_earn_the_full_score_is_an_error(task, tmp_path) -> None:
    found = check(task, lambda it: it[9].update(max_tool_calls=1), tmp_path)  # 2 gold calls, over the budget
    assert fields(found) == {(10, "reference_answer")}
    assert "scored 0, not the full 1" in found[0][3] and "over the budget" in found[0][3]


def _lend_twice(items: list[dict[str, Any]], expect: bool | None = None) -> None:
    again = copy.deepcopy(items[1]["actions"][1])  # b2 has one copy: lending it again is refused
    if expect is not None:
        again["expect_error"] = expect
    items[1]["actions"].append(again)


def test_a_refused_gold_call_warns_by_default_and_is_an_error_when_strict(task, tmp_path) -> None:
    assert task[2][1]["actions"][1]["arguments"]["book_id"] == "b2"
    found = check(task, _lend_twice, tmp_path)
    assert fields(found) == set() and fields(found, "warning") == {(2, "actions[2]")}
    assert "400 tool_error" in found[0][3]
    assert fields(check(task, _lend_twice, tmp_path, strict=True)) == {(2, "actions[2]")}


def test_expect_error_marks_a_call_meant_to_fail(task, tmp_path) -> None:
    assert check(task, lambda it: _lend_twice(it, True), tmp_path, strict=True) == []
    found = check(task, lambda it: it[0]["actions"][0].update(expect_error=True), tmp_path)
    assert fields(found) == set() and fields(found, "warning") == {(1, "actions[0].expect_error")}


def test_lines_without_gold_warn_only(task, tmp_path) -> None:
    def strip(items: list[dict[str, Any]], every: bool) -> None:
        for item in items if every else items[:1]:
            for key in ("actions", "reference_answer", "max_tool_calls", "task_id"):
                item.pop(key)

    none = check(task, lambda it: strip(it, True), tmp_path)
    assert fields(none) == set() and fields(none, "warning") == {(0, "actions")}
    some = check(task, lambda it: strip(it, False), tmp_path)
    assert fields(some) == set() and fields(some, "warning") == {(1, "actions")}


def test_the_cli_exits_1_and_prints_line_call_and_field(task, tmp_path) -> None:
    root, _, items = task
    broken = copy.deepcopy(items)
    broken[3]["actions"][0]["arguments"] = {"book": "b4"}
    (tmp_path / "bad.jsonl").write_text("".join(json.dumps(i) + "\n" for i in broken))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    env.pop("RFT_AUTH_TOKENS", None)
    result = subprocess.run([sys.executable, "-m", "rft_sdk", "validate", str(tmp_path / "bad.jsonl"), "--app",
                             "app:server"], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "error: line 4, field actions[0].arguments.book: gold call 'get_book' passes 'book'" in result.stdout


def test_the_gold_schema_is_one_json_schema_that_matches_the_model(task) -> None:
    schema = gold_item_schema()
    good = task[2][0]
    jsonschema.Draft202012Validator(schema).validate(good)
    GoldItem.model_validate(good)
    for bad in ({**good, "actions": {"name": "x"}}, {**good, "max_tool_calls": -1},
                {**good, "actions": [{"name": "x", "argument": {}}]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
        with pytest.raises(ValueError):
            GoldItem.model_validate(bad)
    assert {"actions", "reference_answer", "alternatives", "max_tool_calls"} <= set(schema["properties"])


def test_the_dry_run_grades_with_the_grader_named(task, tmp_path) -> None:
    root, _, items = task
    server = load_app_file(root / "app.py")  # a fresh server: a grader added here stays here

    @server.grader(name="never")
    def never(ctx) -> float:
        return 0.0

    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    assert validate(path, app=server).findings == []  # the default grader pays the gold
    found = validate(path, app=server, grader="never").findings
    assert [(f.lines, f.field) for f in found] == [(tuple(range(1, 11)), "reference_answer")]  # folded: all 10
    assert "scored 0" in found[0].message


def test_an_unknown_grader_name_is_refused_before_anything_runs(task, tmp_path) -> None:
    root, _, _ = task
    proc = subprocess.run([sys.executable, "-m", "rft_sdk.cli", "validate", "train.jsonl", "--app", "app:server",
                           "--grader", "nope"], cwd=root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{ROOT}"})
    assert proc.returncode == 2 and "--grader: no grader named 'nope'; available:" in proc.stderr, proc.stderr
