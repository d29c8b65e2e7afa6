"""The OpenEnv surface as OpenEnv's own tooling sees it: ``openenv validate --url``, the WebSocket library
``rft serve`` needs for ``/ws``, and ``rft export openenv`` folders that ``openenv validate`` accepts and
that install and serve without an index entry for ``rft-sdk``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rft_sdk.cli import main
from rft_sdk.testing import free_port, serve_process

from .conftest import DATASET, ITEMS, ROOT, run_eco

pytestmark = pytest.mark.slow  # a long file: the scheduler starts it first (tests/conftest.py)


def _openenv(eco_python: Path, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([str(eco_python.parent / "openenv"), "validate", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_openenv_validate_url_passes_and_still_fails_what_is_no_environment(eco_python):
    with serve_process("examples.retail.app:server", "--surfaces", "hosted,openenv",
                       env={"RFT_AUTH_TOKENS": "", "RFT_OPENENV_DATASET": str(DATASET)}) as url:
        done = _openenv(eco_python, "--url", url + "/openenv", "--json")
        root = _openenv(eco_python, "--url", url)  # the hosted routes are no OpenEnv environment
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["passed"] and report["mode"] == "simulation" and report["standard_profile"] == "openenv-http/1.x"
    assert {c["id"] for c in report["criteria"] if c["passed"]} == {
        "openapi_version_available", "health_endpoint", "metadata_endpoint", "schema_endpoint", "mcp_endpoint",
        "mode_endpoint_consistency"}
    assert root.returncode == 1 and "Verdict: FAIL" in root.stdout


def _shadow_websocket_libraries(tmp_path: Path) -> dict[str, str]:
    """An environment in which ``import websockets`` and ``import wsproto`` fail (a package that raises)."""
    for name in ("websockets", "wsproto"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"raise ImportError('{name} hidden by the test')\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]), "RFT_AUTH_TOKENS": ""}


def test_rft_serve_refuses_the_openenv_surface_without_a_websocket_library(tmp_path):
    env = _shadow_websocket_libraries(tmp_path)
    refused = subprocess.run([sys.executable, "-m", "rft_sdk", "serve", "examples.retail.app:server", "--surfaces",
                              "hosted,openenv", "--port", str(free_port())], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=60)
    assert refused.returncode == 2
    assert 'pip install "websockets>=13.0"' in refused.stderr and "/ws" in refused.stderr
    # the same environment serves surfaces without WebSockets
    hosted = subprocess.run([sys.executable, "-c", "from rft_sdk import ToolServer; "
                             "ToolServer(surfaces=['hosted', 'mcp'], auth_env_var=None); print('ok')"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert hosted.stdout.strip() == "ok", hosted.stderr


def test_export_openenv_writes_a_folder_openenvs_tooling_accepts_and_that_serves_offline(eco_python, tmp_path):
    out = tmp_path / "retail_env"
    assert main(["export", "openenv", str(out), "--app", "examples.retail.app:server", "--dataset", str(DATASET),
                 "--include", str(ROOT / "examples")]) == 0
    wheels = sorted((out / "wheels").glob("rft_sdk-*.whl"))
    assert len(wheels) == 1
    assert (out / "requirements.txt").read_text().splitlines()[0] == f"./wheels/{wheels[0].name}"
    assert f'rft-sdk = {{ path = "wheels/{wheels[0].name}" }}' in (out / "pyproject.toml").read_text()
    for name in ("openenv.yaml", "server/app.py", "server/Dockerfile", "data/retail_test.jsonl", "README.md"):
        assert (out / name).is_file(), name

    static = _openenv(eco_python, "--level", "static", "--skip-build", "--json", ".", cwd=out)
    assert static.returncode == 0, static.stdout + static.stderr
    assert json.loads(static.stdout)["verdict"] == "pass"

    # installs from the folder with no package index at all (rft-sdk from wheels/; its dependencies are here)
    site = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--quiet",
                                "--target", str(site), "-r", "requirements.txt"], cwd=out, capture_output=True,
                               text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(out)]), "PORT": str(port),
           "HOST": "127.0.0.1", "RFT_AUTH_TOKENS": ""}
    env.pop("RFT_SURFACES", None)
    served = subprocess.Popen([sys.executable, "-m", "server.app"], cwd=out, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_healthy(url + "/health", served)
        which = subprocess.run([sys.executable, "-c", "import rft_sdk; print(rft_sdk.__file__)"], env=env,
                               capture_output=True, text=True, cwd=out).stdout
        assert which.startswith(str(site))  # the bundled wheel is what serves
        validated = _openenv(eco_python, "--url", url, "--json")
        assert validated.returncode == 0 and json.loads(validated.stdout)["passed"], validated.stdout
        episode = {"index": 0, "calls": [[a["name"], a["arguments"], None] for a in ITEMS[0]["actions"]],
                   "answer": ITEMS[0]["reference_answer"]}
        played = run_eco(eco_python, "tests.surfaces.eco_openenv", url, "unused",
                         json.dumps({"episodes": [episode], "parallel": False}))["episodes"][0]
        assert played["done"] and played["reward"] == 1.0 and played["trace_id"].startswith("trace_")
    finally:
        served.terminate()
        served.wait(timeout=30)


def _wait_healthy(url: str, process: subprocess.Popen) -> None:
    import httpx
    from tenacity import Retrying, retry_if_exception_type, stop_after_delay, wait_fixed

    for attempt in Retrying(stop=stop_after_delay(60), wait=wait_fixed(0.3), reraise=True,
                            retry=retry_if_exception_type(httpx.TransportError)):
        with attempt:
            if process.poll() is not None:
                raise AssertionError(f"the exported server exited: {process.stdout.read() if process.stdout else ''}")
            httpx.get(url, timeout=2).raise_for_status()


def test_export_refuses_a_folder_in_use_and_bad_arguments_without_writing(tmp_path, capsys):
    used = tmp_path / "used"
    used.mkdir()
    (used / "keep.txt").write_text("mine")
    assert main(["export", "openenv", str(used), "--app", "examples.retail.app:server"]) == 2
    assert "not an empty folder" in capsys.readouterr().err and sorted(p.name for p in used.iterdir()) == ["keep.txt"]
    fresh = tmp_path / "fresh"
    assert main(["export", "openenv", str(fresh), "--app", "no colon"]) == 2
    assert main(["export", "openenv", str(fresh), "--app", "a:b", "--include", str(tmp_path / "missing")]) == 2
    assert not fresh.exists()
    assert main(["export", "nemo", str(fresh), "--app", "a:b"]) == 2  # argparse: not a choice
