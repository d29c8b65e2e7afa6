"""Issue 39 #1 and #4 in process: user code never holds the event loop; every ``rft_sdk.*`` logger is filtered.

#1 before: an ``async def`` grader that computes (the retail grader's quadratic expression on a long answer)
ran on the event loop, and ``/healthz`` waited as long as it (16.7 s). Now an async grader that never awaits
runs in a worker thread, and any async grader or tool whose step holds the loop past ``LOOP_STALL_S`` is named
in a warning with the fix; it stays on the loop (a second loop strands the clients it shares: it hung).
#4 before: the control-character filter sat on the ``rft_sdk`` logger only; records of its children
(``rft_sdk.eval_protocol``, ``rft_sdk.sandbox``) bypassed it.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import pkgutil
import threading
import time
from pathlib import Path

import httpx

import rft_sdk
from rft_sdk import GradingContext, Rollout, ToolServer
from rft_sdk._wire._redact import ControlCharFilter, get_logger
from rft_sdk.exceptions import RFTError
from rft_sdk.testing import run_server

ROOT = Path(__file__).resolve().parents[2]


#: The test's user code spins (CPU, no await) for at least MIN_HOLD_S of its thread's CPU time (past
#: ``LOOP_STALL_S``, so a step that holds the loop is detected: the SDK counts a step's CPU time, not its wall time,
#: below ``BLOCKED_STEP_S``; a 0.3 s spin of *wall* time got under 0.1 s of CPU at a load of 7 and went undetected),
#: then until the test releases it (at most MAX_HOLD_S of wall time). The verdict is not a timing: a /healthz sent
#: while the code spins is answered *before the code stops* only when the code runs off the loop; on a held loop it
#: cannot be answered until the code returns, however loaded the machine (was a 0.75 s bound, which a load of 14
#: broke).
MIN_HOLD_S = 0.3
MAX_HOLD_S = 30.0
_spinning = threading.Event()
_release = threading.Event()


def _spin() -> None:
    _spinning.set()
    start, cpu = time.monotonic(), time.thread_time()
    try:
        while time.thread_time() - cpu < MIN_HOLD_S or (
                not _release.is_set() and time.monotonic() - start < MAX_HOLD_S):
            pass
    finally:
        _spinning.clear()


async def computes(ctx: GradingContext) -> float:
    """Spins without a single await (what the retail grader is)."""
    _spin()
    return 1.0


async def holds(ctx: GradingContext) -> float:
    """Awaits once, then holds the loop."""
    await asyncio.sleep(0)
    _spin()
    return 0.5


async def lookup(key: str, *, rollout: Rollout) -> str:
    """Awaits, then holds the loop.

    Args:
        key: anything.
    """
    await asyncio.sleep(0)
    _spin()
    return key


def _healthz_while(url: str, request) -> tuple[int, bool]:
    """Run ``request()`` in a thread; once its user code spins, GET /healthz; (the request's status, whether
    /healthz was answered while the user code still spun)."""
    out: dict = {}
    _release.clear()
    worker = threading.Thread(target=lambda: out.update(status=request().status_code))
    worker.start()
    try:
        assert _spinning.wait(MAX_HOLD_S), "the user code never started"
        with httpx.Client(base_url=url, timeout=MAX_HOLD_S * 2) as client:
            assert client.get("/healthz").status_code == 200
        answered_while_spinning = _spinning.is_set()
    finally:
        _release.set()
        worker.join()
    return out["status"], answered_while_spinning


def _grade(url: str, name: str, trace: str):
    return lambda: httpx.post(f"{url}/grade/{name}", timeout=30,
                              json={"sample": {"output_text": "x"}, "item": {}, "trace_id": trace})


def _call(url: str, trace: str):
    return lambda: httpx.post(f"{url}/tools/lookup", timeout=30, json={
        "call_id": f"c-{trace}", "trace_id": trace, "arguments": '{"key": "k"}', "item": {}})


def test_an_async_grader_that_never_awaits_runs_off_the_loop_from_its_first_call():
    server = ToolServer(graders=[computes], auth_env_var=None)
    with run_server(server) as url:
        status, answered_while_spinning = _healthz_while(url, _grade(url, "computes", "t1"))
    assert status == 200 and answered_while_spinning  # before: answered only once the grader returned


def test_a_grader_or_tool_holding_the_loop_is_named_once_and_still_served(caplog):
    server = ToolServer(tools=[lookup], graders=[holds], auth_env_var=None)
    with caplog.at_level(logging.WARNING, logger="rft_sdk"), run_server(server) as url:
        _release.set()  # every call spins MIN_HOLD_S only
        for request in (_grade(url, "holds", "g1"), _call(url, "c1"), _grade(url, "holds", "g2"), _call(url, "c2")):
            assert request().status_code == 200
    warnings = [r.getMessage() for r in caplog.records if "held the event loop" in r.getMessage()]
    assert any("grader 'holds'" in w for w in warnings) and any("tool 'lookup'" in w for w in warnings), warnings
    assert len(warnings) == 2  # once each
    assert all("asyncio.to_thread" in w for w in warnings)  # the fix, named


_JUDGE_CLIENT: list[httpx.AsyncClient] = []  # one client shared by every call, as a grader's LLM client is
_JUDGE_URL: list[str] = []


async def judges(ctx: GradingContext) -> float:
    """Asks a judge through the shared client; its first call then holds the loop (a slow step)."""
    answer = await _JUDGE_CLIENT[0].get(_JUDGE_URL[0], params={"q": ctx.output_text})
    if ctx.trace_id == "slow":
        _spin()
    return float(answer.json()["score"])


def test_an_async_grader_sharing_a_client_keeps_answering_after_it_held_the_loop(caplog):
    """Before: one slow step moved the grader onto a fresh event loop per call, where the client bound to the
    server's loop never answered (the grader-twin corpus hung in CI on ``rewards.LLMJudge``)."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def judge(request):
        await asyncio.sleep(0.01)
        return JSONResponse({"score": 1.0 if request.query_params["q"] == "right" else 0.0})

    server = ToolServer(graders=[judges], auth_env_var=None)
    with (caplog.at_level(logging.WARNING, logger="rft_sdk"), run_server(Starlette(routes=[Route("/", judge)])) as j,
          run_server(server) as url):
        _JUDGE_URL[:] = [f"{j}/"]
        _JUDGE_CLIENT[:] = [httpx.AsyncClient(timeout=5)]
        _release.set()
        first = httpx.post(f"{url}/grade/judges", timeout=30,
                           json={"sample": {"output_text": "right"}, "item": {}, "trace_id": "slow"})
        assert first.status_code == 200 and first.json()["score"] == 1.0

        def grade(i: int) -> httpx.Response:
            return httpx.post(f"{url}/grade/judges", timeout=20, json={
                "sample": {"output_text": "right" if i % 2 else "wrong"}, "item": {}, "trace_id": f"t{i}"})

        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(grade, range(16)))
    assert [a.status_code for a in answers] == [200] * 16, [a.text for a in answers]
    assert [a.json()["score"] for a in answers] == [float(i % 2) for i in range(16)]
    assert any("grader 'judges'" in r.getMessage() for r in caplog.records)  # the slow step was seen


