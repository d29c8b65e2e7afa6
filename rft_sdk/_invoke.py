"""Call a user function (tool or grader) from the event loop, sync or async alike."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import anyio

__all__ = ["invoke"]


async def invoke(fn: Callable[..., Any], is_async: bool, /, *args: Any, **kwargs: Any) -> Any:
    """Return ``fn(*args, **kwargs)``: awaited when ``is_async``, else run in a worker thread.

    A sync user function may block (database, HTTP); running it in anyio's
    thread pool keeps the event loop serving other calls meanwhile. (A tool
    declared ``@tool(blocking=False)`` is called directly by the tool-call
    path instead, never through here: ``rft_sdk._calls.run_tool``.) ``is_async``
    is decided once, at decoration (``inspect.iscoroutinefunction``).

    Raises:
        whatever ``fn`` raises, unchanged.
    """
    if is_async:
        return await fn(*args, **kwargs)
    return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))
