"""MemoryStore bounds, export shapes, public names and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from types import ModuleType

import pytest
from sdk_helpers import ROOT, make_server

import rft_sdk
from rft_sdk import MemoryStore, StoredRollout
from rft_sdk.testing import free_port


async def test_memory_store_capacity_ttl_and_release():
    store = MemoryStore(ttl_s=0.2, max_rollouts=3)
    for i in range(5):
        await store.save(StoredRollout(trace_id=f"t{i}"))
    for i in (0, 1):  # evicted in progress: refused, never a silent fresh start
        with pytest.raises(rft_sdk.RolloutEvictedError):
            await store.load(f"t{i}")
    assert [await store.load(f"t{i}") is not None for i in range(2, 5)] == [True, True, True]
    assert store.stats()["evicted"] == 2
    await store.release("t2")
    await store.release("t3", after_s=0.05)
    assert await store.load("t2") is None and await store.load("t3") is not None
    time.sleep(0.06)
    assert await store.load("t3") is None
    time.sleep(0.2)
    assert await store.load("t4") is None
    assert store.stats() == {"rollouts": 0, "evicted": 2, "expired": 1, "released": 2, "marks_dropped": 0}
    with pytest.raises(ValueError):
        MemoryStore(ttl_s=0)


def test_public_names():
    # submodules become attributes of the package once any test imports them: not public names
    public = sorted(n for n, v in vars(rft_sdk).items() if not n.startswith("_") and not isinstance(v, ModuleType))
    assert public == rft_sdk.__all__ == sorted(rft_sdk.__all__)
    for name in ("ToolServer", "tool", "Rollout", "ToolCallRecord", "RetryableToolError", "ToolError",
                 "grader", "GradingContext", "Grade", "MemoryStore", "RolloutStore"):
        assert name in rft_sdk.__all__


def test_export_shapes():
    server = make_server()
    @server.grader
    def holistic(ctx):
        return 1.0

    tools = server.job_tools("https://x.example.com/", {"Authorization": "Bearer t"})
    assert tools[0] == {"name": "add_to_cart", "server_url": "https://x.example.com/tools/add_to_cart",
                        "headers": {"Authorization": "Bearer t"}}
    assert server.grader_spec("https://x.example.com", pass_threshold=0.8) == {
        "type": "endpoint", "name": "holistic", "url": "https://x.example.com/grade", "headers": {},
        "rate_limit": 50, "pass_threshold": 0.8}
    assert server.grader_spec("https://x", name="holistic")["url"] == "https://x/grade/holistic"
    with pytest.raises(ValueError):
        server.grader_spec("https://x", name="missing")
    job = server.job_config("https://x", token="tok", max_episode_steps=7)
    rl = job["method"]["reinforcement"]
    assert job["method"]["type"] == "reinforcement"
    assert rl["max_episode_steps"] == 7 and rl["grader"]["headers"] == {"Authorization": "Bearer tok"}
    assert {t["name"] for t in rl["tools"]} == {"add_to_cart", "increment", "fail"}
    assert "hyperparameters" not in rl  # none chosen: the job carries only what the user chose (spec §1)


def test_cli_tools_and_lazy_delegates(tmp_path):
    (tmp_path / "myapp.py").write_text(
        "from rft_sdk import ToolServer\nserver = ToolServer(auth_env_var=None)\n"
        "@server.tool\ndef ping(x: int) -> str:\n    return str(x)\n")
    code = ("import sys; from rft_sdk.cli import main; rc = main(sys.argv[1:]); "
            "assert 'torch' not in sys.modules, 'torch imported'; sys.exit(rc)")
    out = subprocess.run([sys.executable, "-c", code, "tools", "myapp:server"], cwd=tmp_path,
                         capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)}, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)[0]["function"]["name"] == "ping"
    out = subprocess.run([sys.executable, "-c", code, "tools", "nosuch:server"], cwd=tmp_path,
                         capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)}, timeout=60)
    assert out.returncode == 2 and "cannot load" in out.stderr


def test_cli_serve_runs_uvicorn(tmp_path):
    import httpx

    from rft_sdk.testing import serve_process

    (tmp_path / "myapp.py").write_text(
        "from rft_sdk import ToolServer\nserver = ToolServer(auth_env_var=None)\n"
        "@server.tool\ndef ping(x: int) -> str:\n    return str(x * 2)\n")
    with serve_process("myapp:server", cwd=tmp_path, env={"PYTHONPATH": str(ROOT)}) as url:
        r = httpx.post(f"{url}/tools/ping", json={"call_id": "call_1", "trace_id": "trace_1", "arguments": "{\"x\": 21}"})
    assert r.json()["output"] == "42"


async def test_server_template_app_serves_and_grades(monkeypatch):
    import httpx

    monkeypatch.setenv("RFT_AUTH_TOKENS", "tmpl-token")
    import importlib

    import server_templates.tool_server.app as tmpl

    tmpl = importlib.reload(tmpl)  # read the env var now
    auth = {"Authorization": "Bearer tmpl-token"}
    body = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "save_note",
            "arguments": json.dumps({"title": "a", "body": "x"}), "trace_id": "trace_tmpl", "item": {}}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=tmpl.server), base_url="http://t") as c:
        assert (await c.post("/tools/save_note", json=body)).status_code == 401
        assert (await c.post("/tools/save_note", json=body, headers=auth)).json()["output"] == "saved 'a' (1 notes)"
        r = await c.post("/grade", json={"sample": {"output_text": "ok"}, "item": {"expected_titles": ["a", "b"]},
                                          "trace_id": "trace_tmpl"}, headers=auth)
        assert r.json() == {"score": 0.0}


def test_serve_process_reports_a_child_that_cannot_start(tmp_path):
    from rft_sdk.testing import serve_process

    with pytest.raises(RuntimeError, match="exited with status"):
        with serve_process("no_such_module:server", cwd=tmp_path, startup_timeout=20):
            pass


# The job shape of hosted-protocol §1, copied from the spec (not from the code under test).
SPEC_JOB = json.loads("""
{"method": {"type": "reinforcement", "reinforcement": {
  "tools": [{"name": "search", "server_url": "https://tools.example.com/tools/search",
             "headers": {"Authorization": "Bearer <token>"}}],
  "grader": {"type": "endpoint", "name": "holistic", "url": "https://tools.example.com/grade",
             "headers": {"Authorization": "Bearer <token>"}, "rate_limit": 50,
             "pass_threshold": 0.8},
  "max_episode_steps": 10,
  "hyperparameters": {"compute_multiplier": 1.0, "eval_interval": 3, "eval_samples": 5,
                      "n_epochs": 1, "batch_size": 16, "reasoning_effort": "medium"}}}}
