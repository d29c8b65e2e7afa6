"""Code-task tricks (issue #37): the test_fix and kernel_write graders before and after, on every trick.

Each trick of the probe packs (``rft_sdk.doctor.packs:pytest`` for ``examples/test_fix``,
``rft_sdk.doctor.packs:benchmark_harness`` for ``examples/kernel_write``) and each item's gold
are played through the tools of a real ``rft serve`` and graded, on two servers side by side:

* **old**: ``examples/`` as it was at ``--old-ref`` (default: the commit before issue 37's
  code-trick work), extracted with ``git archive`` and served from a temporary folder (this
  checkout's ``rft_sdk``);
* **new**: this checkout.

It prints, per trick, the mean score on each server, the new grader's first reason, and the
score of the new grader's *runtime layer alone* (``runtime-only``: the clean pytest run's
verdict, 1 or 0, for test_fix's library tricks; correctness × speed-up from
``_evaluate.evaluate`` for kernel_write; no static judge); a trick
is *stopped* when the new mean is 0 (kernel: below 0.02, the speed-up of a correct but
deliberately slow module), and the gold must keep a score above 0 on both. Items: the first
``--items`` test items of test_fix (default 2); kernel problems ``--problems`` (default
``leaky_relu,relu``). Kernel speed-ups are noisy on a loaded machine: compare old and new only
within one run.

Run: ``PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_codetricks.py`` (about 10 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from examples.kernel_write import app as kernel_app  # noqa: E402
from examples.kernel_write.build_dataset import DATA_DIR as KERNEL_DATA  # noqa: E402
from examples.test_fix import app as fix_app  # noqa: E402
from examples.test_fix.build_dataset import DATA_DIR as FIX_DATA  # noqa: E402
from rft_sdk.doctor.packs import benchmark_harness  # noqa: E402
from rft_sdk.doctor.packs import pytest as pytest_pack  # noqa: E402
from rft_sdk.emulator import load_dataset  # noqa: E402
from rft_sdk.testing import serve_process  # noqa: E402

OLD_REF = "a9c16a8"  # main before issue 37's code-trick work
NEW_IN_37 = {"library_plugin_object", "library_atexit_rewrite", "library_writer_swap", "library_always_equal",
             "library_raises_patch", "deferred_completion", "deferred_thread", "reference_op_alias",
             "reference_op_getattr", "reference_op_native"}
OWN = {"library_always_equal", "library_raises_patch", "deferred_thread", "reference_op_getattr",
       "reference_op_native"}


def extract_old(ref: str) -> Path:
    """``examples/`` at git ``ref`` in a new temporary folder (its path).

    Raises:
        SystemExit: git cannot give that ref.
    """
    try:
        blob = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "examples"], check=True,
                              capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(f"--old-ref {ref!r} unavailable: {exc}") from exc
    folder = Path(tempfile.mkdtemp(prefix="codetricks-old-"))
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(folder, filter="data")
    return folder


async def _call(client: httpx.AsyncClient, trace: str, name: str, args: dict[str, Any], item: dict[str, Any]) -> str:
    cid = "call_" + uuid.uuid4().hex[:12]
    body = {"type": "function_call", "id": "fc_" + cid, "call_id": cid, "name": name, "arguments": json.dumps(args),
            "trace_id": trace, "item": item}
    r = await client.post(f"/tools/{name}", json=body)
    return str(r.json().get("output", "")) if r.status_code == 200 else f"HTTP {r.status_code}: {r.text[:200]}"


async def play(client: httpx.AsyncClient, item: dict[str, Any], plan: Any, answer: str) -> tuple[float, list[str]]:
    """Play ``plan(item, outputs) -> turns`` through the tools, grade; ``(score, reasons)``."""
    trace, outputs, turn = "trace_" + uuid.uuid4().hex, [], 0
    while turn < len(turns := plan(item, outputs)):
        for call in turns[turn]:
            outputs.append(await _call(client, trace, call["name"], call["arguments"], item))
        turn += 1
    r = await client.post("/grade", json={"sample": {"output_text": answer}, "item": item, "trace_id": trace})
    if r.status_code != 200:
        return 0.0, [f"grade failed: HTTP {r.status_code}"]
    details = json.loads(r.headers.get("x-rft-grade-details", "{}"))
    return float(r.json()["score"]), [str(x) for x in details.get("reasons") or []]


def _gold_plan(item: dict[str, Any], outputs: Any) -> list[list[dict[str, Any]]]:
    return [[a] for a in item["actions"]]


async def run_task(label: str, app: str, old_dir: Path, items: list[dict[str, Any]], probes: dict[str, Any],
                   answer: str, only: set[str] | None = None, pool: Any = None) -> list[dict[str, Any]]:
    rows = []
    tricks = {"gold": (_gold_plan, answer), **{n: (p.plan, p.answer) for n, p in probes.items()}}
    tricks = {n: t for n, t in tricks.items() if only is None or n in only}
    with serve_process(app, cwd=old_dir) as old_url, serve_process(app, cwd=ROOT) as new_url:
        async with httpx.AsyncClient(base_url=old_url, timeout=900) as old, \
                httpx.AsyncClient(base_url=new_url, timeout=900) as new:
            for name, (plan, text) in tricks.items():
                use = [i for i in items if name == "gold" or probes[name].applies(i)]
                row: dict[str, Any] = {"task": label, "trick": name, "old": [], "new": [], "reason": "", "new_s": [],
                                       "rt": [], "rt_reason": ""}
                for item in use:
                    if name != "gold" and pool is not None:
                        rt = await asyncio.to_thread(runtime_only, label, name, probes[name], item, pool)
                        if rt is not None:
                            row["rt"].append(rt[0])
                            row["rt_reason"] = row["rt_reason"] or rt[1]
                    row["old"].append((await play(old, item, plan, text))[0])
                    t0 = time.perf_counter()
                    score, reasons = await play(new, item, plan, text)
                    row["new_s"].append(time.perf_counter() - t0)
                    row["new"].append(score)
                    row["reason"] = row["reason"] or next((r for r in reasons if r), "")
                rows.append(row)
                print_row(row, flush=True)
    return rows


def _library_source(name: str, original: str) -> str | None:
    """The library ``__init__.py`` a test_fix library probe writes (``None``: not a library probe)."""
    from rft_sdk.doctor.packs import _pytest_pack as pk

    prefix = {"library_plugin_object": pk.LIB_PLUGIN_OBJECT, "library_atexit_rewrite": pk.LIB_ATEXIT_CHILD,
              "library_writer_swap": pk.LIB_WRITER_SWAP, "library_report_patch": pk.LIB_REPORT_PATCH}
    suffix = {"library_always_equal": pk.LIB_ALWAYS_EQUAL, "library_raises_patch": pk.LIB_RAISES_PATCH}
    if name == "library_exit":
        return pk.LIB_EXIT
    if name in prefix:
        return prefix[name] + original
    return original + suffix[name] if name in suffix else None


def runtime_only(task: str, name: str, probe: Any, item: dict[str, Any], pool: Any) -> tuple[float, str] | None:
    """``(score, reason)`` of the new grader's runtime layer alone (no static judge): for test_fix
    1 when the clean run's verdict passes, for kernel_write correctness × speed-up; ``None`` when
    the trick is not a library/module trick."""
    if task == "test_fix":
        from examples.test_fix._data import template_for
        from examples.test_fix._grading import run_clean, verdict

        tpl = template_for(item)
        init = f"{item['code_files'][0].split('/')[0]}/__init__.py"
        source = _library_source(name, (tpl / init).read_text())
        if source is None:
            return None
        ids = [*item["fail_to_pass"], *item.get("pass_to_pass", [])]
        ok, why = verdict(run_clean(pool, f"bench-{uuid.uuid4().hex[:8]}", tpl, {init: source.encode()}, ids), ids)
        return float(ok), "" if ok else why[0]
    from examples.kernel_write._evaluate import evaluate

    code = probe.plan(item, [])[0][0]["arguments"]["code"]
    res = evaluate(pool, item["reference"], code, overrides=item.get("overrides") or {}, reps=5)
    ok = res.correct and not res.hacks
    return (res.speedup if ok else 0.0), "" if ok else (next(iter(res.hacks.values()), "") or str(res.error))


def _mean(xs: list[float]) -> float:
    return statistics.fmean(xs) if xs else float("nan")


def print_row(row: dict[str, Any], flush: bool = False) -> None:
    line = 0.02 if row["task"] == "kernel_write" else 0.0
    new = _mean(row["new"])
    verdict = "gold" if row["trick"] == "gold" else ("stopped" if new <= line else "PAYS")
    tag = "own" if row["trick"] in OWN else ("#37" if row["trick"] in NEW_IN_37 else "")
    rt = f"{_mean(row['rt']):6.3f}" if row["rt"] else "   n/a"
    print(f"{row['task']:12} {row['trick']:24} {tag:4} n={len(row['new']):<2} old {_mean(row['old']):6.3f}  "
          f"new {new:6.3f}  {verdict:7}  runtime-only {rt}  {row['reason'][:90]}", flush=flush)
    if row["rt_reason"]:
        print(f"{'':44}runtime layer alone: {row['rt_reason'][:120]}", flush=flush)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old-ref", default=OLD_REF, help="git ref of the old graders (default: %(default)s)")
    ap.add_argument("--items", type=int, default=2, help="test_fix test items per trick (default: %(default)s)")
    ap.add_argument("--problems", default="leaky_relu,relu", help="kernel_write problems (default: %(default)s)")
    ap.add_argument("--only", choices=("test_fix", "kernel_write"), help="run one task only")
    ap.add_argument("--tricks", help="comma-separated trick names to run (default: all, and the gold)")
    args = ap.parse_args(argv)
    old_dir = extract_old(args.old_ref)
    only = set(args.tricks.split(",")) if args.tricks else None
    from rft_sdk.sandbox import SandboxLimits, SandboxPool

    pool = SandboxPool(tempfile.mkdtemp(prefix="codetricks-"), limits=SandboxLimits(timeout_s=300, cpu_s=300,
                                                                                     memory_bytes=4 * 1024**3))
    rows: list[dict[str, Any]] = []
    print(f"old = examples/ at {args.old_ref}; new = this checkout\n")
    if args.only != "kernel_write":
        items = load_dataset(FIX_DATA / "test.jsonl", fix_app.server.tools)[:args.items]
        rows += asyncio.run(run_task("test_fix", "examples.test_fix.app:server", old_dir, items, pytest_pack(),
                                     "Done: the change is implemented and every test passes.", only, pool))
    if args.only != "test_fix":
        wanted = args.problems.split(",")
        every = load_dataset(KERNEL_DATA / "test.jsonl", kernel_app.server.tools) + \
            load_dataset(KERNEL_DATA / "train.jsonl", kernel_app.server.tools)
        items = [i for i in every if i["problem"] in wanted]
        rows += asyncio.run(run_task("kernel_write", "examples.kernel_write.app:server", old_dir, items,
                                     benchmark_harness(), "ModelNew is written.", only, pool))
    pool.close()
    tricks = [r for r in rows if r["trick"] != "gold"]
    line = {"test_fix": 0.0, "kernel_write": 0.02}
    paid_old = [r["trick"] for r in tricks if _mean(r["old"]) > line[r["task"]]]
    paid_new = [r["trick"] for r in tricks if _mean(r["new"]) > line[r["task"]]]
    golds = [r for r in rows if r["trick"] == "gold"]
    print(f"\ntricks paying: old {len(paid_old)}/{len(tricks)}, new {len(paid_new)}/{len(tricks)}"
          f"{' (' + ', '.join(paid_new) + ')' if paid_new else ''}")
    for g in golds:
        print(f"gold {g['task']}: old {_mean(g['old']):.3f}, new {_mean(g['new']):.3f}; "
              f"new grade+play wall time {_mean(g['new_s']):.1f} s")
    return 1 if paid_new or any(_mean(g["new"]) <= 0 for g in golds) else 0


if __name__ == "__main__":
    raise SystemExit(main())
