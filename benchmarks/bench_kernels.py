"""Benchmark: selective log-softmax (and the fused GRPO loss) — Triton vs torch eager vs TRL-style.

GPU run (the figures that matter), N tokens × V = 151,936 vocabulary, bf16 logits:

    python3 benchmarks/bench_kernels.py                 # N in {8192, 32768}
    python3 benchmarks/bench_kernels.py --n 8192 --repeats 50 --hbm-gbps 3350

For each N it prints, per method, the median time (``torch.cuda.Event``, after warm-up),
the peak *extra* memory (``torch.cuda.max_memory_allocated`` minus what was allocated
before the call, i.e. beyond the inputs), the achieved bandwidth (bytes that must move ÷
time), the ratio to the HBM floor (``time / (bytes ÷ peak HBM bandwidth)``) and the
speedup against the TRL-style path. Methods:

* ``triton``   — :func:`kernels.selective_log_softmax` (one pass over V per row, O(N) extra memory);
* ``eager``    — ``torch.log_softmax(logits, -1).gather(-1, ids)`` (materialises ``[N, V]``);
* ``triton-inplace`` — the same with ``inplace_backward=True`` (gradient written into the logits);
* ``grpo-triton`` / ``grpo-torch`` — the whole :func:`kernels.grpo_loss` (β > 0, off-policy) on
  ``[N / trl_chunk, trl_chunk, V]``, Triton vs the torch reference path (fwd+bwd only; bytes as above);
* ``trl``      — TRL's ``selective_log_softmax`` for bf16 (``trl/trainer/utils.py``): a Python loop
  over row chunks (one sequence of ``--trl-chunk`` tokens each), ``log_softmax`` + ``gather`` per chunk.

Goals (issue #6): forward ≤ 1.15× the floor, ≥ 3.5× faster than ``trl``, extra memory O(N).
Bytes that must move: forward reads ``N·V·2`` (bf16 logits) + ids, writes ``N·4`` (logprob)
+ ``N·4`` (lse); forward+backward additionally reads the logits again and writes ``N·V·2``
of gradient.

Without CUDA it says so and runs a tiny CPU smoke version (Triton through the interpreter,
``TRITON_INTERPRET=1`` set by this script before triton is imported) that checks the
methods agree; its timings are not GPU figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# Spec-sheet HBM bandwidth, GB/s (NVIDIA data sheets); override with --hbm-gbps.
HBM_GBPS = {"H200": 4800.0, "H100 SXM": 3350.0, "H100 NVL": 3900.0, "H100 PCIe": 2000.0, "H100": 3350.0,
            "A100-SXM4-80GB": 2039.0, "A100 80GB PCIe": 1935.0, "A100": 1555.0, "L40S": 864.0, "A10G": 600.0}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, nargs="+", default=[8192, 32768], help="token counts N")
    p.add_argument("--vocab", type=int, default=151_936, help="vocabulary size V")
    p.add_argument("--repeats", type=int, default=20, help="timed runs per method (median reported)")
    p.add_argument("--warmup", type=int, default=3, help="untimed runs first (compilation, caches)")
    p.add_argument("--trl-chunk", type=int, default=1024, help="rows per chunk of the TRL-style loop (sequence length)")
    p.add_argument("--hbm-gbps", type=float, default=None, help="peak HBM bandwidth in GB/s (default: by GPU name)")
    p.add_argument("--block-v", type=int, default=None, help="Triton BLOCK_V override (power of two)")
    p.add_argument("--num-warps", type=int, default=None, help="Triton num_warps override")
    p.add_argument("--no-backward", action="store_true", help="forward only")
    p.add_argument("--no-grpo", action="store_true", help="skip the fused GRPO loss rows")
    p.add_argument("--smoke", action="store_true", help="tiny shapes (also the default without CUDA)")
    return p.parse_args(argv)


def trl_selective_log_softmax(logits: torch.Tensor, ids: torch.Tensor, chunk: int) -> torch.Tensor:
    """TRL-style bf16 path: loop over row chunks, ``log_softmax`` + ``gather`` per chunk → ``[N]``."""
    out = []
    for rows, row_ids in zip(logits.split(chunk), ids.split(chunk)):
        out.append(torch.log_softmax(rows, dim=-1).gather(-1, row_ids.unsqueeze(-1)).squeeze(-1))
    return torch.cat(out).float()


def eager_selective_log_softmax(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """Plain eager: full ``[N, V]`` ``log_softmax`` then ``gather`` → ``[N]``."""
    return torch.log_softmax(logits, dim=-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1).float()


def hbm_gbps(override: float | None) -> float | None:
    """Peak HBM bandwidth (GB/s) of the current GPU from the table above, or the override."""
    if override is not None:
        return override
    name = torch.cuda.get_device_name()
    for key, value in HBM_GBPS.items():
        if key in name:
            return value
    return None


def time_cuda(fn: Callable[[], object], repeats: int, warmup: int) -> tuple[float, int]:
    """(median seconds, peak extra bytes) of ``fn`` on the GPU."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times), torch.cuda.max_memory_allocated() - base


