"""Copy an SQLite file the fastest way the filesystem allows: ``clone_file``.

1. ``FICLONE`` (a reflink: btrfs, XFS with reflink, bcachefs, overlayfs over
   them): the copy shares the source's blocks until either is written; O(1).
2. ``os.copy_file_range``: the kernel copies without the bytes passing through
   this process (and itself reflinks where the filesystem can, NFS 4.2
   server-side copy, ...).
3. SQLite's online backup API (``sqlite3.Connection.backup``): page by page,
   always works, also for a source that is open elsewhere.

The copy is written to a temporary file next to ``dst`` and renamed (or
linked, when ``dst`` must not be replaced) into place, so a reader never sees a
half-written file and a crash leaves only a temporary file that the sweep
removes.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import uuid
from pathlib import Path

__all__ = ["FICLONE", "clone_file"]

#: ``_IOW(0x94, 9, int)``: the Linux ioctl that reflinks one file into another.
FICLONE = 0x40049409


def _reflink(src: int, dst: int) -> bool:
    try:
        fcntl.ioctl(dst, FICLONE, src)
        return True
    except OSError:
        return False


def _copy_range(src: int, dst: int, size: int) -> bool:
    copy = getattr(os, "copy_file_range", None)
    if copy is None:
        return False
    done = 0
    try:
        while done < size:
            n = copy(src, dst, size - done)
            if n == 0:
                break
            done += n
    except OSError:
        return False
    return done == size


def clone_file(src: Path, dst: Path, *, tmp_prefix: str = ".tmp-", tmp: Path | None = None,
               replace: bool = True) -> str:
    """Copy ``src`` to ``dst`` atomically; returns the method used: ``"reflink"``,
    ``"copy_file_range"`` or ``"backup"``.

    Args:
        tmp: the temporary file to write (it may exist already, e.g. created as a reservation); default
            ``<tmp_prefix><uuid>-<dst name>`` next to ``dst``. Removed when the copy fails.
        replace: ``False``: never replace an existing ``dst`` (``os.link``, then the temporary file is removed).

    Raises:
        FileExistsError: ``replace=False`` and ``dst`` exists (the temporary file is removed).
        OSError / sqlite3.Error: the copy failed by every method.
    """
    tmp = tmp if tmp is not None else dst.with_name(f"{tmp_prefix}{uuid.uuid4().hex}-{dst.name}")
    method = "backup"
    try:
        with open(src, "rb") as fsrc, open(tmp, "wb") as fdst:
            size = os.fstat(fsrc.fileno()).st_size
            if _reflink(fsrc.fileno(), fdst.fileno()):
                method = "reflink"
            elif _copy_range(fsrc.fileno(), fdst.fileno(), size):
                method = "copy_file_range"
        if method == "backup":
            tmp.unlink(missing_ok=True)
            source = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
            target = sqlite3.connect(tmp)
            try:
                source.backup(target)
            finally:
                target.close()
                source.close()
        if replace:
            os.replace(tmp, dst)
        else:
            os.link(tmp, dst)
            tmp.unlink()
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return method
