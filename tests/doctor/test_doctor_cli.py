"""``rft doctor`` as a command: files written, exit codes, user probes, targets, waivers, budgets, help."""

from __future__ import annotations

import json

import pytest
from doctor_helpers import job_for, make_items, make_server, production_log

from rft_sdk.doctor import cli
from rft_sdk.testing import run_server


def _inputs(tmp_path, server, url, items=None, **job):
    dataset, config, log = tmp_path / "d.jsonl", tmp_path / "job.json", tmp_path / "prod.jsonl"
    dataset.write_text("".join(json.dumps(i) + "\n" for i in (items or make_items(server))), encoding="utf-8")
    config.write_text(json.dumps(job_for(server, url, **job)), encoding="utf-8")
    log.write_text("".join(json.dumps(x) + "\n" for x in production_log()), encoding="utf-8")
    return ["--dataset", str(dataset), "--config", str(config), "--production-log", str(log)]


def _report(tmp_path):
    return json.loads((tmp_path / "out" / "doctor.json").read_text())


def test_cli_writes_json_and_html_and_exits_zero_on_an_honest_server(tmp_path, capsys):
    server = make_server("honest")
    with run_server(server) as url:
        code = cli.main([*_inputs(tmp_path, server, url), "--out", str(tmp_path / "out"),
                         "--policy", "doctor_helpers:NoisyPolicy", "--samples", "2", "--replays", "1",
                         "--regrades", "1", "--principles", "gradeable,production_like,learnable"])
    assert code == 0
    report = _report(tmp_path)
    assert set(report["principles"]) == {"gradeable", "production_like", "learnable"}
    assert all(p["passed"] is True for p in report["principles"].values())
    assert report["meta"]["policy"] == "NoisyPolicy" and report["meta"]["samples"] == 2
    html = (tmp_path / "out" / "doctor.html").read_text()
    assert html.count("data:image/png;base64,") == 2  # learnable spread, production drift
    assert "production_like" in capsys.readouterr().out


@pytest.mark.parametrize(("kind", "code", "failed"), [("injectable", 1, {"injected_score", "claims_score"}),
                                                     ("honest", 0, set())])
def test_cli_unhackable_with_user_probes(tmp_path, kind, code, failed, capsys):
    server = make_server(kind)
    with run_server(server) as url:
        got = cli.main([*_inputs(tmp_path, server, url), "--out", str(tmp_path / "out"),
                        "--principles", "gradeable,unhackable", "--write-tools", "set_value",
                        "--probes", "doctor_helpers:user_probes", "--probes", "doctor_helpers:fast_probes",
                        "--probes", "doctor_helpers:valid_probes", "--replays", "1", "--regrades", "1"])
    assert got == code
    report = _report(tmp_path)
    assert report["passed"] is (code == 0)
    unhackable = report["principles"]["unhackable"]
    assert unhackable["probes"]["claims_score"]["intent"] == "hack"  # a plain policy is a hack probe
    assert "direct_write" not in unhackable["probes"]  # valid probes are gradeable's
    assert set(unhackable["failed_probes"]) == failed
    gradeable = report["principles"]["gradeable"]
    assert gradeable["alternatives_by_path"]["direct_write"] == {"checked": 10, "rejected": 0, "truncated": 0}
    assert report["meta"]["user_probes"] == sorted({*cli.load_probes(["doctor_helpers:fast_probes"]),
                                                    "claims_score", "direct_write"})
    assert "intent" in capsys.readouterr().out  # the probe table shows each probe's intent


def test_cli_records_waived_probes_and_refuses_unknown_ones(tmp_path, capsys):
    server = make_server("no_budget")
    with run_server(server) as url:
        args = [*_inputs(tmp_path, server, url), "--out", str(tmp_path / "out"), "--principles", "unhackable",
                "--write-tools", "set_value"]
        assert cli.main([*args, "--skip-probes", "tool_spam, echo_prompt"]) == 0
        report = _report(tmp_path)
        assert cli.main([*args, "--skip-probes", "tool_spam,no_such_probe"]) == 2
    assert report["meta"]["skipped_probes"] == ["echo_prompt", "tool_spam"]
    unhackable = report["principles"]["unhackable"]
    assert unhackable["waived_probes"] == ["echo_prompt", "tool_spam"]
    assert "tool_spam" not in unhackable["probes"] and "2 waived" in unhackable["summary"]
    assert any("waived" in f["message"] for f in unhackable["findings"])
    out = capsys.readouterr()
    assert "WAIVED" in out.out and "no_such_probe" in out.err


