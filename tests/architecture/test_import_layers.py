"""The floor plan of ``docs/ARCHITECTURE.md`` holds: layers import only downwards (the import-linter
contract in ``pyproject.toml``), no import circle, at most 20 modules directly under ``rft_sdk/``, and
every subpackage says what it owns."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import grimp
import pytest
from importlinter.api import read_configuration  # noqa: F401  (import-linter is installed)

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "rft_sdk"


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_layers_contract_is_kept() -> None:
    # In a subprocess: import-linter's CLI configures logging with ``dictConfig`` and its default
    # ``disable_existing_loggers=True``, which silenced every ``rft_sdk.*`` logger for the rest of the worker
    # (CI failed the template-digest tests, whose warnings then never reached ``caplog``).
    run = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, (
        "an import breaks the layers of docs/ARCHITECTURE.md (`lint-imports` says):\n" + run.stdout + run.stderr
    )


def test_no_import_circle() -> None:
    graph = grimp.build_graph("rft_sdk", exclude_type_checking_imports=True, cache_dir=None)
    assert _cycles(graph) == []


def test_cycle_finder_finds_a_circle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "circ_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("from . import a\n")
    (pkg / "c.py").write_text("from . import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("circ_pkg", cache_dir=None)
    assert _cycles(graph) == [["circ_pkg.a", "circ_pkg.b"]]


def test_at_most_twenty_modules_at_the_top() -> None:
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(modules) <= 20, modules


def test_every_subpackage_says_what_it_owns() -> None:
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and len(doc) > 40, f"{init.relative_to(ROOT)} needs a docstring: what it owns, what it may import"
