"""The emulator report's charts over time: tool calls per rollout and p95 latency per step."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from rft_sdk.emulator import RolloutResult, ToolCallResult, summarize
from rft_sdk.emulator._report import step_stats, write_report


def _rollout(n_calls: int, latency_s: float, score: float) -> RolloutResult:
    calls = [ToolCallResult(id="fc", call_id=f"c{i}", name="t", arguments="{}", status=200, output="x",
                            latency_s=latency_s, attempts=1) for i in range(n_calls)]
    return RolloutResult(trace_id="trace", item_index=0, sample_index=0, tool_calls=calls, score=score)


@pytest.fixture
def run() -> tuple[list[RolloutResult], list[int]]:
    # step 0: long tails (6, 8, 10 calls, 300 ms); step 5: 2, 3, 4 calls (100 ms) and one unsent call
    results = [_rollout(6, 0.3, 0.0), _rollout(8, 0.3, 0.5), _rollout(10, 0.3, 0.5),
               _rollout(2, 0.1, 1.0), _rollout(3, 0.1, 1.0), _rollout(4, 0.1, 0.5)]
    results[-1].tool_calls.append(ToolCallResult(id="fc", call_id="x", name="t", arguments="{}", latency_s=9.0))
    return results, [0, 0, 0, 5, 5, 5]


def test_step_stats(run) -> None:
    results, steps = run
    first, last = step_stats(results, steps)
    assert first["step"] == 0 and first["tool_calls"] == [6, 8, 10] and first["rollouts"] == 3
    assert first["calls_per_rollout"] == {"mean": 8.0, "p50": 8.0, "p95": pytest.approx(9.8)}  # 8 + 0.9 * 2
    assert first["latency_p95_s"] == pytest.approx(0.3) and first["reward_mean"] == pytest.approx(1 / 3)
    assert last["tool_calls"] == [2, 3, 5]  # the unsent call is in the trajectory ...
    assert last["latency_p95_s"] == pytest.approx(0.1)  # ... but not in the latency (never sent)
    with pytest.raises(ValueError, match="one step number per result"):
        step_stats(results, steps[:-1])


def test_report_draws_over_time_only_with_several_steps(tmp_path: Path, run) -> None:
    results, steps = run
    summary = summarize(results, pass_threshold=1.0)
    paths = write_report(tmp_path / "multi", results, summary, steps=steps)
    png = paths["over_time"].read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    html = paths["html"].read_text()
    assert html.count("data:image/png;base64,") == 3 and "<h2>Over time</h2>" in html
    assert f'alt="over_time" src="data:image/png;base64,{base64.b64encode(png).decode()}"' in html
    assert "<td>5</td><td>3</td><td>3.33</td>" in html and "300.0 ms" in html

    single = write_report(tmp_path / "single", results, summary, steps=[3] * len(results))
    plain = write_report(tmp_path / "plain", results, summary)
    for paths in (single, plain):
        assert "over_time" not in paths and not (paths["html"].parent / "over_time.png").exists()
        assert "Over time" not in paths["html"].read_text()
