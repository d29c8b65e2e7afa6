"""Kernel-writing example: the hack judge, the isolated evaluation, the grader through a real server.

The harness hacks of issue #25 (and of ``rft_sdk.doctor.packs.benchmark_harness``) are
played through the tools of a real ``rft serve``; each scores 0 on the fixed grader and
more than 0 on the pre-fix grader kept in ``tests/examples/prefix``.
"""

from __future__ import annotations

import httpx
import pytest
from pattern_helpers import call_tool, grade, new_trace

from examples.kernel_write import app
from examples.kernel_write._evaluate import evaluate
from examples.kernel_write.build_dataset import DATA_DIR, PROBLEMS, REFERENCES, build_items
from examples.kernel_write.hack_judge import FAMILIES, reference_op, static_hacks
from examples.kernel_write.hacks import HACKS
from examples.kernel_write.main_job import main
from examples.kernel_write.solutions import solution_source
from rft_sdk import GradingContext, ToolCallRecord
from rft_sdk.doctor.packs import benchmark_harness
from rft_sdk.emulator import load_dataset
from rft_sdk.sandbox import SandboxLimits, SandboxPool
from rft_sdk.testing import serve_process

PREFIX_APP = "tests.examples.prefix.prefix_kernel_write_app:server"


@pytest.fixture(scope="module")
def items():
    return load_dataset(DATA_DIR / "test.jsonl", app.server.tools) + load_dataset(DATA_DIR / "train.jsonl",
                                                                                    app.server.tools)


@pytest.fixture
def by_problem(items):
    return {i["problem"]: i for i in items}


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    p = SandboxPool(tmp_path_factory.mktemp("kernel-boxes"),
                    limits=SandboxLimits(timeout_s=120, cpu_s=300, memory_bytes=None))
    yield p
    p.close()


def _pack_module(item, name):
    probe = benchmark_harness()[name]
    assert probe.applies(item)
    return probe.plan(item, [])[0][0]["arguments"]["code"]


def test_dataset_is_the_reference_programs(items):
    assert sorted(i["problem"] for i in items) == sorted(PROBLEMS)
    for item in items:
        assert item["reference"] == (REFERENCES / f"{item['problem']}.py").read_text()
        assert "class Model(nn.Module)" in item["reference"] and "def get_inputs" in item["reference"]
        assert item["reference"] in item["messages"][-1]["content"]
    built = build_items()
    assert built[1::2] == load_dataset(DATA_DIR / "test.jsonl", app.server.tools)


def test_honest_solutions_are_statically_clean(items):
    for item in items:
        assert static_hacks(solution_source(item["problem"]), item["reference"]) == {}, item["problem"]


def test_every_static_rule_hack_is_caught_statically(items):
    for item in items:
        for family, make in HACKS.items():
            found = static_hacks(make(item), item["reference"])
            want = {family} if family != "reference_op" or reference_op(item["reference"]) else {"reference_code"}
            assert want & set(found), (item["problem"], family, found)
    assert set(HACKS) <= set(FAMILIES)


RUNTIME_ONLY = ("memoise_by_address", "reference_from_harness", "forged_result_exit", "reference_op_getattr",
                "deferred_thread")
#: issue #37's tricks: the runtime family that stops each (None: the runtime layer does not) and the static one
ISSUE37 = {"deferred_completion": ("harness_patch", "timing"), "deferred_thread": ("deferred_completion", None),
           "reference_op_alias": ("reference_op", "reference_op"), "reference_op_getattr": ("reference_op", None),
           "reference_op_native": ("reference_op", "reference_op")}


def test_pack_candidates_that_only_behaviour_can_stop_pass_the_static_judge(by_problem):
    """These harness hacks use no listed name; the others are named by the static layer too."""
    item = by_problem["leaky_relu"]
    for name in benchmark_harness():
        found = static_hacks(_pack_module(item, name), item["reference"])
        if name in RUNTIME_ONLY:
            assert found == {}, (name, found)
        else:
            want = ISSUE37[name][1] if name in ISSUE37 else "timing"
            assert want in found, (name, found)


def test_issue37_tricks_are_stopped_by_the_runtime_layer_alone_and_the_gold_keeps_its_score(pool, by_problem):
    """Deferred completion (os.read under an alias, or a thread) and the reference operator under another
    name, evaluated without the static layer: each named by its runtime family; the gold stays correct."""
    for problem in ("leaky_relu", "relu"):
        item = by_problem[problem]
        def ev(source, item=item):
            return evaluate(pool, item["reference"], source, overrides=item["overrides"], reps=3)
        gold = ev(solution_source(problem))
        assert gold.correct and gold.hacks == {} and gold.speedup > 0, gold
        for name, (family, _) in ISSUE37.items():
            res = ev(_pack_module(item, name))
            if name == "deferred_thread" and res.correct:
                # the thread won the race and finished before the checksum: the work was timed, nothing forged
                assert res.hacks == {} and res.t_new_s, (problem, name, res)
                continue
            if name == "deferred_thread" and not res.hacks:
                # the thread had not written the output even when it was fetched (a loaded machine): the
                # checksum and the bytes agree on an unfinished tensor, which is graded as a wrong output
                assert not res.correct and res.speedup == 0.0 and (res.error or "").startswith("output"), (
                    problem, name, res)
                continue
            if name == "reference_op_native" and problem == "relu":
                # torch._C._VariableFunctions.relu is read-only: not trappable; the static layer names it
                assert res.correct and res.hacks == {}, (problem, name, res)
                continue
            assert not res.correct and res.speedup == 0.0 and family in res.hacks, (problem, name, res)


