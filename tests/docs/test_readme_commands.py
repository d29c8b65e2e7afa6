"""Every ``rft ...`` command the README and docs show exists with the options it uses.

Each distinct sub-command is run with ``--help`` (a real subprocess of ``rft``); every ``--option`` a shown
command uses must be one its help lists. Catches the README telling users to pass an option that does not
exist (``rft train ... --budget-s 0``).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_SEPARATORS = {"&&", "||", "|", ";", "&"}


def _commands_in(text: str) -> list[list[str]]:
    """``rft`` argument lists found in fenced code blocks and inline code spans."""
    chunks: list[str] = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S):
        chunks += block.replace("\\\n", " ").splitlines()
    outside = re.sub(r"```.*?```", "", text, flags=re.S)
    chunks += [span for span in re.findall(r"`([^`\n]+)`", outside) if re.match(r"(\S*/)?rft ", span)]
    found = []
    for chunk in chunks:
        try:
            words = shlex.split(chunk, comments=True)
        except ValueError:  # an unbalanced quote in prose
            continue
        for i, word in enumerate(words):
            if word == "rft" or word.endswith("/rft"):
                rest = []
                for w in words[i + 1:]:
                    if w in _SEPARATORS:
                        break
                    rest.append(w)
                if rest and not rest[0].endswith(":"):  # "rft validate: info: ..." is a line it prints
                    found.append(rest)
    return found


def _shown() -> dict[tuple[str, ...], set[str]]:
    """``{sub-command path: options used}`` over every source."""
    out: dict[tuple[str, ...], set[str]] = {}
    for source in SOURCES:
        for argv in _commands_in(source.read_text(encoding="utf-8")):
            if argv[0].startswith("-"):
                path: tuple[str, ...] = ()
            elif argv[0] == "check" and len(argv) > 1 and argv[1] in ("tool", "grader"):
                path = (argv[0], argv[1])
            else:
                path = (argv[0],)
            opts = {m.group(1) for w in argv if (m := re.match(r"\[?(--[A-Za-z0-9][\w-]*)", w))}
            out.setdefault(path, set()).update(opts)
    return out


SHOWN = _shown()


def test_the_docs_show_rft_commands():
    assert {("serve",), ("tools",), ("emulate",), ("doctor",), ("train",), ("job",), ("check", "tool")} <= set(SHOWN)


def test_a_line_rft_prints_is_no_command():
    """``rft validate: info: ...`` in a doc is what the command prints on stderr, not a command to run."""
    assert _commands_in("stderr: `rft validate: info: the dry run left a template`") == []
    assert _commands_in("run `rft validate train.jsonl --app app:server`") == [["validate", "train.jsonl", "--app",
                                                                               "app:server"]]


@pytest.mark.parametrize("path", sorted(SHOWN), ids=lambda p: " ".join(p) or "rft")
def test_every_shown_command_and_option_exists(path):
    result = subprocess.run([sys.executable, "-m", "rft_sdk", *path, "--help"], capture_output=True, text=True,
                            timeout=180, cwd=ROOT)
    assert result.returncode == 0, f"rft {' '.join(path)} --help: {result.stderr}"
    missing = sorted(o for o in SHOWN[path] if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", result.stdout))
    assert not missing, f"rft {' '.join(path)}: the docs use {missing}, which its --help does not list"
