"""`rft emulate` CLI end to end (real uvicorn) and the OpenAI-compatible policy (respx)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import httpx
import pytest
import respx
from emu_helpers import FAST, GRADER_URL, make_item, make_job
from test_emu_integration import TOKEN, build_server, items

from rft_sdk.emulator import OpenAICompatiblePolicy, PolicyError, cli, run_rollouts
from rft_sdk.testing import run_server


@pytest.fixture(scope="module")
def base_url():
    with run_server(build_server()) as url:
        yield url


def write_inputs(tmp_path: Path, base_url: str, lines: list[dict]) -> tuple[Path, Path]:
    dataset, config = tmp_path / "train.jsonl", tmp_path / "job.json"
    server = build_server()
    tools = server.dataset_tools()
    dataset.write_text("".join(json.dumps({**line, "tools": tools}) + "\n" for line in lines))
    config.write_text(json.dumps(server.job_config(base_url, token=TOKEN, rate_limit=1000)))
    return dataset, config


def test_cli_reference_replay(tmp_path: Path, base_url: str, capsys: pytest.CaptureFixture) -> None:
    dataset, config = write_inputs(tmp_path, base_url, items())
    out = tmp_path / "out"
    code = cli.main(["--dataset", str(dataset), "--config", str(config), "--policy", "reference",
                     "--out", str(out), "--samples-per-item", "1", "--backoff", "0.001", "--no-progress",
                     "--max-discard-share", "0.1"])
    assert code == 0  # 1 of 10 discarded: within the 0.1 allowed (the reference default 0 would exit 1)
    summary = json.loads((out / "summary.json").read_text())
    # reference replay: items 0-8 answer v_i after a lookup (item 8's lookup fails but was called) -> 1.0;
    # item 9's tool keeps answering 503 -> discarded
    assert (summary["rollouts"], summary["graded"], summary["discarded"]) == (10, 9, 1)
    assert summary["reward"]["mean"] == 1.0 and summary["pass_rate"] == 1.0
    assert {"summary.json", "rollouts.jsonl", "score_hist.png", "tool_calls_hist.png", "report.html"} <= {
        p.name for p in out.iterdir()}
    assert "reward mean ± std" in capsys.readouterr().out


def test_cli_rejects_bad_dataset_naming_line_and_field(tmp_path: Path, base_url: str,
                                                       capsys: pytest.CaptureFixture) -> None:
    lines = items()
    del lines[3]["messages"]
    dataset, config = write_inputs(tmp_path, base_url, lines)
    code = cli.main(["--dataset", str(dataset), "--config", str(config), "--out", str(tmp_path / "o"),
                     "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "line 4, field messages" in err
    assert not (tmp_path / "o").exists()


def test_cli_warns_when_replay_needs_more_steps_and_can_override_them(
        tmp_path: Path, base_url: str, capsys: pytest.CaptureFixture) -> None:
    """Each item needs 2 turns (1 gold call + the answer): at 1 step every replay is cut short."""
    dataset, config = write_inputs(tmp_path, base_url, items())
    base = ["--dataset", str(dataset), "--config", str(config), "--policy", "reference",
            "--samples-per-item", "1", "--backoff", "0.001", "--no-progress", "--max-discard-share", "0.1"]
    assert cli.main([*base, "--out", str(tmp_path / "short"), "--max-episode-steps", "1"]) == 0
    captured = capsys.readouterr()
    err = " ".join(captured.err.split())  # rich wraps long lines
    assert "warning: 10 item(s) need more turns than max_episode_steps=1 (up to 2" in err
    summary = json.loads((tmp_path / "short" / "summary.json").read_text())
    # items 0-8 stop after their lookup with no answer (graded "" -> 0.0); item 9 is discarded first
    assert summary["truncated"] == 9 and summary["reward"]["mean"] == 0.0
    assert "truncated at max_episode_steps" in captured.out
    assert cli.main([*base, "--out", str(tmp_path / "ok"), "--max-episode-steps", "2"]) == 0
    captured = capsys.readouterr()
    assert "warning" not in captured.err and "truncated" not in captured.out
    summary = json.loads((tmp_path / "ok" / "summary.json").read_text())
    assert summary["truncated"] == 0 and summary["reward"]["mean"] == 1.0


def test_cli_parser_contract(capsys: pytest.CaptureFixture) -> None:
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    args = parser.parse_args(["--dataset", "d", "--config", "c", "--out", "o", "--policy", "perturbed"])
    assert cli.run(args) == 2  # the job config "c" cannot be read
    assert "error:" in capsys.readouterr().err
    # perturbed with no write tool given, declared or learnt (rft_sdk/emulator/_writes.py) is refused
    with pytest.raises(ValueError, match="no write tool is known"):
        cli.make_policy(args, set())
    assert type(cli.make_policy(args, {"set_value"})).__name__ == "PerturbedReplayPolicy"
    args.policy = "noisy"
    assert type(cli.make_policy(args)).__name__ == "NoisyReplayPolicy"


def completion(content=None, tool_calls=None) -> dict:
    return {"choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content, "tool_calls": tool_calls}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2}}


async def test_openai_policy_drives_a_rollout() -> None:
    tool_url = "http://tools.test/tools/lookup"
    with respx.mock(assert_all_called=False) as mock:
        chat = mock.post("http://llm.test/v1/chat/completions")
        chat.side_effect = [
            httpx.Response(503),  # retried
            httpx.Response(200, json=completion(tool_calls=[{"id": "call_abc", "type": "function",
                                                             "function": {"name": "lookup",
                                                                          "arguments": '{"key": "k1"}'}}])),
            httpx.Response(200, json=completion(content="v1")),
        ]
        tool = mock.post(tool_url).mock(return_value=httpx.Response(200, json={"output": "v1"}))
        mock.post(GRADER_URL).mock(return_value=httpx.Response(200, json={"score": 1.0}))
        policy = OpenAICompatiblePolicy("http://llm.test/v1/", "tiny", api_key="k", backoff_initial_s=0.001)
        item = make_item(1, tools=[{"type": "function", "function": {"name": "lookup", "parameters": {}}}])
        [res] = await run_rollouts([item], policy, make_job(["lookup"]), samples_per_item=1, settings=FAST)
        await policy.aclose()
    assert chat.call_count == 3 and res.score == 1.0
    sent = json.loads(tool.calls.last.request.content)
    assert sent["call_id"] == "call_abc" and sent["arguments"] == '{"key": "k1"}'
    last = json.loads(chat.calls.last.request.content)
    assert last["model"] == "tiny" and last["tools"] == item["tools"]
    assert last["messages"][-1] == {"role": "tool", "tool_call_id": "call_abc", "content": "v1"}
    assert chat.calls.last.request.headers["authorization"] == "Bearer k"
    assert res.steps[0].extra["usage"] == {"prompt_tokens": 5, "completion_tokens": 2}


@pytest.mark.parametrize("response", [httpx.Response(200, json={"nope": 1}), httpx.Response(400, text="bad"),
                                      httpx.Response(200, text="<html>")])
async def test_openai_policy_bad_answers_are_policy_errors(response: httpx.Response) -> None:
    with respx.mock() as mock:
        mock.post("http://llm.test/v1/chat/completions").mock(return_value=response)
        policy = OpenAICompatiblePolicy("http://llm.test/v1", "tiny", api_key="k")
        with pytest.raises(PolicyError):
            await policy.act([{"role": "user", "content": "hi"}], [], item={}, trace_id="trace_x")
        await policy.aclose()


def test_policy_module_attr_is_loaded_from_the_cwd(tmp_path, monkeypatch) -> None:
    from rft_sdk.emulator.cli import _load_object

    (tmp_path / "my_policies.py").write_text(
        "class Echo:\n"
        "    async def act(self, messages, tools, *, item, trace_id):\n"
        "        raise NotImplementedError\n"
        "instance = Echo()\n"
        "def factory():\n    return Echo()\n"
        "not_a_policy = 3\n")
    monkeypatch.chdir(tmp_path)
    assert type(_load_object("my_policies:instance")).__name__ == "Echo"
    assert type(_load_object("my_policies:factory")).__name__ == "Echo"  # a factory is called
    with pytest.raises(ValueError, match="is not a policy"):
        _load_object("my_policies:not_a_policy")
    with pytest.raises(ValueError, match="expected reference, perturbed, openai or MODULE:ATTR"):
        _load_object("my_policies")
