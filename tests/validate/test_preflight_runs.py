"""``rft emulate`` and ``rft doctor`` run ``rft validate``'s checks first and stop before any rollout.

Real server (uvicorn on 127.0.0.1), real ``rft`` subprocesses; "no rollout" is measured on the server:
its tool-call counter stays at 0.
"""

from __future__ import annotations

import json

from preflight_helpers import TOKEN, drifted, lines_for, load_app, rft, write_jsonl

from rft_sdk.testing import run_server


def _calls(server) -> int:
    return sum(server.metrics["tools"].get(name, {}).get("calls", 0) for name in server.tools)


def test_schema_drift_stops_emulate_and_doctor_before_any_rollout(tmp_path):
    server = load_app(tmp_path, tokens=[TOKEN])
    dataset = write_jsonl(tmp_path / "train.jsonl", drifted(lines_for(server.dataset_tools())))
    good = write_jsonl(tmp_path / "good.jsonl", lines_for(server.dataset_tools()))
    with run_server(server) as url:
        config = tmp_path / "job.json"
        config.write_text(json.dumps(server.job_config(url, token=TOKEN, rate_limit=1000)), encoding="utf-8")
        emulate = rft("emulate", "--dataset", str(dataset), "--config", str(config), "--out", str(tmp_path / "e"),
                      "--no-progress", cwd=tmp_path)
        doctor = rft("doctor", "--dataset", str(dataset), "--config", str(config), "--out", str(tmp_path / "d"),
                     cwd=tmp_path)
        assert _calls(server) == 0  # nothing reached the tools
        ran = rft("emulate", "--dataset", str(good), "--config", str(config), "--out", str(tmp_path / "g"),
                  "--no-progress", cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr
        assert _calls(server) > 0  # the same job and server run when the dataset matches
    for result, prog in ((emulate, "rft emulate"), (doctor, "rft doctor")):
        assert result.returncode == 2, result.stderr
        assert (f"{prog}: error: lines 1-12, field tools.0.function.parameters.properties.nation: the server's "
                "'lookup_capital' has no parameter 'nation'") in result.stderr
        assert "found before any rollout" in result.stderr
    assert not (tmp_path / "e" / "rollouts.jsonl").exists() and not (tmp_path / "d" / "doctor.json").exists()
    summary = json.loads((tmp_path / "g" / "summary.json").read_text())
    assert summary["reward"]["mean"] == 1.0 and summary["discarded"] == 0  # reference replay, matching schema


def test_a_job_whose_headers_the_server_refuses_or_that_points_nowhere_is_stopped(tmp_path):
    server = load_app(tmp_path, tokens=[TOKEN])
    dataset = write_jsonl(tmp_path / "train.jsonl", lines_for(server.dataset_tools()))
    with run_server(server) as url:
        wrong = tmp_path / "wrong.json"
        wrong.write_text(json.dumps(server.job_config(url, token="not-the-token", rate_limit=1000)))
        refused = rft("emulate", "--dataset", str(dataset), "--config", str(wrong), "--out", str(tmp_path / "o"),
                      "--no-progress", cwd=tmp_path)
        assert _calls(server) == 0
    nowhere = rft("emulate", "--dataset", str(dataset), "--config", str(wrong), "--out", str(tmp_path / "o"),
                  "--no-progress", cwd=tmp_path)  # the server is gone now
    assert refused.returncode == 2 and "answered 401" in refused.stderr and "every tool call would answer 401" \
        in refused.stderr
    assert nowhere.returncode == 2 and "unreachable" in nowhere.stderr


def test_unknown_keys_in_a_hand_edited_job_are_errors_with_the_nearest_key(tmp_path):
    server = load_app(tmp_path)
    dataset = write_jsonl(tmp_path / "train.jsonl", lines_for(server.dataset_tools()))
    job = server.job_config("http://127.0.0.1:9", rate_limit=1000)
    job["method"]["reinforcement"]["max_episode_step"] = 10
    job["method"]["reinforcement"]["hyperparameters"] = {"n_epoch": 2}
    config = tmp_path / "job.json"
    config.write_text(json.dumps(job))
    emulate = rft("emulate", "--dataset", str(dataset), "--config", str(config), "--out", str(tmp_path / "o"),
                  "--no-progress", cwd=tmp_path)
    assert emulate.returncode == 2
    assert "max_episode_step: unknown key 'max_episode_step' (did you mean 'max_episode_steps'?)" in \
        " ".join(emulate.stderr.split())
    validate = rft("validate", str(dataset), "--config", str(config), "--json", cwd=tmp_path)
    fields = {f["field"]: f["message"] for f in json.loads(validate.stdout)["findings"]}
    assert validate.returncode == 1
    assert "did you mean 'max_episode_steps'?" in fields["job.method.reinforcement.max_episode_step"]
    assert "did you mean 'n_epochs'?" in fields["job.method.reinforcement.hyperparameters.n_epoch"]
    top = {**job, "sed": 3}
    top["method"]["reinforcement"].pop("max_episode_step")
    top["method"]["reinforcement"].pop("hyperparameters")
    config.write_text(json.dumps(top))
    emulate = rft("emulate", "--dataset", str(dataset), "--config", str(config), "--out", str(tmp_path / "o"),
                  "--no-progress", cwd=tmp_path)
    assert emulate.returncode == 2 and "did you mean 'seed'?" in emulate.stderr
