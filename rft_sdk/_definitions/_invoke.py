"""Call a user function (tool or grader) from the event loop, sync or async alike, with limits.

Thread isolation (docs/reliability.md): a sync tool runs in a worker thread
under *its own* :class:`anyio.CapacityLimiter` (``max_concurrency``, else
:data:`TOOL_THREADS`), never under anyio's one process-wide default limiter, so
the blocking calls of one tool queue behind each other and cannot take the
threads another tool (or a grader) needs. Graders keep anyio's default limiter.

Slots (:func:`call_limited`):

* a call first takes a slot of its tool's limiter; the wait for one is bounded
  by ``queue_timeout_s`` and does **not** count toward ``timeout_s``; a wait past
  it raises :class:`NoSlotError` (answered 503, retried by the hosted side);
* ``timeout_s`` then bounds the tool's own run; past it :class:`CallTimedOut`
  is raised. An async tool is cancelled; a sync tool's thread cannot be killed:
  it is abandoned and **keeps its slot until it really returns**, so
  ``max_concurrency=1`` never lets two threads of the tool run at once.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable
from typing import Any

import anyio
import anyio.from_thread

__all__ = ["TOOL_THREADS", "CallTimedOut", "NoSlotError", "call_limited", "invoke"]

#: Worker threads one sync tool may use at once when it sets no ``max_concurrency`` (anyio's own
#: default for the whole process is 40: here every tool gets that many of its own).
TOOL_THREADS = 40


class CallTimedOut(Exception):
    """The function ran past its ``timeout_s`` (its own run, not the wait for a slot)."""


class NoSlotError(Exception):
    """No slot of the tool's limiter became free within ``queue_timeout_s``."""


async def invoke(fn: Callable[..., Any], is_async: bool, /, *args: Any, **kwargs: Any) -> Any:
    """Return ``fn(*args, **kwargs)``: awaited when ``is_async``, else run in a worker thread
    (anyio's default limiter: what graders use).

    Raises:
        whatever ``fn`` raises, unchanged.
    """
    if is_async:
        return await fn(*args, **kwargs)
    return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))


#: The limiter of the thread hop itself: never waits, the tool's own limiter has already bounded the call.
_UNBOUNDED = anyio.CapacityLimiter(math.inf)


async def _take_slot(limiter: anyio.CapacityLimiter, slot: object, queue_timeout_s: float | None) -> None:
    """Hold one token of ``limiter`` for ``slot``; wait at most ``queue_timeout_s`` (``None``: no limit)."""
    try:
        limiter.acquire_on_behalf_of_nowait(slot)
        return
    except anyio.WouldBlock:
        pass
    if queue_timeout_s is None:
        await limiter.acquire_on_behalf_of(slot)
        return
    with anyio.move_on_after(queue_timeout_s) as scope:
        await limiter.acquire_on_behalf_of(slot)
    if scope.cancelled_caught:
        raise NoSlotError(f"all {limiter.total_tokens:g} slot(s) stayed taken for {queue_timeout_s:g} s "
                          "(queue_timeout_s)")


async def call_limited(fn: Callable[..., Any], kwargs: dict[str, Any], *, is_async: bool, in_thread: bool,
                       limiter: anyio.CapacityLimiter | None, timeout_s: float | None,
                       queue_timeout_s: float | None) -> Any:
    """Return ``fn(**kwargs)`` under a slot of ``limiter`` and within ``timeout_s`` seconds.

    Args:
        is_async: ``fn`` is a coroutine function (awaited on the loop).
        in_thread: a sync ``fn`` runs in a worker thread (else on the loop, ``blocking=False``).
        limiter: the tool's own limiter (``None``: no slot to take).
        timeout_s: seconds the run may take once started (``None``: no limit).
        queue_timeout_s: seconds to wait for a slot (``None``: no limit).

    Raises:
        NoSlotError: no slot within ``queue_timeout_s`` (nothing ran).
        CallTimedOut: the run took longer than ``timeout_s``.
        whatever ``fn`` raises, unchanged.
    """
    slot = object()
    if limiter is not None:
        await _take_slot(limiter, slot, queue_timeout_s)
    if in_thread and not is_async:
        return await _in_thread(fn, kwargs, limiter, slot, timeout_s)
    try:
        if timeout_s is None:
            return await fn(**kwargs) if is_async else fn(**kwargs)
        with anyio.move_on_after(timeout_s):
            return await fn(**kwargs) if is_async else fn(**kwargs)
        raise CallTimedOut  # only reached when the scope cancelled the call
    finally:
        if limiter is not None:
            limiter.release_on_behalf_of(slot)


async def _in_thread(fn: Callable[..., Any], kwargs: dict[str, Any], limiter: anyio.CapacityLimiter | None,
                     slot: object, timeout_s: float | None) -> Any:
    """Run a sync ``fn`` in a worker thread holding ``slot`` of ``limiter`` until the thread returns."""
    if timeout_s is None:  # the await lasts as long as the thread (cancellation waits for it): release after
        try:
            return await anyio.to_thread.run_sync(functools.partial(fn, **kwargs), limiter=_UNBOUNDED)
        finally:
            if limiter is not None:
                limiter.release_on_behalf_of(slot)
    # with a timeout the caller may give up first: whoever is last (the thread, or a caller that gave up before
    # the thread started) gives the slot back
    guard = threading.Lock()
    state = {"started": False, "abandoned": False}

    def release_from_thread() -> None:
        if limiter is None:
            return
        try:
            anyio.from_thread.run_sync(limiter.release_on_behalf_of, slot)
        except RuntimeError:  # the event loop is gone (the server stopped): nothing waits for the slot
            pass

    def run() -> Any:
        with guard:
            if state["abandoned"]:
                return None  # the caller gave up before the thread started: it released the slot
            state["started"] = True
        try:
            return fn(**kwargs)
        finally:
            release_from_thread()

    finished = False
    try:
        with anyio.move_on_after(timeout_s):
            result = await anyio.to_thread.run_sync(run, abandon_on_cancel=True, limiter=_UNBOUNDED)
            finished = True
            return result
    finally:
        if not finished:  # timed out, or the request itself was cancelled: the thread is abandoned
            with guard:
                started = state["started"]
                state["abandoned"] = True
            if not started and limiter is not None:
                limiter.release_on_behalf_of(slot)
    raise CallTimedOut
