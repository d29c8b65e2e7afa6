"""What built a template, recorded beside it: its source, so that a second, different database given the same
``name`` (and, on SQLite, the same ``dir``) is refused at start instead of silently reusing another task's
schema; and a digest of that source, so that an edited seed (a constant of the ``setup`` module, a rewritten
``template=`` file) rebuilds the template at the next start instead of being served from the stale one."""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["file_digest", "same_source", "seed_file_paths", "seed_label", "setup_digest", "stale_reason",
           "template_source"]


def _setup_code(setup: Callable[..., Any] | None) -> tuple[Any, str | None, Any]:
    """``(code object or None, qualified name, the function)`` of ``setup``: ``functools.partial(f, ...)`` is
    ``f``'s, a callable object its class's ``__call__``'s."""
    fn: Any = setup.func if isinstance(setup, functools.partial) else setup
    code, name = getattr(fn, "__code__", None), getattr(fn, "__qualname__", None)
    if code is None or name is None:  # a callable object: its class's __call__
        call = type(fn).__call__ if callable(fn) else None
        code, name = getattr(call, "__code__", None), type(fn).__qualname__
    return code, name, fn


def template_source(template: str | None, setup: Callable[..., Any] | None) -> str:
    """What builds a template: ``"template:<template>"`` (the seed file's resolved path on SQLite, the source
    database's name on PostgreSQL), or ``"setup:<resolved source file>:<qualname>"`` of the ``setup`` function
    (its code's file, so a module imported under two names, or run as ``__main__``, is one source;
    ``functools.partial(f, ...)`` is ``f``'s, a callable object its class's ``__call__``'s)."""
    if template is not None:
        return f"template:{template}"
    code, name, fn = _setup_code(setup)
    where = str(Path(code.co_filename).resolve()) if code is not None else getattr(fn, "__module__", "?")
    return f"setup:{where}:{name}"


def seed_file_paths(seed_files: Iterable[str | os.PathLike[str]], owner: str) -> tuple[Path, ...]:
    """The ``seed_files=`` of a database (``owner``: its class name, for the messages), each resolved to an
    absolute path now (a relative one against the current directory).

    Raises:
        TypeError: ``seed_files`` is one path rather than a list of them, or holds something that is not a path.
        ValueError: a path that is not a file (missing, or a folder).
    """
    if isinstance(seed_files, (str, bytes, os.PathLike)):
        raise TypeError(f"{owner}(seed_files=...) takes a list of paths, got the single path {str(seed_files)!r}: "
                        f"pass seed_files=[{str(seed_files)!r}]")
    out = []
    for entry in seed_files:
        if not isinstance(entry, (str, os.PathLike)):
            raise TypeError(f"{owner}(seed_files=...): {entry!r} ({type(entry).__name__}) is not a path: pass str "
                            "or pathlib.Path entries")
        path = Path(entry).resolve()
        if not path.is_file():
            raise ValueError(f"{owner}(seed_files=...): {str(entry)!r} is not a file (resolved to {str(path)!r} "
                             f"from {os.getcwd()!r}); name a file setup() reads, best relative to the module: "
                             "Path(__file__).parent / 'fixture.json'")
        out.append(path)
    return tuple(out)


def seed_label(source_id: str, seed_files: Sequence[Path]) -> str:
    """``source_id`` as the rebuild warning names it: with the seed files' names when there are any
    (``setup:/app/seed.py:setup + seed_files fixture.json``)."""
    return f"{source_id} + seed_files {', '.join(p.name for p in seed_files)}" if seed_files else source_id


