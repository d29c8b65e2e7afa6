"""Sandbox costs: creating a per-rollout sandbox from the sample repository's tree
(copy vs hard-link farm vs ``cp --reflink=auto``) and running a command in it —
a plain process group (the baseline: no containment), ``unshare`` namespaces,
and the full containment (bubblewrap + pids cgroup + uid drop) — measured side
by side in the same run.

``.venv/bin/python benchmarks/bench_sandbox.py [--n 20]`` prints milliseconds per
operation (median) and ratios against the plain copy / the plain process group.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examples._repos import mainline, template
from rft_sdk.sandbox import LocalBackend, SandboxLimits, SandboxPool


def _ms(fn, n: int) -> float:
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> int:
    """Print the figures; returns 0."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=20)
    n = p.parse_args().n
    src = template(mainline()[-1]["commit"])
    files = sum(1 for f in src.rglob("*") if f.is_file())
    print(f"template: {files} files, {sum(f.stat().st_size for f in src.rglob('*') if f.is_file()) / 1e6:.1f} MB")
    with tempfile.TemporaryDirectory() as root:
        create = {}
        for mode in ("copy", "auto", "hardlink"):
            pool = SandboxPool(Path(root) / mode, copy=mode)
            create[mode] = _ms(lambda i, pool=pool: pool.create(f"t{i}", src), n)
        base = create["copy"]
        for mode, ms in create.items():
            print(f"create ({mode:8}): {ms:7.2f} ms  ({base / ms:.1f}x vs copy)")
        run = {}
        logging.getLogger("rft_sdk.sandbox").setLevel(logging.ERROR)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the uncontained baselines warn, on purpose
            backends = [("process group", LocalBackend("process")), ("namespaces", LocalBackend("namespaces"))]
        full = LocalBackend()
        backends.append((f"contained ({full.isolation.mode}, {full.isolation.pids})", full))
        for label, backend in backends:
            pool = SandboxPool(Path(root) / f"run{len(run)}", backend=backend, limits=SandboxLimits())
            box = pool.create("r")
            for argv in (["true"], [sys.executable, "-c", "pass"]):
                run[(label, argv[0])] = _ms(lambda i, box=box, argv=argv: box.run(argv), n)
        for (label, cmd), ms in run.items():
            base = run[("process group", cmd)]
            name = "python -c pass" if cmd == sys.executable else "true"
            print(f"run `{name}` ({label}): {ms:7.2f} ms  ({ms / base:.2f}x vs process group)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
