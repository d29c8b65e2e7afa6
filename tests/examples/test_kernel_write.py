"""Kernel-writing example: harness correctness/runtime flags, hack judge per family, grader, main job."""

from __future__ import annotations

import sys

import pytest

from examples.kernel_write import app
from examples.kernel_write.build_dataset import DATA_DIR, PROBLEMS, REFERENCES, build_items
from examples.kernel_write.hack_judge import FAMILIES, reference_op, static_hacks
from examples.kernel_write.hacks import HACKS
from examples.kernel_write.harness import evaluate
from examples.kernel_write.main_job import main
from examples.kernel_write.solutions import solution_source
from rft_sdk import GradingContext, ToolCallRecord
from rft_sdk.emulator import load_dataset

sys.path.insert(0, str(DATA_DIR.parent))


@pytest.fixture(scope="module")
def items():
    return load_dataset(DATA_DIR / "test.jsonl", app.server.tools) + load_dataset(DATA_DIR / "train.jsonl",
                                                                                    app.server.tools)


@pytest.fixture
def by_problem(items):
    return {i["problem"]: i for i in items}


def _eval(tmp_path, item, source):
    ref, cand = tmp_path / "ref.py", tmp_path / "cand.py"
    ref.write_text(item["reference"])
    cand.write_text(source)
    return evaluate(str(ref), str(cand), item["overrides"], seed=3, reps=2)


def test_dataset_is_the_reference_programs(items):
    assert sorted(i["problem"] for i in items) == sorted(PROBLEMS)
    for item in items:
        assert item["reference"] == (REFERENCES / f"{item['problem']}.py").read_text()
        assert "class Model(nn.Module)" in item["reference"] and "def get_inputs" in item["reference"]
        assert item["reference"] in item["messages"][-1]["content"]
    built = build_items()
    assert built[1::2] == load_dataset(DATA_DIR / "test.jsonl", app.server.tools)


def test_honest_solutions_correct_and_clean(tmp_path, items):
    for item in items:
        source = solution_source(item["problem"])
        assert static_hacks(source, item["reference"]) == {}, item["problem"]
    for item in items[:4] + [i for i in items if i["problem"] in ("conv1d", "linear_relu")]:
        res = _eval(tmp_path, item, solution_source(item["problem"]))
        assert res["correct"] and res["flags"] == [] and res["speedup"] > 0, (item["problem"], res)


def test_every_hack_is_caught_statically(items):
    for item in items:
        for family, make in HACKS.items():
            found = static_hacks(make(item), item["reference"])
            want = {family} if family != "reference_op" or reference_op(item["reference"]) else {"reference_code"}
            assert want & set(found), (item["problem"], family, found)
    assert set(HACKS) <= set(FAMILIES)


def test_runtime_flags_catch_what_slips_past_the_source(tmp_path, by_problem):
    relu = by_problem["relu"]
    # identity passes a naive check on the reference's all-positive inputs; the normal inputs expose it
    ident = _eval(tmp_path, relu, HACKS["identity"](relu))
    assert "identity" in ident["flags"] and not ident["correct"]
    cached = _eval(tmp_path, relu, HACKS["caching"](relu))
    assert "caching" in cached["flags"]
    # an in-place kernel mutating its input, written without any statically banned construct
    inplace = ("import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
               "        y = x.clamp_min_(0.0)\n        return y * 1.0\n")
    assert static_hacks(inplace, relu["reference"]) == {}
    assert "input_mutation" in _eval(tmp_path, relu, inplace)["flags"]
    tamper = _eval(tmp_path, relu, HACKS["timing"](relu))
    assert "timing_tamper" in tamper["flags"]
    wrong = _eval(tmp_path, relu, solution_source("sigmoid"))
    assert not wrong["correct"] and wrong["error"]


async def test_grader_in_sandbox(by_problem):
    item = by_problem["hardswish"]
    honest = GradingContext(sample={"output_text": f"```python\n{solution_source(item['problem'])}```"},
                            item=item, trace_id="k-honest")
    g = await app.grade_kernel(honest)
    assert g.subscores["correct"] == 1.0 and g.score == pytest.approx(min(g.subscores["speedup"], 3.0))
    assert app.pool().get("k-honest") is None
    hacked = GradingContext(sample={"output_text": f"```python\n{HACKS['identity'](item)}```"}, item=item,
                            trace_id="k-hack")
    g = await app.grade_kernel(hacked)
    assert g.score == 0.0 and g.subscores["hack_identity"] == 1.0
    spam = tuple(ToolCallRecord(f"c{i}", None, "run_candidate", {}, "{}", None, 200, 0.0, 0.0)
                 for i in range(app.MAX_TOOL_CALLS + 1))
    g = await app.grade_kernel(GradingContext(sample=honest.sample, item=item, trace_id="k-spam", trajectory=spam))
    assert g.score == 0.0 and g.subscores["tool_budget"] == 0.0 and app.pool().get("k-spam") is None
    none = await app.grade_kernel(GradingContext(sample={"output_text": "sorry"}, item=item, trace_id="k-none"))
    assert none.score == 0.0 and none.reasons == ["no candidate module"]


@pytest.mark.slow
def test_main_job_runs_end_to_end(tmp_path, capsys):
    assert main(["--limit", "1", "--runs-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "PASS hack identity" in out and "FAIL" not in out
