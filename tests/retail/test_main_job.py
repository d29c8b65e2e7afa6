"""The main job end to end, small: real uvicorn subprocess, emulator, checks, run folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_main_job_small_run(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "examples.retail.main_job", "--limit", "10", "--samples", "2",
         "--runs-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.count("PASS") == 4 and "FAIL" not in proc.stdout
    (run_dir,) = list(tmp_path.iterdir())
    ref = [json.loads(line) for line in (run_dir / "reference" / "rollouts.jsonl").read_text().splitlines()]
    assert len(ref) == 20 and all(r["score"] == 1.0 for r in ref)
    rows = json.loads((run_dir / "perturbations.json").read_text())
    assert sum(r["rollouts"] for r in rows.values()) == 20
    for row in rows.values():
        assert all(s == 0.0 for s in row["changed_scores"]) and all(s == 1.0 for s in row["unchanged_scores"])


def test_perturb_callback_changes_one_write(base):
    import random

    from examples.retail import WRITE_TOOLS
    from examples.retail._perturb import changes_end_state, make_perturb

    lines = (ROOT / "examples/retail/data/retail_test.jsonl").read_text().splitlines()
    perturb = make_perturb(base)
    seen = set()
    for k, line in enumerate(lines):
        item = json.loads(line)
        new, desc = perturb(list(item["actions"]), random.Random(k))
        seen.add(desc.split()[0])
        writes = [a for a in item["actions"] if a["name"] in WRITE_TOOLS]
        if not writes:
            assert new == item["actions"] and not changes_end_state(item, new, base)
        elif desc.startswith("dropped"):
            assert len(new) == len(item["actions"]) - 1
        else:
            assert len(new) == len(item["actions"]) and new != item["actions"]
    assert {"dropped", "altered"} <= seen
