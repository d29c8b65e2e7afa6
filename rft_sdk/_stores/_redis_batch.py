"""``ScriptBatcher``: the Lua scripts of concurrent calls sent to Redis together.

One call at a time, a script goes as its own command (redis-py's ``Script``).
While one is in flight, the scripts that other calls of this process start
wait, and go together as the next batch when it returns: one redis-py
pipeline (``transaction=False``), so one write and one read on one pooled
connection, and for Redis one read and one reply write for all of them,
where each would have cost its own (about 30 µs of this process's CPU and
10 µs of Redis's per command with 16 calls in flight, measured by
``benchmarks/bench_stores.py``). Redis runs the batch's scripts one after the
other, each atomically, exactly as if they had come on separate connections:
nothing about what a script sees or writes changes, only how the bytes
travel. Redis itself runs one command at a time (and with ``appendfsync
always`` fsyncs once for all the commands it read together), so holding the
next batch back while one is in flight costs no throughput.

A batch whose connection breaks is resent by redis-py (every script is safe
to run twice: ``_redis_scripts``); a script Redis no longer holds (a restart
empties its script cache) is run again on its own by ``Script``, which loads
it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

__all__ = ["ScriptBatcher"]


class _Reload:
    """A batch's reply that says: Redis lacks the script (``NOSCRIPT``), run it again on its own."""


_RELOAD = _Reload()


class ScriptBatcher:
    """Runs registered scripts of one ``redis.asyncio.Redis`` client, batching those started while one is in
    flight (module docstring). One per store object; bound to the event loop it was last used on.

    Args:
        client: the store's ``redis.asyncio.Redis``.
    """

    def __init__(self, client: Any) -> None:
        self.client = client
        self._busy = False  # a script or a batch is in flight
        self._queue: list[tuple[Any, list[Any], list[Any], asyncio.Future[Any]]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None  # the batch in flight (held: the loop keeps tasks weakly)

    async def run(self, script: Any, keys: list[Any], args: list[Any]) -> Any:
        """``await script(keys=keys, args=args)``, in the next batch when another is in flight.

        Raises:
            redis.RedisError: as the script's own command would (Redis unreachable, the script failed).
        """
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new event loop (e.g. a test's): nothing of the last one is in flight
            self._loop, self._busy, self._queue = loop, False, []
        if not self._busy:
            self._busy = True
            try:
                return await script(keys=keys, args=args)
            finally:
                self._next()
        future: asyncio.Future[Any] = loop.create_future()
        entry = (script, keys, args, future)
        self._queue.append(entry)
        try:
            reply = await future
        except asyncio.CancelledError:  # (a timeout) not sent yet: it never will be
            with contextlib.suppress(ValueError):
                self._queue.remove(entry)
            raise
        if reply is _RELOAD:
            return await script(keys=keys, args=args)
        return reply

    def _next(self) -> None:
        """The command in flight returned: send what waited, as one batch, or go idle."""
        if not self._queue:
            self._busy = False
            return
        batch, self._queue = self._queue, []
        self._task = asyncio.get_running_loop().create_task(self._send(batch))

    async def _send(self, batch: list[tuple[Any, list[Any], list[Any], asyncio.Future[Any]]]) -> None:
        """Send ``batch`` as one pipeline and hand each caller its reply (or the pipeline's error)."""
        import redis

        try:
            pipe = self.client.pipeline(transaction=False)
            for script, keys, args, _ in batch:
                pipe.evalsha(script.sha, len(keys), *keys, *args)
            replies = await pipe.execute(raise_on_error=False)
        except asyncio.CancelledError:  # the loop is shutting down: so are its callers
            for *_, future in batch:
                future.cancel()
            raise
        except Exception as exc:  # each caller raises it (Redis unreachable, ...)
            for *_, future in batch:
                if not future.done():
                    future.set_exception(exc)
        else:
            for (*_, future), reply in zip(batch, replies):
                if future.done():  # its caller gave up (a timeout): the reply is dropped
                    continue
                if isinstance(reply, redis.exceptions.NoScriptError):
                    future.set_result(_RELOAD)
                elif isinstance(reply, Exception):
                    future.set_exception(reply)
                else:
                    future.set_result(reply)
        finally:
            self._next()
