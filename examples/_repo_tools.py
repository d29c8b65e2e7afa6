"""Read tools over a rollout's sandboxed repository, shared by the coding examples.

Plain functions of a :class:`~rft_sdk.sandbox.Sandbox`; each example wraps
them in ``@tool`` functions that find the rollout's sandbox. Paths are
relative to the repository root; leaving it is a model-visible ``ToolError``.
"""

from __future__ import annotations

from rft_sdk import ToolError
from rft_sdk.sandbox import Sandbox

__all__ = ["MAX_LINES", "grep", "list_dir", "read_file"]

MAX_LINES = 400  # lines a read_file call returns at most
_MAX_MATCHES = 100
_MAX_READ = 10_000_000  # bytes of one file read_file accepts


def list_dir(box: Sandbox, path: str) -> str:
    """Entries of directory ``path``, sorted, one per line, directories with a trailing ``/``.

    Raises:
        ToolError: not a directory, or outside the repository.
    """
    try:
        entries = box.list_dir(path or ".")
    except (FileNotFoundError, NotADirectoryError):
        raise ToolError(f"{path!r} is not a directory") from None
    names = sorted(name + ("/" if is_dir else "") for name, is_dir in entries if name != ".git")
    return "\n".join(names) or "(empty directory)"


def read_file(box: Sandbox, path: str, start_line: int, max_lines: int) -> str:
    """Lines ``start_line..start_line+max_lines-1`` (1-based, at most ``MAX_LINES``)
    of text file ``path``, each prefixed by its number; a last line says how many remain.

    Raises:
        ToolError: not a file, outside the repository, larger than 10 MB, or bad line numbers.
    """
    if start_line < 1 or max_lines < 1:
        raise ToolError("start_line and max_lines must be >= 1")
    try:
        data = box.read_bytes(path, _MAX_READ + 1)
    except FileNotFoundError:
        raise ToolError(f"{path!r} is not a file") from None
    if len(data) > _MAX_READ:
        raise ToolError(f"{path!r} is larger than {_MAX_READ} bytes")
    lines = data.decode("utf-8", "replace").splitlines()
    chunk = lines[start_line - 1:start_line - 1 + min(max_lines, MAX_LINES)]
    out = "\n".join(f"{start_line + i}: {line}" for i, line in enumerate(chunk))
    rest = len(lines) - (start_line - 1 + len(chunk))
    return out + (f"\n... {rest} more lines" if rest > 0 else "")


def grep(box: Sandbox, pattern: str, path: str) -> str:
    """``grep -rnIE pattern path`` run in the sandbox (10 s timeout); at most 100
    matching lines as ``file:line:text``, then how many were left out.

    Raises:
        ToolError: empty pattern, invalid regular expression, or path outside the repository.
    """
    if not pattern:
        raise ToolError("pattern must not be empty")
    res = box.run(["grep", "-rnIE", "--exclude-dir=.git", "-e", pattern, "--", box.relpath(path)], timeout_s=10)
    if res.returncode == 2 or res.timed_out:
        raise ToolError(f"grep failed: {res.stderr.strip()[:300] or 'timed out'}")
    lines = res.stdout.splitlines()
    shown = "\n".join(line[:300] for line in lines[:_MAX_MATCHES])
    more = len(lines) - _MAX_MATCHES
    return (shown or "no match") + (f"\n... {more} more matches" if more > 0 else "")
