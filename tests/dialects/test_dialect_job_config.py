"""Job configs for both services: shapes from the public samples, allowed values, ``rft job``.

Job literals below are copied from the public material (not from the code under test):
``microsoft-foundry/fine-tuning`` ``Demos/Agentic_RFT_PrivatePreview/README.md`` ("To specify
tools in the API or SDK", "Formatting for tool definitions", "Structure for specifying the
endpoint grader") and openai-python ``types/fine_tuning/reinforcement_hyperparameters_param.py``.
"""

from __future__ import annotations

import argparse
import json
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
import tomllib
from dialect_helpers import SECRET, TOKEN, catalog_server

from rft_sdk import ToolServer
from rft_sdk._commands import check as check_cli
from rft_sdk._commands import job as job_cli
from rft_sdk._jobs._config import validate_job
from rft_sdk.cli import COMMANDS_GROUP, _load_command
from rft_sdk.emulator import load_job

ROOT = Path(__file__).resolve().parents[2]

# Azure sample README: the job of client.fine_tuning.jobs.create(...) with its tools list
AZURE_SAMPLE_TOOLS = [
    {"name": "current_date", "server_url": "https://rft-endpointfn.azurewebsites.net/api/tools",
     "headers": {"X-Functions-Key": "<Add bearer token>"}},
    {"name": "get_by_id", "server_url": "https://rft-endpointfn.azurewebsites.net/api/tools",
     "headers": {"X-Functions-Key": "<Add bearer token>"}},
]
AZURE_SAMPLE_JOB = {
    "model": "gpt-5-2025-08-07", "training_file": "file-train", "validation_file": "file-valid",
    "suffix": "tc-mg-no-eg",
    "method": {"type": "reinforcement", "reinforcement": {
        "grader": {"type": "endpoint", "name": "some_name", "url": "https://example.com/grade",
                   "rate_limit": 50, "pass_threshold": 8},
        "tools": AZURE_SAMPLE_TOOLS, "max_episode_steps": 10,
        "hyperparameters": {"eval_interval": 3, "eval_samples": 5, "compute_multiplier": 1.0,
                            "reasoning_effort": "medium"}}}}
SAMPLE_GRADER_WITH_HEADERS = {"type": "endpoint", "name": "some_name", "url": "https://example.com/grade",
                              "headers": {"Authorization": "Bearer ${KEY}"}, "rate_limit": 50, "pass_threshold": 8}


def _with_grader(job: dict, grader: dict) -> dict:
    out = json.loads(json.dumps(job))
    out["method"]["reinforcement"]["grader"] = grader
    return out


def test_the_azure_sample_job_validates_for_both_targets_and_its_grader_headers_only_for_openai():
    for target in ("openai", "azure"):
        assert validate_job(AZURE_SAMPLE_JOB, target, submittable=True).model_dump(exclude_none=True) == {
            **AZURE_SAMPLE_JOB, "method": {"type": "reinforcement", "reinforcement": {
                **AZURE_SAMPLE_JOB["method"]["reinforcement"],
                "grader": {**AZURE_SAMPLE_JOB["method"]["reinforcement"]["grader"], "headers": {}}}}}
    with_headers = _with_grader(AZURE_SAMPLE_JOB, SAMPLE_GRADER_WITH_HEADERS)
    assert validate_job(with_headers, "openai").method.reinforcement.grader.headers
    with pytest.raises(ValueError, match="grader.headers: Azure AI Foundry's endpoint grader cannot send"):
        validate_job(with_headers, "azure")


def test_our_azure_job_has_the_sample_shape_one_shared_url_and_x_functions_key():
    job = catalog_server().job_config("https://rft.example.com/", target="azure", token=TOKEN,
                                      model="o4-mini-2025-04-16", training_file="file-train",
                                      validation_file="file-valid", suffix="catalog", seed=7, submittable=True)
    assert set(job) == {"model", "training_file", "validation_file", "suffix", "seed", "method"}
    rl = job["method"]["reinforcement"]
    assert rl["tools"] == [{"name": "search_catalog", "server_url": "https://rft.example.com/tools",
                            "headers": {"X-Functions-Key": TOKEN}}]
    assert [set(t) for t in rl["tools"]] == [set(AZURE_SAMPLE_TOOLS[0])]
    assert rl["grader"] == {"type": "endpoint", "name": "exact", "url": f"https://rft.example.com/grade/s/{SECRET}",
                            "headers": {}, "rate_limit": 50, "pass_threshold": 1.0}
    assert "hyperparameters" not in rl  # none chosen: every one is the service's own default
    assert load_job(job).tool("search_catalog").server_url == "https://rft.example.com/tools"  # emulator reads it


