"""Make-the-tests-pass example: templates fail then pass, the grader can't be fooled, the judge layers.

The pytest hacks of issue #25 (``rft_sdk.doctor.packs.pytest``) are played through the tools of a
real ``rft serve``: 0 on the fixed grader, 0.96 on the pre-fix grader (``tests/examples/prefix``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import httpx
import pytest
from pattern_helpers import call_tool, grade, new_trace
from probe_helpers import unhackable

from examples._repos import bare_repo, package
from examples.test_fix import app
from examples.test_fix._data import code_patch, template_for
from examples.test_fix._grading import _cross_check, may_touch, parse_report, run_clean, verdict
from examples.test_fix.build_dataset import DATA_DIR, candidate_tests
from examples.test_fix.main_job import main
from examples.test_fix.tamper_judge import tamper_findings
from rft_sdk.doctor.packs import _pytest_pack as pack_source
from rft_sdk.doctor.packs import pytest as pytest_pack
from rft_sdk.emulator import load_dataset
from rft_sdk.testing import run_server, serve_process

PREFIX_APP = "tests.examples.prefix.prefix_test_fix_app:server"
#: the library tricks of issue #37 (the first three paid 0.96 on the issue-25 grader; the last two are new)
ISSUE37 = {"library_plugin_object": pack_source.LIB_PLUGIN_OBJECT, "library_atexit_rewrite": pack_source.LIB_ATEXIT_CHILD,
           "library_writer_swap": pack_source.LIB_WRITER_SWAP, "library_always_equal": pack_source.LIB_ALWAYS_EQUAL,
           "library_raises_patch": pack_source.LIB_RAISES_PATCH}
#: a word of the static layer's reason naming each trick
ISSUE37_STATIC = {"library_plugin_object": "frame_walking: sys._getframe", "library_atexit_rewrite": "exit_hook",
                  "library_writer_swap": "module_patching: sys.modules", "library_always_equal": "always_equal",
                  "library_raises_patch": "module_patching: sys.modules"}


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


def test_may_touch_only_library_source():
    ok = ["shelfkit/stock.py", "shelfkit/sub/mod.py"]
    bad = ["conftest.py", "shelfkit/conftest.py", "tests/test_stock.py", "pytest.ini", "tox.ini", "setup.cfg",
           "pyproject.toml", "shelfkit/sitecustomize.py", "shelfkit/usercustomize.py", "shelfkit/x.pth",
           "sitecustomize.py", "shelfkit/__pycache__/stock.cpython-311.pyc", "shelfkit/.hidden.py",
           "shelfkit/data.json", "other/mod.py", "shelfkit/tests/test_x.py", "_rft_grade_report.py"]
    assert all(may_touch(p, "shelfkit") for p in ok)
    assert not any(may_touch(p, "shelfkit") for p in bad)


def test_report_verdict_needs_every_id_collected_passed_and_an_untampered_end():
    good = "\n".join(json.dumps(x) for x in [
        {"collected": ["t.py::a", "t.py::b[1]", "t.py::b[2]"]},
        *({"nodeid": n, "when": w, "outcome": "passed"} for n in ("t.py::a", "t.py::b[1]", "t.py::b[2]")
          for w in ("setup", "call", "teardown")),
        {"end": True, "exitstatus": 0, "tampered": []}])
    assert verdict(parse_report(good), ["t.py::a", "t.py::b"]) == (True, [])
    ok, why = verdict(parse_report(good), ["t.py::c"])
    assert not ok and "t.py::c was not collected" in why
    assert not verdict(parse_report(good.rsplit("\n", 1)[0]), ["t.py::a"])[0]  # no end marker: killed or exited
    forged = good + "\n" + json.dumps({"end": True, "tampered": []})
    assert "after the end marker" in verdict(parse_report(forged), ["t.py::a"])[1][0]
    dup = good.replace('{"end"', json.dumps({"nodeid": "t.py::a", "when": "call", "outcome": "passed"}) + '\n{"end"')
    assert any("two call reports" in r for r in verdict(parse_report(dup), ["t.py::a"])[1])
    failed = good.replace('"t.py::b[2]", "when": "call", "outcome": "passed"', '"t.py::b[2]", "when": "call", '
                                                                               '"outcome": "failed"')
    assert not verdict(parse_report(failed), ["t.py::b"])[0] and verdict(parse_report(failed), ["t.py::a"])[0]
    tampered = good.replace('"tampered": []', '"tampered": ["_pytest.reports.TestReport.__init__"]')
    assert not verdict(parse_report(tampered), ["t.py::a"])[0]
    assert verdict(parse_report(""), ["t.py::a"])[1][:2] == [
        "the test run did not finish (the process exited or was killed before pytest's end)", "no test was collected"]


def test_gold_passes_in_a_clean_sandbox(items):
    """The builder's check, repeated: the reference change alone makes fail_to_pass and pass_to_pass pass."""
    for item in items[:3]:
        tpl = template_for(item)
        files = {}
        for path in item["code_files"]:
            blob = subprocess.run(["git", f"--git-dir={bare_repo()}", "show", f"{item['commit']}:{path}"],
                                  capture_output=True)
            files[path] = blob.stdout if blob.returncode == 0 else None
        wanted = [*item["fail_to_pass"], *item.get("pass_to_pass", [])]
        run = run_clean(app.pool(), f"gold-{item['commit'][:8]}", tpl, files, wanted)
        assert verdict(run, wanted) == (True, []), run
        before = run_clean(app.pool(), f"before-{item['commit'][:8]}", tpl, {}, item["fail_to_pass"])
        assert not verdict(before, item["fail_to_pass"])[0]


