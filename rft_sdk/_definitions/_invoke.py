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
import inspect
import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Any

import anyio
import anyio.from_thread

__all__ = ["TOOL_THREADS", "CallTimedOut", "LoopGuard", "NoSlotError", "call_limited", "invoke", "invoke_guarded",
           "never_awaits"]

logger = logging.getLogger("rft_sdk")

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


# -- the loop guard: user code never holds the event loop -------------------------------------------
#: Byte codes of a coroutine that awaits something (``await``, ``async with``, ``async for``).
_AWAIT_OPS = frozenset({"GET_AWAITABLE", "BEFORE_ASYNC_WITH", "GET_AITER", "GET_ANEXT", "SEND", "YIELD_VALUE",
                        "END_ASYNC_FOR"})


@functools.lru_cache(maxsize=1024)
def never_awaits(fn: Callable[..., Any]) -> bool:
    """Whether coroutine function ``fn`` has no ``await``/``async with``/``async for`` in its own body
    (read from its byte code, ``dis``): its whole run is one synchronous step, CPU work that would hold
    the event loop, so :func:`invoke_guarded` runs it in a worker thread."""
    import dis

    code = getattr(inspect.unwrap(fn), "__code__", None)
    if code is None:
        return False
    return not any(ins.opname in _AWAIT_OPS for ins in dis.get_instructions(code))


def _drive(coro: Any) -> Any:
    """Run a coroutine that never awaits to its end, synchronously (in a worker thread)."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise RuntimeError("a coroutine judged await-free suspended; it cannot run off the event loop")


#: A step that blocks (``time.sleep``, blocking I/O) without using CPU counts past this many seconds of wall time.
BLOCKED_STEP_S = 0.5


class _Timed:
    """Awaitable running coroutine ``coro`` step by step on the loop and keeping its longest step (the time it
    held the loop without yielding), seconds, in ``longest``: the thread's CPU time of the step, or its wall
    time when that passes :data:`BLOCKED_STEP_S` (a blocking call). CPU time, not wall time, below that: on a
    loaded host the OS may pause the thread mid-step, which is not the function's doing."""

    def __init__(self, coro: Any) -> None:
        self.coro, self.longest = coro, 0.0

    def _took(self, wall0: float, cpu0: float) -> None:
        wall = time.perf_counter() - wall0
        self.longest = max(self.longest, wall if wall > BLOCKED_STEP_S else time.thread_time() - cpu0)

    def __await__(self) -> Any:
        coro, value, error = self.coro, None, None
        while True:
            t0, c0 = time.perf_counter(), time.thread_time()
            try:
                yielded = coro.throw(error) if error is not None else coro.send(value)
            except StopIteration as stop:
                return stop.value
            finally:
                self._took(t0, c0)
            try:
                value, error = (yield yielded), None
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # cancellation and the like: delivered into the coroutine
                value, error = None, exc


class LoopGuard:
    """What the guard learnt of one served ``async def`` (one per tool or grader definition).

    Attributes:
        warned: one of its steps held the loop longer than ``protocol.LOOP_STALL_S`` and a warning named it
            (once). It stays on the server's loop: see :func:`invoke_guarded`.
    """

    def __init__(self) -> None:
        self.warned = False


async def invoke_guarded(fn: Callable[..., Any], is_async: bool, guard: LoopGuard | None, what: str,
                         /, *args: Any, await_free_in_thread: bool = True, **kwargs: Any) -> Any:
    """Return ``fn(*args, **kwargs)`` without user code holding the event loop where that is safe
    (docs/reliability.md):

    * a sync ``fn`` runs in a worker thread (anyio's default limiter), as :func:`invoke`;
    * an ``async def`` that never awaits (:func:`never_awaits`: CPU code) runs in a worker thread
      (with ``await_free_in_thread``, what graders get; tools, mostly quick lookups, run on the loop timed);
    * any other ``async def`` runs on the server's loop, each step timed; one whose step held the loop past
      ``protocol.LOOP_STALL_S`` is named in a warning (``what``), once, with the fix.

    An ``async def`` that awaits is never moved to another event loop: it may share objects bound to the
    server's loop across calls (an ``httpx.AsyncClient``, an OpenAI client, a database pool made at startup,
    ``rewards.LLMJudge``), and such an object used from a second loop leaves its requests unanswered. The
    earlier guard moved a stalled function onto a fresh loop per call; an ``LLMJudge`` grader then hung for
    good after one slow step on a loaded machine (``tests/reliability/test_attack_loop.py``).

    Raises:
        whatever ``fn`` raises, unchanged.
    """
    from ..protocol import LOOP_STALL_S

    if not is_async:
        return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))
    if await_free_in_thread and never_awaits(fn):
        return await anyio.to_thread.run_sync(_drive, fn(*args, **kwargs))
    timed = _Timed(fn(*args, **kwargs))
    try:
        return await timed
    finally:
        if guard is not None and timed.longest > LOOP_STALL_S and not guard.warned:
            guard.warned = True
            logger.warning("%s held the event loop for %.3f s in one step (every other request of the process "
                           "waited). It stays on the loop (an async function may hold clients bound to it); "
                           "run its blocking part with `await asyncio.to_thread(...)`, or write it as `def` to "
                           "run in a worker thread", what, timed.longest)
