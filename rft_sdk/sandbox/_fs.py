"""File operations on a sandbox tree that never follow a symbolic link, and the
lifecycle of sandbox roots on disk (copy, removal, stale roots of dead servers).

Model-written code can replace any file or directory of its tree with a
symlink (to ``/etc/shadow``, to another rollout's tree) between the moment a
tool checks a path and the moment the server opens it. Every helper here walks
the path one component at a time from a directory file descriptor with
``O_NOFOLLOW`` (``openat``), so a symlink anywhere in the path is refused
instead of followed: the server, which may run as root, only ever touches the
tree's own files.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import posixpath
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from ..exceptions import ToolError

__all__ = ["MAX_TREE_FILES", "SandboxPathError", "claim_root", "copy_tree", "list_dir", "read_bytes",
           "open_dirs", "remove_stale_roots", "rmtree", "start_janitor", "split_relpath", "tree_files", "write_bytes"]

MAX_TREE_FILES = 200_000  # entries tree_files() walks at most (a hostile tree cannot stall the grader)
ROOT_PREFIX = "rft-sandboxes-"
_OWNER = "owner.json"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class SandboxPathError(ToolError):
    """A path given to a sandbox leaves its working directory (``..``, absolute
    path, or a symbolic link on the way). A ``ToolError``: the model sees the message."""


def split_relpath(relpath: str) -> list[str]:
    """The components of ``relpath`` after normalisation (``a/./b`` → ``[a, b]``; ``.`` → ``[]``).

    Raises:
        SandboxPathError: absolute, leaves the tree (``..``), or contains a NUL byte.
    """
    if "\x00" in relpath:
        raise SandboxPathError(f"path {relpath!r} contains a NUL byte")
    if relpath.startswith("/"):
        raise SandboxPathError(f"path {relpath!r} must be relative to the repository root")
    norm = posixpath.normpath(relpath or ".")
    if norm == ".":
        return []
    if norm == ".." or norm.startswith("../"):
        raise SandboxPathError(f"path {relpath!r} leaves the repository")
    return norm.split("/")


@contextlib.contextmanager
def _dirfd(root: Path, parts: list[str], *, create: bool = False, uid: int | None = None) -> Iterator[int]:
    """A descriptor of directory ``root/parts...``, walked without following symlinks."""
    fd = os.open(root, _DIR_FLAGS)
    try:
        for i, name in enumerate(parts):
            if create:
                try:
                    os.mkdir(name, 0o755, dir_fd=fd)
                    if uid is not None:
                        os.chown(name, uid, uid, dir_fd=fd, follow_symlinks=False)
                except FileExistsError:
                    pass
            try:
                nfd = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                where = "/".join(parts[: i + 1])
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise SandboxPathError(f"{where!r} is not a directory (symbolic links are not followed)") from None
                if exc.errno == errno.ENOENT:
                    raise FileNotFoundError(f"{where!r} does not exist") from None
                raise
            os.close(fd)
            fd = nfd
        yield fd
    finally:
        os.close(fd)


def _open_leaf(root: Path, relpath: str, flags: int, *, create_parents: bool = False,
               uid: int | None = None) -> int:
    parts = split_relpath(relpath)
    if not parts:
        raise SandboxPathError(f"path {relpath!r} is the repository root, not a file")
    with _dirfd(root, parts[:-1], create=create_parents, uid=uid) as parent:
        try:
            fd = os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o644, dir_fd=parent)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise SandboxPathError(f"{relpath!r} is a symbolic link (not followed)") from None
            if exc.errno == errno.EISDIR:
                raise SandboxPathError(f"{relpath!r} is a directory") from None
            if exc.errno == errno.ENOENT:
                raise FileNotFoundError(f"{relpath!r} does not exist") from None
            raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise SandboxPathError(f"{relpath!r} is not a regular file")
    return fd


def read_bytes(root: Path, relpath: str, max_bytes: int | None = None) -> bytes:
    """The content of regular file ``root/relpath`` (at most ``max_bytes``; ``None`` = all).

    Raises:
        SandboxPathError: outside the tree, a symlink on the way, or not a regular file.
        FileNotFoundError: it does not exist.
    """
    fd = _open_leaf(root, relpath, os.O_RDONLY)
    with os.fdopen(fd, "rb") as f:
        return f.read() if max_bytes is None else f.read(max_bytes)


def write_bytes(root: Path, relpath: str, data: bytes, *, uid: int | None = None) -> None:
    """Create or replace regular file ``root/relpath`` with ``data``; missing parent
    directories are created; new entries are owned by ``uid`` (when given).

    Raises:
        SandboxPathError: outside the tree, a symlink on the way, or not a regular file.
    """
    fd = _open_leaf(root, relpath, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, create_parents=True, uid=uid)
    with os.fdopen(fd, "wb") as f:
        if uid is not None:
            os.fchown(f.fileno(), uid, uid)
        f.write(data)


def list_dir(root: Path, relpath: str) -> list[tuple[str, bool]]:
    """``(name, is_directory)`` of every entry of directory ``root/relpath`` (symlinks: not directories).

    Raises:
        SandboxPathError: outside the tree or a symlink on the way.
        FileNotFoundError: it does not exist.
    """
    with _dirfd(root, split_relpath(relpath)) as fd, os.scandir(fd) as it:
        return [(e.name, e.is_dir(follow_symlinks=False)) for e in it]


def tree_files(root: Path, relpath: str = ".", *, limit: int = MAX_TREE_FILES) -> list[str]:
    """Relative paths (from ``root``) of every regular file under ``root/relpath``,
    sorted; symbolic links are neither followed nor listed.

    Raises:
        SandboxPathError: more than ``limit`` entries, or a symlink on the way to ``relpath``.
    """
    base = split_relpath(relpath)
    out: list[str] = []
    seen = 0
    with _dirfd(root, base) as fd:
        for dirpath, dirnames, filenames, dfd in os.fwalk(".", dir_fd=fd, follow_symlinks=False):
            seen += len(dirnames) + len(filenames)
            if seen > limit:
                raise SandboxPathError(f"more than {limit} entries under {relpath!r}")
            for name in filenames:
                if stat.S_ISREG(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode):
                    out.append(posixpath.normpath(posixpath.join(*base, dirpath, name)))
    return sorted(out)


def rmtree(path: Path) -> None:
    """Remove ``path`` and everything under it, also directories a command made
    unreadable or unwritable (``chmod 0``); never follows symlinks. Missing: no-op."""
    if not os.path.lexists(path):
        return
    if os.path.islink(path) or not os.path.isdir(path):
        os.unlink(path)
        return
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
    # Make every directory removable first. A command still running in the tree can swap a directory
    # for a symlink at any moment, so names are never used twice: each is opened once without following
    # links (O_PATH | O_NOFOLLOW) and the chmod goes through that descriptor (/proc/self/fd, as glibc's
    # fchmodat does); fwalk descends by descriptor and never through a link.
    for _, dirnames, _, dir_fd in os.fwalk(path, topdown=True, follow_symlinks=False):
        for name in dirnames:
            _chmod_dir_at(dir_fd, name, 0o700)
    shutil.rmtree(path, ignore_errors=True)


def _chmod_dir_at(dir_fd: int, name: str, mode: int) -> None:
    """``chmod`` entry ``name`` of ``dir_fd`` when it is a directory; a symlink (or anything else) is left alone."""
    try:
        fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return
    try:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            os.chmod(f"/proc/self/fd/{fd}", mode)
    except OSError:
        pass
    finally:
        os.close(fd)


def _reflink_works(root: Path) -> bool:
    cp = shutil.which("cp")
    if cp is None:
        return False
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        (Path(tmp) / "a").write_bytes(b"x")
        return subprocess.run([cp, "--reflink=always", str(Path(tmp) / "a"), str(Path(tmp) / "b")],
                              capture_output=True).returncode == 0


_REFLINK: dict[Path, bool] = {}


def copy_tree(src: Path, dst: Path, mode: str) -> None:
    """Copy directory ``src`` to the new path ``dst``: ``"hardlink"`` (a hard-link
    farm), ``"reflink"`` (copy-on-write clone, required), ``"auto"`` (reflink where
    the filesystem supports it, else a plain copy) or ``"copy"``.

    Raises:
        OSError: the copy failed (``"reflink"``: the filesystem cannot clone).
    """
    if mode == "hardlink":
        shutil.copytree(src, dst, symlinks=True, copy_function=os.link)
        return
    cp = shutil.which("cp")
    if mode == "auto":
        parent = dst.parent.parent
        if parent not in _REFLINK:
            _REFLINK[parent] = _reflink_works(parent)
        mode = "reflink" if _REFLINK[parent] else "copy"
    if mode == "reflink" and cp is not None:
        proc = subprocess.run([cp, "-a", "--reflink=always", "--", str(src), str(dst)], capture_output=True)
        if proc.returncode == 0:
            return
        raise OSError(f"reflink copy failed: {proc.stderr.decode(errors='replace').strip()}")
    shutil.copytree(src, dst, symlinks=True)


def chown_tree(path: Path, uid: int) -> None:
    """``lchown`` every entry under ``path`` (and ``path``) to ``uid:uid``."""
    os.lchown(path, uid, uid)
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, uid)


def open_dirs(path: Path) -> None:
    """``chmod 0755`` every directory under ``path`` (and ``path``): readable by every uid."""
    os.chmod(path, 0o755)
    for dirpath, dirnames, _ in os.walk(path):
        for name in dirnames:
            full = os.path.join(dirpath, name)
            if not os.path.islink(full):
                os.chmod(full, 0o755)


def _start_time(pid: int) -> str | None:
    """Field 22 of ``/proc/PID/stat`` (start time in clock ticks since boot), or ``None`` when gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