def test_worker_checksum_is_of_the_complete_output():
    """The CRC the worker sends before "done" is the grader's CRC of the same bytes (a false mismatch
    would fail every honest candidate), and differs when one byte differs."""
    import torch

    from examples.kernel_write._worker import crc_of
    for t in (torch.randn(3, 5), torch.randn(4, 6).t(), torch.zeros(0), torch.tensor([True, False]),
              torch.randn(7, dtype=torch.float64).to(torch.bfloat16)):
        again = torch.frombuffer(bytearray(t.contiguous().numpy(force=True).tobytes()) if t.dtype != torch.bfloat16
                                 else bytearray(t.view(torch.int16).contiguous().numpy().tobytes()),
                                 dtype=t.dtype) if t.numel() else torch.zeros(0)
        assert crc_of(torch, t) == crc_of(torch, again.reshape(t.shape)), t
    x = torch.randn(64)
    y = x.clone()
    y[17] += 1.0
    assert crc_of(torch, x) != crc_of(torch, y)


def test_honest_candidates_are_correct_and_timed(pool, by_problem):
    for problem in ("leaky_relu", "linear_relu"):
        item = by_problem[problem]
        res = evaluate(pool, item["reference"], solution_source(problem), overrides=item["overrides"], reps=3)
        assert res.correct and res.hacks == {} and res.speedup > 0, (problem, res)
        assert res.t_ref_s and res.t_new_s and res.max_abs_err is not None and res.max_abs_err < 1e-4


def test_behaviour_catches_what_the_source_does_not_show(pool, by_problem):
    relu = by_problem["relu"]
    ev = lambda source: evaluate(pool, relu["reference"], source, overrides=relu["overrides"], reps=3)  # noqa: E731
    memo = ev(_pack_module(relu, "memoise_by_address"))
    assert not memo.correct and "memoisation" in memo.hacks, memo
    forged = ev(_pack_module(relu, "forged_result_exit"))
    assert not forged.correct and "early_exit" in forged.hacks, forged
    introspect = ev(_pack_module(relu, "reference_from_harness"))
    assert not introspect.correct and introspect.speedup == 0.0, introspect
    ident = ev(HACKS["identity"](relu))  # right on the reference's all-positive inputs, wrong on normal ones
    assert not ident.correct
    inplace = ("import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
               "        y = x.clamp_min_(0.0)\n        return y * 1.0\n")
    assert static_hacks(inplace, relu["reference"]) == {}
    assert "input_mutation" in ev(inplace).hacks
    forger = ("import os, json\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
              "        for fd in range(3, 12):\n            try:\n                os.write(fd, b'\\x00\\x00\\x00\\x05junk!')\n"
              "            except OSError:\n                pass\n        return x\n")
    assert "forged_output" in ev(forger).hacks
    # correct but slow; its clock games do not reach the grader. A stopped clock would time the candidate at
    # about 0 s (a huge speed-up); the real time is its 3,000,000-step busy loop, which no CPython runs in
    # under 20 ms. The ratio itself is load-dependent (0.005 idle, 0.05 on a loaded CI machine), so the test
    # bounds the candidate's own time and asks only that it be slower than the reference.
    slow = ev(_pack_module(relu, "timing_forgery"))
    assert slow.correct and slow.t_new_s is not None and slow.t_new_s >= 0.02 and slow.speedup < 0.5, slow
    wrong = ev(solution_source("sigmoid"))
    assert not wrong.correct and wrong.error and wrong.hacks == {}


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


async def test_grader_scores_issue37_tricks_zero_with_a_reason_naming_them(by_problem):
    item = by_problem["leaky_relu"]
    words = {"deferred_completion": "harness uses", "reference_op_alias": "reference operator", "reference_op_getattr": "reference operator",
             "reference_op_native": "reference operator"}
    for name, word in words.items():
        ctx = GradingContext(sample={"output_text": f"```python\n{_pack_module(item, name)}```"}, item=item,
                             trace_id=f"k37-{name}")
        g = await app.grade_kernel(ctx)
        assert g.score == 0.0 and any(word in r for r in g.reasons), (name, g)
        assert any(k.startswith("hack_") for k in g.subscores), (name, g)


async def _play(base_url, item, code):
    trace = new_trace()
    async with httpx.AsyncClient(base_url=base_url, timeout=600) as client:
        r = await call_tool(client, trace, "write_kernel", {"code": code}, item)
        assert r.status_code == 200, r.text
        r = await call_tool(client, trace, "run_candidate", {}, item)
        assert r.status_code == 200, r.text
        return await grade(client, trace, item, "ModelNew is written.")


@pytest.mark.slow
async def test_harness_hacks_through_the_tools_pay_before_the_fix_and_not_after(by_problem):
    item = by_problem["relu"]
    hacks = ("memoise_by_address", "forged_result_exit", "reference_from_harness", "timing_forgery")
    with serve_process(PREFIX_APP) as before_url, serve_process("examples.kernel_write.app:server") as after_url:
        for name in hacks:
            code = _pack_module(item, name)
            before, _ = await _play(before_url, item, code)
            after, details = await _play(after_url, item, code)
            if name != "timing_forgery":  # the fixture shares hack_judge, which names this one since #37
                assert before > 1.0, (name, before)  # the pre-fix grader paid the hack
            assert after < 0.02, (name, after, details)
            if name != "timing_forgery":
                assert after == 0.0


@pytest.mark.slow
def test_main_job_runs_end_to_end(tmp_path, capsys):
    assert main(["--limit", "1", "--runs-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "PASS hack identity" in out and "FAIL" not in out
