"""How the test_fix grader decides that a change makes the tests pass.

1. **The change**: the files of the rollout's tree that differ from its template
   and that a code change may touch (:func:`may_touch`: Python source files of
   the library folder; never tests, ``conftest.py``, ``sitecustomize.py``,
   ``usercustomize.py``, ``*.pth``, ``pytest.ini``, ``tox.ini``, ``setup.cfg``,
   ``setup.py``, ``pyproject.toml``). Everything else the rollout wrote is ignored.
2. **A clean copy**: a fresh sandbox from the template (the repository at the
   task's commit, code reverted, the commit's tests and configuration) plus only
   those files; the rollout's tree is never executed by the grader.
3. **Per-test outcomes**: pytest runs there with ``_report_plugin`` loaded first
   (its JSON lines: collected ids, one report per phase, an end marker with
   tamper evidence). The exit status is ignored: a run passes only when it ended,
   shows no tampering, collected every required id, and every required id passed
   (setup and call passed, teardown did not fail).

Known tricks this defeats (``rft_sdk.doctor.packs.pytest`` plays them): a
``conftest.py`` that exits 0 or forces every report to "passed", ``pytest.ini``
with ``addopts = --co`` or ``-k`` deselection, edited tests, a library that
exits at import, a library that patches pytest's report machinery.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rft_sdk.sandbox import Sandbox, SandboxPool

__all__ = ["CONFIG_FILES", "PLUGIN_NAME", "PYTEST_ENV", "TestRun", "candidate_changes", "describe", "grading_key",
           "may_touch", "parse_report", "run_clean", "verdict"]

PLUGIN_NAME = "_rft_grade_report"
REPORT_FILE = ".rft-grade-report.jsonl"
PLUGIN_SOURCE = Path(__file__).resolve().parent / "_report_plugin.py"
#: Files that configure the test run (or run code at interpreter start); never taken from a rollout.
CONFIG_FILES = frozenset({"conftest.py", "sitecustomize.py", "usercustomize.py", "pytest.ini", "tox.ini",
                          "setup.cfg", "setup.py", "pyproject.toml", f"{PLUGIN_NAME}.py"})
MAX_CHANGE_BYTES = 50_000_000  # source bytes a change may carry
PYTEST_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "RFT_GRADE_REPORT": REPORT_FILE,
              "PYTHONDONTWRITEBYTECODE": "1"}


def may_touch(path: str, package: str) -> bool:
    """Whether a change may carry ``path``: a ``.py`` file under ``package/``, not a
    test and not a configuration file (:data:`CONFIG_FILES`, ``*.pth``), no hidden
    or ``__pycache__`` component."""
    parts = path.split("/")
    return (len(parts) > 1 and parts[0] == package and path.endswith(".py") and not path.endswith(".pth")
            and parts[-1] not in CONFIG_FILES and not any(p.startswith(".") or p == "__pycache__" for p in parts)
            and not any(p in ("tests", "test") for p in parts))


def candidate_changes(box: Sandbox, template: Path, package: str) -> tuple[dict[str, bytes | None], list[str]]:
    """``({path: new bytes, or None when deleted}, [ignored new paths])``: the rollout
    tree's differences from ``template`` that :func:`may_touch` allows, and the files it
    added that a change may not carry (reported, never used). Only allowed files are
    read (links are not followed).

    Raises:
        ValueError: the allowed files hold more than ``MAX_CHANGE_BYTES`` (graded 0 by the caller).
    """
    now = set(box.files())
    before = {p.relative_to(template).as_posix() for p in template.rglob("*") if p.is_file() and not p.is_symlink()}
    changed: dict[str, bytes | None] = {}
    total = 0
    for path in sorted(p for p in now | before if may_touch(p, package)):
        if path not in now:
            changed[path] = None
            continue
        data = box.read_bytes(path, MAX_CHANGE_BYTES + 1)
        total += len(data)
        if total > MAX_CHANGE_BYTES:
            raise ValueError(f"the change's source files exceed {MAX_CHANGE_BYTES} bytes")
        if path not in before or (template / path).read_bytes() != data:
            changed[path] = data
    ignored = sorted(p for p in now - before if not may_touch(p, package) and not p.startswith(".rft")
                     and "__pycache__" not in p.split("/"))
    return changed, ignored


@dataclasses.dataclass
class TestRun:
    """What the plugin reported for one clean run.

    Attributes:
        collected: node ids collected.
        phases: ``{nodeid: {"setup"|"call"|"teardown": outcome}}``.
        ended: the end marker was the last line.
        tampered: tamper evidence (changed pytest internals, foreign plugins,
            malformed or duplicated report lines).
        output: the tail of pytest's output (for the grade's reasons).
    """

    __test__ = False  # not a pytest test class

    collected: list[str]
    phases: dict[str, dict[str, str]]
    ended: bool
    tampered: list[str]
    output: str

    def passed(self, nodeid: str) -> bool:
        """Setup and call passed, teardown did not fail."""
        p = self.phases.get(nodeid, {})
        return p.get("setup") == "passed" and p.get("call") == "passed" and p.get("teardown", "passed") == "passed"


def parse_report(text: str, output: str = "") -> TestRun:
    """A :class:`TestRun` from the plugin's JSON lines (malformed input is tamper evidence)."""
    run = TestRun([], {}, False, [], output)
    seen_collected = False
    for number, line in enumerate(text.splitlines(), 1):
        if run.ended:
            run.tampered.append(f"report line {number} after the end marker")
            break
        try:
            obj = json.loads(line)
        except ValueError:
            run.tampered.append(f"report line {number} is not JSON")
            continue
        if not isinstance(obj, dict):
            run.tampered.append(f"report line {number} is not an object")
        elif "collected" in obj and not seen_collected and isinstance(obj["collected"], list):
            run.collected, seen_collected = [str(i) for i in obj["collected"]], True
        elif obj.get("end") is True:
            run.ended = True
            run.tampered += [f"pytest internals changed: {t}" for t in obj.get("tampered") or []][:20]
        elif isinstance(obj.get("nodeid"), str) and obj.get("when") in ("setup", "call", "teardown"):
            phases = run.phases.setdefault(obj["nodeid"], {})
            if obj["when"] in phases:
                run.tampered.append(f"two {obj['when']} reports for {obj['nodeid']}")
            phases[obj["when"]] = str(obj.get("outcome"))
        else:
            run.tampered.append(f"report line {number} is not a report")
    return run


