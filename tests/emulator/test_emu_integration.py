"""End to end: the emulator against a real uvicorn server built with rft_sdk (tools + grader).

Expected summary numbers are derived by hand from the scenario below (see
``test_summary_against_hand_computed_numbers``), not from the code under test.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import pytest
from emu_helpers import make_item

from rft_sdk import Grade, GradingContext, RetryableToolError, Rollout, ToolError, ToolServer
from rft_sdk.emulator import ClientSettings, PolicyStep, emulate, run_rollouts, turns_taken
from rft_sdk.testing import run_server

TOKEN = "s3cret"
VALUES = {f"k{i}": f"v{i}" for i in range(10)}


def build_server() -> ToolServer:
    server = ToolServer(auth_tokens=[TOKEN])

    @server.tool
    def lookup(key: str, *, rollout: Rollout) -> str:
        """Look a key up."""
        if key not in VALUES:
            raise ToolError(f"no such key {key!r}")
        rollout.state["looked_up"] = key
        return VALUES[key]

    @server.tool
    def explode(*, rollout: Rollout) -> str:
        """Always fails with a retryable error (HTTP 503)."""
        raise RetryableToolError("backend down")

    @server.grader
    def exact(ctx: GradingContext) -> Grade:
        answer = float(ctx.output_text == ctx.item["reference_answer"])
        looked = float(ctx.count("lookup") >= 1)
        return Grade(answer * looked, subscores={"answer": answer, "lookup": looked}, reasons=[ctx.item["kind"]])

    return server


def items() -> list[dict]:
    """10 items: 0-5 good, 6-7 mixed, 8 bad key, 9 server failure."""
    kinds = ["good"] * 6 + ["mixed"] * 2 + ["bad_key", "crash"]
    out = []
    for i, kind in enumerate(kinds):
        action = ({"name": "explode", "arguments": {}} if kind == "crash" else
                  {"name": "lookup", "arguments": {"key": "missing" if kind == "bad_key" else f"k{i}"}})
        out.append(make_item(i, kind=kind, actions=[action], reference_answer=f"v{i}"))
    return out


class KindPolicy:
    """Deterministic per-sample behaviour: the n-th rollout started for an item is sample n."""

    def __init__(self) -> None:
        self.started: dict[int, int] = defaultdict(int)
        self.sample_of: dict[str, int] = {}

    async def act(self, messages, tools, *, item, trace_id) -> PolicyStep:
        idx = int(item["messages"][0]["content"].split()[-1])
        if trace_id not in self.sample_of:
            self.sample_of[trace_id] = self.started[idx]
            self.started[idx] += 1
        if turns_taken(messages, item) == 0:
            a = item["actions"][0]
            return PolicyStep(tool_calls=[{"name": a["name"], "arguments": a["arguments"]}])
        if item["kind"] == "mixed" and self.sample_of[trace_id] == 1:
            return PolicyStep(content="nope")
        if item["kind"] == "bad_key":
            return PolicyStep(content="unknown")
        return PolicyStep(content=item["reference_answer"])


@pytest.fixture(scope="module")
def base_url():
    with run_server(build_server()) as url:
        yield url


def job(base_url: str) -> dict:
    return build_server().job_config(base_url, token=TOKEN, max_episode_steps=4, rate_limit=1000)


SETTINGS = ClientSettings(backoff_initial_s=0.001, backoff_max_s=0.002, timeout_s=10)


async def test_summary_against_hand_computed_numbers(base_url: str, tmp_path: Path) -> None:
    run = await emulate(items(), job(base_url), KindPolicy(), samples_per_item=2, settings=SETTINGS,
                        out_dir=tmp_path, progress=False, label="kinds")
    s = run.summary
    # 20 rollouts; item 9's two rollouts hit 503 four times each and are discarded
    assert (s["rollouts"], s["graded"], s["discarded"]) == (20, 18, 2)
    assert s["discards_by_reason"] == {"tool_server_error": 2}
    crash = [r for r in run.results if r.item_index == 9]
    assert all(c.attempts == 4 and c.status == 503 for r in crash for c in r.tool_calls)
    # scores: items 0-5 -> 12 x 1.0; items 6-7 -> 1.0 and 0.0 each; item 8 -> 2 x 0.0 (14 ones, 4 zeros)
    p = 14 / 18
    assert s["reward"]["mean"] == pytest.approx(p)
    assert s["reward"]["std"] == pytest.approx(math.sqrt(p * (1 - p)))
    assert s["pass_rate"] == pytest.approx(p)
    t = s["tools"]
    assert t["calls"] == 20 and t["calls_per_rollout"] == pytest.approx(1.0)
    assert t["calls_per_rollout_by_tool"] == pytest.approx({"explode": 0.1, "lookup": 0.9})
    assert t["error_count"] == 4  # 2 bad-key 400s shown to the model + 2 exhausted 503s
    # arguments: '{"key":"kN"}' 12 chars -> 3 tokens (16 calls), '{"key":"missing"}' 17 -> 5 (2), '{}' -> 1 (2)
    assert t["mean_tokens_per_tool_call"]["arguments"] == pytest.approx((16 * 3 + 2 * 5 + 2 * 1) / 20)
    lr = s["learnability"]
    gaps = {row["item_index"]: row["best_minus_mean"] for row in lr["items"]}
    assert gaps[6] == gaps[7] == pytest.approx(0.5) and gaps[0] == 0 and gaps[9] is None
    assert lr["mean_best_minus_mean"] == pytest.approx(1.0 / 9)
    assert lr["share_items_all_same"] == pytest.approx(7 / 9)
    # the bad-key error body reached the model and the grader's details came back
    bad = next(r for r in run.results if r.item_index == 8)
    assert json.loads(bad.messages[2]["content"])["status_code"] == 400 and "missing" in bad.messages[2]["content"]
    good = next(r for r in run.results if r.item_index == 0)
    assert good.grade_details == {"subscores": {"answer": 1.0, "lookup": 1.0}, "reasons": ["good"]}
    assert len((tmp_path / "rollouts.jsonl").read_text().splitlines()) == 20


async def test_wrong_token_is_shown_to_the_model(base_url: str) -> None:
    bad_job = build_server().job_config(base_url, token="wrong", rate_limit=1000)
    results = await run_rollouts(items()[:1], KindPolicy(), bad_job, samples_per_item=1, settings=SETTINGS)
    [res] = results
    # the tool answers 401 (shown to the model); the grader's 401 discards the rollout
    assert res.tool_calls[0].status == 401
    assert res.discarded and res.discard_reason == "grader_client_error"