def test_spam_is_silent_without_a_budget_and_fails_past_a_declared_one(tmp_path, capsys):
    server = make_server("no_budget")  # rewards ten-fold spam: it reaches the right end state
    with run_server(server) as url:
        args = [*_inputs(tmp_path, server, url), "--out", str(tmp_path / "out"), "--principles", "unhackable",
                "--write-tools", "set_value"]
        assert cli.main(args) == 0
        silent = _report(tmp_path)["principles"]["unhackable"]
        assert cli.main([*args, "--budget", "6"]) == 1
        failed = _report(tmp_path)["principles"]["unhackable"]
        items = [dict(i, max_tool_calls=6) for i in make_items(server)]
        assert cli.main([*_inputs(tmp_path, server, url, items), "--out", str(tmp_path / "out"),
                         "--principles", "unhackable", "--write-tools", "set_value"]) == 1
        declared = _report(tmp_path)["principles"]["unhackable"]
    # without a budget repeated calls that reach the right outcome are no hack: skipped, no warning
    assert silent["passed"] is True and silent["warned_probes"] == []
    assert silent["probes"]["tool_spam"]["verdict"] == "skipped"
    # a budget not enforced at all: the repeated calls and the refused ones both pay
    assert failed["failed_probes"] == ["tool_spam", "refused_spam"] and failed["budget"] == 6
    assert failed["probes"]["tool_spam"]["over_budget"] == list(range(10))
    assert declared["failed_probes"] == ["tool_spam", "refused_spam"]
    assert "FAIL" in capsys.readouterr().out


def test_cli_plays_azure(tmp_path, capsys):
    server = make_server("honest")
    with run_server(server) as url:
        code = cli.main([*_inputs(tmp_path, server, url, target="azure"), "--out", str(tmp_path / "out"),
                         "--principles", "gradeable,unhackable", "--target", "azure", "--write-tools", "set_value",
                         "--replays", "1", "--regrades", "1"])
    assert code == 0
    report = _report(tmp_path)
    assert report["meta"]["target"] == "azure" and report["meta"]["target_problems"] == []
    locked = make_server("honest", tokens=["t0k"])  # a job whose grader needs a token Azure cannot send
    with run_server(locked) as url:
        code = cli.main([*_inputs(tmp_path, locked, url, token="t0k"), "--out",
                         str(tmp_path / "out"), "--principles", "gradeable", "--target", "azure",
                         "--replays", "1", "--regrades", "1"])
    assert code == 1
    report = _report(tmp_path)
    assert report["principles"]["gradeable"]["grader_errors"] >= 10
    assert any("cannot send headers" in p for p in report["meta"]["target_problems"])
    assert "warning (azure)" in capsys.readouterr().err


def test_cli_refuses_bad_arguments(tmp_path, capsys):
    server = make_server("honest")
    args = _inputs(tmp_path, server, "http://127.0.0.1:9")
    assert cli.main([*args, "--out", str(tmp_path), "--probes", "doctor_helpers:production_log"]) == 2
    assert cli.main([*args, "--out", str(tmp_path), "--probes", "nomodule"]) == 2
    assert cli.main([*args, "--out", str(tmp_path), "--probes", "doctor_helpers:BAD_INTENT"]) == 2
    assert cli.main([*args, "--out", str(tmp_path), "--policy", "openai"]) == 2
    assert cli.main([*args, "--out", str(tmp_path), "--budget", "-1"]) == 2
    with pytest.raises(SystemExit) as exc:
        cli.main([*args, "--out", str(tmp_path), "--target", "gcp"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--policy openai needs --base-url and --model" in err and "'maybe'" in err and "--budget" in err
    assert "invalid choice: 'gcp'" in err
    assert not (tmp_path / "doctor.json").exists()


def test_cli_help_exits_zero(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--production-log" in out and "--skip-probes" in out and "--budget" in out and "azure" in out
    assert "emulate" in cli.__doc__ and cli.HELP


def test_declared_as_the_doctor_command():
    from pathlib import Path

    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    section = pyproject.split('[project.entry-points."rft_sdk.commands"]')[1].split("\n[")[0]
    assert 'doctor = "rft_sdk.doctor.cli"' in section
    assert all(hasattr(cli, attr) for attr in ("HELP", "add_arguments", "run"))
