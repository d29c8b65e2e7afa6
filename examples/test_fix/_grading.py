"""How the test_fix grader decides that a change makes the tests pass.

1. **The change**: the files of the rollout's tree that differ from its template
   and that a code change may touch (:func:`may_touch`: Python source files of
   the library folder; never tests, ``conftest.py``, ``sitecustomize.py``,
   ``usercustomize.py``, ``*.pth``, ``pytest.ini``, ``tox.ini``, ``setup.cfg``,
   ``setup.py``, ``pyproject.toml``). Everything else the rollout wrote is ignored.
2. **A clean copy**: a fresh sandbox from the template (the repository at the
   task's commit, code reverted, the commit's tests and configuration) plus only
   those files; the rollout's tree is never executed by the grader.
3. **Per-test outcomes, decided outside the process under test**: pytest runs
   there through ``_report_plugin`` (started with ``Sandbox.popen``): it reports
   over a private pipe, each line with a nonce the supervisor sent, and leaves
   with ``os._exit`` (no ``atexit`` hook of the code runs). The supervisor reads
   the report up to the end marker, collects (never uses) whatever comes after
   it until the process group is killed, and cross-checks the exit status. A
   run passes only when it ended, shows no tampering (a foreign hook
   implementation, changed pytest internals, a line without the nonce, late
   bytes, an exit status that contradicts the report), collected every
   required id, and every required id passed (setup and call passed, teardown
   did not fail).

Known tricks this defeats (``rft_sdk.doctor.packs.pytest`` plays them): a
``conftest.py`` that exits 0 or forces every report to "passed", ``pytest.ini``
with ``addopts = --co`` or ``-k`` deselection, edited tests, a library that
exits at import, a library that patches pytest's report machinery, a library
that registers a plugin object found by walking frames, an ``atexit`` child
rewriting the report, the report writer replaced through ``sys.modules``
(issue #37). ``tamper_judge`` (the static layer, run first by the grader)
names the construct.
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import select
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rft_sdk.sandbox import Sandbox, SandboxPool

__all__ = ["CONFIG_FILES", "PLUGIN_NAME", "PYTEST_ENV", "TestRun", "candidate_changes", "describe", "grading_key",
           "may_touch", "parse_report", "run_clean", "verdict"]

PLUGIN_NAME = "_rft_grade_report"
MAX_REPORT_BYTES = 20_000_000
_EXIT_GRACE_S = 2.0  # after the end marker: the process must exit; late bytes are collected, never used
PLUGIN_SOURCE = Path(__file__).resolve().parent / "_report_plugin.py"
#: Files that configure the test run (or run code at interpreter start); never taken from a rollout.
CONFIG_FILES = frozenset({"conftest.py", "sitecustomize.py", "usercustomize.py", "pytest.ini", "tox.ini",
                          "setup.cfg", "setup.py", "pyproject.toml", f"{PLUGIN_NAME}.py"})
MAX_CHANGE_BYTES = 50_000_000  # source bytes a change may carry
PYTEST_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}


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
        exitstatus: the status the process exited with (``None``: unknown or killed).
        reported_status: the status the end marker states.
    """

    __test__ = False  # not a pytest test class

    collected: list[str]
    phases: dict[str, dict[str, str]]
    ended: bool
    tampered: list[str]
    output: str
    exitstatus: int | None = None
    reported_status: int | None = None

    def passed(self, nodeid: str) -> bool:
        """Setup and call passed, teardown did not fail."""
        p = self.phases.get(nodeid, {})
        return p.get("setup") == "passed" and p.get("call") == "passed" and p.get("teardown", "passed") == "passed"


def parse_report(text: str, output: str = "", *, nonce: str | None = None) -> TestRun:
    """A :class:`TestRun` from the plugin's JSON lines (malformed input is tamper
    evidence; with ``nonce``, so is a line that does not carry it)."""
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
            continue
        if nonce is not None and obj.get("nonce") != nonce:
            run.tampered.append(f"report line {number} lacks the grader's nonce (not written by the report plugin)")
            continue
        run.tampered += [str(f) for f in obj.get("foreign") or []][:20]
        if "collected" in obj and not seen_collected and isinstance(obj["collected"], list):
            run.collected, seen_collected = [str(i) for i in obj["collected"]], True
        elif obj.get("end") is True:
            run.ended = True
            run.reported_status = obj.get("exitstatus") if isinstance(obj.get("exitstatus"), int) else None
            run.tampered += [str(t) for t in obj.get("tampered") or []][:20]
        elif isinstance(obj.get("nodeid"), str) and obj.get("when") in ("setup", "call", "teardown"):
            phases = run.phases.setdefault(obj["nodeid"], {})
            if obj["when"] in phases:
                run.tampered.append(f"two {obj['when']} reports for {obj['nodeid']}")
            phases[obj["when"]] = str(obj.get("outcome"))
        else:
            run.tampered.append(f"report line {number} is not a report")
    run.tampered = list(dict.fromkeys(run.tampered))  # the same evidence seen on every report: once
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


