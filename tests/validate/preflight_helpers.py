"""Helpers for the pre-flight tests: a small real ToolServer module, datasets, and ``rft`` as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

TOKEN = "tok-" + "e" * 28

#: A ToolServer written to a module file so ``rft ... MODULE:ATTR`` subprocesses import it.
#: ``lookup_capital(country)`` and a default grader that scores 1.0 when the answer is item["answer"].
APP_SOURCE = '''
from pydantic import Field
from typing import Annotated
from rft_sdk import GradingContext, Rollout, ToolError, ToolServer

CAPITALS = {"france": "Paris", "japan": "Tokyo", "peru": "Lima"}
server = ToolServer(auth_env_var=None, auth_tokens={tokens!r})


@server.tool
def lookup_capital(country: Annotated[str, Field(min_length=2, max_length=40)], *, rollout: Rollout) -> str:
    """The capital of a country.

    Args:
        country: English name of the country.
    """
    rollout.state["calls"] = rollout.state.get("calls", 0) + 1
    if country.lower() not in CAPITALS:
        raise ToolError(f"unknown country {country!r}")
    return CAPITALS[country.lower()]


@server.grader
def exact(ctx: GradingContext) -> float:
    return 1.0 if ctx.output_text.strip() == ctx.item.get("answer") else 0.0
'''


def write_app(folder: Path, name: str = "capitals_app", tokens: list[str] | None = None) -> str:
    """Write the app module into ``folder``; return ``"name:server"``."""
    (folder / f"{name}.py").write_text(APP_SOURCE.replace("{tokens!r}", repr(list(tokens or []))), encoding="utf-8")
    return f"{name}:server"


def load_app(folder: Path, name: str = "capitals_app", tokens: list[str] | None = None) -> Any:
    """Write and import the app module (a fresh module object each call)."""
    import importlib.util

    write_app(folder, name, tokens)
    spec = importlib.util.spec_from_file_location(f"{name}_{id(folder)}", folder / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server


def lines_for(tools: list[dict[str, Any]], n: int = 12) -> list[dict[str, Any]]:
    """``n`` dataset lines offering ``tools``, with the gold call and answer for replay."""
    countries = [("France", "Paris"), ("Japan", "Tokyo"), ("Peru", "Lima")]
    out = []
    for i in range(n):
        country, capital = countries[i % 3]
        out.append({"messages": [{"role": "developer", "content": "Answer with the capital only."},
                                 {"role": "user", "content": f"What is the capital of {country}?"}],
                    "tools": tools, "answer": capital,
                    "actions": [{"name": "lookup_capital", "arguments": {"country": country}}],
                    "reference_answer": capital})
    return out


def drifted(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same tools with the parameter ``country`` renamed ``nation`` (a stale dataset)."""
    text = json.dumps(tools).replace('"country"', '"nation"')
    return json.loads(text)


def write_jsonl(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def rft(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``python -m rft_sdk ARGS`` in ``cwd`` (a real subprocess, its own interpreter)."""
    full_env = {**os.environ, **(env or {})}
    full_env.pop("RFT_AUTH_TOKENS", None) if "RFT_AUTH_TOKENS" not in (env or {}) else None
    return subprocess.run([sys.executable, "-m", "rft_sdk", *args], cwd=cwd, env=full_env, capture_output=True,
                          text=True, timeout=timeout)
