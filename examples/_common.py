"""Pieces shared by the four pattern examples: a scripted replay policy with
parallel tool calls, dataset I/O, and the main-job runner (real ``rft serve``
child process, the emulator, one comparison table, PASS/FAIL checks).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = ["ROOT", "PlanPolicy", "build_dataset_main", "doctor_job", "main_job", "mean", "pool_factory", "read_jsonl",
           "write_jsonl"]

ROOT = Path(__file__).resolve().parents[1]

Plan = Callable[[dict[str, Any]], tuple[list[dict[str, Any]], str]]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_jsonl(path: Path, items: list[dict[str, Any]]) -> None:
    """Write ``items`` one JSON object per line (UTF-8, trailing newline)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")


def mean(xs: list[float]) -> float:
    """Arithmetic mean (0.0 for no values)."""
    return sum(xs) / len(xs) if xs else 0.0


class PlanPolicy:
    """A scripted policy: ``plan(item) -> (actions, answer)`` decides the tool
    calls (``[{"name", "arguments"}]``) and the final answer of a rollout; up to
    ``parallel`` calls are issued per turn (parallel tool calls, as Cognition's
    agent made), then the answer.

    With ``plan=None`` it replays the item's ``actions``/``reference_answer``
    (reference replay). Stateless: the turn is counted from ``messages``.
    """

    def __init__(self, plan: Plan | None = None, *, parallel: int = 1) -> None:
        if parallel < 1:
            raise ValueError(f"parallel must be >= 1, got {parallel}")
        self.plan: Plan = plan or (lambda item: (item["actions"], item["reference_answer"]))
        self.parallel = parallel

    async def act(self, messages: list[dict], tools: list[dict], *, item: dict, trace_id: str) -> Any:
        """The next batch of planned calls, or the answer once they are all issued."""
        from rft_sdk.emulator import PolicyStep, make_tool_call, turns_taken

        actions, answer = self.plan(item)
        turn = turns_taken(messages, item)
        batch = actions[turn * self.parallel:(turn + 1) * self.parallel]
        if not batch:
            return PolicyStep(content=answer, tool_calls=[])
        return PolicyStep(content=None, tool_calls=[make_tool_call(a["name"], a.get("arguments", {}))
                                                    for a in batch])


Checks = Callable[[list[dict[str, Any]], Mapping[str, Any]], dict[str, bool]]


