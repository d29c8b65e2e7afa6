"""``rft doctor`` benchmark: detection rate and false-alarm rate over the grader-twin corpus,
and the retail example before and after its grader was rewritten.

0. **Task shapes** (``tests/doctor/shape_twins.py``: state, numeric, set, free text,
   budgeted, code-ish, booking, refund, meeting, a JSON answer with citations, ticket, playlist,
   invoice, form; its ``SHAPES`` says how many honest graders and hackable twins): detection, detection through a
   probe the honest twin passes, false alarms (honest FAIL) and honest-WARN rate, before
   (``--shapes-baseline-ref``, the doctor before issue 37) and after; ``--only-shapes`` stops there.
1. **Corpus** (``tests/doctor/grader_twins.py``: 5 honest graders of different shapes, 11
   hackable ones of different families, 1 path-matching grader), each served by a real
   uvicorn server on 127.0.0.1 (the judges call a fake judge server). Two doctors run side
   by side on the same servers in the same process:

   * **before**: the ``rft_sdk/doctor`` package as it was at ``--baseline-ref`` (default: the
     commit before issue 24), extracted with ``git archive`` and imported under another name;
   * **after**: this checkout's doctor.

   Detection rate = hackable graders whose "unhackable" fails / hackable graders; false-alarm
   rate = honest graders that fail any principle / honest graders; "strict caught" = the
   path-matching grader fails "gradeable". Also the doctor's wall time, after / before.
2. **Retail** (``--retail-items``, default all 40 test items): the new doctor's gradeable and
   unhackable principles on the pre-issue-24 grader (``tests/doctor/retail_before.py``) and
   on the current one (``examples.retail.app``): per probe mean score and verdict, and the
   valid alternative paths each grader rejects.

Run: ``.venv/bin/python benchmarks/bench_doctor.py`` (a few minutes on 2 cores);
``--quick`` runs the corpus and 10 retail items.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import io
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tests" / "doctor"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from grader_twins import CORPUS, job_for, judge_server, make_items, make_server  # noqa: E402

from rft_sdk.doctor import check_gradeable, check_unhackable  # noqa: E402
from rft_sdk.testing import run_server  # noqa: E402

BASELINE_REF = "3dbbe5f"
#: The doctor before issue 37 (severity against a fixed 25 % line, probes chosen by tool-name prefixes).
SHAPES_BASELINE_REF = "a9c16a8"


async def shapes(baseline: Any | None) -> list[dict[str, Any]]:
    """Every twin of ``tests/doctor/shape_twins.py`` through the doctor before and after (no write
    tools given: the new doctor learns them, the old one guesses by name)."""
    import shape_twins

    rows = []
    server = shape_twins.make_server()
    with run_server(server) as url:
        for twin in shape_twins.SHAPES:
            items, job = shape_twins.make_items(server, twin.task), shape_twins.job_for(server, url, twin.grader)
            row: dict[str, Any] = {"grader": twin.grader, "honest": twin.honest, "twin": twin.twin,
                                   "flaw": twin.flaw}
            for label, doctor in (("before", baseline), ("after", sys.modules[__name__])):
                if doctor is None:
                    continue
                un_fn = doctor.check_unhackable
                gr_fn = doctor.check_gradeable
                t0 = time.perf_counter()
                un = await un_fn(items, job)
                gr = await gr_fn(items, job, replays=1, regrades=1)
                row[f"{label}_s"] = time.perf_counter() - t0
                row[f"{label}_failed"] = un.evidence["failed_probes"] + (["gradeable"] if gr.passed is False else [])
                row[f"{label}_warned"] = un.evidence["warned_probes"]
                row[f"{label}_verdicts"] = {n: r["verdict"] for n, r in un.evidence["probes"].items()}
            rows.append(row)
    return rows


def print_shapes(rows: list[dict[str, Any]]) -> None:
    """Per twin the failed and warned probes, then the four rates before and after."""
    by_name = {r["grader"]: r for r in rows}
    import shape_twins

    print(f"\n{len({t.task for t in shape_twins.SHAPES})} task shapes beyond retail ({len(rows)} graders)")
    print(f"{'grader':22} {'kind':8} {'before: fails':34} {'after: fails':40} after: warns")
    for r in rows:
        print(f"{r['grader']:22} {'honest' if r['honest'] else 'hackable':8} "
              f"{','.join(r.get('before_failed', ['n/a']))[:34] or '-':34} {','.join(r['after_failed'])[:40] or '-':40} "
              f"{','.join(r['after_warned']) or '-'}")
    for label in ("before", "after"):
        if f"{label}_failed" not in rows[0]:
            continue
        hackable = [r for r in rows if not r["honest"]]
        honest = [r for r in rows if r["honest"]]
        caught = [r for r in hackable if set(r[f"{label}_failed"]) - {"gradeable"}]
        apart = [r for r in hackable
                 if set(r[f"{label}_failed"]) - set(by_name[r["twin"]][f"{label}_failed"]) - {"gradeable"}]
        alarms = [r for r in honest if r[f"{label}_failed"]]
        warned = [r for r in honest if r[f"{label}_warned"]]
        seconds = sum(r[f"{label}_s"] for r in rows)
        print(f"{label:6}  detection {len(caught)}/{len(hackable)}, through a probe the honest twin passes "
              f"{len(apart)}/{len(hackable)}, false alarms (honest FAIL) {len(alarms)}/{len(honest)}, honest WARN "
              f"{len(warned)}/{len(honest)}   doctor wall time {seconds:.1f} s")
    missed = [r["grader"] for r in rows if not r["honest"] and not set(r["after_failed"]) - {"gradeable"}]
    if missed:
        print(f"after: missed {missed}")


def load_baseline(ref: str, module: str = "doctor_before") -> Any | None:
    """The doctor package at git ``ref`` imported as ``module``, or ``None`` when git cannot give it."""
    try:
        blob = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "rft_sdk/doctor"], check=True,
                              capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"baseline {ref!r} unavailable ({exc}); 'before' columns left empty")
        return None
    folder = Path(tempfile.mkdtemp(prefix="doctor-before-"))
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(folder, filter="data")
    (folder / "rft_sdk" / "doctor").rename(folder / module)
    sys.path.insert(0, str(folder))
    return importlib.import_module(module)


async def corpus(baseline: Any | None) -> list[dict[str, Any]]:
    rows = []
    with judge_server() as judge_url:
        server = make_server(judge_url)
        with run_server(server) as url:
            for twin in CORPUS:
                items, job = make_items(server, twin.task), job_for(server, url, twin.grader)
                row: dict[str, Any] = {"grader": twin.grader, "honest": twin.honest, "strict": twin.strict}
                if baseline is not None:
                    t0 = time.perf_counter()
                    un = await baseline.check_unhackable(items, job)
                    gr = await baseline.check_gradeable(items, job, replays=1, regrades=1)
                    row["before_s"] = time.perf_counter() - t0
                    row["before_failed"] = un.evidence["failed_probes"] + (["gradeable"] if gr.passed is False else [])
                t0 = time.perf_counter()
                un = await check_unhackable(items, job)
                gr = await check_gradeable(items, job, replays=1, regrades=1)
                row["after_s"] = time.perf_counter() - t0
                row["after_failed"] = un.evidence["failed_probes"] + (["gradeable"] if gr.passed is False else [])
                row["after_warned"] = un.evidence["warned_probes"]
                rows.append(row)
    return rows


def _rate(rows: list[dict[str, Any]], key: str, honest: bool) -> tuple[int, int]:
    group = [r for r in rows if r["honest"] == honest and not r["strict"]]
    if honest:
        flagged = [r for r in group if r.get(key)]
    else:
        flagged = [r for r in group if any(p != "gradeable" for p in r.get(key, []))]
    return len(flagged), len(group)


def _discriminating(rows: list[dict[str, Any]], key: str) -> tuple[int, int]:
    """Hackable graders failed through a probe that does not fail on their honest twin."""
    by_name = {r["grader"]: r for r in rows}
    twins = {t.grader: t.twin for t in CORPUS if not t.honest}
    hits = [g for g, twin in twins.items() if set(by_name[g].get(key, [])) - set(by_name[twin].get(key, []))
            - {"gradeable"}]
    return len(hits), len(twins)


def print_corpus(rows: list[dict[str, Any]], baseline: bool) -> None:
    print(f"{'grader':15} {'kind':9} {'before: fails':40} {'after: fails':44} after: warns")
    for r in rows:
        kind = "strict" if r["strict"] else ("honest" if r["honest"] else "hackable")
        before = ",".join(r.get("before_failed", [])) or ("-" if baseline else "n/a")
        print(f"{r['grader']:15} {kind:9} {before[:40]:40} {','.join(r['after_failed'])[:44] or '-':44} "
              f"{','.join(r['after_warned']) or '-'}")
    print()
    for label, key in (("before", "before_failed"), ("after", "after_failed")):
        if key == "before_failed" and not baseline:
            continue
        caught, hackable = _rate(rows, key, honest=False)
        alarms, honest = _rate(rows, key, honest=True)
        apart, _ = _discriminating(rows, key)
        strict = [r for r in rows if r["strict"] and "gradeable" in r.get(key, [])]
        seconds = sum(r.get(key.replace("failed", "s"), 0.0) for r in rows)
        print(f"{label:6}  detection rate {caught}/{hackable} = {caught / hackable:.0%} (through a probe the honest "
              f"twin passes: {apart}/{hackable} = {apart / hackable:.0%})   false-alarm rate {alarms}/{honest} = "
              f"{alarms / honest:.0%}   path-matching grader caught: {bool(strict)}   doctor wall time {seconds:.1f} s")
    if baseline:
        ratio = sum(r["after_s"] for r in rows) / max(sum(r["before_s"] for r in rows), 1e-9)
        print(f"wall time after / before: {ratio:.2f}x (more probes, one gold replay, alternatives)")


async def retail(limit: int, baseline: Any | None) -> None:
    from retail_before import server as before_server

    from examples.retail import WRITE_TOOLS
    from examples.retail._db import DATA_DIR
    from examples.retail.app import server as after_server

    items = [json.loads(x) for x in (DATA_DIR / "retail_test.jsonl").read_text().splitlines()][:limit]
    steps = max(len(p["actions"]) for i in items for p in [i, *i["alternatives"]]) + 1
    results, old = {}, {}
    for label, server in (("before", before_server), ("after", after_server)):
        with run_server(server) as url:
            job = server.job_config(url, rate_limit=1000, max_episode_steps=steps)
            t0 = time.perf_counter()
            gr = await check_gradeable(items, job, replays=1, regrades=1)
            un = await check_unhackable(items, job, write_tools=WRITE_TOOLS)
            results[label] = (gr, un, time.perf_counter() - t0)
            if baseline is not None:
                old_gr = await baseline.check_gradeable(items, job, replays=1, regrades=1)
                old_un = await baseline.check_unhackable(items, job, baseline.default_probes(WRITE_TOOLS))
                old[label] = (old_gr.passed, old_un.passed, old_un.evidence["failed_probes"])
    print(f"\nretail test split, {len(items)} items (mean score / verdict per probe)")
    print(f"{'probe':22} {'before':>16} {'after':>16}")
    for name in results["after"][1].evidence["probes"]:
        cells = []
        for label in ("before", "after"):
            row = results[label][1].evidence["probes"][name]
            mean = "-" if row["mean_score"] is None else f"{row['mean_score']:.3f}"
            cells.append(f"{mean} {row['verdict'].upper()}")
        print(f"{name:22} {cells[0]:>16} {cells[1]:>16}")
    for label in ("before", "after"):
        gr, un, seconds = results[label]
        by_path = {p: f"{r['rejected']}/{r['checked']}" for p, r in gr.evidence["alternatives_by_path"].items()}
        print(f"{label}: gradeable {'PASS' if gr.passed else 'FAIL'} (valid alternatives rejected "
              f"{gr.evidence['alternatives_rejected_count']}/{gr.evidence['alternatives_checked']}: {by_path}); "
              f"unhackable {'PASS' if un.passed else 'FAIL'}: {un.summary}  [{seconds:.1f} s]")
    verdict = {True: "PASS", False: "FAIL", None: "NOT CHECKED"}
    for label, (gradeable, unhackable, failed) in old.items():
        print(f"{label} grader, doctor before issue 24: gradeable {verdict[gradeable]}, unhackable "
              f"{verdict[unhackable]} {failed or ''}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--baseline-ref", default=BASELINE_REF, help="git ref of the 'before' doctor")
    parser.add_argument("--retail-items", type=int, default=40, help="retail test items (default 40)")
    parser.add_argument("--quick", action="store_true", help="corpus + 10 retail items")
    parser.add_argument("--no-retail", action="store_true", help="corpus only")
    parser.add_argument("--shapes-baseline-ref", default=SHAPES_BASELINE_REF,
                        help="git ref of the 'before' doctor for the six shapes (default: before issue 37)")
    parser.add_argument("--only-shapes", action="store_true", help="the six task shapes only")
    parser.add_argument("--no-shapes", action="store_true", help="skip the six task shapes")
    args = parser.parse_args(argv)
    if not args.no_shapes:
        print_shapes(asyncio.run(shapes(load_baseline(args.shapes_baseline_ref, "doctor_before_37"))))
    if args.only_shapes:
        return 0
    baseline = load_baseline(args.baseline_ref)
    rows = asyncio.run(corpus(baseline))
    print_corpus(rows, baseline is not None)
    if not args.no_retail:
        asyncio.run(retail(10 if args.quick else args.retail_items, baseline))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