def _matching(collected: Sequence[str], wanted: str) -> list[str]:
    return [c for c in collected if c == wanted or c.startswith(wanted + "[")]


def verdict(run: TestRun, required: Sequence[str]) -> tuple[bool, list[str]]:
    """``(ok, reasons)``: ok when the run ended untampered and every id of ``required``
    was collected (a parametrised id: at least one case) and passed."""
    reasons = list(run.tampered)
    if not run.ended:
        reasons.append("the test run did not finish (the process exited or was killed before pytest's end)")
    if not run.collected:
        reasons.append("no test was collected")
    for wanted in required:
        cases = _matching(run.collected, wanted)
        if not cases:
            reasons.append(f"{wanted} was not collected")
        elif failed := [c for c in cases if not run.passed(c)]:
            reasons.append(f"{failed[0]} did not pass ({run.phases.get(failed[0], {}) or 'no report'})")
    return not reasons, reasons


def run_clean(pool: SandboxPool, key: str, template: Path, files: Mapping[str, bytes | None],
              ids: Sequence[str], *, autoload: bool = False, timeout_s: float = 300.0) -> TestRun:
    """Run pytest over ``ids`` in a fresh sandbox ``key`` made from ``template`` plus
    ``files`` (``None``: delete), with the report plugin; the sandbox is released.
    ``autoload``: load the environment's installed pytest plugins (entry points; the
    environment is the server's, read-only: a rollout cannot add one)."""
    box = pool.create(key, template)
    try:
        for path, data in files.items():
            if data is None:
                if box.is_file(path):
                    box.run(["rm", "-f", "--", path], timeout_s=10)
            else:
                box.write_bytes(path, data)
        box.write_bytes(f"{PLUGIN_NAME}.py", PLUGIN_SOURCE.read_bytes())
        env = {k: v for k, v in PYTEST_ENV.items() if not (autoload and k == "PYTEST_DISABLE_PLUGIN_AUTOLOAD")}
        res = box.run([sys.executable, "-m", "pytest", "-p", PLUGIN_NAME, "-p", "no:cacheprovider", "-q",
                       "--tb=line", *ids], env=env, timeout_s=timeout_s)
        try:
            text = box.read_text(REPORT_FILE, 20_000_000)
        except (OSError, ValueError):
            text = ""
        return parse_report(text, res.text()[-1500:])
    finally:
        pool.release(key)


def grading_key(trace_id: str) -> str:
    """A fresh key for the grader's clean sandbox of a rollout (random: never a rollout's trace_id)."""
    return f"grade:{trace_id}:{secrets.token_hex(8)}"


def describe(changed: Mapping[str, Any], ignored: Sequence[str]) -> list[str]:
    """Human-readable notes on what was taken from the rollout and what was ignored."""
    notes = [f"change: {', '.join(sorted(changed)) or 'none'}"]
    if ignored:
        notes.append(f"ignored (not part of a code change): {', '.join(ignored[:10])}")
    return notes
