"""How ``rft serve`` stops, as ``docs/deployment.md`` ("Stopping a server") states it: a real server on 127.0.0.1,
one tool call in flight, then a signal. SIGTERM and SIGINT drain (the call is answered, new connections are
refused, the lifespan shuts down); after SIGTERM the process ends killed by SIGTERM (uvicorn re-raises it), after
SIGINT with status 0; a second SIGINT cuts the drain short."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from rft_sdk.testing import free_port

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

APP = '''
import asyncio
from pathlib import Path
from rft_sdk import GradingContext, ToolServer

server = ToolServer(auth_env_var=None)


@server.tool
async def wait(seconds: float) -> str:
    """Wait, then answer.

    Args:
        seconds: how long.
    """
    Path("call-started").touch()  # the test signals once the call is in flight
    await asyncio.sleep(seconds)
    return f"waited {seconds}"


@server.grader
def grade(ctx: GradingContext) -> float:
    return 1.0
'''

CALL_S = 2.0


def _start(folder: Path) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "rft_sdk", "serve", "stop_app:server", "--port", str(port)],
                            cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return proc, base
        except httpx.TransportError:
            time.sleep(0.05)
        if proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError(f"rft serve did not start: {proc.communicate()[0]}")


def _call(base: str, out: list[Any]) -> None:
    body = {"type": "function_call", "id": "fc1", "call_id": "c1", "name": "wait",
            "arguments": json.dumps({"seconds": CALL_S}), "trace_id": "t1"}
    try:
        answer = httpx.post(f"{base}/tools/wait", json=body, timeout=30)
        out.append(answer.status_code)
    except httpx.HTTPError as exc:
        out.append(type(exc).__name__)


def _stop(folder: Path, *signals: signal.Signals) -> tuple[int, list[Any], str, str, float]:
    """Start a server, start one call, send ``signals`` once it runs (the later ones 0.3 s after the first);
    ``(exit status, the call's answer, a new request's fate during the drain, the log, seconds from the first
    signal to the exit)``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "stop_app.py").write_text(APP, encoding="utf-8")
    proc, base = _start(folder)
    out: list[Any] = []
    caller = threading.Thread(target=_call, args=(base, out))
    caller.start()
    deadline = time.monotonic() + 30
    while not (folder / "call-started").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    signalled = time.monotonic()
    proc.send_signal(signals[0])
    time.sleep(0.3)
    try:
        fresh = str(httpx.get(f"{base}/healthz", timeout=2).status_code)
    except httpx.TransportError as exc:
        fresh = type(exc).__name__
    for sig in signals[1:]:
        proc.send_signal(sig)
    log = proc.communicate(timeout=60)[0]
    took = time.monotonic() - signalled
    caller.join(timeout=60)
    return proc.returncode, out, fresh, log, took


def test_sigterm_drains_the_call_in_flight_then_ends_killed_by_sigterm(tmp_path: Path) -> None:
    code, answered, fresh, log, took = _stop(tmp_path, signal.SIGTERM)
    assert answered == [200] and fresh == "ConnectError", log  # answered; new connections refused
    assert "Application shutdown complete." in log
    assert code == -signal.SIGTERM, log  # uvicorn re-raises the signal: 143 in a shell
    assert took >= CALL_S - 0.2  # it waited for the call


def test_sigint_drains_the_same_way_and_exits_0(tmp_path: Path) -> None:
    code, answered, fresh, log, _ = _stop(tmp_path, signal.SIGINT)
    assert answered == [200] and fresh == "ConnectError", log
    assert "Application shutdown complete." in log and code == 0, log


def test_a_second_sigterm_leaves_the_drain_alone_and_a_second_sigint_cuts_it(tmp_path: Path) -> None:
    code, answered, _, log, _ = _stop(tmp_path / "term", signal.SIGTERM, signal.SIGTERM)
    assert answered == [200] and code == -signal.SIGTERM, log
    code, answered, _, log, took = _stop(tmp_path / "int", signal.SIGINT, signal.SIGINT)
    assert answered == [500] and code == 0, log  # the call in flight is cancelled, no lifespan shutdown
    assert took < CALL_S - 0.2 and "Application shutdown complete." not in log
