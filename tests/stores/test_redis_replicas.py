"""Three ``rft serve`` processes share one real Redis; one is killed with SIGKILL mid-load.

Each rollout's calls go round-robin across the replicas, every call is sent
twice (to two replicas at once), and a client retries a failed call on the
next live replica, as the hosted side retries. Afterwards every rollout's
state is complete, every write was applied exactly once, and every grade saw
the whole trajectory.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest
from store_helpers import ROOT

from rft_sdk import RedisStore
from rft_sdk.testing import free_port

_APP = '''
import os
from rft_sdk import Grade, GradingContext, Rollout, ToolServer, store_from_url

server = ToolServer(auth_env_var=None, store=store_from_url(os.environ["RFT_STORE_URL"]))


@server.tool
async def record_step(step: int, *, rollout: Rollout) -> dict:
    """Append ``step`` to this rollout's list (once per call_id)."""
    rollout.state.setdefault("steps", []).append(step)
    rollout.state["n"] = rollout.state.get("n", 0) + 1
    return {"n": rollout.state["n"], "pid": os.getpid()}


@server.grader
def complete(ctx: GradingContext) -> Grade:
    """1.0 when the grader sees every expected call in order, once each."""
    expected = list(range(ctx.item["calls"]))
    steps = [json.loads(r.output)["n"] for r in ctx.trajectory if r.ok]
    ok = ctx.state.get("steps") == expected and steps == [i + 1 for i in expected]
    return Grade(1.0 if ok else 0.0, {}, [] if ok else [f"state={ctx.state} seen={steps}"])


import json  # noqa: E402
'''

ROLLOUTS, CALLS, REPLICAS = 12, 8, 3


def _start(tmp_path: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "rft_sdk", "serve", "replica_app:server", "--host", "127.0.0.1",
                             "--port", str(port), "--log-level", "warning"], cwd=tmp_path, env=env)
    return proc, f"http://127.0.0.1:{port}"


async def _wait_healthy(urls: list[str]) -> None:
    async with httpx.AsyncClient(timeout=1) as client:
        for url in urls:
            for _ in range(300):
                try:
                    if (await client.get(url + "/healthz")).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.1)
            else:
                raise RuntimeError(f"replica {url} not healthy")


async def _post(client: httpx.AsyncClient, urls: list[str], first: int, path: str, body: dict) -> httpx.Response:
    """POST to replica ``first``, moving to the next one on a transport error or 5xx (bounded)."""
    for attempt in range(4 * len(urls)):
        url = urls[(first + attempt) % len(urls)]
        try:
            response = await client.post(url + path, json=body)
        except httpx.TransportError:
            continue
        if response.status_code < 500:
            return response
        await asyncio.sleep(0.05)
    raise AssertionError(f"no replica answered {path} {body}")


def test_replicas_share_state_exactly_once_through_a_sigkill(tmp_path, redis_url):
    (tmp_path / "replica_app.py").write_text(textwrap.dedent(_APP))
    store_url = redis_url.replace("/0", "/5")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}", "RFT_STORE_URL": store_url}
    started = [_start(tmp_path, env) for _ in range(REPLICAS)]
    procs, urls = [p for p, _ in started], [u for _, u in started]
    victim = procs[1]
    try:
        asyncio.run(_wait_healthy(urls))

        async def load() -> list[list[httpx.Response]]:
            killed = asyncio.Event()
            done_calls = 0
            limits = httpx.Limits(max_connections=100)
            async with httpx.AsyncClient(timeout=10, limits=limits) as client:
                async def rollout(r: int) -> list[httpx.Response]:
                    nonlocal done_calls
                    answers = []
                    for step in range(CALLS):
                        body = {"type": "function_call", "id": f"fc_{r}_{step}", "call_id": f"call_{r}_{step}",
                                "name": "record_step", "arguments": json.dumps({"step": step}),
                                "trace_id": f"replica-trace-{r}", "item": {"calls": CALLS}}
                        first = (r + step) % REPLICAS  # round-robin, and a duplicate on the next replica
                        pair = await asyncio.gather(_post(client, urls, first, "/tools/record_step", body),
                                                    _post(client, urls, first + 1, "/tools/record_step", body))
                        answers.extend(pair)
                        done_calls += 1
                        if done_calls == ROLLOUTS * CALLS // 2 and not killed.is_set():
                            killed.set()
                            victim.send_signal(signal.SIGKILL)  # mid-load: other rollouts' calls are in flight
                            victim.wait(timeout=10)  # reaped, as its supervisor would (a zombie looks alive)
                    return answers

                per_rollout = await asyncio.gather(*[rollout(r) for r in range(ROLLOUTS)])
                grades = await asyncio.gather(*[
                    _post(client, urls, r, "/grade", {"sample": {"output_text": "done"}, "item": {"calls": CALLS},
                                                      "trace_id": f"replica-trace-{r}"})
                    for r in range(ROLLOUTS)])
            return [*per_rollout, grades]

        *per_rollout, grades = asyncio.run(load())
        assert victim.returncode == -signal.SIGKILL
        for answers in per_rollout:
            assert [a.status_code for a in answers] == [200] * (2 * CALLS)
            outputs = [json.loads(a.json()["output"]) for a in answers]
            # both copies of a call got one answer (the second replayed), and n counts calls once each
            assert [o["n"] for o in outputs[0::2]] == [o["n"] for o in outputs[1::2]] == list(range(1, CALLS + 1))
        assert len({json.loads(a.json()["output"])["pid"] for answers in per_rollout for a in answers}) == REPLICAS
        assert [(g.status_code, g.json()["score"]) for g in grades] == [(200, 1.0)] * ROLLOUTS

        async def stored() -> None:
            store = RedisStore(store_url)
            try:
                grades_kept = [await store.load_grades(f"replica-trace-{r}") for r in range(ROLLOUTS)]
                assert all(g["complete"].score == 1.0 for g in grades_kept)
            finally:
                await store.aclose()

        asyncio.run(stored())
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")
