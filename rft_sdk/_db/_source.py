"""What built a template: recorded beside it, so that a second, different database given the same ``name``
(and, on SQLite, the same ``dir``) is refused at start instead of silently reusing another task's schema."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["same_source", "template_source"]


def template_source(template: str | None, setup: Callable[..., Any] | None) -> str:
    """What builds a template: ``"template:<template>"`` (the seed file's resolved path on SQLite, the source
    database's name on PostgreSQL), or ``"setup:<resolved source file>:<qualname>"`` of the ``setup`` function
    (its code's file, so a module imported under two names, or run as ``__main__``, is one source;
    ``functools.partial(f, ...)`` is ``f``'s, a callable object its class's ``__call__``'s)."""
    if template is not None:
        return f"template:{template}"
    fn: Any = setup.func if isinstance(setup, functools.partial) else setup
    code, name = getattr(fn, "__code__", None), getattr(fn, "__qualname__", None)
    if code is None or name is None:  # a callable object: its class's __call__
        call = type(fn).__call__ if callable(fn) else None
        code, name = getattr(call, "__code__", None), type(fn).__qualname__
    where = str(Path(code.co_filename).resolve()) if code is not None else getattr(fn, "__module__", "?")
    return f"setup:{where}:{name}"


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