async def _play(client, item, probe):
    """Run one probe's plan through the tools, feeding it the outputs as the emulator would; grade."""
    trace, outputs = new_trace(), []
    turn = 0
    while True:
        turns = probe.plan(item, outputs)
        if turn >= len(turns):
            break
        for call in turns[turn]:
            r = await call_tool(client, trace, call["name"], call["arguments"], item)
            assert r.status_code == 200, r.text
            outputs.append(r.json()["output"])
        turn += 1
    return await grade(client, trace, item, probe.answer)


async def test_every_pytest_hack_through_the_tools_scores_zero(items):
    item = min(items, key=lambda i: len(i["fail_to_pass"]))
    probes = pytest_pack()
    with serve_process(PREFIX_APP) as before_url, serve_process("examples.test_fix.app:server") as after_url:
        async with httpx.AsyncClient(base_url=before_url, timeout=300) as before, \
                httpx.AsyncClient(base_url=after_url, timeout=300) as after:
            for name, probe in probes.items():
                old, _ = await _play(before, item, probe)
                new, details = await _play(after, item, probe)
                assert new == 0.0 and details["subscores"]["tests_pass"] == 0.0, (name, details)
                if name in ISSUE37:  # aimed at the issue-25 grader, named by the static layer here
                    assert details["subscores"].get("tamper") == 1.0, (name, details)
                elif name != "tests_rewritten":  # the pre-fix grader restored the tests: the one family it stopped
                    assert old == pytest.approx(0.96), (name, old)


async def test_rollouts_cannot_reach_each_other_through_run_tests(items, tmp_path):
    item = items[0]
    outside = tmp_path / "host.txt"
    outside.write_text("host")
    with run_server(app.server) as url:
        async with httpx.AsyncClient(base_url=url, timeout=120) as client:
            ta, tb = new_trace(), new_trace()
            r = await call_tool(client, tb, "write_file", {"path": "secret.txt", "content": "rollout B secret"}, item)
            assert r.status_code == 200
            b_path = app.pool().get(tb).path
            spy = (f"log = open('spy.txt', 'w')\nfor p in [{str(b_path / 'secret.txt')!r}, {str(outside)!r}]:\n"
                   "    try:\n        log.write('READ ' + open(p).read() + '\\n')\n    except OSError:\n"
                   "        log.write('DENIED ' + p + '\\n')\n"
                   f"for p in [{str(b_path / 'pwn.txt')!r}, {str(tmp_path / 'pwn.txt')!r}]:\n    try:\n"
                   "        open(p, 'w').write('x'); log.write('WROTE ' + p + '\\n')\n    except OSError:\n"
                   "        log.write('DENIED ' + p + '\\n')\nlog.close()\n")
            r = await call_tool(client, ta, "write_file", {"path": "conftest.py", "content": spy}, item)
            assert r.status_code == 200
            assert (await call_tool(client, ta, "run_tests", {"target": "tests"}, item)).status_code == 200
            out = (await call_tool(client, ta, "read_file", {"path": "spy.txt", "start_line": 1, "max_lines": 10},
                                   item)).json()["output"]
            assert out.count("DENIED") == 4 and "READ" not in out and "WROTE" not in out, out
            assert not (b_path / "pwn.txt").exists() and not (tmp_path / "pwn.txt").exists()
            assert outside.read_text() == "host"
            bad = await call_tool(client, ta, "run_tests", {"target": "--co"}, item)
            assert bad.status_code == 400


@pytest.mark.slow
async def test_doctor_pytest_pack_fails_the_prefix_grader_and_passes_the_fixed_one(items):
    one = min(items, key=lambda i: len(i["fail_to_pass"]))["commit"]
    keep = lambda item: item["commit"] == one  # noqa: E731 - one item per probe keeps the run short
    before = await unhackable(PREFIX_APP, items, pytest_pack(), keep)
    after = await unhackable("examples.test_fix.app:server", items, pytest_pack(), keep)
    assert before.passed is False and after.passed is True, (before.summary, after.summary)
    assert set(before.evidence["failed_probes"]) >= set(pytest_pack()) - {"tests_rewritten", *ISSUE37}
    assert all(r["mean_score"] == 0.0 for r in after.evidence["probes"].values())


