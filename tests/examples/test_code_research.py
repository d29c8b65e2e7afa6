"""Codebase-research example: facts have provenance, recall grading, tools over real HTTP, main job."""

from __future__ import annotations

import httpx
import pytest
from pattern_helpers import call_tool, grade, new_trace

from examples._repos import template
from examples.code_research import app
from examples.code_research.build_dataset import DATA_DIR
from examples.code_research.main_job import main
from rft_sdk import GradingContext, ToolCallRecord
from rft_sdk.emulator import load_dataset
from rft_sdk.testing import run_server


@pytest.fixture(scope="module")
def items():
    return load_dataset(DATA_DIR / "test.jsonl", app.server.tools)


def test_facts_come_from_the_cited_lines(items):
    for item in items:
        texts = []
        for source in item["facts_source"]:
            path, lines = source.split(":")
            start, end = map(int, lines.split("-"))
            texts.append("\n".join((template(item["commit"]) / path).read_text().splitlines()[start - 1:end]))
        assert item["facts_source"][0].startswith(item["facts"][0] + ":")
        name = item["symbol"].split(".")[-1]
        assert f"def {name}(" in texts[0] or f"class {name}(" in texts[0]
        for fact in item["facts"][1:]:
            assert any(fact.split(".")[-1] in t for t in texts), (item["symbol"], fact)


def test_dataset_is_rebuilt_identically(items):
    from examples.code_research.build_dataset import build_items

    assert build_items()[1::2] == items


def _grade(item, answer, n_calls=0):
    traj = tuple(ToolCallRecord(f"c{i}", None, "search", {}, "x", None, 200, 0.0, 0.0) for i in range(n_calls))
    return app.grade_research(GradingContext(sample={"output_text": answer}, item=item, trace_id=new_trace(),
                                             trajectory=traj))


def test_recall_is_normalised_and_budgeted(items):
    item = next(i for i in items if i["symbol"] == "reorder_point")
    facts = item["facts"]
    shouty = " ".join(f"`{f.upper()}`," for f in facts)
    assert _grade(item, shouty).score == 1.0
    assert _grade(item, " ".join(facts[:1])).score == pytest.approx(1 / len(facts))
    assert _grade(item, facts[0] + "x").subscores["recall"] < 1.0  # whole tokens only
    over = _grade(item, item["reference_answer"], n_calls=item["tool_budget"] + 2)
    assert over.score == pytest.approx(0.9)


async def test_tools_over_http(items):
    item = items[0]
    with run_server(app.server) as url:
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            trace = new_trace()
            found = await call_tool(client, trace, "find_symbol", item["actions"][0]["arguments"], item)
            assert found.status_code == 200 and item["facts"][0] in found.json()["output"]
            bad = await call_tool(client, trace, "find_symbol", {"name": "x; rm -rf /"}, item)
            assert bad.status_code == 400
            score, _ = await grade(client, trace, item, item["reference_answer"])
            assert score == 1.0 and app.pool().get(trace) is None


def test_main_job_runs_end_to_end(tmp_path, capsys):
    assert main(["--limit", "2", "--runs-dir", str(tmp_path)]) == 0
    assert "PASS no research scores below 1.0" in capsys.readouterr().out
