"""Throughput and latency of a trivial tool served by ``ToolServer`` over real uvicorn.

The server runs in a separate process (``rft serve``: uvicorn, one worker,
loopback, via ``rft_sdk.testing.serve_process``) so the client does not share
its GIL. A bare Starlette endpoint that returns the same
JSON without the SDK (no validation, state, lock, trajectory) is measured the
same way as the baseline; the ratio column is SDK / baseline.

Usage::

    python3 benchmarks/bench_sdk_throughput.py [--requests 2000] [--concurrency 32] [--rollouts 64]

Prints requests/s and p50/p99 latency (milliseconds) for both servers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _sdk_app():
    from rft_sdk import Rollout, ToolServer

    server = ToolServer(auth_env_var=None)

    @server.tool
    def echo(text: str, *, rollout: Rollout) -> str:
        """Echo the text and count calls in the rollout state.

        Args:
            text: anything.
        """
        rollout.state["n"] = rollout.state.get("n", 0) + 1
        return text

    return server


def _baseline_app():
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def echo(request: Request) -> JSONResponse:
        body = await request.json()
        args = json.loads(body["arguments"])
        return JSONResponse({"type": "function_call_output", "call_id": body["call_id"],
                             "id": body.get("id"), "output": args["text"]})

    async def healthz(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    return Starlette(routes=[Route("/tools/echo", echo, methods=["POST"]),
                             Route("/healthz", healthz)])


# Served by ``rft serve benchmarks.bench_sdk_throughput:<name>`` in a child process.
sdk_app = _sdk_app()
baseline_app = _baseline_app()


async def _drive(url: str, n: int, concurrency: int, rollouts: int) -> tuple[float, list[float]]:
    latencies: list[float] = []
    counter = iter(range(n))
    async with httpx.AsyncClient(base_url=url, limits=httpx.Limits(max_connections=concurrency)) as client:
        async def worker() -> None:
            for i in counter:
                body = {"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i}", "name": "echo",
                        "arguments": json.dumps({"text": f"hello {i}"}),
                        "trace_id": f"trace_{i % rollouts:032x}", "item": {"k": i % rollouts}}
                t0 = time.perf_counter()
                r = await client.post("/tools/echo", json=body)
                latencies.append(time.perf_counter() - t0)
                if r.status_code != 200:
                    raise RuntimeError(f"unexpected {r.status_code}: {r.text}")

        t0 = time.perf_counter()
        await asyncio.gather(*[worker() for _ in range(concurrency)])
        return time.perf_counter() - t0, latencies


def _measure(kind: str, n: int, concurrency: int, rollouts: int) -> dict[str, float]:
    from rft_sdk.testing import serve_process

    with serve_process(f"benchmarks.bench_sdk_throughput:{kind}_app", cwd=ROOT) as url:
        asyncio.run(_drive(url, min(200, n), concurrency, rollouts))  # warm-up
        elapsed, lat = asyncio.run(_drive(url, n, concurrency, rollouts))
    lat_ms = sorted(x * 1000 for x in lat)
    return {"rps": n / elapsed, "p50_ms": statistics.median(lat_ms),
            "p99_ms": lat_ms[min(len(lat_ms) - 1, int(0.99 * len(lat_ms)))]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rollouts", type=int, default=64, help="distinct trace_ids the calls spread over")
    args = parser.parse_args()
    sdk = _measure("sdk", args.requests, args.concurrency, args.rollouts)
    base = _measure("baseline", args.requests, args.concurrency, args.rollouts)
    print(f"{args.requests} requests, concurrency {args.concurrency}, {args.rollouts} rollouts, "
          "uvicorn 1 worker on 127.0.0.1 (client in a separate process)")
    print(f"{'':>22} {'ToolServer':>12} {'bare Starlette':>15} {'ratio':>7}")
    for key, label in (("rps", "requests/s"), ("p50_ms", "p50 latency (ms)"), ("p99_ms", "p99 latency (ms)")):
        print(f"{label:>22} {sdk[key]:>12.1f} {base[key]:>15.1f} {sdk[key] / base[key]:>7.2f}")
    print("hosted-protocol recommended capacity: 50 requests/s per endpoint")


if __name__ == "__main__":
    main()