def _read_channel(proc: Any, nonce: str, timeout_s: float) -> tuple[bytes, bytes, int | None, str | None]:
    """``(report, after_end, status, problem)`` from a running ``_report_plugin``: the
    bytes up to and including the end marker, the bytes that came after it, the
    exit status (``None`` when it did not exit) and why reading stopped early."""
    fd, buf, deadline = proc.stdout.fileno(), b"", time.monotonic() + timeout_s
    start = 0
    while True:
        nl = buf.find(b"\n", start)
        if nl >= 0:
            if _is_end(buf[start:nl], nonce):
                report, rest = buf[:nl + 1], buf[nl + 1:]
                break
            start = nl + 1
            continue
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return buf, b"", None, f"no end of session within {timeout_s:.0f} s"
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return buf, b"", _status(proc, 5.0), None
        buf += chunk
        if len(buf) > MAX_REPORT_BYTES:
            return buf[:MAX_REPORT_BYTES], b"", None, f"report larger than {MAX_REPORT_BYTES} bytes"
    status = _status(proc, _EXIT_GRACE_S)
    # whatever the process group still writes before the kill counts against it, never for it
    end = time.monotonic() + _EXIT_GRACE_S
    while len(rest) <= MAX_REPORT_BYTES and select.select([fd], [], [], max(0.0, end - time.monotonic()))[0]:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        rest += chunk
    return report, rest, status, None


def _is_end(line: bytes, nonce: str) -> bool:
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    return isinstance(obj, dict) and obj.get("end") is True and obj.get("nonce") == nonce


def _status(proc: Any, timeout_s: float) -> int | None:
    try:
        return int(proc.wait(timeout_s))
    except subprocess.TimeoutExpired:
        return None


def run_clean(pool: SandboxPool, key: str, template: Path, files: Mapping[str, bytes | None],
              ids: Sequence[str], *, autoload: bool = False, timeout_s: float = 300.0) -> TestRun:
    """Run pytest over ``ids`` in a fresh sandbox ``key`` made from ``template`` plus
    ``files`` (``None``: delete) through ``_report_plugin`` (see its docstring), and
    read the report from its private channel; the sandbox is released.
    ``autoload``: load the environment's installed pytest plugins (entry points; the
    environment is the server's, read-only: a rollout cannot add one).

    Evidence the process under test cannot forge, added to ``tampered``: a report
    line without the nonce (``parse_report``), bytes written after the end marker
    (read before the process group is killed, never used), and an exit status that
    is not the one the end marker states or that contradicts the reported outcomes.
    """
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
        nonce = secrets.token_hex(16)
        proc = box.popen([sys.executable, f"{PLUGIN_NAME}.py", *ids], env=env, timeout_s=timeout_s + 10)
        try:
            proc.stdin.write(nonce.encode() + b"\n")
            proc.stdin.close()
            report, after, status, problem = _read_channel(proc, nonce, timeout_s)
            output = proc.stderr_text()[-1500:]
        finally:
            proc.close()
        run = parse_report(report.decode("utf-8", "replace"), output, nonce=nonce)
        run.exitstatus = status
        if problem:
            run.tampered.append(problem)
        if after.strip():
            run.tampered.append(f"{len(after)} bytes reached the report channel after pytest's session ended "
                                f"(an atexit hook or a child process writing the report)")
        run.tampered += _cross_check(run, status)
        return run
    finally:
        pool.release(key)


def _cross_check(run: TestRun, status: int | None) -> list[str]:
    """Exit-status evidence: the status pytest's process ended with must be the one its
    end marker states, and 0 exactly when every collected test passed."""
    if not run.ended:
        return []
    found = []
    if status != run.reported_status:
        found.append(f"the process exited with status {status}, the report's end says {run.reported_status}")
    all_passed = bool(run.collected) and all(run.passed(n) for n in run.collected)
    if status is not None and (status == 0) != all_passed:
        found.append(f"exit status {status} contradicts the reported outcomes "
                     f"({'all passed' if all_passed else 'not all passed'}): the report was rewritten")
    return found


def grading_key(trace_id: str) -> str:
    """A fresh key for the grader's clean sandbox of a rollout (random: never a rollout's trace_id)."""
    return f"grade:{trace_id}:{secrets.token_hex(8)}"


def describe(changed: Mapping[str, Any], ignored: Sequence[str]) -> list[str]:
    """Human-readable notes on what was taken from the rollout and what was ignored."""
    notes = [f"change: {', '.join(sorted(changed)) or 'none'}"]
    if ignored:
        notes.append(f"ignored (not part of a code change): {', '.join(ignored[:10])}")
    return notes