def setup_digest(setup: Callable[..., Any] | None, seed_files: Sequence[Path] = ()) -> str:
    """``"sha256:<64 hex digits>"`` of the bytes of the file that defines ``setup`` (the file
    :func:`template_source` names), or ``""`` when there is none to read (a function typed at a prompt, a
    module shipped without its ``.py``): then an edit cannot be detected.

    The whole file, not the function's own text: a seed constant or a helper of the module is part of what the
    template holds. Any edit of the file (a comment, a tool in the same module) changes it: a rebuild too many
    costs one run of ``setup``; one too few hands every rollout stale data. Data the function reads from other
    files (a JSON, a CSV, another module) is covered only where it is listed in ``seed_files`` (a database's
    ``seed_files=``, :func:`seed_file_paths`): then the digest is of ``setup``'s file and each listed file's
    bytes, in order (a ``setup`` without a readable file counts as empty), and an edit of any of them changes
    it. Without ``seed_files`` the digest is the one of ``setup``'s file alone, as before the option existed.

    Raises:
        ValueError: a seed file could not be read (removed since :func:`seed_file_paths` saw it, unreadable).
    """
    code, _, _ = _setup_code(setup)
    data: bytes | None = None
    if code is not None:
        try:
            data = Path(code.co_filename).resolve().read_bytes()
        except OSError:  # "<stdin>", "<string>", a .pyc without its source
            data = None
    if not seed_files:
        return "" if data is None else "sha256:" + hashlib.sha256(data).hexdigest()
    digest = hashlib.sha256(b"rft-setup+seed-files\0")
    digest.update(hashlib.sha256(data or b"").digest())
    for path in seed_files:
        try:
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        except OSError as exc:
            raise ValueError(f"seed file {str(path)!r} cannot be read ({exc.strerror or exc}): fix the path in "
                             "seed_files=, or its permissions") from exc
    return "sha256:" + digest.hexdigest()


def file_digest(path: Path) -> str:
    """``"stat:<size>:<mtime_ns>"`` of an SQLite ``template=`` file, followed by ``" wal:<size>:<mtime_ns>"``
    when it has a ``-wal`` file (in WAL mode a commit writes there and leaves the main file's mtime alone);
    ``""`` when the file does not exist (the build then says so).

    Its size and modification time, not a hash of its bytes: a seed database can be gigabytes, and every worker
    process of every start would read all of it (the build itself reads it once, with the backup API). Any
    write through SQLite changes the mtime; a file replaced by a copy (``cp``, a restore) too, unless the copy
    keeps the old mtime and size (``cp -p``/``rsync -t`` of an equally long file): then pass ``rebuild=True``.
    A ``touch`` or a checkpoint rebuilds the template once more than needed (a backup copy: cheap)."""
    parts = []
    for suffix, label in (("", "stat"), ("-wal", "wal")):
        try:
            st = os.stat(f"{path}{suffix}")
        except FileNotFoundError:
            if not suffix:
                return ""
            continue
        parts.append(f"{label}:{st.st_size}:{st.st_mtime_ns}")
    return " ".join(parts)


def stale_reason(recorded: str | None, ours: str, source_id: str) -> str | None:
    """Why a template built from ``source_id`` (this database's source: :func:`same_source` held) must be
    rebuilt, or ``None`` to reuse it. ``recorded``: the digest recorded when it was built (``None``: none was,
    an SDK older than digests built it); ``ours``: :func:`setup_digest`/:func:`file_digest` now (``""``: not
    known, reused as it is).

    A template without a recorded digest is rebuilt once (its seed may have been edited before the upgrade, and
    nothing can tell): a run of ``setup`` (or a copy of the ``template=`` file) at the first start after the
    upgrade, then the digest is recorded."""
    if not ours or recorded == ours:
        return None
    if recorded is None or not recorded:
        return f"{source_id} has no digest recorded (built by an older rft-sdk): rebuilt once to record it"
    return f"{source_id} changed since the template was built ({recorded} -> {ours})"


def same_source(recorded: str, ours: str) -> bool:
    """Whether ``recorded`` (what built the existing template) and ``ours`` name one source: they are equal, or
    the recorded file no longer exists and ours has the same function name (``setup``) or file name
    (``template``): the project was moved, and nothing else can have built it from there."""
    if recorded == ours:
        return True
    r_kind, _, r_rest = recorded.partition(":")
    o_kind, _, o_rest = ours.partition(":")
    if r_kind != o_kind:
        return False
    if r_kind == "setup":
        (r_file, r_name), (_, o_name) = r_rest.rpartition(":")[::2], o_rest.rpartition(":")[::2]
    else:
        r_file, r_name, o_name = r_rest, Path(r_rest).name, Path(o_rest).name
    return r_name == o_name and not Path(r_file).exists()