def test_every_rft_sdk_logger_escapes_control_characters(caplog):
    for module in pkgutil.walk_packages(rft_sdk.__path__, "rft_sdk."):
        if module.name.endswith("__main__"):
            continue  # runs the CLI
        try:
            importlib.import_module(module.name)
        except (ImportError, RFTError):  # an optional extra not installed here
            continue
    loggers = [n for n in logging.Logger.manager.loggerDict if n == "rft_sdk" or n.startswith("rft_sdk.")]
    assert {"rft_sdk", "rft_sdk.sandbox", "rft_sdk.openenv"} <= set(loggers)  # eval_protocol: only in .venv-eco2
    for name in loggers:
        logger = logging.getLogger(name)
        assert any(isinstance(f, ControlCharFilter) for f in logger.filters), name
    with caplog.at_level(logging.INFO):
        get_logger("rft_sdk.eval_protocol").warning("rollout %s: done", "r1\r\nFAKE rollout r2: finished")
    assert "\n" not in caplog.records[-1].getMessage() and "\\r\\n" in caplog.records[-1].getMessage()


def test_no_module_makes_a_child_logger_without_the_filter():
    offenders = []
    for path in (ROOT / "rft_sdk").rglob("*.py"):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if 'getLogger("rft_sdk.' in line or "getLogger('rft_sdk." in line:
                offenders.append(f"{path.relative_to(ROOT)}:{number}")
    assert offenders == [], "use rft_sdk._wire._redact.get_logger for child loggers: " + ", ".join(offenders)
