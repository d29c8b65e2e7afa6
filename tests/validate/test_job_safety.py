"""``rft job`` refuses, before submission, every job the hosted run would reject or silently break.

Real ``rft job`` subprocesses on a real app module; each refusal exits 2 with one line naming the field
and the fix, and the flag that overrides it is shown to work.
"""

from __future__ import annotations

import json

import pytest
from preflight_helpers import TOKEN, rft, write_app

BASE = ["--model", "o4-mini-2025-04-16", "--training-file", "file-train"]


def _job(tmp_path, *args: str, tokens: list[str] | None = None, env: dict[str, str] | None = None):
    app = write_app(tmp_path, tokens=tokens)
    return rft("job", app, *args, cwd=tmp_path, env=env)


def test_a_job_whose_every_call_would_get_401_is_refused_with_the_fix(tmp_path):
    refused = _job(tmp_path, "--base-url", "https://x.example.com", *BASE, tokens=["s3cret"])
    assert refused.returncode == 2 and refused.stdout == ""
    assert "every tool call would answer 401" in refused.stderr and "--token-env" in refused.stderr
    ok = _job(tmp_path, "--base-url", "https://x.example.com", *BASE, "--token-env", "TOK", tokens=["s3cret"],
              env={"TOK": "s3cret"})
    assert ok.returncode == 0, ok.stderr
    rl = json.loads(ok.stdout)["method"]["reinforcement"]
    assert rl["tools"][0]["headers"] == rl["grader"]["headers"] == {"Authorization": "Bearer s3cret"}
    forced = _job(tmp_path, "--base-url", "https://x.example.com", *BASE, "--allow-unauthenticated",
                  tokens=["s3cret"])
    assert forced.returncode == 0 and json.loads(forced.stdout)["method"]["reinforcement"]["tools"][0]["headers"] == {}
    open_server = _job(tmp_path, "--base-url", "https://x.example.com", *BASE)  # the app checks no token
    assert open_server.returncode == 0 and "the job sends no auth header" in open_server.stderr


@pytest.mark.parametrize("url", ["http://tools.example.com", "https://127.0.0.1:8000", "https://localhost",
                                 "https://10.1.2.3", "https://[::1]:8000", "https://printer.local"])
def test_a_base_url_the_service_cannot_reach_safely_is_refused(tmp_path, url):
    refused = _job(tmp_path, "--base-url", url, *BASE, "--token-env", "TOK", tokens=[TOKEN], env={"TOK": TOKEN})
    assert refused.returncode == 2 and "--allow-insecure-url" in refused.stderr
    assert "server_url" in refused.stderr or "grader.url" in refused.stderr
    forced = _job(tmp_path, "--base-url", url, *BASE, "--token-env", "TOK", "--allow-insecure-url",
                  tokens=[TOKEN], env={"TOK": TOKEN})
    assert forced.returncode == 0, forced.stderr


@pytest.mark.parametrize("extra, fragment", [
    (["--seed", "-1"], "seed: Value error, must be in 0..2147483647"),
    (["--seed", "2147483648"], "seed: Value error, must be in 0..2147483647"),
    (["--target", "azure"], "validation_file: Azure AI Foundry's reinforcement fine-tuning requires both"),
    (["--target", "azure", "--validation-file", "file-v", "--eval-samples", "11"],
     "eval_samples: 11 is outside Azure's documented range 1-10"),
    (["--metadata", "no-equals-sign"], "--metadata 'no-equals-sign': expected KEY=VALUE"),
])
def test_values_the_services_refuse_exit_2_naming_the_field(tmp_path, extra, fragment):
    result = _job(tmp_path, "--base-url", "https://x.example.com", *BASE, "--allow-unauthenticated", *extra)
    assert result.returncode == 2 and fragment in result.stderr, result.stderr


def test_only_what_the_user_set_is_written_and_metadata_is_accepted(tmp_path):
    result = _job(tmp_path, "--base-url", "https://x.example.com", *BASE, "--allow-unauthenticated",
                  "--seed", "2147483647", "--metadata", "team=search", "--metadata", "run=7")
    assert result.returncode == 0, result.stderr
    job = json.loads(result.stdout)
    assert job["seed"] == 2147483647 and job["metadata"] == {"team": "search", "run": "7"}
    assert "hyperparameters" not in job["method"]["reinforcement"]  # the services' "auto" defaults apply
    chosen = _job(tmp_path, "--base-url", "https://x.example.com", *BASE, "--allow-unauthenticated",
                  "--n-epochs", "2", "--reasoning-effort", "low")
    assert json.loads(chosen.stdout)["method"]["reinforcement"]["hyperparameters"] == {"n_epochs": 2,
                                                                                     "reasoning_effort": "low"}