def test_our_openai_job_one_url_per_tool_and_bearer_on_tools_and_grader():
    job = catalog_server(grader_secret=None).job_config(
        "https://rft.example.com", target="openai", token=TOKEN, model="o4-mini-2025-04-16",
        training_file="file-train", parallel_tool_calls=False)
    rl = job["method"]["reinforcement"]
    assert rl["tools"][0]["server_url"] == "https://rft.example.com/tools/search_catalog"
    assert rl["tools"][0]["headers"] == rl["grader"]["headers"] == {"Authorization": f"Bearer {TOKEN}"}
    assert rl["grader"]["url"] == "https://rft.example.com/grade" and rl["parallel_tool_calls"] is False
    assert load_job(job).parallel_tool_calls is False


def test_azure_refuses_a_grader_that_would_need_a_token():
    with pytest.raises(ValueError, match="grader_secret"):
        catalog_server(grader_secret=None).job_config("https://x", target="azure", token=TOKEN)
    open_job = catalog_server(auth_tokens=None, grader_secret=None).job_config("https://x", target="azure")
    assert open_job["method"]["reinforcement"]["grader"]["url"] == "https://x/grade"


def test_auto_values_and_learning_rate_multiplier_reach_the_job_and_the_emulator_reads_them():
    job = catalog_server().job_config("https://x", token=TOKEN, n_epochs="auto", batch_size="auto",
                                      compute_multiplier="auto",
                                      eval_interval="auto", eval_samples="auto", learning_rate_multiplier=0.5,
                                      reasoning_effort="default")
    hp = job["method"]["reinforcement"]["hyperparameters"]
    assert hp == {"n_epochs": "auto", "batch_size": "auto", "compute_multiplier": "auto", "eval_interval": "auto",
                  "eval_samples": "auto", "learning_rate_multiplier": 0.5, "reasoning_effort": "default"}
    emulated = load_job(job).hyperparameters
    assert emulated.compute_multiplier == 1.0 and emulated.n_epochs is None and emulated.eval_samples is None


@pytest.mark.parametrize("kwargs, field", [
    ({"reasoning_effort": "max"}, "hyperparameters.reasoning_effort"),
    ({"n_epochs": 0}, "hyperparameters.n_epochs"),
    ({"learning_rate_multiplier": -1.0}, "hyperparameters.learning_rate_multiplier"),
    ({"compute_multiplier": "lots"}, "hyperparameters.compute_multiplier"),
    ({"suffix": "s" * 65}, "suffix"),
    ({"max_episode_steps": 0}, "max_episode_steps"),
    ({"rate_limit": 0}, "grader.endpoint.rate_limit"),
    ({"seed": -1}, "seed: Value error, must be in 0..2147483647"),
    ({"seed": 2**31}, "seed: Value error, must be in 0..2147483647"),
    ({"metadata": {f"k{i}": "v" for i in range(17)}}, "metadata: Value error, at most 16"),
    ({"target": "gcp"}, "target must be one of"),
])
def test_values_the_services_refuse_are_named(kwargs, field):
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        catalog_server().job_config("https://x", token=TOKEN, **kwargs)


def test_a_tools_only_server_exports_with_a_builtin_grader_or_says_how():
    tools_only = ToolServer(auth_env_var=None)

    @tools_only.tool
    def ping(x: int) -> int:
        """Return x.

        Args:
            x: a number.
        """
        return x

    with pytest.raises(ValueError, match="has no grader.*builtin_grader"):
        tools_only.job_config("https://x")
    check = {"type": "string_check", "name": "exact", "input": "{{sample.output_text}}",
             "reference": "{{item.reference_answer}}", "operation": "eq"}
    job = tools_only.job_config("https://x", builtin_grader=check, model="o4-mini", training_file="file-1",
                                submittable=True)
    assert job["method"]["reinforcement"]["grader"] == check
    with pytest.raises(ValueError, match=r"grader\.builtin\.type: Input should be 'string_check'"):
        tools_only.job_config("https://x", builtin_grader={"type": "vibes"})
    with pytest.raises(ValueError, match="submittable job needs model and training_file"):
        tools_only.job_config("https://x", builtin_grader=check, submittable=True)