def claim_root(parent: Path | None = None) -> Path:
    """A new auto-managed sandbox root ``<tmp>/rft-sandboxes-<pid>-<random>`` holding
    ``owner.json`` (this process's pid and start time), so that a later process
    can tell it was left behind by a dead server (:func:`remove_stale_roots`)."""
    root = Path(tempfile.mkdtemp(prefix=f"{ROOT_PREFIX}{os.getpid()}-", dir=parent))
    (root / _OWNER).write_text(json.dumps({"pid": os.getpid(), "start": _start_time(os.getpid())}))
    return root


_JANITOR = 'cat >/dev/null; chmod -R u+rwx -- "$1" 2>/dev/null; rm -rf -- "$1"'


def start_janitor(root: Path) -> int | None:
    """Start a tiny process (``sh``) that removes ``root`` as soon as this process is
    gone — a normal exit, a signal (uvicorn re-raises SIGTERM after its shutdown, so
    ``atexit`` never runs), or ``kill -9``: it waits for the end of a pipe only this
    process holds. Returns the pipe's write end (close it to release the janitor
    early), or ``None`` when ``sh`` is missing (then only ``atexit`` and the next
    start clean up)."""
    sh = shutil.which("sh")
    if sh is None:
        return None
    read_end, write_end = os.pipe()  # both non-inheritable: no command of a sandbox holds them
    try:
        subprocess.Popen([sh, "-c", _JANITOR, "rft-sandbox-janitor", str(root)], stdin=read_end,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    except OSError:
        os.close(write_end)
        return None
    finally:
        os.close(read_end)
    return write_end


def _alive(owner: dict[str, object]) -> bool:
    pid = owner.get("pid")
    return isinstance(pid, int) and _start_time(pid) is not None and _start_time(pid) == owner.get("start")


def remove_stale_roots(parent: Path | None = None, *, legacy_after_s: float = 3600.0) -> list[Path]:
    """Remove auto-managed sandbox roots under ``parent`` (default: the temp
    directory) whose owner process is gone (``kill -9``, a crash). A root without
    an owner file (made by an older version) goes once unmodified for
    ``legacy_after_s`` seconds. Returns the removed paths.
    """
    base = Path(parent or tempfile.gettempdir())
    removed = []
    try:
        entries = [e for e in base.iterdir() if e.name.startswith(ROOT_PREFIX) and e.is_dir() and not e.is_symlink()]
    except OSError:
        return []
    for entry in entries:
        stale = False
        try:
            owner = json.loads((entry / _OWNER).read_text())
            stale = not _alive(owner if isinstance(owner, dict) else {})
        except FileNotFoundError:
            with contextlib.suppress(OSError):
                stale = time.time() - entry.stat().st_mtime >= legacy_after_s
        except (OSError, ValueError):
            pass
        if stale:
            rmtree(entry)
            removed.append(entry)
    return removed
