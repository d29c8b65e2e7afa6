"""pytest plugin the test_fix grader loads first (``-p _rft_grade_report``) in the clean tree.

Copied into the grader's clean copy as ``_rft_grade_report.py`` (a name no file
of the change may take) and loaded with ``-p`` before any conftest or test
module is imported, so it is in place before the candidate's code runs. It
writes JSON lines to ``$RFT_GRADE_REPORT``, using pytest's own hooks:

- ``{"collected": [nodeid, ...]}`` once collection is finished;
- ``{"nodeid", "when", "outcome"}`` per phase report (setup/call/teardown);
- ``{"end": true, "tampered": [...]}`` at the end of the session.

Tamper evidence (the candidate's code runs in this process and could rewrite
reports): at load the plugin snapshots the identity of every attribute of the
modules that make and deliver reports (``_pytest.runner``, ``_pytest.reports``,
``_pytest.python``, ``_pytest.main``, pluggy's callers) and of the class
dictionaries in them; any later difference is listed in ``tampered``, as is any
plugin registered from a file outside the tests. An audit hook (which cannot be
removed) refuses to open the report file again after the plugin opened it.
The grader fails a run whose last line is not ``end``, or that lists tampering.
"""

from __future__ import annotations

import json
import os
import re
import sys

import _pytest.main
import _pytest.python
import _pytest.reports
import _pytest.runner
import pluggy._callers
import pluggy._hooks
import pluggy._manager

_PATH = os.environ.get("RFT_GRADE_REPORT", ".rft-grade-report.jsonl")
_REAL = os.path.realpath(_PATH)
_MODULES = (_pytest.runner, _pytest.reports, _pytest.python, _pytest.main, pluggy._callers, pluggy._hooks,
            pluggy._manager)


def _snapshot() -> dict[str, int]:
    snap = {}
    for mod in _MODULES:
        for name, value in list(vars(mod).items()):
            snap[f"{mod.__name__}.{name}"] = id(value)
            if isinstance(value, type) and value.__module__ == mod.__name__:
                for attr, member in list(vars(value).items()):
                    snap[f"{mod.__name__}.{name}.{attr}"] = id(member)
    return snap


_BEFORE = _snapshot()
_REPORT_CLASSES = frozenset({"BaseReport", "TestReport", "CollectReport", "CallInfo"})  # nothing may be added
_OUT = open(_PATH, "w", encoding="utf-8", buffering=1)
_WRITE, _DUMPS, _SNAPSHOT = _OUT.write, json.dumps, _snapshot


_FD_PATH = re.compile(r"^/(proc/[^/]+|dev)/fd/")


def _audit(event: str, args: tuple[object, ...]) -> None:
    if event == "open" and args and isinstance(args[0], (str, bytes)):
        path = args[0].decode(errors="replace") if isinstance(args[0], bytes) else args[0]
        if _FD_PATH.match(path) or os.path.realpath(path) == _REAL:
            raise PermissionError(f"{path!r}: the grader's report is not writable by the code under test")


sys.addaudithook(_audit)


def _tampered(config: object) -> list[str]:
    now = _SNAPSHOT()
    found = sorted(k for k, v in _BEFORE.items() if now.get(k) != v)
    found += sorted(k for k in now if k not in _BEFORE and k.split(".")[-2] in _REPORT_CLASSES)
    rootdir = str(getattr(config, "rootpath", ""))
    manager = getattr(config, "pluginmanager", None)
    for plugin in manager.get_plugins() if manager is not None else ():
        origin = os.path.realpath(str(getattr(plugin, "__file__", "") or ""))
        name = os.path.basename(origin)
        if origin.startswith(rootdir + os.sep) and name not in ("conftest.py", "_rft_grade_report.py"):
            found.append(f"plugin registered from {os.path.relpath(origin, rootdir)}")
    return found


def pytest_collection_finish(session: object) -> None:
    _WRITE(_DUMPS({"collected": [item.nodeid for item in getattr(session, "items", [])]}) + "\n")


def pytest_runtest_logreport(report: object) -> None:
    _WRITE(_DUMPS({"nodeid": getattr(report, "nodeid", None), "when": getattr(report, "when", None),
                   "outcome": getattr(report, "outcome", None)}) + "\n")


def pytest_sessionfinish(session: object, exitstatus: object) -> None:
    _WRITE(_DUMPS({"end": True, "exitstatus": int(exitstatus),  # type: ignore[call-overload]
                   "tampered": _tampered(getattr(session, "config", None))}) + "\n")
    _OUT.flush()