def main_job(argv: list[str] | None, *, prog: str, doc: str, app: str, server: Any, dataset_dir: Path,
             policies: Mapping[str, PlanPolicy], checks: Checks, samples: int = 2,
             extra_table: Callable[[list[dict[str, Any]], Mapping[str, Any]], Table] | None = None,
             env: Mapping[str, str] | None = None) -> int:
    """Run ``policies`` over a split through the emulator against ``rft serve
    app`` and print the comparison table and the checks. Returns 0 when every
    check holds, else 1 (130 on Ctrl-C).

    ``checks(items, runs)`` gets the items and ``{label: EmulationRun}``.
    """
    p = argparse.ArgumentParser(prog=prog, description=doc.split("\n")[0])
    p.add_argument("--split", choices=("train", "test"), default="test")
    p.add_argument("--samples", type=int, default=samples, help=f"samples per item (default {samples})")
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--limit", type=int, default=None, help="only the first N items")
    p.add_argument("--runs-dir", type=Path, default=Path("runs"))
    p.add_argument("--data-dir", type=Path, default=dataset_dir,
                   help="folder holding train.jsonl/test.jsonl (default: the example's data/)")
    args = p.parse_args(argv)
    console = Console() if Console().is_terminal else Console(width=120)
    run_dir = args.runs_dir / f"{prog.split('.')[-2]}-{time.strftime('%Y%m%d-%H%M%S')}"
    run_dir.mkdir(parents=True, exist_ok=True)

    from rft_sdk.emulator import DatasetError, emulate, load_dataset, print_comparison
    from rft_sdk.testing import serve_process

    env = {**use_data_dir(args.data_dir), **(env or {})}
    dataset = args.data_dir / f"{args.split}.jsonl"
    try:
        items = load_dataset(dataset, server.tools)  # emulate() re-validates all, then applies limit
    except (DatasetError, OSError) as exc:
        console.print(f"[red]error:[/] {exc}", markup=True, highlight=False)
        return 2
    missing = _missing_commit(items)
    if missing:
        console.print(f"[red]error:[/] {missing}", markup=True, highlight=False)
        return 2

    async def run(base_url: str) -> int:
        steps = max(-(-len(pol.plan(it)[0]) // pol.parallel) for pol in policies.values()
                    for it in items[: args.limit]) + 1
        job = server.job_config(base_url, max_episode_steps=steps)
        console.print(f"dataset {dataset}: {len(items[: args.limit])} items; tool server {base_url}")
        t0 = time.perf_counter()
        runs = {}
        for label, policy in policies.items():
            runs[label] = await emulate(items, job, policy, out_dir=run_dir / label.replace(" ", "_"),
                                        label=label, samples_per_item=args.samples, limit=args.limit,
                                        max_concurrency=args.concurrency, progress=False, console=console)
        elapsed = time.perf_counter() - t0
        print_comparison({k: r.summary for k, r in runs.items()}, console)
        if extra_table is not None:
            console.print(extra_table(items[: args.limit], runs))
        results = checks(items[: args.limit], runs)
        for text, ok in results.items():
            console.print(f"[{'green' if ok else 'red'}]{'PASS' if ok else 'FAIL'}[/] {text}")
        n = sum(len(r.results) for r in runs.values())
        console.print(f"{n} rollouts in {elapsed:.1f}s; traces and reports in {run_dir}")
        return 0 if all(results.values()) else 1

    try:
        with serve_process(app, cwd=ROOT, env=env or None) as base_url:
            return asyncio.run(run(base_url))
    except KeyboardInterrupt:
        console.print("interrupted; tool server stopped")
        return 130



def pool_factory(*, ro_paths: Callable[[], list[Any]] | None = None, **options: Any) -> Callable[[], Any]:
    """A thread-safe lazy ``SandboxPool(os.environ.get("RFT_SANDBOX_ROOT"), **options)``:
    created on the first call (not at import), once per process even when the
    first tool calls arrive concurrently in worker threads. ``ro_paths()`` (called
    then) names host paths the commands may read (e.g. the bare repository).

    Making the factory removes the sandbox roots that servers killed on this host
    (``kill -9``) left behind, so a restarted server starts clean."""
    import os
    import threading

    from rft_sdk.sandbox import SandboxPool, remove_stale_roots

    remove_stale_roots()
    lock = threading.Lock()
    box: list[SandboxPool] = []

    def pool() -> SandboxPool:
        with lock:
            if not box:
                box.append(SandboxPool(os.environ.get("RFT_SANDBOX_ROOT"), ro_paths=ro_paths() if ro_paths else (),
                                       **options))
            return box[0]

    pool.__doc__ = "The process's sandbox pool (root ``$RFT_SANDBOX_ROOT`` or a temp dir), created on first use."
    return pool


def _missing_commit(items: list[dict[str, Any]]) -> str | None:
    """A message when the items cite a commit the configured repository lacks, else ``None``."""
    import subprocess

    from ._repos import bare_repo

    commit = next((i["commit"] for i in items if isinstance(i.get("commit"), str)), None)
    if commit is None:
        return None
    repo = bare_repo()
    if subprocess.run(["git", f"--git-dir={repo}", "cat-file", "-e", f"{commit}^{{commit}}"],
                      capture_output=True).returncode == 0:
        return None
    return (f"the dataset cites commit {commit[:12]}, which is not in the repository {str(repo)!r}: build it with "
            f"the example's build_dataset --source CLONE --out DIR (that writes DIR/{SOURCE_FILE}) and pass "
            f"--data-dir DIR")


SOURCE_FILE = "source.json"  # written next to a dataset built with --source: which repository it came from


def use_data_dir(data_dir: Path) -> dict[str, str]:
    """Point this process at the repository a dataset folder was built from (its
    ``source.json``, written by the builders with ``--source``) and return the
    environment a tool server needs for it (empty for the shipped sample).

    Raises:
        SystemExit: ``source.json`` names a repository that is gone.
    """
    from ._repos import use_source

    meta_path = data_dir / SOURCE_FILE
    if not meta_path.exists():
        return {}
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    try:
        use_source(Path(meta["source"]), meta.get("package"))
    except ValueError as exc:
        raise SystemExit(f"error: {data_dir} was built from {meta['source']!r}, which is not usable now: {exc}") from None
    return {"RFT_EXAMPLES_REPO": str(meta["source"]), "RFT_EXAMPLES_PACKAGE": str(meta.get("package") or "")}


def build_dataset_main(argv: list[str] | None, *, doc: str, data_dir: Path,
                       build: Callable[[argparse.Namespace], list[dict[str, Any]]],
                       add_arguments: Callable[[argparse.ArgumentParser], None] | None = None) -> int:
    """The command line of a repository-backed example's ``build_dataset``: ``--source``/``--package``
    choose the repository (default: the shipped sample), ``build(args)`` makes the items, and the
    even/odd items are written as ``train.jsonl``/``test.jsonl`` in ``--out`` (with ``source.json``
    naming the repository when ``--source`` is given, so that ``main_job --data-dir`` finds it).
    Returns 0; exits 2 with a message (argparse) when a split would hold fewer than the hosted
    minimum of 10 items, naming how many the history gave."""
    from rft_sdk.emulator._dataset import MIN_LINES as MIN_DATASET_LINES  # the hosted rule's one definition

    from ._repos import package, use_source

    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("--source", type=Path, help="a local clone of a real repository (default: the sample)")
    p.add_argument("--package", help="the package folder of --source (default: the folder's name)")
    if add_arguments is not None:
        add_arguments(p)
    p.add_argument("--out", type=Path, default=data_dir, help="output folder (default: data/)")
    args = p.parse_args(argv)
    try:
        use_source(args.source, args.package)
    except ValueError as exc:
        p.error(str(exc))
    items = build(args)
    train, test = items[0::2], items[1::2]
    if min(len(train), len(test)) < MIN_DATASET_LINES:
        p.error(f"the history of {package()!r} gave {len(items)} items ({len(train)} train + {len(test)} test); "
                f"each split needs at least {MIN_DATASET_LINES} (the hosted minimum), so at least "
                f"{2 * MIN_DATASET_LINES} items: use a longer history"
                + (" (a larger --recent)" if getattr(args, "recent", None) else "") + "; nothing was written")
    write_jsonl(args.out / "train.jsonl", train)
    write_jsonl(args.out / "test.jsonl", test)
    if args.source is not None:
        (args.out / SOURCE_FILE).write_text(json.dumps({"source": str(args.source.resolve()), "package": package()},
                                                       indent=2) + "\n", encoding="utf-8")
    print(f"{len(train)} train + {len(test)} test items in {args.out}")
    return 0


def doctor_job(argv: list[str] | None, *, prog: str, doc: str, app: str, dataset_dir: Path, probes: str,
               steps: int = 12) -> int:
    """``rft doctor --principles unhackable --probes PROBES`` against ``rft serve APP``
    (``--app`` picks another app, e.g. a pre-fix fixture) on a split of the example.
    Writes the job config and the doctor's report under ``--out``; returns the doctor's
    exit status (0: no probe earns reward, 1: a probe does, 2: bad input)."""
    from rft_sdk.cli import load_app
    from rft_sdk.doctor.cli import main as doctor_main
    from rft_sdk.testing import serve_process

    p = argparse.ArgumentParser(prog=prog, description=doc.split("\n")[0])
    p.add_argument("--app", default=app, help=f"the tool server to check, MODULE:ATTR (default {app})")
    p.add_argument("--probes", default=probes, help=f"probe pack, MODULE:ATTR (default {probes})")
    p.add_argument("--split", choices=("train", "test"), default="test")
    p.add_argument("--limit", type=int, default=None, help="only the first N items")
    p.add_argument("--data-dir", type=Path, default=dataset_dir)
    p.add_argument("--out", type=Path, default=None, help="report folder (default runs/doctor-<example>-<time>)")
    args = p.parse_args(argv)
    out = args.out or Path("runs") / f"doctor-{prog.split('.')[-2]}-{time.strftime('%Y%m%d-%H%M%S')}"
    out.mkdir(parents=True, exist_ok=True)
    items = read_jsonl(args.data_dir / f"{args.split}.jsonl")[: args.limit]
    write_jsonl(out / "dataset.jsonl", items)
    env = use_data_dir(args.data_dir)
    server = load_app(args.app)
    with serve_process(args.app, cwd=ROOT, env=env or None) as base_url:
        (out / "job.json").write_text(json.dumps(server.job_config(base_url, max_episode_steps=steps), indent=2))
        return doctor_main(["--dataset", str(out / "dataset.jsonl"), "--config", str(out / "job.json"),
                            "--out", str(out), "--principles", "unhackable", "--probes", args.probes,
                            "--concurrency", "4"])
