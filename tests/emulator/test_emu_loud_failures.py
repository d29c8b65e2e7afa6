"""Loud failures through the CLI as a user runs it (``python -m rft_sdk emulate|doctor`` as a subprocess).

Issue 36: a run whose rollouts are discarded (a hung tool, a policy that errors) exits
non-zero with the top reasons and an example on the terminal; an unreachable model
endpoint is refused before any rollout (exit 2). The tool server is a real uvicorn.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from emu_helpers import make_item

from rft_sdk import GradingContext, Rollout, ToolServer
from rft_sdk.testing import free_port, run_server

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "s3cret"


def build_server() -> ToolServer:
    server = ToolServer(auth_tokens=[TOKEN])

    @server.tool
    def lookup(key: str, *, rollout: Rollout) -> str:
        """Look a key up."""
        return f"v{key}"

    @server.tool
    async def hang(key: str, *, rollout: Rollout) -> str:
        """A tool whose backend never answers in time (10 s: past every ``--timeout`` below, loaded machine or not)."""
        await asyncio.sleep(10)
        return "late"

    @server.grader
    def exact(ctx: GradingContext) -> float:
        return float(ctx.output_text == ctx.item["reference_answer"])

    return server


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with run_server(build_server()) as base:
        yield base


def inputs(tmp_path: Path, url: str, tool: str, n: int = 10) -> list[str]:
    server = build_server()
    lines = [make_item(i, tools=server.dataset_tools(), actions=[{"name": tool, "arguments": {"key": str(i)}}],
                       reference_answer=f"v{i}") for i in range(n)]
    dataset, config = tmp_path / "train.jsonl", tmp_path / "job.json"
    dataset.write_text("".join(json.dumps(line) + "\n" for line in lines))
    config.write_text(json.dumps(server.job_config(url, token=TOKEN, rate_limit=1000)))
    return ["--dataset", str(dataset), "--config", str(config)]


def rft(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{Path(__file__).parent}", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "rft_sdk", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=240)


def flat(text: str) -> str:
    return " ".join(text.split())


def test_emulate_hung_tool_exits_1_with_reason_and_example(tmp_path: Path, url: str) -> None:
    out = tmp_path / "out"
    proc = rft("emulate", *inputs(tmp_path, url, "hang"), "--out", str(out), "--samples-per-item", "1",
               "--timeout", "0.3", "--retries", "0", "--no-progress")
    err = flat(proc.stderr)
    assert proc.returncode == 1, proc.stderr
    assert "10 of 10 rollouts discarded (100%; allowed: 0%)" in err
    assert "tool_timeout: 10 (e.g. item 0, trace_" in err and "no response within 0.3s" in err
    assert "--max-discard-share" in err
    assert json.loads((out / "summary.json").read_text())["discards_by_reason"] == {"tool_timeout": 10}


def test_emulate_clean_reference_run_exits_0(tmp_path: Path, url: str) -> None:
    proc = rft("emulate", *inputs(tmp_path, url, "lookup"), "--out", str(tmp_path / "out"),
               "--samples-per-item", "1", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "discarded" not in proc.stderr


def test_emulate_threshold_tolerates_a_share(tmp_path: Path, url: str) -> None:
    """1 of 10 items hangs: 10 % discarded passes 0.2 (reasons still printed) and fails the default 0.

    The 9 other items call ``lookup``, which must answer within ``--timeout``: 3 s, not 0.3 s (on a loaded CI
    machine 10 first calls at once once took over 0.3 s, and all 10 rollouts were discarded).
    """
    args = inputs(tmp_path, url, "lookup")
    lines = [json.loads(x) for x in Path(args[1]).read_text().splitlines()]
    lines[4]["actions"] = [{"name": "hang", "arguments": {"key": "4"}}]
    Path(args[1]).write_text("".join(json.dumps(x) + "\n" for x in lines))
    base = ["emulate", *args, "--samples-per-item", "1", "--timeout", "3", "--retries", "0", "--no-progress"]
    tolerated = rft(*base, "--out", str(tmp_path / "a"), "--max-discard-share", "0.2")
    assert tolerated.returncode == 0, tolerated.stderr
    assert "1 of 10 rollouts discarded (10%; allowed: 20%)" in flat(tolerated.stderr)
    assert "tool_timeout: 1 (e.g. item 4" in flat(tolerated.stderr)
    strict = rft(*base, "--out", str(tmp_path / "b"))
    assert strict.returncode == 1 and "allowed: 0%" in flat(strict.stderr)
    bad = rft(*base, "--out", str(tmp_path / "c"), "--max-discard-share", "1.5")
    assert bad.returncode == 2 and "expected a number from 0 to 1" in bad.stderr


def test_emulate_policy_errors_exit_1(tmp_path: Path, url: str) -> None:
    """A MODULE:ATTR policy that raises on every turn: 10/10 policy_error, past the model default 0.1."""
    (tmp_path / "broken_policy.py").write_text(
        "from rft_sdk.emulator import PolicyError\n"
        "class Broken:\n"  # a class: `rft emulate` instantiates it
        "    async def act(self, messages, tools, *, item, trace_id):\n"
        "        raise PolicyError('the model returned garbage')\n")
    env_path = f"{tmp_path}"
    proc = subprocess.run(
        [sys.executable, "-m", "rft_sdk", "emulate", *inputs(tmp_path, url, "lookup"), "--out",
         str(tmp_path / "out"), "--samples-per-item", "1", "--no-progress", "--policy", "broken_policy:Broken"],
        capture_output=True, text=True, cwd=tmp_path, timeout=240,
        env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{env_path}", "COLUMNS": "200"})
    err = flat(proc.stderr)
    assert proc.returncode == 1, proc.stderr
    assert "10 of 10 rollouts discarded (100%; allowed: 10%)" in err
    assert "policy_error: 10" in err and "the model returned garbage" in err


@pytest.mark.parametrize("command", ["emulate", "doctor"])
def test_unreachable_model_endpoint_refused_before_any_rollout(tmp_path: Path, url: str, command: str) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    out = tmp_path / "out"
    proc = rft(command, *inputs(tmp_path, url, "lookup"), "--out", str(out), "--policy", "openai",
               "--base-url", dead, "--model", "tiny", "--timeout", "5")
    err = flat(proc.stderr)
    assert proc.returncode == 2, proc.stderr
    assert f"the model endpoint {dead} cannot be reached" in err and "fix --base-url" in err
    assert "Traceback" not in proc.stderr
    assert not out.exists()  # no rollout, no report


def test_doctor_hung_tool_exits_1_with_reason(tmp_path: Path, url: str) -> None:
    out = tmp_path / "out"
    proc = rft("doctor", *inputs(tmp_path, url, "hang"), "--out", str(out),
               "--samples", "2", "--timeout", "0.3", "--retries", "0")
    err = flat(proc.stderr)
    assert proc.returncode == 1, proc.stderr + proc.stdout
    assert "rft doctor: 20 of 20 rollouts discarded (100%; allowed: 0%)" in err
    assert "tool_timeout: 20 (e.g. item 0" in err
    assert json.loads((out / "doctor.json").read_text())["meta"]["discards"]["discarded"] == 20
    # the other principles are not run against the broken server (their rollouts would time out too)
    principles = json.loads((out / "doctor.json").read_text())["principles"]
    for name in ("gradeable", "production_like", "unhackable"):
        assert principles[name]["passed"] is None
        assert principles[name]["summary"] == ("not checked: 20 of 20 of the policy's rollouts were discarded "
                                               "(mostly tool_timeout); fix that first")
    html = (out / "doctor.html").read_text()
    assert "Discarded rollouts of the policy's run: 20 of 20" in html and "<td>tool_timeout</td>" in html
    assert "<h1>rft doctor: no principle could be checked; 20 of 20 of the policy&#x27;s rollouts discarded</h1>" in html
    assert "data:image/png" not in html  # no empty plot


def test_a_broken_gold_is_refused_before_any_rollout_by_emulate_and_doctor(tmp_path: Path, url: str) -> None:
    """A replay of a gold call with a wrong argument name gets the same 422 in every rollout and still scores
    as the gold (an outside user's finding): the replay policies and the doctor check the gold fields first."""
    args = inputs(tmp_path, url, "lookup")
    dataset = Path(args[1])
    lines = dataset.read_text().splitlines()
    broken = json.loads(lines[2])
    broken["actions"][0]["arguments"] = {"kee": "2"}
    lines[2] = json.dumps(broken)
    dataset.write_text("\n".join(lines) + "\n")
    for command in (["emulate", "--policy", "reference", "--no-progress"], ["doctor"]):
        proc = rft(*command, *args, "--out", str(tmp_path / command[0]))
        err = flat(proc.stderr)
        assert proc.returncode == 2, (command, proc.stderr[-2000:])
        assert "line 3" in err and "actions[0].arguments.kee" in err, err[-2000:]
        assert not (tmp_path / command[0] / "rollouts.jsonl").exists()  # no rollout ran


def test_the_perturbed_policy_never_drops_a_gold_call_meant_to_fail() -> None:
    """Dropping a call the gold marks ``expect_error`` changes nothing a grader sees: not a perturbation."""
    import random

    from rft_sdk.emulator._policy import _drop_one_write

    perturb = _drop_one_write({"book"})
    actions = [{"name": "book", "arguments": {"slot": 1}, "expect_error": True},
               {"name": "book", "arguments": {"slot": 2}}]
    for seed in range(20):
        kept, description = perturb(list(actions), random.Random(seed))
        assert kept == actions[:1] and description == "dropped book"
    only_expected = actions[:1]
    assert perturb(list(only_expected), random.Random(0)) == (only_expected, "unchanged (no write call)")
