"""``rft top``: frames rendered to text against a real server, and the percentile rule."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from observe_app import server as app_server
from rich.console import Console

from rft_sdk.testing import run_server
from rft_sdk.top import build_frame, histogram_quantile, parse_metrics
from rft_sdk.top import cli as top_cli

ROOT = Path(__file__).resolve().parents[2]
AUTH = {"Authorization": "Bearer observe-token"}


def _rollout(client: httpx.Client, trace_id: str, lookups: int, grade: str) -> None:
    for i in range(lookups):
        body = {"call_id": f"{trace_id}_c{i}", "trace_id": trace_id, "arguments": json.dumps({"key": f"k{i}"})}
        assert client.post("/tools/lookup", json=body, headers=AUTH).status_code == 200
    body = {"call_id": f"{trace_id}_f", "trace_id": trace_id, "arguments": '{"reason": "r"}'}
    assert client.post("/tools/fail", json=body, headers=AUTH).status_code == 400
    r = client.post("/grade", json={"sample": {"output_text": grade}, "trace_id": trace_id}, headers=AUTH)
    assert r.status_code == 200


def _text(view) -> str:
    console = Console(record=True, width=140, color_system=None)
    console.print(view)
    return console.export_text()


def test_histogram_quantile_interpolates_like_prometheus() -> None:
    buckets = [(0.1, 5.0), (0.2, 10.0), (float("inf"), 10.0)]
    assert histogram_quantile(0.5, buckets) == pytest.approx(0.1)    # rank 5 ends bucket 1
    assert histogram_quantile(0.75, buckets) == pytest.approx(0.15)  # rank 7.5: half way through bucket 2
    assert histogram_quantile(0.99, [(1.0, 1.0), (float("inf"), 4.0)]) == 1.0  # in +Inf: highest finite bound
    assert histogram_quantile(0.5, [(1.0, 0.0), (float("inf"), 0.0)]) is None


def test_one_frame_against_a_real_server() -> None:
    with run_server(app_server) as url, httpx.Client(base_url=url) as client:
        with httpx.Client(headers=AUTH) as top_client:
            _, first = top_cli.render(top_client, url, None)
            _rollout(client, "top_a", 2, "VALUE")  # 3 calls, score 1.0
            _rollout(client, "top_b", 4, "no")     # 5 calls, score 0.5
            body = {"call_id": "open_c0", "trace_id": "top_open", "arguments": '{"key": "z"}'}
            assert client.post("/tools/lookup", json=body, headers=AUTH).status_code == 200
            view, second = top_cli.render(top_client, url, first)
            frame = build_frame(second[0], first[0], second[1] - first[1])
            cumulative = build_frame(second[0])
    text = _text(view)
    assert "rollouts in flight: 1" in text
    (lookup,) = [r for r in frame.tools if r.tool == "lookup"]
    (fail,) = [r for r in frame.tools if r.tool == "fail"]
    assert lookup.calls == 7 and fail.calls == 2 and fail.error_rate == 1.0 and lookup.error_rate == 0.0
    assert lookup.calls_per_s is not None and lookup.calls_per_s > 0
    # the tool sleeps 20 ms: the estimate lies in the (10 ms, 25 ms] bucket or above
    assert 0.01 <= lookup.p50_s <= lookup.p95_s <= lookup.p99_s <= 0.25
    assert frame.grades == 2 and frame.calls_per_rollout_mean == 4.0 and frame.score_mean == 0.75
    assert dict(frame.score_buckets)[0.5] == 1 and dict(frame.score_buckets)[1.0] == 1
    assert cumulative.window_s is None and cumulative.grades_per_s is None
    for needle in ("lookup", "fail", "100.0", "4.00", "0.750", "Score distribution"):
        assert needle in text, needle
    row = next(line for line in text.splitlines() if line.strip().startswith("│ lookup") or " lookup " in line)
    assert " 7 " in row


def test_run_once_prints_a_frame_and_reads_the_token_from_env(capsys, monkeypatch) -> None:
    monkeypatch.setenv("OBSERVE_TOKEN", "observe-token")
    with run_server(app_server) as url:
        ok = top_cli.run(argparse.Namespace(url=url, token_env="OBSERVE_TOKEN", interval=1.0, once=True))
        denied = top_cli.run(argparse.Namespace(url=url, token_env=None, interval=1.0, once=True))
    out = capsys.readouterr()
    assert ok == 0 and "Tool calls" in out.out and "rollouts in flight" in out.out
    assert denied == 2 and "401" in out.err and "--token-env" in out.err


def test_not_prometheus_text_is_a_readable_error() -> None:
    with pytest.raises(ValueError):
        parse_metrics('{"counters": {}}')


def test_without_rich_it_says_what_to_install() -> None:
    code = ("import sys, argparse; sys.modules['rich'] = None\n"
            "from rft_sdk.top import cli\n"
            "sys.exit(cli.run(argparse.Namespace(url='http://127.0.0.1:9', token_env=None, interval=1.0, once=True)))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert res.returncode == 2 and 'pip install "rft-sdk[observe]"' in res.stderr


def test_help_exits_0_and_names_the_options(capsys) -> None:
    parser = argparse.ArgumentParser(prog="rft top", description=top_cli.HELP)
    top_cli.add_arguments(parser)
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--token-env" in out and "--interval" in out and "--once" in out
