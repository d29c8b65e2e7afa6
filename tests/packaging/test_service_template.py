"""``server_templates/service/Dockerfile``: its entrypoint and health check, run as written (outside Docker:
no daemon on the test machine) in an ``rft init`` task, on the configured port."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rft_sdk._commands.init import scaffold
from rft_sdk.testing import free_port

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "server_templates" / "service" / "Dockerfile").read_text()


def entrypoint(tmp_path: Path) -> Path:
    """The entrypoint script the Dockerfile writes (its ``COPY <<'EOF'`` heredoc), with ``rft`` on PATH."""
    body = re.search(r"COPY --chmod=755 <<'EOF' /usr/local/bin/rft-entrypoint\n(.*?)\nEOF\n", DOCKERFILE, re.S)
    assert body is not None
    script = tmp_path / "rft-entrypoint"
    script.write_text(body.group(1) + "\n")
    script.chmod(0o755)
    shim = tmp_path / "bin" / "rft"  # `rft` as installed by the wheel: this interpreter's rft_sdk
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m rft_sdk "$@"\n')
    shim.chmod(0o755)
    return script


def healthcheck() -> list[str]:
    (command,) = re.findall(r'HEALTHCHECK .* CMD python -c "(.*)"', DOCKERFILE)
    return [sys.executable, "-c", command]


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    out = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}", "RFT_APP": "app:server",
           "PYTHONPATH": str(ROOT), **extra}
    out.pop("RFT_AUTH_TOKENS", None) if "RFT_AUTH_TOKENS" not in extra else None
    return out


@pytest.mark.slow
def test_the_entrypoint_serves_the_users_app_and_the_health_check_follows_the_port(tmp_path: Path) -> None:
    script = entrypoint(tmp_path)
    task = tmp_path / "repo"
    scaffold(task)
    port = str(free_port())
    run_env = env(tmp_path, PORT=port, RFT_AUTH_TOKENS="a" * 32)
    assert subprocess.run(healthcheck(), env=run_env, capture_output=True, timeout=30).returncode != 0  # nothing yet
    proc = subprocess.Popen([str(script)], cwd=task, env=run_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while subprocess.run(healthcheck(), env=run_env, capture_output=True, timeout=30).returncode != 0:
            assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
            assert time.monotonic() < deadline, "not healthy within 60 s"
            time.sleep(0.5)
        import httpx

        answer = httpx.post(f"http://127.0.0.1:{port}/tools/get_book", timeout=10,
                            headers={"Authorization": "Bearer " + "a" * 32},
                            json={"call_id": "c1", "trace_id": "t1", "arguments": '{"book_id": "b1"}'})
        assert answer.status_code == 200 and '"Dune"' in answer.json()["output"]
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.mark.parametrize(("extra", "says"), [
    ({}, "RFT_AUTH_TOKENS is not set"),
    ({"RFT_AUTH_TOKENS": "short"}, "has 5 characters"),
])
def test_the_entrypoint_refuses_to_serve_without_real_tokens(tmp_path: Path, extra: dict[str, str], says: str
                                                             ) -> None:
    script = entrypoint(tmp_path)
    result = subprocess.run([str(script)], cwd=tmp_path, env=env(tmp_path, **extra), capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 64 and says in result.stderr