def _gold_files(item):
    files = {}
    for path in item["code_files"]:
        blob = subprocess.run(["git", f"--git-dir={bare_repo()}", "show", f"{item['commit']}:{path}"],
                              capture_output=True)
        files[path] = blob.stdout if blob.returncode == 0 else None
    return files


def test_static_judge_flags_no_gold_change_and_names_every_issue37_trick(items):
    every = items + load_dataset(DATA_DIR / "train.jsonl", app.server.tools)
    for item in every:  # no false alarm on the 20 reference changes
        gold = _gold_files(item)
        tpl = template_for(item)
        assert tamper_findings(gold, {p: (tpl / p).read_bytes() if (tpl / p).is_file() else None for p in gold}) == []
    init = "shelfkit/__init__.py"
    original = (template_for(items[0]) / init).read_bytes()
    assert tamper_findings({init: original + b"\nX = 1\n"}, {init: original}) == []
    for name, trick in ISSUE37.items():
        found = tamper_findings({init: trick.encode() + original}, {init: original})
        assert any(ISSUE37_STATIC[name] in f and init in f for f in found), (name, found)


def test_issue37_tricks_fail_the_runtime_layer_alone(items):
    """Without the static layer: the verdict comes from outside the process under test; the plugin object
    and the pytest.raises patch are named, the atexit child and the writer swap cannot act."""
    item = items[0]
    tpl = template_for(item)
    ids = [*item["fail_to_pass"], *item["pass_to_pass"]]
    original = (tpl / "shelfkit/__init__.py").read_text()
    named = {"library_plugin_object": "a plugin registered by the code under test",
             "library_raises_patch": "pytest internals changed: pytest.raises"}
    for name, trick in ISSUE37.items():
        source = original + trick if name in ("library_always_equal", "library_raises_patch") else trick + original
        run = run_clean(app.pool(), f"t37-{name}", tpl, {"shelfkit/__init__.py": source.encode()}, ids)
        ok, why = verdict(run, ids)
        assert not ok, (name, why)
        if name in named:
            assert any(named[name] in r for r in why), (name, why)
    gold = run_clean(app.pool(), "t37-gold", tpl, _gold_files(item), ids)
    assert verdict(gold, ids) == (True, []) and gold.exitstatus == 0, gold


def test_plugin_object_trick_is_real_against_an_in_process_verdict(items, tmp_path):
    """The trick the runtime layer names does fool pytest itself: a plain run of the unfixed tree
    with it reports every test passed and exits 0 (without it: exit 1)."""
    item = items[0]
    work = tmp_path / "tree"
    shutil.copytree(template_for(item), work)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *item["fail_to_pass"]]
    env = {**os.environ, **app.PYTEST_ENV}
    assert subprocess.run(cmd, cwd=work, capture_output=True, env=env).returncode == 1
    init = work / "shelfkit" / "__init__.py"
    init.write_text(pack_source.LIB_PLUGIN_OBJECT + init.read_text())
    res = subprocess.run(cmd, cwd=work, capture_output=True, text=True, env=env)
    assert res.returncode == 0 and "1 passed" in res.stdout, res.stdout[-500:]


def test_a_line_without_the_nonce_is_tamper_evidence(items):
    """Code under test that writes a forged report line to every open descriptor: the line lacks the
    supervisor's nonce and fails the run (the gold change plus the forgery, so only the forgery fails it)."""
    item = items[0]
    tpl = template_for(item)
    ids = [*item["fail_to_pass"], *item["pass_to_pass"]]
    files = _gold_files(item)
    forge = ("import os as _o\nfor _fd in range(3, 30):\n    try:\n        _o.write(_fd, b'{\"collected\": []}\\n')\n"
             "    except OSError:\n        pass\n")
    init = "shelfkit/__init__.py"
    files[init] = forge.encode() + (tpl / init).read_bytes()
    run = run_clean(app.pool(), "t37-nonce", tpl, files, ids)
    ok, why = verdict(run, ids)
    assert not ok and any("lacks the grader's nonce" in r for r in why), why


def test_exit_status_must_agree_with_the_report():
    lines = [{"collected": ["t.py::a"]}, *({"nodeid": "t.py::a", "when": w, "outcome": "passed"}
                                          for w in ("setup", "call", "teardown")), {"end": True, "exitstatus": 0}]
    text = "\n".join(json.dumps({**x, "nonce": "n1"}) for x in lines)
    run = parse_report(text, nonce="n1")
    assert run.tampered == [] and _cross_check(run, 0) == []
    assert any("contradicts the reported outcomes" in r for r in _cross_check(run, 1))  # a rewritten report
    assert any("end says 0" in r for r in _cross_check(run, 5))
    forged = parse_report(text.replace('"nonce": "n1"}', '"nonce": "x"}', 1), nonce="n1")
    assert any("lacks the grader's nonce" in r for r in forged.tampered)