""")


def _shape(value):
    """Keys and JSON types, recursively (header names and values are free-form)."""
    if isinstance(value, dict):
        return {k: ("headers" if k == "headers" else _shape(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__


def _write_app(tmp_path, name, grader=True):
    (tmp_path / f"{name}.py").write_text(
        "from rft_sdk import ToolServer\nserver = ToolServer(auth_env_var=None)\nnot_a_server = 42\n"
        "@server.tool\ndef search(query: str) -> str:\n    return query\n"
        + ("@server.grader\ndef holistic(ctx):\n    return 1.0\n" if grader else ""))


def test_cli_tools_base_url_prints_exactly_the_spec_job_shape(tmp_path, monkeypatch, capsys):
    from rft_sdk.cli import main

    _write_app(tmp_path, "spec_shape_app")
    monkeypatch.chdir(tmp_path)
    assert main(["tools", "spec_shape_app:server", "--base-url", "https://tools.example.com"]) == 0
    job = json.loads(capsys.readouterr().out)
    spec = json.loads(json.dumps(SPEC_JOB))
    del spec["method"]["reinforcement"]["hyperparameters"]  # optional: left out unless chosen (spec §1)
    assert _shape(job) == _shape(spec)
    rl = job["method"]["reinforcement"]
    assert rl["tools"] == [{"name": "search", "server_url": "https://tools.example.com/tools/search",
                            "headers": {}}]
    assert rl["grader"]["url"] == "https://tools.example.com/grade" and rl["grader"]["name"] == "holistic"


@pytest.mark.parametrize("argv, fragment", [
    (["tools", "cli_err_app:server", "--base-url", "https://x"], "has no grader"),
    (["tools", "cli_err_app:not_a_server"], "is a int, not a ToolServer"),
    # a free port on loopback: the address is checked first (before the app is imported), then the app
    (["serve", "cli_err_app:not_a_server", "--host", "127.0.0.1", "--port", str(free_port())], "not an ASGI app"),
    (["serve", "cli_err_app:not_a_server", "--host", "256.0.0.1"], "is not an address of this machine"),
    (["serve", "cli_err_app"], "expected MODULE:ATTR"),
    (["tools", "cli_err_app:missing"], "has no attribute 'missing'"),
])
def test_cli_errors_are_one_line_and_exit_2(tmp_path, monkeypatch, capsys, argv, fragment):
    from rft_sdk.cli import main

    _write_app(tmp_path, "cli_err_app", grader=False)
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err and err.count("\n") == 1


def test_cli_tools_job_options_and_token_from_environment(tmp_path, monkeypatch, capsys):
    from rft_sdk.cli import main

    _write_app(tmp_path, "job_opts_app")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MY_RFT_TOKEN", "tok-123")
    assert main(["tools", "job_opts_app:server", "--base-url", "https://t.example", "--token-env", "MY_RFT_TOKEN",
                 "--max-episode-steps", "14", "--compute-multiplier", "2.5", "--rate-limit", "20",
                 "--pass-threshold", "0.8"]) == 0
    rl = json.loads(capsys.readouterr().out)["method"]["reinforcement"]
    assert rl["max_episode_steps"] == 14 and rl["hyperparameters"]["compute_multiplier"] == 2.5
    assert rl["grader"]["rate_limit"] == 20 and rl["grader"]["pass_threshold"] == 0.8
    assert rl["tools"][0]["headers"] == {"Authorization": "Bearer tok-123"}
    assert rl["grader"]["headers"] == {"Authorization": "Bearer tok-123"}

    monkeypatch.delenv("MY_RFT_TOKEN")
    assert main(["tools", "job_opts_app:server", "--base-url", "https://t.example", "--token-env", "MY_RFT_TOKEN"]) == 2
    assert "'MY_RFT_TOKEN' is unset" in capsys.readouterr().err
