"""A line's ``max_tool_calls`` against the job's ``max_episode_steps``: ``rft validate --config`` (and the
pre-flight of ``rft emulate``/``rft doctor``) warns where a rollout within the budget, or the doctor's
``refused_spam`` probe, is cut before its answer; and what the warnings say happens does happen, on a real
server (the ``rft init`` scaffold, plus a grader that lets refused calls past the budget but needs an answer)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from preflight_helpers import rft

from rft_sdk import Grade, GradingContext
from rft_sdk._commands.init import MAX_TOOL_CALLS, load_app_file, scaffold
from rft_sdk._commands.validate import preflight, validate
from rft_sdk._validation._steps import needed_steps
from rft_sdk.doctor import check_unhackable, default_probes
from rft_sdk.emulator import PolicyStep, make_tool_call, run_rollouts, turns_taken
from rft_sdk.testing import run_server

GOLD_CALLS = 2  # the scaffold's gold: get_book, then lend_book


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, list[dict[str, Any]]]:
    root = tmp_path_factory.mktemp("steps") / "task"
    scaffold(root)
    server = load_app_file(root / "app.py")

    @server.grader(name="answer_no_budget")
    async def answer_no_budget(ctx: GradingContext) -> Grade:
        """The scaffold's end state, and an answer; no budget (refused calls past it cost nothing)."""
        if not ctx.output_text.strip():
            return Grade(0.0, reasons=["no answer"])
        return Grade(0.0 if await ctx.db.diff_gold(ctx.item["actions"]) else 1.0)

    items = [json.loads(line) for line in (root / "train.jsonl").read_text().splitlines()]
    assert all(len(i["actions"]) == GOLD_CALLS and i["max_tool_calls"] == MAX_TOOL_CALLS for i in items)
    return root, server, items


def _warnings(task: tuple[Path, Any, list[dict[str, Any]]], tmp_path: Path, steps: int | None,
              budget: int = MAX_TOOL_CALLS) -> list[tuple[tuple[int, ...], str, str, str]]:
    root, server, items = task
    dataset = tmp_path / "train.jsonl"
    dataset.write_text("".join(json.dumps({**i, "max_tool_calls": budget}) + "\n" for i in items))
    job = server.job_config("http://127.0.0.1:9", max_episode_steps=steps or 10)["method"]["reinforcement"]
    if steps is None:
        job.pop("max_episode_steps")
    config = tmp_path / "job.json"
    config.write_text(json.dumps(job))
    report = validate(dataset, app=server, config=config, replay=False)
    assert report.ok, report.render()
    found = [(f.lines, f.field, f.message, f.fix) for f in report.findings if f.field == "max_tool_calls"]
    # rft emulate and rft doctor print the pre-flight's findings before any rollout: the same warnings
    early = preflight(dataset, config, gold=True)
    assert [(f.lines, f.field, f.message, f.fix) for f in early.findings if f.field == "max_tool_calls"] == found
    return found


def test_a_budget_the_episode_cannot_hold_is_a_warning_naming_the_lines_the_numbers_and_the_fix(task, tmp_path):
    assert _warnings(task, tmp_path, 10) == []  # the scaffold as written: 4 calls + the answer fit in 10 turns
    assert _warnings(task, tmp_path, MAX_TOOL_CALLS + 1) == []  # exactly enough turns
    found = _warnings(task, tmp_path, MAX_TOOL_CALLS)
    assert len(found) == 1
    lines, field, message, fix = found[0]
    assert lines == tuple(range(1, 11)) and field == "max_tool_calls"  # a warning, not an error (report.ok)
    assert message.startswith("max_tool_calls=4 needs 5 turns for a policy making one call per turn")
    assert "the job's max_episode_steps=4 cuts a rollout after 4 turns" in message
    assert fix == "write the job with --max-episode-steps 5 (rft tools / rft job), or lower max_tool_calls to 3"
    # a job without max_episode_steps: the default the emulator and the doctor use, said as such
    (_, _, message, fix), = _warnings(task, tmp_path, None, budget=12)
    assert "max_episode_steps=10 (the job leaves it out" in message and "--max-episode-steps 13" in fix


def test_refused_spam_cut_before_its_answer_is_a_warning(task, tmp_path):
    assert not any("refused_spam" in m for _, _, m, _ in _warnings(task, tmp_path, GOLD_CALLS + 2))
    found = [w for w in _warnings(task, tmp_path, GOLD_CALLS + 1) if "refused_spam" in w[2]]
    assert len(found) == 1
    lines, field, message, fix = found[0]
    assert lines == tuple(range(1, 11)) and field == "max_tool_calls"
    assert "plays 4 turns here" in message and "judged on an empty reply" in message
    assert fix == "write the job with --max-episode-steps 4 (rft tools / rft job)"


class OneCallPerTurn:
    """Reads the book three times, one call per turn, then lends it, then answers: 4 calls (the budget), 5 turns."""

    async def act(self, messages: list[dict], tools: list[dict], *, item: dict, trace_id: str) -> PolicyStep:
        turn = turns_taken(messages, item)
        read, write = item["actions"]
        plan = [read, read, read, write]
        if turn < len(plan):
            return PolicyStep(tool_calls=[make_tool_call(plan[turn]["name"], plan[turn]["arguments"])])
        return PolicyStep(content=item["reference_answer"])