def time_cpu(fn: Callable[[], object], repeats: int, warmup: int) -> tuple[float, int]:
    """(median seconds, 0) on the CPU (no memory figure)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), 0


def methods(logits: torch.Tensor, ids: torch.Tensor, args: argparse.Namespace, backward: bool) -> dict:
    """Name → zero-argument callable running that method (forward, or forward + backward)."""
    from rft_sdk import kernels

    def run(f: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[], object]:
        def call() -> object:
            if not backward:
                with torch.no_grad():
                    return f(logits)
            x = logits.detach().requires_grad_()  # shares storage with logits
            (grad,) = torch.autograd.grad(f(x).sum(), x)
            return grad
        return call

    kw = dict(block_v=args.block_v, num_warps=args.num_warps)
    table = {
        "triton": run(lambda x: kernels.selective_log_softmax(x, ids, backend="triton", **kw)),
        "eager": run(lambda x: eager_selective_log_softmax(x, ids)),
        "trl": run(lambda x: trl_selective_log_softmax(x, ids, args.trl_chunk)),
    }
    if backward and not args.no_grpo:  # the whole fused GRPO loss vs the torch reference path
        b = max(1, logits.shape[0] // args.trl_chunk)
        t = logits.shape[0] // b
        adv = torch.randn(b, device=logits.device)
        mask = torch.ones(b, t, device=logits.device)
        old = torch.full((b, t), -12.0, device=logits.device)

        def grpo(backend: str) -> Callable[[torch.Tensor], torch.Tensor]:
            def f(x: torch.Tensor) -> torch.Tensor:
                x3 = x[: b * t].view(b, t, -1)
                out = kernels.grpo_loss(x3, ids[: b * t].view(b, t), adv, mask, old, old, beta=0.04,
                                        backend=backend, **(kw if backend == "triton" else {}))
                return out.loss
            return f

        table["grpo-triton"] = run(grpo("triton"))
        table["grpo-torch"] = run(grpo("torch"))
    if backward:  # last: it overwrites the logits with their gradient (timing does not depend on values)
        table["triton-inplace"] = run(
            lambda x: kernels.selective_log_softmax(x, ids, backend="triton", inplace_backward=True, **kw))
    return table


def bytes_must_move(n: int, vocab: int, element_size: int, backward: bool) -> int:
    """Bytes any implementation must move (the HBM floor's numerator), for ``N = n`` rows.

    Forward: read the logits once (``N·V·element_size``) and the ids (``N·8``, int64), write
    the logprob (``N·4``) and the log-sum-exp kept for backward (``N·4``). Forward + backward:
    additionally read the logits again and write a gradient of the same size
    (``2·N·V·element_size``); the O(N) terms of the backward are left out (< 0.01 %).
    """
    logits = n * vocab * element_size
    return logits * (3 if backward else 1) + n * (8 + 4 + 4)


def fmt_bytes(n: int) -> str:
    return f"{n / 2**20:9.1f} MiB"


def bench_shape(n: int, vocab: int, device: str, args: argparse.Namespace, timer) -> list[dict]:
    """Time every method at one shape; returns rows of figures."""
    g = torch.Generator(device=device).manual_seed(0)
    logits = (torch.randn(n, vocab, generator=g, device=device, dtype=torch.float32) * 3).to(torch.bfloat16)
    ids = torch.randint(0, vocab, (n,), generator=g, device=device)
    from rft_sdk.kernels import reference

    with torch.no_grad():  # fp64 gold, 1024 rows at a time to bound memory
        gold = torch.cat([reference.selective_log_softmax(c.double(), i)
                          for c, i in zip(logits.split(1024), ids.split(1024))])
    rows = []
    for backward in ([False] if args.no_backward else [False, True]):
        must_move = bytes_must_move(n, vocab, logits.element_size(), backward)
        for name, fn in methods(logits, ids, args, backward).items():
            try:
                seconds, extra = timer(fn, args.repeats, args.warmup)
            except torch.cuda.OutOfMemoryError:
                rows.append(dict(n=n, pass_="fwd+bwd" if backward else "fwd", method=name, oom=True))
                torch.cuda.empty_cache()
                continue
            err = None
            if not backward:
                with torch.no_grad():
                    err = float((fn().double() - gold).abs().max())
            rows.append(dict(n=n, pass_="fwd+bwd" if backward else "fwd", method=name, seconds=seconds,
                             extra=extra, bytes=must_move, err=err, oom=False))
    del logits
    return rows


def report(rows: list[dict], peak_gbps: float | None, on_gpu: bool) -> None:
    """Print one table; ratios against the HBM floor and the TRL-style path side by side."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title="selective log-softmax, bf16 logits" + ("" if on_gpu else " — CPU SMOKE, not GPU figures"))
    for col in ("N", "pass", "method", "median ms", "extra mem", "GB/s", "× floor", "vs trl", "max |err| fwd"):
        table.add_column(col, justify="right")
    trl = {(r["n"], r["pass_"]): r["seconds"] for r in rows if r["method"] == "trl" and not r["oom"]}
    for r in rows:
        if r["oom"]:
            table.add_row(str(r["n"]), r["pass_"], r["method"], "OOM", "", "", "", "", "")
            continue
        gbps = r["bytes"] / r["seconds"] / 1e9
        floor = f"{r['seconds'] / (r['bytes'] / (peak_gbps * 1e9)):.2f}" if peak_gbps else "n/a"
        base = trl.get((r["n"], r["pass_"]))
        table.add_row(str(r["n"]), r["pass_"], r["method"], f"{r['seconds'] * 1e3:.3f}", fmt_bytes(r["extra"]),
                      f"{gbps:.0f}", floor, f"{base / r['seconds']:.2f}×" if base else "n/a",
                      "" if r["err"] is None else f"{r['err']:.2e}")
    Console(width=150).print(table)
    if peak_gbps:
        print(f"HBM floor from {peak_gbps:.0f} GB/s peak; goals: triton fwd ≤ 1.15× floor, ≥ 3.5× vs trl, extra memory O(N)")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    on_gpu = torch.cuda.is_available()
    if not on_gpu:
        print("CUDA not available: GPU figures NOT measured; running a tiny CPU smoke version "
              "(Triton via TRITON_INTERPRET=1) to check the script and that the methods agree.")
        os.environ["TRITON_INTERPRET"] = "1"  # script, not library: set before kernels imports triton
        args.smoke = True
    if args.smoke:
        args.n, args.vocab = [48], 1_003
        args.repeats, args.warmup, args.trl_chunk = 2, 1, 16
    device = "cuda" if on_gpu else "cpu"
    timer = time_cuda if on_gpu else time_cpu
    peak = hbm_gbps(args.hbm_gbps) if on_gpu else None
    if on_gpu:
        print(f"device: {torch.cuda.get_device_name()}  peak HBM: {peak or 'unknown (pass --hbm-gbps)'} GB/s")
    rows = []
    for n in args.n:
        rows.extend(bench_shape(n, args.vocab, device, args, timer))
    report(rows, peak, on_gpu)
    bad = [r for r in rows if not r["oom"] and r["err"] is not None and r["err"] > 0.1]
    if bad:  # bf16 eager/trl round their log-softmax output to bf16: ~0.05 absolute at |lp| ~ 15
        print("methods disagree with the fp64 gold:", [(r["n"], r["method"], r["err"]) for r in bad])
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
