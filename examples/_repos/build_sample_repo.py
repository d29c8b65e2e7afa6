"""Replay ``sample_history.COMMITS`` into a git repository (the ``shelfkit`` sample).

``python -m examples._repos.build_sample_repo DEST`` writes a bare repository
to ``DEST``; the examples call :func:`build` once per machine through
``examples._repos.bare_repo()`` (cached under ``$RFT_EXAMPLES_CACHE``).
Author, committer and dates are fixed, so the commit hashes are the same on
every machine and every run (the item files refer to them).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from .sample_history import COMMITS

__all__ = ["AUTHORS", "START", "build"]

START = dt.datetime(2025, 3, 3, 9, 30, tzinfo=dt.timezone.utc)  # date of the first commit
AUTHORS = (("Maya Lindqvist", "maya@shelfkit.example"), ("Tomasz Okafor", "tomasz@shelfkit.example"))


def _apply(root: Path, op: tuple[Any, ...]) -> None:
    kind, path = op[0], root / op[1]
    if kind == "write":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(op[2], encoding="utf-8")
    elif kind == "append":
        path.write_text(path.read_text(encoding="utf-8") + op[2], encoding="utf-8")
    elif kind == "replace":
        text = path.read_text(encoding="utf-8")
        if text.count(op[2]) != 1:
            raise ValueError(f"replace in {op[1]}: expected one occurrence of {op[2]!r}, found {text.count(op[2])}")
        path.write_text(text.replace(op[2], op[3]), encoding="utf-8")
    elif kind == "delete":
        path.unlink()
    else:
        raise ValueError(f"unknown op {kind!r}")


def build(dest: Path) -> None:
    """Write the sample as a bare repository at ``dest`` (must not exist), branch ``main``.

    Raises:
        ValueError: an op of the history does not apply (a bug in ``sample_history``).
        subprocess.CalledProcessError: git failed.
    """
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}

        def git(*args: str, **extra: str) -> None:
            subprocess.run(["git", "-C", str(work), *args], check=True, capture_output=True, env={**env, **extra})

        git("init", "-q", "-b", "main")
        for i, (subject, body, ops) in enumerate(COMMITS):
            for op in ops:
                _apply(work, op)
            name, email = AUTHORS[i % 3 == 2]
            when = (START + dt.timedelta(days=2 * i, hours=i % 5)).isoformat()
            git("add", "-A")
            git("commit", "-q", "--no-verify", "-m", subject + (f"\n\n{body}" if body else ""),
                GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=email, GIT_AUTHOR_DATE=when,
                GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=email, GIT_COMMITTER_DATE=when)
        subprocess.run(["git", "clone", "-q", "--bare", str(work), str(dest)], check=True, capture_output=True,
                       env=env)


def main(argv: list[str] | None = None) -> int:
    """CLI entry; returns 0."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dest", type=Path, help="where to write the bare repository (must not exist)")
    build(p.parse_args(argv).dest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
