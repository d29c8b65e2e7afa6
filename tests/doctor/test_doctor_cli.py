"""``rft doctor`` as a command: files written, exit codes, user probes, help."""

from __future__ import annotations

import json

import pytest
from doctor_helpers import job_for, make_items, make_server, production_log

from rft_sdk.doctor import cli
from rft_sdk.testing import run_server


def _inputs(tmp_path, server, url):
    dataset, config, log = tmp_path / "d.jsonl", tmp_path / "job.json", tmp_path / "prod.jsonl"
    dataset.write_text("".join(json.dumps(i) + "\n" for i in make_items(server)), encoding="utf-8")
    config.write_text(json.dumps(job_for(server, url)), encoding="utf-8")
    log.write_text("".join(json.dumps(x) + "\n" for x in production_log()), encoding="utf-8")
    return ["--dataset", str(dataset), "--config", str(config), "--production-log", str(log)]


def test_cli_writes_json_and_html_and_exits_zero_on_an_honest_server(tmp_path, capsys):
    server = make_server("honest")
    with run_server(server) as url:
        code = cli.main([*_inputs(tmp_path, server, url), "--out", str(tmp_path / "out"),
                         "--policy", "doctor_helpers:NoisyPolicy", "--samples", "2", "--replays", "1",
                         "--regrades", "1", "--principles", "gradeable,production_like,learnable"])
    assert code == 0
    report = json.loads((tmp_path / "out" / "doctor.json").read_text())
    assert set(report["principles"]) == {"gradeable", "production_like", "learnable"}
    assert all(p["passed"] is True for p in report["principles"].values())
    assert report["meta"]["policy"] == "NoisyPolicy" and report["meta"]["samples"] == 2
    html = (tmp_path / "out" / "doctor.html").read_text()
    assert html.count("data:image/png;base64,") == 2  # learnable spread, production drift
    assert "production_like" in capsys.readouterr().out


@pytest.mark.parametrize(("kind", "code", "failed"), [("injectable", 1, {"injected_score", "claims_score"}),
                                                     ("honest", 0, set())])
def test_cli_unhackable_with_a_user_probe(tmp_path, kind, code, failed):
    server = make_server(kind)
    with run_server(server) as url:
        got = cli.main([*_inputs(tmp_path, server, url), "--out", str(tmp_path / "out"), "--principles", "unhackable",
                        "--write-tools", "set_value", "--probes", "doctor_helpers:user_probes",
                        "--probes", "doctor_helpers:fast_probes"])
    assert got == code
    report = json.loads((tmp_path / "out" / "doctor.json").read_text())
    assert report["passed"] is (code == 0)
    probes = report["principles"]["unhackable"]["probes"]
    assert "claims_score" in probes and len(probes) == 12
    assert set(report["principles"]["unhackable"]["failed_probes"]) == failed


def test_cli_refuses_bad_arguments(tmp_path, capsys):
    server = make_server("honest")
    args = _inputs(tmp_path, server, "http://127.0.0.1:9")
    assert cli.main([*args, "--out", str(tmp_path), "--probes", "doctor_helpers:production_log"]) == 2
    assert cli.main([*args, "--out", str(tmp_path), "--probes", "nomodule"]) == 2
    assert cli.main([*args, "--out", str(tmp_path), "--policy", "openai"]) == 2
    assert cli.main([*args, "--out", str(tmp_path), "--target", "azure"]) == 2
    err = capsys.readouterr().err
    assert "--policy openai needs --base-url and --model" in err and "target 'azure'" in err
    assert not (tmp_path / "doctor.json").exists()


def test_cli_help_exits_zero(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--help"])
    assert exc.value.code == 0
    assert "--production-log" in capsys.readouterr().out
    assert "emulate" in cli.__doc__ and cli.HELP



def test_declared_as_the_doctor_command():
    from pathlib import Path

    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    section = pyproject.split('[project.entry-points."rft_sdk.commands"]')[1].split("\n[")[0]
    assert 'doctor = "rft_sdk.doctor.cli"' in section
    assert all(hasattr(cli, attr) for attr in ("HELP", "add_arguments", "run"))
