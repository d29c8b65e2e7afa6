"""The repository the coding examples work on (code_edit, test_fix, code_research).

By default it is ``shelfkit``, a small library written for these examples
(``sample_history.py``), replayed into a bare git repository by
``build_sample_repo.py`` once per machine, under ``$RFT_EXAMPLES_CACHE``
(default ``~/.cache/rft-sdk-examples``). Set ``$RFT_EXAMPLES_REPO`` to a
local clone of a real repository (and ``$RFT_EXAMPLES_PACKAGE`` to its
package folder) to build the datasets and serve the tools over it instead;
the dataset builders' ``--source``/``--package`` options set both. Nothing
here touches the network; trees are exported with ``git archive``.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from .sample_history import PACKAGE

__all__ = ["bare_repo", "cache_dir", "export_tree", "git", "mainline", "package", "read_blob", "template",
           "use_source"]

_HERE = Path(__file__).resolve().parent


def use_source(path: Path | None, package_name: str | None) -> None:
    """Point this process (and the tool servers it starts) at a local clone
    ``path`` whose library lives in ``package_name``; ``None`` keeps the sample.

    Raises:
        ValueError: ``path`` is not a git repository.
    """
    if path is None:
        return
    if subprocess.run(["git", "-C", str(path), "rev-parse", "--git-dir"], capture_output=True).returncode != 0:
        raise ValueError(f"--source {str(path)!r} is not a git repository (clone it first)")
    os.environ["RFT_EXAMPLES_REPO"] = str(Path(path).resolve())
    os.environ["RFT_EXAMPLES_PACKAGE"] = package_name or Path(path).resolve().name.replace("-", "_")
    bare_repo.cache_clear()
    mainline.cache_clear()


def package() -> str:
    """The library's package folder: ``$RFT_EXAMPLES_PACKAGE`` or ``shelfkit``."""
    return os.environ.get("RFT_EXAMPLES_PACKAGE") or PACKAGE


def cache_dir() -> Path:
    """``$RFT_EXAMPLES_CACHE`` (default ``~/.cache/rft-sdk-examples``) / a folder
    keyed by the sample's source (or by the ``$RFT_EXAMPLES_REPO`` path)."""
    base = Path(os.environ.get("RFT_EXAMPLES_CACHE", Path.home() / ".cache" / "rft-sdk-examples"))
    source = os.environ.get("RFT_EXAMPLES_REPO")
    key = source.encode() if source else b"".join(
        (_HERE / n).read_bytes() for n in ("sample_history.py", "build_sample_repo.py"))
    path = base / f"{'repo' if source else PACKAGE}-{hashlib.sha256(key).hexdigest()[:16]}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def git(repo: Path, *args: str) -> str:
    """``git --git-dir=repo args`` → stdout (``CalledProcessError`` on failure)."""
    return subprocess.run(["git", f"--git-dir={repo}", *args], check=True, capture_output=True,
                          text=True).stdout


def _atomic_dir(final: Path, build: Any) -> Path:
    if final.exists():
        return final
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=final.parent))
    try:
        build(tmp)
        try:
            os.rename(tmp, final)
        except OSError:
            if not final.exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


@functools.cache
def bare_repo() -> Path:
    """The git directory: of ``$RFT_EXAMPLES_REPO`` when set, else of the sample (built once per machine)."""
    source = os.environ.get("RFT_EXAMPLES_REPO")
    if source:
        return Path(git(Path(source) / ".git" if (Path(source) / ".git").exists() else Path(source),
                        "rev-parse", "--absolute-git-dir").strip())
    from .build_sample_repo import build

    def make(tmp: Path) -> None:
        shutil.rmtree(tmp)
        build(tmp)

    return _atomic_dir(cache_dir() / "repo.git", make)


@functools.cache
def mainline() -> list[dict[str, Any]]:
    """The first-parent history of ``HEAD``, oldest first, root commit left out:
    ``{"commit", "parent", "subject", "request", "date", "changed_files"}``.
    ``request`` is the subject, or for a merge of a pull request the first line of its body."""
    repo, out = bare_repo(), []
    log = git(repo, "log", "--first-parent", "--reverse", "--format=%H%x00%P%x00%aI%x00%s%x00%b%x1e", "HEAD")
    for record in log.split("\x1e"):
        if not record.strip():
            continue
        sha, parents, date, subject, body = record.strip("\n").split("\x00")
        if not parents:
            continue
        parent = parents.split()[0]
        request = subject
        if subject.startswith("Merge pull request") and body.strip():
            request = body.strip().splitlines()[0]
        changed = git(repo, "diff", "--name-only", parent, sha).split()
        out.append({"commit": sha, "parent": parent, "subject": subject, "request": request, "date": date,
                    "changed_files": changed})
    return out


def export_tree(commit: str, dest: Path) -> None:
    """Write the tree of ``commit`` into the existing directory ``dest``."""
    data = subprocess.run(["git", f"--git-dir={bare_repo()}", "archive", "--format=tar", commit],
                          check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python >= 3.10.12 / 3.11.4: refuse unsafe members
            tar.extractall(dest, filter="data")
        else:
            tar.extractall(dest)  # git archive of a local repository


def template(commit: str) -> Path:
    """A read-only-by-convention directory holding the tree of ``commit`` (cached)."""
    return _atomic_dir(cache_dir() / f"tree-{commit[:16]}", lambda tmp: export_tree(commit, tmp))


def read_blob(commit: str, path: str) -> str:
    """The text of ``path`` at ``commit``."""
    return git(bare_repo(), "show", f"{commit}:{path}")
