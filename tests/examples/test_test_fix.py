"""Make-the-tests-pass example: templates fail then pass, the grader can't be fooled, the judge layers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import httpx
import pytest
from pattern_helpers import call_tool, grade, new_trace

from examples._repos import package
from examples.test_fix import app
from examples.test_fix._data import code_patch, template_for
from examples.test_fix.build_dataset import DATA_DIR, candidate_tests
from examples.test_fix.main_job import main
from rft_sdk.emulator import load_dataset
from rft_sdk.testing import run_server


@pytest.fixture(scope="module")
def items():
    return load_dataset(DATA_DIR / "test.jsonl", app.server.tools)


@pytest.fixture(scope="module")
def base_url():
    with run_server(app.server) as url:
        yield url


# One interpreter runs pytest over every item's tree in turn (purging the library's and the tests'
# modules in between): a subprocess per run would cost ~1 s of start-up each.
_RUN_ALL = """
import json, os, sys
import pytest
codes = []
for work, ids in json.loads(sys.stdin.read()):
    os.chdir(work)
    sys.path.insert(0, work)
    for name in [m for m in sys.modules if m.split(".")[0] in (PACKAGE, "conftest") or m.startswith("test_")]:
        del sys.modules[name]
    codes.append(int(pytest.main(["-q", "-p", "no:cacheprovider", "--rootdir", work, *ids])))
    sys.path.remove(work)
print("CODES", json.dumps(codes))
"""


def _run_all(runs):
    res = subprocess.run([sys.executable, "-c", _RUN_ALL.replace("PACKAGE", repr(package()))],
                         input=json.dumps(runs), capture_output=True, text=True, timeout=300,
                         env={**os.environ, **app.PYTEST_ENV})
    return json.loads(res.stdout.rsplit("CODES ", 1)[1])


def test_every_items_tests_fail_on_the_template_and_pass_with_the_fix(items, tmp_path):
    every = items + load_dataset(DATA_DIR / "train.jsonl", app.server.tools)
    runs = []
    for item in every:
        before, after = tmp_path / f"{item['commit'][:12]}-before", tmp_path / f"{item['commit'][:12]}-after"
        shutil.copytree(template_for(item), before)
        shutil.copytree(template_for(item), after)
        subprocess.run(["git", "apply", "-"], input=code_patch(item), text=True, cwd=after, check=True)
        runs += [(str(before), item["fail_to_pass"]), (str(after), item["fail_to_pass"])]
    codes = _run_all(runs)
    assert len(codes) == 2 * len(every)
    assert all(c == 1 for c in codes[0::2]), codes  # 1 = tests failed
    assert all(c == 0 for c in codes[1::2]), codes


def test_items_are_real_commits_with_reverted_code(items):
    assert len(items) >= 10
    item = items[0]
    tpl = template_for(item)
    patch = code_patch(item)
    assert patch.startswith("diff --git") and all(f in patch for f in item["code_files"])
    assert set(item["fail_to_pass"]) <= set(
        i for t in item["test_files"] for i in candidate_tests(item["commit"], item["parent"], t))
    assert (tpl / item["test_files"][0]).exists()


async def test_grader_runs_tests_itself_and_layers_the_judge(items, base_url):
    item = min(items, key=lambda i: len(i["fail_to_pass"]))
    patch = next(a for a in item["actions"] if a["name"] == "apply_patch")["arguments"]
    async with httpx.AsyncClient(base_url=base_url, timeout=120) as client:
        # claims success without a change: 0
        t0 = new_trace()
        assert (await call_tool(client, t0, "list_dir", {"path": "."}, item)).status_code == 200
        score, details = await grade(client, t0, item, "All tests pass!")
        assert score == 0.0 and details["subscores"]["tests_pass"] == 0.0
        # rewrites the tests so they pass: the grader restores them, still 0
        t1 = new_trace()
        for f in item["test_files"]:
            r = await call_tool(client, t1, "write_file", {"path": f, "content": "def test_ok():\n    pass\n"}, item)
            assert r.status_code == 200
        run = await call_tool(client, t1, "run_tests", {"target": item["test_files"][0]}, item)
        assert "1 passed" in run.json()["output"]
        assert (await grade(client, t1, item, "done"))[0] == 0.0
        # the real fix, validated: 1.0; the sandbox is gone after grading
        t2 = new_trace()
        for action in item["actions"]:
            r = await call_tool(client, t2, action["name"], action["arguments"], item)
            assert r.status_code == 200, r.text
        assert "All checks passed" in r.json()["output"]  # the last action is the linter
        score, details = await grade(client, t2, item, "fixed")
        assert score == pytest.approx(1.0) and details["subscores"]["self_validation"] == 1.0
        assert app.pool().get(t2) is None
        # the real fix, never checked: gate passes, no bonus
        t3 = new_trace()
        assert (await call_tool(client, t3, "apply_patch", patch, item)).status_code == 200
        t4 = new_trace()
        broken = await call_tool(client, t4, "write_file", {"path": "shelfkit/x.py", "content": "y = z\n"}, item)
        assert broken.status_code == 200
        lint = await call_tool(client, t4, "run_linter", {"path": "shelfkit/x.py"}, item)
        assert "F821" in lint.json()["output"]
        bad = await call_tool(client, new_trace(), "apply_patch", {"patch": "not a diff"}, item)
        assert bad.status_code == 400 and "does not apply" in bad.text
        assert (await grade(client, t3, item, "fixed"))[0] == pytest.approx(0.8)


async def test_tool_spam_scores_zero(items):
    from rft_sdk import GradingContext, ToolCallRecord

    spam = tuple(ToolCallRecord(f"c{i}", None, "run_tests", {}, "ok", None, 200, 0.0, 0.0)
                 for i in range(app.MAX_TOOL_CALLS + 1))
    g = await app.grade_fix(GradingContext(sample={"output_text": "done"}, item=items[0], trace_id=new_trace(),
                                           trajectory=spam))
    assert g.score == 0.0 and g.subscores["tool_budget"] == 0.0 and "exceed the budget" in g.reasons[0]


async def test_self_validation_judge_scores():
    judge = app.SelfValidationJudge()

    def traj(*names):
        return {"trajectory": [{"tool": n, "ok": True} for n in names]}
    assert (await judge.judge(traj("run_tests", "apply_patch", "run_tests", "run_linter"))).score == 1.0
    assert (await judge.judge(traj("apply_patch", "run_tests"))).score == 0.5
    assert (await judge.judge(traj("run_tests", "run_linter", "apply_patch"))).score == pytest.approx(0.2)
    assert (await judge.judge(traj())).score == 0.0
    assert json.loads((await judge.judge(traj("apply_patch"))).model_dump_json())["reasons"] == []


def test_main_job_runs_end_to_end(tmp_path, capsys):
    assert main(["--limit", "1", "--runs-dir", str(tmp_path)]) == 0
    assert "PASS edit the tests scores 0.0" in capsys.readouterr().out
