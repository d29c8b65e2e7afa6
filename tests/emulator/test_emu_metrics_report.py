"""Summary numbers against hand-computed values, and the report files."""

from __future__ import annotations

import base64
import io
import json
import math
from pathlib import Path

import pytest
from rich.console import Console

from rft_sdk.emulator import (
    RolloutResult,
    ToolCallResult,
    comparison_table,
    estimate_tokens,
    print_comparison,
    print_summary,
    summarize,
    write_report,
)


def call(name: str, latency: float, args: str = "{}", output: str = "", status: int | None = 200,
         error: str | None = None, attempts: int = 1) -> ToolCallResult:
    return ToolCallResult(id="fc", call_id="call", name=name, arguments=args, status=status, output=output,
                          error=error, latency_s=latency, attempts=attempts)


def rollout(item: int, score: float | None, calls: list[ToolCallResult] = (), reason: str | None = None,
            perturbation: str | None = None) -> RolloutResult:
    return RolloutResult(trace_id=f"trace_{item}", item_index=item, sample_index=0, tool_calls=list(calls),
                         score=score, discarded=reason is not None, discard_reason=reason, perturbation=perturbation)


@pytest.fixture
def results() -> list[RolloutResult]:
    return [
        rollout(0, 1.0, [call("find", 0.1, '{"q":"ab"}', "12345678"), call("find", 0.2, '{"q":"cd"}', "abcdefgh")]),
        rollout(0, 0.0, [call("cancel", 0.3, "{}", "x" * 9, status=422, error="HTTP 422")]),
        rollout(0, 0.5, [call("nope", 0.0, "{}", "err", status=None, error="unknown tool", attempts=0)]),
        rollout(1, 1.0, perturbation="dropped cancel"),
        rollout(1, 1.0, perturbation="dropped cancel"),
        rollout(2, None, [call("cancel", 0.4, "{}", "", status=500, error="server_error", attempts=4)],
                reason="tool_server_error"),
        rollout(2, 0.25),
    ]


def test_summary_matches_hand_computation(results: list[RolloutResult]) -> None:
    s = summarize(results, pass_threshold=0.5, label="hand")
    assert (s["rollouts"], s["graded"], s["discarded"]) == (7, 6, 1)
    assert s["discards_by_reason"] == {"tool_server_error": 1}
    # graded scores 1, 0, .5, 1, 1, .25: mean 3.75/6; squared deviations sum to 0.96875
    assert s["reward"]["mean"] == pytest.approx(0.625)
    assert s["reward"]["std"] == pytest.approx(math.sqrt(0.96875 / 6))
    assert s["pass_rate"] == pytest.approx(4 / 6)
    t = s["tools"]
    assert t["calls"] == 5 and t["calls_per_rollout"] == pytest.approx(5 / 7)
    assert t["calls_per_rollout_by_tool"] == pytest.approx({"cancel": 2 / 7, "find": 2 / 7, "nope": 1 / 7})
    # ceil(chars/4): args 10,10,2,2,2 chars -> 3,3,1,1,1; outputs 8,8,9,3,0 chars -> 2,2,3,1,0
    assert t["mean_tokens_per_tool_call"] == pytest.approx({"arguments": 1.8, "output": 1.6, "total": 3.4})
    assert t["token_estimate"] == "ceil(chars / 4)"
    # latencies of sent calls 0.1 0.2 0.3 0.4; type-7 percentile at rank q*(n-1)
    assert t["latency_s"]["p50"] == pytest.approx(0.25)
    assert t["latency_s"]["p95"] == pytest.approx(0.3 + 0.85 * 0.1)
    assert t["latency_s"]["p99"] == pytest.approx(0.3 + 0.97 * 0.1)
    assert t["error_count"] == 3
    assert t["errors_by_kind"] == {"HTTP 422": 1, "server_error": 1, "unknown tool": 1}
    lr = s["learnability"]
    rows = {r["item_index"]: r for r in lr["items"]}
    assert rows[0]["best_minus_mean"] == pytest.approx(0.5) and rows[0]["all_same"] is False
    assert rows[1]["best_minus_mean"] == 0 and rows[1]["all_same"] is True
    assert rows[2]["n"] == 1 and rows[2]["all_same"] is None
    assert lr["mean_best_minus_mean"] == pytest.approx(0.5 / 3)
    assert lr["share_items_all_same"] == pytest.approx(0.5) and lr["items_with_2plus_samples"] == 2
    assert s["perturbations"] == {"dropped cancel": 2}
    json.dumps(s)  # JSON-ready


