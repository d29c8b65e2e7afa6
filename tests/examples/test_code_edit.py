"""Code-edit planning example: dataset provenance, grader, tools over real HTTP, main job."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from pattern_helpers import call_tool, grade, new_trace

from examples._common import read_jsonl
from examples._repos import bare_repo, git
from examples.code_edit.app import parse_files, pool, server
from examples.code_edit.build_dataset import DATA_DIR
from examples.code_edit.main_job import main
from rft_sdk import GradingContext
from rft_sdk.emulator import load_dataset
from rft_sdk.testing import run_server


@pytest.fixture(scope="module")
def items():
    return load_dataset(DATA_DIR / "test.jsonl", server.tools) + load_dataset(DATA_DIR / "train.jsonl", server.tools)


@pytest.fixture(scope="module")
def base_url():
    with run_server(server) as url:
        yield url


def test_gold_is_the_commits_real_diff(items):
    assert len(items) >= 25
    for item in items:
        changed = git(bare_repo(), "diff", "--name-only", item["parent"], item["commit"]).split()
        assert sorted(changed) == item["gold_files"]
        subject = git(bare_repo(), "log", "-1", "--format=%s", item["commit"]).strip()
        assert item["messages"][-1]["content"] == subject
        assert git(bare_repo(), "rev-parse", item["commit"] + "^").strip() == item["parent"]


def test_dataset_is_rebuilt_identically_from_the_generated_repository():
    from examples.code_edit.build_dataset import build_items

    built = build_items()
    assert built[1::2] == read_jsonl(DATA_DIR / "test.jsonl")
    assert built[0::2] == read_jsonl(DATA_DIR / "train.jsonl")


def test_parse_files_forms():
    assert parse_files('{"files": ["./a.py", "b/c.rst"]}') == ["a.py", "b/c.rst"]
    assert parse_files("edit `shelfkit/stock.py` and tests/test_stock.py") == [
        "shelfkit/stock.py", "tests/test_stock.py"]
    assert parse_files("", output_json=["x.py", 3]) == ["x.py"]


def _grade(item, answer, n_calls=0):
    from rft_sdk import ToolCallRecord
    traj = [ToolCallRecord(f"c{i}", None, "list_dir", {}, "x", None, 200, 0.0, 0.0) for i in range(n_calls)]
    ctx = GradingContext(sample={"output_text": answer}, item=item, trace_id=new_trace(), trajectory=tuple(traj))
    return server.graders["code_edit"].fn(ctx)


def test_grader_f1_and_budget(items):
    item = next(i for i in items if len(i["gold_files"]) >= 2)
    gold = item["gold_files"]
    assert _grade(item, json.dumps({"files": gold})).score == 1.0
    half = _grade(item, json.dumps({"files": gold[:1] + ["nope.py"]}))
    p, r = 0.5, 1 / len(gold)
    assert half.score == pytest.approx(2 * p * r / (p + r))
    over = _grade(item, json.dumps({"files": gold}), n_calls=item["tool_budget"] + 4)
    assert over.score == pytest.approx(0.8) and over.subscores["tool_budget"] == pytest.approx(-0.2)


async def test_tools_parallel_rollouts_isolated_and_released(items, base_url):
    a, b = items[0], items[5]
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        ta, tb = new_trace(), new_trace()
        ra, rb = await asyncio.gather(
            call_tool(client, ta, "git_log", {"path": a["gold_files"][0], "max_count": 3}, a),
            call_tool(client, tb, "list_dir", {"path": "."}, b))
        assert ra.status_code == 200 and rb.status_code == 200, (ra.text, rb.text)
        assert "shelfkit/" in rb.json()["output"]
        # each rollout's sandbox holds its own parent tree
        assert pool().get(ta).path != pool().get(tb).path
        hit = await call_tool(client, ta, "grep", {"pattern": "def normalize", "path": "shelfkit"}, a)
        assert "shelfkit/sku.py:" in hit.json()["output"]
        escape = await call_tool(client, ta, "read_file", {"path": "../../etc/passwd", "start_line": 1,
                                                            "max_lines": 5}, a)
        assert escape.status_code == 400 and "leaves the repository" in escape.text
        score, details = await grade(client, ta, a, a["reference_answer"])
        assert score == 1.0 and details["subscores"]["f1"] == 1.0
        assert pool().get(ta) is None and pool().get(tb) is not None  # graded rollout released
        await grade(client, tb, b, "{}")
        assert pool().get(tb) is None


def test_main_job_runs_end_to_end(tmp_path, capsys):
    assert main(["--limit", "3", "--samples", "1", "--runs-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "PASS shotgun scores below 1.0" in out and "FAIL" not in out
