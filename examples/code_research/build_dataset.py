"""Build ``data/train.jsonl`` and ``data/test.jsonl``: research questions about the sample library.

``python -m examples.code_research.build_dataset`` (offline; the ``shelfkit`` sample of
``examples/_repos``). ``--source PATH [--package NAME] --out DIR`` builds the same
questions over a local clone of a real repository instead (e.g. more-itertools).

Every fact is extracted mechanically (by AST) from the repository at its newest
commit, so each has provenance (file and lines, ``facts_source``). Two kinds of
question, over the package's modules:

* for a public function or method ``F`` whose own body raises exceptions:
  "where is F defined, which parameters does it take, and which exceptions can
  it raise itself?" — facts: the defining file, every parameter name (not
  ``self``), every exception class the body raises;
* for an exception class ``E`` that some function raises: "where is E defined,
  which classes does it derive from, and which functions raise it?" — facts:
  the defining file, the base classes, the raising functions.

Items also carry ``symbol``, ``commit``, ``tool_budget`` and, for reference
replay, ``actions`` (``find_symbol`` then ``read_file`` of each cited range)
and ``reference_answer`` (its last sentence holds the exceptions or the
raisers). At most ``N_ITEMS`` questions in name order; every other one goes to
the test split.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from .._common import build_dataset_main
from .._repos import mainline, package, template

__all__ = ["N_ITEMS", "SYSTEM_PROMPT", "build_items", "main"]

DATA_DIR = Path(__file__).resolve().parent / "data"
N_ITEMS = 40
SYSTEM_PROMPT = (
    "You answer developers' questions about the Python library {name}, whose repository you "
    "can search and read with tools. Answer completely and precisely: name files, parameters, classes, "
    "functions and exception classes exactly as they appear in the code. Tool calls are limited; be efficient."
)

Def = tuple[str, str, ast.FunctionDef]  # (qualified name, file, node)


def _raised(fn: ast.FunctionDef) -> list[str]:
    names = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id[0].isupper() and exc.id not in names:
                names.append(exc.id)
    return names


def _defs(root: Path) -> tuple[list[Def], dict[str, tuple[str, ast.ClassDef]]]:
    functions: list[Def] = []
    classes: dict[str, tuple[str, ast.ClassDef]] = {}
    for path in sorted((root / package()).rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                functions.append((node.name, rel, node))
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                classes[node.name] = (rel, node)
                functions += [(f"{node.name}.{f.name}", rel, f) for f in node.body
                              if isinstance(f, ast.FunctionDef) and not f.name.startswith("_")]
    return functions, classes


def _span(rel: str, node: ast.stmt) -> tuple[str, int, int]:
    return rel, node.lineno, node.end_lineno or node.lineno


def _item(symbol: str, question: str, facts: list[str], spans: list[tuple[str, int, int]], answer: str,
          commit: str) -> dict[str, Any]:
    name = symbol.split(".")[-1]
    reads = [{"name": "read_file", "arguments": {"path": rel, "start_line": a, "max_lines": min(b - a + 1, 400)}}
             for rel, a, b in spans]
    return {
        "messages": [{"role": "system", "content": SYSTEM_PROMPT.replace("{name}", package())},
                     {"role": "user", "content": f"In {package()}, {question}"}],
        "symbol": symbol, "facts": facts, "facts_source": [f"{rel}:{a}-{b}" for rel, a, b in spans],
        "commit": commit, "tool_budget": 2 + len(spans),
        "actions": [{"name": "find_symbol", "arguments": {"name": name}}, *reads],
        "reference_answer": answer,
    }


def build_items() -> list[dict[str, Any]]:
    """The items (see the module docstring), sorted by symbol."""
    commit = mainline()[-1]["commit"]
    functions, classes = _defs(template(commit))
    items = []
    for symbol, rel, fn in functions:
        raised = _raised(fn)
        params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs] if a.arg != "self"]
        params += [a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None]
        if raised and params:
            rel_, line, _ = span = _span(rel, fn)
            items.append(_item(
                symbol, f"where is `{symbol}` defined, which parameters does it take, and which exceptions can "
                        "it raise itself?", [rel, *params, *raised], [span],
                f"`{symbol}` is defined in {rel} (line {line}). Parameters: {', '.join(params)}. "
                f"It raises {', '.join(raised)}.", commit))
    for name, (rel, cls) in classes.items():
        raisers = [(s, r, f) for s, r, f in functions if name in _raised(f)]
        bases = [b.id for b in cls.bases if isinstance(b, ast.Name)]
        if not raisers or not bases:
            continue
        spans = [_span(rel, cls), *(_span(r, f) for _, r, f in raisers)]
        items.append(_item(
            name, f"where is the exception `{name}` defined, which classes does it derive from, and which "
                  "functions raise it?", [rel, *bases, *(s for s, _, _ in raisers)], spans,
            f"`{name}` is defined in {rel} (line {cls.lineno}). Bases: {', '.join(bases)}. "
            f"It is raised by {', '.join(s for s, _, _ in raisers)}.", commit))
    return sorted(items, key=lambda i: i["symbol"])[:N_ITEMS]


def main(argv: list[str] | None = None) -> int:
    """Write both splits; returns 0."""
    return build_dataset_main(argv, doc=__doc__ or "", data_dir=DATA_DIR, build=lambda args: build_items())


if __name__ == "__main__":
    raise SystemExit(main())