def test_token_counter_override(results: list[RolloutResult]) -> None:
    s = summarize(results, pass_threshold=1.0, token_counter=len)
    assert s["tools"]["mean_tokens_per_tool_call"]["arguments"] == pytest.approx(26 / 5)
    assert s["tools"]["token_estimate"] == "token_counter"
    assert [estimate_tokens(x) for x in ("", "a", "abcd", "abcde")] == [0, 1, 1, 2]


def test_empty_run_has_no_averages() -> None:
    s = summarize([rollout(0, None, reason="policy_error")], pass_threshold=1.0)
    assert s["reward"]["mean"] is None and s["pass_rate"] is None and s["tools"]["latency_s"]["p50"] is None


def test_report_files(tmp_path: Path, results: list[RolloutResult]) -> None:
    summary = summarize(results, pass_threshold=0.5, label="hand")
    paths = write_report(tmp_path / "out", results, summary)
    assert json.loads(paths["summary"].read_text()) == summary
    lines = paths["rollouts"].read_text().splitlines()
    assert len(lines) == 7 and json.loads(lines[5])["discard_reason"] == "tool_server_error"
    for key in ("score_hist", "tool_calls_hist"):
        assert paths[key].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = paths["html"].read_text()
    assert html.count("data:image/png;base64,") == 2 and "0.625" in html
    # the embedded images are exactly the PNG files written next to the report
    for key in ("score_hist", "tool_calls_hist"):
        assert f'alt="{key}" src="data:image/png;base64,{base64.b64encode(paths[key].read_bytes()).decode()}"' in html


def test_printed_summary_and_comparison(results: list[RolloutResult]) -> None:
    a = summarize(results, pass_threshold=0.5)
    b = summarize(results[:2], pass_threshold=0.5)
    buf = io.StringIO()
    console = Console(file=buf, width=200)
    print_summary(a, console)
    print_comparison({"reference": a, "perturbed": b}, console)
    out = buf.getvalue()
    assert "0.625 ± 0.402" in out and "tool_server_error: 1" in out
    table = comparison_table({"reference": a, "perturbed": b})
    assert [c.header for c in table.columns] == ["metric", "reference", "perturbed"]
    assert "0.500 ± 0.500" in out  # perturbed column: scores 1 and 0


def test_subscores_and_reasons_are_aggregated_over_graded_rollouts() -> None:
    def graded(item: int, score: float | None, details: dict | None, reason: str | None = None) -> RolloutResult:
        r = rollout(item, score, reason=reason)
        r.grade_details = details
        return r

    results = [
        graded(0, 1.0, {"subscores": {"db_match": 1.0, "info": 1.0}, "reasons": []}),
        graded(0, 0.0, {"subscores": {"db_match": 0.0, "info": 0.5}, "reasons": ["db differs"]}),
        graded(1, 0.0, {"subscores": {"db_match": 0.0}, "reasons": ["db differs", "missing 12.50"]}),
        graded(1, 0.5, None),                                         # grader sent no details
        graded(2, None, {"subscores": {"db_match": 1.0}}, reason="grader_error"),  # discarded: not counted
    ]
    s = summarize(results, pass_threshold=1.0)
    assert s["subscores"] == {"db_match": {"mean": pytest.approx(1 / 3), "n": 3},
                              "info": {"mean": pytest.approx(0.75), "n": 2}}
    assert s["reasons"] == {"db differs": 2, "missing 12.50": 1}
    out = io.StringIO()
    print_summary(s, console=Console(file=out, width=120))
    assert "sub-score db_match (mean)" in out.getvalue() and "0.333" in out.getvalue()
