"""``rft check tool|grader`` against a real uvicorn server, with the public samples' bodies.

Bodies: ``microsoft-foundry/fine-tuning`` ``Demos/Agentic_RFT_PrivatePreview/RFT_ToolCall/README.md``
§2.3 (``{"query": "Urban Puffer", "top_k": 1}``; the grader test ``{"sample": {"output_text":
"JKT-URB-009"}, "item": {"reference_answer": "JKT-URB-009"}, "trace_id": "trace_test"}``).
"""

from __future__ import annotations

import json

import httpx
import pytest
from dialect_helpers import CATALOG, SECRET, TOKEN

from rft_sdk._commands import check as check_cli
from rft_sdk._validation._check import check_grader, check_tool

ARGS = {"query": "Urban Puffer", "top_k": 1}
SAMPLE = {"output_text": "JKT-URB-009"}
ITEM = {"reference_answer": "JKT-URB-009"}


@pytest.mark.parametrize("target, path", [("openai", "/tools/search_catalog"), ("azure", "/tools")])
def test_check_tool_sends_the_services_request_and_keeps_the_rollout(live, target, path):
    _, url = live
    first = check_tool(url, "search_catalog", ARGS, item=ITEM, target=target, token=TOKEN)
    assert first.ok and first.url == url + path and first.status == 200
    body = first.request_body
    assert body["type"] == "function_call" and body["name"] == "search_catalog" and body["item"] == ITEM
    assert json.loads(body["arguments"]) == ARGS and body["trace_id"].startswith("trace_")
    header = "X-Functions-Key" if target == "azure" else "Authorization"
    assert first.request_headers[header] in ("***", "Bearer ***") and TOKEN not in json.dumps(first.request_headers)
    assert first.response_body["call_id"] == body["call_id"]
    assert json.loads(first.response_body["output"]) == {"items": [CATALOG[0]], "searches": 1}
    again = check_tool(url, "search_catalog", ARGS, trace_id=body["trace_id"], target=target, token=TOKEN)
    assert json.loads(again.response_body["output"])["searches"] == 2  # same rollout state
    assert first.elapsed_s > 0


def test_check_tool_reports_refusals_and_transport_failures(live):
    _, url = live
    assert check_tool(url, "search_catalog", ARGS).status == 401
    bad = check_tool(url, "search_catalog", {"query": "x", "top_k": "many"}, token=TOKEN)
    assert bad.status == 422 and bad.response_body["error"]["details"][0]["field"] == "top_k"
    assert check_tool(url, "nope", ARGS, token=TOKEN, target="azure").status == 404
    gone = check_tool("http://127.0.0.1:9", "search_catalog", ARGS, token=TOKEN, timeout_s=2)
    assert gone.status is None and gone.error and not gone.ok


def test_check_grader_with_secret_path_headers_or_neither(live):
    _, url = live
    tool = check_tool(url, "search_catalog", ARGS, token=TOKEN)
    trace = tool.request_body["trace_id"]
    by_secret = check_grader(url, SAMPLE, item=ITEM, trace_id=trace, grader_secret=SECRET, target="azure")
    assert by_secret.ok and by_secret.response_body == {"score": 1.0}
    assert by_secret.url == f"{url}/grade/s/***" and by_secret.request_headers == {"Content-Type": "application/json"}
    assert by_secret.grade_details == {"subscores": {"calls": 1.0}, "reasons": ["traced=True"]}
    no_trace = check_grader(url, SAMPLE, item=ITEM, token=TOKEN, grader="exact")
    assert no_trace.url == f"{url}/grade/exact" and "trace_id" not in no_trace.request_body
    assert no_trace.grade_details["reasons"] == ["traced=False"]
    # Azure's grader sends no headers: without the secret path the protected grader refuses it
    assert check_grader(url, SAMPLE, item=ITEM, token=TOKEN, target="azure").status == 401


def test_rft_check_cli_prints_request_status_timing_and_answer(live, capsys, monkeypatch):
    _, url = live
    monkeypatch.setenv("RFT_TEST_TOKEN", TOKEN)
    monkeypatch.setenv("RFT_TEST_SECRET", SECRET)
    assert check_cli.main(["tool", "search_catalog", "--args", json.dumps(ARGS), "--item", json.dumps(ITEM),
                           "--trace-id", "trace_cli", "--url", url, "--token-env", "RFT_TEST_TOKEN",
                           "--target", "azure"]) == 0
    out = capsys.readouterr().out
    assert f"POST {url}/tools\n" in out and "X-Functions-Key: ***" in out and '"trace_id": "trace_cli"' in out
    assert "-> HTTP 200 in " in out and " ms" in out and '"sku": "JKT-URB-009"' in out and TOKEN not in out
    assert check_cli.main(["grader", "--sample", json.dumps(SAMPLE), "--item", json.dumps(ITEM), "--trace-id",
                           "trace_cli", "--url", url, "--secret-env", "RFT_TEST_SECRET", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == 200 and result["response"] == {"score": 1.0} and SECRET not in json.dumps(result)
    assert result["grade_details"]["subscores"] == {"calls": 1.0} and result["elapsed_ms"] > 0
    assert check_cli.main(["grader", "--sample", json.dumps(SAMPLE), "--url", url]) == 1  # 401: no token
    assert "-> HTTP 401" in capsys.readouterr().out


@pytest.mark.parametrize("argv, fragment", [
    (["tool", "search_catalog", "--args", "{nope", "--url", "http://x"], "--args: invalid JSON"),
    (["tool", "search_catalog", "--args", "{}", "--item", "[1]", "--url", "http://x"], "--item: must be a JSON object"),
    (["grader", "--sample", "@/no/such/file.json", "--url", "http://x"], "--sample: cannot read"),
    (["grader", "--sample", "{}", "--url", "http://x", "--token-env", "RFT_NOPE_UNSET"], "'RFT_NOPE_UNSET' is unset"),
])
def test_rft_check_cli_refuses_bad_options_with_exit_2(capsys, monkeypatch, argv, fragment):
    monkeypatch.delenv("RFT_NOPE_UNSET", raising=False)
    assert check_cli.main(argv) == 2
    assert fragment in capsys.readouterr().err


def test_check_args_from_file(tmp_path, live, capsys):
    _, url = live
    (tmp_path / "args.json").write_text(json.dumps(ARGS))
    assert check_cli.main(["tool", "search_catalog", "--args", f"@{tmp_path / 'args.json'}", "--url", url]) == 1
    assert "-> HTTP 401" in capsys.readouterr().out  # the file was read and sent; no token given
    assert httpx.get(f"{url}/healthz").status_code == 200