async def test_what_the_warnings_say_happens_on_a_real_server(task):
    _, server, items = task
    with run_server(server) as url:
        # a rollout within its budget, one call per turn: cut at max_episode_steps=4, graded on an empty reply
        job = server.job_config(url, grader="answer_no_budget", rate_limit=1000, max_episode_steps=MAX_TOOL_CALLS)
        cut, = await run_rollouts(items[:1], OneCallPerTurn(), job, samples_per_item=1)
        assert cut.truncated and len(cut.tool_calls) == MAX_TOOL_CALLS and cut.sample["output_text"] == ""
        assert cut.score == 0.0
        whole, = await run_rollouts(items[:1], OneCallPerTurn(), job, samples_per_item=1,
                                    max_episode_steps=MAX_TOOL_CALLS + 1)  # the fix the warning names
        assert not whole.truncated and whole.score == 1.0
        # refused_spam: cut before its answer at gold + 1 turns, the budget-blind grader is not caught; at
        # gold + 2 turns (the fix the warning names) it is
        verdicts = {}
        for steps in (GOLD_CALLS + 1, GOLD_CALLS + 2):
            job = server.job_config(url, grader="answer_no_budget", rate_limit=1000, max_episode_steps=steps)
            result = await check_unhackable(items, job, {"refused_spam": default_probes()["refused_spam"]})
            row = result.evidence["probes"]["refused_spam"]
            verdicts[steps] = (row["verdict"], row["mean_score"])
    assert verdicts == {GOLD_CALLS + 1: ("pass", 0.0), GOLD_CALLS + 2: ("fail", 1.0)}


def test_needed_steps_is_the_one_rule_of_the_gold_items_page() -> None:
    gold = [{"name": "get", "arguments": {}}] * 3
    plain = {"messages": [], "actions": gold, "reference_answer": "a"}
    assert needed_steps([plain]) == (4, 1, "the gold's 3 call(s) + 1")
    # with a budget: max(max_tool_calls + 1, n + 2); the page's example, 3 gold calls and max_tool_calls 6: 7
    assert needed_steps([plain, {**plain, "max_tool_calls": 6}]) == (7, 2, "max_tool_calls=6 + 1")
    assert needed_steps([{**plain, "max_tool_calls": 2}]) == (5, 1, "the gold's 3 call(s) + 2 (refused_spam, with "
                                                                    "a budget)")
    longer = {**plain, "alternatives": [{"name": "by title", "actions": gold + gold}]}
    assert needed_steps([plain, longer]) == (7, 2, "alternative 'by title''s 6 call(s) + 1")
    assert needed_steps([{"messages": []}, None]) is None


def test_rft_tools_and_rft_job_size_max_episode_steps_from_the_dataset(task, tmp_path: Path) -> None:
    root, _, items = task
    dataset = tmp_path / "train.jsonl"
    dataset.write_text("".join(json.dumps({**i, "max_tool_calls": 12 if n == 3 else i["max_tool_calls"]}) + "\n"
                               for n, i in enumerate(items)))
    common = ("app:server", "--base-url", "http://127.0.0.1:9", "--allow-unauthenticated")
    done = rft("tools", *common, "--dataset", str(dataset), cwd=root)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["method"]["reinforcement"]["max_episode_steps"] == 13
    assert done.stderr.strip() == f"rft tools: info: max_episode_steps raised to 13: line 4 of {dataset} needs " \
                                  "13 turns (max_tool_calls=12 + 1)"
    # below --max-episode-steps (default 10) the floor stays and nothing changed: stderr stays empty (an
    # information line on every run read like a warning in the suites' logs: doctor67, doctor68)
    scaffolded = rft("tools", *common, "--dataset", "train.jsonl", cwd=root)
    assert scaffolded.returncode == 0, scaffolded.stderr
    assert json.loads(scaffolded.stdout)["method"]["reinforcement"]["max_episode_steps"] == 10
    assert scaffolded.stderr == ""
    # a dataset with nothing to size by keeps the floor and says so, as information
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(json.dumps({"messages": i["messages"]}) + "\n" for i in items))
    kept = rft("tools", *common, "--dataset", str(bare), cwd=root)
    assert kept.returncode == 0 and json.loads(kept.stdout)["method"]["reinforcement"]["max_episode_steps"] == 10
    assert kept.stderr.strip() == (f"rft tools: info: max_episode_steps 10 kept: no line of {bare} has gold calls, "
                                   "alternatives or max_tool_calls to size it by")
    submittable = ("--allow-insecure-url", "--model", "o4-mini-2025-04-16", "--training-file", "file-a")
    job = rft("job", *common, *submittable, "--dataset", str(dataset), cwd=root)
    assert job.returncode == 0, job.stderr
    assert json.loads(job.stdout)["method"]["reinforcement"]["max_episode_steps"] == 13
    assert job.stderr.strip() == f"rft job: info: max_episode_steps raised to 13: line 4 of {dataset} needs " \
                                 "13 turns (max_tool_calls=12 + 1)"
    quiet = rft("job", *common, *submittable, "--dataset", "train.jsonl", cwd=root)
    assert quiet.returncode == 0 and quiet.stderr == ""
    # a dataset that is not JSONL is refused, naming the line; --dataset without --base-url too
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"messages": []}\nnot json\n')
    refused = rft("tools", *common, "--dataset", str(broken), cwd=root)
    assert refused.returncode == 2 and refused.stderr.startswith(f"rft tools: --dataset '{broken}': line 2: invalid")
    alone = rft("tools", "app:server", "--dataset", str(dataset), cwd=root)
    assert alone.returncode == 2 and "--dataset sizes the job's max_episode_steps: it needs --base-url" in alone.stderr