def _app(tmp_path: Path, monkeypatch, grader: bool = True) -> str:
    name = f"job_app_{'graded' if grader else 'tools_only'}"
    (tmp_path / f"{name}.py").write_text(
        "from rft_sdk import ToolServer\n"
        f"server = ToolServer(auth_env_var=None, grader_secret={SECRET!r})\n"
        "@server.tool\ndef search(query: str) -> str:\n    return query\n"
        + ("@server.grader\ndef holistic(ctx):\n    return 1.0\n" if grader else ""))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return f"{name}:server"


def test_rft_job_writes_a_submittable_validated_job(tmp_path, monkeypatch, capsys):
    app = _app(tmp_path, monkeypatch)
    monkeypatch.setenv("RFT_TEST_TOKEN", TOKEN)
    out = tmp_path / "job.json"
    assert job_cli.main([app, "--base-url", "https://rft.example.com", "--target", "azure", "--model", "o4-mini",
                         "--training-file", "file-t", "--validation-file", "file-v", "--suffix", "retail",
                         "--seed", "3", "--token-env", "RFT_TEST_TOKEN", "--n-epochs", "auto",
                         "--learning-rate-multiplier", "2", "--no-parallel-tool-calls", "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().err
    job = json.loads(out.read_text())
    assert validate_job(job, "azure", submittable=True).seed == 3
    rl = job["method"]["reinforcement"]
    assert rl["hyperparameters"]["n_epochs"] == "auto" and rl["hyperparameters"]["learning_rate_multiplier"] == 2.0
    assert rl["parallel_tool_calls"] is False and rl["tools"][0]["headers"] == {"X-Functions-Key": TOKEN}
    assert rl["grader"]["url"] == f"https://rft.example.com/grade/s/{SECRET}" and rl["grader"]["headers"] == {}


@pytest.mark.parametrize("extra, grader, fragment", [
    (["--reasoning-effort", "max"], True, "invalid choice: 'max'"),
    (["--n-epochs", "many"], True, "expected a int or 'auto'"),
    (["--suffix", "x" * 65], True, "suffix: String should have at most 64 characters"),
    ([], False, "has no grader"),
    (["--token-env", "RFT_NOPE_UNSET"], True, "'RFT_NOPE_UNSET' is unset"),
])
def test_rft_job_refusals_exit_2_with_the_reason(tmp_path, monkeypatch, capsys, extra, grader, fragment):
    app = _app(tmp_path, monkeypatch, grader=grader)
    monkeypatch.delenv("RFT_NOPE_UNSET", raising=False)
    assert job_cli.main([app, "--base-url", "https://x", "--model", "m", "--training-file", "f", *extra]) == 2
    assert fragment in capsys.readouterr().err


def test_rft_job_exports_a_tools_only_server_with_a_builtin_grader(tmp_path, monkeypatch, capsys):
    app = _app(tmp_path, monkeypatch, grader=False)
    grader = {"type": "string_check", "name": "g", "input": "{{sample.output_text}}", "reference": "x",
              "operation": "eq"}
    assert job_cli.main([app, "--base-url", "https://x", "--model", "m", "--training-file", "f",
                         "--builtin-grader", json.dumps(grader)]) == 0
    assert json.loads(capsys.readouterr().out)["method"]["reinforcement"]["grader"] == grader


def test_new_commands_are_declared_entry_points_with_the_command_contract():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"][COMMANDS_GROUP]
    assert declared["job"] == "rft_sdk._commands.job" and declared["check"] == "rft_sdk._commands.check"
    for name, module in (("job", job_cli), ("check", check_cli)):
        assert _load_command(EntryPoint(name=name, value=declared[name], group=COMMANDS_GROUP)) is module
        parser = argparse.ArgumentParser()
        module.add_arguments(parser)
        with pytest.raises(SystemExit) as exc:
            parser.parse_args(["--help"])
        assert exc.value.code == 0


def test_rft_tools_base_url_takes_the_target(tmp_path, monkeypatch, capsys):
    from rft_sdk.cli import main

    app = _app(tmp_path, monkeypatch)
    monkeypatch.setenv("RFT_TEST_TOKEN", TOKEN)
    assert main(["tools", app, "--base-url", "https://t.example", "--target", "azure",
                 "--token-env", "RFT_TEST_TOKEN"]) == 0
    job = json.loads(capsys.readouterr().out)
    assert set(job) == {"method"}  # no model/files given: the method part only
    rl = job["method"]["reinforcement"]
    assert rl["tools"] == [{"name": "search", "server_url": "https://t.example/tools",
                            "headers": {"X-Functions-Key": TOKEN}}]
    assert rl["grader"]["headers"] == {} and rl["grader"]["url"].endswith(f"/grade/s/{SECRET}")
